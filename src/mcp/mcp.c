/*
 * mcp.c -- the transport-independent MCP protocol core: JSON-RPC 2.0
 * message checks, the method table, version negotiation, initialize and
 * ping.  Tools, resources and prompts live in mcp_tools.c, mcp_resources.c
 * and mcp_prompts.c.
 *
 * Message rules (MCP 2025-11-25 over JSON-RPC 2.0):
 *   - a request has "jsonrpc":"2.0", a string or number id (0 is valid) and
 *     a string method; its response echoes the id exactly;
 *   - a notification has no id and never gets a reply, not even an error;
 *   - a message with an id and result/error but no method is the client's
 *     response to a server request; this server sends none, so it is dropped;
 *   - an unknown method gets -32601 at once (so 2026 clients that try
 *     server/discover first fall back to initialize without waiting).
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

int mcp_version_supported(const char *v)
{
	for (size_t i = 0; v && mcp_versions[i]; i++)
		if (!strcmp(v, mcp_versions[i]))
			return 1;
	return 0;
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

static json_t *m_initialize(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const json_t *info = json_object_get(params, "clientInfo");
	const char *name = json_string_value(json_object_get(info, "name"));
	const char *use = mcp_version_supported(want) ? want : MCP_LATEST_VERSION;
	json_t *result;

	if (!want)
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "initialize needs a string 'protocolVersion'");
	snprintf(s->protocol, sizeof(s->protocol), "%s", use);
	free(s->client_name);
	s->client_name = name && *name ? xstrdup(name) : NULL;
	result = json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}}, s:{s:s, s:s, s:s}, s:s}",
			   "protocolVersion", use,
			   "capabilities", "tools", "listChanged", 0,
			   "resources", "subscribe", s->can_notify, "listChanged", 0,
			   "serverInfo", "name", "smriti", "title", "Smriti",
			   "version", SMRITI_VERSION,
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

static const struct {
	const char *name;
	mcp_method_fn fn;
} methods[] = {
	{ "initialize", m_initialize },
	{ "ping", m_ping },
	{ "tools/list", mcp_tools_list },
	{ "tools/call", mcp_tools_call },
	{ "resources/list", mcp_resources_list },
	{ "resources/read", mcp_resources_read },
	{ "resources/templates/list", mcp_resources_templates },
	{ "resources/subscribe", mcp_resources_subscribe },
	{ "resources/unsubscribe", mcp_resources_unsubscribe },
	{ "prompts/list", mcp_prompts_list },
	{ "prompts/get", mcp_prompts_get },
	{ "completion/complete", mcp_completion_complete },
};

static mcp_method_fn find_method(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(methods[i].name, name))
			return methods[i].fn;
	return NULL;
}

/* Runs a request whose envelope is valid; returns its response. */
static json_t *run_request(struct mcp_session *s, const json_t *id, const char *method,
			   const json_t *params)
{
	struct mcp_fail fail = { 0, "", NULL };
	mcp_method_fn fn = find_method(method);
	json_t *result, *resp;

	if (!fn)
		return mcp_error(id, MCP_METHOD_NOT_FOUND, "method not found: '%s'", method);
	if (params && !json_is_object(params))
		return mcp_error(id, MCP_INVALID_PARAMS, "invalid params: 'params' must be an object");
	result = fn(s, params, &fail);
	if (!result) {
		resp = error_doc(id, fail.code, fail.msg, fail.data);
		json_decref(fail.data);
		return resp;
	}
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
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
	if (!id && json_is_string(method))
		return NULL;    /* notification: never answered (initialized, cancelled, ...) */
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
