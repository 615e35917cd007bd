/*
 * mcp.c -- the transport-independent MCP protocol core: JSON-RPC 2.0
 * message checks, the method table, the two eras of the protocol,
 * initialize, server/discover and ping.  Tools, resources and prompts live
 * in mcp_tools.c, mcp_resources.c and mcp_prompts.c, subscriptions in
 * mcp_subscribe.c.
 *
 * Message rules (MCP over JSON-RPC 2.0):
 *   - a request has "jsonrpc":"2.0", a string or number id (0 is valid) and
 *     a string method; its response echoes the id exactly;
 *   - a notification has no id and never gets a reply, not even an error;
 *     notifications/cancelled of a subscriptions/listen ends it;
 *   - a message with an id and result/error but no method is the client's
 *     response to a server request; this server sends none, so it is dropped;
 *   - an unknown method gets -32601 at once (so 2026 clients that try
 *     server/discover first learn the answer without waiting).
 *
 * Eras (2026-07-28 basic/versioning).  A request whose params._meta names
 * a protocol revision is modern: it is served on its own, whatever came
 * before on the same channel (no initialize needed), its revision must be
 * MCP_MODERN_VERSION (else -32022 naming it), and its result carries
 * resultType, the server's identity and, for lists and reads, cache hints;
 * a missing resource is -32602 there.  Any other request is legacy and is
 * answered as 2025-11-25 says.  Methods of one era only are unknown to the
 * other: resources/subscribe is legacy, subscriptions/listen modern.
 */
#include "mcp/mcp_int.h"
#include "ops/api.h"
#include "util/xalloc.h"
#include "version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

static const char instructions[] =
	"Smriti keeps versioned reasoning state. A Space holds a chain of immutable "
	"Checkpoints (title, summary, decisions, assumptions, tasks, open questions, "
	"entities, artifacts). To pick up work: call read_head with the Space name "
	"(list_spaces shows them). To record progress: call update_checkpoint with only "
	"what changed (add, drop, done, reopen, title, summary); everything else is "
	"carried forward from HEAD, and agents writing at the same moment all land. Pass "
	"parent (the commit_hash you read) when your change only makes sense on that "
	"state: if another agent wrote first it fails as a conflict; read_head again and "
	"retry. write_checkpoint replaces the whole state; use it only to start over. "
	"merge brings another line (a fork) back. Nothing is saved unless you call one "
	"of these.";

/* Cache hints (2026-07-28 server/utilities/caching), in milliseconds. */
#define TTL_STATIC (60 * 60 * 1000)      /* what only a new build of the server changes */
#define TTL_IMMUTABLE (24 * 60 * 60 * 1000)

/* 1 if v is a legacy revision this server speaks (what initialize may agree to). */
static int legacy_supported(const char *v)
{
	for (size_t i = 0; v && mcp_versions[i]; i++)
		if (!strcmp(v, mcp_versions[i]))
			return 1;
	return 0;
}

int mcp_version_supported(const char *v)
{
	return (v && !strcmp(v, MCP_MODERN_VERSION)) || legacy_supported(v);
}

static const json_t *request_meta_version(const json_t *params)
{
	return json_object_get(json_object_get(params, "_meta"), MCP_META_VERSION);
}

const char *mcp_request_version(const json_t *msg)
{
	const json_t *v = request_meta_version(json_object_get(msg, "params"));

	return v ? (json_string_value(v) ? json_string_value(v) : "") : NULL;
}

/* What params._meta lacks of a modern request's, as mcp_modern_meta_missing says. */
static const char *meta_missing(const json_t *params)
{
	const json_t *meta = json_object_get(params, "_meta");

	if (!json_is_string(json_object_get(meta, MCP_META_VERSION)))
		return "protocolVersion";
	if (!json_is_object(json_object_get(meta, MCP_META_CAPABILITIES)))
		return "clientCapabilities";
	return NULL;
}

const char *mcp_modern_meta_missing(const json_t *msg)
{
	return meta_missing(json_object_get(msg, "params"));
}

/* A JSON-RPC error response (new reference); data is not stolen. */
static json_t *error_doc(const json_t *id, int code, const char *msg, json_t *data)
{
	json_t *e = json_pack("{s:i, s:o}", "code", code, "message", mcp_json_text(msg));

	if (data)
		json_object_set(e, "data", data);
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "error", e);
}

json_t *mcp_error(const json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_doc(id, code, msg, NULL);
}

enum smr_rc mcp_call_local(void *ops_ctx, const char *op, const json_t *params,
			   json_t **result, struct smr_err *err)
{
	return api_call(ops_ctx, op, params, result, err);
}

struct mcp_session *mcp_session_new(mcp_call_fn call, void *cls, const char *default_author)
{
	struct mcp_session *s = xcalloc(1, sizeof(*s));

	s->call = call;
	s->cls = cls;
	s->default_author = default_author && *default_author ? xstrdup(default_author) : NULL;
	mcp_tools_enable(s);
	return s;
}

void mcp_session_rebind(struct mcp_session *s, mcp_call_fn call, void *cls)
{
	s->call = call;
	s->cls = cls;
}

void mcp_session_free(struct mcp_session *s)
{
	if (!s)
		return;
	free(s->default_author);
	free(s->client_name);
	mcp_subs_free(s);
	json_decref(s->last_doc);
	json_decref(s->last_result);
	free(s->last_result_text);
	free(s);
}

static json_t *server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", "smriti", "title", "Smriti",
			 "version", SMRITI_VERSION);
}

static json_t *m_initialize(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const json_t *info = json_object_get(params, "clientInfo");
	const char *name = json_string_value(json_object_get(info, "name"));
	const char *use = legacy_supported(want) ? want : MCP_LATEST_VERSION;
	json_t *result;

	if (!want)
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "initialize needs a string 'protocolVersion'");
	snprintf(s->protocol, sizeof(s->protocol), "%s", use);
	free(s->client_name);
	s->client_name = name && *name ? xstrdup(name) : NULL;
	result = json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}}, s:o, s:s}",
			   "protocolVersion", use,
			   "capabilities", "tools", "listChanged", 0,
			   "resources", "subscribe", s->can_notify, "listChanged", 0,
			   "serverInfo", server_info(), "instructions", instructions);
	mcp_prompts_capabilities(json_object_get(result, "capabilities"));
	return result;
}

/*
 * server/discover (2026-07-28 server/discover): what a modern client needs
 * instead of initialize.  Only the modern revision is offered: a client
 * that speaks only 2025-11-25 uses initialize.
 */
static json_t *m_discover(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	json_t *result;

	(void)params;
	(void)fail;
	result = json_pack("{s:[s], s:{s:{s:b}, s:{s:b, s:b}}, s:s}",
			   "supportedVersions", MCP_MODERN_VERSION,
			   "capabilities", "tools", "listChanged", 0,
			   "resources", "subscribe", s->can_listen, "listChanged", 0,
			   "instructions", instructions);
	mcp_prompts_capabilities(json_object_get(result, "capabilities"));
	return result;
}

static json_t *m_ping(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	(void)s;
	(void)params;
	(void)fail;
	return json_object();
}

/* Method flags; 0 is a method of both eras that answers with a result. */
#define M_LEGACY 1u       /* 2025-11-25 and before only */
#define M_MODERN 2u       /* 2026-07-28 only */
#define M_MESSAGE 4u      /* answers with a message of its own (listen's acknowledgement) */
/* Results with cache hints: ttlMs given, or resources/read's own (M_CACHE_READ). */
#define M_CACHE_PUBLIC 8u
#define M_CACHE_PRIVATE 16u
#define M_CACHE_READ 32u

static const struct {
	const char *name;
	mcp_method_fn fn;
	unsigned flags;
	int ttl_ms;
} methods[] = {
	{ "initialize", m_initialize, M_LEGACY, 0 },
	{ "server/discover", m_discover, M_CACHE_PUBLIC, TTL_STATIC },
	{ "ping", m_ping, M_LEGACY, 0 },
	{ "tools/list", mcp_tools_list, M_CACHE_PUBLIC, TTL_STATIC },
	{ "tools/call", mcp_tools_call, 0, 0 },
	{ "resources/list", mcp_resources_list, M_CACHE_PRIVATE, 0 },
	{ "resources/read", mcp_resources_read, M_CACHE_READ, 0 },
	{ "resources/templates/list", mcp_resources_templates, M_CACHE_PUBLIC, TTL_STATIC },
	{ "resources/subscribe", mcp_resources_subscribe, M_LEGACY, 0 },
	{ "resources/unsubscribe", mcp_resources_unsubscribe, M_LEGACY, 0 },
	{ "subscriptions/listen", mcp_subscriptions_listen, M_MODERN | M_MESSAGE, 0 },
	{ "prompts/list", mcp_prompts_list, M_CACHE_PUBLIC, TTL_STATIC },
	{ "prompts/get", mcp_prompts_get, M_CACHE_PRIVATE, 0 },
	{ "completion/complete", mcp_completion_complete, 0, 0 },
};

#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

/* The method's index for a request of this era, or -1. */
static int find_method(const char *name, int modern)
{
	for (size_t i = 0; i < NMETHODS; i++)
		if (!strcmp(methods[i].name, name))
			return methods[i].flags & (modern ? M_LEGACY : M_MODERN) ? -1 : (int)i;
	return -1;
}

static int is_full_hash_uri(const char *uri)
{
	static const char prefix[] = "smriti://checkpoints/";
	size_t n = sizeof(prefix) - 1;

	return uri && !strncmp(uri, prefix, n) && strspn(uri + n, "0123456789abcdef") == 64 &&
	       (!uri[n + 64] || !strcmp(uri + n + 64, ".json") || !strcmp(uri + n + 64, "?format=json"));
}

/*
 * What a modern result carries besides its own fields: resultType, the
 * server's identity and the cache hints of its method.  A checkpoint read
 * by its full hash never changes; HEAD and the lists change with any write.
 * The session's last tool result may be the very result given again: its
 * kept text is dropped when this adds to it.
 */
static void add_modern_fields(struct mcp_session *s, size_t m, const json_t *params,
			      json_t *result)
{
	unsigned flags = methods[m].flags;
	json_t *meta = json_object_get(result, "_meta");

	if (json_object_get(result, "resultType"))
		return;
	if (result == s->last_result) {
		free(s->last_result_text);
		s->last_result_text = NULL;
	}
	json_object_set_new(result, "resultType", json_string("complete"));
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, MCP_META_SERVER, server_info());
	if (!(flags & (M_CACHE_PUBLIC | M_CACHE_PRIVATE | M_CACHE_READ)))
		return;
	json_object_set_new(result, "ttlMs", json_integer(
		flags & M_CACHE_READ && is_full_hash_uri(json_string_value(
			json_object_get(params, "uri"))) ? TTL_IMMUTABLE : methods[m].ttl_ms));
	json_object_set_new(result, "cacheScope",
			    json_string(flags & M_CACHE_PUBLIC ? "public" : "private"));
}

/* A modern request's client names itself on each request, if at all. */
static void adopt_client(struct mcp_session *s, const json_t *params)
{
	const json_t *info = json_object_get(json_object_get(params, "_meta"), MCP_META_CLIENT);
	const char *name = json_string_value(json_object_get(info, "name"));

	if (!name || !*name || (s->client_name && !strcmp(s->client_name, name)))
		return;
	free(s->client_name);
	s->client_name = xstrdup(name);
}

/* -32022 for a modern request at a revision this server does not speak. */
static json_t *unsupported_version(const json_t *id, const json_t *requested)
{
	json_t *e = mcp_error(id, MCP_UNSUPPORTED_VERSION,
			      "Unsupported protocol version: this server speaks " MCP_MODERN_VERSION
			      " (and, after initialize, " MCP_LATEST_VERSION " and older)");

	json_object_set_new(json_object_get(e, "error"), "data", json_pack(
		"{s:[s], s:O}", "supported", MCP_MODERN_VERSION, "requested", requested));
	return e;
}

/* Runs a request whose envelope is valid; returns its response. */
static json_t *run_request(struct mcp_session *s, const json_t *id, const char *method,
			   const json_t *params)
{
	struct mcp_fail fail = { 0, "", NULL };
	const json_t *version = request_meta_version(params);
	const char *modern = json_string_value(version);
	int m = find_method(method, version != NULL);
	json_t *result, *resp;

	if (version && (!modern || strcmp(modern, MCP_MODERN_VERSION)))
		return unsupported_version(id, version);
	if (modern && meta_missing(params))
		return mcp_error(id, MCP_INVALID_PARAMS, "invalid params: a %s request carries"
				 " params._meta with io.modelcontextprotocol/%s", MCP_MODERN_VERSION,
				 meta_missing(params));
	if (m < 0)
		return mcp_error(id, MCP_METHOD_NOT_FOUND, "method not found: '%s'", method);
	if (params && !json_is_object(params))
		return mcp_error(id, MCP_INVALID_PARAMS, "invalid params: 'params' must be an object");
	if (modern)
		adopt_client(s, params);
	s->req_version = modern;
	s->req_id = id;
	result = methods[m].fn(s, params, &fail);
	s->req_version = NULL;
	s->req_id = NULL;
	if (!result) {
		if (modern && fail.code == MCP_RESOURCE_NOT_FOUND)
			fail.code = MCP_INVALID_PARAMS;
		resp = error_doc(id, fail.code, fail.msg, fail.data);
		json_decref(fail.data);
		return resp;
	}
	if (methods[m].flags & M_MESSAGE)
		return result;
	if (modern)
		add_modern_fields(s, (size_t)m, params, result);
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* A notification: only the cancellation of a subscriptions/listen does anything. */
static json_t *take_notification(struct mcp_session *s, const char *method, const json_t *params)
{
	if (!strcmp(method, "notifications/cancelled"))
		mcp_listen_cancel(s, json_object_get(params, "requestId"));
	return NULL;
}

static int valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_number(id);
}

json_t *mcp_handle(struct mcp_session *s, const json_t *msg)
{
	const json_t *id = json_object_get(msg, "id");
	const json_t *method = json_object_get(msg, "method");
	const char *jsonrpc = json_string_value(json_object_get(msg, "jsonrpc"));

	if (!json_is_object(msg))
		return mcp_error(NULL, MCP_INVALID_REQUEST,
				 "invalid request: a message must be one JSON object"
				 " (batches are not supported)");
	if (id && !valid_id(id))
		return mcp_error(NULL, MCP_INVALID_REQUEST,
				 "invalid request: 'id' must be a string or a number");
	if (!method && id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
		return NULL;    /* a client response; this server sends no requests */
	if (!id && json_is_string(method))    /* never answered (initialized, cancelled, ...) */
		return take_notification(s, json_string_value(method), json_object_get(msg, "params"));
	if (!jsonrpc || strcmp(jsonrpc, "2.0"))
		return mcp_error(id, MCP_INVALID_REQUEST,
				 "invalid request: 'jsonrpc' must be \"2.0\"");
	if (!method)
		return mcp_error(id, MCP_INVALID_REQUEST, "invalid request: no 'method'");
	if (!json_is_string(method))
		return mcp_error(id, MCP_INVALID_REQUEST,
				 "invalid request: 'method' must be a string");
	return run_request(s, id, json_string_value(method), json_object_get(msg, "params"));
}

/* Serializes resp (one line); caller free()s. */
static char *dump(const json_t *resp, size_t *len)
{
	char *out = json_dumps(resp, JSON_COMPACT);

	if (!out)
		BUG("cannot serialise a JSON-RPC response");
	*len = strlen(out);
	return out;
}

/*
 * Keeps a response under MCP_MAX_MESSAGE, the most a client's line buffer
 * takes: first the text copy of structuredContent gives way to a note,
 * then the whole result to a -32603 error saying the call itself ran.
 * Returns the serialized response; caller free()s.
 */
static char *dump_fitting(json_t *resp)
{
	json_t *sc = json_object_get(json_object_get(resp, "result"), "structuredContent");
	json_t *text = json_array_get(json_object_get(json_object_get(resp, "result"), "content"), 0);
	size_t len, first;
	char *out = dump(resp, &len);
	json_t *e;

	if (len <= MCP_MAX_MESSAGE)
		return out;
	free(out);
	first = len;
	if (sc && json_is_object(text)) {
		json_object_set_new(text, "text", json_sprintf(
			"(the result is the JSON in structuredContent; its text copy was left out to"
			" stay under the %zu-byte message limit)", MCP_MAX_MESSAGE));
		out = dump(resp, &len);
		if (len <= MCP_MAX_MESSAGE)
			return out;
		free(out);
	}
	e = mcp_error(json_object_get(resp, "id"), MCP_INTERNAL_ERROR,
		      "the result is %zu bytes, over the %zu-byte message limit; the call itself"
		      " ran: ask for less (a smaller limit, another ref)", first, MCP_MAX_MESSAGE);
	out = dump(e, &len);
	json_decref(e);
	return out;
}

/*
 * resp serialized with the session's text of its last tool result when resp
 * carries that result (see struct mcp_session); NULL when it does not.
 * Caller free()s.
 */
static char *cached_line(struct mcp_session *s, const json_t *resp)
{
	const json_t *id = json_object_get(resp, "id");
	char *idtext, *out;

	if (!s->last_result || json_object_get(resp, "result") != s->last_result || !id)
		return NULL;
	if (!s->last_result_text) {
		s->last_result_text = json_dumps(s->last_result, JSON_COMPACT);
		if (!s->last_result_text)
			BUG("cannot serialise a JSON-RPC result");
	}
	idtext = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!idtext)
		BUG("cannot serialise a JSON-RPC id");
	out = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}", idtext,
			s->last_result_text);
	free(idtext);
	return out;
}

char *mcp_handle_text(struct mcp_session *s, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
	json_t *resp;
	char *out;

	if (!msg)
		resp = mcp_error(NULL, MCP_PARSE_ERROR, "parse error: %s (at byte %d)", jerr.text,
				 jerr.position);
	else
		resp = mcp_handle(s, msg);
	json_decref(msg);
	if (!resp)
		return NULL;
	out = cached_line(s, resp);
	if (!out)
		out = dump_fitting(resp);
	json_decref(resp);
	return out;
}
