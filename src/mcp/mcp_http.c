/*
 * mcp_http.c -- MCP's Streamable HTTP transport (2025-11-25 and 2026-07-28)
 * as functions the HTTP server calls for its /mcp route; it knows nothing
 * of libmicrohttpd.  See mcp_http_handle() in mcp.h for the contract.
 *
 * The transport is stateless: every POST carries one JSON-RPC message and
 * gets a fresh protocol session, so any worker can answer any request and
 * no Mcp-Session-Id is issued (2026-07-28 has none; a 2025-11-25 server may
 * do without).  Responses are single JSON objects, except the one stream a
 * modern subscriptions/listen opens (the server's, src/http/mcp_listen.c):
 * GET, which would open a 2025-11-25 server-to-client stream, and DELETE,
 * which would end a session, answer 405.  A modern request must repeat its
 * revision, method and name in the MCP-Protocol-Version, Mcp-Method and
 * Mcp-Name headers, checked against its body (-32020 when they disagree).
 * Refusals carry a JSON-RPC error body with id null, as the SDK's reference
 * server does.  Returned json_t * are new references.
 */
#include "mcp/mcp_int.h"

#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/xalloc.h"

#define MCP_SERVER_ERROR -32000

static void set_body(struct mcp_http_response *resp, int status, json_t *doc)
{
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = json_dumps(doc, JSON_COMPACT);
	if (!resp->body)
		BUG("cannot serialise an MCP response");
	resp->body_len = strlen(resp->body);
	json_decref(doc);
}

static json_t *refuse(int *status, int code, const char *msg)
{
	*status = code;
	return mcp_error(NULL, MCP_SERVER_ERROR, "%s", msg);
}

static void add_header(struct mcp_http_response *resp, const char *name, const char *value)
{
	for (size_t i = 0; i < MCP_HTTP_MAX_HEADERS; i++) {
		if (!resp->headers[i][0]) {
			resp->headers[i][0] = name;
			resp->headers[i][1] = value;
			return;
		}
	}
}

static const char *header(const struct mcp_http_request *req, const char *name)
{
	return req->header ? req->header(req->header_cls, name) : NULL;
}

/*
 * A browser sends Origin; other clients usually do not.  Without the
 * server's own rule (req->origin_ok), an Origin must be the same origin as
 * the request's Host (the server checks Host against its own names first,
 * which stops DNS rebinding).
 */
static int origin_ok(const struct mcp_http_request *req, const char *origin)
{
	const char *host = header(req, "Host"), *authority;

	if (!origin)
		return 1;
	if (req->origin_ok)
		return req->origin_ok(req->origin_cls, origin);
	if (!host)
		return 0;
	if (!strncasecmp(origin, "http://", 7))
		authority = origin + 7;
	else if (!strncasecmp(origin, "https://", 8))
		authority = origin + 8;
	else
		return 0;
	return !strcasecmp(authority, host);
}

/* Compares in time that depends only on the lengths. */
static int same_secret(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned char diff = n != m;

	for (size_t i = 0; i < n && i < m; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return !diff;
}

static int token_ok(const char *want, const char *auth)
{
	if (!want || !*want)
		return 1;
	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return 0;
	auth += 7;
	while (*auth == ' ')
		auth++;
	return same_secret(auth, want);
}

/* 1 if a media range of the Accept list s (essence only) covers type/sub. */
static int accepts(const char *s, const char *type, const char *sub)
{
	size_t tn = strlen(type), sn = strlen(sub);
	const char *p = s, *end;
	size_t n;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		end = p + strcspn(p, ",;");
		n = (size_t)(end - p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((n == 3 && !strncmp(p, "*/*", 3)) ||
		    (n == tn + 2 && !strncasecmp(p, type, tn) && !strncmp(p + tn, "/*", 2)) ||
		    (n == tn + 1 + sn && !strncasecmp(p, type, tn) && p[tn] == '/' &&
		     !strncasecmp(p + tn + 1, sub, sn)))
			return 1;
		p = strchr(end, ',');
	}
	return 0;
}

static int is_json_type(const char *ct)
{
	size_t n;

	if (!ct)
		return 0;
	n = strcspn(ct, "; \t");
	return n == 16 && !strncasecmp(ct, "application/json", 16);
}

/*
 * 400 with UnsupportedProtocolVersionError for a legacy-shaped request
 * whose header names a revision this server does not speak, naming every
 * one it does (a modern request gets its own from mcp.c, which lists what
 * server/discover lists).
 */
static json_t *unsupported(const json_t *msg, int *status, const char *version)
{
	const json_t *id = json_object_get(msg, "id");
	json_t *e = mcp_error(id && (json_is_string(id) || json_is_number(id)) ? id : NULL,
			      MCP_UNSUPPORTED_VERSION,
			      "bad request: unsupported MCP-Protocol-Version");
	json_t *all = json_pack("[s]", MCP_MODERN_VERSION);

	for (size_t i = 0; mcp_versions[i]; i++)
		json_array_append_new(all, json_string(mcp_versions[i]));
	json_object_set_new(json_object_get(e, "error"), "data", json_pack(
		"{s:o, s:o}", "supported", all, "requested", mcp_json_text(version)));
	*status = 400;
	return e;
}

json_t *mcp_http_refusal(const struct mcp_http_request *req, int *status)
{
	const char *accept = header(req, "Accept");

	if (!origin_ok(req, header(req, "Origin")))
		return refuse(status, 403, "forbidden: cross-origin requests to /mcp are refused");
	if (!token_ok(req->token, header(req, "Authorization")))
		return refuse(status, 401, "unauthorized: missing or wrong bearer token");
	if (!req->method || strcmp(req->method, "POST"))
		return refuse(status, 405, "method not allowed: /mcp takes POST (this server"
				   " opens no SSE stream and keeps no sessions)");
	if (!accept || !accepts(accept, "application", "json") ||
	    !accepts(accept, "text", "event-stream"))
		return refuse(status, 406, "not acceptable: the client must accept both"
				   " application/json and text/event-stream");
	if (!is_json_type(header(req, "Content-Type")))
		return refuse(status, 415, "unsupported media type: the body must be"
				   " application/json");
	return NULL;
}

static int is_request(const json_t *msg)
{
	return json_is_object(msg) && json_object_get(msg, "method") &&
	       json_object_get(msg, "id");
}

/* A header value without the whitespace around it (RFC 9110 5.5); caller free()s. */
static char *trimmed(const char *v)
{
	size_t n;

	v += strspn(v, " \t");
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return xstrndup(v, n);
}

/* 1 when header value h (NULL: absent) is body value b (NULL: none). */
static int same_value(const char *h, const char *b)
{
	char *t;
	int same;

	if (!h || !b)
		return 0;
	t = trimmed(h);
	same = !strcmp(t, b);
	free(t);
	return same;
}

/*
 * The value of Mcp-Name as sent: plain, or "=?base64?...?=" (2026-07-28
 * "Value Encoding") decoded.  NULL when the encoding is broken; caller
 * free()s.
 */
static char *header_value(const char *sent)
{
	char *v = trimmed(sent), *out;
	size_t n = strlen(v), out_len;
	struct base64_decode_ctx b64;

	if (n < 11 || strncmp(v, "=?base64?", 9) || strcmp(v + n - 2, "?="))
		return v;
	out = xmalloc(BASE64_DECODE_LENGTH(n) + 1);
	base64_decode_init(&b64);
	if (!base64_decode_update(&b64, &out_len, (uint8_t *)out, n - 11, v + 9) ||
	    !base64_decode_final(&b64) || memchr(out, '\0', out_len)) {
		free(out);
		free(v);
		return NULL;
	}
	out[out_len] = '\0';
	free(v);
	return out;
}

/* The body value Mcp-Name mirrors, for the methods that have one. */
static const char *named(const json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *params = json_object_get(msg, "params");

	if (!method)
		return NULL;
	if (!strcmp(method, "tools/call") || !strcmp(method, "prompts/get"))
		return json_string_value(json_object_get(params, "name"));
	if (!strcmp(method, "resources/read"))
		return json_string_value(json_object_get(params, "uri"));
	return NULL;
}

static json_t *mismatch(const json_t *msg, int *status, const char *what, const char *hv,
			const char *bv)
{
	const json_t *id = json_object_get(msg, "id");

	*status = 400;
	return mcp_error(id && (json_is_string(id) || json_is_number(id)) ? id : NULL,
			 MCP_HEADER_MISMATCH, "Header mismatch: %s header value '%.200s' does not"
			 " match body value '%.200s'", what, hv ? hv : "(none)", bv ? bv : "(none)");
}

/*
 * A request sent as 2026-07-28 (by its header) whose params._meta lacks
 * the revision or the client's capabilities: -32602 with status 400, not a
 * header mismatch, for the body is what is wrong (SEP-2575).
 */
static json_t *meta_missing(const json_t *msg, int *status)
{
	const json_t *id = json_object_get(msg, "id");

	*status = 400;
	return mcp_error(id && (json_is_string(id) || json_is_number(id)) ? id : NULL,
			 MCP_INVALID_PARAMS, "invalid params: a %s request carries params._meta with"
			 " io.modelcontextprotocol/%s", MCP_MODERN_VERSION,
			 mcp_modern_meta_missing(msg));
}

/*
 * A modern request's headers against its body (2026-07-28 "Server
 * Validation"): NULL when they agree, else the -32020 error with *status
 * 400.  A legacy request (no revision in its body, none or a legacy one in
 * the header) is not checked: its client sends no such headers.
 */
static json_t *check_mirrors(const struct mcp_http_request *req, const json_t *msg,
			     int *status)
{
	const char *hversion = header(req, "MCP-Protocol-Version");
	const char *bversion = mcp_request_version(msg);
	const char *hmethod = header(req, "Mcp-Method"), *hname = header(req, "Mcp-Name");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *name = named(msg);
	char *decoded;
	json_t *e = NULL;

	if (!bversion && !same_value(hversion, MCP_MODERN_VERSION))
		return NULL;
	if (same_value(hversion, MCP_MODERN_VERSION) && mcp_modern_meta_missing(msg))
		return meta_missing(msg, status);
	if (!same_value(hversion, bversion))
		return mismatch(msg, status, "MCP-Protocol-Version", hversion, bversion);
	if (!is_request(msg))
		return NULL;
	if (!same_value(hmethod, method))
		return mismatch(msg, status, "Mcp-Method", hmethod, method);
	if (!name)
		return NULL;
	decoded = hname ? header_value(hname) : NULL;
	if (!decoded || strcmp(decoded, name))
		e = mismatch(msg, status, "Mcp-Name", hname, name);
	free(decoded);
	return e;
}

/* The HTTP status of a response: modern requests get 404 and 400 for their errors. */
static int status_of(const json_t *msg, const json_t *err)
{
	json_int_t code = json_integer_value(json_object_get(err, "code"));

	if (code == MCP_INVALID_REQUEST || code == MCP_UNSUPPORTED_VERSION)
		return 400;
	if (code == MCP_METHOD_NOT_FOUND && mcp_request_version(msg))
		return 404;
	return 200;
}

json_t *mcp_http_answer(mcp_call_fn call, void *cls, const struct mcp_http_request *req,
			const json_t *msg, int *status, struct mcp_session **keep)
{
	struct mcp_session *s;
	const char *version = header(req, "MCP-Protocol-Version");
	json_t *out;
	const json_t *err;

	/* after the body is read, so that the error can carry the request's id */
	if (version && !mcp_version_supported(version) && !mcp_request_version(msg))
		return unsupported(msg, status, version);
	out = check_mirrors(req, msg, status);
	if (out)
		return out;
	s = mcp_session_new(call, cls, NULL);
	s->can_listen = keep != NULL;
	out = mcp_handle(s, msg);
	err = json_object_get(out, "error");
	if (keep && out && json_object_get(out, "method"))
		*keep = s;      /* a listen's acknowledgement: its session goes on */
	else
		mcp_session_free(s);
	*status = 202;
	if (!out)
		return NULL;
	if (!is_request(msg) && !err) {
		json_decref(out);
		return NULL;
	}
	*status = status_of(msg, err);
	return out;
}

void mcp_http_handle(mcp_call_fn call, void *cls, const struct mcp_http_request *req,
		     struct mcp_http_response *resp)
{
	json_error_t jerr;
	json_t *msg, *out;
	int status = 0;

	memset(resp, 0, sizeof(*resp));
	out = mcp_http_refusal(req, &status);
	if (out) {
		if (status == 401)
			add_header(resp, "WWW-Authenticate", "Bearer");
		if (status == 405)
			add_header(resp, "Allow", "POST");
		set_body(resp, status, out);
		return;
	}
	if (req->body_len > MCP_MAX_MESSAGE) {
		set_body(resp, 413, mcp_error(NULL, MCP_SERVER_ERROR,
					      "payload too large: a message is at most 10 MiB"));
		return;
	}
	msg = json_loadb(req->body ? req->body : "", req->body_len, JSON_DECODE_ANY, &jerr);
	if (!msg) {
		set_body(resp, 400, mcp_error(NULL, MCP_PARSE_ERROR, "parse error: %s", jerr.text));
		return;
	}
	out = mcp_http_answer(call, cls, req, msg, &status, NULL);
	json_decref(msg);
	if (out)
		set_body(resp, status, out);
	else
		resp->status = status;
}
