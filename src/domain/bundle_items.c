/*
 * bundle_items.c -- the cache of item texts met in a bundle (see
 * bundle_internal.h): the reader's, so that an item its parent carried is not
 * parsed and checked again, and the writer's, to tell a stored list that is
 * already jansson's text from one that must be written again.
 */
#include "domain/bundle_internal.h"
#include "util/jspan.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void item_free(struct item *it)
{
	json_decref(it->value);
	free(it->own);
	free(it->compact);
	free(it->canon);
	free(it);
}

void bundle_reader_release(struct reader *r)
{
	for (size_t i = 0; i < r->cap; i++)
		if (r->slot[i])
			item_free(r->slot[i]);
	free(r->slot);
	for (int f = 0; f < CHECKPOINT_TEXT_COLS; f++)
		free(r->items[f]);
	for (int f = 0; f < 6; f++)
		json_decref(r->last_list[f]);
	memset(r, 0, sizeof(*r));
}

/* A hash of the text, eight bytes a step (every item of every checkpoint goes through it). */
static uint64_t span_hash(int field, const char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)field << 56) ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static void slot_put(struct item **slot, size_t cap, struct item *it)
{
	size_t i = it->h & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = it;
}

void bundle_reader_rehash(struct reader *r, size_t cap)
{
	struct item **old = r->slot;
	size_t ocap = r->cap;

	r->slot = xcalloc(cap, sizeof(*r->slot));
	r->cap = cap;
	r->n = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i])
			continue;
		if (old[i]->used + ITEM_WINDOW < r->tick) {
			item_free(old[i]);
			continue;
		}
		slot_put(r->slot, cap, old[i]);
		r->n++;
	}
	free(old);
}

static struct item *reader_find(const struct reader *r, int field, const char *p, size_t n,
				uint64_t h)
{
	for (size_t i = h & (r->cap - 1); r->cap && r->slot[i]; i = (i + 1) & (r->cap - 1)) {
		const struct item *it = r->slot[i];

		if (it->h == h && it->field == field && it->len == n && !memcmp(it->span, p, n))
			return r->slot[i];
	}
	return NULL;
}

char *bundle_dump(const json_t *v, size_t flags, size_t *len)
{
	char *s = json_dumps(v, flags | JSON_ENCODE_ANY);

	if (!s)
		BUG("cannot serialise a value jansson parsed");
	*len = strlen(s);
	return s;
}

/* A new item for the text [p, p + n) of field: parsed, checked, serialised both ways. */
static enum smr_rc item_new(int field, const char *p, size_t n, size_t idx, uint64_t h,
			    int stored, struct item **out, struct smr_err *err)
{
	struct item *it = xcalloc(1, sizeof(*it));
	json_error_t jerr;
	enum smr_rc rc = SMR_OK;
	int form;

	*it = (struct item){ .span = p, .len = n, .h = h, .field = field };
	it->value = json_loadb(p, n, JSON_DECODE_ANY, &jerr);
	if (!it->value)
		rc = smr_errf(err, SMR_EUNPROC, "%s", jerr.text);
	else if (stored)
		rc = SMR_OK;
	else if (field == META && !json_is_object(it->value))
		rc = smr_errf(err, SMR_EUNPROC, "its metadata is not an object");
	else if (field != META)
		rc = checkpoint_check_item(checkpoint_list_fields[field], it->value, idx, err);
	if (rc) {
		item_free(it);
		return rc;
	}
	/* serialised again only where the text is not already jansson's (util/jspan.h) */
	form = jspan_compact(p, n);
	it->clen = n;
	if (!form) {
		it->compact = bundle_dump(it->value, JSON_COMPACT, &it->clen);
		if (it->clen == n && !memcmp(it->compact, p, n)) {
			free(it->compact);
			it->compact = NULL;
		}
	}
	if (!stored && form != JSPAN_SORTED) {   /* a store's item is never hashed here */
		it->canon = bundle_dump(it->value, JSON_COMPACT | JSON_SORT_KEYS |
				 JSON_REAL_PRECISION(17), &it->nlen);
		if (it->nlen == it->clen &&
		    !memcmp(it->canon, it->compact ? it->compact : p, it->clen)) {
			free(it->canon);
			it->canon = NULL;
		}
	}
	if (stored) {   /* the row it came from is gone at the next one */
		it->own = xstrndup(p, n);
		it->span = it->own;
	}
	*out = it;
	return SMR_OK;
}

const char *bundle_item_compact(const struct item *it, size_t *len)
{
	*len = it->compact ? it->clen : it->len;
	return it->compact ? it->compact : it->span;
}

const char *bundle_item_canon(const struct item *it, size_t *len)
{
	if (it->canon) {
		*len = it->nlen;
		return it->canon;
	}
	return bundle_item_compact(it, len);
}

enum smr_rc bundle_reader_item(struct reader *r, int field, const char *p, size_t n,
			       size_t idx, struct item **out, struct smr_err *err)
{
	uint64_t h = span_hash(field, p, n);
	struct item *it = reader_find(r, field, p, n, h);
	enum smr_rc rc;

	if (!it) {
		rc = item_new(field, p, n, idx, h, r->stored, &it, err);
		if (rc)
			return rc;
		if (2 * (r->n + 1) > r->cap)
			bundle_reader_rehash(r, r->cap ? 2 * r->cap : 1024);
		slot_put(r->slot, r->cap, it);
		r->n++;
	}
	it->used = r->tick;
	*out = it;
	return SMR_OK;
}
