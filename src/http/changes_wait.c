/*
 * changes_wait.c -- the long poll of GET /v4/changes?since=V&wait=S: a
 * request whose version is still V waits, its connection suspended (no
 * worker, no event thread held), until the version differs or S seconds
 * have passed, and one thread answers it.
 *
 * The thread looks again only when the server's watch on writes
 * (ops/changes.h) says something may have moved: each look runs
 * state.version as the waiting request's caller on the thread's own
 * context, and answers those whose version moved (or whose look failed: a
 * Space deleted is a 404, as it would be at once).  A request whose time
 * is up is answered with V.  At shutdown every waiting request is
 * answered with V, before the daemon stops.
 *
 *   handler (event thread): version == since, wait > 0 -> suspend, park
 *   thread: moved -> look at each; differs, failed, or time up -> reply,
 *           unpark, resume (the event thread then sends the reply)
 *
 * A request is looked at once more right after it is parked, so that a
 * write between its handler's look and the park is not missed.
 *
 * Only the thread removes a parked request (a suspended connection cannot
 * end), and the event threads only add at the head, so the thread walks
 * the list from the head it saw without holding the lock over the store.
 */
#include "http/http_int.h"
#include "ops/changes.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_IDLE_MS 1000     /* the longest nap with requests parked and nothing moving */

struct http_wait {
	struct http_req *r;
	char *space;                    /* NULL: the Spaces only */
	char since[32];
	int64_t until_us;
	int done;                       /* r has its reply */
	int fresh;                      /* not looked at yet: a write may have come since */
	struct http_wait *next;
};

struct http_waits {
	struct http_server *srv;
	pthread_mutex_t lock;           /* head, moved, stop, running */
	pthread_cond_t cond;
	struct http_wait *head;
	int moved, stop, running;
	int fresh;                      /* a request was parked since the last round */
	pthread_t thread;
	struct ops_changes_sub sub;
};

static void on_moved(void *ud)
{
	struct http_waits *ws = ud;

	pthread_mutex_lock(&ws->lock);
	ws->moved = 1;
	pthread_cond_signal(&ws->cond);
	pthread_mutex_unlock(&ws->lock);
}

struct http_waits *http_waits_new(struct http_server *srv)
{
	struct http_waits *ws = xcalloc(1, sizeof(*ws));

	ws->srv = srv;
	ws->sub = (struct ops_changes_sub){ .moved = on_moved, .ud = ws };
	pthread_mutex_init(&ws->lock, NULL);
	pthread_cond_init(&ws->cond, NULL);
	return ws;
}

void http_waits_free(struct http_waits *ws)
{
	if (!ws)
		return;
	pthread_mutex_destroy(&ws->lock);
	pthread_cond_destroy(&ws->cond);
	free(ws);
}

static void reply_same(struct http_wait *w)
{
	http_reply(w->r, 200, json_pack("{s:s}", "version", w->since));
	w->done = 1;
}

/* state.version for w's caller: answers w when it moved or failed. */
static void look_at(struct ops_ctx *ctx, struct http_wait *w)
{
	struct http_req *r = w->r;
	struct smr_err err = SMR_ERR_INIT;
	json_t *p = w->space ? json_pack("{s:s}", "space", w->space) : json_object();
	json_t *res = NULL;
	const char *v;
	enum smr_rc rc;

	ops_set_caller(ctx, r->has_who ? &r->who : NULL);
	rc = api_call(ctx, "state.version", p, &res, &err);
	ops_set_caller(ctx, NULL);
	ops_auth_stale(ctx);        /* the next caller's rights are read again */
	v = json_string_value(json_object_get(res, "version"));
	if (rc && rc != SMR_EUNAVAIL) {
		http_fail(r, rc, &err, res);
		w->done = 1;
	} else if (!rc && v && strcmp(v, w->since)) {
		http_reply(r, 200, json_incref(res));
		w->done = 1;
	}
	json_decref(res);
	json_decref(p);
}

/* One round over the list from first (not locked: see the top). */
static void round_of(struct http_waits *ws, struct http_wait *first, int moved, int fresh)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = moved || fresh ? http_thread_ops(ws->srv, 0, &err) : NULL;
	int64_t now = sys_monotonic_us();

	for (struct http_wait *w = first; w; w = w->next) {
		if (ctx && (moved || w->fresh))
			look_at(ctx, w);
		w->fresh = 0;
		if (!w->done && w->until_us <= now)
			reply_same(w);
	}
}

/* Takes the answered requests off the list (locked) and resumes them (not locked). */
static void finish(struct http_waits *ws)
{
	struct http_wait *done = NULL, *w, **pp = &ws->head;

	while ((w = *pp)) {
		if (w->done) {
			*pp = w->next;
			w->next = done;
			done = w;
		} else {
			pp = &w->next;
		}
	}
	pthread_mutex_unlock(&ws->lock);
	for (; done; done = w) {
		w = done->next;
		done->r->state = REQ_DONE;
		MHD_resume_connection(done->r->conn);      /* r may be freed from here on */
		free(done->space);
		free(done);
	}
	pthread_mutex_lock(&ws->lock);
}

/* Waits (locked) until something moved, the first time is up or a stop. */
static void nap(struct http_waits *ws)
{
	int64_t until = sys_monotonic_us() + WAIT_IDLE_MS * 1000LL, left;
	struct timespec ts;

	for (struct http_wait *w = ws->head; w; w = w->next)
		if (w->until_us < until)
			until = w->until_us;
	left = until - sys_monotonic_us();
	if (ws->moved || ws->fresh || ws->stop || left <= 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += left / 1000000;
	ts.tv_nsec += (left % 1000000) * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&ws->cond, &ws->lock, &ts);
}

static void *waits_main(void *arg)
{
	struct http_waits *ws = arg;
	struct http_wait *first;
	int moved, fresh;

	pthread_mutex_lock(&ws->lock);
	while (!ws->stop) {
		if (!ws->head) {
			ws->moved = 0;
			pthread_cond_wait(&ws->cond, &ws->lock);
			continue;
		}
		nap(ws);
		moved = ws->moved;
		fresh = ws->fresh;
		ws->moved = ws->fresh = 0;
		first = ws->head;
		pthread_mutex_unlock(&ws->lock);
		round_of(ws, first, moved, fresh);
		pthread_mutex_lock(&ws->lock);
		finish(ws);
	}
	pthread_mutex_unlock(&ws->lock);
	return NULL;
}

int http_waits_park(struct http_req *r, const char *space, const char *since, long wait_s)
{
	struct http_waits *ws = r->srv->waits;
	struct http_wait *w;

	pthread_mutex_lock(&ws->lock);
	if (ws->stop || (!ws->running && sys_thread_start(&ws->thread, waits_main, ws))) {
		pthread_mutex_unlock(&ws->lock);
		return -1;
	}
	if (!ws->running)
		ops_changes_subscribe(r->srv->changes, &ws->sub);
	ws->running = 1;
	w = xcalloc(1, sizeof(*w));
	w->r = r;
	w->space = space ? xstrdup(space) : NULL;
	snprintf(w->since, sizeof(w->since), "%s", since);
	w->until_us = sys_monotonic_us() + wait_s * 1000000LL;
	w->fresh = 1;     /* looked at once parked: a write between its version and now counts */
	ws->fresh = 1;
	r->state = REQ_PARKED;
	MHD_suspend_connection(r->conn);
	w->next = ws->head;
	ws->head = w;
	pthread_cond_signal(&ws->cond);
	pthread_mutex_unlock(&ws->lock);
	return 0;
}

void http_waits_stop(struct http_waits *ws)
{
	int running;

	pthread_mutex_lock(&ws->lock);
	ws->stop = 1;
	running = ws->running;
	pthread_cond_signal(&ws->cond);
	pthread_mutex_unlock(&ws->lock);
	if (!running)
		return;
	pthread_join(ws->thread, NULL);
	ops_changes_unsubscribe(ws->srv->changes, &ws->sub);
	pthread_mutex_lock(&ws->lock);
	for (struct http_wait *w = ws->head; w; w = w->next)
		reply_same(w);
	finish(ws);
	pthread_mutex_unlock(&ws->lock);
	ws->running = 0;
}
