/*
 * bundle.h -- the export bundle: one versioned JSON document holding Spaces
 * with their checkpoints, sessions, turns and reflog, and the rules that
 * make importing it safe.  Pure code.
 *
 *   {"format": "smriti-bundle", "version": 1, "sha256": HEX,
 *    "spaces": [{"id", "name", "description", "created_at", "head",
 *                "checkpoints": [checkpoint document, parents first],
 *                "sessions": [{"id", "title", "mounted_commit_hash",
 *                              "forked_from_session_id", "history_base_seq",
 *                              "created_at", "turns": [{"seq", "role", ...}]}],
 *                "reflog": [{"space", "old", "new", "action", "actor",
 *                            "reason", "created_at"}, oldest first]}]}
 *
 * sha256 covers "spaces" (serialised compactly, keys in the order they
 * were written: jansson keeps the order it reads), each checkpoint by its
 * commit_hash, so a changed turn or reflog row is caught as surely as a
 * changed checkpoint, whose own hash is recomputed.  The document has no time of export:
 * the same data always gives the same bundle, byte for byte.
 */
#ifndef SMRITI_BUNDLE_H
#define SMRITI_BUNDLE_H

#include <jansson.h>

#include "domain/model.h"
#include "util/err.h"

#define BUNDLE_FORMAT "smriti-bundle"
#define BUNDLE_VERSION 1

/* A Space with everything it holds. */
struct space_bundle {
	struct space space;              /* head: the bundle's HEAD */
	struct checkpoint *checkpoints;  /* parents before children */
	size_t n_checkpoints;
	struct session *sessions;
	size_t n_sessions;
	struct turn **turns;             /* turns[i]: those of sessions[i], by seq */
	size_t *n_turns;
	struct reflog_entry *reflog;     /* oldest first */
	size_t n_reflog;
	/*
	 * From bundle_read(): each checkpoint's lists and metadata as a store
	 * writes them, mostly borrowed from the bundle's text (which must
	 * outlive them), the rest in owned[]; NULL otherwise.
	 */
	struct checkpoint_text *texts;
	char **owned;
	size_t n_owned, cap_owned;
};

void space_bundle_release(struct space_bundle *b);
void space_bundles_free(struct space_bundle *v, size_t n);
/* Frees b->texts (and what they own); the rest of b stays. */
void bundle_drop_texts(struct space_bundle *b);

/*
 * The hex SHA-256 a bundle's "sha256" must equal, over its "spaces" as
 * given (each checkpoint reduced to its commit_hash).  Exposed for the fuzz
 * target, which re-seals the bundles it mutates so that the checks behind
 * the digest are reached.
 */
void bundle_digest(const json_t *spaces, char out[65]);

/* The bundle document of v[0..n); new reference. */
json_t *bundle_to_json(const struct space_bundle *v, size_t n);

/*
 * The same bundle, written as text while its parts come, the way an export
 * reads them from a store: no tree of the whole, and a list whose stored
 * text is already what jansson writes goes out as it is.  Per Space:
 * bundle_writer_space(), then each checkpoint in order (t: its lists' text
 * as stored, or NULL to write c's values), then bundle_writer_space_end()
 * with the sessions, turns and reflog of b (its other members unused).
 * bundle_writer_finish() returns the text (caller frees; *len its length)
 * and frees w.  The text is byte for byte json_dumps(bundle_to_json(),
 * JSON_COMPACT).
 */
struct bundle_writer;
struct bundle_writer *bundle_writer_new(void);
void bundle_writer_space(struct bundle_writer *w, const struct space *sp);
void bundle_writer_checkpoint(struct bundle_writer *w, const struct checkpoint *c,
			      const struct checkpoint_text *t);
void bundle_writer_space_end(struct bundle_writer *w, const struct space_bundle *b);
char *bundle_writer_finish(struct bundle_writer *w, size_t *len);
/* Frees w without finishing it (an export that failed). */
void bundle_writer_free(struct bundle_writer *w);

/*
 * Reads and checks the bundle text[0..len): format and version, the sha256
 * over its Spaces, every field's type, every checkpoint's hash recomputed
 * and its items checked as a checkpoint's, each parent earlier in its
 * Space, HEAD one of its checkpoints, turns numbered 1, 2, ...  Any problem
 * is SMR_EUNPROC naming it (SMR_EINVAL when it is not a bundle at all).
 * *out (caller space_bundles_free()s) is set only on success; its texts
 * point into text.  The text is walked, not parsed whole: memory holds the
 * text, the checkpoints' structs and one copy of each distinct item.
 */
enum smr_rc bundle_read(const char *text, size_t len, struct space_bundle **out, size_t *n,
			struct smr_err *err);

/* bundle_read() of a document already parsed (no texts kept). */
enum smr_rc bundle_from_json(const json_t *doc, struct space_bundle **out, size_t *n,
			     struct smr_err *err);

#endif
