/*
 * decode.h -- turns the bytes of a streamed reply into Smriti's few reply
 * events: text, usage, the provider's stop reason, the end, or an error.
 *
 * The bytes go through the SSE parser (sse.h) and each event to the
 * backend's stream_event (openai.c, anthropic.c), which reports what it
 * read with the decoder_*() calls below.  Text reaches on_text in whole
 * UTF-8 characters (it comes out of JSON strings), never empty, and never
 * more than max_text bytes in all.  Used by the loop (loop.c) for every
 * streaming call, and by the unit tests directly on recorded streams.
 *
 * Internal to src/provider.
 */
#ifndef SMRITI_PROVIDER_DECODE_H
#define SMRITI_PROVIDER_DECODE_H

#include <jansson.h>
#include <stddef.h>

#include "provider/provider_int.h"
#include "provider/sse.h"

#define DECODE_MAX_LINE  (1u << 20)     /* one SSE line */
#define DECODE_MAX_EVENT (1u << 20)     /* one SSE event's data */

struct reply_decoder {
	struct provider *p;
	void (*on_text)(void *ud, const char *text, size_t len);
	void (*on_usage)(void *ud, const struct provider_usage *u);  /* may be NULL */
	void *ud;
	struct sse_parser sse;
	size_t text_bytes;              /* handed to on_text so far */
	size_t max_text;
	struct provider_usage usage;    /* -1 while unknown */
	char *finish_reason;            /* as the provider said it, or NULL */
	char *model;                    /* as the provider reported it, or NULL */
	char *reply_id;                 /* the reply's id (chatcmpl-..., msg_...), or NULL */
	int ended;                      /* the provider's end marker arrived */
	int failed;                     /* err says why; nothing more is read */
	struct smr_err err;
};

void decoder_init(struct reply_decoder *d, struct provider *p,
		  void (*on_text)(void *ud, const char *text, size_t len),
		  void (*on_usage)(void *ud, const struct provider_usage *u), void *ud);

/* Back to the state after decoder_init, for a retried attempt. */
void decoder_reset(struct reply_decoder *d);
void decoder_release(struct reply_decoder *d);

/* Parses n more bytes.  Returns 0, or -1 once the decoder failed. */
int decoder_feed(struct reply_decoder *d, const char *bytes, size_t n);

/*
 * The body ended.  Without the provider's end marker the reply is complete
 * only if a stop reason came (some servers omit [DONE]); otherwise the
 * decoder fails: the stream ended before the reply was complete.
 */
void decoder_close(struct reply_decoder *d);

/* How a reply with this stop reason ended: TRUNCATED for the token limit, else COMPLETE. */
enum provider_end decoder_end_for(const char *finish_reason);

/* ---- for the backends' stream_event ---- */

/* The event's data as a JSON object (new reference), or NULL with the decoder failed. */
json_t *decoder_json(struct reply_decoder *d, const struct sse_event *ev);
void decoder_text(struct reply_decoder *d, const char *text, size_t len);
/* Known counts (>= 0) replace the old ones; on_usage hears of any change. */
void decoder_usage(struct reply_decoder *d, int64_t prompt_tokens, int64_t completion_tokens);
void decoder_set(char **field, const json_t *v);   /* a string member, or left as is */
void decoder_end(struct reply_decoder *d);
/* The provider reported an error inside the stream (doc has its "error"). */
void decoder_provider_error(struct reply_decoder *d, const json_t *doc);
void decoder_fail(struct reply_decoder *d, enum smr_rc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
