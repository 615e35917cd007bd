/*
 * draft.h -- Draft with AI, the pure part: the extraction prompt, the JSON
 * schema a model is asked to fill, and the check of what comes back.
 *
 * A draft is a proposed Checkpoint that is never saved here: the person
 * edits it and saves it through the normal checkpoint write.  Its prompt
 * holds only the session's own turns after its mount boundary and tells the
 * model to extract only what is explicitly present; no earlier Checkpoint
 * is ever part of it (its items would come back as if the conversation
 * had decided them again).  Pure code: no store, no clock, no provider.
 */
#ifndef SMRITI_DRAFT_H
#define SMRITI_DRAFT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/model.h"
#include "util/err.h"

/* The system text of every extraction request (the instruction). */
extern const char draft_instruction[];

/* Name of the schema / forced tool the provider is asked to fill. */
#define DRAFT_SCHEMA_NAME "checkpoint_draft"

/* At most this many items per list in a draft reply. */
#define DRAFT_MAX_ITEMS 500

struct draft_prompt_in {
	const struct turn *turns;   /* the session's turns, oldest first */
	size_t n_turns;
	int64_t after_seq;          /* the mount boundary: only turns with seq > after_seq */
	int64_t upto_seq;           /* and seq <= upto_seq; < 0: no upper bound */
	size_t budget_chars;        /* characters of transcript; 0: unlimited */
};

struct draft_prompt {
	char *system;               /* draft_instruction, copied */
	char *user;                 /* the transcript of the turns, with a closing request */
	int64_t first_seq;          /* sequence numbers of the first and last turn included */
	int64_t last_seq;
	size_t n_turns;             /* turns included */
	size_t n_dropped;           /* older turns left out for the budget */
	int cut;                    /* 1 when the one turn kept was cut to fit the budget */
};

/*
 * Builds the extraction prompt from the turns of in that lie in
 * (after_seq, upto_seq].  Over budget the oldest turns are left out first;
 * if even the newest alone is over, it is cut (marked).  SMR_EUNPROC when
 * no turn is in range.  out is overwritten; release it either way.
 */
enum smr_rc draft_prompt_build(const struct draft_prompt_in *in, struct draft_prompt *out,
			       struct smr_err *err);
void draft_prompt_release(struct draft_prompt *p);

/*
 * The user message of a repair request after a reply that could not be
 * used: what was wrong (problem) and the request to answer again with one
 * JSON object of the schema.  Caller free()s.
 */
char *draft_repair_note(const char *problem);

/* The JSON Schema of a draft reply (all keys required, strict); new reference. */
json_t *draft_schema(void);

/*
 * Checks a model's reply against the checkpoint schema: an object with
 * exactly the keys title, summary, decisions, assumptions, tasks,
 * open_questions, entities, artifacts (title and summary strings or null),
 * every list valid for checkpoint_from_json and at most DRAFT_MAX_ITEMS
 * long.  On success *out is a new reference to the normalised draft:
 * {title, summary, decisions, assumptions, tasks, open_questions, entities,
 * artifacts, metadata: {}}, empty optional strings of entities left out.
 * SMR_EUNPROC with err saying what is wrong otherwise (*out NULL).
 */
enum smr_rc draft_validate(const json_t *reply, json_t **out, struct smr_err *err);

struct draft_provenance {
	const char *session_id;
	int64_t first_seq, last_seq;
	const char *provider;
	const char *model;
	const char *job_id;
};

/*
 * Records where draft came from in draft.metadata.draft: {session_id,
 * turn_range: {first_seq, last_seq}, provider, model, job_id}.
 */
void draft_set_provenance(json_t *draft, const struct draft_provenance *p);

/*
 * Saving a draft is a write on top of HEAD (draft_save.c): the draft's
 * items are matched to HEAD's by their key (text; name for entities and
 * artifacts, as a patch names them), and each gets a status:
 *
 *   "new"       HEAD has no such item: added
 *   "in_head"   HEAD has it: not repeated (an open task HEAD has done stays done)
 *   "done"      a task HEAD has open that the draft reports done: marked done
 *   "replaces"  an artifact HEAD has under that name with another content
 *               or kind: the draft's takes its place
 *   "repeated"  the draft listed it already: taken once
 */
struct draft_choice {
	int replace;                /* 1: HEAD's items are all dropped (the draft exactly) */
	const json_t *reject;       /* {field: [key...]}: draft items not taken; may be NULL */
	const json_t *drop;         /* {field: [ref...]}: HEAD items dropped (patch.h refs); may be NULL */
	const char *title;          /* instead of the draft's; NULL: the draft's (if any) */
	const char *summary;        /* likewise */
};

/*
 * {"decisions": [{"item": {...}, "status": "new"}, ...], ...}: every list
 * field of draft, each item with its status against base (NULL: an empty
 * Space).  New reference.
 */
json_t *draft_review(const struct checkpoint *base, const json_t *draft);

/*
 * The patch (domain/patch.h) that saving draft on base makes, into *out (a
 * new reference): without replace, add the items "new" and "replaces",
 * mark the "done" tasks done (unless the choice drops them), drop what
 * ch->drop names; with replace, drop every item of base and add the
 * draft's (each once).  Items ch->reject names are not taken.  Title and
 * summary are ch's, else the draft's when it has them (else base's stay);
 * metadata is the draft's (its provenance).  SMR_EINVAL for a malformed
 * reject, SMR_EUNPROC when it names no item of the draft or when nothing
 * would change.
 */
enum smr_rc draft_patch(const struct checkpoint *base, const json_t *draft,
			const struct draft_choice *ch, json_t **out, struct smr_err *err);

/*
 * What a save changed, as patch_describe() reads it ({"decisions":
 * {"added": 1, "dropped": 2}, "tasks": {"done": 1}, "title": true}),
 * counted from the difference of base (NULL: empty) and next: the net
 * change, where a replacing patch drops and adds again the items the draft
 * kept.  New reference.
 */
json_t *draft_changes(const struct checkpoint *base, const struct checkpoint *next);

#endif
