/*
 * openapi.c -- the OpenAPI 3.1 document served at /openapi.json.
 *
 * Paths come from http_routes[] itself (pattern, method, summary, success
 * status, schema names, query parameters), with the errors each route's
 * operation can give from route_errors below, so a route cannot exist
 * without being documented; the component
 * schemas below describe the bodies exactly: every property a response has
 * is listed, required and typed, and objects the server builds are closed
 * (additionalProperties: false), so that validating a response proves
 * something.  Request bodies are closed where the server refuses unknown
 * keys.  tests/js/openapi.test.mjs validates the document with
 * swagger-parser, and the HTTP tests validate every response they receive
 * against its route's schema (tests/js/http-helpers.mjs), so the document
 * cannot drift from the server.
 */
#include "http/http_int.h"
#include "ops/decl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the API's bearer scheme admits; the schemas come from the operations' declarations. */
static json_t *openapi_components(const json_t *decl)
{
	json_t *schemas = decl_rebase(json_object_get(decl, "$defs"), "#/components/schemas/");

	return json_pack("{s:{s:{s:s, s:s, s:s}}, s:o}", "securitySchemes", "bearer", "type",
			 "http", "scheme", "bearer", "description",
			 "Required on every route but /healthz, /v4/auth and the web UI's files when"
			 " the server runs with SMRITI_TOKEN (the web UI's cookie from POST /v4/auth"
			 " also admits)", "schemas", schemas);
}

static const json_t *declared_route(const json_t *decl, const struct http_route *r);

static json_t *ref(const char *schema)
{
	char path[96];

	snprintf(path, sizeof(path), "#/components/schemas/%s", schema);
	return json_pack("{s:s}", "$ref", path);
}

static json_t *json_content(const char *schema)
{
	const char *type = !strcmp(schema, "Html")    ? "text/html" :
			   !strcmp(schema, "Metrics") ? "text/plain" : "application/json";

	return json_pack("{s:{s:o}}", type, "schema", ref(schema));
}

/* The routes that run no operation: the server's own, named here. */
static const struct {
	const char *method, *pattern, *id;
} own_routes[] = {
	{ "GET", "/", "getWebUi" },
	{ "GET", "/ui/{name}", "getWebUiFile" },
	{ "GET", "/healthz", "getHealth" },
	{ "GET", "/metrics", "getMetrics" },
	{ "GET", "/openapi.json", "getOpenApi" },
	{ "POST", "/api/ops/{op}", "runOperation" },
	{ "POST", "/mcp", "postMcp" },
	{ "GET", "/v4/auth", "getAuth" },
	{ "POST", "/v4/auth", "signIn" },
	{ "DELETE", "/v4/auth", "signOut" },
};

/* The declaration's {method, path, operationId, ...} of route r; NULL when it has none. */
static const json_t *declared_route(const json_t *decl, const struct http_route *r)
{
	return decl_http(decl, r->doc.op, r->method, r->pattern);
}

/* "getHead": what the declarations (or own_routes) name the route. */
static json_t *operation_id(const json_t *decl, const struct http_route *r)
{
	const json_t *h = declared_route(decl, r);

	if (h)
		return json_incref(json_object_get(h, "operationId"));
	for (size_t i = 0; i < sizeof(own_routes) / sizeof(own_routes[0]); i++)
		if (!strcmp(own_routes[i].method, r->method) &&
		    !strcmp(own_routes[i].pattern, r->pattern))
			return json_string(own_routes[i].id);
	BUG("route %s %s has no operationId: declare its operation's http", r->method,
	    r->pattern);
}

/* The tag of r's area: its operation's declared tag, else the server's own. */
static const char *route_tag(const json_t *decl, const struct http_route *r)
{
	const json_t *op = json_object_get(json_object_get(decl, "operations"),
					   r->doc.op ? r->doc.op : "");
	const char *tag = json_string_value(json_object_get(op, "tag"));

	return tag ? tag : "Server";
}

/* ---- parameters ---- */

struct param_doc {
	const char *prefix;      /* of the route pattern */
	const char *name;
	const char *example;
	const char *description;
};

/* What a path segment holds, by the route it is in (first match wins). */
static const struct param_doc path_params[] = {
	{ "/api/ops/", "op", "head", "an operation name (docs/http.md lists them)" },
	{ "/ui/", "name", "app.js", "a file of the web UI" },
	{ "/v4/repos/", "id", "demo", "a Space's id or name" },
	{ "/repos/", "id", "demo", "a Space's id or name" },
	{ "/v4/sessions/", "id", "5b0f8a4e-3c1d-4f7a-9e2b-6d8c1a0f4e21", "a session id" },
	{ "/v4/generations/", "id", "2c7e9a14-8b3d-4f60-a1e5-7d9b3c2f8e06", "a generation id" },
	{ "/v5/sessions/", "id", "5b0f8a4e-3c1d-4f7a-9e2b-6d8c1a0f4e21", "a session id" },
	{ "/v5/checkpoints/draft/", "job_id", "9d2c4b7e-1a3f-4e8b-b6d0-2f5a7c9e1b34",
	  "a draft job id" },
	{ "/", "hash", "3f9a0c12",
	  "a checkpoint hash or a unique prefix of it (4 to 64 hex digits)" },
	{ NULL, NULL, NULL, NULL },
};

/* The query parameters routes may name in their doc.query (a space-separated list). */
static const struct {
	const char *name, *type, *description;
	long minimum;            /* -1: none */
} query_params[] = {
	{ "limit", "integer", "at most this many (0 or absent: all)", 0 },
	{ "space", "string", "a Space's name (/v4/search: only that Space)", -1 },
	{ "q", "string", "the words to search for; \"a phrase\" in quotes, prefix* with a star", -1 },
	{ "field", "string", "only this field (decisions, assumptions, tasks, open_questions,"
	  " entities, artifacts, title, summary)", -1 },
	{ "author", "string", "only what this author wrote", -1 },
	{ "since", "string", "only what was written at or after this time (the forms of @{DATE})",
	  -1 },
	{ "until", "string", "only what was written at or before this time (the forms of @{DATE};"
	  " a date alone is that day's first second, its end is DATE 23:59:59)", -1 },
	{ "turns", "integer", "1: search chat turns too", 0 },
	{ "ref", "string", "a checkpoint reference (hash, prefix, SPACE, SPACE~N, SPACE@{N}, ...)",
	  -1 },
	{ "provider", "string", "the provider the send would use (default: the server's)", -1 },
	{ "model", "string", "the model the send would use (default: the provider's)", -1 },
	{ NULL, NULL, NULL, 0 },
};

static json_t *path_param(const struct http_route *r, const char *open)
{
	const char *close = strchr(open, '}');
	size_t n = (size_t)(close - open - 1);
	const struct param_doc *d;

	for (d = path_params; d->prefix; d++)
		if (!strncmp(r->pattern, d->prefix, strlen(d->prefix)) &&
		    strlen(d->name) == n && !strncmp(open + 1, d->name, n))
			break;
	if (!d->prefix)
		BUG("openapi.c has no description of the parameter of %s", r->pattern);
	return json_pack("{s:s%, s:s, s:b, s:s, s:{s:s}, s:s}", "name", open + 1, n, "in", "path",
			 "required", 1, "description", d->description, "schema", "type", "string",
			 "example", d->example);
}

static json_t *query_param(const char *name, size_t n)
{
	json_t *schema;

	for (size_t i = 0; query_params[i].name; i++) {
		if (strlen(query_params[i].name) != n || strncmp(query_params[i].name, name, n))
			continue;
		schema = json_pack("{s:s}", "type", query_params[i].type);
		if (query_params[i].minimum >= 0)
			json_object_set_new(schema, "minimum", json_integer(query_params[i].minimum));
		return json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", query_params[i].name, "in",
				 "query", "required", 0, "description", query_params[i].description,
				 "schema", schema);
	}
	BUG("openapi.c has no description of the query parameter '%.*s'", (int)n, name);
}

static json_t *parameters(const struct http_route *r)
{
	json_t *list = json_array();
	const char *open = strchr(r->pattern, '{');

	if (open)
		json_array_append_new(list, path_param(r, open));
	for (const char *q = r->doc.query; q && *q && strcmp(q, "*");) {
		size_t n = strcspn(q, " ");

		if (n)
			json_array_append_new(list, query_param(q, n));
		q += n + (q[n] == ' ');
	}
	return list;
}

/* ---- responses ---- */

static const struct {
	int status;
	const char *description;
} error_text[] = {
	{ 400, "Bad input: malformed JSON, a wrong type, a missing field, invalid UTF-8" },
	{ 401, "Missing or wrong bearer token (when the server has SMRITI_TOKEN)" },
	{ 403, "Forbidden: a cross-origin or cross-site write, a role too low, or a route that is"
	       " the administrator's" },
	{ 404, "No such Space, Checkpoint, session, job or operation" },
	{ 406, "The MCP client does not accept application/json and text/event-stream" },
	{ 409, "Conflict: the name is taken, or HEAD moved since the parent given" },
	{ 413, "The request body is larger than --max-body" },
	{ 414, "A path segment is too long" },
	{ 415, "The request body is not JSON" },
	{ 421, "The Host header does not name this server (DNS-rebinding defence)" },
	{ 422, "Well-formed but not acceptable: an empty Checkpoint, an unknown provider,"
	       " nothing to draft" },
	{ 500, "An internal error" },
	{ 501, "The operation is not in this build" },
	{ 502, "The language-model provider failed, or has no key" },
	{ 503, "The store is unavailable, the server is shutting down or busy" },
	{ 504, "The language-model provider timed out" },
	{ 0, NULL },
};

static const char *error_description(int status)
{
	for (size_t i = 0; error_text[i].status; i++)
		if (error_text[i].status == status)
			return error_text[i].description;
	BUG("openapi.c has no description of status %d", status);
}

static int is_write(const char *method)
{
	return strcmp(method, "GET") && strcmp(method, "HEAD");
}

/*
 * The error body of a status on route r: MCP answers its own refusals as
 * JSON-RPC, chat.send's provider failures carry the user turn, a merge's
 * conflicts are named beside the error.
 */
static const char *error_schema(const struct http_route *r, int status)
{
	if (!strcmp(r->pattern, "/mcp") && status != 421 && status != 413 && status != 500 &&
	    status != 503)
		return "ErrorOrJsonRpc";
	if ((!strcmp(r->pattern, "/v4/chat/send") || !strncmp(r->pattern, "/v4/sessions/{id}/", 18)) &&
	    (status == 502 || status == 504))
		return "ChatFailure";
	if (!strcmp(r->pattern, "/v4/repos/{id}/merge") && status == 409)
		return "MergeConflict";
	if (!strcmp(r->pattern, "/api/ops/{op}") && status != 421 && status != 401)
		return "OpError";
	return "Error";
}

static void add_error(json_t *responses, const struct http_route *r, int status)
{
	char key[8];

	snprintf(key, sizeof(key), "%d", status);
	if (json_object_get(responses, key))
		return;
	json_object_set_new(responses, key,
			    json_pack("{s:s, s:o}", "description", error_description(status),
				      "content", json_content(error_schema(r, status))));
}

/*
 * The error statuses each route's operation gives, beyond the ones every
 * route of its kind gets from the server's admission (add_errors).  A route
 * missing here documents a "default" error instead, whose shape the tests
 * still check; tests/js/openapi.test.mjs insists that none is missing.
 */
static const struct {
	const char *method, *pattern, *errors;
} route_errors[] = {
	{ "GET", "/", "" },
	{ "GET", "/ui/{name}", "404" },
	{ "GET", "/healthz", "" },
	{ "GET", "/metrics", "403 404" },
	{ "GET", "/openapi.json", "" },
	{ "POST", "/api/ops/{op}", "404 409 422 501 502 504" },
	{ "GET", "/v4/repos", "" },
	{ "POST", "/v4/repos", "409 422" },
	{ "GET", "/v4/repos/{id}", "404" },
	{ "PATCH", "/v4/repos/{id}", "404 409" },
	{ "DELETE", "/v4/repos/{id}", "404" },
	{ "GET", "/v4/repos/{id}/commits", "404" },
	{ "POST", "/v4/repos/{id}/handoff", "404 409 413 422" },
	{ "POST", "/v4/chat/send", "404 409 422 502 504" },
	{ "GET", "/v4/generations/{id}", "404" },
	{ "POST", "/v4/sessions/{id}/edit", "404 409 422 502 504" },
	{ "POST", "/v4/sessions/{id}/regenerate", "404 409 422 502 504" },
	{ "POST", "/v4/sessions/{id}/continue", "404 409 422 502 504" },
	{ "GET", "/repos/{id}/head", "404" },
	{ "GET", "/commits/{hash}", "404" },
	{ "POST", "/chat/commit", "404 409 422" },
	{ "POST", "/mcp", "404 406" },
	{ "POST", "/v5/checkpoints/{hash}/review", "404 422 502 504" },
	{ "GET", "/v4/auth", "" },
	{ "POST", "/v4/auth", "401" },
	{ "DELETE", "/v4/auth", "" },
	{ "GET", "/v4/changes", "404" },
	{ "GET", "/v4/sessions/{id}/context", "404 422" },
	{ "GET", "/v4/search", "404 413 422" },
	{ "GET", "/v4/blame", "404 422" },
	{ "GET", "/v4/repos/{id}/reflog", "404" },
	{ NULL, NULL, NULL },
};

/* route_errors' list for r, or NULL. */
static const char *errors_of(const struct http_route *r)
{
	if (r->run == http_declared)
		return "";          /* add_errors adds what the declaration lists */
	for (size_t i = 0; route_errors[i].method; i++)
		if (!strcmp(route_errors[i].method, r->method) &&
		    !strcmp(route_errors[i].pattern, r->pattern))
			return route_errors[i].errors;
	return NULL;
}

/*
 * The errors every route of its kind can give (the server's admission, see
 * server.c), then the ones its operation gives (route_errors).
 */
static void add_errors(json_t *responses, const struct http_route *r)
{
	const char *e = errors_of(r);

	add_error(responses, r, 421);
	add_error(responses, r, 500);
	if (!(r->flags & ROUTE_OPEN))
		add_error(responses, r, 401);
	if (strchr(r->pattern, '{')) {
		add_error(responses, r, 400);     /* a path that is not UTF-8 */
		add_error(responses, r, 414);
	}
	if (!(r->flags & ROUTE_NO_STORE) || (r->flags & ROUTE_BLOCKING))
		add_error(responses, r, 503);
	if (is_write(r->method)) {
		add_error(responses, r, 400);
		add_error(responses, r, 403);
		add_error(responses, r, 413);
		add_error(responses, r, 415);
		add_error(responses, r, 503);
	}
	if (r->doc.query)
		add_error(responses, r, 400);
	if (r->run == http_declared) {
		const json_t *h = declared_route(decl_all(), r), *x;
		size_t i;

		json_array_foreach(json_object_get(h, "errors"), i, x)
			add_error(responses, r, (int)json_integer_value(x));
		if (!strcmp(r->method, "GET") && json_object_size(json_object_get(json_object_get(
			decl_op(r->doc.op), "params"), "properties")))
			add_error(responses, r, 400);
	}
	if (!e) {
		json_object_set_new(responses, "default",
				    json_pack("{s:s, s:o}", "description", "an error", "content",
					      json_content("Error")));
		return;
	}
	while (*e) {
		char *end;
		long status = strtol(e, &end, 10);

		if (end == e)
			BUG("bad route_errors entry of %s %s", r->method, r->pattern);
		add_error(responses, r, (int)status);
		e = end + strspn(end, " ");
	}
}

static json_t *doc_schema(const json_t *schema);

/* The success body of r: the component it names, else its operation's declared result. */
static json_t *success_content(const json_t *decl, const struct http_route *r)
{
	const json_t *result = json_object_get(json_object_get(json_object_get(decl, "operations"),
							       r->doc.op ? r->doc.op : ""), "result");

	if (r->doc.result)
		return json_content(r->doc.result);
	if (!result)
		BUG("route %s %s names no result schema and its operation declares none", r->method,
		    r->pattern);
	return json_pack("{s:{s:o}}", "application/json", "schema", doc_schema(result));
}

static json_t *responses_of(const json_t *decl, const struct http_route *r)
{
	char status[8];
	json_t *responses = json_object(), *ok;

	snprintf(status, sizeof(status), "%d", r->doc.status);
	ok = json_pack("{s:s, s:o}", "description", "success", "content",
		       success_content(decl, r));
	json_object_set_new(responses, status, ok);
	if (r->doc.events)
		json_object_set_new(json_object_get(ok, "content"), "text/event-stream",
				    json_pack("{s:{s:s, s:s}}", "schema", "type", "string",
					      "description", !strcmp(r->pattern, "/mcp") ?
					      "a 2026-07-28 subscriptions/listen: JSON-RPC messages"
					      " as server-sent events (docs/mcp.md)" :
					      "server-sent events generation, delta...,"
					      " then done or error, each with an id (docs/http.md,"
					      " Streaming chat)"));
	if (!strcmp(r->pattern, "/mcp"))
		json_object_set_new(responses, "202",
				    json_pack("{s:s, s:o}", "description",
					      "a notification or a response was accepted; the body is {}",
					      "content", json_content("Accepted")));
	if (r->run == http_ui_index || r->run == http_ui_asset)
		json_object_set_new(responses, "304",
				    json_pack("{s:s}", "description",
					      "Not Modified: the If-None-Match given names this ETag"));
	add_errors(responses, r);
	return responses;
}

/*
 * What an operation's declaration says it needs ("access": {need, role?,
 * param?}), as api_call() enforces it; {"need": "undeclared"} when it says
 * nothing.  The role tests (tests/js/teams.test.mjs) are generated from these.
 */
static json_t *access_json(const json_t *decl, const char *op)
{
	const json_t *a = json_object_get(json_object_get(json_object_get(decl, "operations"), op),
					  "access");

	return a ? json_deep_copy(a) : json_pack("{s:s}", "need", "undeclared");
}

/* A route's rule: its operation's, or what the route itself stands for. */
static json_t *route_access(const json_t *decl, const struct http_route *r)
{
	if (r->doc.op && api_find(r->doc.op))
		return access_json(decl, r->doc.op);
	if (r->doc.op)
		return json_pack("{s:s}", "need", "undeclared");
	if (r->flags & ROUTE_OPEN)
		return json_pack("{s:s}", "need", "public");
	if (r->flags & ROUTE_ADMIN)
		return json_pack("{s:s}", "need", "admin");
	if (r->flags & ROUTE_BY_OP)
		return json_pack("{s:s}", "need", "operation");
	if (r->flags & ROUTE_BY_TOOL)
		return json_pack("{s:s}", "need", "tool");
	return json_pack("{s:s}", "need", "signed-in");
}

/* {operation name: its rule} for every operation of this binary. */
static json_t *operations_access(const json_t *decl)
{
	json_t *all = json_object();

	for (size_t t = 0; api_tables[t]; t++)
		for (const struct api_op *op = api_tables[t]; op->name; op++)
			json_object_set_new(all, op->name, access_json(decl, op->name));
	return all;
}

/* A declared parameter or result schema as the document's: $refs into components. */
static json_t *doc_schema(const json_t *schema)
{
	return decl_rebase(schema, "#/components/schemas/");
}

/* A GET route's query parameters: the operation's declared parameters but the path's. */
static void declared_query(json_t *list, const json_t *params, const char *arg)
{
	const json_t *req = json_object_get(params, "required"), *x, *s;
	const char *key;

	json_object_foreach((json_t *)json_object_get(params, "properties"), key, s) {
		int required = 0;
		size_t i;

		if (arg && !strcmp(key, arg))
			continue;
		json_array_foreach(req, i, x)
			required |= !strcmp(json_string_value(x), key);
		x = json_object_get(s, "description");
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", key, "in",
						      "query", "required", required, "description",
						      x ? json_string_value(x) : key, "schema",
						      doc_schema(s)));
	}
}

/* The request body of a declared route: the parameters but the path's; new reference. */
static json_t *declared_body(const json_t *params, const char *arg)
{
	json_t *body = doc_schema(params), *req = json_object_get(body, "required");
	size_t i;

	if (arg)
		json_object_del(json_object_get(body, "properties"), arg);
	for (i = json_array_size(req); arg && i-- > 0;)
		if (!strcmp(json_string_value(json_array_get(req, i)), arg))
			json_array_remove(req, i);
	return json_pack("{s:b, s:{s:{s:o}}}", "required", 1, "content", "application/json",
			 "schema", body);
}

/* The document of a route that an operation's declaration describes. */
static json_t *declared_operation(const json_t *decl, const struct http_route *r)
{
	const json_t *op = json_object_get(json_object_get(decl, "operations"), r->doc.op);
	const json_t *h = declared_route(decl, r), *params = json_object_get(op, "params");
	const char *arg = json_string_value(json_object_get(h, "arg")), *open;
	json_int_t status = json_integer_value(json_object_get(h, "status"));
	json_t *out, *list = json_array(), *responses = json_object();
	char key[8];

	if (!h || !params || !json_object_get(op, "result"))
		BUG("route %s %s is declared without parameters or result", r->method, r->pattern);
	open = strchr(r->pattern, '{');
	if (open)
		json_array_append_new(list, path_param(r, open));
	if (!strcmp(r->method, "GET"))
		declared_query(list, params, arg);
	snprintf(key, sizeof(key), "%d", status ? (int)status : 200);
	json_object_set_new(responses, key, json_pack("{s:s, s:{s:{s:o}}}", "description",
						      "success", "content", "application/json",
						      "schema", doc_schema(json_object_get(op, "result"))));
	add_errors(responses, r);
	out = json_pack("{s:O, s:O, s:[O], s:o, s:o}", "summary", json_object_get(op, "summary"),
			"operationId", json_object_get(h, "operationId"), "tags",
			json_object_get(op, "tag"), "parameters", list, "responses", responses);
	json_object_set_new(out, "description", json_sprintf("%s%sCalls the operation '%s'.",
		json_string_value(json_object_get(op, "description")) ?
		json_string_value(json_object_get(op, "description")) : "",
		json_object_get(op, "description") ? ". " : "", r->doc.op));
	if (strcmp(r->method, "GET"))
		json_object_set_new(out, "requestBody", declared_body(params, arg));
	json_object_set_new(out, "x-smriti-access", route_access(decl, r));
	return out;
}

/*
 * A route whose declaration has "minimal" (ops/decl.h): the Prefer header
 * it honours and the 204 it then answers (RFC 7240).  Returns op.
 */
static json_t *with_minimal(const json_t *decl, const struct http_route *r, json_t *op)
{
	const char *tmpl = json_string_value(json_object_get(declared_route(decl, r), "minimal"));

	if (!tmpl)
		return op;
	json_array_append_new(json_object_get(op, "parameters"), json_pack(
		"{s:s, s:s, s:b, s:s, s:{s:s}, s:s}", "name", "Prefer", "in", "header",
		"required", 0, "description", "return=minimal: a success is answered 204 with"
		" Location instead of the whole document (RFC 7240); return=representation, or"
		" no Prefer, gives the whole document", "schema", "type", "string", "example",
		"return=minimal"));
	json_object_set_new(json_object_get(op, "responses"), "204", json_pack(
		"{s:s, s:{s:{s:s, s:{s:s, s:s}}, s:{s:s, s:{s:s}}}}", "description",
		"success, answered minimally (Prefer: return=minimal): no body",
		"headers", "Preference-Applied", "description", "return=minimal", "schema",
		"type", "string", "const", "return=minimal",
		"Location", "description", tmpl, "schema", "type", "string"));
	return op;
}

static json_t *operation(const json_t *decl, const struct http_route *r)
{
	const json_t *params = json_object_get(json_object_get(json_object_get(
		decl, "operations"), r->doc.op ? r->doc.op : ""), "params");
	json_t *op;

	if (r->run == http_declared)
		return with_minimal(decl, r, declared_operation(decl, r));

	op = json_pack("{s:s, s:o, s:[s], s:o, s:o}", "summary", r->doc.summary, "operationId",
		       operation_id(decl, r), "tags", route_tag(decl, r), "parameters",
		       parameters(r), "responses", responses_of(decl, r));
	if (r->doc.query && !strcmp(r->doc.query, "*") && params)     /* the query as declared */
		declared_query(json_object_get(op, "parameters"), params, NULL);
	if (r->doc.op)
		json_object_set_new(op, "description",
				    json_sprintf("Calls the operation '%s'.", r->doc.op));
	if (r->doc.body)
		json_object_set_new(op, "requestBody",
				    json_pack("{s:b, s:o}", "required", !!strcmp(r->doc.body, "OpParams"),
					      "content", json_content(r->doc.body)));
	else if (!r->doc.result && is_write(r->method) && params)   /* as declared: the chat sends */
		json_object_set_new(op, "requestBody", declared_body(params, json_string_value(
			json_object_get(declared_route(decl, r), "arg"))));
	if (r->flags & ROUTE_OPEN)
		json_object_set_new(op, "security", json_array());
	json_object_set_new(op, "x-smriti-access", route_access(decl, r));
	return with_minimal(decl, r, op);
}

/* Schemas shared by more than one error body, added to the components. */
static void add_shared_schemas(json_t *components)
{
	json_t *schemas = json_object_get(components, "schemas");

	json_object_set_new(schemas, "ErrorOrJsonRpc",
			    json_pack("{s:[o, o]}", "anyOf", ref("Error"), ref("JsonRpc")));
}

/* Adds to seen every schema that v names, and those they name in turn. */
static void mark_used(const json_t *v, const json_t *schemas, json_t *seen)
{
	static const char prefix[] = "#/components/schemas/";
	const char *key, *ref = json_string_value(json_object_get(v, "$ref"));
	json_t *x;
	size_t i;

	if (ref && !strncmp(ref, prefix, sizeof(prefix) - 1)) {
		ref += sizeof(prefix) - 1;
		if (json_object_get(seen, ref))
			return;
		json_object_set_new(seen, ref, json_true());
		mark_used(json_object_get(schemas, ref), schemas, seen);
		return;
	}
	json_array_foreach(v, i, x)
		mark_used(x, schemas, seen);
	json_object_foreach((json_t *)v, key, x)
		mark_used(x, schemas, seen);
}

/*
 * Drops the shared schemas no path reaches: the declarations hold schemas
 * of operations that have no route of their own yet (docs/http.md).
 */
static void drop_unused(json_t *components, const json_t *paths)
{
	json_t *schemas = json_object_get(components, "schemas"), *seen = json_object(), *x;
	const char *key;
	void *tmp;

	mark_used(paths, schemas, seen);
	json_object_foreach_safe(schemas, tmp, key, x)
		if (!json_object_get(seen, key))
			json_object_del(schemas, key);
	json_decref(seen);
}

static json_t *openapi_paths(const json_t *decl)
{
	json_t *paths = json_object();

	for (const struct http_route *r = http_routes; r->method; r++) {
		char method[8];
		json_t *item = json_object_get(paths, r->pattern);
		size_t i;

		for (i = 0; r->method[i] && i < sizeof(method) - 1; i++)
			method[i] = (char)tolower((unsigned char)r->method[i]);
		method[i] = '\0';
		if (!item) {
			item = json_object();
			json_object_set_new(paths, r->pattern, item);
		}
		json_object_set_new(item, method, operation(decl, r));
	}
	return paths;
}

/* The declarations' tags and the server's own ("Server"), for the document's tag list. */
static json_t *openapi_tags(const json_t *decl)
{
	json_t *tags = json_deep_copy(json_object_get(decl, "tags"));

	json_array_append_new(tags, json_pack("{s:s, s:s}", "name", "Server", "description",
					      "The server itself: health, metrics, this document,"
					      " the web UI, sign-in and MCP"));
	return tags;
}

json_t *http_openapi_from(const json_t *decl)
{
	json_t *doc, *paths = openapi_paths(decl);
	json_t *components = openapi_components(decl);

	add_shared_schemas(components);
	drop_unused(components, paths);
	/* a relative server: the document describes whichever address served it */
	doc = json_pack("{s:s, s:{s:s, s:s, s:s, s:{s:s, s:s}}, s:[{s:s, s:s}], s:o, s:o, s:o,"
			" s:[{s:[]}, {}]}",
			"openapi", "3.1.0",
			"info", "title", "Smriti HTTP API", "version", "1",
			"description", "Version control for reasoning state. Spaces are 'repos'"
			" and Checkpoints are 'commits' in the API.",
			"license", "name", "Apache License 2.0", "identifier", "Apache-2.0",
			"servers", "url", "/",
			"description", "the server this document is served by",
			"tags", openapi_tags(decl), "paths", paths, "components", components,
			"security", "bearer");
	json_object_set_new(doc, "x-smriti-operations", operations_access(decl));
	return doc;
}

json_t *http_openapi(void)
{
	return http_openapi_from(decl_all());
}

char *http_openapi_text(void)
{
	json_t *doc = http_openapi();
	char *text = json_dumps(doc, JSON_INDENT(2));

	json_decref(doc);
	if (!text)
		BUG("cannot serialise the OpenAPI document");
	return text;
}
