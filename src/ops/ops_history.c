/*
 * ops_history.c -- operations on a Space's past: its reflog (every move of
 * HEAD, with who and why) and the garbage collection that finally removes
 * soft-deleted Spaces.
 */
#include "domain/ref.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

enum smr_rc ops_reflog(struct ops_ctx *ctx, const char *space, size_t limit,
		       struct reflog_entry **out, size_t *n, struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_find_readable(ctx, space, &sp, err);

	*out = NULL;
	*n = 0;
	if (!rc)
		rc = store_reflog_list(ctx->st, sp.id, NULL, limit, out, n, err);
	space_release(&sp);
	return rc;
}

json_t *ops_reflog_json(const struct reflog_entry *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack(
			"{s:I, s:s, s:s, s:o, s:o, s:s, s:s, s:s, s:s}",
			"index", (json_int_t)i, "space_id", v[i].space_id,
			"space", v[i].space_name,
			"old", v[i].old_hash ? json_string(v[i].old_hash) : json_null(),
			"new", v[i].new_hash ? json_string(v[i].new_hash) : json_null(),
			"action", v[i].action, "actor", v[i].actor, "reason", v[i].reason,
			"created_at", v[i].created_at));
	return a;
}

/* {"name", "id", "deleted_at", "head"} of each deleted Space at or before cutoff (NULL: all). */
static json_t *deleted_json(const struct space *v, size_t n, const char *cutoff)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		if (cutoff && strcmp(v[i].deleted_at, cutoff) > 0)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o}", "name", v[i].name,
						   "id", v[i].id, "deleted_at", v[i].deleted_at,
						   "head", v[i].head ? json_string(v[i].head)
								     : json_null()));
	}
	return a;
}

/* The reflog expiry date of expire (see ops_gc) into out; *never set when entries never expire. */
static enum smr_rc expiry(const char *expire, int prune, const char *now, char out[32],
			  int *never, struct smr_err *err)
{
	if (expire && !prune)
		return smr_errf(err, SMR_EUSAGE, "a reflog expiry date only applies with prune"
				" (gc --prune --expire=%s)", expire);
	*never = expire && !strcmp(expire, "never");
	if (*never)
		return SMR_OK;
	return ref_parse_date(expire ? expire : OPS_REFLOG_EXPIRE, now, out, err);
}

static void report_counts(json_t *r, const struct gc_counts *c)
{
	json_object_set_new(r, "expired_reflog", json_integer((json_int_t)c->reflog));
	json_object_set_new(r, "unreached_checkpoints", json_integer((json_int_t)c->unreached));
	json_object_set_new(r, "unused_chunks", json_integer((json_int_t)c->chunks));
	json_object_set_new(r, "unused_items", json_integer((json_int_t)c->items));
}

enum smr_rc ops_gc(struct ops_ctx *ctx, int prune, const char *before, const char *expire,
		   json_t **report, struct smr_err *err)
{
	struct space *v = NULL;
	struct gc_counts c = { 0 };
	size_t n = 0;
	char now[32], cutoff[32], expiry_at[32];
	int never = 1;
	enum smr_rc rc = SMR_OK;

	ctx->now(now);
	if (before)
		rc = ref_parse_date(before, now, cutoff, err);
	if (!rc)
		rc = expiry(expire, prune, now, expiry_at, &never, err);
	if (!rc)
		rc = store_space_list_deleted(ctx->st, &v, &n, err);
	if (!rc && prune)
		rc = store_gc_prune(ctx->st, before ? cutoff : NULL, never ? NULL : expiry_at, &c,
				    err);
	if (!rc) {
		*report = json_pack("{s:o, s:b, s:I}", "deleted",
				    deleted_json(v, n, before ? cutoff : NULL), "pruned", prune,
				    "pruned_spaces", (json_int_t)c.spaces);
		if (prune)
			report_counts(*report, &c);
	}
	spaces_free(v, n);
	return rc;
}
