/*
 * content.h -- a checkpoint's six lists as the stores keep them: each item
 * once, keyed by its own hash, and each list a short run of content-defined
 * chunks of item ids, so that a checkpoint costs what changed (one item,
 * one chunk, its row) and not its whole state (docs/storage.md).
 *
 * An item's bytes are its compact JSON exactly as it sits inside its list's
 * text (jansson writes an array as its elements' own texts between commas),
 * so a list's text is "[" + the item texts joined by "," + "]": the same
 * bytes the store kept whole before, parsed into the same values, hashed to
 * the same commit_hash, exported into the same bundle.
 *
 * Ids are 64-bit: the first eight bytes of SHA-256 of an item's text, or of
 * a chunk's item ids packed big-endian.  A chunk ends after an item whose id
 * has its low CONTENT_CHUNK_BITS bits zero (Dolt's prolly-tree rule, on one
 * level): the boundaries depend only on the items, so an insert or a removal
 * changes one chunk and every other chunk keeps its id.
 *
 * Two process-wide memories make a write and a read cost the change: the
 * chunks of the checkpoints written or read lately (a child's chunks that
 * its parent has are stored already), and a cache of chunks' text by id.
 * Both are keyed by the database too (content_db_key): a chunk id names
 * its content, but what one database holds says nothing of another (it may
 * hold the parent in the old layout, or a damaged item), so one database's
 * memory never decides a write or a read in another.
 */
#ifndef SMRITI_STORE_CONTENT_H
#define SMRITI_STORE_CONTENT_H

#include "domain/model.h"
#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define CONTENT_LISTS 6
#define CONTENT_CHUNK_BITS 5           /* about 32 items a chunk */

struct content_item {
	int64_t id;
	const char *body;                  /* into the list's text; len bytes */
	size_t len;
};

struct content_chunk {
	int64_t id;
	size_t first, n;                   /* its items: items[first .. first + n) */
	int fresh;                         /* to be written (see content_mark_fresh) */
};

struct content {
	char *own[CONTENT_LISTS];          /* lists' text made here, which items point into */
	struct content_item *items;
	size_t n_items;
	struct content_chunk *chunks;
	size_t n_chunks;
	int64_t *row;                      /* the commit row's lists: 6 chunk counts, the chunk ids */
	size_t n_row;
};

/*
 * Cuts the lists' text (compact JSON arrays, borrowed: they must outlive ct)
 * into items and chunks.  -1 when a text is not an array whose items can be
 * cut out verbatim (white space between them, not JSON): ct is then empty.
 */
int content_split(struct content *ct, const char *const text[CONTENT_LISTS],
		  const size_t len[CONTENT_LISTS]);
/*
 * list as a store writes it (compact, keys in their order), put together
 * from texts when they hold its items, else written by jansson.  NULL only
 * when jansson cannot write it; the caller frees the text.
 */
char *content_list_text(const struct item_texts *texts, const json_t *list);
/* content_split of c's lists: t's text where it has it, else c's lists written compact. */
void content_of(struct content *ct, const struct checkpoint *c, const struct checkpoint_text *t);
void content_release(struct content *ct);

/*
 * Marks fresh the chunks a write must send: all of them, but those of the
 * checkpoint parent_hash (NULL: none) when content_remember knows them.
 * Returns how many are fresh.
 */
size_t content_mark_fresh(struct content *ct, int64_t db, const char *parent_hash);
/* Remembers that checkpoint hash is stored in database db with these lists (its row, n values). */
void content_remember(int64_t db, const char *hash, const int64_t *row, size_t n);
/* The key of the database a DSN names, for the memories above. */
int64_t content_db_key(const char *dsn);
/*
 * A key of its own, for a database no other handle can open (SQLite's
 * ":memory:"): every such database is another under the same DSN.
 */
int64_t content_db_key_private(void);

/*
 * Checks, before a write commits, that each item it stores anew (of a
 * fresh chunk; content_mark_fresh first) parses back from its bytes equal
 * to c's, so that what a read gives hashes to c's hash.  SMR_EINTERNAL
 * when not.
 */
enum smr_rc content_verify(const struct content *ct, const struct checkpoint *c,
			   struct smr_err *err);

/* n ids big-endian into out (8 * n bytes), and back. */
void content_pack(const int64_t *v, size_t n, unsigned char *out);
int64_t content_unpack(const unsigned char *p);
/* 1 when n values form a row: 6 counts that add up to the chunk ids after them. */
int content_row_valid(const int64_t *row, size_t n);
/* A row's values from its packed bytes; NULL (and *n 0) when they do not form one. */
int64_t *content_row_unpack(const void *p, size_t bytes, size_t *n);

/*
 * Reads chunks a read needs and the cache lacks: out[i] gets chunk ids[i]'s
 * items' text joined by ",", and counts[i] their number.  A chunk or an item
 * that is missing is SMR_ENOTFOUND.
 */
typedef enum smr_rc (*content_fetch_fn)(void *arg, const int64_t *ids, size_t n,
					struct buf *out, size_t *counts, struct smr_err *err);

/* Sorts ids[0..n) and drops repeats; returns how many stay. */
size_t content_ids_unique(int64_t *ids, size_t n);
/* Where id is in ids[0..n) as content_ids_unique left them; SIZE_MAX: not there. */
size_t content_ids_find(const int64_t *ids, size_t n, int64_t id);

/*
 * Fetches in one call the chunks among ids (n, repeats allowed) that the
 * chunk cache lacks, and keeps them there, so that the content_read of
 * several rows after it finds them: a page of checkpoints read one by one
 * fetched its chunks a call each, a round trip each on PostgreSQL.  A
 * chunk or item missing (damage) is not an error here: nothing is kept,
 * and each row's content_read meets it on its own.
 */
enum smr_rc content_prefetch(const int64_t *ids, size_t n, int64_t db, content_fetch_fn fetch,
			     void *arg, struct smr_err *err);

/*
 * The six lists' text of a row (row, n), from the chunk cache and fetch
 * (with fresh: from fetch only, as fsck wants); text[k] is the caller's to
 * free.  On failure no text is left.
 */
enum smr_rc content_read(const int64_t *row, size_t n, int64_t db, int fresh,
			 content_fetch_fn fetch,
			 void *arg, char *text[CONTENT_LISTS], size_t len[CONTENT_LISTS],
			 struct smr_err *err);

#endif
