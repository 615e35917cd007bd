/*
 * relay.h -- a reply's events shared by every server on one PostgreSQL
 * database, so that any of them serves a reader (resume after
 * Last-Event-ID) and a Stop, whichever server runs the provider call.
 *
 * The server running a generation writes its new events every
 * SMRITI_RELAY_FLUSH_MS (200 ms) as one row per generation, all of them in
 * one transaction (store_generation_publish): a row is the events'
 * server-sent-event text as its readers get it, numbered as here, and the
 * text of its deltas.  A trigger NOTIFYs the other servers when it
 * commits; a server with a reader of that generation reads the rows after
 * the last event it has and hands them to its readers through the same
 * chat_gen as a local reply (generation.h), so a reader cannot tell the
 * difference.  A Stop sent to another server sets the generation's
 * stop_requested (store_generation_request_stop), whose trigger NOTIFYs;
 * the running server stops the call as for a local Stop.  Notices only make
 * it fast: every RELAY_POLL_MS the relay also looks for new events and stop
 * requests, so a notice lost while its connection was down costs at most
 * that.  SQLite (one server) runs the relay in its keeping mode only: the
 * events of the replies running here are stored every second (one row per
 * reply, all in one transaction), so that what a reply had streamed
 * outlives a kill -9 of its server.
 *
 * Design and figures: docs/scale-out.md, "Replies across servers".
 */
#ifndef SMRITI_RELAY_H
#define SMRITI_RELAY_H

#include "ops/full/generation.h"

struct gen_relay;

/* Starts the relay's thread on a store handle and a watch of its own for dsn. */
enum smr_rc relay_start(struct runtime *rt, const char *dsn, struct gen_relay **out,
			struct smr_err *err);
/*
 * The keeping mode (SQLite): the thread stores the events of the replies
 * relay_own() names every second, and does nothing else.
 */
enum smr_rc relay_start_keeping(struct runtime *rt, const char *dsn, struct gen_relay **out,
				struct smr_err *err);
/* Writes what is left to write (once), stops the thread, frees r.  NULL: nothing. */
void relay_stop(struct gen_relay *r);
/* g runs here: its events are published until its final one is. */
void relay_own(struct gen_relay *r, struct chat_gen *g);
/*
 * A generation to read row's events from when another server runs it (or
 * ran it, and its events are still stored): followed until its final
 * event, with a reference for the caller.  NULL when the store holds none
 * of its events and it is no longer running (the caller rebuilds its end).
 * had: the last event the reader has (gen_claim), 0 for none.
 */
struct chat_gen *relay_follow(struct gen_relay *r, struct ops_ctx *ctx,
			      const struct generation *row, int64_t had);

#endif
