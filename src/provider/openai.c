/*
 * openai.c -- the Chat Completions backend (WIRE.md section 1), used for
 * OpenAI itself ("openai") and any OpenAI-compatible server ("local":
 * Ollama, llama.cpp, vLLM).
 *
 * POST {base}/chat/completions, where base includes /v1.  The reply cap is
 * sent as max_completion_tokens to api.openai.com (max_tokens is deprecated
 * there) and, elsewhere, for the model families that refuse max_tokens (o1,
 * o3, gpt-5, ...), else as max_tokens (Ollama ignores the newer name); see
 * provider_token_param_name.  OPENAI_ORG_ID / OPENAI_PROJECT_ID go out as
 * OpenAI-Organization / OpenAI-Project, as the official SDKs send them.  A
 * schema request becomes response_format {type: json_schema, json_schema:
 * {name, schema, strict}}, the nesting llama.cpp also reads.
 *
 * Streamed replies are `data: <chunk>` events ending with `data: [DONE]`;
 * with stream_options.include_usage a last chunk carries the usage and no
 * choice (`choices: []`, or `null` from some vLLM versions).  A chunk with an
 * "error" member is an error sent after the 200.
 */
#include "provider/call.h"
#include "provider/decode.h"
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
static char *build_body(const struct provider *p, const struct provider_req *req, int stream)
{
	json_t *body = json_object();
	int max = req->max_tokens > 0 ? req->max_tokens : p->cfg.max_tokens;
	struct buf msgs = BUF_INIT(0);
	char *s;

	json_object_set_new(body, "model", json_string(req->model));
	json_object_set_new(body, provider_token_param_name(p->cfg.token_param, p->cfg.base_url,
							    req->model), json_integer(max));
	if (req->temperature >= 0)
		json_object_set_new(body, "temperature", json_real(req->temperature));
	if (req->schema)
		json_object_set_new(body, "response_format", response_format(req));
	json_object_set_new(body, "stream", json_boolean(stream));
	if (stream)
		json_object_set_new(body, "stream_options", json_pack("{s:b}", "include_usage", 1));
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

/* h plus "name: value", the value cut at a line break (a header cannot hold one). */
static struct curl_slist *add_header(struct curl_slist *h, const char *name, const char *value)
{
	char *line = xasprintf("%s: %.*s", name, (int)strcspn(value, "\r\n"), value);

	h = curl_slist_append(h, line);
	free(line);
	return h;
}

static void openai_request(struct provider *p, const struct provider_req *req, int stream,
			   struct call_request *out)
{
	out->url = xasprintf("%s/chat/completions", p->cfg.base_url);
	out->body = build_body(p, req, stream);
	out->headers = call_key_header(NULL, "Authorization: Bearer ", p->cfg.api_key);
	if (p->cfg.org_id)
		out->headers = add_header(out->headers, "OpenAI-Organization", p->cfg.org_id);
	if (p->cfg.project_id)
		out->headers = add_header(out->headers, "OpenAI-Project", p->cfg.project_id);
}

static int is_error_chunk(const json_t *doc)
{
	const json_t *e = json_object_get(doc, "error");

	if (json_is_object(e) || json_is_string(e))
		return 1;
	/* older vLLM: a flat {"object": "error", "message": ...} */
	return !json_is_array(json_object_get(doc, "choices")) &&
	       json_is_string(json_object_get(doc, "message"));
}

static void take_choice(struct reply_decoder *d, const json_t *choice)
{
	const json_t *delta = json_object_get(choice, "delta");
	const json_t *content = json_object_get(delta, "content");
	const json_t *refusal = json_object_get(delta, "refusal");

	if (json_is_string(content))
		decoder_text(d, json_string_value(content), json_string_length(content));
	if (json_is_string(refusal))
		decoder_text(d, json_string_value(refusal), json_string_length(refusal));
	decoder_set(&d->finish_reason, json_object_get(choice, "finish_reason"));
}

static void openai_stream_event(struct reply_decoder *d, const struct sse_event *ev)
{
	const json_t *usage;
	json_t *doc;

	if (!strncmp(ev->data, "[DONE]", 6)) {
		decoder_end(d);
		return;
	}
	doc = decoder_json(d, ev);
	if (!doc)
		return;
	if (is_error_chunk(doc)) {
		decoder_provider_error(d, doc);
		json_decref(doc);
		return;
	}
	if (!d->model)
		decoder_set(&d->model, json_object_get(doc, "model"));
	if (!d->reply_id)
		decoder_set(&d->reply_id, json_object_get(doc, "id"));
	take_choice(d, json_array_get(json_object_get(doc, "choices"), 0));
	usage = json_object_get(doc, "usage");
	if (json_is_object(usage))
		decoder_usage(d, usage_int(usage, "prompt_tokens"),
			      usage_int(usage, "completion_tokens"));
	json_decref(doc);
}

const struct provider_ops provider_openai_ops = {
	.name = "openai",
	.request = openai_request,
	.parse_reply = parse_reply,
	.stream_event = openai_stream_event,
};
