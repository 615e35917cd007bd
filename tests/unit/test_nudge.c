/*
 * test_nudge.c -- the "consider checkpointing" signal: turn threshold and
 * decision language, never more than a suggestion.
 */
#include "harness.h"
#include "domain/nudge.h"

static int has_reason(const struct nudge *n, const char *part)
{
	for (size_t i = 0; i < n->n_reasons; i++)
		if (strstr(n->reasons[i], part))
			return 1;
	return 0;
}

TEST(nudge_turn_threshold)
{
	struct nudge_in in = { .turns_since_checkpoint = 9, .message = "hello", .reply = "hi" };
	struct nudge n;

	nudge_eval(&in, &n);
	CHECK(!n.suggested);
	CHECK_INT(n.n_reasons, 0);
	nudge_release(&n);

	in.turns_since_checkpoint = 10;         /* default threshold 10 */
	nudge_eval(&in, &n);
	CHECK(n.suggested);
	CHECK_INT(n.n_reasons, 1);
	CHECK(has_reason(&n, "10 turns since the last checkpoint"));
	nudge_release(&n);

	in.threshold = 3;
	in.turns_since_checkpoint = 3;
	nudge_eval(&in, &n);
	CHECK(n.suggested);
	CHECK(has_reason(&n, "threshold 3"));
	nudge_release(&n);
}

TEST(nudge_decision_language)
{
	struct nudge_in in = { .turns_since_checkpoint = 0 };
	struct nudge n;

	in.message = "OK, let's go with Postgres then.";
	nudge_eval(&in, &n);
	CHECK(n.suggested);
	CHECK(has_reason(&n, "in the message: \"let's go with\""));
	nudge_release(&n);

	in.message = "what now?";
	in.reply = "Since we decided on SQLite, the next step is the schema.";
	nudge_eval(&in, &n);
	CHECK(n.suggested);
	CHECK(has_reason(&n, "in the reply: \"we decided\""));
	nudge_release(&n);

	in.message = "Agreed.";
	in.reply = NULL;
	in.turns_since_checkpoint = 12;
	nudge_eval(&in, &n);
	CHECK_INT(n.n_reasons, 2);
	nudge_release(&n);
}

TEST(nudge_phrase_matching)
{
	CHECK_STR(nudge_find_decision("Let\xE2\x80\x99s go with plan B"), "let's go with");
	CHECK_STR(nudge_find_decision("Decision: ship Friday"), "decision:");
	CHECK_STR(nudge_find_decision("so that's our FINAL ANSWER"), "final answer");
	CHECK_STR(nudge_find_decision("we'll go with the blue one"), "we'll go with");
	CHECK_STR(nudge_find_decision("agreed"), "agreed");
	CHECK(nudge_find_decision("they disagreed about it") == NULL);
	CHECK(nudge_find_decision("an agreedly odd word") == NULL);
	CHECK(nudge_find_decision("what should we decide?") == NULL);
	CHECK(nudge_find_decision("") == NULL);
	CHECK(nudge_find_decision(NULL) == NULL);
}
