/*
 * decode.c -- the part of reading a streamed reply that both wire formats
 * share: SSE parsing, the text cap, usage, stop reason and failures (see
 * decode.h).  What each event means is the backend's stream_event.
 */
#include "provider/call.h"
#include "provider/decode.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_event(void *ud, const struct sse_event *ev)
{
	struct reply_decoder *d = ud;

	d->p->ops->stream_event(d, ev);
	return d->failed || d->ended;
}

void decoder_init(struct reply_decoder *d, struct provider *p,
		  void (*on_text)(void *ud, const char *text, size_t len),
		  void (*on_usage)(void *ud, const struct provider_usage *u), void *ud)
{
	memset(d, 0, sizeof(*d));
	d->p = p;
	d->on_text = on_text;
	d->on_usage = on_usage;
	d->ud = ud;
	d->max_text = p->cfg.max_reply_bytes;
	d->usage.prompt_tokens = d->usage.completion_tokens = -1;
	sse_init(&d->sse, DECODE_MAX_LINE, DECODE_MAX_EVENT, on_event, d);
}

static void clear_fields(struct reply_decoder *d)
{
	free(d->finish_reason);
	free(d->model);
	free(d->reply_id);
	d->finish_reason = d->model = d->reply_id = NULL;
}

void decoder_reset(struct reply_decoder *d)
{
	clear_fields(d);
	sse_reset(&d->sse);
	d->text_bytes = 0;
	d->usage.prompt_tokens = d->usage.completion_tokens = -1;
	d->ended = d->failed = 0;
	d->err = (struct smr_err)SMR_ERR_INIT;
}

void decoder_release(struct reply_decoder *d)
{
	clear_fields(d);
	sse_release(&d->sse);
}

void decoder_fail(struct reply_decoder *d, enum smr_rc code, const char *fmt, ...)
{
	char msg[sizeof(d->err.msg)];
	va_list ap;

	if (d->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	smr_errf(&d->err, code, "%s: %s", d->p->name, msg);
	d->failed = 1;
}

int decoder_feed(struct reply_decoder *d, const char *bytes, size_t n)
{
	if (d->failed || d->ended)
		return d->failed ? -1 : 0;      /* bytes after the end marker are ignored */
	if (sse_feed(&d->sse, bytes, n) == SSE_TOO_BIG)
		decoder_fail(d, SMR_EPROVIDER, "malformed stream: an event is larger than %u bytes",
			     DECODE_MAX_EVENT);
	return d->failed ? -1 : 0;
}

void decoder_close(struct reply_decoder *d)
{
	if (d->ended || d->failed)
		return;
	if (d->finish_reason)
		d->ended = 1;
	else
		decoder_fail(d, SMR_EPROVIDER, "the stream ended before the reply was complete");
}

enum provider_end decoder_end_for(const char *finish_reason)
{
	static const char *const token_limit[] = {
		"length", "max_tokens", "model_context_window_exceeded",
	};

	for (size_t i = 0; finish_reason && i < sizeof(token_limit) / sizeof(*token_limit); i++)
		if (!strcmp(finish_reason, token_limit[i]))
			return PROVIDER_END_TRUNCATED;
	return PROVIDER_END_COMPLETE;
}

json_t *decoder_json(struct reply_decoder *d, const struct sse_event *ev)
{
	json_error_t jerr;
	json_t *doc = json_loadb(ev->data, ev->data_len, 0, &jerr);
	char *why;

	if (json_is_object(doc))
		return doc;
	why = call_clean_text(d->p, doc ? "not a JSON object" : jerr.text, 120);
	decoder_fail(d, SMR_EPROVIDER, "malformed stream event '%.40s': %s", ev->type, why);
	free(why);
	json_decref(doc);
	return NULL;
}

void decoder_text(struct reply_decoder *d, const char *text, size_t len)
{
	if (!len || d->failed)
		return;
	if (len > d->max_text - d->text_bytes) {
		decoder_fail(d, SMR_EPROVIDER, "reply is larger than %zu bytes", d->max_text);
		return;
	}
	d->text_bytes += len;
	d->on_text(d->ud, text, len);
}

void decoder_usage(struct reply_decoder *d, int64_t prompt_tokens, int64_t completion_tokens)
{
	struct provider_usage was = d->usage;

	if (prompt_tokens >= 0)
		d->usage.prompt_tokens = prompt_tokens;
	if (completion_tokens >= 0)
		d->usage.completion_tokens = completion_tokens;
	if (d->on_usage && memcmp(&was, &d->usage, sizeof(was)))
		d->on_usage(d->ud, &d->usage);
}

void decoder_set(char **field, const json_t *v)
{
	if (!json_is_string(v))
		return;
	free(*field);
	*field = xstrdup(json_string_value(v));
}

void decoder_end(struct reply_decoder *d)
{
	d->ended = 1;
}

void decoder_provider_error(struct reply_decoder *d, const json_t *doc)
{
	const char *code, *msg;
	char *clean_code, *clean_msg;

	call_error_detail(doc, &code, &msg);
	clean_code = call_clean_text(d->p, code ? code : "error", 64);
	clean_msg = call_clean_text(d->p, msg ? msg : "(no message)", 320);
	decoder_fail(d, SMR_EPROVIDER, "error mid-reply: %s: %s", clean_code, clean_msg);
	free(clean_code);
	free(clean_msg);
}
