/*
 * test_thread.c -- a session's turns as a tree (domain/thread.h): the path
 * to an end, versions beside each other, the newest end through a turn, a
 * reply's parts joined into one for the model, and a continued reply sent
 * last (context.h's prefill).
 */
#include "harness.h"
#include "domain/context.h"
#include "domain/thread.h"

#include <string.h>

/* A turn numbered seq with role and content, following parent (-1: the turn before). */
static struct turn tt(int64_t seq, const char *role, const char *content, int64_t parent)
{
	struct turn t = { 0 };

	t.seq = seq;
	t.role = (char *)role;
	t.content = (char *)content;
	t.has_parent = parent >= 0;
	t.parent_seq = parent;
	return t;
}

/*
 *   1 user q
 *   2 assistant a (stopped)      3 assistant b (regenerated, beside 2)
 *   4 assistant a' (continues 2)
 *   5 user q2 (after 4)          6 user q2' (edited, beside 5)
 */
static void tree(struct turn v[6])
{
	v[0] = tt(1, "user", "q", -1);
	v[1] = tt(2, "assistant", "one, two", -1);
	v[2] = tt(3, "assistant", "b", 1);
	v[3] = tt(4, "assistant", ", three", 2);
	v[4] = tt(5, "user", "q2", 4);
	v[5] = tt(6, "user", "q2'", 4);
}

TEST(thread_path_follows_parents_not_numbers)
{
	struct turn v[6];
	size_t idx[6];
	int64_t missing = -1;
	size_t n;

	tree(v);
	n = thread_path(v, 6, 6, 0, idx, &missing);
	CHECK_INT(n, 4);
	CHECK_INT(missing, 0);
	if (n == 4) {
		CHECK_INT(v[idx[0]].seq, 1);
		CHECK_INT(v[idx[1]].seq, 2);
		CHECK_INT(v[idx[2]].seq, 4);
		CHECK_INT(v[idx[3]].seq, 6);
	}
	n = thread_path(v, 6, 3, 0, idx, &missing);
	CHECK_INT(n, 2);                       /* the regenerated reply: q, b */
	/* a floor stops the walk; a parent not given is reported */
	CHECK_INT(thread_path(v, 6, 6, 2, idx, &missing), 2);
	CHECK_INT(missing, 0);
	CHECK_INT(thread_path(v + 2, 4, 6, 0, idx, &missing), 2);
	CHECK_INT(missing, 2);
}

TEST(thread_newest_end_takes_the_newest_line)
{
	struct turn v[6];

	tree(v);
	CHECK_INT(thread_newest_end(v, 6, 1), 3);   /* the question's newest reply ends it */
	CHECK_INT(thread_newest_end(v, 6, 2), 6);
	CHECK_INT(thread_newest_end(v, 6, 5), 5);
	CHECK_INT(thread_newest_end(v, 6, 3), 3);
}

TEST(thread_view_joins_a_continued_reply)
{
	struct turn v[6];
	struct thread_view tv = { 0 };

	tree(v);
	thread_view_build(v, 6, 5, 0, &tv);
	CHECK_INT(tv.n, 3);
	if (tv.n == 3) {
		CHECK_STR(tv.turns[1].role, "assistant");
		CHECK_STR(tv.turns[1].content, "one, two, three");
		CHECK_INT(tv.turns[1].seq, 2);
		CHECK_STR(tv.turns[2].content, "q2");
	}
	thread_view_release(&tv);
}

TEST(context_prefill_goes_last_as_the_assistant)
{
	struct turn v[6];
	struct context_in in = { 0 };
	struct context cx;

	tree(v);
	in.turns = v;
	in.n_turns = 0;
	in.history_base_seq = 0;
	in.message = "q";
	in.message_seq = 1;
	in.prefill = "one, two";
	in.prefill_seq = 2;
	context_build(&in, &cx);
	CHECK_INT(cx.n_msgs, 2);
	if (cx.n_msgs == 2) {
		CHECK_STR(cx.msgs[0].role, "user");
		CHECK_STR(cx.msgs[1].role, "assistant");
		CHECK_STR(cx.msgs[1].content, "one, two");
	}
	CHECK_INT(cx.n_included, 2);
	CHECK_INT(cx.chars, 1 + 8);
	context_release(&cx);
}
