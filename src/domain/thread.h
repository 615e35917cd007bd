/*
 * thread.h -- the turns of a session as a tree, and the path through it
 * that a person looks at and the model is sent.
 *
 * Every turn follows one earlier turn (struct turn's parent_seq; without
 * one stored, the turn before it).  Editing a question or regenerating a
 * reply adds a turn beside the old one (the same parent), so nothing is
 * ever overwritten; the variants of a position are the turns sharing its
 * parent and role.  A path runs from the first turn to one end (a
 * session's leaf_seq, by default the newest turn): what the chat shows and
 * exactly what the next send gives the model.  An assistant turn that
 * follows an assistant turn continues it (a reply stopped and continued):
 * the two are one reply on the page and to the model.
 *
 * Pure functions over turns sorted by sequence number (as the store lists
 * them); nothing here allocates but the strings said so.
 */
#ifndef SMRITI_THREAD_H
#define SMRITI_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include "domain/model.h"

/* The sequence number of the turn t follows; 0 for a first turn. */
int64_t turn_parent(const struct turn *t);

/* Index of the turn numbered seq in turns[0..n), or -1. */
long thread_find(const struct turn *turns, size_t n, int64_t seq);

/*
 * The path that ends at turn end, oldest first, as indexes into turns:
 * writes at most n of them into idx and returns how many.  The walk stops
 * at a first turn, or at a turn numbered <= floor, or at a parent missing
 * from turns: *missing is then that parent's number (0 otherwise).
 */
size_t thread_path(const struct turn *turns, size_t n, int64_t end, int64_t floor,
		   size_t *idx, int64_t *missing);

/*
 * The end of what showing turn seq shows: from seq, the newest follower at
 * each step (a question's newest reply, and so on).  seq itself when
 * nothing follows it.
 */
int64_t thread_newest_end(const struct turn *turns, size_t n, int64_t seq);

/* 1 when t continues the reply it follows (both the assistant's). */
int thread_continues(const struct turn *t, const struct turn *parent);

/*
 * A path as the model gets it (context_in's turns): shallow copies of the
 * turns on the path, oldest first, a reply's parts (a stopped reply and its
 * continuation) joined into one turn whose content is owned here.
 */
struct thread_view {
	struct turn *turns;     /* borrowed strings but the joined contents */
	size_t n;
	char **joined;
	size_t n_joined;
	int64_t missing;        /* thread_path's: the path goes on below the turns given */
};

/* The view of thread_path(turns, n, end, floor); turns must outlive it. */
void thread_view_build(const struct turn *turns, size_t n, int64_t end, int64_t floor,
		       struct thread_view *out);
void thread_view_release(struct thread_view *v);

#endif
