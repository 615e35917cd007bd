/*
 * group.h -- group commit for store.c's writes, private to src/store.
 *
 * Handles of one process that write the same database file (the server's
 * workers on one SQLite file) join one commit group.  A write hands its
 * rows to the group; one writer at a time leads: it takes every write
 * waiting, runs them in one transaction (on a handle the group keeps once
 * it has more than one, else on its own), each inside a savepoint of its
 * own, and commits once (one fsync for all).  Each write
 * keeps its own checks and result: a failed one is rolled back to its
 * savepoint and never fails another.  Every writer returns only after the
 * commit that made its write durable.
 */
#ifndef SMRITI_STORE_GROUP_H
#define SMRITI_STORE_GROUP_H

#include "store/store_int.h"

struct commit_group;

/* The group of the database named key (joined, or made); group_leave() when done. */
struct commit_group *group_join(const char *key);
/* NULL is a no-op. */
void group_leave(struct commit_group *g);

/*
 * Runs rows(st', arg, err) inside the group's next transaction, on the
 * handle st' its leader writes on (the group's own, or the leader's: st
 * itself when this writer leads), and returns its result once that
 * transaction committed (or failed: then its error).  A background write
 * (st's store_set_background) leads a transaction only when no foreground
 * write waits, and then gathers others for a moment.
 */
enum smr_rc group_write(struct commit_group *g, struct store *st, int background,
			store_rows_fn rows, void *arg, struct smr_err *err);

/* Writes waiting for the next transaction (for tests: when two have queued). */
size_t group_queued(struct commit_group *g);

#endif
