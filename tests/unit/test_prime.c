/*
 * test_prime.c -- the agent's primer (domain/prime.h): what it holds, the
 * order the budget trims it in, and what always stays.
 */
#include "harness.h"
#include "domain/prime.h"

#include <stdlib.h>

/* Items long enough that leaving one out saves more than the line saying so costs. */
#define LONG " -- with the reasons given at length, so that one item weighs more than the" \
	" closing line that counts what was left out, as real items often do"

static struct checkpoint sample(void)
{
	struct checkpoint c = { 0 };

	c.hash = "3f2a9c1b7d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff";
	c.title = "Pick the store";
	c.summary = "We compared SQLite and PostgreSQL and chose SQLite for local use.";
	c.author = "alice";
	c.created_at = "2026-12-01T10:00:00Z";
	c.decisions = json_pack("[{s:s}, {s:s}]", "text", "Use SQLite" LONG, "text",
				"Flat schema" LONG);
	c.tasks = json_pack("[{s:s, s:s}, {s:s, s:s}]", "text", "Migrate" LONG, "status", "open",
			    "text", "Ship", "status", "done");
	c.open_questions = json_pack("[{s:s}]", "text", "Teams on PostgreSQL?" LONG);
	return c;
}

static void release(struct checkpoint *c)
{
	json_decref(c->decisions);
	json_decref(c->tasks);
	json_decref(c->open_questions);
}

static long omitted(const json_t *doc, const char *key)
{
	return (long)json_integer_value(json_object_get(json_object_get(doc, "omitted"), key));
}

TEST(prime_holds_loop_head_note_and_open_work)
{
	struct checkpoint c = sample();
	json_t *note = json_pack("{s:s, s:s, s:s, s:s, s:b}", "note", "keep the keys", "checkpoint",
				 c.hash, "author", "bob", "created_at", "2026-12-01T11:00:00Z",
				 "on_head", 1);
	struct prime_in in = { "demo", &c, note, 0, PRIME_TOOLS_CLI };
	json_t *doc = prime_build(&in);
	const char *text = json_string_value(json_object_get(doc, "text"));

	CHECK(strstr(text, "The hand-off loop:") != NULL);
	CHECK(strstr(text, "`smriti head demo`") != NULL);
	CHECK(strstr(text, "HEAD: 3f2a9c1b7d4e \"Pick the store\" by alice") != NULL);
	CHECK(strstr(text, "Last hand-off note (bob, 2026-12-01T11:00:00Z): keep the keys") != NULL);
	CHECK(strstr(text, "- [open] Migrate") != NULL);
	CHECK(strstr(text, "Ship") == NULL);          /* done: not open work */
	CHECK(strstr(text, "Teams on PostgreSQL?") != NULL);
	CHECK_INT(json_integer_value(json_object_get(doc, "budget")), PRIME_DEFAULT_BUDGET);
	CHECK_INT(omitted(doc, "decisions"), 0);
	json_decref(doc);
	json_decref(note);
	release(&c);
}

TEST(prime_trims_decisions_then_questions_then_tasks_then_summary)
{
	struct checkpoint c = sample();
	struct prime_in in = { "demo", &c, NULL, 0, PRIME_TOOLS_CLI };
	json_t *full = prime_build(&in), *doc;
	long tokens = (long)json_integer_value(json_object_get(full, "tokens"));
	long last_tokens = tokens + 1;
	int partial = 0;

	/* each smaller budget leaves out at least as much, in the stated order */
	for (long budget = tokens; budget >= PRIME_MIN_BUDGET; budget -= 5) {
		in.budget = (size_t)budget;
		doc = prime_build(&in);
		CHECK(omitted(doc, "open_questions") == 0 || omitted(doc, "decisions") == 2);
		CHECK(omitted(doc, "open_tasks") == 0 || omitted(doc, "open_questions") == 1);
		CHECK(!json_is_true(json_object_get(json_object_get(doc, "omitted"), "summary_cut")) ||
		      omitted(doc, "open_tasks") == 1);
		CHECK(strstr(json_string_value(json_object_get(doc, "text")), "HEAD: 3f2a9c1b7d4e") !=
		      NULL);
		partial |= omitted(doc, "decisions") == 1 || omitted(doc, "open_questions") == 0;
		last_tokens = (long)json_integer_value(json_object_get(doc, "tokens"));
		json_decref(doc);
	}
	CHECK(partial);                                 /* some budget trimmed only a little */
	CHECK(last_tokens > PRIME_MIN_BUDGET);          /* the loop alone is more: it stays */
	json_decref(full);
	release(&c);
}

TEST(prime_of_an_empty_space_and_for_mcp)
{
	struct prime_in in = { "my space", NULL, NULL, 0, PRIME_TOOLS_CLI };
	json_t *doc = prime_build(&in);
	const char *text = json_string_value(json_object_get(doc, "text"));

	CHECK(strstr(text, "HEAD: none yet") != NULL);
	CHECK(strstr(text, "`smriti head 'my space'`") != NULL);
	CHECK(json_is_null(json_object_get(doc, "head")));
	json_decref(doc);
	in.tools = PRIME_TOOLS_MCP;
	doc = prime_build(&in);
	CHECK(strstr(json_string_value(json_object_get(doc, "text")), "tool read_head") != NULL);
	json_decref(doc);
}
