/*
 * api.c -- the JSON face of the core operations (see api.h): parameter
 * checking and the operation table for Spaces and Checkpoints.
 */
#include "ops/api.h"
#include "domain/checkpoint.h"
#include "domain/graph.h"
#include "domain/item_texts.h"
#include "domain/patch.h"
#include "ops/auth.h"
#include "ops/changes.h"
#include "ops/context.h"
#include "ops/decl.h"

#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

const char *api_text(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

long long api_number(const json_t *params, const char *key, long long dflt)
{
	const json_t *v = json_object_get(params, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

int api_flag(const json_t *params, const char *key)
{
	return json_is_true(json_object_get(params, key));
}

enum smr_rc api_str(const json_t *params, const char *key, int required, const char **out,
		    struct smr_err *err)
{
	const json_t *v = json_object_get(params, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return smr_errf(err, SMR_EUSAGE, "missing required parameter '%s'", key);
		return SMR_OK;
	}
	if (!json_is_string(v))
		return smr_errf(err, SMR_EINVAL, "parameter '%s' must be a string", key);
	*out = json_string_value(v);
	return SMR_OK;
}

enum smr_rc api_int(const json_t *params, const char *key, long long min, long long max,
		    long long *out, struct smr_err *err)
{
	const json_t *v = json_object_get(params, key);

	if (!v || json_is_null(v))
		return SMR_OK;
	if (!json_is_integer(v))
		return smr_errf(err, SMR_EINVAL, "parameter '%s' must be an integer", key);
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return smr_errf(err, SMR_EINVAL, "parameter '%s' must be between %lld and %lld",
				key, min, max);
	*out = json_integer_value(v);
	return SMR_OK;
}

enum smr_rc api_checkpoint_param(struct ops_ctx *ctx, const json_t *params,
				 struct checkpoint *out, struct smr_err *err)
{
	const char *hash, *ref;
	enum smr_rc rc = api_str(params, "hash", 0, &hash, err);

	if (!rc && hash)
		return ops_resolve_hash(ctx, hash, out, err);
	if (!rc)
		rc = api_str(params, "ref", 1, &ref, err);
	if (!rc)
		rc = ops_resolve(ctx, ref, out, err);
	return rc;
}

json_t *api_checkpoints_json(const struct checkpoint *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, checkpoint_to_json(&v[i]));
	return a;
}

/* Hands a space to the caller as JSON and releases it. */
static enum smr_rc space_result(enum smr_rc rc, struct space *sp, json_t **result)
{
	if (!rc)
		*result = ops_space_json(sp);
	space_release(sp);
	return rc;
}

/* Keeps c's item texts in ctx for the answer's transport (api_answer_texts). */
static void keep_texts(struct ops_ctx *ctx, const struct checkpoint *c)
{
	item_texts_unref(ctx->texts);
	ctx->texts = item_texts_ref(c->texts);
}

struct item_texts *api_answer_texts(struct ops_ctx *ctx)
{
	struct item_texts *t = ctx->texts;

	ctx->texts = NULL;
	return t;
}

void api_texts_drop(struct item_texts *t)
{
	item_texts_unref(t);
}

char *api_render(const json_t *result, const struct item_texts *t, size_t *len)
{
	struct buf b = BUF_INIT(0);

	if (item_texts_render(result, t, &b)) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, len);
}

static enum smr_rc checkpoint_result(enum smr_rc rc, struct checkpoint *c, json_t **result)
{
	if (!rc)
		*result = checkpoint_to_json(c);
	checkpoint_release(c);
	return rc;
}

static enum smr_rc op_space_create(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_space_create(ctx, api_text(p, "name"), api_text(p, "description"),
					  &sp, err);

	return space_result(rc, &sp, result);
}

static enum smr_rc op_space_get(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_space_get(ctx, api_text(p, "space"), &sp, err);

	if (!rc) {
		*result = ops_space_json(&sp);
		ops_add_role(ctx, &sp, *result);
	}
	space_release(&sp);
	return rc;
}

static enum smr_rc op_space_list(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	struct space *v = NULL;
	size_t n = 0;
	enum smr_rc rc;

	rc = ops_space_page(ctx, api_text(p, "after"), (size_t)api_number(p, "limit", 0), &v, &n,
			    err);
	if (!rc) {
		*result = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *one = ops_space_json(&v[i]);

			ops_add_role(ctx, &v[i], one);
			json_array_append_new(*result, one);
		}
	}
	spaces_free(v, n);
	return rc;
}

static enum smr_rc op_space_rename(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_space_rename(ctx, api_text(p, "space"), api_text(p, "new_name"), &sp,
					  err);

	return space_result(rc, &sp, result);
}

static enum smr_rc op_space_delete(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_space_get(ctx, api_text(p, "space"), &sp, err);

	if (!rc)
		rc = ops_space_delete(ctx, sp.id, err);
	if (!rc)
		*result = json_pack("{s:s, s:s}", "deleted", sp.name, "id", sp.id);
	space_release(&sp);
	return rc;
}

static enum smr_rc op_head(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	return ops_head_doc(ctx, api_text(p, "space"), result, err);
}

static enum smr_rc op_handoff_text(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	return ops_handoff_text(ctx, api_text(p, "space"), result, err);
}

static enum smr_rc op_handoff(struct ops_ctx *ctx, const json_t *p, json_t **result,
			      struct smr_err *err)
{
	return ops_handoff(ctx, api_text(p, "space"), api_text(p, "ref"), api_text(p, "note"),
			   api_flag(p, "restore"), api_text(p, "author"), result, err);
}

static enum smr_rc op_space_deleted(struct ops_ctx *ctx, const json_t *p, json_t **result,
				    struct smr_err *err)
{
	(void)p;
	return ops_space_list_deleted(ctx, result, err);
}

static enum smr_rc op_show(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = api_checkpoint_param(ctx, p, &c, err);

	return checkpoint_result(rc, &c, result);
}

static enum smr_rc op_checkpoint_create(struct ops_ctx *ctx, const json_t *p, json_t **result,
					struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_checkpoint_create(ctx, api_text(p, "space"),
					       json_object_get(p, "checkpoint"), api_text(p, "parent"),
					       api_text(p, "author"), &c, err);

	if (!rc)
		keep_texts(ctx, &c);
	return checkpoint_result(rc, &c, result);
}

/* The patch of checkpoint.update: its params without space, parent and author; new ref. */
static json_t *patch_of(const json_t *p)
{
	json_t *patch = json_deep_copy(p);

	json_object_del(patch, "space");
	json_object_del(patch, "parent");
	json_object_del(patch, "author");
	return patch;
}

static enum smr_rc op_checkpoint_update(struct ops_ctx *ctx, const json_t *p, json_t **result,
					struct smr_err *err)
{
	struct checkpoint c = { 0 };
	json_t *patch = patch_of(p), *changes = NULL;
	char *said;
	enum smr_rc rc = ops_checkpoint_update(ctx, api_text(p, "space"), patch, api_text(p, "parent"),
					       api_text(p, "author"), &c, &changes, err);

	if (!rc) {
		said = patch_describe(changes);
		*result = json_pack("{s:o, s:O, s:s}", "checkpoint", checkpoint_to_json(&c),
				    "changes", changes, "changed", said);
		free(said);
		keep_texts(ctx, &c);
	}
	json_decref(changes);
	json_decref(patch);
	checkpoint_release(&c);
	return rc;
}

static enum smr_rc op_merge(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	const json_t *res = json_object_get(p, "resolution");
	struct merge_req req = {
		.space = api_text(p, "space"), .ref = api_text(p, "ref"),
		.author = api_text(p, "author"), .title = api_text(p, "title"),
		.expect_head = api_text(p, "expect_head"), .dry_run = api_flag(p, "dry_run"),
		.resolution = json_is_object(res) ? res : NULL,
	};

	return ops_merge(ctx, &req, result, err);
}

/* Adds "graph" (the lanes before each line) and "graph_after" (lines below it) to a log. */
static void add_graph(json_t *log, const struct checkpoint *v, size_t n)
{
	struct graph_node *g = xcalloc(n + 1, sizeof(*g));
	char **row = xcalloc(n + 1, sizeof(*row)), **after = xcalloc(n + 1, sizeof(*after));

	for (size_t i = 0; i < n; i++) {
		g[i].hash = v[i].hash;
		g[i].parent = v[i].parent_hash;
		g[i].merge_parent = v[i].merge_parent_hash;
		g[i].created_at = v[i].created_at;
	}
	graph_ascii(g, n, row, after);
	for (size_t i = 0; i < n; i++) {
		json_object_set_new(json_array_get(log, i), "graph", json_string(row[i]));
		json_object_set_new(json_array_get(log, i), "graph_after", json_string(after[i]));
		free(row[i]);
		free(after[i]);
	}
	free(row);
	free(after);
	free(g);
}

enum smr_rc api_bool(const json_t *p, const char *key, int *out, struct smr_err *err)
{
	const json_t *v = json_object_get(p, key);

	*out = 0;
	if (!v || json_is_null(v))
		return SMR_OK;
	if (!json_is_boolean(v))
		return smr_errf(err, SMR_EINVAL, "parameter '%s' must be a boolean", key);
	*out = json_is_true(v);
	return SMR_OK;
}

static enum smr_rc op_log(struct ops_ctx *ctx, const json_t *p, json_t **result,
			  struct smr_err *err)
{
	const char *space = api_text(p, "space"), *ref = api_text(p, "ref");
	size_t limit = (size_t)api_number(p, "limit", 0);
	int first_parent = api_flag(p, "first_parent");
	struct checkpoint *v = NULL;
	size_t n = 0;
	enum smr_rc rc;

	/* one of the two: a Space's history, or a reference's */
	if (!space && !ref)
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'ref'");
	if (space)
		rc = ops_space_log(ctx, space, limit, first_parent, &v, &n, err);
	else
		rc = ops_log(ctx, ref, limit, first_parent, &v, &n, err);
	if (!rc)
		*result = api_checkpoints_json(v, n);
	if (!rc && api_flag(p, "graph"))
		add_graph(*result, v, n);
	checkpoints_free(v, n);
	return rc;
}

static enum smr_rc op_diff(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	return ops_diff(ctx, api_text(p, "from"), api_text(p, "to"), result, err);
}

static enum smr_rc op_merge_base(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	return ops_merge_base(ctx, api_text(p, "a"), api_text(p, "b"), result, err);
}

static enum smr_rc op_restore(struct ops_ctx *ctx, const json_t *p, json_t **result,
			      struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_restore_on(ctx, api_text(p, "space"), api_text(p, "ref"),
					api_text(p, "parent"), api_text(p, "author"), &c, err);

	return checkpoint_result(rc, &c, result);
}

static enum smr_rc op_fork(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_fork(ctx, api_text(p, "ref"), api_text(p, "into"), &sp, err);

	return space_result(rc, &sp, result);
}

static enum smr_rc op_fsck(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	return ops_fsck(ctx, api_text(p, "space"), result, err);
}

static enum smr_rc op_reflog(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	struct reflog_entry *v = NULL;
	size_t n = 0;
	enum smr_rc rc = ops_reflog(ctx, api_text(p, "space"), (size_t)api_number(p, "limit", 0),
				    &v, &n, err);

	if (!rc)
		*result = ops_reflog_json(v, n);
	reflog_entries_free(v, n);
	return rc;
}

static enum smr_rc op_gc(struct ops_ctx *ctx, const json_t *p, json_t **result,
			 struct smr_err *err)
{
	return ops_gc(ctx, api_flag(p, "prune"), api_text(p, "before"), api_text(p, "expire"),
		      result, err);
}

/*
 * "space": one Space, or "spaces": [names]; NULL when neither (every
 * Space).  Caller frees the array; the names are borrowed from p.
 */
static const char **spaces_param(const json_t *p, size_t *n)
{
	const json_t *list = json_object_get(p, "spaces"), *v;
	const char *one = api_text(p, "space");
	const char **out;
	size_t i;

	*n = 0;
	if (!one && !json_array_size(list))
		return NULL;
	out = xcalloc(json_array_size(list) + 2, sizeof(*out));
	if (one)
		out[(*n)++] = one;
	json_array_foreach(list, i, v)
		out[(*n)++] = json_string_value(v);
	return out;
}

static enum smr_rc op_search(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	size_t n = 0;
	const char **spaces = spaces_param(p, &n);
	struct search_params sp = {
		.query = api_text(p, "query"), .field = api_text(p, "field"),
		.author = api_text(p, "author"), .since = api_text(p, "since"),
		.until = api_text(p, "until"), .turns = api_flag(p, "turns"),
		.limit = (size_t)api_number(p, "limit", 0), .spaces = spaces, .n_spaces = n,
	};
	enum smr_rc rc = ops_search(ctx, &sp, result, err);

	free(spaces);
	return rc;
}

static enum smr_rc op_export(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	size_t n = 0;
	const char **spaces = spaces_param(p, &n);
	enum smr_rc rc;

	if (api_flag(p, "text")) {
		/* the bundle's text as a string: written and read back by the CLI, never parsed */
		char *text = NULL;
		size_t len = 0;

		rc = ops_export_text(ctx, spaces, n, &text, &len, err);
		if (!rc)
			*result = json_pack("{s:o}", "bundle_text", json_stringn_nocheck(text, len));
		free(text);
	} else {
		rc = ops_export(ctx, spaces, n, result, err);
	}
	free(spaces);
	return rc;
}

static enum smr_rc op_import(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	const json_t *bundle = json_object_get(p, "bundle");
	const json_t *text = json_object_get(p, "bundle_text");

	if (json_is_string(text))   /* the bundle as it was written: read as it is walked */
		return ops_import_text(ctx, json_string_value(text), json_string_length(text),
				       result, err);
	if (!json_is_object(bundle))
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'bundle' (an object)"
				" or 'bundle_text' (its text)");
	return ops_import(ctx, bundle, result, err);
}

static enum smr_rc op_blame(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	return ops_blame(ctx, api_text(p, "ref"), result, err);
}

const struct api_op api_core_ops[] = {
	{ "space.create", op_space_create, 1, 0 },
	{ "space.get", op_space_get, 0, 0 },
	{ "space.list", op_space_list, 0, 0 },
	{ "space.rename", op_space_rename, 1, 0 },
	{ "space.delete", op_space_delete, 1, 0 },
	{ "space.deleted", op_space_deleted, 0, 0 },
	{ "head", op_head, 0, 0 },
	{ "handoff", op_handoff, 1, 0 },
	{ "handoff.text", op_handoff_text, 0, 0 },
	{ "show", op_show, 0, 0 },
	{ "checkpoint.create", op_checkpoint_create, 1, 0 },
	{ "checkpoint.update", op_checkpoint_update, 1, 0 },
	{ "merge", op_merge, 1, 0 },
	{ "log", op_log, 0, 0 },
	{ "diff", op_diff, 0, 0 },
	{ "merge.base", op_merge_base, 0, 0 },
	{ "restore", op_restore, 1, 0 },
	{ "fork", op_fork, 1, 0 },
	{ "fsck", op_fsck, 0, 0 },
	{ "reflog", op_reflog, 0, 0 },
	{ "gc", op_gc, 1, 0 },
	{ "search", op_search, 0, 0 },
	{ "blame", op_blame, 0, 0 },
	{ "export", op_export, 0, 0 },
	{ "import", op_import, 1, 0 },
	{ NULL, NULL, 0, 0 },
};

const struct api_op *api_find(const char *name)
{
	for (size_t t = 0; api_tables[t]; t++)
		for (const struct api_op *op = api_tables[t]; op->name; op++)
			if (!strcmp(op->name, name))
				return op;
	return NULL;
}

/* The words of enum api_need in a declaration, by value. */
static const char *const need_names[] = { "undeclared", "none", "admin", "self", "space",
					  "session", "job", "ref", "token", "generation",
					  "space-or-deleted" };

void api_access_parse(const json_t *decl, struct api_access *out)
{
	const char *need = json_string_value(json_object_get(decl, "need"));
	const char *role = json_string_value(json_object_get(decl, "role"));

	*out = (struct api_access){ NEED_UNDECLARED, ROLE_NONE,
				    json_string_value(json_object_get(decl, "param")) };
	for (size_t i = 1; need && i < sizeof(need_names) / sizeof(need_names[0]); i++)
		if (!strcmp(need, need_names[i]))
			out->need = (enum api_need)i;
	if (role && role_parse(role, &out->role, NULL))
		out->need = NEED_UNDECLARED;
}

/* The caller's role on space_id, or the not-found words fmt/key when it cannot read it. */
static enum smr_rc need_on(struct ops_ctx *ctx, const char *space_id, enum role need,
			   const char *what, const char *key, struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = store_space_get(ctx->st, space_id, &sp, err);

	if (!rc)
		rc = ops_need_space(ctx, sp.id, need, NULL, err);
	if (rc == SMR_ENOTFOUND)
		rc = smr_errf(err, rc, "no %s '%s'", what, key);
	space_release(&sp);
	return rc;
}

/* The role need on the Space of session session_id, for the `what` named id. */
static enum smr_rc need_via_session(struct ops_ctx *ctx, const char *session_id, enum role need,
				    const char *what, const char *id, struct smr_err *err)
{
	struct session s = { 0 };
	enum smr_rc rc = store_session_get(ctx->st, session_id, &s, err);

	if (!rc)
		rc = need_on(ctx, s.repo_id, need, what, id, err);
	session_release(&s);
	return rc;
}

static enum smr_rc need_session(struct ops_ctx *ctx, const char *id, enum role need,
				struct smr_err *err)
{
	return need_via_session(ctx, id, need, "session", id, err);
}

static enum smr_rc need_job(struct ops_ctx *ctx, const char *id, enum role need,
			    struct smr_err *err)
{
	struct draft_job j = { 0 };
	enum smr_rc rc = store_job_get(ctx->st, id, &j, err);

	if (!rc)
		rc = need_via_session(ctx, j.session_id, need, "draft job", id, err);
	draft_job_release(&j);
	return rc;
}

static enum smr_rc need_generation(struct ops_ctx *ctx, const char *id, enum role need,
				   struct smr_err *err)
{
	struct generation g = { 0 };
	enum smr_rc rc = store_generation_get(ctx->st, id, &g, err);

	if (!rc)
		rc = need_via_session(ctx, g.session_id, need, "generation", id, err);
	generation_release(&g);
	return rc;
}

/*
 * ops_resolve() already hides what the caller cannot read; this checks the
 * role beyond reading.  Where the ref points is enough: the operation reads
 * the checkpoint itself.
 */
static enum smr_rc need_ref(struct ops_ctx *ctx, const char *ref, enum role need,
			    struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_resolve_where(ctx, ref, &c, err);

	if (!rc && need > ROLE_READER)
		rc = ops_need_space(ctx, c.space, need, NULL, err);
	checkpoint_release(&c);
	return rc;
}

/* A person naming itself or one of its agents ("alice", "alice/claude-code"). */
static enum smr_rc need_self(struct ops_ctx *ctx, const char *op, const char *name,
			     struct smr_err *err)
{
	const struct principal *w = ctx->who;
	size_t n = strlen(w->name);

	if (strcmp(w->user_id, w->person_id))
		return smr_errf(err, SMR_EFORBIDDEN, "an agent cannot run '%s'; its person can",
				op);
	if (!name || !strcmp(name, w->name) ||
	    (!strncmp(name, w->name, n) && name[n] == '/'))
		return SMR_OK;
	return smr_errf(err, SMR_EFORBIDDEN,
			"'%s' for '%s' needs the administrator; you may name yourself or your"
			" agents (%s/NAME)", op, name, w->name);
}

static enum smr_rc need_token(struct ops_ctx *ctx, const char *id, struct smr_err *err)
{
	const struct principal *w = ctx->who;
	struct token t = { 0 };
	enum smr_rc rc = store_token_get(ctx->st, id, &t, err);

	if (!rc && !(!strcmp(t.person_id, w->person_id) &&
		     (!strcmp(w->user_id, w->person_id) || !strcmp(t.user_id, w->user_id))))
		rc = smr_errf(err, SMR_ENOTFOUND, "no token '%s'", id);
	token_release(&t);
	return rc;
}

enum smr_rc api_check_rule(struct ops_ctx *ctx, const char *name, const struct api_access *a,
			   const json_t *params, struct smr_err *err)
{
	const char *v = NULL;

	if (!ops_restricted(ctx))
		return SMR_OK;
	if (a->param)
		v = json_string_value(json_object_get(params, a->param));
	if (a->need == NEED_REF && !v)
		v = json_string_value(json_object_get(params, "hash"));
	switch (a->need) {
	case NEED_NONE:
		return SMR_OK;
	case NEED_ADMIN:
		return smr_errf(err, SMR_EFORBIDDEN, "only the administrator may run '%s'",
				name);
	case NEED_SELF:
		return need_self(ctx, name, v, err);
	case NEED_SPACE:
		return v ? ops_need_space(ctx, v, a->role, NULL, err) : SMR_OK;
	case NEED_SPACE_ANY:
		return v ? ops_need_space_any(ctx, v, a->role, err) : SMR_OK;
	case NEED_SESSION:
		return v ? need_session(ctx, v, a->role, err) : SMR_OK;
	case NEED_JOB:
		return v ? need_job(ctx, v, a->role, err) : SMR_OK;
	case NEED_REF:
		return v ? need_ref(ctx, v, a->role, err) : SMR_OK;
	case NEED_TOKEN:
		return v ? need_token(ctx, v, err) : SMR_OK;
	case NEED_GENERATION:
		return v ? need_generation(ctx, v, a->role, err) : SMR_OK;
	case NEED_UNDECLARED:
		break;
	}
	return smr_errf(err, SMR_EFORBIDDEN, "operation '%s' declares no access rule", name);
}

enum smr_rc api_check_access(struct ops_ctx *ctx, const struct api_op *op,
			     const json_t *params, struct smr_err *err)
{
	struct api_access a;

	api_access_parse(json_object_get(decl_op(op->name), "access"), &a);
	return api_check_rule(ctx, op->name, &a, params, err);
}

enum smr_rc api_check_params(const struct api_op *op, const json_t *params,
			     struct smr_err *err)
{
	const json_t *schema = json_object_get(decl_op(op->name), "params");

	return schema ? decl_check(schema, params, "parameter", err) : SMR_OK;
}

enum smr_rc api_call(struct ops_ctx *ctx, const char *name, const json_t *params,
		     json_t **result, struct smr_err *err)
{
	const struct api_op *op = api_find(name);
	json_t *empty = NULL;
	enum smr_rc rc;

	if (!op)
		return smr_errf(err, SMR_ENOTFOUND, "no operation '%s'", name);
	if (!params)
		params = empty = json_object();
	if (!json_is_object(params))
		return smr_errf(err, SMR_EINVAL, "parameters must be a JSON object");
	rc = api_check_params(op, params, err);
	if (!rc)
		rc = api_check_access(ctx, op, params, err);
	if (op->writes)
		ctx->head.seen = 0;
	if (!rc)
		rc = op->run(ctx, params, result, err);
	if (!rc && op->writes)
		ops_changes_poke(ctx->changes);
	json_decref(empty);
	return rc;
}
