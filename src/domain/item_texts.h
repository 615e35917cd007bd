/*
 * item_texts.h -- the JSON text of each item of a checkpoint, kept beside
 * it, so that a checkpoint made from another (a patch on HEAD) writes out
 * only the items it changed: its hash's canonical form and the lists a
 * store writes are put together from texts already written.
 *
 * An item is known by its identity (the json_t), which is sound because
 * items are never changed in place once a checkpoint holds them
 * (checkpoint_share_content) and because the texts hold a reference to
 * each item they describe, so no other item can take its address.  A set
 * of texts never changes once made and is counted, so checkpoints sharing
 * items share it, across threads too.
 */
#ifndef SMRITI_ITEM_TEXTS_H
#define SMRITI_ITEM_TEXTS_H

#include "domain/model.h"
#include "util/buf.h"

/* How the hash's canonical form writes JSON; a store writes lists COMPACT only. */
#define ITEM_TEXTS_CANONICAL (JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))
#define ITEM_TEXTS_STORED (JSON_COMPACT | JSON_ENCODE_ANY)

struct item_texts;

/*
 * The texts of every item of c's six lists: those from has already (may
 * be NULL) copied, the others written by jansson.  Caller drops it with
 * item_texts_unref.
 */
struct item_texts *item_texts_make(const struct checkpoint *c, const struct item_texts *from);

/* t counted once more (t may be NULL); returns t. */
struct item_texts *item_texts_ref(struct item_texts *t);

/* Drops one count of t (may be NULL); the last frees it. */
void item_texts_unref(struct item_texts *t);

/*
 * Appends list as compact JSON to out: canonical (keys sorted, as the hash
 * covers it) or as a store writes it (keys in their order).  Returns 0, or
 * -1 with out unchanged when t lacks one of list's items.
 */
int item_texts_list(const struct item_texts *t, const json_t *list, int canonical,
		    struct buf *out);

/* The bytes of all t's texts, both forms (t may be NULL: 0): a bound for a list put together from them. */
size_t item_texts_bytes(const struct item_texts *t);

/* The length of item's canonical text in t, 0 when t does not hold it (t may be NULL). */
size_t item_texts_canon_len(const struct item_texts *t, const json_t *item);

/* 1 when t holds item and its stored text is the len bytes of text (t may be NULL). */
int item_texts_is_stored(const struct item_texts *t, const json_t *item, const char *text,
			 size_t len);

/*
 * item's stored text in t (*text: len bytes, not NUL-terminated, borrowed
 * from t) and its id, digest64 of that text, worked out once for t and
 * every set of texts made from it.  0, or -1 when t does not hold item.
 */
int item_texts_stored(const struct item_texts *t, const json_t *item, const char **text,
		      size_t *len, int64_t *id);

/*
 * Appends v to out as json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)
 * writes it, byte for byte, with each array whose items t all holds put
 * together from their texts (t may be NULL): a checkpoint in an answer is
 * written out once, when it was sealed.  Returns 0, or -1 when jansson
 * cannot write a value (out then holds part of it).
 */
int item_texts_render(const json_t *v, const struct item_texts *t, struct buf *out);

#endif
