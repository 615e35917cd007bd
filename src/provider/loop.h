/*
 * loop.h -- provider calls on an event loop: streamed replies through
 * callbacks, hundreds at a time, on one thread per provider.
 *
 * Each struct provider owns one loop, started by its first call: a thread
 * driving libcurl's multi interface over epoll (curl_multi_socket_action),
 * so a call in flight costs a socket and a few kilobytes, not a thread.
 * provider_stream_start() may be called from any thread; it queues the call
 * and returns a handle at once.  Whole-reply calls (provider_complete, for
 * drafts and the review pass) run on the same loop while their caller
 * waits, so both kinds share one transfer engine, one set of timeouts and
 * one retry policy (call.h).
 *
 * Life of a call (all on the loop thread):
 *
 *   QUEUED --start--> RUNNING --transfer ends--> done / error
 *                      |   ^                      (exactly one of on_done,
 *     retryable, and no|   |retry timer            on_error; then the loop
 *     text relayed yet v   |                       drops its reference)
 *                     WAITING
 *   any state --provider_stream_cancel()--> on_done(STOPPED)
 *   any state --provider_free()-----------> on_error(INTERRUPTED)
 *
 * Timeouts (struct provider_cfg): connect; first byte (request sent to the
 * first byte of the reply body); idle (longest silence between chunks once
 * the body began; keep-alive comments count as bytes); total (timeout_ms,
 * per attempt).  None is retried.  A retry happens only before any text was
 * relayed, so the caller never sees text twice.
 *
 * Callbacks run on the loop thread and must not block: no store writes, no
 * waiting on locks held across I/O.  Copy what is needed and hand slow work
 * to another thread.  Text in on_delta is whole UTF-8 characters and is
 * valid only during the call.
 *
 * Phase 2 (the streaming chat route) is meant to build on this as follows.
 * The runtime keeps a generation object per running send, owned by its
 * session (one at a time: a second send gets 409).  It owns the
 * provider_stream handle and an append-only list of numbered SSE events
 * (generation, delta..., done | error) under its own mutex.  on_delta
 * appends a delta event and resumes every libmicrohttpd connection
 * suspended on that generation (MHD_resume_connection is safe from any
 * thread); each connection's content reader sends the events after its
 * Last-Event-ID and suspends again when it has caught up, so a client that
 * reconnects replays from its id without duplicates.  on_done / on_error
 * queue the store write of the assistant turn (status complete, truncated,
 * stopped, error or interrupted, with the text received) on the shared work
 * queue rather than writing from the loop thread; that job then appends the
 * final done / error event.  POST stop calls provider_stream_cancel(), which
 * ends the call with on_done(PROVIDER_END_STOPPED) promptly, also while a
 * retry waits.  The generation holds its handle until it ends and then
 * provider_stream_release()s it; ended generations stay readable for a
 * while for reconnects.
 */
#ifndef SMRITI_PROVIDER_LOOP_H
#define SMRITI_PROVIDER_LOOP_H

#include "provider/provider.h"

/* What a call came to; passed to on_done and on_error, valid during the callback. */
struct provider_outcome {
	enum provider_end end;
	const struct smr_err *err;  /* on_error: code and message; NULL on done */
	const char *finish_reason;  /* the provider's stop reason ("stop", "max_tokens"), or NULL */
	const char *model;          /* the model that answered, as reported, or NULL */
	const char *request_id;     /* x-request-id / request-id, else the reply's id, or NULL */
	struct provider_usage usage;
	size_t text_bytes;          /* text handed to on_delta */
	int attempts;               /* HTTP requests made (1 + retries) */
	int64_t waited_ms;          /* between attempts */
	int64_t latency_us;         /* start to end */
};

struct provider_stream_cbs {
	void (*on_delta)(void *ud, const char *text, size_t len);
	void (*on_usage)(void *ud, const struct provider_usage *u);     /* may be NULL */
	/* The reply ended: COMPLETE, TRUNCATED (token limit) or STOPPED (cancelled). */
	void (*on_done)(void *ud, const struct provider_outcome *o);
	/* It failed (ERROR; err says why) or the provider was freed (INTERRUPTED). */
	void (*on_error)(void *ud, const struct provider_outcome *o);
};

struct provider_stream;

/*
 * Starts streaming the reply to req (which, with its strings, may be freed
 * when this returns).  On success *out is a handle the caller holds until
 * provider_stream_release(), and exactly one of on_done / on_error will run
 * later.  Fails, calling nothing, with SMR_EINVAL for a request that cannot
 * be streamed (a schema: structured replies are whole-reply calls).
 */
enum smr_rc provider_stream_start(struct provider *p, const struct provider_req *req,
				  const struct provider_stream_cbs *cbs, void *ud,
				  struct provider_stream **out, struct smr_err *err);

/*
 * Stops the call: the transfer is aborted (or the retry wait cut short) and
 * on_done runs with PROVIDER_END_STOPPED, unless the call already ended.
 * Any thread, any time before the handle's release; a delta already being
 * relayed may still arrive first.
 */
void provider_stream_cancel(struct provider_stream *s);

/* The caller is done with the handle (the call itself runs on). Any thread. */
void provider_stream_release(struct provider_stream *s);

/* ---- internal to src/provider ---- */

struct provider_loop;
struct call_request;
struct call_reply;

/* Stops the loop (see provider_free) and frees it. */
void provider_loop_free(struct provider_loop *l);

/*
 * POSTs rq (taking its contents) on p's loop, retrying as call.h says, and
 * waits for it.  SMR_OK once an HTTP reply arrived, whatever its status
 * (call_http_error formats a provider's error); SMR_ETIMEOUT or
 * SMR_EPROVIDER when no reply could be had.  out is overwritten; release it
 * either way.
 */
enum smr_rc loop_post(struct provider *p, struct call_request *rq, long timeout_ms,
		      struct call_reply *out, struct smr_err *err);

#endif
