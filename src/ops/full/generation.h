/*
 * generation.h -- a reply being generated: the live side of chat.send.
 *
 * A send stores the user's turn, starts the provider's streamed call on the
 * provider's event loop (provider/loop.h) and returns at once with a
 * generation.  The generation belongs to the session, not to a connection:
 * its events are kept in order, numbered from 1, so any number of readers
 * (the connection that sent, one that reconnects with Last-Event-ID, one
 * that attaches after a reload) read them from where they are:
 *
 *   1  generation  {generation, user_turn}
 *   2.. delta      {text}
 *   N  done        {generation, user_turn, assistant_turn, context, nudge}
 *      or error    {error: {code, message}, generation, user_turn,
 *                   assistant_turn (partial text, status error) or none, context}
 *
 * When the provider's call ends (on the loop thread), the store write of the
 * assistant turn is queued on the runtime's finisher thread (its own store
 * handle), never done on the loop and never on an HTTP worker; the final
 * event follows the write.  Without a finisher (the CLI), chat_send()'s
 * caller does that write itself once the call ended.
 *
 * Threads: every function here may be called from any thread.  A reader's
 * watch callbacks run under the generation's lock (so a transport can
 * suspend and resume its connection without a lost wake-up) and must not
 * call back into this API.
 */
#ifndef SMRITI_GENERATION_H
#define SMRITI_GENERATION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/full/runtime.h"
#include "store/store.h"

struct chat_gen;

/* Where a reader is in a generation's events. */
struct chat_gen_cursor {
	int64_t next;       /* the event to send next (1 = from the start) */
	size_t off;         /* bytes of it already sent */
};

/*
 * A reader's wake-up.  suspend runs (under the lock) when a read finds
 * nothing new; resume runs once (under the lock, from whichever thread added
 * an event) after that.  With end_only, resume runs once when the final
 * event is added, and suspend never.
 */
struct chat_gen_watch {
	void (*suspend)(void *ud);
	void (*resume)(void *ud);
	void *ud;
	int end_only;
	int armed;
	unsigned keepalive;     /* the generation's keep-alive tick this reader last had */
	struct chat_gen_watch *next;
};

/*
 * Starts a send (runtime.h's chat_send, without waiting): validates, stores
 * the user turn, starts the provider call.  On success *out is a generation
 * the caller holds (chat_gen_unref).  On failure nothing runs and nothing
 * was written.  SMR_ECONFLICT while the session has a reply running.
 */
enum smr_rc chat_send_start(struct ops_ctx *ctx, struct runtime *rt,
			    const struct chat_send_req *req, struct chat_gen **out,
			    struct smr_err *err);

/* chat_send_start with chat.send's JSON parameters (api_chat.c). */
enum smr_rc chat_send_start_json(struct ops_ctx *ctx, const json_t *params,
				 struct chat_gen **out, struct smr_err *err);
/*
 * The same for any operation that starts a generation (chat.send,
 * chat.edit, chat.regenerate, chat.continue), by name, with its access check.
 */
enum smr_rc chat_op_start_json(struct ops_ctx *ctx, const char *op, const json_t *params,
			       struct chat_gen **out, struct smr_err *err);
/* 1 when the operation called name starts a generation (a transport streams its answer). */
int chat_op_streams(const char *name);

/*
 * The generation id names, and the Space of its session: the one place the
 * generation routes resolve what they touch (an access check goes here).
 * Caller releases row and sp.
 */
enum smr_rc chat_generation_resolve(struct ops_ctx *ctx, const char *id,
				    struct generation *row, struct space *sp,
				    struct smr_err *err);

/*
 * A generation to read events from: the live one; on PostgreSQL, for one
 * that another server runs (or ran, minutes ago), its events as that
 * server wrote them, followed to the end (relay.h); else, for one that
 * ended before this server's memory of it (or in another process), one
 * holding only its final event, rebuilt from the store.  had: the last
 * event the reader has (Last-Event-ID; 0: none), so that an end this
 * server makes is numbered after it.  Caller chat_gen_unref()s.
 */
enum smr_rc chat_generation_open(struct ops_ctx *ctx, const char *id, int64_t had,
				 struct chat_gen **out, struct smr_err *err);

/*
 * Copies at most max bytes of server-sent-event text after cursor c into
 * buf and advances c.  Returns the bytes copied; 0 when there is nothing
 * new yet (w, if given, is armed: see struct chat_gen_watch); -1 once the
 * final event was read whole.  A rebuilt generation ignores the cursor and
 * gives its final event.
 */
long chat_gen_read(struct chat_gen *g, struct chat_gen_cursor *c, char *buf, size_t max,
		   struct chat_gen_watch *w);

/* Registers w for the end (end_only set here); if it already ended, w->resume runs now. */
void chat_gen_watch_end(struct chat_gen *g, struct chat_gen_watch *w);

/* Forgets w; after this its callbacks no longer run. */
void chat_gen_unwatch(struct chat_gen *g, struct chat_gen_watch *w);

/*
 * Wakes the reader of w now if a read left it waiting (its resume runs, as
 * for a new event), so that it reads again: a transport that must end a
 * stream (its caller's access ended) uses it from any thread.
 */
void chat_gen_poke(struct chat_gen *g, struct chat_gen_watch *w);

/* Bytes of the event cursor c is inside that are still unread; 0 between events. */
size_t chat_gen_event_left(struct chat_gen *g, const struct chat_gen_cursor *c);

/*
 * How the send came out, once ended: SMR_OK with the done document, or the
 * failure with the error document (without its "error" member, which err
 * says).  *doc is a new reference.  Only once it ended (chat_gen_watch_end).
 */
enum smr_rc chat_gen_result(struct chat_gen *g, json_t **doc, struct smr_err *err);

const char *chat_gen_id(const struct chat_gen *g);
void chat_gen_ref(struct chat_gen *g);
void chat_gen_unref(struct chat_gen *g);

/*
 * Stop: the provider transfer is aborted; what arrived is stored as the
 * assistant turn with status stopped.  *result is {generation, stopping}
 * (stopping false when it had already ended).  New reference.  On
 * PostgreSQL a generation another server runs is asked to stop through the
 * store (relay.h), and that server stops it.
 */
enum smr_rc chat_generation_stop(struct ops_ctx *ctx, const char *id, json_t **result,
				 struct smr_err *err);

/* The generation's row as JSON, with its Space's name and, while it runs here, the text so far. */
enum smr_rc chat_generation_get(struct ops_ctx *ctx, const char *id, json_t **result,
				struct smr_err *err);

/*
 * Server start: starts the finisher thread on its own store handle for dsn.
 * What an earlier run left running is not touched here: a server takes it
 * over once that run's lease lapsed (lease.h).
 */
enum smr_rc chat_generations_start(struct runtime *rt, const char *dsn, struct smr_err *err);

/*
 * Server shutdown, before the transports stop: running generations get a
 * few seconds to finish; those still running then are stopped and end as
 * interrupted (what arrived is kept); waits for their final events.
 */
void chat_generations_shutdown(struct runtime *rt);

/* Stops the finisher thread; after the transports stopped. */
void chat_generations_stop(struct runtime *rt);

/* ---- inside the runtime (runtime.c, send.c) ---- */

struct chat_gens;
struct send;
struct provider_stream;

struct chat_gens *chat_gens_new(void);
void chat_gens_free(struct chat_gens *gs);

/* A new live generation (one reference for the caller), listed under id. */
struct chat_gen *gen_new(struct runtime *rt, const char *id, const char *session_id);
/* Adds event type with data (stolen); the final one with gen_end. */
void gen_event(struct chat_gen *g, const char *type, json_t *data);
/* Adds a delta event and len bytes to the text so far. */
void gen_delta(struct chat_gen *g, const char *text, size_t len);
/* The text so far; caller free()s. */
char *gen_text(struct chat_gen *g);
/* The send, its stream and its send state belong to g from now on. */
void gen_attach(struct chat_gen *g, struct send *s, struct provider_stream *ps);
struct send *gen_send(struct chat_gen *g);
/* The call's handle, once started (released when the generation ends). */
void gen_set_stream(struct chat_gen *g, struct provider_stream *ps);
/* The provider call ended: queue the finish (or wake chat_send's waiter). */
void gen_call_ended(struct chat_gen *g);
/* Nonzero when the generation was stopped because the server is shutting down. */
int gen_shutting_down(struct chat_gen *g);
/* Appends the final event, records the outcome, wakes everyone; frees the send. */
void gen_end(struct chat_gen *g, const char *type, json_t *data, enum smr_rc rc,
	     const struct smr_err *err);
/* Waits for the end (with a finisher) or for the call's end and finishes on ctx. */
void gen_wait(struct chat_gen *g, struct ops_ctx *ctx);
/*
 * For a send whose end the store could not take (SMR_EUNAVAIL): the
 * finisher writes row (already ended: status, error, finished_at) and puts
 * row->error on the user turn user_id (0: none), again every
 * GEN_SETTLE_RETRY_MS until the database takes them, so the session is not
 * held at 409 by a row left running.  Copies what it needs.
 */
void gen_settle_later(struct runtime *rt, const struct generation *row, int64_t user_id);

/* send.c: the send's provider callbacks, its finish, and its release. */
void send_finish(struct ops_ctx *ctx, struct chat_gen *g);
/* Finishes n sends whose calls ended, their replies stored in one transaction. */
void send_finish_batch(struct ops_ctx *ctx, struct chat_gen **gs, size_t n);
/* Bytes of text received so far. */
size_t gen_text_len(struct chat_gen *g);
void send_free(struct send *s);
void gen_lock(struct chat_gen *g);
void gen_unlock(struct chat_gen *g);

/* ---- relay.c: events for other servers on the same database ---- */

/* The events of a generation not yet written for other servers. */
struct gen_batch {
	struct gen_events b;        /* store.h's: the caller frees its strings */
	size_t text_end;            /* the text's length up to them */
	int ended;                  /* the generation had ended when they were taken */
};
/* 1 with *out filled when g has events not yet published; 0 (out->ended set) when none. */
int gen_take_unpublished(struct chat_gen *g, struct gen_batch *out);
/* b (from gen_take_unpublished) is stored: the next batch starts after it. */
void gen_mark_published(struct chat_gen *g, const struct gen_batch *b);
/*
 * A generation running on another server, followed here (one reference for
 * the caller): listed, so readers share it, but never found as this
 * server's own (a Stop goes through the store).  If one is listed already,
 * that one.
 */
struct chat_gen *gen_new_remote(struct runtime *rt, const char *id, const char *session_id);
/* The followed generation id, with a reference, or NULL. */
struct chat_gen *gen_find_remote(struct runtime *rt, const char *id);
/* Appends b's events that g lacks (the next in number); ends g at a final one.  1 if any. */
int gen_feed(struct chat_gen *g, const struct gen_events *b);
/* Ends a followed generation with a final event of its own (data stolen). */
void gen_end_remote(struct chat_gen *g, const char *type, json_t *data);
/* How many events g has; *ended (if given) whether it ended. */
int64_t gen_events_had(struct chat_gen *g, int *ended);
/*
 * A reader has g's events up to had (its Last-Event-ID): an end made here
 * (gen_end_remote) is numbered after it, though the server that ran g
 * died before writing them all.
 */
void gen_claim(struct chat_gen *g, int64_t had);
/* Ends a followed generation whose row ended with the final event the store tells. */
void gen_end_stored(struct ops_ctx *ctx, struct chat_gen *g, const struct generation *row);
/* Stops the generation id if its provider call is this server's (a Stop sent elsewhere). */
void gen_stop_local(struct runtime *rt, const char *id);

#endif
