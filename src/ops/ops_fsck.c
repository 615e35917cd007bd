/*
 * ops_fsck.c -- verify the integrity of stored history: every checkpoint's
 * hash is recomputed from its fields and parent link, every parent link must
 * (both parents of a merge) resolve, and HEAD must be a checkpoint of its
 * own Space.  The history is shared (docs/storage.md): a whole-database
 * check reads each checkpoint once, however many Spaces hold it, so its
 * time follows what is stored, not Spaces times history.
 */
#include "domain/checkpoint.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct fsck_state {
	const char *space;   /* the Space checked; NULL: each checkpoint's own */
	size_t checked;
	json_t *problems;
};

static void problem(struct fsck_state *fs, const char *space, const char *hash,
		    const char *what)
{
	json_array_append_new(fs->problems,
			      json_pack("{s:s, s:s?, s:s}", "space", space ? space : "?",
					"commit_hash", hash, "problem", what));
}

static int lists_well_formed(const struct checkpoint *c)
{
	for (size_t i = 0; checkpoint_list_fields[i]; i++)
		if (!json_is_array(checkpoint_list(c, checkpoint_list_fields[i])))
			return 0;
	return json_is_object(c->metadata);
}

static int check_one(const struct checkpoint *c, int parent_missing, void *ctx)
{
	struct fsck_state *fs = ctx;
	const char *space = fs->space ? fs->space : c->space;
	char hash[HASH_HEX_LEN + 1];

	fs->checked++;
	if (parent_missing)
		problem(fs, space, c->hash, "a parent link (first or second parent) points at a"
			" checkpoint that does not exist");
	if (!lists_well_formed(c))
		problem(fs, space, c->hash,
			"stored fields are not well-formed JSON of the right type");
	checkpoint_compute_hash(c, hash);
	if (!c->hash || strcmp(hash, c->hash))
		problem(fs, space, c->hash,
			"hash does not match the checkpoint's content and parent");
	return 0;
}

/* HEAD of sp is a checkpoint sp holds; a failed read is the check's error (*err). */
static enum smr_rc check_head(struct ops_ctx *ctx, const struct space *sp,
			      struct fsck_state *fs, struct smr_err *err)
{
	struct checkpoint head = { 0 };
	struct smr_err why = SMR_ERR_INIT;
	enum smr_rc rc;

	if (!sp->head)
		return SMR_OK;
	rc = store_checkpoint_get(ctx->st, sp->id, sp->head, &head, &why);
	checkpoint_release(&head);
	if (rc == SMR_ENOTFOUND) {
		problem(fs, sp->name, sp->head, "HEAD is not a checkpoint of this space");
		return SMR_OK;
	}
	if (rc && err)
		*err = why;
	return rc;
}

enum smr_rc ops_fsck(struct ops_ctx *ctx, const char *space, json_t **report,
		     struct smr_err *err)
{
	struct fsck_state fs = { NULL, 0, json_array() };
	struct space *spaces = NULL;
	size_t n = 0;
	enum smr_rc rc;

	if (space) {
		spaces = xcalloc(1, sizeof(*spaces));
		rc = store_space_get(ctx->st, space, spaces, err);
		n = rc ? 0 : 1;
		fs.space = rc ? NULL : spaces->name;
		if (!rc)
			rc = store_checkpoint_scan(ctx->st, spaces->id, check_one, &fs, err);
	} else {
		rc = ops_space_list(ctx, &spaces, &n, err);
		if (!rc)
			rc = store_checkpoint_scan(ctx->st, NULL, check_one, &fs, err);
	}
	for (size_t i = 0; !rc && i < n; i++)
		rc = check_head(ctx, &spaces[i], &fs, err);
	if (!rc)
		*report = json_pack("{s:b, s:I, s:I, s:O}", "ok", json_array_size(fs.problems) == 0,
				    "spaces", (json_int_t)n, "checkpoints", (json_int_t)fs.checked,
				    "problems", fs.problems);
	spaces_free(spaces, n);
	json_decref(fs.problems);
	return rc;
}
