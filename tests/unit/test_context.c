/*
 * test_context.c -- context assembly: the history boundary, the artifact
 * cap on multi-byte text, budget trimming and the Checkpoint rendering.
 */
#include "harness.h"
#include "domain/context.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>

/* n turns with seq 1..n alternating user/assistant, content "turn <seq>" padded to len chars. */
static struct turn *make_turns(size_t n, size_t len)
{
	struct turn *v = xcalloc(n, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		char *s = xmalloc(len + 1);
		int k = snprintf(s, len + 1, "turn %zu", i + 1);

		for (size_t j = (size_t)k; j < len; j++)
			s[j] = '.';
		s[len] = '\0';
		v[i].seq = (int64_t)i + 1;
		v[i].role = xstrdup(i % 2 ? "assistant" : "user");
		v[i].content = s;
		v[i].session_id = xstrdup("s");
		v[i].created_at = xstrdup("t");
	}
	return v;
}

static struct context_in base_in(const struct turn *turns, size_t n)
{
	struct context_in in = { 0 };

	in.preamble = "You are terse.";
	in.turns = turns;
	in.n_turns = n;
	in.history_base_seq = -1;
	in.message = "new question";
	in.message_seq = (int64_t)n + 1;
	return in;
}

static char *repeat(const char *unit, size_t times)
{
	size_t n = strlen(unit);
	char *s = xmalloc(n * times + 1);

	for (size_t i = 0; i < times; i++)
		memcpy(s + i * n, unit, n);
	s[n * times] = '\0';
	return s;
}

TEST(context_boundary_is_exact)
{
	struct turn *turns = make_turns(6, 10);
	struct context_in in = base_in(turns, 6);
	struct context cx;

	in.history_base_seq = 3;
	context_build(&in, &cx);
	CHECK_INT(cx.n_included, 4);
	CHECK_INT(cx.included[0], 4);          /* the turn after the boundary is in */
	CHECK_INT(cx.included[3], 7);          /* the new message last */
	for (size_t i = 0; i < cx.n_msgs; i++)
		CHECK(cx.msgs[i].seq != 3);     /* the turn at the boundary is out */
	CHECK_INT(cx.n_msgs, 4);
	CHECK_STR(cx.msgs[0].content, turns[3].content);
	CHECK_STR(cx.msgs[3].content, "new question");
	CHECK_STR(cx.msgs[3].role, "user");
	CHECK_INT(cx.n_dropped, 0);
	CHECK(!cx.trimmed);
	context_release(&cx);

	in.history_base_seq = 0;
	context_build(&in, &cx);
	CHECK_INT(cx.n_msgs, 7);
	CHECK_INT(cx.included[0], 1);
	context_release(&cx);

	in.history_base_seq = 6;               /* everything is before the boundary */
	context_build(&in, &cx);
	CHECK_INT(cx.n_msgs, 1);
	CHECK_INT(cx.n_included, 1);
	CHECK_INT(cx.included[0], 7);
	context_release(&cx);
	turns_free(turns, 6);
}

/* Caps text through the artifact path and checks kept/cut character counts. */
static void check_cap(const char *text, size_t want_kept, size_t want_cut)
{
	struct buf b = BUF_INIT(0);
	size_t cut = context_add_capped(&b, text, CONTEXT_ARTIFACT_MAX_CHARS);
	char mark[80];
	const char *m;

	CHECK_INT(cut, want_cut);
	CHECK(utf8_valid(b.ptr, b.len));
	if (want_cut) {
		snprintf(mark, sizeof(mark), "\n[... truncated, %zu more characters]", want_cut);
		m = strstr(b.ptr, mark);
		CHECK(m != NULL);
		if (m) {
			CHECK_INT(strlen(m), strlen(mark));     /* the mark ends the text */
			CHECK_INT(utf8_chars(b.ptr, (size_t)(m - b.ptr)), want_kept);
			CHECK(!memcmp(b.ptr, text, (size_t)(m - b.ptr)));
		}
	} else {
		CHECK_STR(b.ptr, text);
		CHECK_INT(utf8_chars(b.ptr, b.len), want_kept);
	}
	buf_release(&b);
}

TEST(context_artifact_cap_counts_characters)
{
	char *emoji = repeat("\xF0\x9F\x98\x80", 2500);          /* U+1F600, 4 bytes each */
	char *cjk = repeat("\xE6\xBC\xA2", 2001);                /* U+6F22, 3 bytes */
	char *comb = repeat("e\xCC\x81", 1500);                  /* e + U+0301: 3000 code points */
	char *exact = repeat("\xC3\xA9", 2000);                  /* é x 2000: no cut */
	char *ascii = repeat("a", 1999);
	char *mixed = xasprintf("%s\xF0\x9F\x98\x80\xF0\x9F\x98\x80", ascii);

	check_cap(emoji, 2000, 500);
	check_cap(cjk, 2000, 1);
	check_cap(comb, 2000, 1000);
	check_cap(exact, 2000, 0);
	check_cap(mixed, 2000, 1);
	check_cap("", 0, 0);
	free(emoji);
	free(cjk);
	free(comb);
	free(exact);
	free(ascii);
	free(mixed);
}

TEST(context_artifact_cap_applies_in_checkpoint)
{
	struct checkpoint c;
	char *big = repeat("\xE2\x9C\x93", 2100);               /* U+2713 x 2100 */
	char *text;

	checkpoint_init(&c);
	c.title = xstrdup("T");
	json_array_append_new(c.artifacts, json_pack("{s:s, s:s, s:s}", "name", "plan.md",
						     "kind", "text", "content", big));
	json_array_append_new(c.artifacts, json_pack("{s:s, s:s, s:s}", "name", "small",
						     "kind", "code", "content", "x = 1"));
	text = context_render_checkpoint(&c);
	CHECK(utf8_valid(text, strlen(text)));
	CHECK(strstr(text, "[... truncated, 100 more characters]") != NULL);
	CHECK(strstr(text, "x = 1") != NULL);
	CHECK(strstr(text, "plan.md") != NULL);
	/* 2000 check marks in a row survive, 2001 do not */
	{
		char *kept = repeat("\xE2\x9C\x93", 2000);
		char *over = repeat("\xE2\x9C\x93", 2001);

		CHECK(strstr(text, kept) != NULL);
		CHECK(strstr(text, over) == NULL);
		free(kept);
		free(over);
	}
	free(text);
	free(big);
	checkpoint_release(&c);
}

TEST(context_renders_every_checkpoint_field)
{
	struct checkpoint c;
	char *t;

	checkpoint_init(&c);
	c.hash = xstrdup("abc123");
	c.title = xstrdup("Pick a database");
	c.summary = xstrdup("We compared stores.");
	json_array_append_new(c.decisions, json_pack("{s:s, s:s}", "text", "Use Postgres",
						     "rationale", "team knows it"));
	json_array_append_new(c.assumptions, json_pack("{s:s}", "text", "Load stays small"));
	json_array_append_new(c.tasks, json_pack("{s:s, s:s}", "text", "Write schema",
						 "status", "done"));
	json_array_append_new(c.tasks, json_pack("{s:s, s:s}", "text", "Benchmark",
						 "status", "open"));
	json_array_append_new(c.open_questions, json_pack("{s:s}", "text", "Which host?"));
	json_array_append_new(c.entities, json_pack("{s:s, s:s, s:s}", "name", "Postgres",
						    "kind", "tool", "description", "a database"));
	t = context_render_checkpoint(&c);
	CHECK(strstr(t, "Checkpoint: abc123") != NULL);
	CHECK(strstr(t, "Title: Pick a database") != NULL);
	CHECK(strstr(t, "Summary:\nWe compared stores.") != NULL);
	CHECK(strstr(t, "Decisions:\n- Use Postgres (rationale: team knows it)") != NULL);
	CHECK(strstr(t, "Assumptions:\n- Load stays small") != NULL);
	CHECK(strstr(t, "Tasks:\n- [done] Write schema\n- [open] Benchmark") != NULL);
	CHECK(strstr(t, "Open questions:\n- Which host?") != NULL);
	CHECK(strstr(t, "Entities:\n- Postgres [tool]: a database") != NULL);
	CHECK(strstr(t, "Artifacts") == NULL);     /* empty sections are left out */
	free(t);
	checkpoint_release(&c);
}

TEST(context_system_text_order)
{
	struct checkpoint c;
	struct context_in in = base_in(NULL, 0);
	struct context cx;

	checkpoint_init(&c);
	c.title = xstrdup("State");
	in.checkpoint = &c;
	context_build(&in, &cx);
	CHECK(!strncmp(cx.system, "You are terse.\n\n", 16));
	CHECK(strstr(cx.system, "Title: State") != NULL);
	context_release(&cx);

	in.preamble = NULL;
	in.checkpoint = NULL;
	context_build(&in, &cx);
	CHECK_STR(cx.system, "");
	CHECK_INT(cx.n_msgs, 1);
	context_release(&cx);
	checkpoint_release(&c);
}

TEST(context_budget_drops_oldest_and_keeps_checkpoint)
{
	struct turn *turns = make_turns(10, 100);
	struct context_in in = base_in(turns, 10);
	struct checkpoint c;
	struct context cx;
	size_t fixed;

	checkpoint_init(&c);
	c.title = xstrdup("Keep me");
	in.checkpoint = &c;
	context_build(&in, &cx);                /* unlimited: the size of everything */
	fixed = cx.chars - 10 * 100;
	CHECK(!cx.trimmed);
	CHECK_INT(cx.n_msgs, 11);
	context_release(&cx);

	in.budget_chars = fixed + 450;          /* room for 4 turns of 100 */
	context_build(&in, &cx);
	CHECK(cx.trimmed);
	CHECK_INT(cx.n_dropped, 6);
	for (size_t i = 0; i < cx.n_dropped; i++)
		CHECK_INT(cx.dropped[i], (int64_t)i + 1);       /* oldest first */
	CHECK_INT(cx.n_msgs, 5);
	CHECK_INT(cx.msgs[0].seq, 7);           /* starts on a user turn */
	CHECK_STR(cx.msgs[0].role, "user");
	CHECK_INT(cx.included[cx.n_included - 1], 11);
	CHECK(cx.chars <= in.budget_chars);
	CHECK(strstr(cx.system, "Title: Keep me") != NULL);
	context_release(&cx);

	in.budget_chars = fixed + 350;          /* 3 fit, but 8 would start on a reply: 2 kept */
	context_build(&in, &cx);
	CHECK_INT(cx.n_dropped, 8);
	CHECK_INT(cx.msgs[0].seq, 9);
	CHECK_STR(cx.msgs[0].role, "user");
	context_release(&cx);

	in.budget_chars = 1;                    /* nothing fits: checkpoint and message stay */
	context_build(&in, &cx);
	CHECK(cx.trimmed);
	CHECK_INT(cx.n_dropped, 10);
	CHECK_INT(cx.n_msgs, 1);
	CHECK_STR(cx.msgs[0].content, "new question");
	CHECK(strstr(cx.system, "Title: Keep me") != NULL);
	context_release(&cx);
	checkpoint_release(&c);
	turns_free(turns, 10);
}

TEST(context_budget_counts_characters_not_bytes)
{
	struct turn *turns = make_turns(2, 10);
	struct context_in in = base_in(turns, 2);
	struct context cx;
	char *wide = repeat("\xF0\x9F\x98\x80", 50);     /* 50 chars, 200 bytes */

	free(turns[0].content);
	turns[0].content = wide;
	in.preamble = NULL;
	in.message = "q";
	context_build(&in, &cx);
	CHECK_INT(cx.chars, 50 + 10 + 1);
	context_release(&cx);
	in.budget_chars = 61;                   /* fits in characters, not in bytes */
	context_build(&in, &cx);
	CHECK(!cx.trimmed);
	context_release(&cx);
	turns_free(turns, 2);
}

TEST(context_budget_ignores_turns_before_boundary)
{
	struct turn *turns = make_turns(6, 100);
	struct context_in in = base_in(turns, 6);
	struct context cx;

	in.preamble = NULL;
	in.history_base_seq = 4;
	in.budget_chars = 250;                  /* turns 5 and 6 + message */
	context_build(&in, &cx);
	CHECK(!cx.trimmed);
	CHECK_INT(cx.n_dropped, 0);
	CHECK_INT(cx.n_msgs, 3);
	context_release(&cx);
	turns_free(turns, 6);
}
