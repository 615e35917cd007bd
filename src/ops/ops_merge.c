/*
 * ops_merge.c -- merging another line of work into a Space (git merge):
 * find the nearest common ancestor of HEAD and REF, then say "up to date"
 * (REF is already in HEAD's history), fast-forward (HEAD is in REF's
 * history), or write a checkpoint with two parents whose state is the
 * three-way merge of domain/merge.c and whose title is its own (the one
 * given, else "Merge REF into SPACE").  Conflicts write nothing.  The merged
 * state goes through the deterministic review, and its contradictions come
 * back with the result: a merge is where two lines of reasoning meet.
 * A dry run does all of it but the write, and counts how far each line
 * went since they parted (git's ahead/behind), so a fork can show
 * whether it would merge cleanly before anyone merges it.
 */
#include "domain/checkpoint.h"
#include "domain/merge.h"
#include "domain/review.h"
#include "ops/ancestry.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MERGE_RETRIES 8   /* another writer moved HEAD while we merged: start again */

/* The contradictions the deterministic review finds in c; new reference. */
static json_t *contradictions(const struct checkpoint *c)
{
	json_t *all = review_deterministic(c, NULL), *out = json_array(), *f;
	size_t i;

	json_array_foreach(all, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "type")), "contradiction"))
			json_array_append(out, f);
	json_decref(all);
	return out;
}

struct merge_job {
	const struct space *sp;            /* the Space receiving the merge */
	const struct checkpoint *theirs;   /* REF */
	const char *src_id;                /* REF's Space */
	const json_t *resolution;
	const char *author;                /* as claimed, or NULL (ops_writer decides) */
	const char *title;                 /* the merge's own, or NULL for merge_title() */
	const char *ref_name;              /* what the line merged in is called */
	int dry_run;                       /* compute everything, write nothing */
};

/*
 * A dry run's document: status as a merge would have it (or "conflict"),
 * with ahead (REF's checkpoints HEAD lacks) and behind (HEAD's that REF
 * lacks), added to result.
 */
static enum smr_rc dry_result(struct ops_ctx *ctx, json_t *result, struct history *ours,
			      struct history *theirs, struct smr_err *err)
{
	json_int_t ahead = 0, behind = 0;
	enum smr_rc rc = ops_history_only_in(ctx, theirs, ours, &ahead, err);

	if (!rc)
		rc = ops_history_only_in(ctx, ours, theirs, &behind, err);
	json_object_set_new(result, "dry_run", json_true());
	json_object_set_new(result, "ahead", json_integer(ahead));
	json_object_set_new(result, "behind", json_integer(behind));
	return rc;
}

/* Writes the three-way merge of head and theirs from base; *result gets the document. */
static enum smr_rc write_merge(struct ops_ctx *ctx, const struct merge_job *j,
			       const struct checkpoint *head, const char *base_hash,
			       json_t **result, struct smr_err *err)
{
	struct checkpoint base = { 0 }, c, stored = { 0 };
	json_t *conflicts = NULL;
	char now[32];
	enum smr_rc rc = store_checkpoint_get(ctx->st, j->sp->id, base_hash, &base, err);

	checkpoint_init(&c);
	/* the merge's own message, never a side's: set first, so the limits count it */
	c.title = j->title ? xstrdup(j->title) : merge_title(j->ref_name, j->sp->name);
	if (!rc)
		rc = checkpoint_merge3(&base, head, j->theirs, j->resolution, &c, &conflicts, err);
	if (rc == SMR_ECONFLICT)
		*result = json_pack("{s:s, s:s, s:O}", "status", "conflict", "base", base_hash,
				    "conflicts", conflicts);
	/* the title a settled merge would get, for a preview to offer */
	if (rc == SMR_ECONFLICT && j->dry_run)
		json_object_set_new(*result, "title", json_string(c.title));
	if (!rc && j->dry_run)
		*result = json_pack("{s:s, s:s, s:o, s:o, s:s}", "status", "merged", "base",
				    base_hash, "checkpoint", checkpoint_to_json(&c),
				    "contradictions", contradictions(&c), "title", c.title);
	if (!rc && !j->dry_run) {
		json_object_set_new(c.metadata, "merge_base", json_string(base_hash));
		c.parent_hash = xstrdup(head->hash);
		c.merge_parent_hash = xstrdup(j->theirs->hash);
		c.space = xstrdup(j->sp->name);
		free(c.author);
		c.author = j->author ? xstrdup(j->author) : NULL;
		ops_set_author(ctx, &c);
		ctx->now(now);
		c.created_at = xstrdup(now);
		checkpoint_seal(&c);
		rc = store_checkpoint_merge(ctx->st, j->sp->id, &c, j->src_id, err);
	}
	if (!rc && !j->dry_run)
		rc = store_checkpoint_get(ctx->st, j->sp->id, c.hash, &stored, err);
	if (!rc && !j->dry_run)
		*result = json_pack("{s:s, s:s, s:o, s:o}", "status", "merged", "base", base_hash,
				    "checkpoint", checkpoint_to_json(&stored),
				    "contradictions", contradictions(&stored));
	json_decref(conflicts);
	checkpoint_release(&base);
	checkpoint_release(&stored);
	checkpoint_release(&c);
	return rc;
}

/* Moves HEAD up to theirs, which descends from it. */
static enum smr_rc fast_forward(struct ops_ctx *ctx, const struct merge_job *j,
				json_t **result, struct smr_err *err)
{
	struct checkpoint stored = { 0 };
	enum smr_rc rc = j->dry_run ? SMR_OK :
		store_head_fast_forward(ctx->st, j->sp->id, j->sp->head, j->src_id,
					j->theirs->hash, ops_writer(ctx, j->author), err);

	/* a dry run moved nothing: REF is still only in its own Space */
	if (!rc)
		rc = store_checkpoint_get(ctx->st, j->dry_run ? j->src_id : j->sp->id,
					  j->theirs->hash, &stored, err);
	if (!rc)
		*result = json_pack("{s:s, s:s, s:o, s:o}", "status", "fast-forward", "base",
				    j->sp->head ? j->sp->head : "", "checkpoint",
				    checkpoint_to_json(&stored), "contradictions",
				    contradictions(&stored));
	checkpoint_release(&stored);
	return rc;
}

/* One attempt against the HEAD j->sp holds now. */
static enum smr_rc merge_once(struct ops_ctx *ctx, const struct merge_job *j, json_t **result,
			      struct smr_err *err)
{
	struct history ours = { 0 }, theirs = { 0 };
	struct checkpoint head = { 0 };
	char *base = NULL;
	int held = 0;
	enum smr_rc rc = SMR_OK;

	if (j->sp->head)
		rc = ops_history_read(ctx, j->sp->id, j->sp->head, &ours, err);
	if (!rc)
		rc = ops_history_read(ctx, j->src_id, j->theirs->hash, &theirs, err);
	if (!rc && !j->sp->head) {
		rc = fast_forward(ctx, j, result, err);
		goto out;
	}
	if (!rc)
		rc = ops_history_holds(ctx, &ours, &theirs, &held, err);
	if (!rc && held) {
		rc = store_checkpoint_get(ctx->st, j->sp->id, j->sp->head, &head, err);
		if (!rc)
			*result = json_pack("{s:s, s:o}", "status", "up-to-date", "checkpoint",
					    checkpoint_to_json(&head));
		goto out;
	}
	if (!rc)
		rc = ops_history_holds(ctx, &theirs, &ours, &held, err);
	if (!rc && held) {
		rc = fast_forward(ctx, j, result, err);
		goto out;
	}
	if (!rc)
		rc = ops_history_base(ctx, &ours, &theirs, &base, err);
	if (!rc && !base)
		rc = smr_errf(err, SMR_EUNPROC,
			      "%.12s shares no history with space '%s': nothing to merge"
			      " from (fork a Space to start a line you can merge back)",
			      j->theirs->hash, j->sp->name);
	if (!rc)
		rc = store_checkpoint_get(ctx->st, j->sp->id, j->sp->head, &head, err);
	if (!rc)
		rc = write_merge(ctx, j, &head, base, result, err);
out:
	if (j->dry_run && *result) {
		enum smr_rc counted = dry_result(ctx, *result, &ours, &theirs, err);

		if (counted) {
			json_decref(*result);
			*result = NULL;
			rc = counted;
		} else if (rc == SMR_ECONFLICT) {
			rc = SMR_OK;   /* a dry run's conflicts are its answer, not a failure */
		}
	}
	free(base);
	checkpoint_release(&head);
	ops_history_release(&ours);
	ops_history_release(&theirs);
	return rc;
}

/* A title given must say something: an empty one is refused, not stored. */
static enum smr_rc check_title(const char *title, struct smr_err *err)
{
	if (!title || title[strspn(title, " \t\r\n")])
		return SMR_OK;
	return smr_errf(err, SMR_EINVAL,
			"a merge title cannot be empty: leave it out for \"Merge REF into SPACE\"");
}

/* A merge settled against a preview refuses a HEAD that moved since (its HEAD is not the one seen). */
static enum smr_rc check_head(const struct merge_req *req, const struct space *sp,
			      struct smr_err *err)
{
	const char *head = sp->head ? sp->head : "";

	if (!req->expect_head || !strcmp(req->expect_head, head))
		return SMR_OK;
	return smr_errf(err, SMR_ECONFLICT,
			"HEAD of Space '%s' moved to %.12s since %.12s was seen: nothing was"
			" written; look at the merge again", sp->name, *head ? head : "(none)",
			*req->expect_head ? req->expect_head : "(none)");
}

static enum smr_rc merge_done(struct checkpoint *theirs, struct space *sp, struct space *src,
			      enum smr_rc rc)
{
	checkpoint_release(theirs);
	space_release(sp);
	space_release(src);
	return rc;
}

enum smr_rc ops_merge(struct ops_ctx *ctx, const struct merge_req *req, json_t **result,
		      struct smr_err *err)
{
	struct checkpoint theirs = { 0 };
	struct space sp = { 0 }, src = { 0 };
	struct merge_job j = { &sp, &theirs, NULL, req->resolution, req->author, req->title,
			       req->ref, req->dry_run };
	enum smr_rc rc = check_title(req->title, err);

	if (!rc)
		rc = ops_resolve(ctx, req->ref, &theirs, err);
	if (!rc)
		rc = store_space_get(ctx->st, theirs.space, &src, err);
	j.src_id = src.id;
	/* a Space given by its id is called by its name */
	if (!rc && !strcmp(req->ref, src.id))
		j.ref_name = src.name;
	for (int i = 0; !rc; i++) {
		space_release(&sp);
		rc = store_space_get(ctx->st, req->space, &sp, err);
		if (!rc && check_head(req, &sp, err))
			return merge_done(&theirs, &sp, &src, SMR_ECONFLICT);
		if (!rc)
			rc = merge_once(ctx, &j, result, err);
		/* a stale HEAD (no result document) is retried; a conflict of content is not */
		if (rc != SMR_ECONFLICT || *result || i + 1 == MERGE_RETRIES)
			break;
		rc = SMR_OK;
	}
	return merge_done(&theirs, &sp, &src, rc);
}

/* The history of c, read in c's Space. */
static enum smr_rc history_of(struct ops_ctx *ctx, const struct checkpoint *c, struct history *h,
			      struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = store_space_get(ctx->st, c->space, &sp, err);

	if (!rc)
		rc = ops_history_read(ctx, sp.id, c->hash, h, err);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_merge_base(struct ops_ctx *ctx, const char *ref_a, const char *ref_b,
			   json_t **out, struct smr_err *err)
{
	struct checkpoint a = { 0 }, b = { 0 };
	struct history ha = { 0 }, hb = { 0 };
	char *base = NULL;
	enum smr_rc rc = ops_resolve(ctx, ref_a, &a, err);

	if (!rc)
		rc = ops_resolve(ctx, ref_b, &b, err);
	if (!rc)
		rc = history_of(ctx, &a, &ha, err);
	if (!rc)
		rc = history_of(ctx, &b, &hb, err);
	if (!rc)
		rc = ops_history_base(ctx, &ha, &hb, &base, err);
	if (!rc)
		*out = json_pack("{s:s, s:s, s:s?}", "a", a.hash, "b", b.hash, "base", base);
	free(base);
	ops_history_release(&ha);
	ops_history_release(&hb);
	checkpoint_release(&a);
	checkpoint_release(&b);
	return rc;
}
