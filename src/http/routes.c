/*
 * routes.c -- the routing table of the HTTP API and its handlers.
 *
 * Each handler turns path, query and body into the JSON parameters of one
 * operation (ops/api.h), calls it and hands the result back as the response
 * body.  Bodies are the operation's result document itself, except on
 * /api/ops/{op}, which wraps it as {"result": ...} for the remote CLI.
 * The route names and version prefixes are those of the original product:
 * V4 for Spaces, sessions and chat, V5 for mounting, and the unversioned
 * agent surface (/repos, /commits, /chat/commit).  The table also carries
 * the documentation that openapi.c turns into /openapi.json.
 */
#include "http/http_int.h"
#include "mcp/mcp.h"
#include "ops/decl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
 * The Location template of the route's answer to Prefer: return=minimal
 * ("minimal" of its declared http entry, ops/decl.h), NULL when the route
 * answers in full whatever the client prefers.
 */
static const char *minimal_of(const struct http_req *r)
{
	const json_t *h = decl_http(decl_all(), r->route->doc.op, r->route->method,
				    r->route->pattern);

	return json_string_value(json_object_get(h, "minimal"));
}

/* The member of v that the dotted path p[0..n) names ("checkpoint.commit_hash"), or NULL. */
static const json_t *jpath(const json_t *v, const char *p, size_t n)
{
	char key[64];

	while (v && n) {
		size_t k = strcspn(p, ".");

		if (k > n)
			k = n;
		if (k >= sizeof(key))
			return NULL;
		memcpy(key, p, k);
		key[k] = '\0';
		v = json_object_get(v, key);
		p += k + (k < n);
		n -= k + (k < n);
	}
	return v;
}

/*
 * tmpl with each {a.b} replaced by that member of result, a string,
 * %-encoded where it is not a URL's unreserved character; NULL when one is
 * missing or empty.  Caller frees.
 */
static char *location(const char *tmpl, const json_t *result)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = BUF_INIT(0);
	const char *p = tmpl, *v;

	while (*p) {
		size_t n = strcspn(p, "{");

		buf_add(&b, p, n);
		p += n;
		if (!*p)
			break;
		n = strcspn(++p, "}");
		v = json_string_value(jpath(result, p, n));
		if (!v || !*v) {
			buf_release(&b);
			return NULL;
		}
		for (; *v; v++) {
			if (isalnum((unsigned char)*v) || strchr("-._~", *v))
				buf_add(&b, v, 1);
			else
				buf_addf(&b, "%%%c%c", hex[(unsigned char)*v >> 4], hex[*v & 15]);
		}
		p += n + (p[n] == '}');
	}
	return buf_detach(&b, NULL);
}

/*
 * Answers a success minimally when the client prefers it (Prefer:
 * return=minimal) and the route can: 1 when it did.  A dry run's report
 * (dry_run: true) is the answer itself, and a result that names nothing
 * to point at is answered in full.
 */
static int minimal(struct http_req *r, const json_t *result)
{
	const char *tmpl = r->want_minimal ? minimal_of(r) : NULL;
	char *loc;

	if (!tmpl || json_is_true(json_object_get(result, "dry_run")))
		return 0;
	loc = location(tmpl, result);
	if (!loc)
		return 0;
	http_reply_minimal(r, loc);
	return 1;
}

/*
 * Runs operation name with params (stolen); on success the response is its
 * result with status ok.  Operations of the chat runtime that this build
 * does not have yet answer 501.
 */
static void call(struct http_req *r, struct ops_ctx *ctx, const char *name, json_t *params,
		 int ok)
{
	struct smr_err err = SMR_ERR_INIT;
	struct item_texts *texts;
	json_t *result = NULL;
	enum smr_rc rc;

	if (!api_find(name)) {
		http_error(r, 501, "not_implemented",
			   "operation '%s' is not available in this build", name);
		json_decref(params);
		return;
	}
	rc = api_call(ctx, name, params, &result, &err);
	texts = api_answer_texts(ctx);
	if (rc) {
		http_fail(r, rc, &err, result);
	} else if (!minimal(r, result)) {
		http_reply(r, ok, json_incref(result));
		r->texts = texts;
		texts = NULL;
	}
	api_texts_drop(texts);
	json_decref(result);
	json_decref(params);
}

/* Copies body[key] into params[as] if it is a string (or absent when optional). */
static int take_str(struct http_req *r, json_t *params, const char *key, const char *as,
		    int required)
{
	struct smr_err err = SMR_ERR_INIT;
	const char *v;
	enum smr_rc rc = api_str(r->in, key, required, &v, &err);

	if (rc) {
		http_fail(r, rc, &err, NULL);
		return -1;
	}
	if (v)
		json_object_set_new(params, as, json_string(v));
	return 0;
}

/* {key: r->arg} */
static json_t *arg_params(struct http_req *r, const char *key)
{
	return json_pack("{s:s}", key, r->arg);
}

static void h_health(struct http_req *r, struct ops_ctx *ctx)
{
	(void)ctx;
	http_reply_fixed(r, FIXED_HEALTH);
}

static void h_openapi(struct http_req *r, struct ops_ctx *ctx)
{
	(void)ctx;
	http_reply_fixed(r, FIXED_OPENAPI);
}

/* Prometheus scrapes this: counters of the server and of the process (metrics.c). */
static void h_metrics(struct http_req *r, struct ops_ctx *ctx)
{
	size_t len;
	char *text;

	(void)ctx;
	if (r->has_who && !r->who.admin) {      /* ROUTE_ADMIN: the counters show everyone's work */
		http_error(r, 403, "forbidden", "only the administrator may read /metrics"
			   " (SMRITI_TOKEN); Prometheus can scrape smriti serve --metrics-listen");
		return;
	}
	if (!r->srv->metrics) {
		http_error(r, 404, "not_found", "metrics are off (smriti serve --no-metrics)");
		return;
	}
	text = http_metrics_render(r->srv->metrics, atomic_load(&r->srv->inflight), &len);
	http_reply_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

static void h_api_op(struct http_req *r, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *result = NULL;
	struct chat_gen *g = NULL;
	enum smr_rc rc;

	if (chat_op_streams(r->op->name)) {
		/* as POST /v4/chat/send: the worker only starts it; the answer comes at the end */
		json_t *params = r->in ? json_incref(r->in) : json_object();

		rc = chat_op_start_json(ctx, r->op->name, params, &g, &err);
		json_decref(params);
		if (rc)
			http_fail(r, rc, &err, NULL);
		else
			http_follow(r, g, 0);
		r->gen_wrap = 1;
		return;
	}
	rc = api_call(ctx, r->op->name, r->in, &result, &err);
	if (rc)
		http_fail(r, rc, &err, result);
	else
		http_reply(r, 200, json_pack("{s:O}", "result", result));
	json_decref(result);
}

static void h_repo_create(struct http_req *r, struct ops_ctx *ctx)
{
	json_t *p = json_object();

	if (take_str(r, p, "name", "name", 1) || take_str(r, p, "description", "description", 0)) {
		json_decref(p);
		return;
	}
	call(r, ctx, "space.create", p, 201);
}

static void h_repo_get(struct http_req *r, struct ops_ctx *ctx)
{
	call(r, ctx, "space.get", arg_params(r, "space"), 200);
}

static void h_repo_rename(struct http_req *r, struct ops_ctx *ctx)
{
	json_t *p = arg_params(r, "space");

	if (take_str(r, p, "name", "new_name", 1)) {
		json_decref(p);
		return;
	}
	call(r, ctx, "space.rename", p, 200);
}

static void h_repo_delete(struct http_req *r, struct ops_ctx *ctx)
{
	call(r, ctx, "space.delete", arg_params(r, "space"), 200);
}

/* ?limit=N: 0 or absent means all; -1 with a 400 set when malformed. */
static long long query_limit(struct http_req *r)
{
	const char *s = http_query(r, "limit");
	char *end;
	long long v;

	if (!s)
		return 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || !isdigit((unsigned char)*s) || v > 1000000000) {
		http_error(r, 400, "invalid_input",
			   "query parameter 'limit' must be a whole number from 0 to 1000000000");
		return -1;
	}
	return v;
}

/* log by Space: a Space whose name looks like a hash prefix still means the Space. */
static void h_repo_commits(struct http_req *r, struct ops_ctx *ctx)
{
	long long limit = query_limit(r);

	if (limit >= 0)
		call(r, ctx, "log", json_pack("{s:s, s:I}", "space", r->arg, "limit", limit), 200);
}

/* The reflog of a Space, live or deleted (by its old name or id). */
static void h_repo_reflog(struct http_req *r, struct ops_ctx *ctx)
{
	long long limit = query_limit(r);

	if (limit >= 0)
		call(r, ctx, "reflog", json_pack("{s:s, s:I}", "space", r->arg, "limit", limit),
		     200);
}

/*
 * Streams (Accept: text/event-stream, or "stream": true) or answers one
 * JSON document; either way the worker only starts the send (docs/http.md,
 * "Streaming chat").
 */
static void h_chat_send(struct http_req *r, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct chat_gen *g = NULL;
	json_t *params = r->in ? json_incref(r->in) : json_object();
	enum smr_rc rc = chat_send_start_json(ctx, params, &g, &err);

	if (rc)
		http_fail(r, rc, &err, NULL);
	else
		http_follow(r, g, r->want_stream || json_is_true(json_object_get(params, "stream")));
	json_decref(params);
}

/* A message action on the session in the path: the body names the turn; answered as a send. */
static void chat_action(struct http_req *r, struct ops_ctx *ctx, const char *op)
{
	struct smr_err err = SMR_ERR_INIT;
	struct chat_gen *g = NULL;
	json_t *params = r->in && json_is_object(r->in) ? json_deep_copy(r->in) : json_object();
	enum smr_rc rc;

	json_object_set_new(params, "session_id", json_string(r->arg));
	rc = chat_op_start_json(ctx, op, params, &g, &err);
	if (rc)
		http_fail(r, rc, &err, NULL);
	else
		http_follow(r, g, r->want_stream || json_is_true(json_object_get(params, "stream")));
	json_decref(params);
}

static void h_chat_edit(struct http_req *r, struct ops_ctx *ctx)
{
	chat_action(r, ctx, "chat.edit");
}

static void h_chat_regenerate(struct http_req *r, struct ops_ctx *ctx)
{
	chat_action(r, ctx, "chat.regenerate");
}

static void h_chat_continue(struct http_req *r, struct ops_ctx *ctx)
{
	chat_action(r, ctx, "chat.continue");
}

/* The generation's events (Accept: text/event-stream, Last-Event-ID), or its state as JSON. */
static void h_generation_get(struct http_req *r, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct chat_gen *g = NULL;
	enum smr_rc rc;

	if (!r->want_stream) {
		call(r, ctx, "generation.get", arg_params(r, "generation_id"), 200);
		return;
	}
	rc = chat_generation_open(ctx, r->arg, r->cursor.next - 1, &g, &err);
	if (rc)
		http_fail(r, rc, &err, NULL);
	else
		http_follow(r, g, 1);
}

static void h_head(struct http_req *r, struct ops_ctx *ctx)
{
	call(r, ctx, "head", arg_params(r, "space"), 200);
}

static void h_commit_get(struct http_req *r, struct ops_ctx *ctx)
{
	call(r, ctx, "show", arg_params(r, "hash"), 200);
}

/*
 * The agent's write: {repo_id, parent_commit_id?, ...checkpoint fields}.
 * Every other key is a checkpoint field; unknown ones are refused by the
 * checkpoint validation, so a typo does not silently drop data.
 */
static void h_chat_commit(struct http_req *r, struct ops_ctx *ctx)
{
	json_t *p = json_object();
	/* a shallow copy: only its two members go, and the checkpoint is built from a copy */
	json_t *fields = r->in ? json_copy(r->in) : json_object();

	if (take_str(r, p, "repo_id", "space", 1) ||
	    take_str(r, p, "parent_commit_id", "parent", 0)) {
		json_decref(fields);
		json_decref(p);
		return;
	}
	json_object_del(fields, "repo_id");
	json_object_del(fields, "parent_commit_id");
	json_object_set_new(p, "checkpoint", fields);
	call(r, ctx, "checkpoint.create", p, 201);
}

/* A hand-off note for the next agent, on HEAD or on a Checkpoint restored with it. */
static void h_handoff(struct http_req *r, struct ops_ctx *ctx)
{
	json_t *p = r->in ? json_deep_copy(r->in) : json_object();

	json_object_set_new(p, "space", json_string(r->arg));
	call(r, ctx, "handoff", p, 201);
}

/* Review on demand: {provider?, model?, llm?} in the body, the checkpoint in the path. */
static void h_review(struct http_req *r, struct ops_ctx *ctx)
{
	json_t *p = r->in ? json_deep_copy(r->in) : json_object();

	json_object_set_new(p, "hash", json_string(r->arg));
	call(r, ctx, "review", p, 200);
}

/* ---- read-only views for the web UI (ops/view.h, runtime/preview.c) ---- */

/* ?q=QUERY&space=&field=&author=&since=&until=&turns=1&limit=N: full-text search. */
static void h_search(struct http_req *r, struct ops_ctx *ctx)
{
	static const char *const keys[] = { "space", "field", "author", "since", "until" };
	long long limit = query_limit(r);
	const char *q = http_query(r, "q"), *turns = http_query(r, "turns");
	json_t *p;

	if (limit < 0)
		return;
	p = json_pack("{s:s, s:I}", "query", q ? q : "", "limit", limit);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = http_query(r, keys[i]);

		if (v && *v)
			json_object_set_new(p, keys[i], json_string(v));
	}
	if (turns && (!strcmp(turns, "1") || !strcmp(turns, "true")))
		json_object_set_new(p, "turns", json_true());
	call(r, ctx, "search", p, 200);
}

/* ?ref=REF: who introduced each item of that checkpoint. */
static void h_blame(struct http_req *r, struct ops_ctx *ctx)
{
	const char *ref = http_query(r, "ref");

	call(r, ctx, "blame", json_pack("{s:s}", "ref", ref ? ref : ""), 200);
}

/* ?space=NAME: the version of the Space list, and of that Space's sessions. */
static json_t *query_value(const char *type, const char *v);

/*
 * ?space=NAME&since=V&wait=S: with since and wait, a long poll: a version
 * still V waits, parked without a thread (changes_wait.c), until it moves
 * or S seconds pass.  The operation checks every parameter first.
 */
static void h_changes(struct http_req *r, struct ops_ctx *ctx)
{
	static const char *const keys[] = { "space", "since", "wait" };
	struct smr_err err = SMR_ERR_INIT;
	json_t *p = json_object(), *res = NULL;
	const char *v, *since;
	json_int_t wait;
	enum smr_rc rc;

	for (size_t i = 0; i < 3; i++)
		if ((v = http_query(r, keys[i])) != NULL && (i || *v))     /* ?space= : none */
			json_object_set_new(p, keys[i], query_value(i == 2 ? "integer" : NULL, v));
	rc = api_call(ctx, "state.version", p, &res, &err);
	since = json_string_value(json_object_get(p, "since"));
	wait = json_integer_value(json_object_get(p, "wait"));
	if (rc)
		http_fail(r, rc, &err, res);
	else if (!since || wait <= 0 ||
		 strcmp(since, json_string_value(json_object_get(res, "version"))) ||
		 http_waits_park(r, json_string_value(json_object_get(p, "space")), since, (long)wait))
		http_reply(r, 200, json_incref(res));
	json_decref(res);
	json_decref(p);
}

/* ?provider=P&model=M: the context the session's next send would assemble. */
static void h_session_context(struct http_req *r, struct ops_ctx *ctx)
{
	const char *keys[] = { "provider", "model" };
	json_t *p = arg_params(r, "session_id");

	for (size_t i = 0; i < 2; i++) {
		const char *v = http_query(r, keys[i]);

		if (v && *v)
			json_object_set_new(p, keys[i], json_string(v));
	}
	call(r, ctx, "context.preview", p, 200);
}

/* The declared type of parameter schema s ("integer", ...), its $ref followed; NULL if none. */
static const char *param_type(const json_t *s)
{
	const char *ref = json_string_value(json_object_get(s, "$ref"));
	const json_t *t;

	if (ref)
		s = decl_ref(ref);
	t = json_object_get(s, "type");
	return json_is_array(t) ? json_string_value(json_array_get(t, 0)) : json_string_value(t);
}

/*
 * A query value as its parameter's declared type: an integer, a boolean
 * (true/1, false/0) or, for an array, its comma-separated items.  Text that
 * is not of the type stays a string, for the parameter check to name.
 */
static json_t *query_value(const char *type, const char *v)
{
	char *end;
	long long n;

	if (type && !strcmp(type, "integer")) {
		n = strtoll(v, &end, 10);
		return *v && !*end ? json_integer(n) : json_string(v);
	}
	if (type && !strcmp(type, "boolean") && (!strcmp(v, "true") || !strcmp(v, "1")))
		return json_true();
	if (type && !strcmp(type, "boolean") && (!strcmp(v, "false") || !strcmp(v, "0")))
		return json_false();
	if (type && !strcmp(type, "array")) {
		json_t *a = json_array();

		for (const char *p = v; *p;) {
			size_t k = strcspn(p, ",");

			if (k)
				json_array_append_new(a, json_stringn(p, k));
			p += k + (p[k] == ',');
		}
		return a;
	}
	return json_string(v);
}

/* The operation's parameters from the query: each declared one that is there. */
static json_t *query_params(struct http_req *r, const json_t *props)
{
	json_t *p = json_object(), *s;
	const char *key, *v;

	json_object_foreach((json_t *)props, key, s) {
		v = http_query(r, key);
		if (v)
			json_object_set_new(p, key, query_value(param_type(s), v));
	}
	return p;
}

/*
 * A route its operation's declaration describes (ops/decl.h, "http"): the
 * {id} segment is the parameter "arg" names (else one of its own name),
 * the query (GET) or the JSON body (other methods) the other parameters,
 * and the operation's result the body, with the declared status.
 */
void http_declared(struct http_req *r, struct ops_ctx *ctx)
{
	const json_t *h = decl_http(decl_all(), r->route->doc.op, r->route->method,
				    r->route->pattern);
	const json_t *props = json_object_get(json_object_get(decl_op(r->route->doc.op), "params"),
					      "properties");
	const char *arg = json_string_value(json_object_get(h, "arg"));
	const char *open = strchr(r->route->pattern, '{');
	json_int_t status = json_integer_value(json_object_get(h, "status"));
	json_t *p;

	if (!strcmp(r->route->method, "GET"))
		p = query_params(r, props);
	else
		p = r->in ? json_deep_copy(r->in) : json_object();
	if (open && arg)
		json_object_set_new(p, arg, json_string(r->arg));
	else if (open)
		json_object_set_new(p, "id", json_string(r->arg));
	call(r, ctx, r->route->doc.op, p, status ? (int)status : 200);
}

/* A declared route: its documentation comes from the operation's declaration. */
#define DECLARED(method, pattern, op, flags) \
	{ method, pattern, http_declared, flags, { NULL, op, NULL, NULL, 0, NULL, 0 } }

#define OPEN (ROUTE_OPEN | ROUTE_NO_STORE)

const struct http_route http_routes[] = {
	{ "GET", "/", http_ui_index, OPEN,
	  { "The web UI (HTML; see docs/ui.md)", NULL, NULL, "Html", 200, NULL } },
	{ "GET", "/ui/{name}", http_ui_asset, OPEN,
	  { "A file of the web UI (script, style sheet, icon), with an ETag", NULL, NULL,
	    "Html", 200, NULL } },
	{ "GET", "/healthz", h_health, OPEN,
	  { "Liveness and the storage backend in use", NULL, NULL, "Health", 200, NULL } },
	{ "GET", "/metrics", h_metrics, ROUTE_NO_STORE | ROUTE_ADMIN,
	  { "Counters for monitoring, in the Prometheus text format (docs/operations.md); the"
	    " administrator's only", NULL,
	    NULL, "Metrics", 200, NULL } },
	{ "GET", "/openapi.json", h_openapi, ROUTE_NO_STORE,
	  { "This OpenAPI document", NULL, NULL, "OpenAPI", 200, NULL } },
	{ "POST", "/api/ops/{op}", h_api_op, ROUTE_BY_OP,
	  { "Run any operation by name (what the remote CLI uses)", NULL, "OpParams",
	    "OpResult", 200, NULL } },
	DECLARED("GET", "/v4/repos", "space.list", 0),
	{ "POST", "/v4/repos", h_repo_create, ROUTE_BLOCKING,
	  { "Create a Space", "space.create", "SpaceCreate", "Space", 201, NULL } },
	{ "GET", "/v4/repos/{id}", h_repo_get, 0,
	  { "Get a Space by id or name", "space.get", NULL, "Space", 200, NULL } },
	{ "PATCH", "/v4/repos/{id}", h_repo_rename, ROUTE_BLOCKING,
	  { "Rename a Space", "space.rename", "SpaceRename", "Space", 200, NULL } },
	{ "DELETE", "/v4/repos/{id}", h_repo_delete, ROUTE_BLOCKING,
	  { "Delete a Space (kept, reachable through its reflog, until gc with prune)",
	    "space.delete", NULL, "Deleted", 200, NULL } },
	{ "GET", "/v4/search", h_search, 0,
	  { "Full-text search over what checkpoints introduced (?q=QUERY, and optionally"
	    " space, field, author, since, until, turns=1, limit)", "search", NULL,
	    "SearchResult", 200, "q space field author since until turns limit" } },
	{ "GET", "/v4/blame", h_blame, 0,
	  { "Blame (?ref=REF): the checkpoint, author and time that introduced each item",
	    "blame", NULL, "Blame", 200, "ref" } },
	{ "GET", "/v4/repos/{id}/reflog", h_repo_reflog, 0,
	  { "Every move of a Space's HEAD, newest first (entry N is SPACE@{N})", "reflog",
	    NULL, "Reflog", 200, "limit" } },
	{ "GET", "/v4/repos/{id}/commits", h_repo_commits, 0,
	  { "Checkpoints of a Space from HEAD back, newest first", "log", NULL,
	    "CheckpointList", 200, "limit" } },
	DECLARED("PATCH", "/v4/repos/{id}/head", "checkpoint.update", ROUTE_BLOCKING),
	DECLARED("POST", "/v4/repos/{id}/merge", "merge", ROUTE_BLOCKING),
	{ "POST", "/v4/repos/{id}/handoff", h_handoff, ROUTE_BLOCKING,
	  { "Leave a hand-off note for the next agent on HEAD (or, with restore, on ref restored"
	    " first, in one call); HEAD reads carry the newest note", "handoff", "HandoffParams",
	    "HandoffResult", 201, NULL } },
	DECLARED("GET", "/v4/repos/{id}/sessions", "session.list", 0),
	DECLARED("POST", "/v4/repos/{id}/sessions", "session.create", ROUTE_BLOCKING),
	DECLARED("GET", "/v4/sessions/{id}", "session.get", 0),
	{ "POST", "/v4/chat/send", h_chat_send, ROUTE_BLOCKING | ROUTE_CHAT,
	  { "Send a message: stores the user turn, calls the provider, stores its answer"
	    " (streamed as server-sent events with Accept: text/event-stream)",
	    "chat.send", NULL, NULL, 200, NULL, 1 } },
	{ "GET", "/v4/generations/{id}", h_generation_get, 0,
	  { "A reply being generated: its events (Accept: text/event-stream, resuming after"
	    " Last-Event-ID) or its state", "generation.get", NULL, NULL, 200, NULL, 1 } },
	DECLARED("POST", "/v4/generations/{id}/stop", "generation.stop", ROUTE_BLOCKING),
	{ "POST", "/v4/sessions/{id}/edit", h_chat_edit, ROUTE_BLOCKING | ROUTE_CHAT,
	  { "Edit a question: a new question beside turn seq (which is kept), then its reply;"
	    " answered as a send (streamed with Accept: text/event-stream)", "chat.edit",
	    NULL, NULL, 200, NULL, 1 } },
	{ "POST", "/v4/sessions/{id}/regenerate", h_chat_regenerate, ROUTE_BLOCKING | ROUTE_CHAT,
	  { "Regenerate a reply: a new reply to the question of turn seq, beside the ones it"
	    " has (kept); answered as a send", "chat.regenerate", NULL,
	    NULL, 200, NULL, 1 } },
	{ "POST", "/v4/sessions/{id}/continue", h_chat_continue, ROUTE_BLOCKING | ROUTE_CHAT,
	  { "Continue a reply that was stopped or cut off: the model is given it as the start of"
	    " its answer and goes on; the new text is a turn that continues turn seq",
	    "chat.continue", NULL, NULL, 200, NULL, 1 } },
	DECLARED("POST", "/v4/sessions/{id}/switch", "session.switch", ROUTE_BLOCKING),
	DECLARED("POST", "/v4/sessions/{id}/fork", "session.fork", ROUTE_BLOCKING),
	DECLARED("POST", "/v5/sessions/{id}/mount", "session.mount", ROUTE_BLOCKING),
	{ "GET", "/repos/{id}/head", h_head, 0,
	  { "The HEAD Checkpoint of a Space (agent surface)", "head", NULL, "Checkpoint", 200,
	    NULL } },
	{ "GET", "/commits/{hash}", h_commit_get, 0,
	  { "A Checkpoint by full hash or unique prefix (agent surface)", "show", NULL,
	    "Checkpoint", 200, NULL } },
	{ "POST", "/chat/commit", h_chat_commit, ROUTE_BLOCKING,
	  { "Write a Checkpoint (agent surface); a stale parent_commit_id is a 409",
	    "checkpoint.create", "ChatCommit", "Checkpoint", 201, NULL } },
	{ "POST", "/mcp", mcp_http_route, ROUTE_BLOCKING | ROUTE_BY_TOOL,
	  { "MCP Streamable HTTP: one JSON-RPC message per POST; a 2026-07-28"
	    " subscriptions/listen answers with an event stream (docs/mcp.md)", NULL,
	    "JsonRpc", "JsonRpc", 200, NULL, 1 } },
	DECLARED("POST", "/v5/checkpoints/draft", "draft.create", ROUTE_BLOCKING),
	DECLARED("GET", "/v5/checkpoints/draft/{job_id}", "draft.get", 0),
	DECLARED("POST", "/v5/checkpoints/draft/{job_id}/save", "draft.save", ROUTE_BLOCKING),
	{ "POST", "/v5/checkpoints/{hash}/review", h_review, ROUTE_BLOCKING,
	  { "Review a Checkpoint on demand (deterministic pass, then the LLM pass)", "review",
	    "ReviewParams", "Review", 200, NULL } },
	DECLARED("POST", "/v1/ingest", "ingest", ROUTE_BLOCKING),
	DECLARED("POST", "/v1/context-pack", "context_pack", ROUTE_BLOCKING),
	{ "GET", "/v4/auth", http_auth_get, OPEN,
	  { "Whether this server wants a token, and whether this request carries it",
	    NULL, NULL, "AuthState", 200, NULL } },
	{ "POST", "/v4/auth", http_auth_post, OPEN,
	  { "Trade the token for the web UI's HttpOnly, SameSite=Strict cookie", NULL,
	    "AuthToken", "AuthState", 200, NULL } },
	{ "DELETE", "/v4/auth", http_auth_delete, OPEN,
	  { "Clear the web UI's cookie", NULL, NULL, "AuthState", 200, NULL } },
	DECLARED("GET", "/v4/overview", "space.overview", 0),
	DECLARED("GET", "/v4/repos/{id}/graph", "space.graph", 0),
	{ "GET", "/v4/changes", h_changes, 0,
	  { "A version that changes whenever the Spaces (or, with ?space=NAME, that Space's"
	    " sessions) change, whoever wrote; with ?since=VERSION&wait=SECONDS a long poll",
	    "state.version", NULL, NULL, 200, "*" } },
	DECLARED("GET", "/v4/providers", "providers.list", 0),
	{ "GET", "/v4/sessions/{id}/context", h_session_context, 0,
	  { "What the model sees: the context the session's next send would assemble"
	    " (?provider=P&model=M); nothing is sent or written", "context.preview", NULL,
	    NULL, 200, "provider model" } },
	DECLARED("POST", "/v4/repos/{id}/commits", "checkpoint.create", ROUTE_BLOCKING),
	DECLARED("POST", "/v4/repos/{id}/restore", "restore", ROUTE_BLOCKING),
	DECLARED("POST", "/v4/repos/{id}/fork", "fork", ROUTE_BLOCKING),
	DECLARED("GET", "/v4/diff", "diff", 0),
	DECLARED("GET", "/v4/merge-base", "merge.base", 0),
	DECLARED("GET", "/v4/deleted", "space.deleted", 0),
	DECLARED("GET", "/v4/export", "export", 0),
	DECLARED("POST", "/v4/import", "import", ROUTE_BLOCKING),
	DECLARED("GET", "/v4/fsck", "fsck", 0),
	DECLARED("POST", "/v4/gc", "gc", ROUTE_BLOCKING),
	{ NULL, NULL, NULL, 0, { NULL, NULL, NULL, NULL, 0, NULL, 0 } },
};
