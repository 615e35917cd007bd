/*
 * lease.c -- a server's row in the servers table, its heartbeat, and the
 * takeover of what servers whose lease lapsed left running (lease.h).
 *
 * One thread, its own store handle.  Each round (a fifth of the lease):
 *
 *   beat (own row) --> read the rows --> for each other row: heartbeat moved?
 *        |                                  yes: remember it and when (monotonic)
 *        |                                  no, for its lease_s: take over its
 *        |                                      work, remove its row
 *        +--> work whose owner is nobody or has no row: take over
 *
 * A round that finds the database unreachable for longer than half a lease
 * starts every watch again: the others could not beat either, and taking
 * their silence for death would be wrong.
 */
#include "ops/full/lease.h"
#include "store/store.h"
#include "util/logline.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BEATS_PER_LEASE 5
#define BEAT_MIN_MS 100

static const char gen_reason[] =
	"the server generating this reply stopped (its lease lapsed); send the message again";
static const char job_reason[] =
	"the server running this job stopped before it finished; start a new draft";

/* What this server saw of another's heartbeat. */
struct seen {
	char *id;
	char *heartbeat;            /* the value last read */
	int64_t since_us;           /* monotonic: when it was first read with that value */
	int64_t lease_us;
	int here;                   /* listed in this round */
};

struct lease {
	struct store *st;
	struct server_row me;
	long beat_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	int64_t ok_us;              /* monotonic: the last round that reached the database */
	struct seen *seen;
	size_t n_seen;
};

const char *lease_id(const struct lease *l)
{
	return l ? l->me.id : NULL;
}

/* ---- taking over ---- */

/*
 * The text g's server stored while it streamed ("" or NULL: none).  Caller
 * free()s.  The server running a reply stores its text as it streams
 * (ops/full/relay.c: every 200 ms on PostgreSQL, every second on SQLite).
 */
static char *text_so_far(struct store *st, const struct generation *g)
{
	char *text = NULL;

	if (store_generation_text(st, g->id, &text, NULL)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Takes over the running generations of owner (NULL: those of nobody); returns how many. */
static size_t take_generations(struct lease *l, const char *owner)
{
	struct generation *g = NULL;
	struct smr_err err = SMR_ERR_INIT;
	size_t n = 0, taken = 0;
	char now[32];
	int one;

	if (store_generation_list_orphaned(l->st, owner, &g, &n, &err))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char *text = text_so_far(l->st, &g[i]);

		sys_now_iso(now);
		one = 0;
		if (store_generation_take_over(l->st, &g[i], text, gen_reason, now, &one, &err))
			logline("error", "cannot take over reply %s: %s", g[i].id, err.msg);
		taken += (size_t)one;
		free(text);
		generation_release(&g[i]);
	}
	free(g);
	return taken;
}

/* Takes over what owner left running (NULL: work whose owner is nobody or gone). */
static void take_over(struct lease *l, const char *owner)
{
	struct smr_err err = SMR_ERR_INIT;
	size_t gens = take_generations(l, owner), jobs = 0;
	char now[32];

	sys_now_iso(now);
	if (store_job_fail_owned(l->st, owner, job_reason, now, &jobs, &err))
		logline("error", "cannot fail a stopped server's draft jobs: %s", err.msg);
	if (gens || jobs)
		logline("warning", "took over %zu repl%s and %zu draft job%s of %s", gens,
			gens == 1 ? "y" : "ies", jobs, jobs == 1 ? "" : "s",
			owner ? owner : "servers that are gone");
}

/* ---- watching the others ---- */

static struct seen *seen_find(struct lease *l, const char *id)
{
	for (size_t i = 0; i < l->n_seen; i++)
		if (!strcmp(l->seen[i].id, id))
			return &l->seen[i];
	return NULL;
}

static void seen_drop(struct lease *l, size_t i)
{
	free(l->seen[i].id);
	free(l->seen[i].heartbeat);
	l->seen[i] = l->seen[--l->n_seen];
}

/* 1 when sv's heartbeat has not moved for its lease, as this server watched it. */
static int lapsed(struct lease *l, const struct server_row *sv, int64_t now_us)
{
	struct seen *s = seen_find(l, sv->id);

	if (!s) {
		l->seen = xrealloc(l->seen, (l->n_seen + 1) * sizeof(*l->seen));
		s = &l->seen[l->n_seen++];
		*s = (struct seen){ .id = xstrdup(sv->id), .heartbeat = xstrdup(sv->heartbeat_at),
				    .since_us = now_us };
	} else if (strcmp(s->heartbeat, sv->heartbeat_at)) {
		free(s->heartbeat);
		s->heartbeat = xstrdup(sv->heartbeat_at);
		s->since_us = now_us;
	}
	s->here = 1;
	s->lease_us = (sv->lease_s > 0 ? sv->lease_s : LEASE_DEFAULT_S) * 1000000;
	return now_us - s->since_us > s->lease_us;
}

static void watch(struct lease *l, const struct server_row *rows, size_t n, int64_t now_us)
{
	for (size_t i = 0; i < l->n_seen; i++)
		l->seen[i].here = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(rows[i].id, l->me.id) || !lapsed(l, &rows[i], now_us))
			continue;
		logline("warning", "server %s (%s) has not beaten for its lease of %lld s;"
			" taking over its work", rows[i].id, rows[i].name, (long long)rows[i].lease_s);
		take_over(l, rows[i].id);
		/* unless it came back meanwhile: then it keeps its row and beats on */
		store_server_remove(l->st, rows[i].id, rows[i].heartbeat_at, NULL);
	}
	for (size_t i = l->n_seen; i-- > 0;)
		if (!l->seen[i].here)
			seen_drop(l, i);
}

/* ---- the thread ---- */

static void round_once(struct lease *l)
{
	struct server_row *rows = NULL;
	struct smr_err err = SMR_ERR_INIT;
	char now[32];
	size_t n = 0;
	int64_t now_us;

	sys_now_iso(now);
	free(l->me.heartbeat_at);
	l->me.heartbeat_at = xstrdup(now);
	if (store_server_beat(l->st, &l->me, 0, &err) ||
	    store_server_list(l->st, &rows, &n, &err)) {
		logline("warning", "server heartbeat: %s", err.msg);
		return;
	}
	now_us = sys_monotonic_us();
	/* out of touch for a while: so were the others; watch them afresh */
	if (now_us - l->ok_us > (int64_t)l->beat_ms * BEATS_PER_LEASE * 500)
		for (size_t i = 0; i < l->n_seen; i++)
			l->seen[i].since_us = now_us;
	l->ok_us = now_us;
	watch(l, rows, n, now_us);
	take_over(l, NULL);
	server_rows_free(rows, n);
}

static void *lease_main(void *arg)
{
	struct lease *l = arg;
	struct timespec until;

	sys_thread_name("smr-lease");
	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		pthread_mutex_unlock(&l->lock);
		round_once(l);
		pthread_mutex_lock(&l->lock);
		sys_deadline(&until, l->beat_ms);
		while (!l->stop && !pthread_cond_timedwait(&l->cond, &l->lock, &until))
			;
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void lease_free(struct lease *l)
{
	while (l->n_seen)
		seen_drop(l, l->n_seen - 1);
	free(l->seen);
	store_close(l->st);
	free(l->me.id);
	free(l->me.name);
	free(l->me.started_at);
	free(l->me.heartbeat_at);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}

enum smr_rc lease_start(const char *dsn, struct lease **out, struct smr_err *err)
{
	struct lease *l = xcalloc(1, sizeof(*l));
	long lease_s = sys_env_long("SMRITI_LEASE_S", LEASE_DEFAULT_S, 1, LEASE_MAX_S);
	char id[37], now[32], host[256] = "";
	enum smr_rc rc;

	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	sys_uuid(id);
	sys_now_iso(now);
	gethostname(host, sizeof(host) - 1);
	l->me = (struct server_row){ .id = xstrdup(id), .started_at = xstrdup(now),
				     .heartbeat_at = xstrdup(now), .lease_s = lease_s,
				     .name = xasprintf("%s pid %ld", host, (long)getpid()) };
	l->beat_ms = lease_s * 1000 / BEATS_PER_LEASE;
	if (l->beat_ms < BEAT_MIN_MS)
		l->beat_ms = BEAT_MIN_MS;
	rc = store_open(dsn, &l->st, err);
	if (!rc)
		rc = store_server_beat(l->st, &l->me, 1, err);
	l->ok_us = sys_monotonic_us();
	if (!rc && sys_thread_start(&l->thread, lease_main, l))
		rc = smr_errf(err, SMR_EINTERNAL, "cannot start the server's heartbeat thread");
	if (rc) {
		if (l->st)
			store_server_remove(l->st, l->me.id, NULL, NULL);
		lease_free(l);
		return rc;
	}
	*out = l;
	return SMR_OK;
}

void lease_stop(struct lease *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = 1;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	store_server_remove(l->st, l->me.id, NULL, NULL);
	lease_free(l);
}
