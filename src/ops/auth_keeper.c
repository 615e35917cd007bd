/*
 * auth_keeper.c -- a server's one thread that keeps its contexts' caches of
 * tokens and roles honest without a query per request (see auth.h).
 *
 * Each worker's context (ops/ops_auth.c) keeps the tokens it checked and the
 * roles it read.  They stay valid until the auth state changes, and the
 * keeper says when that may have happened:
 *  - PostgreSQL: a watch (store_watch, a LISTEN connection) hears every
 *    move of the auth epoch when it commits, from any process, and moves
 *    gen.  While the watch is down (live 0) contexts read the epoch on
 *    every request instead, as they would without a keeper.  The keeper
 *    also reads the epoch every KEEPER_POLL_MS, which bounds what a lost
 *    notice (a change written without one) could cost.
 *  - SQLite: no watch (live stays 0); a context compares the store's
 *    data_version first, which costs no query while nothing was committed.
 *  - A change made through this server moves gen at once (auth_keeper_bump),
 *    so on the server that made it the change is seen by the next request.
 * It also writes tokens' last use (at most once a minute per token), so
 * that no request waits for that write, and tells the server's watch on
 * writes (ops/changes.h) when gen moved, so that long polls and MCP
 * listens look again as their callers.
 *
 * Open streams outlive the check of the request that opened them, so the
 * keeper also holds their callers (struct auth_hold): whenever gen moves it
 * checks each hold again on its own context and tells the transport of
 * those whose access ended.  Without a live watch (SQLite; PostgreSQL while
 * the watch is down) it reads the epoch itself each tick (on SQLite only
 * when data_version moved) and moves gen when the epoch moved, so a change
 * made by another process reaches the holds within a tick too.
 *
 *        live 0 --wait ok: gen++--> live 1 --wait/poll fails--> live 0
 */
#include "ops/auth.h"
#include "ops/auth_keeper.h"
#include "ops/changes.h"
#include "ops/context.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEPER_TICK_MS 250       /* a round: the watch's wait (or, without one, a nap) */
#define KEEPER_RETRY_MS 1000     /* after a failed connection */
#define KEEPER_POLL_MS 5000      /* the epoch read that bounds a lost notice */
#define KEEPER_TOUCHES 64
#define KEEPER_CHECKS 64         /* holds checked again per round; the rest in the next */

struct touch {
	char id[24];
	char now[32];              /* the last use to write; "" when written */
	long long written;         /* monotonic seconds of the last write, 0: never */
};

struct auth_keeper {
	char *dsn;
	struct store_watch *watch;        /* NULL: the backend has none */
	_Atomic uint64_t gen;
	atomic_int live;
	atomic_int stop;
	pthread_t thread;
	pthread_mutex_t lock;             /* guards touch[] and wakes the thread */
	pthread_cond_t wake;
	struct touch touch[KEEPER_TOUCHES];
	pthread_mutex_t holds_lock;       /* guards holds, and runs lost() */
	struct auth_hold *holds;
	uint64_t hold_serial;
	/* the epoch as the keeper last read it without a live watch (its thread's alone) */
	int has_epoch;
	int64_t epoch;
	uint64_t version;
	_Atomic(struct ops_changes *) changes;   /* told when gen moved, or NULL */
};

static long long mono_s(void)
{
	return (long long)(sys_monotonic_us() / 1000000);
}

int auth_keeper_gen(struct auth_keeper *k, uint64_t *gen)
{
	if (!atomic_load(&k->live))
		return 0;
	*gen = atomic_load(&k->gen);
	return 1;
}

void auth_keeper_bump(struct auth_keeper *k)
{
	atomic_fetch_add(&k->gen, 1);
}

uint64_t ops_auth_keeper_mark(struct auth_keeper *k)
{
	return k ? atomic_load(&k->gen) : 0;
}

void ops_auth_hold(struct auth_keeper *k, struct auth_hold *h)
{
	h->serial = 0;
	h->next = NULL;
	if (!k)
		return;
	pthread_mutex_lock(&k->holds_lock);
	h->serial = ++k->hold_serial;
	h->next = k->holds;
	k->holds = h;
	pthread_mutex_unlock(&k->holds_lock);
}

void ops_auth_unhold(struct auth_keeper *k, struct auth_hold *h)
{
	if (k && h->serial) {
		pthread_mutex_lock(&k->holds_lock);
		for (struct auth_hold **pp = &k->holds; *pp; pp = &(*pp)->next) {
			if (*pp == h) {
				*pp = h->next;
				break;
			}
		}
		pthread_mutex_unlock(&k->holds_lock);
	}
	h->serial = 0;
	h->next = NULL;
	json_decref(h->params);
	h->params = NULL;
}

/* What a round checks of one hold, copied out so that no lock is held over the store. */
struct hold_check {
	uint64_t serial;
	struct principal who;
	const char *op;
	json_t *params;                   /* a reference of the round's */
	enum smr_rc rc;
	struct smr_err err;
};

/* Copies up to KEEPER_CHECKS holds not checked at gen into c[]; their gen becomes gen. */
static size_t holds_due(struct auth_keeper *k, uint64_t gen, struct hold_check *c)
{
	size_t n = 0;

	pthread_mutex_lock(&k->holds_lock);
	for (struct auth_hold *h = k->holds; h && n < KEEPER_CHECKS; h = h->next) {
		if (h->gen == gen)
			continue;
		h->gen = gen;
		c[n] = (struct hold_check){ .serial = h->serial, .who = h->who, .op = h->op,
					    .params = json_incref(h->params) };
		n++;
	}
	pthread_mutex_unlock(&k->holds_lock);
	return n;
}

/* 1 when rc means the caller's access ended (not that the store could not say). */
static int access_ended(enum smr_rc rc)
{
	return rc == SMR_EUNAUTH || rc == SMR_ENOTFOUND || rc == SMR_EFORBIDDEN;
}

/* Tells the holds of c[0..n) whose access ended, if still registered; the rest wait. */
static void holds_tell(struct auth_keeper *k, struct hold_check *c, size_t n, uint64_t gen)
{
	pthread_mutex_lock(&k->holds_lock);
	for (struct auth_hold **pp = &k->holds, *h; (h = *pp);) {
		size_t i;

		for (i = 0; i < n && c[i].serial != h->serial; i++)
			;
		if (i < n && access_ended(c[i].rc)) {
			*pp = h->next;              /* told once: it is no longer held */
			h->serial = 0;
			h->next = NULL;
			h->lost(h->ud, c[i].rc, c[i].err.msg);
			continue;
		}
		if (i < n && c[i].rc)
			h->gen = gen - 1;           /* the store could not say: again next round */
		pp = &h->next;
	}
	pthread_mutex_unlock(&k->holds_lock);
}

/* Checks again the holds not checked since gen last moved. */
static void check_holds(struct auth_keeper *k, struct ops_ctx *ctx)
{
	struct hold_check c[KEEPER_CHECKS];
	uint64_t gen = atomic_load(&k->gen);
	size_t n = holds_due(k, gen, c);

	for (size_t i = 0; i < n; i++) {
		c[i].err = (struct smr_err)SMR_ERR_INIT;
		c[i].rc = ops_auth_recheck(ctx, &c[i].who, c[i].op, c[i].params, &c[i].err);
	}
	if (n)
		holds_tell(k, c, n, gen);
	for (size_t i = 0; i < n; i++)
		json_decref(c[i].params);
}

/* The slot of token_id, else the free slot written longest ago; NULL when all are pending. */
static struct touch *touch_slot(struct auth_keeper *k, const char *token_id)
{
	struct touch *best = NULL;

	for (size_t i = 0; i < KEEPER_TOUCHES; i++) {
		struct touch *t = &k->touch[i];

		if (!strcmp(t->id, token_id))
			return t;
		if (!t->now[0] && (!best || t->written < best->written))
			best = t;
	}
	if (best) {
		snprintf(best->id, sizeof(best->id), "%s", token_id);
		best->written = 0;
	}
	return best;
}

void auth_keeper_touch(struct auth_keeper *k, const char *token_id, const char *now)
{
	struct touch *t;

	pthread_mutex_lock(&k->lock);
	t = touch_slot(k, token_id);
	if (t && (!t->written || mono_s() - t->written >= TOKEN_TOUCH_EVERY)) {
		snprintf(t->now, sizeof(t->now), "%s", now);
		pthread_cond_signal(&k->wake);
	}
	pthread_mutex_unlock(&k->lock);
}

/* Writes the pending last uses (errors are dropped: the time is advice, not a record). */
static void flush_touches(struct auth_keeper *k, struct ops_ctx *ctx)
{
	struct touch due[KEEPER_TOUCHES];
	size_t n = 0;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < KEEPER_TOUCHES; i++) {
		if (!k->touch[i].now[0])
			continue;
		due[n++] = k->touch[i];
		k->touch[i].now[0] = '\0';
		k->touch[i].written = mono_s();
	}
	pthread_mutex_unlock(&k->lock);
	for (size_t i = 0; ctx && i < n; i++)
		store_token_touch(ctx->st, due[i].id, due[i].now, NULL);
}

/* Sleeps ms, or less when stopped or given a touch. */
static void nap(struct auth_keeper *k, int ms)
{
	struct timespec until;

	sys_deadline(&until, ms);
	pthread_mutex_lock(&k->lock);
	if (!atomic_load(&k->stop))
		pthread_cond_timedwait(&k->wake, &k->lock, &until);
	pthread_mutex_unlock(&k->lock);
}

/* One wait on the watch: gen and live as it says. */
static void listen_once(struct auth_keeper *k)
{
	int got = store_watch_wait(k->watch, KEEPER_TICK_MS, NULL);

	if (got < 0) {
		atomic_store(&k->live, 0);
		nap(k, KEEPER_RETRY_MS);
		return;
	}
	if (got > 0 || !atomic_load(&k->live)) {
		atomic_fetch_add(&k->gen, 1);      /* before live: nothing read while down is kept */
		atomic_store(&k->live, 1);
	}
}

/*
 * Without a live watch, the epoch read each tick (on SQLite only when its
 * data_version moved, which costs no statement): gen moves when the epoch
 * did, so that holds hear of changes made by other processes.
 */
static void track_epoch(struct auth_keeper *k, struct ops_ctx *ctx)
{
	uint64_t version = 0;
	int64_t epoch;

	if (store_data_version(ctx->st, &version, NULL))
		version = 0;
	if (version && k->has_epoch && version == k->version)
		return;
	if (store_auth_epoch(ctx->st, &epoch, NULL)) {
		k->has_epoch = 0;
		return;
	}
	if (!k->has_epoch || epoch != k->epoch)
		atomic_fetch_add(&k->gen, 1);   /* a first read, too: what came before is unknown */
	k->has_epoch = 1;
	k->epoch = epoch;
	k->version = version;
}

/* The read of the epoch every KEEPER_POLL_MS: a move nobody announced still counts. */
static void poll_epoch(struct auth_keeper *k, struct ops_ctx *ctx, int64_t *last)
{
	int64_t epoch;

	if (store_auth_epoch(ctx->st, &epoch, NULL)) {
		atomic_store(&k->live, 0);
		return;
	}
	if (*last != epoch)
		atomic_fetch_add(&k->gen, 1);
	*last = epoch;
}

static void *keeper_main(void *arg)
{
	struct auth_keeper *k = arg;
	struct ops_ctx *ctx = NULL;
	int64_t epoch = -1, next_poll = 0;
	uint64_t told = atomic_load(&k->gen);

	while (!atomic_load(&k->stop)) {
		if (told != atomic_load(&k->gen)) {
			told = atomic_load(&k->gen);
			ops_changes_moved(atomic_load(&k->changes));
		}
		if (!ctx)
			ops_open(&ctx, k->dsn, NULL, NULL);
		if (k->watch)
			listen_once(k);
		else
			nap(k, ctx ? KEEPER_TICK_MS : KEEPER_RETRY_MS);
		if (!ctx)
			continue;
		flush_touches(k, ctx);
		if (!atomic_load(&k->live))
			track_epoch(k, ctx);
		else
			k->has_epoch = 0;       /* the watch hears; a later outage starts afresh */
		if (k->watch && sys_monotonic_us() >= next_poll) {
			poll_epoch(k, ctx, &epoch);
			next_poll = sys_monotonic_us() + KEEPER_POLL_MS * 1000LL;
		}
		check_holds(k, ctx);
	}
	flush_touches(k, ctx);
	ops_close(ctx);
	return NULL;
}

enum smr_rc ops_auth_keeper_start(const char *dsn, struct auth_keeper **out,
				  struct smr_err *err)
{
	struct auth_keeper *k = xcalloc(1, sizeof(*k));
	enum smr_rc rc = store_watch_open(dsn, &k->watch, err);

	if (rc) {
		free(k);
		return rc;
	}
	k->dsn = xstrdup(dsn);
	pthread_mutex_init(&k->holds_lock, NULL);
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->wake, NULL);
	if (sys_thread_start(&k->thread, keeper_main, k)) {
		store_watch_close(k->watch);
		pthread_cond_destroy(&k->wake);
		pthread_mutex_destroy(&k->lock);
		pthread_mutex_destroy(&k->holds_lock);
		free(k->dsn);
		free(k);
		return smr_errf(err, SMR_EINTERNAL, "cannot start the auth keeper thread");
	}
	*out = k;
	return SMR_OK;
}

void ops_auth_keeper_tell(struct auth_keeper *k, struct ops_changes *c)
{
	if (k)
		atomic_store(&k->changes, c);
}

void ops_auth_keeper_stop(struct auth_keeper *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	atomic_store(&k->stop, 1);
	pthread_cond_signal(&k->wake);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	store_watch_close(k->watch);
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->lock);
	pthread_mutex_destroy(&k->holds_lock);
	free(k->dsn);
	free(k);
}
