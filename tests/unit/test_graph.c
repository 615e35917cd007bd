/*
 * test_graph.c -- the drawing order of a checkpoint graph: children before
 * parents, newest first among those ready, forks and merges included.
 */
#include "harness.h"
#include "domain/graph.h"

#include <stdlib.h>

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

/* Draws v (already in drawing order) and checks each row and the lines below it. */
static void check_ascii(const struct graph_node *v, size_t n, const char *const *rows,
			const char *const *afters)
{
	char *row[8], *after[8];

	graph_ascii(v, n, row, after);
	for (size_t i = 0; i < n; i++) {
		CHECK_STR(row[i], rows[i]);
		CHECK_STR(after[i], afters[i]);
		free(row[i]);
		free(after[i]);
	}
}

TEST(graph_ascii_line_merge_and_two_merges)
{
	/* a line: one lane */
	struct graph_node line[] = {
		{ "c", "b", NULL, "3" }, { "b", "a", NULL, "2" }, { "a", NULL, NULL, "1" },
	};
	const char *const line_rows[] = { "* ", "* ", "* " };
	const char *const line_after[] = { "", "", "" };
	/* m merges o (ours) and t (theirs), both on b: git's diamond */
	struct graph_node diamond[] = {
		{ "m", "o", "t", "4" }, { "t", "b", NULL, "3" }, { "o", "b", NULL, "2" },
		{ "b", NULL, NULL, "1" },
	};
	const char *const diamond_rows[] = { "*   ", "| * ", "* | ", "* " };
	const char *const diamond_after[] = { "|\\", "", "|/", "" };
	/* n merges m (itself a merge) and u, a second line from o */
	struct graph_node twice[] = {
		{ "n", "m", "u", "6" }, { "u", "o", NULL, "5" }, { "m", "o", "t", "4" },
		{ "t", "b", NULL, "3" }, { "o", "b", NULL, "2" }, { "b", NULL, NULL, "1" },
	};
	const char *const twice_rows[] = { "*   ", "| * ", "* | ", "| * ", "* | ", "* " };
	const char *const twice_after[] = { "|\\", "", "|\\ \\\n|_|/", "", "|/", "" };

	check_ascii(line, 3, line_rows, line_after);
	check_ascii(diamond, 4, diamond_rows, diamond_after);
	check_ascii(twice, 6, twice_rows, twice_after);
}
