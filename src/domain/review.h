/*
 * review.h -- checkpoint review: typed findings about the reasoning state
 * of one Checkpoint (docs/review.md).
 *
 * A finding is a JSON object of one fixed shape, whichever pass produced it:
 *
 *   {"type": "contradiction" | "duplicate_decision" | "hidden_assumption" |
 *            "resolved_question" | "disconnected_entity",
 *    "message": "...",
 *    "items": [{"field": "decisions", "index": 0, "text": "Use Postgres"}, ...],
 *    "source": "deterministic" | "llm"}
 *
 * index is 0-based into the named list field of the checkpoint; text is the
 * item's text (an entity's name).  The deterministic pass below needs no
 * provider; a second pass (the LLM pass of smriti-full) hands its raw
 * findings to review_finding_import(), which checks them against the
 * checkpoint and brings them into the same form.  Pure code: reviewing never
 * changes the checkpoint.
 */
#ifndef SMRITI_REVIEW_H
#define SMRITI_REVIEW_H

#include "domain/model.h"
#include "util/err.h"

#define REVIEW_SOURCE_DETERMINISTIC "deterministic"

/* The finding types in the order they are reported, NULL-terminated. */
extern const char *const review_types[];

/* 1 if type is one of review_types. */
int review_type_known(const char *type);

/*
 * Hard caps of the deterministic pass (a checkpoint can come from the
 * network): only the first REVIEW_MAX_ITEMS items of each list are
 * reviewed, and the mention checks of entities scan at most
 * REVIEW_SCAN_BUDGET bytes of text in all.  Past either, the checks left
 * over report nothing and the pass is partial.
 */
#define REVIEW_MAX_ITEMS 1000
#define REVIEW_SCAN_BUDGET ((size_t)64 << 20)

/*
 * The deterministic pass over c: a new array of findings (new reference),
 * ordered by type as review_types lists them, then by item index.
 * *partial (if not NULL) is set to 1 when a cap left something unchecked.
 */
json_t *review_deterministic(const struct checkpoint *c, int *partial);

/*
 * Checks one raw finding of another pass against c -- a known type, a
 * non-empty message, 1..REVIEW_ITEMS_MAX items naming existing items -- and
 * stores in *out a new finding of the standard shape whose item texts are
 * taken from c (never from the raw finding) and whose source is source.
 * On error *out is NULL and err says what is wrong (SMR_EUNPROC).
 */
#define REVIEW_ITEMS_MAX 16
enum smr_rc review_finding_import(const json_t *raw, const struct checkpoint *c,
				  const char *source, json_t **out, struct smr_err *err);

#endif
