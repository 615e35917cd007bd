/*
 * anthropic.c -- the Messages backend (WIRE.md section 2).
 *
 * POST {base}/v1/messages with x-api-key and anthropic-version: 2023-06-01.
 * The system text goes in the top-level "system" field and the messages are
 * made to alternate strictly from "user" (shape.h).  A schema request
 * becomes one tool with that input_schema plus a tool_choice forcing it; the
 * tool_use block's input is the structured reply.
 *
 * A streamed reply is named events: message_start (model, input tokens),
 * content_block_start / _delta / _stop (text_delta pieces), ping,
 * message_delta (stop_reason, cumulative usage) and message_stop, or an
 * `error` event (e.g. overloaded_error) after the 200.  Events it does not
 * know are skipped, as the SDK does.
 */
#include "provider/call.h"
#include "provider/decode.h"
#include "provider/shape.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define ANTHROPIC_VERSION "2023-06-01"

static const char *tool_name(const struct provider_req *req)
{
	return req->schema_name ? req->schema_name : "output";
}

static void add_tool(json_t *body, const struct provider_req *req)
{
	json_t *tool = json_pack("{s:s, s:O}", "name", tool_name(req),
				 "input_schema", (json_t *)req->schema);

	json_object_set_new(tool, "description",
			    json_string(req->schema_description ? req->schema_description :
					"Record the structured output."));
	json_object_set_new(body, "tools", json_pack("[o]", tool));
	json_object_set_new(body, "tool_choice",
			    json_pack("{s:s, s:s}", "type", "tool", "name", tool_name(req)));
}

/* The request body; caller free()s. */
static char *build_body(const struct provider *p, const struct provider_req *req, int stream)
{
	json_t *body = json_object();
	char *system = shape_system(req->system, req->msgs, req->n_msgs);
	struct buf msgs = BUF_INIT(0);
	char *s;

	json_object_set_new(body, "model", json_string(req->model));
	json_object_set_new(body, "max_tokens",
			    json_integer(req->max_tokens > 0 ? req->max_tokens :
					 p->cfg.max_tokens));
	if (*system)
		json_object_set_new(body, "system", json_string(system));
	if (req->temperature >= 0)
		json_object_set_new(body, "temperature", json_real(req->temperature));
	if (req->schema)
		add_tool(body, req);
	json_object_set_new(body, "stream", json_boolean(stream));
	shape_alternate_write(&msgs, req->msgs, req->n_msgs);
	s = shape_body(body, "messages", &msgs);
	buf_release(&msgs);
	json_decref(body);
	free(system);
	return s;
}

static int64_t usage_int(const json_t *usage, const char *key)
{
	const json_t *v = json_object_get(usage, key);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static const char *str_or_empty(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* Text blocks joined, and the forced tool's input if there is one. */
static void read_content(const json_t *content, const char *tool, struct buf *text,
			 const json_t **input)
{
	size_t i;
	const json_t *block;
	const char *type;

	json_array_foreach(content, i, block) {
		type = json_string_value(json_object_get(block, "type"));
		if (!type)
			continue;
		if (!strcmp(type, "text"))
			buf_adds(text, str_or_empty(json_object_get(block, "text")));
		else if (!strcmp(type, "tool_use") && tool &&
			 !strcmp(str_or_empty(json_object_get(block, "name")), tool))
			*input = json_object_get(block, "input");
	}
}

static enum smr_rc parse_reply(struct provider *p, const struct provider_req *req,
			       const json_t *doc, struct provider_resp *out,
			       struct smr_err *err)
{
	const json_t *content = json_object_get(doc, "content");
	const json_t *usage = json_object_get(doc, "usage");
	const json_t *input = NULL;
	struct buf text = BUF_INIT(0);

	if (!json_is_array(content))
		return smr_errf(err, SMR_EPROVIDER, "%s: malformed reply: no content array",
				p->name);
	read_content(content, req->schema ? tool_name(req) : NULL, &text, &input);
	if (req->schema && input) {
		out->json = json_deep_copy(input);
		out->text = json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY);
		buf_release(&text);
	} else if (req->schema) {
		out->json = json_loads(text.ptr, JSON_DECODE_ANY, NULL);
		out->text = buf_detach(&text, NULL);
		if (!out->json)
			return smr_errf_why(err, SMR_EPROVIDER, SMR_WHY_REPLY_NOT_JSON,
					    "%s: the model did not call the '%s' tool", p->name,
					    tool_name(req));
	} else {
		out->text = buf_detach(&text, NULL);
	}
	out->finish_reason = call_json_strdup(json_object_get(doc, "stop_reason"));
	out->model = call_json_strdup(json_object_get(doc, "model"));
	out->prompt_tokens = usage_int(usage, "input_tokens");
	out->completion_tokens = usage_int(usage, "output_tokens");
	if (!out->request_id)
		out->request_id = call_json_strdup(json_object_get(doc, "id"));
	return SMR_OK;
}

static void anthropic_request(struct provider *p, const struct provider_req *req, int stream,
			      struct call_request *out)
{
	out->url = xasprintf("%s/v1/messages", p->cfg.base_url);
	out->body = build_body(p, req, stream);
	out->headers = call_key_header(NULL, "x-api-key: ", p->cfg.api_key);
	out->headers = curl_slist_append(out->headers, "anthropic-version: " ANTHROPIC_VERSION);
}

static void take_usage(struct reply_decoder *d, const json_t *usage)
{
	if (json_is_object(usage))
		decoder_usage(d, usage_int(usage, "input_tokens"), usage_int(usage, "output_tokens"));
}

/* The text of part (a content block or a delta) when its type is want. */
static void take_text(struct reply_decoder *d, const json_t *part, const char *want)
{
	const json_t *text = json_object_get(part, "text");

	if (!strcmp(str_or_empty(json_object_get(part, "type")), want) && json_is_string(text))
		decoder_text(d, json_string_value(text), json_string_length(text));
}

static void take_event(struct reply_decoder *d, const char *type, const json_t *doc)
{
	const json_t *msg = json_object_get(doc, "message");

	if (!strcmp(type, "message_start")) {
		decoder_set(&d->model, json_object_get(msg, "model"));
		decoder_set(&d->reply_id, json_object_get(msg, "id"));
		take_usage(d, json_object_get(msg, "usage"));
	} else if (!strcmp(type, "content_block_start")) {
		take_text(d, json_object_get(doc, "content_block"), "text");
	} else if (!strcmp(type, "content_block_delta")) {
		take_text(d, json_object_get(doc, "delta"), "text_delta");
	} else if (!strcmp(type, "message_delta")) {
		decoder_set(&d->finish_reason,
			    json_object_get(json_object_get(doc, "delta"), "stop_reason"));
		take_usage(d, json_object_get(doc, "usage"));
	} else if (!strcmp(type, "message_stop")) {
		decoder_end(d);
	} else if (!strcmp(type, "error")) {
		decoder_provider_error(d, doc);
	}
}

static void anthropic_stream_event(struct reply_decoder *d, const struct sse_event *ev)
{
	const char *type = ev->type;
	json_t *doc;

	if (!strcmp(type, "ping"))
		return;
	doc = decoder_json(d, ev);
	if (!doc)
		return;
	if (!strcmp(type, "message"))   /* no event: line; the data says its type */
		type = str_or_empty(json_object_get(doc, "type"));
	take_event(d, type, doc);
	json_decref(doc);
}

const struct provider_ops provider_anthropic_ops = {
	.name = "anthropic",
	.request = anthropic_request,
	.parse_reply = parse_reply,
	.stream_event = anthropic_stream_event,
};
