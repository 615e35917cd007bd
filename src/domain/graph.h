/*
 * graph.h -- the order in which a checkpoint graph is drawn: newest first,
 * every checkpoint before its parents (what a lane-drawing history view
 * needs, as in gitk or VS Code's Git Graph).  Pure code: no store, no clock.
 */
#ifndef SMRITI_GRAPH_H
#define SMRITI_GRAPH_H

#include <stddef.h>

struct graph_node {
	const char *hash;
	const char *parent;         /* NULL for a root */
	const char *merge_parent;   /* NULL unless a merge */
	const char *created_at;     /* ISO 8601 UTC: compares as text */
};

/*
 * Fills order[0..n) with the indexes of v: a checkpoint always comes before
 * its parents that are in v; among those ready, the newest created_at first
 * (then the later index, i.e. the later write).  Hashes in v are distinct.
 */
void graph_order(const struct graph_node *v, size_t n, size_t *order);

/*
 * The text graph beside a list already in graph_order (git log --graph):
 * row[i] gets checkpoint i's lanes ("* |", "*   " for a merge) and after[i]
 * the connecting lines drawn below it ("|\\", "|/"), separated by '\n', or
 * "" when none.  The caller frees each string (row and after are n long).
 */
void graph_ascii(const struct graph_node *v, size_t n, char **row, char **after);

#endif
