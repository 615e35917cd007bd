/*
 * bundle_internal.h -- what bundle.c, bundle_read.c and bundle_write.c
 * share, not part of bundle.h's interface: the cache of item texts (its
 * functions in bundle_items.c), the JSON of a session and of a reflog
 * entry, and the digest's pieces.
 */
#ifndef SMRITI_DOMAIN_BUNDLE_INTERNAL_H
#define SMRITI_DOMAIN_BUNDLE_INTERNAL_H

#include "domain/bundle.h"
#include "domain/checkpoint.h"
#include "util/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A bundle is read from its text, walked with util/jspan.h, never parsed
 * whole: a tree of 100,000 checkpoints cost more time to build and free
 * than everything else an import does.  Each checkpoint's items go to
 * jansson one by one, and only once: a checkpoint carries most of its
 * parent's items, so an item whose text was met in one of the last
 * ITEM_WINDOW checkpoints is the value already parsed, checked and
 * serialised then (the same bytes are the same value).  Everything the
 * hashes cover is still recomputed from the values.
 */

#define ITEM_WINDOW 64
#define META 6                        /* the cache's field number of metadata */

/* One distinct item text of a list (or a metadata object) met in the bundle. */
struct item {
	const char *span;                 /* its text in the bundle (own: a copy) */
	char *own;
	size_t len;
	uint64_t h;
	int field;                        /* checkpoint_list_fields' index, or META */
	json_t *value;                    /* parsed and checked */
	char *compact;                    /* what a store writes, when not span */
	size_t clen;
	char *canon;                      /* what is hashed (keys sorted), when not compact */
	size_t nlen;
	size_t used;                      /* the last checkpoint that held it */
};

struct reader {
	struct item **slot;               /* open addressing on h */
	size_t cap, n;
	size_t tick;                      /* checkpoints read */
	int stored;                       /* items from a store's rows: copied, checked no more */
	struct item **items[CHECKPOINT_TEXT_COLS];   /* the checkpoint's, per field */
	size_t n_items[CHECKPOINT_TEXT_COLS], cap_items[CHECKPOINT_TEXT_COLS];
	/* the last checkpoint's lists: a list written the same is the same value */
	const char *last_span[6];
	size_t last_len[6];
	json_t *last_list[6];                        /* a reference */
	const char *last_text[6];
	size_t last_tlen[6];
};

/* Frees every item and the per-checkpoint arrays; r is empty after. */
void bundle_reader_release(struct reader *r);
/* Rebuilds the table at cap, dropping the items no checkpoint of the window held. */
void bundle_reader_rehash(struct reader *r, size_t cap);
/*
 * The item of field (checkpoint_list_fields' index, or META) written
 * [p, p + n), idx its place in its list: the one met before, or a new one
 * parsed and checked.  *out belongs to r.
 */
enum smr_rc bundle_reader_item(struct reader *r, int field, const char *p, size_t n,
			       size_t idx, struct item **out, struct smr_err *err);
/* The item's text as a store writes it (jansson's compact form).  Borrowed. */
const char *bundle_item_compact(const struct item *it, size_t *len);
/* The item's text as hashed (compact, keys sorted).  Borrowed. */
const char *bundle_item_canon(const struct item *it, size_t *len);

/* A session with its turns, and a reflog entry, as the bundle holds them.  New references. */
json_t *bundle_session_json(const struct session *s, const struct turn *turns, size_t n);
json_t *bundle_reflog_json(const struct reflog_entry *e);

/* jansson's text of v with flags; caller frees. */
char *bundle_dump(const json_t *v, size_t flags, size_t *len);
/* The 64 hex digits of a SHA-256 digest into out (no NUL). */
void bundle_digest_hex(const uint8_t *digest, char *out);
/* Hex SHA-256 of the compact text of light, the Spaces as the digest sees them. */
void bundle_digest_light(const json_t *light, char out[65]);

#endif
