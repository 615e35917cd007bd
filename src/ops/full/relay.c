/*
 * relay.c -- one thread per server on a shared store that writes the
 * events of the replies running here for the other servers, feeds the
 * replies followed here from what the others wrote, and stops the replies
 * running here that someone asked another server to stop (relay.h).
 *
 * The thread owns its store handle and its watch (a LISTEN connection of
 * its own); the lists it works from are arrays of references taken under
 * the relay's lock and walked without it, so a send or a reader never
 * waits for a statement.
 *
 * On SQLite (one server) the same thread runs in its keeping mode
 * (relay_start_keeping): it only writes the events of the replies running
 * here, every RELAY_KEEP_MS, all of them in one transaction of the group
 * commit, so that a reply's text so far outlives a kill -9 and the next
 * start's takeover keeps it (lease.c); nobody follows and no Stop comes
 * through the store.
 */
#include "ops/context.h"
#include "ops/full/relay.h"
#include "store/auth.h"
#include "util/isotime.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RELAY_FLUSH_MS 200          /* new events are written at least this often */
#define RELAY_POLL_MS 1000          /* stops and followed events without a notice */
#define RELAY_DEAD_AFTER_US 2000000 /* a followed reply with no news this long: read its row */
#define RELAY_PRUNE_US 60000000     /* ended replies' events are dropped this often ... */
#define RELAY_KEEP_S 300            /* ... once they ended this long ago (generation.c's keep) */
#define RELAY_DOWN_MS 500           /* the watch is down: wait this long before trying again */
#define RELAY_KEEP_MS 1000          /* keeping mode: the text so far is stored this often */

/* A followed generation and when news of it last came. */
struct follow {
	struct chat_gen *g;
	struct generation row;      /* its id and session (the rest unset) */
	int64_t news_us;
};

struct gen_list {
	struct chat_gen **g;
	size_t n, cap;
};

struct gen_relay {
	struct runtime *rt;
	struct ops_ctx *ctx;         /* the thread's */
	struct store_watch *watch;   /* NULL: no notices, the timers alone */
	pthread_t thread;
	pthread_mutex_t lock;        /* owned, follows, stop */
	pthread_cond_t cond;
	struct gen_list owned;       /* referenced: running here, not all published */
	struct follow *follows;      /* referenced: followed here, not ended */
	size_t n_follows, cap_follows;
	int stop;
	long flush_ms;
	int keeping;                 /* SQLite: only store the owned replies' events */
};

static void list_add(struct gen_list *l, struct chat_gen *g)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->g = xrealloc(l->g, l->cap * sizeof(*l->g));
	}
	l->g[l->n++] = g;
}

void relay_own(struct gen_relay *r, struct chat_gen *g)
{
	chat_gen_ref(g);
	pthread_mutex_lock(&r->lock);
	list_add(&r->owned, g);
	pthread_mutex_unlock(&r->lock);
}

/* The owned list, taken whole (the caller puts back what stays). */
static struct gen_list take_owned(struct gen_relay *r)
{
	struct gen_list l;

	pthread_mutex_lock(&r->lock);
	l = r->owned;
	r->owned = (struct gen_list){ 0 };
	pthread_mutex_unlock(&r->lock);
	return l;
}

static void put_owned(struct gen_relay *r, struct gen_list *keep)
{
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->owned.n; i++)
		list_add(keep, r->owned.g[i]);     /* owned since the take */
	free(r->owned.g);
	r->owned = *keep;
	pthread_mutex_unlock(&r->lock);
}

/*
 * Writes every owned generation's new events in one transaction.  One that
 * ended and has nothing left to write is let go; if the store fails, all
 * are kept and tried again at the next flush (a batch then starts where
 * the last stored one ended, so nothing is written twice or skipped).
 */
static void flush(struct gen_relay *r)
{
	struct gen_list l = take_owned(r), keep = { 0 };
	struct gen_batch *b;
	struct gen_events *rows;
	size_t n = 0;
	int *has;
	enum smr_rc rc;

	if (!l.n) {
		put_owned(r, &keep);
		free(l.g);
		return;
	}
	b = xcalloc(l.n, sizeof(*b));
	rows = xcalloc(l.n, sizeof(*rows));
	has = xcalloc(l.n, sizeof(*has));
	for (size_t i = 0; i < l.n; i++)
		if ((has[i] = gen_take_unpublished(l.g[i], &b[i])))
			rows[n++] = b[i].b;
	rc = store_generation_publish(r->ctx->st, rows, n, NULL);
	for (size_t i = 0; i < l.n; i++) {
		if (!rc && has[i])
			gen_mark_published(l.g[i], &b[i]);
		if ((rc && has[i]) || !b[i].ended)
			list_add(&keep, l.g[i]);
		else
			chat_gen_unref(l.g[i]);
		free(b[i].b.generation_id);
		free(b[i].b.events);
		free(b[i].b.text);
	}
	put_owned(r, &keep);
	free(l.g);
	free(b);
	free(rows);
	free(has);
}

/* Stops the replies running here that someone asked (through any server) to stop. */
static void stops(struct gen_relay *r)
{
	char **ids = NULL;
	size_t n = 0;

	pthread_mutex_lock(&r->lock);
	n = r->owned.n;
	pthread_mutex_unlock(&r->lock);
	if (!n || store_generation_stops(r->ctx->st, &ids, &n, NULL))
		return;
	for (size_t i = 0; i < n; i++) {
		gen_stop_local(r->rt, ids[i]);
		free(ids[i]);
	}
	free(ids);
}

/* Appends the stored events of g after those it has; 1 if any came. */
static int feed(struct store *st, struct chat_gen *g, const char *id)
{
	struct gen_events *b = NULL;
	size_t n = 0;
	int fed = 0;

	if (store_generation_events(st, id, gen_events_had(g, NULL), &b, &n, NULL))
		return 0;
	for (size_t i = 0; i < n; i++)
		fed |= gen_feed(g, &b[i]);
	gen_events_free(b, n);
	return fed;
}

/*
 * No news of f for a while: if its row ended (its server finished it but
 * its last events are not written yet, or its server died and another
 * interrupted it), one more read, then its end as the store tells it.
 */
static void settle(struct gen_relay *r, struct follow *f)
{
	struct generation row = { 0 };

	if (store_generation_get(r->ctx->st, f->row.id, &row, NULL))
		return;
	if (strcmp(row.status, "running") && !feed(r->ctx->st, f->g, row.id))
		gen_end_stored(r->ctx, f->g, &row);
	generation_release(&row);
}

/* Feeds every followed generation; drops those that ended. */
static void follow_all(struct gen_relay *r)
{
	struct follow *all;
	size_t n, keep = 0;
	int64_t now = sys_monotonic_us();
	int ended;

	pthread_mutex_lock(&r->lock);
	all = r->follows;
	n = r->n_follows;
	r->follows = NULL;
	r->n_follows = r->cap_follows = 0;
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < n; i++) {
		struct follow *f = &all[i];

		if (feed(r->ctx->st, f->g, f->row.id))
			f->news_us = now;
		else if (now - f->news_us > RELAY_DEAD_AFTER_US)
			settle(r, f);
		gen_events_had(f->g, &ended);
		if (ended) {
			chat_gen_unref(f->g);
			generation_release(&f->row);
		} else {
			all[keep++] = *f;
		}
	}
	pthread_mutex_lock(&r->lock);
	if (r->n_follows) {        /* followed since the take */
		all = xrealloc(all, (keep + r->n_follows) * sizeof(*all));
		memcpy(all + keep, r->follows, r->n_follows * sizeof(*all));
		keep += r->n_follows;
	}
	free(r->follows);
	r->follows = all;
	r->n_follows = r->cap_follows = keep;
	pthread_mutex_unlock(&r->lock);
}

/* Adds g (a reference taken) to the followed list unless it is there. */
static void follow_add(struct gen_relay *r, struct chat_gen *g, const struct generation *row)
{
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n_follows; i++) {
		if (r->follows[i].g == g) {
			pthread_mutex_unlock(&r->lock);
			return;
		}
	}
	if (r->n_follows == r->cap_follows) {
		r->cap_follows = r->cap_follows ? r->cap_follows * 2 : 8;
		r->follows = xrealloc(r->follows, r->cap_follows * sizeof(*r->follows));
	}
	chat_gen_ref(g);
	r->follows[r->n_follows++] = (struct follow){
		.g = g, .news_us = sys_monotonic_us(),
		.row = { .id = xstrdup(row->id), .session_id = xstrdup(row->session_id) },
	};
	pthread_mutex_unlock(&r->lock);
}

struct chat_gen *relay_follow(struct gen_relay *r, struct ops_ctx *ctx,
			      const struct generation *row, int64_t had)
{
	struct chat_gen *g = gen_find_remote(r->rt, row->id);
	int running = !strcmp(row->status, "running"), ended = 0;
	struct gen_events *b = NULL;
	size_t n = 0;

	if (!g) {
		if (store_generation_events(ctx->st, row->id, 0, &b, &n, NULL) || (!n && !running)) {
			gen_events_free(b, n);
			return NULL;
		}
		g = gen_new_remote(r->rt, row->id, row->session_id);
		for (size_t i = 0; i < n; i++)
			gen_feed(g, &b[i]);
		gen_events_free(b, n);
	} else {
		feed(ctx->st, g, row->id);  /* what came since the relay's last read */
	}
	gen_claim(g, had);
	gen_events_had(g, &ended);
	if (!ended && !running)
		gen_end_stored(ctx, g, row);
	else if (!ended)
		follow_add(r, g, row);
	return g;
}

/* Every ended reply's events, once nobody can resume it from this server's keep either. */
static void prune(struct gen_relay *r)
{
	char now[32], before[32];
	long long t;

	r->ctx->now(now);
	t = iso_seconds(now);
	if (t < 0)
		return;
	iso_format(t - RELAY_KEEP_S, 0, before);
	store_generation_events_prune(r->ctx->st, before, NULL, NULL);
}

/* Waits up to ms for a notice (or for stop); the STORE_NOTICE_ bits that came. */
static int wait_notice(struct gen_relay *r, long ms)
{
	struct timespec until;
	int got = 0;

	if (r->watch)
		got = store_watch_wait(r->watch, (int)ms, NULL);
	if (r->watch && got >= 0)
		return got;
	sys_deadline(&until, r->watch ? RELAY_DOWN_MS : ms);
	pthread_mutex_lock(&r->lock);
	if (!r->stop)
		pthread_cond_timedwait(&r->cond, &r->lock, &until);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static int stopping(struct gen_relay *r)
{
	int v;

	pthread_mutex_lock(&r->lock);
	v = r->stop;
	pthread_mutex_unlock(&r->lock);
	return v;
}

static void *relay_main(void *arg)
{
	struct gen_relay *r = arg;
	int64_t now, flushed = 0, polled = 0, pruned = sys_monotonic_us();
	int got;

	sys_thread_name("smr-relay");
	while (!stopping(r)) {
		got = wait_notice(r, r->flush_ms);
		now = sys_monotonic_us();
		if (now - flushed >= r->flush_ms * 1000) {
			flush(r);
			flushed = now;
		}
		if (!r->keeping && now - polled >= RELAY_POLL_MS * 1000)
			got = STORE_NOTICE_ALL, polled = now;
		if (got & STORE_NOTICE_STOP)
			stops(r);
		if (got & STORE_NOTICE_EVENTS)
			follow_all(r);
		if (now - pruned >= RELAY_PRUNE_US) {
			prune(r);
			pruned = now;
		}
	}
	flush(r);
	return NULL;
}

static enum smr_rc start(struct runtime *rt, const char *dsn, int keeping,
			 struct gen_relay **out, struct smr_err *err)
{
	struct gen_relay *r = xcalloc(1, sizeof(*r));
	/* background: a write nobody waits for yields to those somebody does */
	enum smr_rc rc = ops_open(&r->ctx, dsn, &(struct ops_opts){ .rt = rt,
				  .background = keeping }, err);

	*out = NULL;
	if (rc) {
		free(r);
		return rc;
	}
	r->rt = rt;
	r->keeping = keeping;
	r->flush_ms = keeping ? RELAY_KEEP_MS :
		      sys_env_long("SMRITI_RELAY_FLUSH_MS", RELAY_FLUSH_MS, 10, 1000);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (!keeping)
		rc = store_watch_open_on(dsn, STORE_GEN_CHANNEL, &r->watch, err);
	if (!rc && sys_thread_start(&r->thread, relay_main, r))
		rc = smr_errf(err, SMR_EINTERNAL, "cannot start the reply relay thread");
	if (rc) {
		store_watch_close(r->watch);
		ops_close(r->ctx);
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->cond);
		free(r);
		return rc;
	}
	*out = r;
	return SMR_OK;
}

enum smr_rc relay_start(struct runtime *rt, const char *dsn, struct gen_relay **out,
			struct smr_err *err)
{
	return start(rt, dsn, 0, out, err);
}

enum smr_rc relay_start_keeping(struct runtime *rt, const char *dsn, struct gen_relay **out,
				struct smr_err *err)
{
	return start(rt, dsn, 1, out, err);
}

void relay_stop(struct gen_relay *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	for (size_t i = 0; i < r->owned.n; i++)
		chat_gen_unref(r->owned.g[i]);
	free(r->owned.g);
	for (size_t i = 0; i < r->n_follows; i++) {
		chat_gen_unref(r->follows[i].g);
		generation_release(&r->follows[i].row);
	}
	free(r->follows);
	store_watch_close(r->watch);
	ops_close(r->ctx);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}
