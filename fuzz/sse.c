/*
 * sse.c -- fuzz target: the server-sent-events parser (provider/sse.c) and
 * the OpenAI and Anthropic stream decoders over it (provider/decode.c),
 * with the bytes cut anywhere.  Property: feeding the input in one piece
 * and in pieces cut at arbitrary points gives the same events, the same
 * text, usage and ending, and the same failure.  The first two bytes seed
 * the cuts; the third picks the wire format.
 */
#include "fuzz.h"

#include "provider/call.h"
#include "provider/decode.h"
#include "provider/sse.h"
#include "util/buf.h"

static struct provider *providers[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[] = { "openai", "anthropic" };

	(void)argc;
	(void)argv;
	provider_global_init();
	for (int i = 0; i < 2; i++) {
		struct provider_cfg cfg;

		provider_cfg_defaults(&cfg);
		cfg.api_key = strdup("sk-fuzz-key");
		providers[i] = provider_new(names[i], &cfg);
		FUZZ_CHECK(providers[i]);
	}
	return 0;
}

/* Every event as "type\x1fid\x1fdata\x1e", so two runs compare as strings. */
static int record(void *ud, const struct sse_event *ev)
{
	struct buf *b = ud;

	buf_add(b, ev->type, strlen(ev->type));
	buf_add(b, "\x1f", 1);
	buf_add(b, ev->id, strlen(ev->id));
	buf_add(b, "\x1f", 1);
	buf_add(b, ev->data, ev->data_len);
	buf_add(b, "\x1e", 1);
	return 0;
}

/* Feeds data to fn in pieces: whole when state is 0, else cut by the generator. */
#define FEED_PIECES(state, data, size, FEED)                                     \
	do {                                                                     \
		size_t at_ = 0;                                                  \
		while (at_ < (size)) {                                           \
			size_t n_ = (size) - at_;                                \
			if (state)                                               \
				n_ = 1 + fuzz_next(&(state)) % (n_ < 7 ? n_ : 7); \
			FEED((data) + at_, n_);                                  \
			at_ += n_;                                               \
		}                                                                \
	} while (0)

static enum sse_status parse_events(const char *data, size_t size, uint32_t cuts,
				    struct buf *out)
{
	struct sse_parser p;
	enum sse_status st;

	sse_init(&p, 512, 2048, record, out);
#define SSE_FEED(b, n) sse_feed(&p, (b), (n))
	FEED_PIECES(cuts, data, size, SSE_FEED);
	st = p.status;
	sse_release(&p);
	return st;
}

static void on_text(void *ud, const char *text, size_t len)
{
	buf_add(ud, text, len);
}

/* The decoder's outcome as one string: text, usage, ending, error. */
static void decode(struct provider *pr, const char *data, size_t size, uint32_t cuts,
		   struct buf *out)
{
	struct reply_decoder d;
	char tail[700];

	decoder_init(&d, pr, on_text, NULL, out);
#define DEC_FEED(b, n) decoder_feed(&d, (b), (n))
	FEED_PIECES(cuts, data, size, DEC_FEED);
	decoder_close(&d);
	snprintf(tail, sizeof(tail), "\n%lld/%lld %s %s %d %d %d %s",
		 (long long)d.usage.prompt_tokens, (long long)d.usage.completion_tokens,
		 d.finish_reason ? d.finish_reason : "-", d.model ? d.model : "-", d.ended,
		 d.failed, (int)d.err.code, d.err.msg);
	buf_add(out, tail, strlen(tail));
	decoder_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf whole = BUF_INIT(0), cut = BUF_INIT(0);
	enum sse_status s1, s2;
	uint32_t seed;
	struct provider *pr;

	if (size < 3)
		return 0;
	seed = ((uint32_t)data[0] << 8 | data[1]) + 1;
	pr = providers[data[2] & 1];
	data += 3;
	size -= 3;

	s1 = parse_events((const char *)data, size, 0, &whole);
	s2 = parse_events((const char *)data, size, seed, &cut);
	FUZZ_CHECK(s1 == s2);
	FUZZ_CHECK(whole.len == cut.len && !memcmp(whole.ptr, cut.ptr, whole.len));
	buf_release(&whole);
	buf_release(&cut);

	decode(pr, (const char *)data, size, 0, &whole);
	decode(pr, (const char *)data, size, seed, &cut);
	if (whole.len != cut.len || memcmp(whole.ptr, cut.ptr, whole.len))
		fprintf(stderr, "whole: %.*s\ncut: %.*s\n", (int)whole.len, whole.ptr,
			(int)cut.len, cut.ptr);
	FUZZ_CHECK(whole.len == cut.len && !memcmp(whole.ptr, cut.ptr, whole.len));
	buf_release(&whole);
	buf_release(&cut);
	return 0;
}
