/*
 * test_provider.c -- the OpenAI and Anthropic backends against the real
 * fake provider process (tests/fake-provider/server.mjs), in the manner of
 * curl's tests: script the server's reply, make the call, then check both
 * the result and the exact request the server received.
 *
 * The fake is started once (fake_provider.h) and reset before each test.
 * The last test drives chat_send() on a real SQLite store.
 */
#include "harness.h"
#include "fake_provider.h"
#include "ops/full/runtime.h"
#include "provider/provider_int.h"
#include "util/xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

static const struct provider_msg three[] = {
	{ "user", "first question" }, { "assistant", "first answer" }, { "user", "second" },
};

static struct provider_req basic_req(void)
{
	struct provider_req r = { 0 };

	r.model = "test-model";
	r.system = "You are terse.";
	r.msgs = three;
	r.n_msgs = 3;
	r.temperature = -1;
	return r;
}

static const char *hdr(const json_t *req, const char *name)
{
	return json_string_value(json_object_get(json_object_get(req, "headers"), name));
}

static const json_t *body_at(const json_t *reqs, size_t i)
{
	return json_object_get(json_array_get(reqs, i), "body");
}

TEST(provider_openai_success_and_request)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs, *msgs;
	const json_t *body;

	SCRIPT("[{\"reply\":\"hello there\",\"usage\":{\"input\":7,\"output\":2}}]");
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	CHECK_STR(resp.text, "hello there");
	CHECK_INT(resp.prompt_tokens, 7);
	CHECK_INT(resp.completion_tokens, 2);
	CHECK_INT(resp.attempts, 1);
	CHECK_STR(resp.finish_reason, "stop");
	CHECK(resp.request_id && !strncmp(resp.request_id, "req_", 4));
	CHECK(resp.latency_us > 0);
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 1);
	body = body_at(reqs, 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(reqs, 0), "path")),
		  "/v1/chat/completions");
	CHECK_STR(hdr(json_array_get(reqs, 0), "authorization"), "Bearer sk-test-0123456789");
	CHECK_STR(hdr(json_array_get(reqs, 0), "content-type"), "application/json");
	CHECK_STR(json_string_value(json_object_get(body, "model")), "test-model");
	CHECK_INT(json_integer_value(json_object_get(body, "max_tokens")), 1024);
	CHECK(json_object_get(body, "max_completion_tokens") == NULL);
	CHECK(json_object_get(body, "temperature") == NULL);
	msgs = json_object_get(body, "messages");
	CHECK_INT(json_array_size(msgs), 4);
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "content")),
		  "You are terse.");
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 3), "content")),
		  "second");
	json_decref(reqs);
	provider_resp_release(&resp);
	provider_free(p);
}

TEST(provider_openai_max_completion_tokens_for_openai_itself)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[]");
	p = fake_provider("openai", "/v1");
	p->cfg.token_param = PROVIDER_TOKENS_MAX_COMPLETION_TOKENS;
	req.max_tokens = 77;
	req.temperature = 0.5;
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	reqs = fake_requests();
	CHECK_INT(json_integer_value(json_object_get(body_at(reqs, 0), "max_completion_tokens")),
		  77);
	CHECK(json_object_get(body_at(reqs, 0), "max_tokens") == NULL);
	CHECK(json_real_value(json_object_get(body_at(reqs, 0), "temperature")) == 0.5);
	json_decref(reqs);
	provider_resp_release(&resp);
	provider_free(p);
}

TEST(provider_anthropic_success_and_request)
{
	static const struct provider_msg msgs[] = {
		{ "user", "a" }, { "user", "b" }, { "assistant", "c" }, { "user", "d" },
	};
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs, *m;
	const json_t *body;

	SCRIPT("[{\"reply\":\"bonjour\",\"usage\":{\"input\":5,\"output\":1}}]");
	p = fake_provider("anthropic", "");
	req.msgs = msgs;
	req.n_msgs = 4;
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	CHECK_STR(resp.text, "bonjour");
	CHECK_INT(resp.prompt_tokens, 5);
	CHECK_INT(resp.completion_tokens, 1);
	CHECK_STR(resp.finish_reason, "end_turn");
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(reqs, 0), "path")),
		  "/v1/messages");
	CHECK_STR(hdr(json_array_get(reqs, 0), "x-api-key"), "sk-test-0123456789");
	CHECK_STR(hdr(json_array_get(reqs, 0), "anthropic-version"), "2023-06-01");
	CHECK(hdr(json_array_get(reqs, 0), "authorization") == NULL);
	body = body_at(reqs, 0);
	CHECK_STR(json_string_value(json_object_get(body, "system")), "You are terse.");
	CHECK_INT(json_integer_value(json_object_get(body, "max_tokens")), 1024);
	m = json_object_get(body, "messages");
	CHECK_INT(json_array_size(m), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(m, 0), "role")), "user");
	CHECK_STR(json_string_value(json_object_get(json_array_get(m, 0), "content")), "a\n\nb");
	CHECK_STR(json_string_value(json_object_get(json_array_get(m, 1), "role")), "assistant");
	CHECK_STR(json_string_value(json_object_get(json_array_get(m, 2), "content")), "d");
	json_decref(reqs);
	provider_resp_release(&resp);
	provider_free(p);
}

TEST(provider_429_then_success_honours_retry_after)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;
	double t0, t1;

	SCRIPT("[{\"status\":429,\"retry_after\":1},{\"reply\":\"ok now\"}]");
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	CHECK_STR(resp.text, "ok now");
	CHECK_INT(resp.attempts, 2);
	CHECK_INT(resp.waited_ms, 1000);        /* the header's wait, not the 10 ms backoff */
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 2);
	t0 = json_number_value(json_object_get(json_array_get(reqs, 0), "time"));
	t1 = json_number_value(json_object_get(json_array_get(reqs, 1), "time"));
	CHECK(t1 - t0 >= 999);
	json_decref(reqs);
	provider_resp_release(&resp);
	provider_free(p);
}

TEST(provider_500_fails_after_retries)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[{\"status\":500},{\"status\":500},{\"status\":500},{\"reply\":\"x\"}]");
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK(strstr(err.msg, "openai: 500 server_error: The server had an error") == err.msg);
	CHECK(strstr(err.msg, "(after 3 attempts)") != NULL);
	CHECK(resp.text == NULL);
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 3);
	json_decref(reqs);
	provider_free(p);
}

TEST(provider_529_is_retried)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[{\"status\":529},{\"reply\":\"recovered\"}]");
	p = fake_provider("anthropic", "");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	CHECK_STR(resp.text, "recovered");
	CHECK_INT(resp.attempts, 2);
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 2);
	json_decref(reqs);
	provider_resp_release(&resp);
	provider_free(p);
}

TEST(provider_anthropic_error_message_surfaced)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;

	SCRIPT("[{\"status\":400,\"message\":\"prompt is too long: 300000 tokens\"}]");
	p = fake_provider("anthropic", "");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK_STR(err.msg, "anthropic: 400 invalid_request_error: prompt is too long: 300000 tokens");
	provider_free(p);
}

TEST(provider_timeout)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[{\"delay_ms\":3000,\"reply\":\"too late\"}]");
	p = fake_provider("openai", "/v1");
	req.timeout_ms = 300;
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_ETIMEOUT);
	CHECK_STR(err.msg, "openai: no reply within 300 ms");
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 1);     /* timeouts are not retried */
	json_decref(reqs);
	provider_free(p);
}

TEST(provider_timeout_from_env)
{
	struct provider *p;

	setenv("SMRITI_PROVIDER_TIMEOUT_MS", "4321", 1);
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1/", 1);
	p = provider_from_env("openai");
	CHECK_INT(p->cfg.timeout_ms, 4321);
	CHECK_STR(p->cfg.base_url, "http://127.0.0.1:1/v1");
	CHECK_INT(p->cfg.token_param, PROVIDER_TOKENS_AUTO);
	provider_free(p);
	unsetenv("OPENAI_BASE_URL");
	p = provider_from_env("openai");
	CHECK_STR(p->cfg.base_url, "https://api.openai.com/v1");
	CHECK_STR(provider_token_param_name(p->cfg.token_param, p->cfg.base_url, "gpt-4o-mini"),
		  "max_completion_tokens");
	provider_free(p);
	unsetenv("SMRITI_PROVIDER_TIMEOUT_MS");
	CHECK(provider_from_env("nonesuch") == NULL);
}

TEST(provider_malformed_json)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;

	SCRIPT("[{\"malformed\":true},{\"malformed\":true}]");
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK(!strncmp(err.msg, "openai: malformed reply (HTTP 200): ", 36));
	provider_free(p);
	p = fake_provider("anthropic", "");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK(!strncmp(err.msg, "anthropic: malformed reply (HTTP 200): ", 39));
	provider_free(p);
}

TEST(provider_401_message_surfaced_and_key_redacted)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[{\"status\":401},"
			"{\"status\":401,\"message\":\"Incorrect API key provided: sk-test-0123456789.\"}]");
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK(strstr(err.msg, "openai: 401 invalid_api_key: Incorrect API key provided") == err.msg);
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK_STR(err.msg, "openai: 401 invalid_api_key: Incorrect API key provided: [redacted].");
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 2);     /* 401 is not retried */
	json_decref(reqs);
	provider_free(p);
}

TEST(provider_retry_after_over_cap_is_not_retried)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[{\"status\":429,\"retry_after\":120},{\"reply\":\"never\"}]");
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK(strstr(err.msg, "openai: 429 rate_limit_exceeded: Rate limit reached") == err.msg);
	CHECK(strstr(err.msg, "not retried: retry-after of 120000 ms is over the 60000 ms limit"));
	reqs = fake_requests();
	CHECK_INT(json_array_size(reqs), 1);
	json_decref(reqs);
	provider_free(p);
}

TEST(provider_unreachable)
{
	struct provider_cfg cfg;
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;

	provider_cfg_defaults(&cfg);
	cfg.base_url = xstrdup("http://127.0.0.1:1/v1");
	cfg.api_key = xstrdup("k");
	cfg.max_retries = 0;
	p = provider_new("local", &cfg);
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_EPROVIDER);
	CHECK(!strncmp(err.msg, "local: cannot reach http://127.0.0.1:1/v1/chat/completions", 58));
	provider_free(p);
}

TEST(provider_schema_requests)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *schema = json_pack("{s:s, s:{s:{s:s}}}", "type", "object", "properties", "a",
				   "type", "integer");
	json_t *reqs;
	const json_t *body;

	SCRIPT("[{\"json\":{\"a\":1}},{\"json\":{\"a\":2}}]");
	req.schema = schema;
	req.schema_name = "draft";
	req.schema_strict = 1;
	p = fake_provider("openai", "/v1");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(resp.json, "a")), 1);
	provider_resp_release(&resp);
	provider_free(p);
	p = fake_provider("anthropic", "");
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(resp.json, "a")), 2);
	CHECK_STR(resp.finish_reason, "tool_use");
	provider_resp_release(&resp);
	provider_free(p);
	reqs = fake_requests();
	body = json_object_get(body_at(reqs, 0), "response_format");
	CHECK_STR(json_string_value(json_object_get(body, "type")), "json_schema");
	body = json_object_get(body, "json_schema");
	CHECK_STR(json_string_value(json_object_get(body, "name")), "draft");
	CHECK(json_is_true(json_object_get(body, "strict")));
	CHECK(json_equal(json_object_get(body, "schema"), schema));
	body = body_at(reqs, 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(body, "tool_choice"), "name")),
		  "draft");
	CHECK(json_equal(json_object_get(json_array_get(json_object_get(body, "tools"), 0),
					 "input_schema"), schema));
	json_decref(reqs);
	json_decref(schema);
}

/* ---- the runtime's send path on a real store, against the fake ---- */

/* Writes n turns of len characters into session sid straight through SQLite. */
static void seed_turns(const char *db, const char *sid, int n, int len)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *q = NULL;
	char *text = xmalloc((size_t)len + 1);

	memset(text, 'z', (size_t)len);
	text[len] = '\0';
	sqlite3_open(db, &h);
	sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
	sqlite3_prepare_v2(h, "INSERT INTO turns (session_id, sequence_number, role, content,"
			   " created_at) VALUES (?, ?, ?, ?, 't')", -1, &q, NULL);
	for (int i = 1; i <= n; i++) {
		sqlite3_reset(q);
		sqlite3_bind_text(q, 1, sid, -1, SQLITE_STATIC);
		sqlite3_bind_int(q, 2, i);
		sqlite3_bind_text(q, 3, i % 2 ? "user" : "assistant", -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 4, text, -1, SQLITE_STATIC);
		sqlite3_step(q);
	}
	sqlite3_finalize(q);
	sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(h);
	free(text);
}

TEST(provider_runtime_long_session_reads_a_window_and_reports_every_turn)
{
	char dir[] = "/tmp/smriti-unit-XXXXXX", *db, *url;
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct session s = { 0 };
	struct runtime *rt;
	struct chat_send_req req = { 0 };
	json_t *result = NULL, *reqs, *inc, *drop;
	size_t i;

	SCRIPT("[]");
	CHECK(mkdtemp(dir) != NULL);
	db = xasprintf("%s/t.db", dir);
	url = xasprintf("http://127.0.0.1:%d/v1", fake_port);
	setenv("OPENAI_BASE_URL", url, 1);
	setenv("OPENAI_API_KEY", "sk-unit", 1);
	setenv("SMRITI_CONTEXT_BUDGETS", "win=6000", 1);
	rt = runtime_new_from_env();
	CHECK_INT(ops_open(&ctx, db, NULL, &err), SMR_OK);
	CHECK_INT(ops_space_create(ctx, "w", NULL, &sp, &err), SMR_OK);
	CHECK_INT(chat_session_create(ctx, "w", NULL, &s, &err), SMR_OK);
	seed_turns(db, s.id, 5001, 100);
	req.session_id = s.id;
	req.message = "the newest question";
	req.provider = "openai";
	req.model = "win-model";
	CHECK_INT(chat_send(ctx, rt, &req, &result, &err), SMR_OK);
	inc = json_object_get(json_object_get(result, "context"), "turns_included");
	drop = json_object_get(json_object_get(result, "context"), "turns_dropped");
	CHECK_INT(json_array_size(inc) + json_array_size(drop), 5002);
	for (i = 0; i < json_array_size(drop); i++)
		CHECK_INT(json_integer_value(json_array_get(drop, i)), i + 1);
	for (i = 0; i < json_array_size(inc); i++)
		CHECK_INT(json_integer_value(json_array_get(inc, i)), json_array_size(drop) + i + 1);
	CHECK(json_array_size(inc) > 10 && json_array_size(inc) < 60);
	CHECK(json_integer_value(json_array_get(inc, 0)) % 2 == 1);   /* starts on a user turn */
	CHECK(json_is_true(json_object_get(json_object_get(result, "context"), "trimmed")));
	CHECK(json_integer_value(json_object_get(json_object_get(result, "context"), "chars"))
	      <= 6000);
	reqs = fake_requests();
	/* the system message, then one message per included turn */
	CHECK_INT(json_array_size(json_object_get(body_at(reqs, 0), "messages")),
		  json_array_size(inc) + 1);
	json_decref(reqs);
	json_decref(result);
	session_release(&s);
	space_release(&sp);
	ops_close(ctx);
	runtime_free(rt);
	unsetenv("OPENAI_BASE_URL");
	unsetenv("OPENAI_API_KEY");
	unsetenv("SMRITI_CONTEXT_BUDGETS");
	unlink(db);
	{
		char *wal = xasprintf("%s-wal", db), *shm = xasprintf("%s-shm", db);

		unlink(wal);
		unlink(shm);
		free(wal);
		free(shm);
	}
	rmdir(dir);
	free(db);
	free(url);
}

/* issue 15: the reply cap's name per model family, and the gateway override */
TEST(provider_token_param_by_model_family)
{
	const char *gw = "https://gateway.example/v1";

	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "o3"), "max_completion_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "o4-mini"),
		  "max_completion_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "openai/o1-preview"),
		  "max_completion_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "gpt-5-mini"),
		  "max_completion_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "gpt-4.1-nano"),
		  "max_completion_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "gpt-4o-mini"), "max_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "llama3.2"), "max_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, gw, "olmo-2"), "max_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_AUTO, "https://api.openai.com/v1",
					    "gpt-4o-mini"), "max_completion_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_MAX_TOKENS, gw, "o3"), "max_tokens");
	CHECK_STR(provider_token_param_name(PROVIDER_TOKENS_MAX_COMPLETION_TOKENS, gw, "llama3.2"),
		  "max_completion_tokens");
}

TEST(provider_openai_org_and_project_headers)
{
	struct provider *p;
	struct provider_req req = basic_req();
	struct provider_resp resp;
	struct smr_err err = SMR_ERR_INIT;
	json_t *reqs;

	SCRIPT("[]");
	setenv("SMRITI_OPENAI_TOKEN_PARAM", "max_completion_tokens", 1);
	setenv("OPENAI_ORG_ID", "org-test123", 1);
	setenv("OPENAI_PROJECT_ID", "proj_abc", 1);
	p = provider_from_env("openai");
	CHECK_INT(p->cfg.token_param, PROVIDER_TOKENS_MAX_COMPLETION_TOKENS);
	provider_free(p);
	unsetenv("SMRITI_OPENAI_TOKEN_PARAM");
	p = fake_provider("openai", "/v1");
	p->cfg.org_id = xstrdup("org-test123");
	p->cfg.project_id = xstrdup("proj_abc");
	req.model = "o3-mini";
	CHECK_INT(provider_complete(p, &req, &resp, &err), SMR_OK);
	reqs = fake_requests();
	CHECK_STR(hdr(json_array_get(reqs, 0), "openai-organization"), "org-test123");
	CHECK_STR(hdr(json_array_get(reqs, 0), "openai-project"), "proj_abc");
	CHECK_INT(json_integer_value(json_object_get(body_at(reqs, 0), "max_completion_tokens")),
		  1024);
	CHECK(json_object_get(body_at(reqs, 0), "max_tokens") == NULL);
	json_decref(reqs);
	provider_resp_release(&resp);
	provider_free(p);
	unsetenv("OPENAI_ORG_ID");
	unsetenv("OPENAI_PROJECT_ID");
}
