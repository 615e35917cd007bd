/*
 * openai.c -- the Chat Completions backend (WIRE.md section 1), used for
 * OpenAI itself ("openai") and any OpenAI-compatible server ("local":
 * Ollama, llama.cpp, vLLM).
 *
 * POST {base}/chat/completions, where base includes /v1.  The reply cap is
 * sent as max_completion_tokens to api.openai.com (max_tokens is deprecated
 * there) and as max_tokens elsewhere (Ollama ignores the newer name).  A
 * schema request becomes response_format {type: json_schema, json_schema:
 * {name, schema, strict}}, the nesting llama.cpp also reads.
 */
#include "provider/call.h"
#include "provider/shape.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static json_t *response_format(const struct provider_req *req)
{
	json_t *js = json_pack("{s:s, s:O, s:b}", "name",
			       req->schema_name ? req->schema_name : "output",
			       "schema", (json_t *)req->schema, "strict", req->schema_strict);

	if (req->schema_description)
		json_object_set_new(js, "description", json_string(req->schema_description));
	return json_pack("{s:s, s:o}", "type", "json_schema", "json_schema", js);
}

/* The request body; caller free()s. */
static char *build_body(const struct provider *p, const struct provider_req *req)
{
	json_t *body = json_object();
	int max = req->max_tokens > 0 ? req->max_tokens : p->cfg.max_tokens;
	struct buf msgs = BUF_INIT(0);
	char *s;

	json_object_set_new(body, "model", json_string(req->model));
	json_object_set_new(body, p->cfg.max_completion_tokens ? "max_completion_tokens" :
				  "max_tokens", json_integer(max));
	if (req->temperature >= 0)
		json_object_set_new(body, "temperature", json_real(req->temperature));
	if (req->schema)
		json_object_set_new(body, "response_format", response_format(req));
	json_object_set_new(body, "stream", json_false());
	shape_openai_messages_write(&msgs, req->system, req->msgs, req->n_msgs);
	s = shape_body(body, "messages", &msgs);
	buf_release(&msgs);
	json_decref(body);
	return s;
}

static int64_t usage_int(const json_t *usage, const char *key)
{
	const json_t *v = json_object_get(usage, key);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* The text of choices[0].message: content, else a tool call's arguments. */
static const char *message_text(const json_t *msg)
{
	const json_t *calls = json_object_get(msg, "tool_calls");
	const json_t *content = json_object_get(msg, "content");

	if (json_is_string(content))
		return json_string_value(content);
	return json_string_value(json_object_get(
		json_object_get(json_array_get(calls, 0), "function"), "arguments"));
}

static enum smr_rc take_json(struct provider *p, struct provider_resp *out,
			     struct smr_err *err)
{
	out->json = json_loads(out->text, JSON_DECODE_ANY, NULL);
	if (out->json)
		return SMR_OK;
	return smr_errf_why(err, SMR_EPROVIDER, SMR_WHY_REPLY_NOT_JSON,
			    "%s: structured reply is not valid JSON", p->name);
}

static enum smr_rc parse_reply(struct provider *p, const struct provider_req *req,
			       const json_t *doc, struct provider_resp *out,
			       struct smr_err *err)
{
	const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
	const json_t *msg = json_object_get(choice, "message");
	const json_t *usage = json_object_get(doc, "usage");
	const char *text = message_text(msg);
	const char *refusal = json_string_value(json_object_get(msg, "refusal"));
	char *clean;

	if (!text && refusal) {
		clean = call_clean_text(p, refusal, 320);
		smr_errf(err, SMR_EPROVIDER, "%s: the model refused: %s", p->name, clean);
		free(clean);
		return SMR_EPROVIDER;
	}
	if (!text)
		return smr_errf(err, SMR_EPROVIDER,
				"%s: malformed reply: no choices[0].message.content", p->name);
	out->text = xstrdup(text);
	out->finish_reason = call_json_strdup(json_object_get(choice, "finish_reason"));
	out->model = call_json_strdup(json_object_get(doc, "model"));
	out->prompt_tokens = usage_int(usage, "prompt_tokens");
	out->completion_tokens = usage_int(usage, "completion_tokens");
	if (!out->request_id)
		out->request_id = call_json_strdup(json_object_get(doc, "id"));
	return req->schema ? take_json(p, out, err) : SMR_OK;
}

static enum smr_rc openai_complete(struct provider *p, const struct provider_req *req,
				   struct provider_resp *out, struct smr_err *err)
{
	struct curl_slist *h = NULL;
	char *body = build_body(p, req);
	char *url = xasprintf("%s/chat/completions", p->cfg.base_url);
	char *auth = NULL;
	json_t *doc = NULL;
	long timeout = req->timeout_ms > 0 ? req->timeout_ms : p->cfg.timeout_ms;
	enum smr_rc rc;

	if (p->cfg.api_key) {
		auth = xasprintf("Authorization: Bearer %s", p->cfg.api_key);
		h = curl_slist_append(h, auth);
	}
	rc = call_exchange(p, url, h, body, timeout, &doc, out, err);
	if (!rc)
		rc = parse_reply(p, req, doc, out, err);
	json_decref(doc);
	curl_slist_free_all(h);
	if (auth)
		memset(auth, 0, strlen(auth));
	free(auth);
	free(url);
	free(body);
	return rc;
}

const struct provider_ops provider_openai_ops = {
	.name = "openai",
	.complete = openai_complete,
};
