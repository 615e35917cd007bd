/*
 * item_texts.c -- each item's JSON text, found by the item's identity
 * (item_texts.h): an open-addressed table of entries over one buffer of
 * text.
 */
#include "domain/item_texts.h"

#include "domain/checkpoint.h"
#include "util/digest64.h"
#include "util/jspan.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	json_t *item;            /* one reference held */
	size_t canon, canon_len; /* offsets into text */
	size_t stored, stored_len;
	int64_t id;              /* digest64 of the stored text, 0 until asked (atomic) */
};

struct item_texts {
	int refs;                /* atomic */
	struct entry *v;
	size_t n, cap;
	uint32_t *slot;          /* entry index + 1, or 0; nslot is a power of two */
	size_t nslot;
	struct buf text;
};

static size_t slot_of(const json_t *item, size_t nslot)
{
	uint64_t x = (uint64_t)(uintptr_t)item;

	x ^= x >> 29;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 32) & (nslot - 1);
}

/*
 * Where this thread's last find() left off: lists are looked up in the
 * order their items went in (writing a list, rendering, sizing), so the
 * entry after the last one found is nearly always the next one asked for.
 * A guess only, checked against the table it is asked of: a hint naming a
 * table since freed and another made at its address still finds the
 * right entry or none.  Thread-local, as tables are shared between threads.
 */
static __thread struct {
	const struct item_texts *t;
	size_t next;
} last_found;

static const struct entry *find(const struct item_texts *t, const json_t *item)
{
	size_t i, k;

	if (!t)
		return NULL;
	k = last_found.next;
	if (last_found.t == t && k < t->n && t->v[k].item == item) {
		last_found.next = k + 1;
		return &t->v[k];
	}
	for (i = slot_of(item, t->nslot); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (t->v[t->slot[i] - 1].item == item) {
			last_found.t = t;
			last_found.next = t->slot[i];   /* the entry after it */
			return &t->v[t->slot[i] - 1];
		}
	return NULL;
}

static char *dump(const json_t *item, size_t flags)
{
	char *s = json_dumps(item, flags | JSON_ENCODE_ANY);

	if (!s)
		BUG("cannot write an item of a checkpoint as JSON");
	return s;
}

/*
 * 1 when v's objects, at every depth, hold their keys in strictly
 * ascending byte order: JSON_SORT_KEYS then changes nothing, and the
 * canonical text is the stored one (an item made of a string is one key).
 */
static int keys_in_order(const json_t *v)
{
	const char *key, *prev = NULL;
	json_t *member;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, member)
			if (!keys_in_order(member))
				return 0;
		return 1;
	}
	if (!json_is_object(v))
		return 1;
	json_object_foreach((json_t *)v, key, member) {
		if ((prev && strcmp(prev, key) >= 0) || !keys_in_order(member))
			return 0;
		prev = key;
	}
	return 1;
}

/* Adds item to t (not there yet) with its two texts (stored may be canon) and id (0: unknown). */
static void add_texts(struct item_texts *t, json_t *item, const char *canon, size_t canon_len,
		      const char *stored, size_t stored_len, int64_t id)
{
	struct entry *e;
	size_t i;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	e = &t->v[t->n];
	e->item = json_incref(item);
	e->canon = t->text.len;
	e->canon_len = canon_len;
	buf_add(&t->text, canon, canon_len);
	e->stored = e->canon;
	e->stored_len = stored_len;
	e->id = id;
	if (stored != canon && (stored_len != canon_len || memcmp(stored, canon, canon_len))) {
		e->stored = t->text.len;
		buf_add(&t->text, stored, stored_len);
	}
	for (i = slot_of(item, t->nslot); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		;
	t->slot[i] = (uint32_t)++t->n;
}

/* Adds item to t (not there yet), its texts from known or written anew. */
static void add(struct item_texts *t, json_t *item, const struct item_texts *known)
{
	const struct entry *k = find(known, item);
	char *canon, *stored;

	if (k) {
		add_texts(t, item, known->text.ptr + k->canon, k->canon_len,
			  known->text.ptr + k->stored, k->stored_len,
			  __atomic_load_n(&k->id, __ATOMIC_RELAXED));
		return;
	}
	/* the two forms differ in the order of keys only */
	canon = dump(item, ITEM_TEXTS_CANONICAL);
	stored = keys_in_order(item) ? canon : dump(item, ITEM_TEXTS_STORED);
	add_texts(t, item, canon, strlen(canon), stored, strlen(stored), 0);
	if (stored != canon)
		free(stored);
	free(canon);
}

/* Cuts the compact JSON array text into its n values: 0, or -1 when it has not n. */
static int cut(const char *text, size_t n, const char **at, size_t *len)
{
	size_t bytes = strlen(text), i = 0, vlen = 0;
	const char *v = NULL;
	int more;

	while ((more = jspan_array_next(text, bytes, &v, &vlen)) > 0) {
		if (i == n)
			return -1;
		at[i] = v;
		len[i++] = vlen;
	}
	return more < 0 || i != n ? -1 : 0;
}

/*
 * Adds the items of list, none of them known: written as one list and cut
 * into its items, a call of jansson a form instead of one an item.  -1
 * (nothing added) when the cut does not give one text an item.
 */
static int add_list(struct item_texts *t, const json_t *list)
{
	size_t n = json_array_size(list);
	char *canon = dump(list, ITEM_TEXTS_CANONICAL);
	char *stored = keys_in_order(list) ? canon : dump(list, ITEM_TEXTS_STORED);
	const char **at = xmalloc(2 * n * sizeof(*at));
	size_t *len = xmalloc(2 * n * sizeof(*len));
	int rc = cut(canon, n, at, len);
	json_t *item;

	if (!rc && stored != canon)
		rc = cut(stored, n, at + n, len + n);
	for (size_t i = 0; !rc && i < n; i++) {
		item = json_array_get(list, i);
		if (find(t, item))
			continue;
		if (stored == canon)
			add_texts(t, item, at[i], len[i], at[i], len[i], 0);
		else
			add_texts(t, item, at[i], len[i], at[n + i], len[n + i], 0);
	}
	if (stored != canon)
		free(stored);
	free(canon);
	free(at);
	free(len);
	return rc;
}

/* 1 when from knows one of list's items. */
static int knows_one(const struct item_texts *from, const json_t *list)
{
	size_t i;
	json_t *item;

	json_array_foreach(list, i, item)
		if (find(from, item))
			return 1;
	return 0;
}

struct item_texts *item_texts_make(const struct checkpoint *c, const struct item_texts *from)
{
	struct item_texts *t = xcalloc(1, sizeof(*t));
	const json_t *list;
	size_t n = 0, i;
	json_t *item;

	for (size_t f = 0; checkpoint_list_fields[f]; f++)
		n += json_array_size(checkpoint_list(c, checkpoint_list_fields[f]));
	t->refs = 1;
	for (t->nslot = 16; t->nslot < 2 * n; t->nslot *= 2)
		;
	t->slot = xcalloc(t->nslot, sizeof(*t->slot));
	t->text = (struct buf)BUF_INIT(0);
	if (from)   /* a patch keeps most of its parent's texts */
		buf_reserve(&t->text, from->text.len + from->text.len / 8);
	for (size_t f = 0; checkpoint_list_fields[f]; f++) {
		list = checkpoint_list(c, checkpoint_list_fields[f]);
		if (json_array_size(list) > 1 && !knows_one(from, list) && !add_list(t, list))
			continue;
		json_array_foreach(list, i, item)
			if (!find(t, item))
				add(t, item, from);
	}
	return t;
}

struct item_texts *item_texts_ref(struct item_texts *t)
{
	if (t)
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

void item_texts_unref(struct item_texts *t)
{
	if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < t->n; i++)
		json_decref(t->v[i].item);
	free(t->v);
	free(t->slot);
	buf_release(&t->text);
	free(t);
}

/* Appends v as jansson writes it alone (a string, a number, a key). */
static int put_dumped(const json_t *v, struct buf *out)
{
	char *s = json_dumps(v, ITEM_TEXTS_STORED);

	if (!s)
		return -1;
	buf_adds(out, s);
	free(s);
	return 0;
}

int item_texts_render(const json_t *v, const struct item_texts *t, struct buf *out)
{
	const char *key;
	json_t *k, *member;
	size_t i;
	int rc = 0;

	/* a list whose items t holds; else (out as it was) written member by member */
	if (json_is_array(v) && t && !item_texts_list(t, v, 0, out))
		return 0;
	if (json_is_array(v)) {
		buf_addch(out, '[');
		json_array_foreach(v, i, member) {
			if (i)
				buf_addch(out, ',');
			if (item_texts_render(member, t, out))
				return -1;
		}
		buf_addch(out, ']');
		return 0;
	}
	if (!json_is_object(v))
		return put_dumped(v, out);
	buf_addch(out, '{');
	i = 0;
	/* in the object's own order, as jansson writes it without JSON_SORT_KEYS */
	json_object_foreach((json_t *)v, key, member) {
		if (i++)
			buf_addch(out, ',');
		k = json_string(key);
		rc = k ? put_dumped(k, out) : -1;
		json_decref(k);
		if (rc)
			return -1;
		buf_addch(out, ':');
		if (item_texts_render(member, t, out))
			return -1;
	}
	buf_addch(out, '}');
	return 0;
}

size_t item_texts_bytes(const struct item_texts *t)
{
	return t ? t->text.len : 0;
}

size_t item_texts_canon_len(const struct item_texts *t, const json_t *item)
{
	const struct entry *e = find(t, item);

	return e ? e->canon_len : 0;
}

int item_texts_is_stored(const struct item_texts *t, const json_t *item, const char *text,
			 size_t len)
{
	const struct entry *e = find(t, item);

	return e && e->stored_len == len && !memcmp(t->text.ptr + e->stored, text, len);
}

int item_texts_stored(const struct item_texts *t, const json_t *item, const char **text,
		      size_t *len, int64_t *id)
{
	struct entry *e = (struct entry *)find(t, item);
	int64_t known;

	if (!e)
		return -1;
	*text = t->text.ptr + e->stored;
	*len = e->stored_len;
	/*
	 * Worked out once, by whichever thread asks first: tables are shared,
	 * and two threads racing store the same value.  An id that is truly 0
	 * is merely worked out each time.
	 */
	known = __atomic_load_n(&e->id, __ATOMIC_RELAXED);
	if (!known) {
		known = digest64(*text, *len);
		__atomic_store_n(&e->id, known, __ATOMIC_RELAXED);
	}
	*id = known;
	return 0;
}

int item_texts_list(const struct item_texts *t, const json_t *list, int canonical,
		    struct buf *out)
{
	size_t was = out->len, i;
	const struct entry *e;
	json_t *item;

	buf_addch(out, '[');
	json_array_foreach(list, i, item) {
		e = find(t, item);
		if (!e) {
			out->len = was;
			out->ptr[was] = 0;
			return -1;
		}
		if (i)
			buf_addch(out, ',');
		if (canonical)
			buf_add(out, t->text.ptr + e->canon, e->canon_len);
		else
			buf_add(out, t->text.ptr + e->stored, e->stored_len);
	}
	buf_addch(out, ']');
	return 0;
}
