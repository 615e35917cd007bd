/*
 * api_chat.c -- the chat runtime's operations by name (ops/api.h):
 * session.create, session.list, session.get, session.mount, session.switch,
 * session.fork, chat.send and its message actions (chat.edit,
 * chat.regenerate, chat.continue), and generation.get / generation.stop for
 * a reply being generated.
 *
 * Operations that need providers use ctx->rt, the runtime the program built
 * at start-up, so that provider connections (and TLS sessions) are reused
 * across sends.
 */
#include "ops/context.h"
#include "ops/full/generation.h"
#include "ops/full/runtime.h"
#include "domain/thread.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The operations that start a generation, and what each does (runtime.h). */
static const struct {
	const char *name;
	enum chat_action action;
} chat_starts[] = {
	{ "chat.send", CHAT_SEND }, { "chat.edit", CHAT_EDIT },
	{ "chat.regenerate", CHAT_REGENERATE }, { "chat.continue", CHAT_CONTINUE },
};

int chat_op_streams(const char *name)
{
	for (size_t i = 0; i < sizeof(chat_starts) / sizeof(chat_starts[0]); i++)
		if (!strcmp(chat_starts[i].name, name))
			return 1;
	return 0;
}

static enum chat_action action_of(const char *name)
{
	for (size_t i = 0; i < sizeof(chat_starts) / sizeof(chat_starts[0]); i++)
		if (!strcmp(chat_starts[i].name, name))
			return chat_starts[i].action;
	return CHAT_SEND;
}

static enum smr_rc session_result(enum smr_rc rc, struct ops_ctx *ctx, struct session *s,
				  json_t **result, struct smr_err *err)
{
	struct space sp = { 0 };

	if (!rc)
		rc = store_space_get(ctx->st, s->repo_id, &sp, err);
	if (!rc)
		*result = ops_session_json(s, sp.name);
	space_release(&sp);
	session_release(s);
	return rc;
}

static enum smr_rc op_session_create(struct ops_ctx *ctx, const json_t *p, json_t **result,
				     struct smr_err *err)
{
	struct session s = { 0 };
	enum smr_rc rc = chat_session_start(ctx, api_text(p, "space"), api_text(p, "title"),
					    api_text(p, "commit_hash"), &s, err);

	return session_result(rc, ctx, &s, result, err);
}

static enum smr_rc op_session_list(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	struct session *v = NULL;
	struct space sp = { 0 };
	size_t n = 0;
	enum smr_rc rc = ops_space_get(ctx, api_text(p, "space"), &sp, err);

	if (!rc)
		rc = store_session_list(ctx->st, sp.id, &v, &n, err);
	if (!rc) {
		*result = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(*result, ops_session_json(&v[i], sp.name));
	}
	sessions_free(v, n);
	space_release(&sp);
	return rc;
}

/* The session's reply being generated, or JSON null. */
static json_t *running_generation(struct ops_ctx *ctx, const char *session_id)
{
	struct generation g = { 0 };
	json_t *out = json_null();

	if (!store_generation_running(ctx->st, session_id, &g, NULL)) {
		json_decref(out);
		out = ops_generation_json(&g);
	}
	generation_release(&g);
	return out;
}

/* The sequence numbers of the path shown (leaf_seq's), oldest first: what the next send gives. */
static json_t *path_json(const struct session *s, const struct turn *turns, size_t n)
{
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	size_t len = thread_path(turns, n, s->leaf_seq > 0 ? s->leaf_seq : s->last_seq, 0, idx,
				 &(int64_t){ 0 });
	json_t *a = json_array();

	for (size_t i = 0; i < len; i++)
		json_array_append_new(a, json_integer(turns[idx[i]].seq));
	free(idx);
	return a;
}

static enum smr_rc op_session_get(struct ops_ctx *ctx, const json_t *p, json_t **result,
				  struct smr_err *err)
{
	const char *id = api_text(p, "session_id");
	struct session s = { 0 };
	struct turn *turns = NULL;
	size_t n = 0;
	json_t *a, *path;
	enum smr_rc rc = chat_session_get(ctx, id, &s, &turns, &n, err);

	if (!rc) {
		a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, ops_turn_json(&turns[i]));
		path = path_json(&s, turns, n);
		turns_free(turns, n);
		rc = session_result(rc, ctx, &s, result, err);
		if (!rc) {
			json_object_set_new(*result, "turns", a);
			json_object_set_new(*result, "path", path);
			json_object_set_new(*result, "generation", running_generation(ctx, id));
		} else {
			json_decref(a);
			json_decref(path);
		}
		return rc;
	}
	session_release(&s);
	return rc;
}

static enum smr_rc op_session_mount(struct ops_ctx *ctx, const json_t *p, json_t **result,
				    struct smr_err *err)
{
	struct session s = { 0 };
	enum smr_rc rc = chat_session_mount(ctx, api_text(p, "session_id"),
					    api_text(p, "commit_hash"), api_text(p, "title"), &s, err);

	return session_result(rc, ctx, &s, result, err);
}

/*
 * v5.2 boundary parameters: anything but a string / a non-negative integer
 * is 422, as the original product answers (so their declarations leave the
 * type to this check).
 */
static enum smr_rc client_params(const json_t *p, struct chat_send_req *req,
				 struct smr_err *err)
{
	const json_t *hash = json_object_get(p, "commit_hash");
	const json_t *base = json_object_get(p, "history_base_seq");

	if (hash && !json_is_null(hash)) {
		if (!json_is_string(hash))
			return smr_errf(err, SMR_EUNPROC, "commit_hash must be a checkpoint hash");
		req->commit_hash = json_string_value(hash);
	}
	if (base && !json_is_null(base)) {
		if (!json_is_integer(base))
			return smr_errf(err, SMR_EUNPROC,
					"history_base_seq must be an integer sequence number");
		req->has_base = 1;
		req->history_base_seq = json_integer_value(base);
	}
	return SMR_OK;
}

/* A send's or an action's parameters (checked as declared) into req, borrowed from p. */
static enum smr_rc send_params(struct ops_ctx *ctx, const json_t *p, struct chat_send_req *req,
			       struct smr_err *err)
{
	enum smr_rc rc;

	req->session_id = api_text(p, "session_id");
	if (req->action != CHAT_SEND)
		req->seq = api_number(p, "seq", 0);
	if (req->action <= CHAT_EDIT)
		req->message = api_text(p, "message");
	req->provider = api_text(p, "provider");
	req->model = api_text(p, "model");
	rc = client_params(p, req, err);
	if (!rc)
		rc = runtime_required(ctx, err);
	return rc;
}

enum smr_rc chat_op_start_json(struct ops_ctx *ctx, const char *op, const json_t *params,
			       struct chat_gen **out, struct smr_err *err)
{
	struct chat_send_req req = { .action = action_of(op) };
	/* the streaming entry point gets the operation's checks, as api_call() would do */
	enum smr_rc rc = api_check_params(api_find(op), params, err);

	*out = NULL;
	if (!rc)
		rc = api_check_access(ctx, api_find(op), params, err);
	if (!rc)
		rc = send_params(ctx, params, &req, err);
	if (rc)
		return rc;
	return chat_send_start(ctx, ctx->rt, &req, out, err);
}

enum smr_rc chat_send_start_json(struct ops_ctx *ctx, const json_t *params,
				 struct chat_gen **out, struct smr_err *err)
{
	return chat_op_start_json(ctx, "chat.send", params, out, err);
}

static enum smr_rc op_generation_get(struct ops_ctx *ctx, const json_t *p, json_t **result,
				     struct smr_err *err)
{
	return chat_generation_get(ctx, api_text(p, "generation_id"), result, err);
}

static enum smr_rc op_generation_stop(struct ops_ctx *ctx, const json_t *p, json_t **result,
				      struct smr_err *err)
{
	return chat_generation_stop(ctx, api_text(p, "generation_id"), result, err);
}

static enum smr_rc run_action(enum chat_action action, struct ops_ctx *ctx, const json_t *p,
			      json_t **result, struct smr_err *err)
{
	struct chat_send_req req = { .action = action };
	enum smr_rc rc;

	rc = send_params(ctx, p, &req, err);
	if (rc)
		return rc;
	return chat_send(ctx, ctx->rt, &req, result, err);
}

static enum smr_rc op_chat_send(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	return run_action(CHAT_SEND, ctx, p, result, err);
}

static enum smr_rc op_chat_edit(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	return run_action(CHAT_EDIT, ctx, p, result, err);
}

static enum smr_rc op_chat_regenerate(struct ops_ctx *ctx, const json_t *p, json_t **result,
				      struct smr_err *err)
{
	return run_action(CHAT_REGENERATE, ctx, p, result, err);
}

static enum smr_rc op_chat_continue(struct ops_ctx *ctx, const json_t *p, json_t **result,
				    struct smr_err *err)
{
	return run_action(CHAT_CONTINUE, ctx, p, result, err);
}

static enum smr_rc op_session_switch(struct ops_ctx *ctx, const json_t *p, json_t **result,
				     struct smr_err *err)
{
	struct session s = { 0 };
	enum smr_rc rc = chat_session_switch(ctx, api_text(p, "session_id"),
					     api_number(p, "seq", 0), &s, err);

	return session_result(rc, ctx, &s, result, err);
}

static enum smr_rc op_session_fork(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	struct session s = { 0 };
	enum smr_rc rc = chat_session_fork(ctx, api_text(p, "session_id"), api_number(p, "seq", 0),
					   api_text(p, "title"), &s, err);

	return session_result(rc, ctx, &s, result, err);
}

const struct api_op chat_api_ops[] = {
	{ "session.create", op_session_create, 1, 0 },
	{ "session.list", op_session_list, 0, 0 },
	{ "session.get", op_session_get, 0, 0 },
	{ "session.mount", op_session_mount, 1, 0 },
	{ "session.switch", op_session_switch, 1, 0 },
	{ "session.fork", op_session_fork, 1, 0 },
	{ "chat.send", op_chat_send, 1, 0 },
	{ "chat.edit", op_chat_edit, 1, 0 },
	{ "chat.regenerate", op_chat_regenerate, 1, 0 },
	{ "chat.continue", op_chat_continue, 1, 0 },
	{ "generation.get", op_generation_get, 0, 0 },
	{ "generation.stop", op_generation_stop, 1, 0 },
	{ NULL, NULL, 0, 0 },
};
