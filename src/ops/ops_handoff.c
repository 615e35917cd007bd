/*
 * ops_handoff.c -- hand-off notes: a person leaves a note for the next
 * agent on a Space ("do not drop the foreign keys"), on HEAD or on a past
 * checkpoint restored in the same call, and HEAD reads carry the newest
 * note with whether it was left on the HEAD they show.  A note is a row
 * beside the history (struct handoff), never part of a checkpoint, so no
 * hash changes.  ops_handoff_text renders HEAD and that note as the text
 * an agent starts from (MCP's "handoff" prompt).
 */
#include "domain/checkpoint.h"
#include "domain/markdown.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

json_t *ops_handoff_json(const struct handoff *h, const char *head_hash)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:b}", "note", h->note, "checkpoint", h->hash,
			 "author", h->author, "created_at", h->created_at, "on_head",
			 head_hash && !strcmp(head_hash, h->hash));
}

/* An empty, blank or over-long note changes nothing. */
static enum smr_rc check_note(const char *note, struct smr_err *err)
{
	size_t len = note ? strlen(note) : 0;

	if (len > OPS_HANDOFF_NOTE_MAX)
		return smr_errf(err, SMR_ETOOBIG, "the hand-off note is %zu bytes; at most %d are "
				"kept: shorten it", len, OPS_HANDOFF_NOTE_MAX);
	if (!note || note[strspn(note, " \t\r\n")] == '\0')
		return smr_errf(err, SMR_EUNPROC, "the hand-off note is empty: write what the "
				"next agent must know");
	return SMR_OK;
}

/*
 * The checkpoint the note is left on: ref restored onto HEAD (restore),
 * else HEAD, which ref (when given) must still be.
 */
static enum smr_rc handoff_target(struct ops_ctx *ctx, const struct space *sp, const char *ref,
				  int restore, const char *author, struct checkpoint *out,
				  struct smr_err *err)
{
	struct checkpoint want = { 0 };
	enum smr_rc rc;

	if (restore) {
		if (!ref)
			return smr_errf(err, SMR_EUSAGE, "restore needs the checkpoint to restore");
		return ops_restore(ctx, sp->name, ref, author, out, err);
	}
	rc = ops_head(ctx, sp->name, out, err);
	if (rc || !ref)
		return rc;
	rc = ops_resolve_in(ctx, sp->name, ref, &want, err);
	if (!rc && strcmp(want.hash, out->hash))
		rc = smr_errf(err, SMR_ECONFLICT, "checkpoint %.12s is not HEAD of '%s' (HEAD is "
			      "%.12s): restore it with the note, or leave the note on HEAD",
			      want.hash, sp->name, out->hash);
	checkpoint_release(&want);
	return rc;
}

enum smr_rc ops_handoff(struct ops_ctx *ctx, const char *space, const char *ref,
			const char *note, int restore, const char *author, json_t **result,
			struct smr_err *err)
{
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	struct handoff h = { 0 };
	const char *who, *tool;
	char now[32];
	enum smr_rc rc = check_note(note, err);

	if (!rc)
		rc = store_space_get(ctx->st, space, &sp, err);
	ops_author(ctx, author, &who, &tool);
	if (!who || !*who)
		who = ops_actor(ctx);
	if (!rc)
		rc = handoff_target(ctx, &sp, ref, restore, author, &c, err);
	if (!rc) {
		ctx->now(now);
		h = (struct handoff){ 0, sp.id, c.hash, (char *)note, (char *)(who ? who : ""),
				      now };
		rc = store_handoff_put(ctx->st, &h, err);
	}
	if (!rc)
		*result = json_pack("{s:o, s:o, s:b}", "handoff", ops_handoff_json(&h, c.hash),
				    "checkpoint", checkpoint_to_json(&c), "restored", restore);
	checkpoint_release(&c);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_handoff_latest(struct ops_ctx *ctx, const char *space_name,
			       struct handoff *out, struct smr_err *err)
{
	return store_handoff_latest(ctx->st, space_name, out, err);
}

/* What the reader is given and asked: the same words on every transport. */
static void add_lead_in(struct buf *b, const json_t *doc)
{
	buf_addf(b, "You are picking up work kept in Smriti, in the Space '%s'. Below is its "
		 "current state: HEAD, Checkpoint %.12s, the state of the work someone chose "
		 "to keep. Treat it as established context.",
		 json_string_value(json_object_get(doc, "space")),
		 json_string_value(json_object_get(doc, "commit_hash")));
	if (json_object_get(doc, "handoff"))
		buf_adds(b, " Read the hand-off note first: it is what the last person wanted "
			 "the next agent to know.");
	buf_adds(b, " When you reach a point worth keeping, save it as a new Checkpoint on "
		 "this one.\n\n");
}

enum smr_rc ops_handoff_text(struct ops_ctx *ctx, const char *space, json_t **result,
			     struct smr_err *err)
{
	struct buf b = BUF_INIT(0);
	json_t *doc = NULL;
	enum smr_rc rc = ops_head_doc(ctx, space, &doc, err);
	char *text;

	if (rc)
		return rc;
	add_lead_in(&b, doc);
	checkpoint_markdown(&b, doc, 1);
	text = buf_detach(&b, NULL);
	*result = json_pack("{s:O, s:O, s:s}", "space", json_object_get(doc, "space"),
			    "commit_hash", json_object_get(doc, "commit_hash"), "text", text);
	free(text);
	json_decref(doc);
	return SMR_OK;
}
