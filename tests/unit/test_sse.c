/*
 * test_sse.c -- the server-sent events parser against the WHATWG rules
 * (field parsing, line endings, BOM, comments, dispatch, UTF-8 repair), its
 * caps, and its independence from how the bytes are split.
 */
#include "harness.h"
#include "provider/sse.h"

#include <stdlib.h>

#define CAP 256

/* Every dispatched event as "type|data|id\n". */
static int record(void *ud, const struct sse_event *ev)
{
	struct buf *out = ud;

	buf_addf(out, "%s|%s|%s\n", ev->type, ev->data, ev->id);
	return 0;
}

/* Parses s fed in pieces of at most step bytes (0: at once); the recorded events. */
static char *parse(const char *s, size_t step, enum sse_status *status)
{
	struct buf out = BUF_INIT(0);
	struct sse_parser p;
	size_t n = strlen(s), k;
	enum sse_status st = SSE_OK;

	sse_init(&p, CAP, CAP, record, &out);
	for (size_t i = 0; i < n; i += k) {
		k = step && step < n - i ? step : n - i;
		st = sse_feed(&p, s + i, k);
	}
	sse_release(&p);
	if (status)
		*status = st;
	return buf_detach(&out, NULL);
}

static void check_parse(const char *in, const char *want)
{
	char *got = parse(in, 0, NULL);
	char *bytewise = parse(in, 1, NULL);

	CHECK_STR(got, want);
	CHECK_STR(bytewise, want);
	free(got);
	free(bytewise);
}

TEST(sse_fields_follow_the_whatwg_rules)
{
	check_parse("data: YHOO\ndata: +2\ndata: 10\n\n", "message|YHOO\n+2\n10|\n");
	/* the spec's example: comment, ids, one space removed after the colon */
	check_parse(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
		    "data:  third event\n\n",
		    "message|first event|1\nmessage|second event|\nmessage| third event|\n");
	/* "data" alone is an empty value; an event of only that has empty data */
	check_parse("data\n\ndata\ndata\n\ndata:\n", "message||\nmessage|\n|\n");
	check_parse("event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: x\n\n",
		    "add|73857293|\nremove|2153|\nmessage|x|\n");
	/* "data :" is an unknown field; unknown fields and events without data go nowhere */
	check_parse("data :x\n\nfoo: bar\n\nevent: lonely\n\ndata: y\n\n", "message|y|\n");
	/* an id containing NUL is ignored; the last id persists across events */
	check_parse("id: 7\ndata: a\n\ndata: b\n\n", "message|a|7\nmessage|b|7\n");
	/* an event still being built at the end is dropped */
	check_parse("data: kept\n\ndata: cut", "message|kept|\n");
}

TEST(sse_retry_takes_only_digits)
{
	struct buf out = BUF_INIT(0);
	struct sse_parser p;

	sse_init(&p, CAP, CAP, record, &out);
	sse_feed(&p, "retry: 1500\n", 12);
	CHECK_INT(p.retry_ms, 1500);
	sse_feed(&p, "retry: 15x\nretry:\n", 18);
	CHECK_INT(p.retry_ms, 1500);
	sse_release(&p);
	buf_release(&out);
}

TEST(sse_line_endings_crlf_lf_cr_and_mixed)
{
	const char *want = "message|a|\nmessage|b|\nmessage|c\nd|\n";

	check_parse("data: a\r\n\r\ndata: b\r\n\r\ndata: c\r\ndata: d\r\n\r\n", want);
	check_parse("data: a\r\rdata: b\r\rdata: c\rdata: d\r\r", want);
	check_parse("data: a\n\ndata: b\r\rdata: c\r\ndata: d\n\r\n", want);
	/* a CR at the end of one feed and the LF at the start of the next are one line end */
	check_parse("data: a\r\n\r\n", "message|a|\n");
}

TEST(sse_bom_is_dropped_once_even_when_split)
{
	check_parse("\xEF\xBB\xBF" "data: x\n\n", "message|x|\n");
	/* only the first BOM: a second one is part of the field name */
	check_parse("\xEF\xBB\xBF\xEF\xBB\xBF" "data: x\n\ndata: y\n\n", "message|y|\n");
	/* a partial BOM is text: here the start of an unknown field name */
	check_parse("\xEF\xBB" "data: x\n\ndata: y\n\n", "message|y|\n");
}

TEST(sse_malformed_utf8_becomes_replacement_characters)
{
	check_parse("data: a\xFF" "b\n\n", "message|a\xEF\xBF\xBD" "b|\n");
	/* a truncated 3-byte sequence is one U+FFFD; a character cut across feeds is whole */
	check_parse("data: \xE2\x82" "A \xE2\x82\xAC\n\n", "message|\xEF\xBF\xBD" "A \xE2\x82\xAC|\n");
}

TEST(sse_comments_and_keep_alives_pass_without_events)
{
	struct buf in = BUF_INIT(0);
	char *got;

	for (int i = 0; i < 1000; i++)
		buf_adds(&in, ": keep-alive\n");
	buf_adds(&in, "data: after\n\n:\n\n");
	got = parse(in.ptr, 7, NULL);
	CHECK_STR(got, "message|after|\n");
	free(got);
	buf_release(&in);
}

TEST(sse_caps_refuse_long_lines_and_big_events)
{
	struct buf in = BUF_INIT(0);
	enum sse_status st;
	char *got;

	/* one line over the cap, whether it arrives whole or in pieces */
	buf_adds(&in, "data: ");
	for (int i = 0; i < CAP; i++)
		buf_addch(&in, 'x');
	buf_adds(&in, "\n\n");
	got = parse(in.ptr, 0, &st);
	CHECK_INT(st, SSE_TOO_BIG);
	CHECK_STR(got, "");
	free(got);
	got = parse(in.ptr, 5, &st);
	CHECK_INT(st, SSE_TOO_BIG);
	free(got);
	/* short lines adding up past the event cap; the events before it still came */
	buf_reset(&in);
	buf_adds(&in, "data: ok\n\n");
	for (int i = 0; i < CAP / 8; i++)
		buf_adds(&in, "data: 12345678\n");
	buf_adds(&in, "\ndata: never\n\n");
	got = parse(in.ptr, 3, &st);
	CHECK_INT(st, SSE_TOO_BIG);
	CHECK_STR(got, "message|ok|\n");
	free(got);
	buf_release(&in);
}

static int stop_at_first(void *ud, const struct sse_event *ev)
{
	record(ud, ev);
	return 1;
}

TEST(sse_callback_can_stop_the_parser)
{
	struct buf out = BUF_INIT(0);
	struct sse_parser p;

	sse_init(&p, CAP, CAP, stop_at_first, &out);
	CHECK_INT(sse_feed(&p, "data: 1\n\ndata: 2\n\n", 18), SSE_STOPPED);
	CHECK_INT(sse_feed(&p, "data: 3\n\n", 9), SSE_STOPPED);
	CHECK_STR(out.ptr, "message|1|\n");
	sse_reset(&p);
	CHECK_INT(sse_feed(&p, "data: 4\n\n", 9), SSE_STOPPED);
	CHECK_STR(out.ptr, "message|1|\nmessage|4|\n");
	sse_release(&p);
	buf_release(&out);
}

TEST(sse_every_two_way_split_gives_the_same_events)
{
	const char *in = "\xEF\xBB\xBF: hi\r\nevent: a\r\ndata: \xC3\xA9t\xC3\xA9\r\n\r\n"
			 "data: \xF0\x9F\x8C\x8D\rid: 9\r\rdata\n\n";
	char *want = parse(in, 0, NULL), *got;
	struct buf out = BUF_INIT(0);
	struct sse_parser p;
	size_t n = strlen(in);

	CHECK_STR(want, "a|\xC3\xA9t\xC3\xA9|\nmessage|\xF0\x9F\x8C\x8D|9\nmessage||9\n");
	for (size_t k = 0; k <= n; k++) {
		buf_reset(&out);
		sse_init(&p, CAP, CAP, record, &out);
		sse_feed(&p, in, k);
		sse_feed(&p, in + k, n - k);
		sse_release(&p);
		if (strcmp(out.ptr, want))
			test_fail(__FILE__, __LINE__, "split at %zu: got '%s'", k, out.ptr);
	}
	got = parse(in, 1, NULL);
	CHECK_STR(got, want);
	free(got);
	free(want);
	buf_release(&out);
}
