/*
 * group.c -- group commit: writes that arrive together share one
 * transaction and one fsync (see group.h).
 *
 * Leader and followers, as in databases' group commit: a writer queues its
 * request; if nobody leads, it leads: it takes the whole queue, runs it,
 * commits, marks every request done and wakes them.  Writes that
 * arrive while a leader is committing wait for the next leader, so the
 * group grows with the load and no foreground writer waits on a timer.
 * Each waiter sleeps on a condition of its own: a leader wakes the writers
 * it committed and the one that leads next, no other.  Leaders write on a
 * handle the group keeps (see leader_handle).
 *
 * A leader releases the writers it committed after it let go of the
 * group's mutex, and a released writer returns without taking it again:
 * woken under the mutex (a condition variable's wake-up re-takes it), each
 * of them ran at once on the other core and went back to sleep on the
 * mutex the leader still held, two more context switches a write, a sixth
 * of the server's at 32 writers (issue 30).  So each waiter sleeps on a
 * word of its own (a futex, as glibc's own mutexes and semaphores do):
 * its state, which a leader sets to done with a release store and then
 * wakes, after which the leader no longer touches the request.
 *
 * Background writers (threads that called sys_thread_mark_background:
 * those starting chat sends) do not lead while a foreground writer (an
 * agent's commit, a person's edit) waits, and a foreground leader takes
 * only the foreground writes: an agent's write waits for the transaction in
 * flight and no other, and its own carries no chat send's rows; the
 * background writes go in the next transaction.
 *
 * In a burst of background writes (500 people pressing Send at once) a
 * background writer also waits a little for company before it leads:
 * BG_GATHER_US, however many gather (with the server's two chat threads
 * this wait is what paces a burst; stopping once both waited admitted it
 * faster and left agents' writes a worse tail, docs/http.md).  Each of their
 * transactions holds SQLite's one write lock for an fsync, and a foreground
 * write that arrives meanwhile waits for it; fewer, fuller transactions
 * leave the lock free most of the time.  A background write with no burst
 * around it (none committed in the last 2 x BG_GATHER_US) leads at once.
 *
 * The registry of groups (one per database key) is process-wide, the way
 * SQLite's shared cache is; a group lives while a handle holds it.
 */
#include "store/group.h"
#include "util/metrics.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BG_GATHER_US 10000

/* A request's state: waiting; done (set once, by its leader); asked to lead (under g->mu). */
enum { REQ_WAITING, REQ_DONE, REQ_LEAD };

struct group_req {
	store_rows_fn rows;
	void *arg;
	struct smr_err *err;           /* the writer's, may be NULL */
	enum smr_rc rc;
	atomic_int state;              /* REQ_*: the word its writer sleeps on */
	int background;                /* from a background thread */
	int64_t queued_us, began_us, ended_us;   /* for metrics_store_write */
	struct group_req *next;
};

struct commit_group {
	char *key;
	int refs;                      /* under registry_mu */
	pthread_mutex_t mu;
	struct group_req *queue, **tail;
	int leading;
	int foreground;                /* foreground requests in the queue */
	int64_t last_bg_us;            /* when a transaction with background writes ended */
	struct store *conn;            /* the leaders' handle (see leader_handle), or NULL */
	int64_t conn_failed_us;        /* when opening it last failed */
	struct commit_group *next;     /* in the registry */
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct commit_group *registry;

/*
 * Sleeps (without g->mu) while r is waiting, at most us microseconds when
 * us > 0; returns its state.  A wake-up may be spurious: callers look again.
 */
static int req_sleep(struct group_req *r, int64_t us)
{
	struct timespec t = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };
	int v;

	while ((v = atomic_load_explicit(&r->state, memory_order_acquire)) == REQ_WAITING) {
		syscall(SYS_futex, &r->state, FUTEX_WAIT_PRIVATE, REQ_WAITING, us > 0 ? &t : NULL,
			NULL, 0);
		if (us > 0)
			return atomic_load_explicit(&r->state, memory_order_acquire);
	}
	return v;
}

/*
 * Wakes r's writer.  For a done request the word may already belong to
 * something else on that thread's stack: a futex wake there is at most a
 * spurious wake-up, which every futex sleeper (glibc's too) looks past.
 */
static void req_wake(atomic_int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

struct commit_group *group_join(const char *key)
{
	struct commit_group *g;

	pthread_mutex_lock(&registry_mu);
	for (g = registry; g && strcmp(g->key, key); g = g->next)
		;
	if (!g) {
		g = xcalloc(1, sizeof(*g));
		g->key = xstrdup(key);
		pthread_mutex_init(&g->mu, NULL);
		g->tail = &g->queue;
		g->next = registry;
		registry = g;
	}
	g->refs++;
	pthread_mutex_unlock(&registry_mu);
	return g;
}

void group_leave(struct commit_group *g)
{
	struct commit_group **p;
	struct store *conn = NULL;

	if (!g)
		return;
	pthread_mutex_lock(&registry_mu);
	if (--g->refs == 0) {
		for (p = &registry; *p != g; p = &(*p)->next)
			;
		*p = g->next;
		conn = g->conn;
		pthread_mutex_destroy(&g->mu);
		free(g->key);
		free(g);
	}
	pthread_mutex_unlock(&registry_mu);
	store_close(conn);   /* of no group: it does not come back here */
}

/*
 * The handle a leader writes on: one the group keeps, once it has more
 * than one (a server's workers).  A leader on its own handle found
 * SQLite's page cache emptied by the other handles' commits at each BEGIN
 * and read back every page it touched, in the one part of a write that
 * runs alone; the group's handle writes every transaction, so its cache
 * holds.  Opened by the first leader that needs it (a CLI's one handle
 * never does); the leader's own handle if that fails.  Only a leader
 * touches it.
 */
static struct store *leader_handle(struct commit_group *g, struct store *st)
{
	int shared;

	if (g->conn)
		return g->conn;
	pthread_mutex_lock(&registry_mu);
	shared = g->refs > 1;
	pthread_mutex_unlock(&registry_mu);
	/* a failed open is tried again after a second, not on every transaction */
	if (shared && sys_monotonic_us() - g->conn_failed_us > 1000000 &&
	    store_backend_open(st->ops, g->key, &g->conn, NULL)) {
		g->conn = NULL;
		g->conn_failed_us = sys_monotonic_us();
	}
	return g->conn ? g->conn : st;
}

/* Gives every request of batch that has not failed on its own the failure rc (e). */
static void fail_rest(struct group_req *batch, enum smr_rc rc, const struct smr_err *e)
{
	for (struct group_req *r = batch; r; r = r->next) {
		if (r->rc)
			continue;
		r->rc = rc;
		if (r->err)
			*r->err = *e;
	}
}

/* One transaction for the whole batch, each request in a savepoint of its own. */
static void run_batch(struct store *st, struct group_req *batch)
{
	struct smr_err e = SMR_ERR_INIT;
	enum smr_rc rc = st->ops->txn_begin(st, &e);

	for (struct group_req *r = batch; r && !rc; r = r->next) {
		rc = st->ops->savepoint(st, SAVEPOINT_BEGIN, &e);
		if (rc)
			break;
		r->rc = r->rows(st, r->arg, r->err);
		rc = st->ops->savepoint(st, r->rc ? SAVEPOINT_UNDO : SAVEPOINT_END, &e);
	}
	if (!rc) {
		rc = st->ops->txn_commit(st, &e);
	} else {
		st->ops->txn_rollback(st);
	}
	if (rc)
		fail_rest(batch, rc, &e);
}

/*
 * A background writer that could lead, in a burst: waits (called under
 * g->mu) for a foreground leader or its time, while more background writes
 * gather.  0 when it should lead now; 1 when it waited (g->mu held again:
 * look again); 2 when a leader committed it meanwhile (g->mu not held).
 */
static int gather(struct commit_group *g, struct group_req *req)
{
	int64_t now = sys_monotonic_us(), left = req->queued_us + BG_GATHER_US - now;

	if (left <= 0 || now - g->last_bg_us > 2 * BG_GATHER_US)
		return 0;
	pthread_mutex_unlock(&g->mu);
	if (req_sleep(req, left) == REQ_DONE)
		return 2;
	pthread_mutex_lock(&g->mu);
	return 1;
}

/*
 * Takes the next transaction's writes off the queue (under g->mu): a
 * background leader takes them all (all are background: it leads only when
 * no foreground write waits), a foreground one only the foreground writes.
 * Returns how many background writes it took.
 */
static int take_batch(struct commit_group *g, int background, struct group_req **batch)
{
	struct group_req **in = batch, **pp = &g->queue, *r;
	int bg = 0;

	while ((r = *pp)) {
		if (background || !r->background) {
			*pp = r->next;
			r->next = NULL;
			*in = r;
			in = &r->next;
			bg += r->background;
		} else {
			pp = &r->next;
		}
	}
	*in = NULL;
	g->tail = pp;
	g->foreground = 0;
	return bg;
}

/*
 * Wakes the writer that leads next, if one waits (under g->mu): the first
 * foreground one, else the first.  Only it: waking every waiter after each
 * transaction (32 writers on 2 cores) cost more than the writes' own work
 * in the scheduler and on g->mu, and all but one went back to sleep.
 */
static void wake_next(struct commit_group *g)
{
	struct group_req *r = g->queue;
	int waiting = REQ_WAITING;

	if (g->foreground)
		while (r && r->background)
			r = r->next;
	/* under g->mu a queued request is not done, and is there until it sees it is */
	if (r && atomic_compare_exchange_strong(&r->state, &waiting, REQ_LEAD))
		req_wake(&r->state);
}

/*
 * Marks the batch's requests done and wakes their writers, without g->mu
 * (see the top of this file); the leader's own (self) it only stamps.
 */
static void release(struct group_req *batch, struct group_req *self, int64_t began,
		    int64_t ended)
{
	struct group_req *r, *next;

	for (r = batch; r; r = next) {
		next = r->next;   /* r may be gone once it is done */
		r->began_us = began;
		r->ended_us = ended;
		if (r == self)
			continue;
		atomic_store_explicit(&r->state, REQ_DONE, memory_order_release);
		req_wake(&r->state);
	}
}

/*
 * Leads one transaction (called under g->mu with nobody leading; returns
 * with it released): takes the queue's writes, commits them, releases
 * them, and wakes the writer that leads next.  Returns what the group's
 * handle wants of a WAL checkpoint from the writer's own handle (1), or 0.
 */
static int lead(struct commit_group *g, struct store *st, struct group_req *self)
{
	struct group_req *batch;
	struct store *h;
	int64_t began, ended;
	int bg, due;

	g->leading = 1;
	bg = take_batch(g, self->background, &batch);
	pthread_mutex_unlock(&g->mu);
	began = sys_monotonic_us();
	h = leader_handle(g, st);
	run_batch(h, batch);
	/* the group's handle leaves its WAL checkpoints to the group (see checkpoint_due) */
	due = h != st && h->ops->checkpoint_due ? h->ops->checkpoint_due(h) : 0;
	metrics_store_batch();
	ended = sys_monotonic_us();
	release(batch, self, began, ended);
	/* still leading: the next transaction waits for it, the committed ones do not */
	if (due == 2)
		h->ops->checkpoint(h);
	pthread_mutex_lock(&g->mu);
	if (bg)
		g->last_bg_us = ended;
	g->leading = 0;
	wake_next(g);
	pthread_mutex_unlock(&g->mu);
	return due == 1;
}

size_t group_queued(struct commit_group *g)
{
	size_t n = 0;

	pthread_mutex_lock(&g->mu);
	for (struct group_req *r = g->queue; r; r = r->next)
		n++;
	pthread_mutex_unlock(&g->mu);
	return n;
}

/*
 * Waits (called under g->mu) until its request is done, leading when its
 * turn comes.  Returns with g->mu released; 1 when the writer's own handle
 * should take a WAL checkpoint (see lead).
 */
static int await_or_lead(struct commit_group *g, struct store *st, struct group_req *req)
{
	int state, lead_state = REQ_LEAD;

	for (;;) {
		state = atomic_load_explicit(&req->state, memory_order_acquire);
		/* asked to lead, maybe too late: a leader that took it sets done instead */
		if (state == REQ_LEAD &&
		    !atomic_compare_exchange_strong(&req->state, &lead_state, REQ_WAITING))
			state = REQ_DONE;
		if (state == REQ_DONE) {
			pthread_mutex_unlock(&g->mu);
			return 0;
		}
		/* a foreground writer in the queue is awake too, and leads */
		if (g->leading || (req->background && g->foreground)) {
			pthread_mutex_unlock(&g->mu);
			if (req_sleep(req, 0) == REQ_DONE)
				return 0;
			pthread_mutex_lock(&g->mu);
			continue;
		}
		if (req->background) {
			int waited = gather(g, req);

			if (waited == 2)
				return 0;
			if (waited)
				continue;
		}
		return lead(g, st, req);
	}
}

enum smr_rc group_write(struct commit_group *g, struct store *st, int background,
			store_rows_fn rows, void *arg, struct smr_err *err)
{
	struct group_req req = { .rows = rows, .arg = arg, .err = err,
				 .background = background,
				 .queued_us = sys_monotonic_us() };
	int due;

	atomic_init(&req.state, REQ_WAITING);
	pthread_mutex_lock(&g->mu);
	*g->tail = &req;
	g->tail = &req.next;
	g->foreground += !req.background;
	due = await_or_lead(g, st, &req);
	/*
	 * On this writer's own handle, while the next leader writes: off the
	 * group's serial path, but this one writer's reply waits for it (about
	 * one write per 1000 new WAL frames; not counted in its metrics).
	 */
	if (due)
		st->ops->checkpoint(st);
	metrics_store_write(req.background, req.began_us - req.queued_us,
			    req.ended_us - req.began_us);
	return req.rc;
}
