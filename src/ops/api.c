/*
 * api.c -- the JSON face of the core operations (see api.h): parameter
 * checking and the operation table for Spaces and Checkpoints.
 */
#include "ops/api.h"
#include "domain/checkpoint.h"
#include "domain/graph.h"
#include "domain/patch.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

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
	const char *name, *desc;
	struct space sp = { 0 };
	enum smr_rc rc;

	rc = api_str(p, "name", 1, &name, err);
	if (!rc)
		rc = api_str(p, "description", 0, &desc, err);
	if (!rc)
		rc = ops_space_create(ctx, name, desc, &sp, err);
	return space_result(rc, &sp, result);
}

static enum smr_rc op_space_get(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	const char *space;
	struct space sp = { 0 };
	enum smr_rc rc = api_str(p, "space", 1, &space, err);

	if (!rc)
		rc = ops_space_get(ctx, space, &sp, err);
	return space_result(rc, &sp, result);
}

static enum smr_rc op_space_list(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	struct space *v = NULL;
	size_t n = 0;
	enum smr_rc rc;

	(void)p;
	rc = ops_space_list(ctx, &v, &n, err);
	if (!rc) {
		*result = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(*result, ops_space_json(&v[i]));
	}
	spaces_free(v, n);
	return rc;
}

static enum smr_rc op_space_rename(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	const char *space, *new_name;
	struct space sp = { 0 };
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "new_name", 1, &new_name, err);
	if (!rc)
		rc = ops_space_rename(ctx, space, new_name, &sp, err);
	return space_result(rc, &sp, result);
}

static enum smr_rc op_space_delete(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	const char *space;
	struct space sp = { 0 };
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = ops_space_get(ctx, space, &sp, err);
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
	const char *space;
	enum smr_rc rc = api_str(p, "space", 1, &space, err);

	return rc ? rc : ops_head_doc(ctx, space, result, err);
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
	const char *space, *parent, *author;
	const json_t *fields = json_object_get(p, "checkpoint");
	struct checkpoint c = { 0 };
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "parent", 0, &parent, err);
	if (!rc)
		rc = api_str(p, "author", 0, &author, err);
	if (!rc && !json_is_object(fields))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'checkpoint' must be an object");
	if (!rc)
		rc = ops_checkpoint_create(ctx, space, fields, parent, author, &c, err);
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
	const char *space, *parent, *author;
	struct checkpoint c = { 0 };
	json_t *patch = patch_of(p), *changes = NULL;
	char *said;
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "parent", 0, &parent, err);
	if (!rc)
		rc = api_str(p, "author", 0, &author, err);
	if (!rc)
		rc = ops_checkpoint_update(ctx, space, patch, parent, author, &c, &changes, err);
	if (!rc) {
		said = patch_describe(changes);
		*result = json_pack("{s:o, s:O, s:s}", "checkpoint", checkpoint_to_json(&c),
				    "changes", changes, "changed", said);
		free(said);
	}
	json_decref(changes);
	json_decref(patch);
	checkpoint_release(&c);
	return rc;
}

static enum smr_rc op_merge(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	const char *space, *ref, *author;
	const json_t *res = json_object_get(p, "resolution");
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "ref", 1, &ref, err);
	if (!rc)
		rc = api_str(p, "author", 0, &author, err);
	if (!rc && res && !json_is_object(res) && !json_is_null(res))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'resolution' must be an object");
	if (!rc)
		rc = ops_merge(ctx, space, ref, json_is_object(res) ? res : NULL, author, result,
			       err);
	return rc;
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

static enum smr_rc api_bool(const json_t *p, const char *key, int *out, struct smr_err *err)
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
	const char *ref = NULL, *space;
	long long limit = 0;
	int first_parent = 0, graph = 0;
	struct checkpoint *v = NULL;
	size_t n = 0;
	enum smr_rc rc;

	rc = api_str(p, "space", 0, &space, err);
	if (!rc && !space)
		rc = api_str(p, "ref", 1, &ref, err);
	if (!rc)
		rc = api_int(p, "limit", 0, 1000000000, &limit, err);
	if (!rc)
		rc = api_bool(p, "first_parent", &first_parent, err);
	if (!rc)
		rc = api_bool(p, "graph", &graph, err);
	if (!rc && space)
		rc = ops_space_log(ctx, space, (size_t)limit, first_parent, &v, &n, err);
	else if (!rc)
		rc = ops_log(ctx, ref, (size_t)limit, first_parent, &v, &n, err);
	if (!rc)
		*result = api_checkpoints_json(v, n);
	if (!rc && graph)
		add_graph(*result, v, n);
	checkpoints_free(v, n);
	return rc;
}

static enum smr_rc op_diff(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	const char *from, *to;
	enum smr_rc rc;

	rc = api_str(p, "from", 1, &from, err);
	if (!rc)
		rc = api_str(p, "to", 1, &to, err);
	if (!rc)
		rc = ops_diff(ctx, from, to, result, err);
	return rc;
}

static enum smr_rc op_restore(struct ops_ctx *ctx, const json_t *p, json_t **result,
			      struct smr_err *err)
{
	const char *space, *ref, *author;
	struct checkpoint c = { 0 };
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_str(p, "ref", 1, &ref, err);
	if (!rc)
		rc = api_str(p, "author", 0, &author, err);
	if (!rc)
		rc = ops_restore(ctx, space, ref, author, &c, err);
	return checkpoint_result(rc, &c, result);
}

static enum smr_rc op_fork(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	const char *ref, *into;
	struct space sp = { 0 };
	enum smr_rc rc;

	rc = api_str(p, "ref", 1, &ref, err);
	if (!rc)
		rc = api_str(p, "into", 1, &into, err);
	if (!rc)
		rc = ops_fork(ctx, ref, into, &sp, err);
	return space_result(rc, &sp, result);
}

static enum smr_rc op_fsck(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	const char *space;
	enum smr_rc rc = api_str(p, "space", 0, &space, err);

	if (!rc)
		rc = ops_fsck(ctx, space, result, err);
	return rc;
}

static enum smr_rc op_reflog(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	const char *space;
	long long limit = 0;
	struct reflog_entry *v = NULL;
	size_t n = 0;
	enum smr_rc rc;

	rc = api_str(p, "space", 1, &space, err);
	if (!rc)
		rc = api_int(p, "limit", 0, 1000000000, &limit, err);
	if (!rc)
		rc = ops_reflog(ctx, space, (size_t)limit, &v, &n, err);
	if (!rc)
		*result = ops_reflog_json(v, n);
	reflog_entries_free(v, n);
	return rc;
}

static enum smr_rc op_gc(struct ops_ctx *ctx, const json_t *p, json_t **result,
			 struct smr_err *err)
{
	const json_t *prune = json_object_get(p, "prune");
	const char *before;
	enum smr_rc rc = api_str(p, "before", 0, &before, err);

	if (!rc && prune && !json_is_boolean(prune))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'prune' must be true or false");
	if (!rc)
		rc = ops_gc(ctx, json_is_true(prune), before, result, err);
	return rc;
}

/* "space": one Space, or "spaces": [names]; *out NULL when neither (every Space). */
static enum smr_rc space_list_param(const json_t *p, const char ***out, size_t *n,
				    struct smr_err *err)
{
	const json_t *list = json_object_get(p, "spaces"), *v;
	const char *one;
	size_t i;
	enum smr_rc rc = api_str(p, "space", 0, &one, err);

	*out = NULL;
	*n = 0;
	if (rc)
		return rc;
	if (list && !json_is_null(list) && !json_is_array(list))
		return smr_errf(err, SMR_EINVAL, "parameter 'spaces' must be an array of names");
	if (one || json_array_size(list))
		*out = xcalloc(json_array_size(list) + 2, sizeof(**out));
	if (one)
		(*out)[(*n)++] = one;
	json_array_foreach(list, i, v) {
		if (!json_is_string(v))
			return smr_errf(err, SMR_EINVAL, "parameter 'spaces' must be an array of names");
		(*out)[(*n)++] = json_string_value(v);
	}
	return SMR_OK;
}

static enum smr_rc op_search(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	struct search_params sp = { 0 };
	const json_t *turns = json_object_get(p, "turns");
	const char **spaces = NULL;
	long long limit = 0;
	enum smr_rc rc = api_str(p, "query", 1, &sp.query, err);

	if (!rc)
		rc = api_str(p, "field", 0, &sp.field, err);
	if (!rc)
		rc = api_str(p, "author", 0, &sp.author, err);
	if (!rc)
		rc = api_str(p, "since", 0, &sp.since, err);
	if (!rc)
		rc = api_int(p, "limit", 0, 200, &limit, err);
	if (!rc && turns && !json_is_boolean(turns))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'turns' must be true or false");
	if (!rc)
		rc = space_list_param(p, &spaces, &sp.n_spaces, err);
	if (!rc) {
		sp.spaces = spaces;
		sp.turns = json_is_true(turns);
		sp.limit = (size_t)limit;
		rc = ops_search(ctx, &sp, result, err);
	}
	free(spaces);
	return rc;
}

static enum smr_rc op_export(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	const char **spaces = NULL;
	size_t n = 0;
	enum smr_rc rc = space_list_param(p, &spaces, &n, err);

	if (!rc)
		rc = ops_export(ctx, spaces, n, result, err);
	free(spaces);
	return rc;
}

static enum smr_rc op_import(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	const json_t *bundle = json_object_get(p, "bundle");

	if (!json_is_object(bundle))
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'bundle' (an object)");
	return ops_import(ctx, bundle, result, err);
}

static enum smr_rc op_blame(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	const char *ref;
	enum smr_rc rc = api_str(p, "ref", 1, &ref, err);

	if (!rc)
		rc = ops_blame(ctx, ref, result, err);
	return rc;
}

const struct api_op api_core_ops[] = {
	{ "space.create", op_space_create, 1 },
	{ "space.get", op_space_get, 0 },
	{ "space.list", op_space_list, 0 },
	{ "space.rename", op_space_rename, 1 },
	{ "space.delete", op_space_delete, 1 },
	{ "head", op_head, 0 },
	{ "show", op_show, 0 },
	{ "checkpoint.create", op_checkpoint_create, 1 },
	{ "checkpoint.update", op_checkpoint_update, 1 },
	{ "merge", op_merge, 1 },
	{ "log", op_log, 0 },
	{ "diff", op_diff, 0 },
	{ "restore", op_restore, 1 },
	{ "fork", op_fork, 1 },
	{ "fsck", op_fsck, 0 },
	{ "reflog", op_reflog, 0 },
	{ "gc", op_gc, 1 },
	{ "search", op_search, 0 },
	{ "blame", op_blame, 0 },
	{ "export", op_export, 0 },
	{ "import", op_import, 1 },
	{ NULL, NULL, 0 },
};

const struct api_op *api_find(const char *name)
{
	for (size_t t = 0; api_tables[t]; t++)
		for (const struct api_op *op = api_tables[t]; op->name; op++)
			if (!strcmp(op->name, name))
				return op;
	return NULL;
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
	rc = op->run(ctx, params, result, err);
	json_decref(empty);
	return rc;
}
