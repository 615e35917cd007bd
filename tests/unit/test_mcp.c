/*
 * test_mcp.c -- the MCP protocol core without a process: JSON-RPC envelope
 * rules, tool argument checks, resource URIs, Markdown fences and the raw
 * Streamable HTTP adapter (mcp_http_handle), on a real SQLite store in a
 * temporary file.
 */
#include "harness.h"
#include "temp_store.h"

#include "mcp/mcp.h"
#include "ops/api.h"

#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

struct fixture {
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx;
	struct mcp_session *s;
};

static void setup(struct fixture *f)
{
	temp_store_open(f->path, &f->st, &f->ctx);
	f->s = mcp_session_new(mcp_call_local, f->ctx, "unit");
}

static void teardown(struct fixture *f)
{
	mcp_session_free(f->s);
	temp_store_close(f->path, f->ctx);
}

/* Handles text; returns the parsed response (NULL when none). */
static json_t *ask(struct fixture *f, const char *text)
{
	char *out = mcp_handle_text(f->s, text, strlen(text));
	json_t *doc = out ? json_loads(out, 0, NULL) : NULL;

	CHECK(!out || doc);
	CHECK(!out || !strchr(out, '\n'));
	free(out);
	return doc;
}

static long long error_code(const json_t *resp)
{
	return json_integer_value(json_object_get(json_object_get(resp, "error"), "code"));
}

static const char *tool_text(const json_t *resp)
{
	const json_t *content = json_object_get(json_object_get(resp, "result"), "content");

	return json_string_value(json_object_get(json_array_get(content, 0), "text"));
}

TEST(mcp_envelope_rules)
{
	struct fixture f;
	json_t *r;

	setup(&f);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
	CHECK(json_is_integer(json_object_get(r, "id")));
	CHECK_INT(json_integer_value(json_object_get(r, "id")), 0);
	CHECK(json_is_object(json_object_get(r, "result")));
	json_decref(r);
	CHECK(ask(&f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL);
	CHECK(ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}") == NULL);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":\"x\"}");
	CHECK_INT(error_code(r), MCP_INVALID_REQUEST);
	CHECK_STR(json_string_value(json_object_get(r, "id")), "x");
	json_decref(r);
	r = ask(&f, "not json");
	CHECK_INT(error_code(r), MCP_PARSE_ERROR);
	CHECK(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"tools/frobnicate\"}");
	CHECK_INT(error_code(r), MCP_METHOD_NOT_FOUND);
	CHECK(json_is_real(json_object_get(r, "id")));
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":[]}");
	CHECK_INT(error_code(r), MCP_INVALID_PARAMS);
	json_decref(r);
	teardown(&f);
}

TEST(mcp_initialize_negotiates)
{
	struct fixture f;
	json_t *r;

	setup(&f);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		    "{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{}}}");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "result"),
						    "protocolVersion")), "2024-11-05");
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		    "{\"protocolVersion\":\"2031-01-01\",\"capabilities\":{}}}");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "result"),
						    "protocolVersion")), MCP_LATEST_VERSION);
	json_decref(r);
	teardown(&f);
}

TEST(mcp_tool_argument_checks)
{
	struct fixture f;
	json_t *r;

	setup(&f);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		    "{\"name\":\"write_checkpoint\",\"arguments\":{\"space\":\"s\","
		    "\"tasks\":[{\"text\":\"t\",\"status\":3}]}}}");
	CHECK(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	CHECK(strstr(tool_text(r), "tasks[0].status") != NULL);
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		    "{\"name\":\"log\",\"arguments\":{\"ref\":\"s\",\"limit\":1001}}}");
	CHECK(strstr(tool_text(r), "at most 1000") != NULL);
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		    "{\"name\":\"create_space\",\"arguments\":{\"name\":\"\"}}}");
	CHECK(strstr(tool_text(r), "'name' must not be empty") != NULL);
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		    "{\"name\":\"list_spaces\",\"arguments\":{}}}");
	CHECK(json_is_array(json_object_get(json_object_get(json_object_get(r, "result"),
							    "structuredContent"), "spaces")));
	json_decref(r);
	teardown(&f);
}

/* Writes one checkpoint in space "a b" with an artifact holding a code fence. */
static void seed(struct fixture *f)
{
	json_t *r;

	r = ask(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		   "{\"name\":\"create_space\",\"arguments\":{\"name\":\"a b\"}}}");
	json_decref(r);
	r = ask(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		   "{\"name\":\"write_checkpoint\",\"arguments\":{\"space\":\"a b\",\"title\":\"t\","
		   "\"artifacts\":[{\"name\":\"x.md\",\"content\":\"````\\ninside\\n````\"}]}}}");
	CHECK_STR(json_string_value(json_object_get(json_object_get(json_object_get(r, "result"),
		  "structuredContent"), "author")), "unit");
	json_decref(r);
}

static const char *head_hash(const json_t *r)
{
	const json_t *sc = json_object_get(json_object_get(r, "result"), "structuredContent");

	return json_string_value(json_object_get(sc, "commit_hash"));
}

/*
 * read_head while HEAD stays gives the same result under each request's own
 * id (the session reuses the result's text), and the next checkpoint at once.
 */
TEST(mcp_read_head_again_answers_each_id)
{
	struct fixture f;
	json_t *r[3], *w;
	char *first, write[256];

	setup(&f);
	seed(&f);
	r[0] = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":"
		      "{\"name\":\"read_head\",\"arguments\":{\"space\":\"a b\"}}}");
	r[1] = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":\"s\\\"q\",\"method\":\"tools/call\",\"params\":"
		      "{\"name\":\"read_head\",\"arguments\":{\"space\":\"a b\"}}}");
	CHECK_INT(json_integer_value(json_object_get(r[0], "id")), 10);
	CHECK_STR(json_string_value(json_object_get(r[1], "id")), "s\"q");
	CHECK(tool_text(r[0]) && tool_text(r[1]));
	if (tool_text(r[0]) && tool_text(r[1]))
		CHECK_STR(tool_text(r[1]), tool_text(r[0]));
	first = strdup(head_hash(r[0]) ? head_hash(r[0]) : "");
	snprintf(write, sizeof(write), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"write_checkpoint\",\"arguments\":{\"space\":\"a b\","
		 "\"parent\":\"%s\",\"title\":\"next\"}}}", first);
	w = ask(&f, write);
	r[2] = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
		      "{\"name\":\"read_head\",\"arguments\":{\"space\":\"a b\"}}}");
	CHECK_INT(json_integer_value(json_object_get(r[2], "id")), 11);
	CHECK(head_hash(r[2]) && strcmp(head_hash(r[2]), first));
	CHECK_STR(head_hash(r[2]), head_hash(w));
	CHECK(tool_text(r[2]) && strstr(tool_text(r[2]), "\"next\""));
	for (int i = 0; i < 3; i++)
		json_decref(r[i]);
	json_decref(w);
	free(first);
	teardown(&f);
}

static const char *read_text(const json_t *r)
{
	const json_t *c = json_array_get(json_object_get(json_object_get(r, "result"), "contents"),
					 0);

	return json_string_value(json_object_get(c, "text"));
}

TEST(mcp_resources_uris_and_fences)
{
	struct fixture f;
	json_t *r;

	setup(&f);
	seed(&f);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\"}");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(
		  json_object_get(r, "result"), "resources"), 0), "uri")),
		  "smriti://spaces/a%20b/head");
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":"
		    "{\"uri\":\"smriti://spaces/a%20b/head\"}}");
	CHECK(read_text(r) && strstr(read_text(r), "\n`````\n````\ninside\n````\n`````\n"));
	json_decref(r);
	for (const char *const *u = (const char *const[]){ "smriti://spaces/a%2/head",
			"smriti://spaces/a%00b/head", "smriti://spaces//head",
			"smriti://spaces/a%2Fb/head", "smriti://checkpoints/xyz",
			"smriti://spaces/a%20b/tail", NULL }; *u; u++) {
		char req[256];

		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
			 "\"resources/read\",\"params\":{\"uri\":\"%s\"}}", *u);
		r = ask(&f, req);
		CHECK_INT(error_code(r), MCP_RESOURCE_NOT_FOUND);
		json_decref(r);
	}
	teardown(&f);
}

/* The text of prompts/get's one message. */
static const char *prompt_text(const json_t *r)
{
	const json_t *msgs = json_object_get(json_object_get(r, "result"), "messages");

	return json_string_value(json_object_get(json_object_get(json_array_get(msgs, 0),
								 "content"), "text"));
}

/*
 * The handoff prompt ends with exactly the HEAD resource's Markdown (one
 * renderer); completion offers Space names by prefix, and nothing for what
 * it does not complete; malformed requests are -32602.
 */
TEST(mcp_prompts_and_completion)
{
	struct fixture f;
	json_t *r, *md;
	const char *text, *res;

	setup(&f);
	seed(&f);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":"
		    "{\"name\":\"handoff\",\"arguments\":{\"space\":\"a b\"}}}");
	md = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":"
		     "{\"uri\":\"smriti://spaces/a%20b/head\"}}");
	text = prompt_text(r);
	res = read_text(md);
	CHECK(text && res && strlen(text) > strlen(res));
	CHECK_STR(text + strlen(text) - strlen(res), res);
	CHECK(!strncmp(text, "You are picking up work kept in Smriti, in the Space 'a b'.", 59));
	json_decref(r);
	json_decref(md);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"completion/complete\",\"params\":"
		    "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"smriti://spaces/{name}/head\"},"
		    "\"argument\":{\"name\":\"name\",\"value\":\"A \"}}}");
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(
		  json_object_get(r, "result"), "completion"), "values"), 0)), "a b");
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"completion/complete\",\"params\":"
		    "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"handoff\"},"
		    "\"argument\":{\"name\":\"space\",\"value\":\"b\"}}}");
	CHECK_INT(json_array_size(json_object_get(json_object_get(json_object_get(r, "result"),
		  "completion"), "values")), 0);
	json_decref(r);
	for (const char *const *q = (const char *const[]){
			"\"method\":\"prompts/get\",\"params\":{\"name\":\"handoff\"}",
			"\"method\":\"prompts/get\",\"params\":{\"name\":\"handoff\",\"arguments\":"
			"{\"space\":7}}",
			"\"method\":\"prompts/get\",\"params\":{\"name\":\"handoff\",\"arguments\":[]}",
			"\"method\":\"prompts/get\",\"params\":{\"name\":\"x\"}",
			"\"method\":\"prompts/list\",\"params\":{\"cursor\":\"a\"}",
			"\"method\":\"completion/complete\",\"params\":{\"ref\":{},\"argument\":{}}",
			"\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":"
			"\"ref/prompt\",\"name\":\"handoff\"},\"argument\":{\"name\":\"space\"}}",
			NULL }; *q; q++) {
		char req[512];

		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":5,%s}", *q);
		r = ask(&f, req);
		CHECK_INT(error_code(r), MCP_INVALID_PARAMS);
		json_decref(r);
	}
	teardown(&f);
}

/* Header table for the raw HTTP adapter. */
struct headers {
	const char *names[8], *values[8];
};

static const char *get_header(void *cls, const char *name)
{
	struct headers *h = cls;

	for (int i = 0; i < 8 && h->names[i]; i++)
		if (!strcasecmp(h->names[i], name))
			return h->values[i];
	return NULL;
}

static int http_status(struct fixture *f, const char *method, struct headers *h,
		       const char *body, const char *token, struct mcp_http_response *resp)
{
	struct mcp_http_request req = { method, get_header, h, body, body ? strlen(body) : 0,
					token, NULL, NULL };

	mcp_http_handle(mcp_call_local, f->ctx, &req, resp);
	return resp->status;
}

TEST(mcp_http_adapter)
{
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
	struct headers good = { { "Accept", "Content-Type", "Host" },
				{ "application/json, text/event-stream", "application/json",
				  "127.0.0.1:7411" } };
	struct headers h;
	struct mcp_http_response resp;
	struct fixture f;

	setup(&f);
	CHECK_INT(http_status(&f, "POST", &good, ping, NULL, &resp), 200);
	CHECK_STR(resp.content_type, "application/json");
	CHECK(resp.body && strstr(resp.body, "\"result\":{}"));
	free(resp.body);
	CHECK_INT(http_status(&f, "POST", &good, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}", NULL,
			      &resp), 202);
	CHECK(resp.body == NULL);
	CHECK_INT(http_status(&f, "GET", &good, NULL, NULL, &resp), 405);
	CHECK_STR(resp.headers[0][0], "Allow");
	free(resp.body);
	CHECK_INT(http_status(&f, "POST", &good, "{", NULL, &resp), 400);
	free(resp.body);
	CHECK_INT(http_status(&f, "POST", &good, ping, "tok", &resp), 401);
	CHECK_STR(resp.headers[0][0], "WWW-Authenticate");
	free(resp.body);
	h = good;
	h.names[3] = "Authorization";
	h.values[3] = "Bearer tok";
	CHECK_INT(http_status(&f, "POST", &h, ping, "tok", &resp), 200);
	free(resp.body);
	h.values[3] = "Bearer tok2";
	CHECK_INT(http_status(&f, "POST", &h, ping, "tok", &resp), 401);
	free(resp.body);
	h = good;
	h.values[0] = "application/json";
	CHECK_INT(http_status(&f, "POST", &h, ping, NULL, &resp), 406);
	free(resp.body);
	h = good;
	h.values[1] = "text/plain";
	CHECK_INT(http_status(&f, "POST", &h, ping, NULL, &resp), 415);
	free(resp.body);
	h = good;
	h.names[3] = "MCP-Protocol-Version";
	h.values[3] = "2030-01-01";
	CHECK_INT(http_status(&f, "POST", &h, ping, NULL, &resp), 400);
	free(resp.body);
	h.names[3] = "Origin";
	h.values[3] = "http://evil.example";
	CHECK_INT(http_status(&f, "POST", &h, ping, NULL, &resp), 403);
	free(resp.body);
	h.values[3] = "http://127.0.0.1:7411";
	CHECK_INT(http_status(&f, "POST", &h, ping, NULL, &resp), 200);
	free(resp.body);
	teardown(&f);
}

/* A 2026-07-28 request body for method with params (JSON text inside {...}, may be empty). */
static void modern(char *out, size_t size, const char *method, const char *params)
{
	snprintf(out, size, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"%s\",\"params\":{%s%s"
		 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		 "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		 method, params, *params ? "," : "");
}

static json_t *body_of(struct mcp_http_response *resp)
{
	json_t *j = json_loads(resp->body ? resp->body : "null", JSON_DECODE_ANY, NULL);

	free(resp->body);
	resp->body = NULL;
	return j;
}

TEST(mcp_modern_http_headers_match_the_body)
{
	struct headers h = { { "Accept", "Content-Type", "MCP-Protocol-Version", "Mcp-Method",
			       "Mcp-Name" },
			     { "application/json, text/event-stream", "application/json",
			       "2026-07-28", "tools/call", "list_spaces" } };
	struct mcp_http_response resp;
	struct fixture f;
	char body[512];
	json_t *j;

	setup(&f);
	modern(body, sizeof(body), "tools/call", "\"name\":\"list_spaces\",\"arguments\":{}");
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 200);
	j = body_of(&resp);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "result"), "resultType")),
		  "complete");
	json_decref(j);
	/* the same name as base64, and as broken base64 */
	h.values[4] = "=?base64?bGlzdF9zcGFjZXM=?=";
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 200);
	free(resp.body);
	h.values[4] = " list_spaces\t";                        /* whitespace around is no part of it */
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 200);
	free(resp.body);
	h.values[4] = "=?base64?bGlzd!!!?=";
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 400);
	j = body_of(&resp);
	CHECK_INT(error_code(j), MCP_HEADER_MISMATCH);
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 9);
	json_decref(j);
	h.values[4] = "read_head";
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 400);
	free(resp.body);
	h.values[4] = "list_spaces";
	h.values[3] = "tools/list";
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 400);
	free(resp.body);
	h.values[3] = "tools/call";
	h.values[2] = "2025-11-25";
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 400);
	free(resp.body);
	/* no stream here: subscriptions/listen is unknown (404), and discover says so */
	h.values[2] = "2026-07-28";
	h.values[3] = "subscriptions/listen";
	h.names[4] = NULL;
	modern(body, sizeof(body), "subscriptions/listen", "\"notifications\":{}");
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 404);
	free(resp.body);
	h.values[3] = "server/discover";
	modern(body, sizeof(body), "server/discover", "");
	CHECK_INT(http_status(&f, "POST", &h, body, NULL, &resp), 200);
	j = body_of(&resp);
	CHECK(json_is_false(json_object_get(json_object_get(json_object_get(json_object_get(j,
		"result"), "capabilities"), "resources"), "subscribe")));
	json_decref(j);
	teardown(&f);
}

TEST(mcp_eras_per_request)
{
	struct fixture f;
	char req[512];
	json_t *r;

	setup(&f);
	modern(req, sizeof(req), "ping", "");
	r = ask(&f, req);
	CHECK_INT(error_code(r), MCP_METHOD_NOT_FOUND);       /* ping is gone in 2026-07-28 */
	json_decref(r);
	modern(req, sizeof(req), "resources/read", "\"uri\":\"smriti://spaces/none/head\"");
	r = ask(&f, req);
	CHECK_INT(error_code(r), MCP_INVALID_PARAMS);         /* was -32002 */
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":"
		    "{\"uri\":\"smriti://spaces/none/head\"}}");
	CHECK_INT(error_code(r), MCP_RESOURCE_NOT_FOUND);     /* legacy keeps -32002 */
	json_decref(r);
	r = ask(&f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		    "{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}}");
	CHECK_INT(error_code(r), MCP_UNSUPPORTED_VERSION);
	json_decref(r);
	modern(req, sizeof(req), "resources/templates/list", "");
	r = ask(&f, req);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(r, "result"), "ttlMs")),
		  3600000);
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "result"), "cacheScope")),
		  "public");
	json_decref(r);
	teardown(&f);
}
