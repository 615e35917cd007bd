/*
 * mcp_listen.c -- the response streams of MCP's subscriptions/listen
 * (2026-07-28) on the /mcp route, and the one thread that feeds them.
 *
 * A listen is a POST whose response is a server-sent-event stream that
 * stays open: first the acknowledgement, then a
 * notifications/resources/updated whenever the HEAD of a subscribed Space
 * moves, until the client closes it or the server stops (then the listen's
 * own result ends it, the spec's graceful close).  The subscriptions live in
 * the stream's protocol session (mcp_subscribe.c), which the worker that
 * answered the POST hands over.
 *
 * HEADs move through any process: this server, the CLI on the same SQLite
 * file, another server on the same PostgreSQL.  The server's one watch on
 * writes (ops/changes.h: PostgreSQL's LISTEN, SQLite's data version) tells
 * the one watcher thread when something may have moved, and it looks then,
 * not on a timer; a new stream is looked at once too.  Each look at a Space
 * runs space.get as the stream's caller on the watcher's own store handle,
 * so a write to a Space the caller may no longer read is never told (see
 * mcp_subscribe.c); when the caller's token is revoked the auth keeper's
 * hold ends the stream.
 *
 *   reader (event thread):  queued text -> send it
 *                           nothing, not ending -> suspend the connection
 *                           nothing, ending -> end of stream
 *   watcher, keeper, shutdown: queue text (or mark ending), resume if suspended
 *
 * A suspended connection is not read, so a client that went away is found
 * at the next write: a comment line every KEEPALIVE_US (also what keeps
 * proxies and idle timers from closing a quiet stream).
 *
 * The event thread never waits for a look (which reads the store, over the
 * network on PostgreSQL): while the watcher looks, the list is walked
 * without its lock, new streams go in at its head (before where the walk
 * began) and a stream whose request ended is only marked dead; the watcher
 * frees the dead after its look.
 */
#include "http/http_int.h"
#include "mcp/mcp.h"
#include "ops/changes.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_MS 1000                   /* the watcher's nap: keep-alives, nothing else */
#define KEEPALIVE_US (15 * 1000000LL)
#define STREAM_BLOCK 2048              /* MHD's buffer per stream, as for chat streams */

struct http_mcp_stream {
	struct http_mcp_listens *ls;
	struct MHD_Connection *conn;
	struct mcp_session *s;           /* its subscriptions: the watcher's once registered */
	json_t *id;                      /* the listen request's id */
	int has_who;
	struct principal who;
	struct auth_hold hold;
	pthread_mutex_t lock;            /* out, off, suspended, ending */
	struct buf out;                  /* events not yet sent, from off */
	size_t off;
	int suspended;
	int ending;                      /* send what is queued, then end */
	int dead;                        /* its request has ended: conn is gone */
	int64_t last_us;                 /* when something was last queued */
	struct http_mcp_stream *prev, *next;
};

struct http_mcp_listens {
	struct http_server *srv;
	pthread_mutex_t lock;            /* the list, stop, running */
	pthread_cond_t cond;
	struct http_mcp_stream *head;
	int stop, running;
	int looking;                     /* the watcher walks the list without the lock */
	int moved;                       /* told of a write, or a new stream: look */
	pthread_t thread;
	struct ops_ctx *ctx;             /* the watcher thread's */
	struct ops_changes_sub sub;      /* on the server's watch on writes */
};

static void on_moved(void *ud)
{
	struct http_mcp_listens *ls = ud;

	pthread_mutex_lock(&ls->lock);
	ls->moved = 1;
	pthread_cond_signal(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
}

struct http_mcp_listens *http_mcp_listens_new(struct http_server *srv)
{
	struct http_mcp_listens *ls = xcalloc(1, sizeof(*ls));

	ls->srv = srv;
	ls->sub = (struct ops_changes_sub){ .moved = on_moved, .ud = ls };
	pthread_mutex_init(&ls->lock, NULL);
	pthread_cond_init(&ls->cond, NULL);
	return ls;
}

void http_mcp_listens_free(struct http_mcp_listens *ls)
{
	if (!ls)
		return;
	pthread_mutex_destroy(&ls->lock);
	pthread_cond_destroy(&ls->cond);
	free(ls);
}

/* Queues text (NULL: nothing) and, with end, ends the stream after it; wakes its reader. */
static void push(struct http_mcp_stream *st, const char *text, int end)
{
	pthread_mutex_lock(&st->lock);
	if (st->dead) {
		pthread_mutex_unlock(&st->lock);
		return;
	}
	if (!st->ending) {
		if (text) {
			buf_adds(&st->out, text);
			st->last_us = sys_monotonic_us();
		}
		st->ending = end;
	}
	if (st->suspended) {
		st->suspended = 0;
		MHD_resume_connection(st->conn);
	}
	pthread_mutex_unlock(&st->lock);
}

/* One JSON-RPC message as an SSE event; caller free()s. */
static char *event_of(const json_t *msg)
{
	char *json = json_dumps(msg, JSON_COMPACT);
	char *ev;

	if (!json)
		BUG("cannot serialise an MCP notification");
	ev = xasprintf("event: message\ndata: %s\n\n", json);
	free(json);
	return ev;
}

static void push_messages(struct http_mcp_stream *st, const json_t *msgs)
{
	const json_t *m;
	size_t i;
	char *ev;

	json_array_foreach(msgs, i, m) {
		ev = event_of(m);
		push(st, ev, 0);
		free(ev);
	}
}

/* The listen's own result: the subscription ended by the server, not dropped. */
static void push_close(struct http_mcp_stream *st)
{
	json_t *done = json_pack("{s:s, s:O, s:{s:s, s:{s:O}}}", "jsonrpc", "2.0", "id", st->id,
				 "result", "resultType", "complete", "_meta",
				 MCP_META_SUBSCRIPTION, st->id);
	char *ev = event_of(done);

	push(st, ev, 1);
	free(ev);
	json_decref(done);
}

/* The session's operations, run on the watcher's store as the stream's caller. */
static enum smr_rc watch_call(void *cls, const char *op, const json_t *params, json_t **result,
			      struct smr_err *err)
{
	struct http_mcp_stream *st = cls;
	struct ops_ctx *ctx = st->ls->ctx;
	enum smr_rc rc;

	ops_set_caller(ctx, st->has_who ? &st->who : NULL);
	rc = api_call(ctx, op, params, result, err);
	ops_set_caller(ctx, NULL);
	ops_auth_stale(ctx);        /* the next caller's rights are read again */
	return rc;
}

/* When something was last queued on st. */
static int64_t quiet_since(struct http_mcp_stream *st)
{
	int64_t t;

	pthread_mutex_lock(&st->lock);
	t = st->last_us;
	pthread_mutex_unlock(&st->lock);
	return t;
}

static int is_dead(struct http_mcp_stream *st)
{
	int dead;

	pthread_mutex_lock(&st->lock);
	dead = st->dead;
	pthread_mutex_unlock(&st->lock);
	return dead;
}

/* One look at every stream from first on (the list not locked: see the top). */
static void look(struct http_mcp_listens *ls, struct http_mcp_stream *first, int moved)
{
	struct smr_err err = SMR_ERR_INIT;
	int64_t now = sys_monotonic_us();
	json_t *due;

	if (!ls->ctx && !(ls->ctx = http_thread_ops(ls->srv, 0, &err)))
		return;                 /* the store is down: the next look tries again */
	for (struct http_mcp_stream *st = first; st; st = st->next) {
		if (is_dead(st))
			continue;
		due = moved ? mcp_subscriptions_check(st->s) : NULL;
		if (due)
			push_messages(st, due);
		else if (quiet_since(st) <= now - KEEPALIVE_US)
			push(st, ":\n\n", 0);
		json_decref(due);
	}
}

static void unlink_stream(struct http_mcp_listens *ls, struct http_mcp_stream *st)
{
	if (st->prev)
		st->prev->next = st->next;
	else if (ls->head == st)
		ls->head = st->next;
	if (st->next)
		st->next->prev = st->prev;
}

static void destroy(struct http_mcp_stream *st)
{
	mcp_session_free(st->s);
	json_decref(st->id);
	buf_release(&st->out);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* Frees the streams marked dead during a look (the list locked). */
static void reap(struct http_mcp_listens *ls)
{
	struct http_mcp_stream *st = ls->head, *next;

	for (; st; st = next) {
		next = st->next;
		if (st->dead) {
			unlink_stream(ls, st);
			destroy(st);
		}
	}
}

static void *watcher(void *arg)
{
	struct http_mcp_listens *ls = arg;
	struct http_mcp_stream *first;
	struct timespec until;
	int moved;

	pthread_mutex_lock(&ls->lock);
	while (!ls->stop) {
		if (!ls->head) {
			pthread_cond_wait(&ls->cond, &ls->lock);
			continue;
		}
		ls->looking = 1;
		first = ls->head;
		moved = ls->moved;
		ls->moved = 0;
		pthread_mutex_unlock(&ls->lock);
		look(ls, first, moved);
		pthread_mutex_lock(&ls->lock);
		ls->looking = 0;
		reap(ls);
		if (ls->moved || ls->stop)
			continue;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += TICK_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&ls->cond, &ls->lock, &until);
	}
	pthread_mutex_unlock(&ls->lock);
	return NULL;
}

/* The keeper found the caller's access gone (its thread, its lock held): the stream ends. */
static void access_lost(void *ud, enum smr_rc rc, const char *msg)
{
	(void)rc;
	(void)msg;
	push(ud, NULL, 1);
}

static void hold_access(struct http_req *r, struct http_mcp_stream *st)
{
	if (!r->has_who || r->who.admin || !r->srv->keeper)
		return;
	st->hold = (struct auth_hold){ .who = r->who, .op = "space.list",
		.params = json_object(), .lost = access_lost, .ud = st, .gen = r->auth_gen };
	ops_auth_hold(r->srv->keeper, &st->hold);
}

/* Adds st to the watched streams, starting the watcher on the first; -1 when stopping. */
static int watch(struct http_mcp_listens *ls, struct http_mcp_stream *st)
{
	int rc = 0;

	pthread_mutex_lock(&ls->lock);
	if (ls->stop) {
		rc = -1;
	} else if (!ls->running && pthread_create(&ls->thread, NULL, watcher, ls)) {
		rc = -1;
	} else {
		if (!ls->running)
			ops_changes_subscribe(ls->srv->changes, &ls->sub);
		ls->running = 1;
		st->next = ls->head;
		if (ls->head)
			ls->head->prev = st;
		ls->head = st;
		ls->moved = 1;          /* a write since its acknowledgement read HEAD is told */
		pthread_cond_signal(&ls->cond);
	}
	pthread_mutex_unlock(&ls->lock);
	return rc;
}

void http_mcp_listen(struct http_req *r, struct mcp_session *s, json_t *ack)
{
	struct http_mcp_stream *st = xcalloc(1, sizeof(*st));
	char *ev = event_of(ack);

	st->ls = r->srv->mcp_listens;
	st->conn = r->conn;
	st->s = s;
	st->id = json_incref(json_object_get(json_object_get(json_object_get(ack, "params"),
							     "_meta"), MCP_META_SUBSCRIPTION));
	st->has_who = r->has_who;
	st->who = r->who;
	st->out = (struct buf)BUF_INIT(0);
	buf_adds(&st->out, ev);
	st->last_us = sys_monotonic_us();
	pthread_mutex_init(&st->lock, NULL);
	free(ev);
	json_decref(ack);
	mcp_session_rebind(s, watch_call, st);
	r->mcp = st;
	hold_access(r, st);
	if (watch(st->ls, st)) {
		r->mcp = NULL;
		ops_auth_unhold(r->srv->keeper, &st->hold);
		destroy(st);
		http_reply(r, 503, mcp_error(NULL, MCP_INTERNAL_ERROR,
					     "the server is shutting down; listen again elsewhere"));
	}
}

static ssize_t read_events(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_mcp_stream *st = cls;
	size_t n;
	ssize_t out;

	(void)pos;
	pthread_mutex_lock(&st->lock);
	n = st->out.len - st->off;
	if (n) {
		n = n < max ? n : max;
		memcpy(buf, st->out.ptr + st->off, n);
		st->off += n;
		if (st->off == st->out.len) {
			buf_reset(&st->out);
			st->off = 0;
		}
		out = (ssize_t)n;
	} else if (st->ending) {
		out = (ssize_t)MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		st->suspended = 1;
		MHD_suspend_connection(st->conn);
		out = 0;
	}
	pthread_mutex_unlock(&st->lock);
	return out;
}

struct MHD_Response *http_mcp_stream_response(struct http_req *r)
{
	struct MHD_Response *resp = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_events, r->mcp, NULL);

	if (!resp)
		return NULL;
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	return resp;
}

void http_mcp_stream_free(struct http_mcp_stream *st)
{
	struct http_mcp_listens *ls;

	if (!st)
		return;
	ls = st->ls;
	ops_auth_unhold(ls->srv->keeper, &st->hold);     /* first: the keeper no longer calls back */
	pthread_mutex_lock(&ls->lock);
	pthread_mutex_lock(&st->lock);
	st->dead = 1;
	pthread_mutex_unlock(&st->lock);
	if (!ls->looking) {
		unlink_stream(ls, st);
		destroy(st);
	}
	pthread_mutex_unlock(&ls->lock);
}

void http_mcp_listens_stop(struct http_mcp_listens *ls)
{
	int running;

	pthread_mutex_lock(&ls->lock);
	ls->stop = 1;
	for (struct http_mcp_stream *st = ls->head; st; st = st->next)
		push_close(st);
	running = ls->running;
	pthread_cond_signal(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
	if (running) {
		pthread_join(ls->thread, NULL);
		ops_changes_unsubscribe(ls->srv->changes, &ls->sub);
	}
	ls->running = 0;
}
