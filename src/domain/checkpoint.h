/*
 * checkpoint.h -- building, validating, hashing and rendering Checkpoints.
 *
 * A Checkpoint is immutable and content-addressed: its commit_hash is the
 * SHA-256 of a canonical serialization (docs/checkpoint-hash.md) that covers
 * the parent hash(es) and every field except the Space, so a fork shares its
 * history with the same hashes.  Pure code: no store, no clock, no I/O.
 */
#ifndef SMRITI_CHECKPOINT_H
#define SMRITI_CHECKPOINT_H

#include "domain/model.h"
#include "util/err.h"

/*
 * Hard limits on what one checkpoint may hold, so that a write cannot tie
 * up a worker for seconds or make every later read of its Space huge.
 * Past one, the write is refused with SMR_ETOOBIG (413) naming the limit.
 * docs/http.md and docs/mcp.md list them.
 */
#define CHECKPOINT_MAX_ITEMS 1000               /* items in each list */
#define CHECKPOINT_MAX_ITEM_CHARS 10000         /* characters of one item, and of the title */
#define CHECKPOINT_MAX_CONTENT_CHARS 1000000    /* characters of one artifact's content */
#define CHECKPOINT_MAX_BYTES (4u << 20)         /* its canonical JSON, in bytes */

/*
 * Validates the user-supplied fields of in (title, summary, the six lists,
 * artifacts, metadata, author) and normalises them into out, which must be
 * checkpoint_init()ed.  Plain strings in lists become {"text": s} (entities:
 * {"name": s}); tasks get status "open" unless given.  Output-only keys
 * (commit_hash, parent_hash, space, created_at) are ignored so that a
 * `show --json` document can be fed back; any other unknown key is an error.
 * On error out may be partly filled; the caller releases it either way.
 */
enum smr_rc checkpoint_from_json(const json_t *in, struct checkpoint *out,
				 struct smr_err *err);

/*
 * SMR_OK when c is within the CHECKPOINT_MAX_* limits, else SMR_ETOOBIG
 * naming the limit.  checkpoint_from_json() applies it; a checkpoint built
 * another way must be checked before it is written.
 */
enum smr_rc checkpoint_check_limits(const struct checkpoint *c, struct smr_err *err);

/*
 * The refusal of an item a list already holds (SMR_EUNPROC): "decision 'X'
 * is already there (a list holds each item once)".  One text for every way
 * a write can repeat an item: a whole state listing it twice, a patch
 * adding what its parent has.  field is a list name; key the item's text
 * (name for entities and artifacts), quoted up to 200 characters.
 */
enum smr_rc checkpoint_err_duplicate(const char *field, const char *key, struct smr_err *err);

/*
 * SMR_OK when no list of c holds two items of one key (text; name for
 * entities and artifacts: what a patch names an item by), else
 * checkpoint_err_duplicate() of the first repeat.  For new writes of a
 * whole state: checkpoints and bundles written before the rule may hold
 * such items, and stay readable, importable and restorable.
 */
enum smr_rc checkpoint_check_unique(const struct checkpoint *c, struct smr_err *err);

/* Normalises one list field in place-by-copy; returns a new array or NULL with err set. */
json_t *checkpoint_normalize_list(const char *field, const json_t *in,
				  struct smr_err *err);

/*
 * SMR_OK when item may be item idx of list field (what
 * checkpoint_normalize_list() accepts), else the error it would give.
 */
enum smr_rc checkpoint_check_item(const char *field, const json_t *item, size_t idx,
				  struct smr_err *err);

/* 1 when nothing at all would be recorded (no title, summary, items, artifacts). */
int checkpoint_is_empty(const struct checkpoint *c);

/* The canonical serialization that is hashed; caller free()s. */
char *checkpoint_canonical(const struct checkpoint *c);

/* Recomputes the hash of c into out[65] (hex, NUL-terminated). */
void checkpoint_compute_hash(const struct checkpoint *c, char out[HASH_HEX_LEN + 1]);

/* Sets c->hash from its fields (replacing any old value). */
void checkpoint_seal(struct checkpoint *c);

/* Full JSON document of a checkpoint (agent contract); new reference. */
json_t *checkpoint_to_json(const struct checkpoint *c);

/*
 * That document's compact text, keys sorted, but the name of the Space
 * holding it (which the hash does not cover): two copies of a checkpoint
 * compare equal as text.  Caller frees.
 */
char *checkpoint_content_text(const struct checkpoint *c);

/* Deep copy of the content fields (not hash/parent/space/created_at) from src to dst (init'ed). */
void checkpoint_copy_content(struct checkpoint *dst, const struct checkpoint *src);

/*
 * The same fields as checkpoint_copy_content, sharing src's items: dst
 * gets lists (and metadata) of its own, so adding, dropping or replacing
 * an item of dst leaves src as it was, but each item is src's, counted
 * once more.  An item held by a checkpoint is never changed in place:
 * whoever changes one replaces it with a copy (patch.c marks a task done
 * so).  Items may be shared between threads (jansson counts references
 * atomically and reads and writes out JSON without changing it).
 */
void checkpoint_share_content(struct checkpoint *dst, const struct checkpoint *src);

/*
 * As checkpoint_share_content, but dst takes src's very lists and
 * metadata, counted once more: no list is copied.  Neither may then change
 * a list in place; checkpoint_own_list gives one a list of its own first.
 */
void checkpoint_share_lists(struct checkpoint *dst, const struct checkpoint *src);

/*
 * c's list field, made c's own (a copy sharing its items) when it is
 * still from's very list (checkpoint_share_lists), ready to be changed.
 * from may be NULL: c's list as it is.
 */
json_t *checkpoint_own_list(struct checkpoint *c, const struct checkpoint *from,
			    const char *field);

/*
 * Makes each item of c that is, value and order of keys alike, the item
 * at the same place in from's list (an agent writing its whole state back,
 * most of it carried over) from's own item, counted once more, and gives
 * c from's texts when c has none: checkpoint_seal then copies those
 * items' JSON texts rather than writing them out again.  c's content does
 * not change.  from is read only (its items may be shared across threads,
 * as checkpoint_share_content says).
 */
void checkpoint_adopt_items(struct checkpoint *c, const struct checkpoint *from);

/* Names of the six list fields in display order, NULL-terminated. */
extern const char *const checkpoint_list_fields[];

/* The list member of c called name ("decisions", ..., "artifacts"), borrowed; NULL if none. */
const json_t *checkpoint_list(const struct checkpoint *c, const char *name);

/* "decision", "question", ... for a list field's name; the name itself if it is none. */
const char *checkpoint_item_noun(const char *field);

/* The key that names an item of a list field: "name" for entities and artifacts, else "text". */
const char *checkpoint_item_key(const char *field);

/* The list member of c called name, writable (NULL if none); the slot holds one reference. */
json_t **checkpoint_list_slot(struct checkpoint *c, const char *name);

/* 1 if s looks like a hex hash prefix (lower-case hex, 4..64 chars). */
int is_hash_prefix(const char *s);

#endif
