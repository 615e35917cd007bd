/*
 * changes.c -- a process's one watch on writes (changes.h), one thread.
 *
 *  - PostgreSQL: one LISTEN connection (store_watch on STORE_DATA_CHANNEL)
 *    for the whole process, whatever the number of waiting pages and
 *    subscribers.  Migration 12's triggers NOTIFY when a statement writes
 *    Spaces, HEADs, sessions, turns or grants, so every server (this one
 *    too) hears of a write when it commits.  While the connection is down
 *    the subscribers are told every CHANGES_RETRY_MS instead: the looks
 *    they did on a timer before, until the watch is back (it then tells
 *    them once more, for what it missed).  It also tells them every
 *    CHANGES_BOUND_MS however quiet, which bounds what a notice that never
 *    came costs (a transaction-mode pooler between, which carries no
 *    notices).
 *  - SQLite: no notices, and other processes (the CLI) write the same
 *    file, so the thread reads the data version every CHANGES_SQLITE_MS on
 *    a handle of its own (no statement while nothing was committed) and
 *    tells the subscribers when it moved.  A write through this process
 *    tells them at once besides (ops_changes_poke from api_call).
 */
#include "ops/changes.h"
#include "ops/context.h"
#include "ops/ops.h"
#include "store/auth.h"
#include "store/store.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define CHANGES_TICK_MS 250      /* the LISTEN's wait: how soon a stop is seen */
#define CHANGES_RETRY_MS 1000    /* the watch down: a look for everyone, and a reconnection */
#define CHANGES_SQLITE_MS 50     /* SQLite: the data version's reads */
#define CHANGES_BOUND_MS 5000    /* a look for everyone however quiet: bounds a lost notice */

struct ops_changes {
	char *dsn;
	struct store_watch *watch;       /* NULL: the backend has none (SQLite) */
	pthread_t thread;
	atomic_int stop;
	pthread_mutex_t lock;            /* subs; the nap's condition */
	pthread_cond_t wake;
	struct ops_changes_sub *subs;
};

static void tell(struct ops_changes *c)
{
	pthread_mutex_lock(&c->lock);
	for (struct ops_changes_sub *s = c->subs; s; s = s->next)
		s->moved(s->ud);
	pthread_mutex_unlock(&c->lock);
}

/* Sleeps ms, or less when stopped. */
static void nap(struct ops_changes *c, int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)ms * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&c->lock);
	if (!atomic_load(&c->stop))
		pthread_cond_timedwait(&c->wake, &c->lock, &until);
	pthread_mutex_unlock(&c->lock);
}

/* One wait on the LISTEN connection; *told_us: when the subscribers were last told. */
static void listen_once(struct ops_changes *c, int64_t *told_us)
{
	int got = store_watch_wait(c->watch, CHANGES_TICK_MS, NULL);
	int64_t now = sys_monotonic_us();

	if (got < 0 || (got & STORE_NOTICE_DATA) || now - *told_us >= CHANGES_BOUND_MS * 1000LL) {
		tell(c);
		*told_us = now;
	}
	if (got < 0)
		nap(c, CHANGES_RETRY_MS);
}

/* One read of the data version (SQLite): tells when it moved since *seen. */
static void look_once(struct ops_changes *c, struct ops_ctx **ctx, uint64_t *seen)
{
	uint64_t v = 0;

	if (!*ctx && ops_open(ctx, c->dsn, NULL, NULL)) {
		nap(c, CHANGES_RETRY_MS);
		return;
	}
	nap(c, CHANGES_SQLITE_MS);
	if (store_data_version((*ctx)->st, &v, NULL)) {
		ops_close(*ctx);
		*ctx = NULL;
		tell(c);
		return;
	}
	if (v != *seen) {
		if (*seen)
			tell(c);
		*seen = v;
	}
}

static void *changes_main(void *arg)
{
	struct ops_changes *c = arg;
	struct ops_ctx *ctx = NULL;
	uint64_t seen = 0;
	int64_t told_us = sys_monotonic_us();

	while (!atomic_load(&c->stop)) {
		if (c->watch)
			listen_once(c, &told_us);
		else
			look_once(c, &ctx, &seen);
	}
	ops_close(ctx);
	return NULL;
}

enum smr_rc ops_changes_start(const char *dsn, struct ops_changes **out, struct smr_err *err)
{
	struct ops_changes *c = xcalloc(1, sizeof(*c));
	enum smr_rc rc = store_watch_open_on(dsn, STORE_DATA_CHANNEL, &c->watch, err);

	*out = NULL;
	if (rc) {
		free(c);
		return rc;
	}
	c->dsn = xstrdup(dsn);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	if (sys_thread_start(&c->thread, changes_main, c)) {
		store_watch_close(c->watch);
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		free(c->dsn);
		free(c);
		return smr_errf(err, SMR_EINTERNAL, "cannot start the thread watching for changes");
	}
	*out = c;
	return SMR_OK;
}

void ops_changes_stop(struct ops_changes *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	atomic_store(&c->stop, 1);
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	store_watch_close(c->watch);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c->dsn);
	free(c);
}

void ops_changes_subscribe(struct ops_changes *c, struct ops_changes_sub *s)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	s->next = c->subs;
	c->subs = s;
	pthread_mutex_unlock(&c->lock);
}

void ops_changes_unsubscribe(struct ops_changes *c, struct ops_changes_sub *s)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	for (struct ops_changes_sub **pp = &c->subs; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	s->next = NULL;
}

void ops_changes_moved(struct ops_changes *c)
{
	if (c)
		tell(c);
}

void ops_changes_poke(struct ops_changes *c)
{
	/* PostgreSQL's own notice comes back within a millisecond; SQLite has none */
	if (c && !c->watch)
		tell(c);
}
