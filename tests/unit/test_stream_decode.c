/*
 * test_stream_decode.c -- streamed replies of each wire format (recorded in
 * tests/fixtures/streams/) decoded into text, usage and how they ended:
 * fed whole, cut at every byte offset, cut at random places, and with
 * their line ends rewritten as CRLF and CR.  Also the decoder's failures:
 * mid-stream errors, malformed events, early ends and the text cap.
 */
#include "harness.h"
#include "provider/decode.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>

struct got {
	struct buf text;
	int split_char;         /* a delta that was not whole UTF-8 */
};

static void on_text(void *ud, const char *text, size_t len)
{
	struct got *g = ud;

	if (!len || !utf8_valid(text, len))
		g->split_char = 1;
	buf_add(&g->text, text, len);
}

static struct provider *make(const char *name)
{
	struct provider_cfg cfg;

	provider_cfg_defaults(&cfg);
	cfg.base_url = xstrdup("http://127.0.0.1:1");
	cfg.api_key = xstrdup("sk-decode-test");
	return provider_new(name, &cfg);
}

/*
 * Decodes bytes fed in pieces ending at cuts[0..ncuts) and then the rest;
 * a summary "text|prompt|completion|finish|end or error".  Caller free()s.
 */
static char *decode(struct provider *p, const char *bytes, size_t n, const size_t *cuts,
		    size_t ncuts)
{
	struct got g = { BUF_INIT(0), 0 };
	struct reply_decoder d;
	size_t at = 0;
	char *text, *out;

	decoder_init(&d, p, on_text, NULL, &g);
	for (size_t i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : n;

		decoder_feed(&d, bytes + at, end - at);
		at = end;
	}
	decoder_close(&d);
	text = buf_detach(&g.text, NULL);
	out = xasprintf("%s|%lld|%lld|%s|%s%s", text, (long long)d.usage.prompt_tokens,
			(long long)d.usage.completion_tokens,
			d.finish_reason ? d.finish_reason : "-",
			d.failed ? d.err.msg : decoder_end_for(d.finish_reason) ==
			PROVIDER_END_TRUNCATED ? "truncated" : "complete",
			g.split_char ? " (a delta cut a character)" : "");
	free(text);
	decoder_release(&d);
	return out;
}

static const struct {
	const char *file, *provider, *want;
} recorded[] = {
	{ "openai.sse", "openai",
	  "Gr\xC3\xBC\xC3\x9F" "e, \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x8C\x8D\ncaf\xC3\xA9 "
	  "\xF0\x9F\x98\x80|19|10|stop|complete" },
	{ "openai-error.sse", "openai",
	  "Die Antwort ist \xC2\xBD|-1|-1|-|openai: error mid-reply: server_error: The server "
	  "had an error while processing your request. Sorry about that!" },
	{ "vllm.sse", "local",
	  "\xCE\x95\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC \xD0\xB8 "
	  "\xD1\x80\xD1\x83\xD1\x81\xD1\x81\xD0\xBA\xD0\xB8\xD0\xB9|31|4|length|truncated" },
	{ "anthropic.sse", "anthropic",
	  "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9"
	  "\xE3\x83\x88 \xE2\x80\x94 na\xC3\xAFve \xE2\x80\x9Cquotes\xE2\x80\x9D "
	  "\xF0\x9F\x9A\x80|18|12|end_turn|complete" },
	{ "anthropic-error.sse", "anthropic",
	  "Partial r\xC3\xA9ponse|18|1|-|anthropic: error mid-reply: overloaded_error: "
	  "Overloaded" },
};

static char *load(const char *file, size_t *n)
{
	char *path = xasprintf("tests/fixtures/streams/%s", file), *s = NULL;
	struct smr_err err = SMR_ERR_INIT;

	if (sys_read_file(path, 1 << 20, &s, n, &err))
		test_fail(__FILE__, __LINE__, "%s", err.msg);
	free(path);
	return s;
}

/* s with every LF replaced by eol; caller free()s. */
static char *with_eol(const char *s, const char *eol)
{
	struct buf b = BUF_INIT(0);

	for (; *s; s++) {
		if (*s == '\n')
			buf_adds(&b, eol);
		else
			buf_addch(&b, *s);
	}
	return buf_detach(&b, NULL);
}

static void check_every_split(struct provider *p, const char *bytes, const char *want,
			      const char *what)
{
	size_t n = strlen(bytes), cuts[24], k;
	char *got;

	for (size_t at = 0; at <= n; at++) {
		got = decode(p, bytes, n, &at, 1);
		if (strcmp(got, want))
			test_fail(__FILE__, __LINE__, "%s cut at %zu: %s", what, at, got);
		free(got);
	}
	for (int round = 0; round < 40; round++) {
		k = (size_t)(rand() % 24);
		for (size_t i = 0; i < k; i++)
			cuts[i] = (size_t)rand() % (n + 1);
		for (size_t i = 1; i < k; i++)          /* ascending (insertion sort) */
			for (size_t j = i; j && cuts[j - 1] > cuts[j]; j--) {
				size_t t = cuts[j];

				cuts[j] = cuts[j - 1];
				cuts[j - 1] = t;
			}
		got = decode(p, bytes, n, cuts, k);
		if (strcmp(got, want))
			test_fail(__FILE__, __LINE__, "%s in %zu random pieces: %s", what, k + 1, got);
		free(got);
	}
}

TEST(stream_decode_recorded_replies_at_every_split_and_line_ending)
{
	static const char *const eols[] = { "\n", "\r\n", "\r" };
	size_t n;

	srand(10);
	for (size_t i = 0; i < sizeof(recorded) / sizeof(*recorded); i++) {
		struct provider *p = make(recorded[i].provider);
		char *bytes = load(recorded[i].file, &n), *got;

		got = decode(p, bytes, n, NULL, 0);
		CHECK_STR(got, recorded[i].want);
		free(got);
		for (size_t e = 0; e < 3; e++) {
			char *variant = with_eol(bytes, eols[e]);
			char *what = xasprintf("%s (eol %zu)", recorded[i].file, e);

			check_every_split(p, variant, recorded[i].want, what);
			free(what);
			free(variant);
		}
		free(bytes);
		provider_free(p);
	}
}

static void check_decode(const char *provider, const char *bytes, const char *want)
{
	struct provider *p = make(provider);
	char *got = decode(p, bytes, strlen(bytes), NULL, 0);

	CHECK_STR(got, want);
	free(got);
	provider_free(p);
}

TEST(stream_decode_ends_and_failures)
{
	/* the connection closed before any end: an error that keeps the text */
	check_decode("openai",
		     "data: {\"choices\":[{\"delta\":{\"content\":\"so far\"}}]}\n\n",
		     "so far|-1|-1|-|openai: the stream ended before the reply was complete");
	/* a stop reason but no [DONE]: complete (some servers omit it) */
	check_decode("openai",
		     "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
		     "x|-1|-1|stop|complete");
	/* bytes after the end marker are ignored */
	check_decode("openai", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
		     "data: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n",
		     "a|-1|-1|-|complete");
	check_decode("openai", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
		     "data: {not json\n\ndata: [DONE]\n\n",
		     "a|-1|-1|-|openai: malformed stream event 'message': "
		     "string or '}' expected near 'not'");
	/* an older vLLM's flat error object */
	check_decode("local", "data: {\"object\":\"error\",\"message\":\"boom\",\"type\":"
		     "\"BadRequestError\",\"code\":400}\n\n",
		     "|-1|-1|-|local: error mid-reply: BadRequestError: boom");
	/* Anthropic without event: lines reads the type from the data; max_tokens is truncation */
	check_decode("anthropic",
		     "data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\","
		     "\"text\":\"cut\"}}\n\ndata: {\"type\":\"message_delta\",\"delta\":"
		     "{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":5}}\n\n"
		     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		     "cut|-1|5|max_tokens|truncated");
	/* unknown events and thinking deltas are skipped; text in content_block_start counts */
	check_decode("anthropic",
		     "event: surprise\ndata: {}\n\nevent: content_block_start\ndata: {\"type\":"
		     "\"content_block_start\",\"content_block\":{\"type\":\"text\",\"text\":\"pre\"}}"
		     "\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\","
		     "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n"
		     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		     "pre|-1|-1|-|complete");
}

TEST(stream_decode_caps_the_text_and_redacts_the_key)
{
	struct provider *p = make("openai");
	const char *s = "data: {\"choices\":[{\"delta\":{\"content\":\"12345\"}}]}\n\n"
			"data: {\"choices\":[{\"delta\":{\"content\":\"6789\"}}]}\n\n"
			"data: [DONE]\n\n";
	char *got;

	p->cfg.max_reply_bytes = 8;
	got = decode(p, s, strlen(s), NULL, 0);
	CHECK_STR(got, "12345|-1|-1|-|openai: reply is larger than 8 bytes");
	free(got);
	s = "data: {\"error\":{\"message\":\"bad key sk-decode-test\",\"code\":\"invalid_api_key\"}}\n\n";
	got = decode(p, s, strlen(s), NULL, 0);
	CHECK_STR(got, "|-1|-1|-|openai: error mid-reply: invalid_api_key: bad key [redacted]");
	free(got);
	provider_free(p);
}
