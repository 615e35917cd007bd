/*
 * content.c -- a checkpoint's lists cut into items and content-defined
 * chunks for the stores (content.h), the memory of which chunks are stored,
 * and the cache of chunks' text that reads assemble lists from.
 */
#include "store/content.h"
#include "domain/checkpoint.h"
#include "domain/item_texts.h"
#include "util/buf.h"
#include "util/digest64.h"
#include "util/jspan.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MASK ((1u << CONTENT_CHUNK_BITS) - 1)

void content_pack(const int64_t *v, size_t n, unsigned char *out)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = (uint64_t)v[i];

		for (int b = 7; b >= 0; b--, x >>= 8)
			out[i * 8 + (size_t)b] = (unsigned char)(x & 0xff);
	}
}

int64_t content_unpack(const unsigned char *p)
{
	uint64_t x = 0;

	for (int b = 0; b < 8; b++)
		x = x << 8 | p[b];
	return (int64_t)x;
}

int content_row_valid(const int64_t *row, size_t n)
{
	size_t chunks = 0;

	if (n < CONTENT_LISTS)
		return 0;
	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		if (row[k] < 0 || (uint64_t)row[k] > n)
			return 0;
		chunks += (size_t)row[k];
	}
	return chunks == n - CONTENT_LISTS;
}

int64_t *content_row_unpack(const void *p, size_t bytes, size_t *n)
{
	size_t count = bytes / 8;
	int64_t *v;

	*n = 0;
	if (!p || bytes % 8 || count < CONTENT_LISTS)
		return NULL;
	v = xmalloc(count * sizeof(*v));
	for (size_t i = 0; i < count; i++)
		v[i] = content_unpack((const unsigned char *)p + i * 8);
	if (!content_row_valid(v, count)) {
		free(v);
		return NULL;
	}
	*n = count;
	return v;
}

static void add_item(struct content *ct, size_t *cap, struct content_item it)
{
	if (ct->n_items == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		ct->items = xrealloc(ct->items, *cap * sizeof(*ct->items));
	}
	ct->items[ct->n_items++] = it;
}

/* The items of one list's text; -1 when it cannot be cut verbatim. */
static int cut_list(struct content *ct, size_t *cap, const char *p, size_t n)
{
	const char *at = NULL;
	size_t len = 0;
	int more;

	while ((more = jspan_array_next(p, n, &at, &len)) > 0)
		add_item(ct, cap, (struct content_item){ digest64(at, len), at, len });
	return more;
}

/* The chunk of items [first, first + n): its id over their packed ids. */
static void add_chunk(struct content *ct, size_t *cap, size_t first, size_t n)
{
	unsigned char *packed = xmalloc(n * 8);
	int64_t *ids = xmalloc(n * sizeof(*ids));

	for (size_t i = 0; i < n; i++)
		ids[i] = ct->items[first + i].id;
	content_pack(ids, n, packed);
	if (ct->n_chunks == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		ct->chunks = xrealloc(ct->chunks, *cap * sizeof(*ct->chunks));
	}
	ct->chunks[ct->n_chunks++] = (struct content_chunk){ digest64(packed, n * 8), first, n, 1 };
	free(packed);
	free(ids);
}

/* Chunks of the items [first, last): a boundary after each id with its low bits zero. */
static size_t chunk_list(struct content *ct, size_t *cap, size_t first, size_t last)
{
	size_t start = first, before = ct->n_chunks;

	for (size_t i = first; i < last; i++)
		if (i + 1 == last || !((uint64_t)ct->items[i].id & CHUNK_MASK)) {
			add_chunk(ct, cap, start, i + 1 - start);
			start = i + 1;
		}
	return ct->n_chunks - before;
}

/* The chunks of each list's items (list k's: items[first[k] .. first[k + 1])) and the row of them. */
static void chunk_lists(struct content *ct, const size_t first[CONTENT_LISTS + 1])
{
	size_t ccap = 0, per_list[CONTENT_LISTS];

	for (size_t k = 0; k < CONTENT_LISTS; k++)
		per_list[k] = chunk_list(ct, &ccap, first[k], first[k + 1]);
	ct->n_row = CONTENT_LISTS + ct->n_chunks;
	ct->row = xmalloc(ct->n_row * sizeof(*ct->row));
	for (size_t k = 0; k < CONTENT_LISTS; k++)
		ct->row[k] = (int64_t)per_list[k];
	for (size_t i = 0; i < ct->n_chunks; i++)
		ct->row[CONTENT_LISTS + i] = ct->chunks[i].id;
}

int content_split(struct content *ct, const char *const text[CONTENT_LISTS],
		  const size_t len[CONTENT_LISTS])
{
	size_t icap = 0, first[CONTENT_LISTS + 1];

	memset(ct, 0, sizeof(*ct));
	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		first[k] = ct->n_items;
		if (!text[k] || cut_list(ct, &icap, text[k], len[k])) {
			content_release(ct);
			return -1;
		}
	}
	first[CONTENT_LISTS] = ct->n_items;
	chunk_lists(ct, first);
	return 0;
}

char *content_list_text(const struct item_texts *texts, const json_t *list)
{
	struct buf b = BUF_INIT(0);

	if (texts && !item_texts_list(texts, list, 0, &b))
		return buf_detach(&b, NULL);
	buf_release(&b);
	return json_dumps(list, ITEM_TEXTS_STORED);
}

/*
 * content_split of c's lists made from the texts kept of its items
 * (item_texts.h), which hold the very bytes a list put together from them
 * would be cut into, and each item's id: no list written out and cut, no
 * item hashed again (a patch keeps most of its parent's).  -1 (ct empty)
 * when they lack one of c's items.
 */
static int content_from_texts(struct content *ct, const struct checkpoint *c)
{
	size_t icap = 0, first[CONTENT_LISTS + 1];
	struct content_item it;
	const json_t *list;

	memset(ct, 0, sizeof(*ct));
	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		first[k] = ct->n_items;
		list = checkpoint_list(c, checkpoint_list_fields[k]);
		for (size_t i = 0; i < json_array_size(list); i++) {
			if (item_texts_stored(c->texts, json_array_get(list, i), &it.body, &it.len,
					      &it.id)) {
				content_release(ct);
				return -1;
			}
			add_item(ct, &icap, it);
		}
	}
	first[CONTENT_LISTS] = ct->n_items;
	chunk_lists(ct, first);
	return 0;
}

void content_of(struct content *ct, const struct checkpoint *c, const struct checkpoint_text *t)
{
	char *own[CONTENT_LISTS];
	const char *text[CONTENT_LISTS];
	size_t len[CONTENT_LISTS];
	const json_t *list;

	if (!t && c->texts && !content_from_texts(ct, c))
		return;
	if (t) {
		for (size_t k = 0; k < CONTENT_LISTS; k++) {
			text[k] = t->json[k];
			len[k] = t->len[k];
		}
		if (!content_split(ct, text, len))
			return;
	}
	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		list = checkpoint_list(c, checkpoint_list_fields[k]);
		/* a sealed checkpoint has its items' texts at hand (item_texts.h) */
		own[k] = list ? content_list_text(c->texts, list) : xstrdup("[]");
		if (!own[k])
			BUG("cannot write a checkpoint's list as JSON");
		text[k] = own[k];
		len[k] = strlen(own[k]);
	}
	if (content_split(ct, text, len))
		BUG("jansson wrote a list that cannot be cut into its items");
	for (size_t k = 0; k < CONTENT_LISTS; k++)
		ct->own[k] = own[k];
}

void content_release(struct content *ct)
{
	for (size_t k = 0; k < CONTENT_LISTS; k++)
		free(ct->own[k]);
	free(ct->items);
	free(ct->chunks);
	free(ct->row);
	memset(ct, 0, sizeof(*ct));
}

/* ---- which checkpoints' chunks are stored ---- */

#define KNOWN_SLOTS 32

struct known {
	int64_t db;                        /* content_db_key */
	char hash[HASH_HEX_LEN + 1];
	int64_t *ids;                      /* sorted chunk ids */
	size_t n;
	uint64_t used;
};

static struct {
	pthread_mutex_t lock;
	struct known slot[KNOWN_SLOTS];
	uint64_t tick;
} known = { PTHREAD_MUTEX_INITIALIZER, { { 0, "", NULL, 0, 0 } }, 0 };

int64_t content_db_key(const char *dsn)
{
	return digest64(dsn, strlen(dsn));
}

int64_t content_db_key_private(void)
{
	static atomic_ullong opened;
	char name[48];
	int len = snprintf(name, sizeof(name), "\001private %llu", ++opened);

	return digest64(name, (size_t)len);
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A hash remembered again takes the rows given now, not those remembered:
 * within one database a checkpoint has one row, but a key can outlive its
 * database (a file made again at its path), and a memory kept from the
 * other one took a child's chunks as stored (the fuzzer's bundle target).
 */
void content_remember(int64_t db, const char *hash, const int64_t *row, size_t n)
{
	struct known *k = NULL, *oldest = &known.slot[0];
	size_t chunks = n > CONTENT_LISTS ? n - CONTENT_LISTS : 0;

	if (!hash || strlen(hash) != HASH_HEX_LEN || n < CONTENT_LISTS)
		return;
	pthread_mutex_lock(&known.lock);
	for (size_t i = 0; i < KNOWN_SLOTS && !k; i++) {
		if (known.slot[i].db == db && !strcmp(known.slot[i].hash, hash))
			k = &known.slot[i];
		else if (known.slot[i].used < oldest->used)
			oldest = &known.slot[i];
	}
	if (!k)
		k = oldest;
	free(k->ids);
	k->ids = xmalloc((chunks ? chunks : 1) * sizeof(*k->ids));
	memcpy(k->ids, row + CONTENT_LISTS, chunks * sizeof(*k->ids));
	qsort(k->ids, chunks, sizeof(*k->ids), cmp_id);
	k->n = chunks;
	memcpy(k->hash, hash, HASH_HEX_LEN + 1);
	k->db = db;
	k->used = ++known.tick;
	pthread_mutex_unlock(&known.lock);
}

size_t content_mark_fresh(struct content *ct, int64_t db, const char *parent_hash)
{
	struct known *k = NULL;
	size_t fresh = 0;

	pthread_mutex_lock(&known.lock);
	for (size_t i = 0; parent_hash && i < KNOWN_SLOTS; i++)
		if (known.slot[i].db == db && !strcmp(known.slot[i].hash, parent_hash))
			k = &known.slot[i];
	for (size_t i = 0; i < ct->n_chunks; i++) {
		ct->chunks[i].fresh = !k || !bsearch(&ct->chunks[i].id, k->ids, k->n,
						     sizeof(*k->ids), cmp_id);
		fresh += (size_t)ct->chunks[i].fresh;
	}
	pthread_mutex_unlock(&known.lock);
	return fresh;
}

/* ---- the write's check ---- */

/* c's items in the order of ct's: every list's, one after the other; NULL when they do not match. */
static const json_t **source_items(const struct content *ct, const struct checkpoint *c)
{
	const json_t **src = xmalloc((ct->n_items ? ct->n_items : 1) * sizeof(*src));
	const json_t *list;
	size_t at = 0;

	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		list = checkpoint_list(c, checkpoint_list_fields[k]);
		for (size_t i = 0; i < json_array_size(list); i++) {
			if (at == ct->n_items) {
				free(src);
				return NULL;
			}
			src[at++] = json_array_get(list, i);
		}
	}
	if (at != ct->n_items) {
		free(src);
		return NULL;
	}
	return src;
}

/*
 * Every item a write stores anew (those of its fresh chunks), parsed back
 * from its bytes, equals c's item (jansson compares objects by their keys,
 * as the canonical form sorts them), so a read gives back what c's hash
 * was computed from; bytes that are the text item_texts kept of the item
 * (jansson's own) need no parsing.  An item of a chunk already stored has bytes that
 * were checked so when they were first written (its id names them).
 */
enum smr_rc content_verify(const struct content *ct, const struct checkpoint *c,
			   struct smr_err *err)
{
	const json_t **src = source_items(ct, c);
	const struct content_item *it = NULL;
	json_t *back;
	int ok = src != NULL;

	for (size_t i = 0; ok && i < ct->n_chunks; i++) {
		for (size_t j = 0; ok && ct->chunks[i].fresh && j < ct->chunks[i].n; j++) {
			it = &ct->items[ct->chunks[i].first + j];
			/* the text jansson wrote of that very item reads back as it */
			if (item_texts_is_stored(c->texts, src[ct->chunks[i].first + j],
						 it->body, it->len))
				continue;
			back = json_loadb(it->body, it->len, JSON_DECODE_ANY, NULL);
			ok = back && json_equal(back, src[ct->chunks[i].first + j]);
			json_decref(back);
		}
	}
	free(src);
	if (ok)
		return SMR_OK;
	return smr_errf(err, SMR_EINTERNAL, "checkpoint %.12s: an item as stored would read back"
			" otherwise (%.60s); nothing was written (report this)",
			c->hash ? c->hash : "?", it ? it->body : "its lists");
}

/* ---- the cache of chunks' text ---- */

#define CACHE_SLOTS 8192
#define CACHE_MAX_BYTES (64u << 20)

struct cached {
	int64_t db, id;
	char *text;                        /* NULL: empty slot */
	size_t len, n;
};

static struct {
	pthread_mutex_t lock;
	struct cached slot[CACHE_SLOTS];
	size_t bytes;
} cache = { PTHREAD_MUTEX_INITIALIZER, { { 0, 0, NULL, 0, 0 } }, 0 };

static struct cached *cache_slot(int64_t db, int64_t id)
{
	return &cache.slot[((uint64_t)id ^ (uint64_t)db) % CACHE_SLOTS];
}

/* Appends chunk id's text to b (NULL: only asks) when the cache has it; *n its items.  1: found. */
static int cache_get(int64_t db, int64_t id, struct buf *b, size_t *n)
{
	struct cached *c;
	int found;

	pthread_mutex_lock(&cache.lock);
	c = cache_slot(db, id);
	found = c->text && c->id == id && c->db == db;
	if (found && b) {
		buf_add(b, c->text, c->len);
		*n = c->n;
	}
	pthread_mutex_unlock(&cache.lock);
	return found;
}

static void cache_put(int64_t db, int64_t id, const char *text, size_t len, size_t n)
{
	struct cached *c;

	pthread_mutex_lock(&cache.lock);
	c = cache_slot(db, id);
	if (c->text) {
		cache.bytes -= c->len;
		free(c->text);
		c->text = NULL;
	}
	if (cache.bytes + len <= CACHE_MAX_BYTES) {
		c->db = db;
		c->id = id;
		c->text = xstrndup(text, len);
		c->len = len;
		c->n = n;
		cache.bytes += len;
	}
	pthread_mutex_unlock(&cache.lock);
}

/* ---- reading ---- */

size_t content_ids_unique(int64_t *ids, size_t n)
{
	size_t m = 0;

	qsort(ids, n, sizeof(*ids), cmp_id);
	for (size_t i = 0; i < n; i++)
		if (!m || ids[i] != ids[m - 1])
			ids[m++] = ids[i];
	return m;
}

size_t content_ids_find(const int64_t *ids, size_t n, int64_t id)
{
	const int64_t *hit = bsearch(&id, ids, n, sizeof(*ids), cmp_id);

	return hit ? (size_t)(hit - ids) : SIZE_MAX;
}

enum smr_rc content_prefetch(const int64_t *ids, size_t n, int64_t db, content_fetch_fn fetch,
			     void *arg, struct smr_err *err)
{
	int64_t *miss = xmalloc((n ? n : 1) * sizeof(*miss));
	struct smr_err e = SMR_ERR_INIT;
	struct buf *got;
	size_t m = 0, k = 0, *counts;
	enum smr_rc rc = SMR_OK;

	if (n)
		memcpy(miss, ids, n * sizeof(*ids));
	n = content_ids_unique(miss, n);
	for (size_t i = 0; i < n; i++)
		if (!cache_get(db, miss[i], NULL, NULL))
			miss[m++] = miss[i];
	if (m) {
		got = xcalloc(m, sizeof(*got));
		counts = xcalloc(m, sizeof(*counts));
		for (k = 0; k < m; k++)
			got[k] = (struct buf)BUF_INIT(0);
		rc = fetch(arg, miss, m, got, counts, &e);
		for (k = 0; k < m; k++) {
			if (!rc)
				cache_put(db, miss[k], got[k].ptr, got[k].len, counts[k]);
			buf_release(&got[k]);
		}
		free(got);
		free(counts);
	}
	free(miss);
	if (rc == SMR_ENOTFOUND)
		return SMR_OK;
	if (rc && err)
		*err = e;
	return rc;
}

/* Chunk texts for every chunk of the row: from the cache, the rest fetched in one call. */
static enum smr_rc gather(const int64_t *ids, size_t n, int64_t db, int fresh,
			  content_fetch_fn fetch,
			  void *arg, struct buf *texts, size_t *counts, struct smr_err *err)
{
	int64_t *miss = xmalloc((n ? n : 1) * sizeof(*miss));
	size_t *at = xmalloc((n ? n : 1) * sizeof(*at)), m = 0;
	struct buf *got;
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; i < n; i++)
		if (fresh || !cache_get(db, ids[i], &texts[i], &counts[i])) {
			miss[m] = ids[i];
			at[m++] = i;
		}
	if (m) {
		got = xcalloc(m, sizeof(*got));
		for (size_t i = 0; i < m; i++)
			got[i] = (struct buf)BUF_INIT(0);
		rc = fetch(arg, miss, m, got, counts + n, err);
		for (size_t i = 0; i < m; i++) {
			if (!rc) {
				counts[at[i]] = counts[n + i];
				cache_put(db, miss[i], got[i].ptr, got[i].len, counts[n + i]);
				buf_add(&texts[at[i]], got[i].ptr, got[i].len);
			}
			buf_release(&got[i]);
		}
		free(got);
	}
	free(miss);
	free(at);
	return rc;
}

enum smr_rc content_read(const int64_t *row, size_t n, int64_t db, int fresh,
			 content_fetch_fn fetch,
			 void *arg, char *text[CONTENT_LISTS], size_t len[CONTENT_LISTS],
			 struct smr_err *err)
{
	size_t chunks = n - CONTENT_LISTS, at = 0, total;
	struct buf *texts = xcalloc(chunks ? chunks : 1, sizeof(*texts));
	size_t *counts = xcalloc(2 * (chunks ? chunks : 1), sizeof(*counts));
	struct buf b = BUF_INIT(0);
	enum smr_rc rc;

	for (size_t i = 0; i < chunks; i++)
		texts[i] = (struct buf)BUF_INIT(0);
	rc = gather(row + CONTENT_LISTS, chunks, db, fresh, fetch, arg, texts, counts, err);
	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		buf_addch(&b, '[');
		for (int64_t j = 0; !rc && j < row[k]; j++, at++) {
			if (j)
				buf_addch(&b, ',');
			buf_add(&b, texts[at].ptr, texts[at].len);
		}
		buf_addch(&b, ']');
		text[k] = rc ? NULL : buf_detach(&b, &total);
		len[k] = rc ? 0 : total;
		buf_release(&b);
	}
	for (size_t i = 0; i < chunks; i++)
		buf_release(&texts[i]);
	free(texts);
	free(counts);
	if (rc)
		for (size_t k = 0; k < CONTENT_LISTS; k++) {
			free(text[k]);
			text[k] = NULL;
		}
	return rc;
}
