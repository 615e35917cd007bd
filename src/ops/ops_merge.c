/*
 * ops_merge.c -- merging another line of work into a Space (git merge):
 * find the nearest common ancestor of HEAD and REF, then say "up to date"
 * (REF is already in HEAD's history), fast-forward (HEAD is in REF's
 * history), or write a checkpoint with two parents whose state is the
 * three-way merge of domain/merge.c.  Conflicts write nothing.  The merged
 * state goes through the deterministic review, and its contradictions come
 * back with the result: a merge is where two lines of reasoning meet.
 */
#include "domain/checkpoint.h"
#include "domain/merge.h"
#include "domain/review.h"
#include "ops/auth.h"
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
	const char *author;
};

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
	if (!rc)
		rc = checkpoint_merge3(&base, head, j->theirs, j->resolution, &c, &conflicts, err);
	if (rc == SMR_ECONFLICT)
		*result = json_pack("{s:s, s:s, s:O}", "status", "conflict", "base", base_hash,
				    "conflicts", conflicts);
	if (!rc) {
		json_object_set_new(c.metadata, "merge_base", json_string(base_hash));
		c.parent_hash = xstrdup(head->hash);
		c.merge_parent_hash = xstrdup(j->theirs->hash);
		c.space = xstrdup(j->sp->name);
		free(c.author);
		c.author = xstrdup(j->author ? j->author : "");
		ops_set_author(ctx, &c);
		ctx->now(now);
		c.created_at = xstrdup(now);
		checkpoint_seal(&c);
		rc = store_checkpoint_merge(ctx->st, j->sp->id, &c, j->src_id, err);
	}
	if (!rc)
		rc = store_checkpoint_get(ctx->st, j->sp->id, c.hash, &stored, err);
	if (!rc)
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
	enum smr_rc rc = store_head_fast_forward(ctx->st, j->sp->id, j->sp->head, j->src_id,
						 j->theirs->hash, ops_actor(ctx), err);

	if (!rc)
		rc = store_checkpoint_get(ctx->st, j->sp->id, j->theirs->hash, &stored, err);
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

	if (!j->sp->head) {
		json_decref(ours);
		json_decref(theirs);
		return fast_forward(ctx, j, result, err);
	}
	rc = store_checkpoint_ancestry(ctx->st, j->sp->id, j->sp->head, ours, err);
	if (!rc)
		rc = store_checkpoint_ancestry(ctx->st, j->src_id, j->theirs->hash, theirs, err);
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
	checkpoint_release(&head);
	json_decref(ours);
	json_decref(theirs);
	return rc;
}

enum smr_rc ops_merge(struct ops_ctx *ctx, const char *space, const char *ref,
		      const json_t *resolution, const char *author, json_t **result,
		      struct smr_err *err)
{
	struct checkpoint theirs = { 0 };
	struct space sp = { 0 }, src = { 0 };
	struct merge_job j = { &sp, &theirs, NULL, resolution, author };
	enum smr_rc rc = ops_resolve(ctx, ref, &theirs, err);

	if (!rc)
		rc = store_space_get(ctx->st, theirs.space, &src, err);
	j.src_id = src.id;
	for (int i = 0; !rc; i++) {
		space_release(&sp);
		rc = store_space_get(ctx->st, space, &sp, err);
		if (!rc)
			rc = merge_once(ctx, &j, result, err);
		/* a stale HEAD (no result document) is retried; a conflict of content is not */
		if (rc != SMR_ECONFLICT || *result || i + 1 == MERGE_RETRIES)
			break;
		rc = SMR_OK;
	}
	checkpoint_release(&theirs);
	space_release(&sp);
	space_release(&src);
	return rc;
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
