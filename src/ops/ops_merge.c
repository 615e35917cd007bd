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
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MERGE_RETRIES 8   /* another writer moved HEAD while we merged: start again */

/* The newest checkpoint in both sets (ties: the greater hash); borrowed, NULL if none. */
static const char *nearest_common(const json_t *ours, const json_t *theirs)
{
	const char *hash, *best = NULL, *best_at = NULL, *at;
	json_t *v;

	json_object_foreach((json_t *)ours, hash, v) {
		if (!json_object_get(theirs, hash))
			continue;
		at = json_string_value(v);
		if (!best || strcmp(at, best_at) > 0 || (!strcmp(at, best_at) && strcmp(hash, best) > 0)) {
			best = hash;
			best_at = at;
		}
	}
	return best;
}

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

json_int_t ops_only_in(const json_t *a, const json_t *b)
{
	const char *hash;
	json_t *v;
	json_int_t n = 0;

	json_object_foreach((json_t *)a, hash, v)
		n += !json_object_get(b, hash);
	return n;
}

/*
 * A dry run's document: status as a merge would have it (or "conflict"),
 * with ahead (REF's checkpoints HEAD lacks) and behind (HEAD's that REF
 * lacks); takes result's reference and returns a new one.
 */
static json_t *dry_result(json_t *result, const json_t *ours, const json_t *theirs)
{
	json_object_set_new(result, "dry_run", json_true());
	json_object_set_new(result, "ahead", json_integer(ops_only_in(theirs, ours)));
	json_object_set_new(result, "behind", json_integer(ops_only_in(ours, theirs)));
	return result;
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
	json_t *ours = json_object(), *theirs = json_object();
	struct checkpoint head = { 0 };
	const char *base;
	enum smr_rc rc = SMR_OK;

	if (j->sp->head)
		rc = store_checkpoint_ancestry(ctx->st, j->sp->id, j->sp->head, ours, err);
	if (!rc)
		rc = store_checkpoint_ancestry(ctx->st, j->src_id, j->theirs->hash, theirs, err);
	if (!rc && !j->sp->head) {
		rc = fast_forward(ctx, j, result, err);
		goto out;
	}
	if (!rc && json_object_get(ours, j->theirs->hash)) {
		rc = store_checkpoint_get(ctx->st, j->sp->id, j->sp->head, &head, err);
		if (!rc)
			*result = json_pack("{s:s, s:o}", "status", "up-to-date", "checkpoint",
					    checkpoint_to_json(&head));
	} else if (!rc && json_object_get(theirs, j->sp->head)) {
		rc = fast_forward(ctx, j, result, err);
	} else if (!rc) {
		base = nearest_common(ours, theirs);
		if (!base)
			rc = smr_errf(err, SMR_EUNPROC,
				      "%.12s shares no history with space '%s': nothing to merge"
				      " from (fork a Space to start a line you can merge back)",
				      j->theirs->hash, j->sp->name);
		if (!rc)
			rc = store_checkpoint_get(ctx->st, j->sp->id, j->sp->head, &head, err);
		if (!rc)
			rc = write_merge(ctx, j, &head, base, result, err);
	}
out:
	if (j->dry_run && *result)
		*result = dry_result(*result, ours, theirs);
	/* a dry run's conflicts are its answer, not a failure */
	if (j->dry_run && rc == SMR_ECONFLICT && *result)
		rc = SMR_OK;
	checkpoint_release(&head);
	json_decref(ours);
	json_decref(theirs);
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

/* The ancestry of c (itself included) into set, read in c's Space. */
static enum smr_rc ancestry_of(struct ops_ctx *ctx, const struct checkpoint *c, json_t *set,
			       struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = store_space_get(ctx->st, c->space, &sp, err);

	if (!rc)
		rc = store_checkpoint_ancestry(ctx->st, sp.id, c->hash, set, err);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_merge_base(struct ops_ctx *ctx, const char *ref_a, const char *ref_b,
			   json_t **out, struct smr_err *err)
{
	struct checkpoint a = { 0 }, b = { 0 };
	json_t *sa = json_object(), *sb = json_object();
	const char *base;
	enum smr_rc rc = ops_resolve(ctx, ref_a, &a, err);

	if (!rc)
		rc = ops_resolve(ctx, ref_b, &b, err);
	if (!rc)
		rc = ancestry_of(ctx, &a, sa, err);
	if (!rc)
		rc = ancestry_of(ctx, &b, sb, err);
	if (!rc) {
		base = nearest_common(sa, sb);
		*out = json_pack("{s:s, s:s, s:s?}", "a", a.hash, "b", b.hash, "base", base);
	}
	checkpoint_release(&a);
	checkpoint_release(&b);
	json_decref(sa);
	json_decref(sb);
	return rc;
}
