/*
 * changes.h -- a process's one watch on writes (changes.c): it tells its
 * subscribers, at once, that what a page or an MCP subscriber follows may
 * have moved, whoever wrote it: this process, another process on the same
 * SQLite file (the CLI), another server on the same PostgreSQL.  The HTTP
 * server's long polls of /v4/changes and MCP listens, and the stdio MCP
 * server's subscriptions, look again when told instead of on a timer.
 */
#ifndef SMRITI_OPS_CHANGES_H
#define SMRITI_OPS_CHANGES_H

#include "util/err.h"

struct ops_changes;

/*
 * A subscriber: moved(ud) runs on the watch's thread (or on the thread of
 * a write through this process) with the watch's lock held, after every
 * change it hears of; it must be quick (set a flag, signal a condition,
 * write a byte to a pipe) and must not call back into the watch.  While
 * the watch cannot hear (its PostgreSQL connection is down) it calls
 * moved about once a second: anything may have moved.
 */
struct ops_changes_sub {
	void (*moved)(void *ud);
	void *ud;
	struct ops_changes_sub *next;    /* the watch's */
};

/*
 * Starts the watch on dsn's database: PostgreSQL's LISTEN on one
 * connection of its own (STORE_DATA_CHANNEL, migration 14's triggers), or
 * on SQLite a look at the data version every few tens of milliseconds (no
 * statement: the WAL-index header).  Caller ops_changes_stop()s, after
 * its subscribers have unsubscribed.
 */
enum smr_rc ops_changes_start(const char *dsn, struct ops_changes **out, struct smr_err *err);
void ops_changes_stop(struct ops_changes *c);
/* Adds or removes a subscriber (c NULL: nothing); s is borrowed until it is removed. */
void ops_changes_subscribe(struct ops_changes *c, struct ops_changes_sub *s);
void ops_changes_unsubscribe(struct ops_changes *c, struct ops_changes_sub *s);
/*
 * A write through this process committed (api_call, for a context whose
 * ops_opts.changes is c): the subscribers hear of it now rather than at
 * the next look.  NULL: nothing.
 */
void ops_changes_poke(struct ops_changes *c);
/*
 * Tells the subscribers now, whatever the backend: what a caller may read
 * moved (the auth keeper heard of a grant, a revocation; ops/auth.h's
 * ops_auth_keeper_tell), so each look again as their caller.  NULL: nothing.
 */
void ops_changes_moved(struct ops_changes *c);

#endif
