/*
 * test_graph.c -- the drawing order of a checkpoint graph: children before
 * parents, newest first among those ready, forks and merges included.
 */
#include "harness.h"
#include "domain/graph.h"

/* Position of hash in the order. */
static size_t pos(const struct graph_node *v, const size_t *order, size_t n, const char *h)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[order[i]].hash, h))
			return i;
	return n;
}

TEST(graph_order_line_and_fork)
{
	/* a <- b <- c (main), b <- x <- y (a fork written later than c) */
	struct graph_node v[] = {
		{ "y", "x", NULL, "2026-01-01T00:00:05Z" },
		{ "a", NULL, NULL, "2026-01-01T00:00:01Z" },
		{ "c", "b", NULL, "2026-01-01T00:00:03Z" },
		{ "b", "a", NULL, "2026-01-01T00:00:02Z" },
		{ "x", "b", NULL, "2026-01-01T00:00:04Z" },
	};
	size_t order[5];

	graph_order(v, 5, order);
	CHECK_STR(v[order[0]].hash, "y");
	CHECK_STR(v[order[1]].hash, "x");
	CHECK_STR(v[order[2]].hash, "c");
	CHECK_STR(v[order[3]].hash, "b");
	CHECK_STR(v[order[4]].hash, "a");
}

TEST(graph_order_children_first_despite_clock)
{
	/* the child's clock ran behind its parent's: it still comes first */
	struct graph_node v[] = {
		{ "p", NULL, NULL, "2026-01-01T00:00:09Z" },
		{ "c", "p", NULL, "2026-01-01T00:00:01Z" },
		{ "m", "c", "q", "2026-01-01T00:00:02Z" },
		{ "q", "p", NULL, "2026-01-01T00:00:08Z" },
	};
	size_t order[4];

	graph_order(v, 4, order);
	CHECK_STR(v[order[0]].hash, "m");
	CHECK(pos(v, order, 4, "c") < pos(v, order, 4, "p"));
	CHECK(pos(v, order, 4, "q") < pos(v, order, 4, "p"));
	CHECK_STR(v[order[3]].hash, "p");
}

TEST(graph_order_parent_outside_and_ties)
{
	/* a parent not in the page is ignored; equal times keep the later write first */
	struct graph_node v[] = {
		{ "a", "gone", NULL, "2026-01-01T00:00:01Z" },
		{ "b", "gone", NULL, "2026-01-01T00:00:01Z" },
	};
	size_t order[2];

	graph_order(v, 2, order);
	CHECK_STR(v[order[0]].hash, "b");
	CHECK_STR(v[order[1]].hash, "a");
	graph_order(v, 0, order);
}
