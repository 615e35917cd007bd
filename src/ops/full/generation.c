/*
 * generation.c -- generations in memory: their numbered events, the readers
 * waiting on them, the list of live ones, and the finisher thread that
 * writes each reply to the store when its provider call ends (see
 * generation.h for the events and the threading rules).
 *
 * A generation is reference counted: its creator (the send), the finisher
 * while a finish is queued, each reader, and the runtime's list (which
 * keeps an ended generation for GEN_KEEP_S seconds so that a client that
 * lost its connection can still read the end).
 */
#include "ops/context.h"
#include "ops/full/generation.h"
#include "ops/full/relay.h"
#include "provider/loop.h"
#include "util/buf.h"
#include "util/sys.h"
#include "util/xalloc.h"
#include "util/isotime.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GEN_KEEP_S 300              /* an ended generation stays readable this long */
/*
 * The list is walked for ended generations at most this often: a walk locks
 * every generation in it, and a burst of 500 sends over a list of 1,000
 * (the last burst's, kept GEN_KEEP_S) spent more time there than in
 * storing their user turns.
 */
#define GEN_PRUNE_EVERY_US 1000000
/*
 * Once no reply has run for this long, the finisher hands the heap's free
 * pages back to the system (malloc_trim): a burst of streams leaves much of
 * the heap free but spread over the threads' malloc arenas, where the next
 * burst's threads may not find them, so each burst would grow the process
 * (figures: docs/http.md, "Memory under a burst").
 */
#define GEN_TRIM_IDLE_MS 1000
#define GEN_DRAIN_S 5                /* at shutdown, replies get this long to finish */
#define GEN_STOP_WAIT_S 3            /* then those stopped get this long to be stored */
#define GEN_SETTLE_RETRY_MS 500      /* an end the store could not take is tried again so often */
/*
 * A reader that has had nothing for this long gets an SSE comment, so that
 * a proxy (nginx's proxy_read_timeout is 60 s) keeps a connection whose
 * model is thinking before its first token.  SMRITI_SSE_KEEPALIVE_MS.
 */
#define GEN_KEEPALIVE_MS 15000
#define GEN_LOST_MAX 10000          /* events lost with a dead server that an end makes room for */
#define KEEPALIVE_TEXT ": keep-alive\n\n"

struct gen_ev {
	char *text;                 /* "id: N\nevent: T\ndata: {...}\n\n" */
	size_t len;
};

struct chat_gen {
	atomic_int refs;
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* the end, and the call's end for a waiter without finisher */
	char id[37];
	char *session_id;
	struct runtime *rt;
	struct gen_ev *ev;
	size_t n_ev, cap;
	char *packed;               /* once ended: every event's text, ev[i].text pointing in */
	size_t final_ev;            /* once ended (not rebuilt): the final event's number */
	int ended;
	int rebuilt;                /* from the store: its one event is the final one */
	int call_ended;             /* the provider call is over; the finish may run */
	int stop_requested, shutdown;
	enum smr_rc rc;
	struct smr_err err;
	struct buf text;            /* the reply so far: the deltas joined */
	struct chat_gen_watch *watches;
	unsigned keepalive;         /* bumped every GEN_KEEPALIVE_S while it runs */
	struct send *s;
	struct provider_stream *ps;
	int64_t ended_us;
	int counted;                /* in gs->live until it ends */
	int remote;                 /* followed: its events come from another server (relay.c) */
	size_t claimed;             /* the last event a reader said it had (Last-Event-ID) */
	size_t published;           /* events written for other servers (relay.c) */
	size_t published_text;      /* bytes of text among them */
	struct chat_gen *fin_next;  /* in the finisher's queue */
	struct chat_gen *next;      /* in the runtime's list */
};

/*
 * The finisher takes every send whose call ended since its last round, up
 * to FINISH_BATCH, and stores their replies in one transaction: when many
 * replies end together (a burst of sends trickled at the same pace), one
 * fsync serves them all instead of one each.
 */
#define FINISH_BATCH 64

/*
 * The end of a failed send that the store could not take (the database was
 * unreachable): a generation row left "running" would hold its session at
 * 409 for every server, so the finisher writes it once the database is
 * back (gen_settle_later).
 */
struct gen_settle {
	struct generation row;       /* ended: status, error, finished_at set */
	int64_t user_id;             /* the user turn that gets the error; 0: none */
	struct gen_settle *next;
};

struct chat_gens {
	pthread_mutex_t lock;
	struct chat_gen *list;
	pthread_t finisher;
	pthread_cond_t fin_cond;    /* under fin_lock: work, or stop */
	pthread_mutex_t fin_lock;
	struct chat_gen *fin_head, **fin_tail;
	int fin_stop;
	atomic_int live;            /* generations made by gen_new that have not ended */
	int trim_due;               /* under fin_lock: replies ended since the last trim */
	struct gen_settle *unsettled; /* under fin_lock: ends waiting for the store */
	struct ops_ctx *ctx;        /* the finisher's */
	int running;
	int64_t pruned_us;          /* when ended generations were last dropped (under lock) */
	pthread_t ticker;           /* keep-alives */
	pthread_cond_t tick;
	int ticking, stop_ticking;  /* under lock */
	long keepalive_ms;
	struct gen_relay *relay;    /* PostgreSQL: publishes and follows events (relay.c) */
	struct gen_relay *keep;     /* SQLite: stores running replies' events every second */
};

/* ---- references and the list ---- */

static struct chat_gen *gen_alloc(struct runtime *rt, const char *id, const char *session_id)
{
	struct chat_gen *g = xcalloc(1, sizeof(*g));

	atomic_init(&g->refs, 1);
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	snprintf(g->id, sizeof(g->id), "%s", id);
	g->session_id = xstrdup(session_id);
	g->rt = rt;
	g->text = (struct buf)BUF_INIT(0);
	return g;
}

static void gen_ref(struct chat_gen *g)
{
	atomic_fetch_add(&g->refs, 1);
}

void chat_gen_ref(struct chat_gen *g)
{
	gen_ref(g);
}

void chat_gen_unref(struct chat_gen *g)
{
	if (!g || atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	if (g->packed)
		free(g->packed);
	else
		for (size_t i = 0; i < g->n_ev; i++)
			free(g->ev[i].text);
	free(g->ev);
	buf_release(&g->text);
	if (g->s)
		send_free(g->s);
	free(g->session_id);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
}

const char *chat_gen_id(const struct chat_gen *g)
{
	return g->id;
}

void gen_lock(struct chat_gen *g)
{
	pthread_mutex_lock(&g->lock);
}

void gen_unlock(struct chat_gen *g)
{
	pthread_mutex_unlock(&g->lock);
}

struct chat_gens *chat_gens_new(void)
{
	struct chat_gens *gs = xcalloc(1, sizeof(*gs));

	pthread_mutex_init(&gs->lock, NULL);
	pthread_mutex_init(&gs->fin_lock, NULL);
	pthread_cond_init(&gs->fin_cond, NULL);
	gs->fin_tail = &gs->fin_head;
	return gs;
}

void chat_gens_free(struct chat_gens *gs)
{
	struct chat_gen *g, *next;

	if (!gs)
		return;
	for (g = gs->list; g; g = next) {
		next = g->next;
		chat_gen_unref(g);
	}
	pthread_mutex_destroy(&gs->lock);
	pthread_mutex_destroy(&gs->fin_lock);
	pthread_cond_destroy(&gs->fin_cond);
	free(gs);
}

/* Drops ended generations older than GEN_KEEP_S; under gs->lock. */
static void prune(struct chat_gens *gs)
{
	int64_t old = sys_monotonic_us() - (int64_t)GEN_KEEP_S * 1000000;
	struct chat_gen **pp = &gs->list, *g;
	int drop;

	while ((g = *pp)) {
		pthread_mutex_lock(&g->lock);
		drop = g->ended && g->ended_us < old;
		pthread_mutex_unlock(&g->lock);
		if (drop) {
			*pp = g->next;
			chat_gen_unref(g);
		} else {
			pp = &g->next;
		}
	}
}

struct chat_gen *gen_new(struct runtime *rt, const char *id, const char *session_id)
{
	struct chat_gens *gs = rt->gens;
	struct chat_gen *g = gen_alloc(rt, id, session_id);
	int64_t now = sys_monotonic_us();

	gen_ref(g);                 /* the list's */
	g->counted = 1;
	atomic_fetch_add(&gs->live, 1);
	pthread_mutex_lock(&gs->lock);
	if (now - gs->pruned_us >= GEN_PRUNE_EVERY_US) {
		prune(gs);
		gs->pruned_us = now;
	}
	g->next = gs->list;
	gs->list = g;
	pthread_mutex_unlock(&gs->lock);
	if (gs->relay || gs->keep)
		relay_own(gs->relay ? gs->relay : gs->keep, g);
	return g;
}

/* The generation id of this server (remote 0) or followed here (1), with a reference, or NULL. */
static struct chat_gen *find_listed(struct runtime *rt, const char *id, int remote)
{
	struct chat_gens *gs = rt ? rt->gens : NULL;
	struct chat_gen *g;

	if (!gs)
		return NULL;
	pthread_mutex_lock(&gs->lock);
	for (g = gs->list; g && (g->remote != remote || strcmp(g->id, id)); g = g->next)
		;
	if (g)
		gen_ref(g);
	pthread_mutex_unlock(&gs->lock);
	return g;
}

/* The live generation id (its provider call is this server's), with a reference, or NULL. */
static struct chat_gen *find_live(struct runtime *rt, const char *id)
{
	return find_listed(rt, id, 0);
}

/* ---- events and readers ---- */

static void wake(struct chat_gen *g, int final)
{
	for (struct chat_gen_watch *w = g->watches; w; w = w->next) {
		if (w->armed && (!w->end_only || final)) {
			w->armed = 0;
			w->resume(w->ud);
		}
	}
}

/* Event number id of type with data as server-sent-event text; caller free()s. */
static char *render_event(size_t id, const char *type, const json_t *data, size_t *len)
{
	char *json = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII);
	char *text = xasprintf("id: %zu\nevent: %s\ndata: %s\n\n", id, type, json);

	free(json);
	*len = strlen(text);
	return text;
}

/* Appends text (taken), rendered as event number g->n_ev + 1. */
static void push_event_locked(struct chat_gen *g, char *text, size_t len)
{
	if (g->n_ev == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->ev = xrealloc(g->ev, g->cap * sizeof(*g->ev));
	}
	g->ev[g->n_ev++] = (struct gen_ev){ text, len };
}

static void add_event_locked(struct chat_gen *g, const char *type, json_t *data)
{
	size_t len;
	char *text = render_event(g->n_ev + 1, type, data, &len);

	push_event_locked(g, text, len);
	json_decref(data);
}

void gen_event(struct chat_gen *g, const char *type, json_t *data)
{
	pthread_mutex_lock(&g->lock);
	add_event_locked(g, type, data);
	wake(g, 0);
	pthread_mutex_unlock(&g->lock);
}

/*
 * The event is rendered before the lock is taken, numbered as the next one:
 * the lock is held for a copy, so a reader on an HTTP event thread never
 * waits for JSON work on the provider's loop thread (which may run at a
 * lower priority: sys_thread_lower_priority).  Deltas come from the loop thread
 * alone, between the first event and the end, so the number still holds
 * when the lock is taken; if another event came in between, it is rendered
 * again.
 */
void gen_delta(struct chat_gen *g, const char *text, size_t len)
{
	json_t *data = json_object();
	size_t id, ev_len;
	char *ev;

	json_object_set_new(data, "text", json_stringn(text, len));
	pthread_mutex_lock(&g->lock);
	id = g->n_ev + 1;
	pthread_mutex_unlock(&g->lock);
	ev = render_event(id, "delta", data, &ev_len);
	pthread_mutex_lock(&g->lock);
	if (g->ended) {   /* a delta after the end (never expected): its events are packed */
		pthread_mutex_unlock(&g->lock);
		free(ev);
		json_decref(data);
		return;
	}
	if (id != g->n_ev + 1) {
		free(ev);
		ev = render_event(g->n_ev + 1, "delta", data, &ev_len);
	}
	buf_add(&g->text, text, len);
	push_event_locked(g, ev, ev_len);
	wake(g, 0);
	pthread_mutex_unlock(&g->lock);
	json_decref(data);
}

size_t gen_text_len(struct chat_gen *g)
{
	size_t n;

	pthread_mutex_lock(&g->lock);
	n = g->text.len;
	pthread_mutex_unlock(&g->lock);
	return n;
}

char *gen_text(struct chat_gen *g)
{
	char *s;

	pthread_mutex_lock(&g->lock);
	s = xstrndup(g->text.ptr, g->text.len);
	pthread_mutex_unlock(&g->lock);
	return s;
}

/* ---- events for other servers (relay.c) ---- */

static void pack_locked(struct chat_gen *g);

int gen_take_unpublished(struct chat_gen *g, struct gen_batch *out)
{
	struct buf ev = BUF_INIT(0);

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&g->lock);
	out->ended = g->ended;
	if (g->published < g->n_ev) {
		for (size_t i = g->published; i < g->n_ev; i++)
			buf_add(&ev, g->ev[i].text, g->ev[i].len);
		out->b.generation_id = xstrdup(g->id);
		out->b.first_seq = (int64_t)g->published + 1;
		out->b.last_seq = (int64_t)g->n_ev;
		out->b.events = xstrndup(ev.ptr, ev.len);
		out->b.text = xstrndup(g->text.ptr ? g->text.ptr + g->published_text : "",
				       g->text.len - g->published_text);
		out->text_end = g->text.len;
	}
	pthread_mutex_unlock(&g->lock);
	buf_release(&ev);
	return out->b.events != NULL;
}

void gen_mark_published(struct chat_gen *g, const struct gen_batch *b)
{
	pthread_mutex_lock(&g->lock);
	if ((size_t)b->b.last_seq > g->published) {
		g->published = (size_t)b->b.last_seq;
		g->published_text = b->text_end;
	}
	pthread_mutex_unlock(&g->lock);
}

struct chat_gen *gen_new_remote(struct runtime *rt, const char *id, const char *session_id)
{
	struct chat_gens *gs = rt->gens;
	struct chat_gen *g = gen_alloc(rt, id, session_id), *had;
	int64_t now = sys_monotonic_us();

	g->remote = 1;
	pthread_mutex_lock(&gs->lock);
	if (now - gs->pruned_us >= GEN_PRUNE_EVERY_US) {
		prune(gs);          /* a server that only follows prunes here */
		gs->pruned_us = now;
	}
	for (had = gs->list; had && (!had->remote || strcmp(had->id, id)); had = had->next)
		;
	if (had) {                  /* another reader made it first: share it */
		gen_ref(had);
		pthread_mutex_unlock(&gs->lock);
		chat_gen_unref(g);
		return had;
	}
	gen_ref(g);                 /* the list's */
	g->next = gs->list;
	gs->list = g;
	pthread_mutex_unlock(&gs->lock);
	return g;
}

struct chat_gen *gen_find_remote(struct runtime *rt, const char *id)
{
	return find_listed(rt, id, 1);
}

/* The event type in rendered text ("id: N\nevent: T\n..."): 1 when T ends a reply. */
static int final_type(const char *text, size_t len)
{
	const char *t = memmem(text, len, "\nevent: ", 8);

	if (!t)
		return 0;
	t += 8;
	return !strncmp(t, "done\n", 5) || !strncmp(t, "error\n", 6);
}

/* Ends a followed generation under its lock (its last event is the final one). */
static void end_remote_locked(struct chat_gen *g)
{
	g->final_ev = g->n_ev;
	pack_locked(g);
	g->ended = 1;
	g->ended_us = sys_monotonic_us();
	wake(g, 1);
	pthread_cond_broadcast(&g->cond);
}

int gen_feed(struct chat_gen *g, const struct gen_events *b)
{
	const char *p = b->events, *end = p + strlen(p), *stop;
	int64_t seq = b->first_seq;
	int fed = 0;

	pthread_mutex_lock(&g->lock);
	/* events are "...\n\n" each, and their JSON (compact) holds no newline */
	for (; !g->ended && p < end && (stop = strstr(p, "\n\n")); seq++, p = stop + 2) {
		size_t len = (size_t)(stop + 2 - p);

		if (seq != (int64_t)g->n_ev + 1)
			continue;           /* had it already */
		push_event_locked(g, xstrndup(p, len), len);
		fed = 1;
		if (final_type(p, len))
			end_remote_locked(g);
	}
	if (fed && !g->ended)
		wake(g, 0);
	pthread_mutex_unlock(&g->lock);
	return fed;
}

static void claim_locked(struct chat_gen *g, int64_t had)
{
	if (had > 0 && (uint64_t)had > g->claimed)
		g->claimed = (size_t)had;
}

void gen_claim(struct chat_gen *g, int64_t had)
{
	pthread_mutex_lock(&g->lock);
	claim_locked(g, had);
	pthread_mutex_unlock(&g->lock);
}

/*
 * A followed reply ended by the store's word (its server died, or stopped
 * before writing its last events): readers may have had events from that
 * server that never reached the store.  The end is numbered after the last
 * one a reader said it had, with empty places for the lost ones, so that a
 * client resuming there gets it (at most GEN_LOST_MAX places: an id beyond
 * is not believed, and chat_gen_read gives such a reader the end as it is).
 */
static void make_room_for_lost_locked(struct chat_gen *g)
{
	if (g->claimed <= g->n_ev || g->claimed - g->n_ev > GEN_LOST_MAX)
		return;
	while (g->n_ev < g->claimed)
		push_event_locked(g, xstrdup(""), 0);
}

void gen_end_remote(struct chat_gen *g, const char *type, json_t *data)
{
	pthread_mutex_lock(&g->lock);
	if (!g->ended) {
		make_room_for_lost_locked(g);
		add_event_locked(g, type, data);
		end_remote_locked(g);
	} else {
		json_decref(data);
	}
	pthread_mutex_unlock(&g->lock);
}

int64_t gen_events_had(struct chat_gen *g, int *ended)
{
	int64_t n;

	pthread_mutex_lock(&g->lock);
	n = (int64_t)g->n_ev;
	if (ended)
		*ended = g->ended;
	pthread_mutex_unlock(&g->lock);
	return n;
}

/*
 * An ended generation is kept GEN_KEEP_S for readers that come back, and a
 * burst leaves hundreds of them: their events (a delta each, allocated one
 * by one on the provider's loop thread among its passing buffers) go into
 * one block, so each keeps one allocation rather than scattering dozens
 * across the heap, where they kept the process growing round after round
 * (docs/http.md, "Memory under a burst").
 * Readers copy under the lock, so the texts may move under it.
 */
static void pack_locked(struct chat_gen *g)
{
	size_t total = 0, off = 0;

	for (size_t i = 0; i < g->n_ev; i++)
		total += g->ev[i].len;
	g->packed = xmalloc(total ? total : 1);
	for (size_t i = 0; i < g->n_ev; i++) {
		memcpy(g->packed + off, g->ev[i].text, g->ev[i].len);
		free(g->ev[i].text);
		g->ev[i].text = g->packed + off;
		off += g->ev[i].len;
	}
	g->ev = xrealloc(g->ev, (g->n_ev ? g->n_ev : 1) * sizeof(*g->ev));
	g->cap = g->n_ev;
}

void gen_end(struct chat_gen *g, const char *type, json_t *data, enum smr_rc rc,
	     const struct smr_err *err)
{
	struct send *s;
	struct provider_stream *ps;

	pthread_mutex_lock(&g->lock);
	add_event_locked(g, type, data);
	g->final_ev = g->n_ev;
	pack_locked(g);
	g->rc = rc;
	if (err)
		g->err = *err;
	g->ended = 1;
	g->ended_us = sys_monotonic_us();
	if (g->counted) {
		g->counted = 0;
		atomic_fetch_sub(&g->rt->gens->live, 1);
	}
	s = g->s;
	ps = g->ps;
	g->s = NULL;
	g->ps = NULL;
	wake(g, 1);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	provider_stream_release(ps);
	if (s)
		send_free(s);
}

static void link_watch(struct chat_gen *g, struct chat_gen_watch *w)
{
	for (struct chat_gen_watch *x = g->watches; x; x = x->next)
		if (x == w)
			return;
	w->next = g->watches;
	g->watches = w;
}

long chat_gen_read(struct chat_gen *g, struct chat_gen_cursor *c, char *buf, size_t max,
		   struct chat_gen_watch *w)
{
	size_t n = 0, take;
	struct gen_ev *e;

	pthread_mutex_lock(&g->lock);
	claim_locked(g, c->next - 1);
	/*
	 * A reader past the end (it had events this server never had: a
	 * rebuilt end, or one lost with a dead server beyond GEN_LOST_MAX)
	 * gets the end, once: after it, it is just past it.
	 */
	if (g->ended && c->next > (int64_t)g->n_ev + 1 && !c->off)
		c->next = (int64_t)g->n_ev;
	if (c->next < 1)
		c->next = 1;
	if (w && w->keepalive != g->keepalive && c->next > (int64_t)g->n_ev && !c->off &&
	    max >= sizeof(KEEPALIVE_TEXT) - 1) {
		/* nothing new since the last tick: a comment keeps proxies from closing */
		w->keepalive = g->keepalive;
		memcpy(buf, KEEPALIVE_TEXT, sizeof(KEEPALIVE_TEXT) - 1);
		pthread_mutex_unlock(&g->lock);
		return (long)(sizeof(KEEPALIVE_TEXT) - 1);
	}
	while (n < max && c->next <= (int64_t)g->n_ev) {
		e = &g->ev[c->next - 1];
		take = e->len - c->off < max - n ? e->len - c->off : max - n;
		memcpy(buf + n, e->text + c->off, take);
		n += take;
		c->off += take;
		if (c->off == e->len) {
			c->next++;
			c->off = 0;
		}
	}
	if (!n && g->ended) {
		pthread_mutex_unlock(&g->lock);
		return -1;
	}
	if (w)
		w->keepalive = g->keepalive;
	if (!n && w) {
		link_watch(g, w);
		w->end_only = 0;
		w->armed = 1;
		w->suspend(w->ud);
	}
	pthread_mutex_unlock(&g->lock);
	return (long)n;
}

void chat_gen_watch_end(struct chat_gen *g, struct chat_gen_watch *w)
{
	pthread_mutex_lock(&g->lock);
	w->end_only = 1;
	if (g->ended) {
		w->resume(w->ud);
	} else {
		w->armed = 1;
		link_watch(g, w);
	}
	pthread_mutex_unlock(&g->lock);
}

void chat_gen_unwatch(struct chat_gen *g, struct chat_gen_watch *w)
{
	pthread_mutex_lock(&g->lock);
	for (struct chat_gen_watch **pp = &g->watches; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	w->armed = 0;
	w->next = NULL;
	pthread_mutex_unlock(&g->lock);
}

void chat_gen_poke(struct chat_gen *g, struct chat_gen_watch *w)
{
	pthread_mutex_lock(&g->lock);
	if (w->armed && !w->end_only) {
		w->armed = 0;
		w->resume(w->ud);
	}
	pthread_mutex_unlock(&g->lock);
}

size_t chat_gen_event_left(struct chat_gen *g, const struct chat_gen_cursor *c)
{
	size_t left = 0;

	pthread_mutex_lock(&g->lock);
	if (c->off && c->next >= 1 && c->next <= (int64_t)g->n_ev)
		left = g->ev[c->next - 1].len - c->off;
	pthread_mutex_unlock(&g->lock);
	return left;
}

enum smr_rc chat_gen_result(struct chat_gen *g, json_t **doc, struct smr_err *err)
{
	enum smr_rc rc;

	pthread_mutex_lock(&g->lock);
	if (!g->ended)
		BUG("chat_gen_result before the generation ended");
	rc = g->rc;
	*doc = NULL;
	if (g->final_ev) {
		/* the final event's data: the document gen_end was given, as rendered */
		const struct gen_ev *e = &g->ev[g->final_ev - 1];
		const char *at = memmem(e->text, e->len, "\ndata: ", 7);

		if (at)
			*doc = json_loadb(at + 7, e->len - (size_t)(at + 7 - e->text), 0, NULL);
	}
	if (rc && err)
		*err = g->err;
	pthread_mutex_unlock(&g->lock);
	if (rc && *doc) {
		/* details beside an error: "error" is the message, as before streaming */
		json_t *copy = json_copy(*doc);

		json_decref(*doc);
		json_object_set_new(copy, "error", json_string(err ? err->msg : ""));
		*doc = copy;
	}
	return rc;
}

/* ---- the end of the provider call, and the finisher ---- */

void gen_attach(struct chat_gen *g, struct send *s, struct provider_stream *ps)
{
	pthread_mutex_lock(&g->lock);
	g->s = s;
	g->ps = ps;
	pthread_mutex_unlock(&g->lock);
}

void gen_set_stream(struct chat_gen *g, struct provider_stream *ps)
{
	int release;

	pthread_mutex_lock(&g->lock);
	release = g->ended;
	if (!release)
		g->ps = ps;
	if (!release && g->stop_requested)
		provider_stream_cancel(ps);    /* under the lock: gen_end releases ps under it */
	pthread_mutex_unlock(&g->lock);
	if (release)
		provider_stream_release(ps);
}

struct send *gen_send(struct chat_gen *g)
{
	return g->s;
}

int gen_shutting_down(struct chat_gen *g)
{
	int v;

	pthread_mutex_lock(&g->lock);
	v = g->shutdown;
	pthread_mutex_unlock(&g->lock);
	return v;
}

/*
 * The finisher with nothing to do (under fin_lock): once replies ended
 * since the last trim and none has run for GEN_TRIM_IDLE_MS, the heap's
 * free pages go back to the system.  0 when there is nothing to wait for
 * with a deadline (wait for work as usual), 1 when it waited or trimmed.
 */
static int idle_trim(struct chat_gens *gs)
{
	struct timespec until;

	if (!gs->trim_due)
		return 0;
	if (atomic_load(&gs->live)) {
		sys_deadline(&until, GEN_TRIM_IDLE_MS);
		pthread_cond_timedwait(&gs->fin_cond, &gs->fin_lock, &until);
		return 1;
	}
	sys_deadline(&until, GEN_TRIM_IDLE_MS);
	if (pthread_cond_timedwait(&gs->fin_cond, &gs->fin_lock, &until) != ETIMEDOUT ||
	    gs->fin_head || gs->fin_stop || atomic_load(&gs->live))
		return 1;
	gs->trim_due = 0;
	pthread_mutex_unlock(&gs->fin_lock);
	malloc_trim(0);
	pthread_mutex_lock(&gs->fin_lock);
	return 1;
}

static void settle_free(struct gen_settle *u)
{
	generation_release(&u->row);
	free(u);
}

void gen_settle_later(struct runtime *rt, const struct generation *row, int64_t user_id)
{
	struct chat_gens *gs = rt ? rt->gens : NULL;
	struct gen_settle *u;

	if (!gs || !row->id)
		return;
	u = xcalloc(1, sizeof(*u));
	u->row = (struct generation){
		.id = xstrdup(row->id), .session_id = xstrdup(row->session_id),
		.status = xstrdup(row->status), .provider = xstrdup(row->provider),
		.model = xstrdup(row->model), .user_seq = row->user_seq,
		.assistant_seq = row->assistant_seq, .error = xstrdup(row->error),
		.created_at = xstrdup(row->created_at), .finished_at = xstrdup(row->finished_at),
	};
	u->user_id = user_id;
	pthread_mutex_lock(&gs->fin_lock);
	if (gs->running && !gs->fin_stop) {
		u->next = gs->unsettled;
		gs->unsettled = u;
		u = NULL;
		/* at once: a cut connection is replaced, and the database may be right there */
		pthread_cond_signal(&gs->fin_cond);
	}
	pthread_mutex_unlock(&gs->fin_lock);
	if (u)
		settle_free(u);          /* no finisher: the next start interrupts the row */
}

/* Writes one end; 1 while the database is unreachable (try again), 0 when done with it. */
static int settle_one(struct ops_ctx *ctx, struct gen_settle *u)
{
	enum smr_rc rc = SMR_OK;

	if (u->user_id > 0)
		rc = store_turn_set_error(ctx->st, u->user_id, u->row.error, NULL);
	if (!rc)
		rc = store_generation_end(ctx->st, &u->row, NULL, NULL);
	return rc == SMR_EUNAVAIL;
}

/* Tries the ends waiting for the store; after one fails the rest wait for the next round. */
static void settle_pending(struct chat_gens *gs)
{
	struct gen_settle *list, *u, *keep = NULL, *last = NULL;
	int down = 0;

	pthread_mutex_lock(&gs->fin_lock);
	list = gs->unsettled;
	gs->unsettled = NULL;
	pthread_mutex_unlock(&gs->fin_lock);
	while ((u = list)) {
		list = u->next;
		if (!down && !(down = settle_one(gs->ctx, u))) {
			settle_free(u);
			continue;
		}
		u->next = keep;
		keep = u;
		last = last ? last : u;
	}
	if (!keep)
		return;
	pthread_mutex_lock(&gs->fin_lock);
	last->next = gs->unsettled;
	gs->unsettled = keep;
	pthread_mutex_unlock(&gs->fin_lock);
}

/* Under fin_lock: waits for work; while ends wait for the store, no longer than a retry. */
static void finisher_wait(struct chat_gens *gs)
{
	struct timespec until;

	if (gs->fin_head || gs->fin_stop)
		return;
	if (gs->unsettled) {
		sys_deadline(&until, GEN_SETTLE_RETRY_MS);
		pthread_cond_timedwait(&gs->fin_cond, &gs->fin_lock, &until);
	} else if (!idle_trim(gs)) {
		pthread_cond_wait(&gs->fin_cond, &gs->fin_lock);
	}
}

/*
 * The finisher's thread: rounds of up to FINISH_BATCH, and the ends still
 * waiting for the store; at stop, what is queued is still stored (and the
 * waiting ends tried once more).
 */
static void *finisher_main(void *arg)
{
	struct chat_gens *gs = arg;
	struct chat_gen *batch[FINISH_BATCH];
	size_t n;
	int stopping;

	sys_thread_name("smr-finisher");
	for (;;) {
		pthread_mutex_lock(&gs->fin_lock);
		finisher_wait(gs);
		for (n = 0; gs->fin_head && n < FINISH_BATCH; n++) {
			batch[n] = gs->fin_head;
			gs->fin_head = batch[n]->fin_next;
		}
		if (!gs->fin_head)
			gs->fin_tail = &gs->fin_head;
		stopping = gs->fin_stop && !n;
		pthread_mutex_unlock(&gs->fin_lock);
		settle_pending(gs);
		if (stopping)
			break;                  /* nothing is left */
		if (!n)
			continue;
		send_finish_batch(gs->ctx, batch, n);
		for (size_t i = 0; i < n; i++)
			chat_gen_unref(batch[i]);
		pthread_mutex_lock(&gs->fin_lock);
		gs->trim_due = 1;
		pthread_mutex_unlock(&gs->fin_lock);
	}
	return NULL;
}

void gen_call_ended(struct chat_gen *g)
{
	struct chat_gens *gs = g->rt->gens;
	int queued = 0;

	pthread_mutex_lock(&gs->fin_lock);
	if (gs->running && !gs->fin_stop) {
		gen_ref(g);
		g->fin_next = NULL;
		*gs->fin_tail = g;
		gs->fin_tail = &g->fin_next;
		pthread_cond_signal(&gs->fin_cond);
		queued = 1;
	}
	pthread_mutex_unlock(&gs->fin_lock);
	if (queued)
		return;
	pthread_mutex_lock(&g->lock);
	g->call_ended = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void gen_wait(struct chat_gen *g, struct ops_ctx *ctx)
{
	int finish;

	pthread_mutex_lock(&g->lock);
	while (!g->ended && !g->call_ended)
		pthread_cond_wait(&g->cond, &g->lock);
	finish = !g->ended;
	pthread_mutex_unlock(&g->lock);
	if (finish)
		send_finish(ctx, g);
}

/*
 * Cancels under g's lock: g holds the stream handle until gen_end, which
 * releases it under the same lock.  (provider_stream_cancel takes only the
 * loop's queue lock, and the loop never holds that while calling back.)
 */
static void stop_gen(struct chat_gen *g, int shutdown)
{
	pthread_mutex_lock(&g->lock);
	if (!g->ended) {
		g->shutdown |= shutdown;
		if (!g->stop_requested && g->ps)
			provider_stream_cancel(g->ps);
		g->stop_requested = 1;
	}
	pthread_mutex_unlock(&g->lock);
}

void gen_stop_local(struct runtime *rt, const char *id)
{
	struct chat_gen *g = find_live(rt, id);

	if (g) {
		stop_gen(g, 0);
		chat_gen_unref(g);
	}
}

/* ---- keep-alives ---- */

static void *ticker_main(void *arg)
{
	struct chat_gens *gs = arg;
	struct timespec until;

	sys_thread_name("smr-keepalive");
	sys_thread_lower_priority();
	pthread_mutex_lock(&gs->lock);
	while (!gs->stop_ticking) {
		sys_deadline(&until, gs->keepalive_ms);
		while (!gs->stop_ticking &&
		       pthread_cond_timedwait(&gs->tick, &gs->lock, &until) == 0)
			;
		if (gs->stop_ticking)
			break;
		for (struct chat_gen *g = gs->list; g; g = g->next) {
			pthread_mutex_lock(&g->lock);
			if (!g->ended) {
				g->keepalive++;
				wake(g, 0);
			}
			pthread_mutex_unlock(&g->lock);
		}
	}
	pthread_mutex_unlock(&gs->lock);
	return NULL;
}

/* ---- server life ---- */

enum smr_rc chat_generations_start(struct runtime *rt, const char *dsn, struct smr_err *err)
{
	struct chat_gens *gs = rt->gens;
	/* no sweep: what a server that died left running is taken over when its lease lapses */
	enum smr_rc rc = ops_open(&gs->ctx, dsn, &(struct ops_opts){ .rt = rt }, err);

	if (rc)
		return rc;
	if (store_is_shared(gs->ctx->st))
		rc = relay_start(rt, dsn, &gs->relay, err);
	else
		rc = relay_start_keeping(rt, dsn, &gs->keep, err);
	if (rc) {
		ops_close(gs->ctx);
		gs->ctx = NULL;
		return rc;
	}
	if (sys_thread_start(&gs->finisher, finisher_main, gs)) {
		relay_stop(gs->relay);
		gs->relay = NULL;
		relay_stop(gs->keep);
		gs->keep = NULL;
		ops_close(gs->ctx);
		gs->ctx = NULL;
		return smr_errf(err, SMR_EINTERNAL, "cannot start the chat finisher thread");
	}
	pthread_mutex_lock(&gs->fin_lock);
	gs->running = 1;
	pthread_mutex_unlock(&gs->fin_lock);
	pthread_cond_init(&gs->tick, NULL);
	gs->keepalive_ms = sys_env_long("SMRITI_SSE_KEEPALIVE_MS", GEN_KEEPALIVE_MS, 100, 3600000);
	gs->ticking = !sys_thread_start(&gs->ticker, ticker_main, gs);
	return SMR_OK;
}

/* Waits until every one of all[0..n) ended, or seconds passed. */
static void wait_ended(struct chat_gen **all, size_t n, int seconds)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds;
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_lock(&all[i]->lock);
		while (!all[i]->ended &&
		       pthread_cond_timedwait(&all[i]->cond, &all[i]->lock, &until) == 0)
			;
		pthread_mutex_unlock(&all[i]->lock);
	}
}

void chat_generations_shutdown(struct runtime *rt)
{
	struct chat_gens *gs = rt ? rt->gens : NULL;
	struct chat_gen **all = NULL, *g;
	size_t n = 0, i;

	if (!gs)
		return;
	pthread_mutex_lock(&gs->lock);
	for (g = gs->list; g; g = g->next)
		n++;
	all = xcalloc(n ? n : 1, sizeof(*all));
	for (g = gs->list, i = 0; g; g = g->next, i++) {
		gen_ref(g);
		all[i] = g;
	}
	pthread_mutex_unlock(&gs->lock);
	wait_ended(all, n, GEN_DRAIN_S);
	for (i = 0; i < n; i++)
		stop_gen(all[i], 1);
	wait_ended(all, n, GEN_STOP_WAIT_S);
	for (i = 0; i < n; i++)
		chat_gen_unref(all[i]);
	free(all);
}

void chat_generations_stop(struct runtime *rt)
{
	struct chat_gens *gs = rt ? rt->gens : NULL;

	if (!gs || !gs->running)
		return;
	if (gs->ticking) {
		pthread_mutex_lock(&gs->lock);
		gs->stop_ticking = 1;
		pthread_cond_signal(&gs->tick);
		pthread_mutex_unlock(&gs->lock);
		pthread_join(gs->ticker, NULL);
		gs->ticking = 0;
	}
	pthread_cond_destroy(&gs->tick);
	pthread_mutex_lock(&gs->fin_lock);
	gs->fin_stop = 1;
	pthread_cond_signal(&gs->fin_cond);
	pthread_mutex_unlock(&gs->fin_lock);
	pthread_join(gs->finisher, NULL);
	relay_stop(gs->relay);          /* after the finisher: the final events are written too */
	gs->relay = NULL;
	relay_stop(gs->keep);
	gs->keep = NULL;
	ops_close(gs->ctx);
	pthread_mutex_lock(&gs->fin_lock);
	gs->running = 0;
	/* still unreachable: another server takes them over once this one's lease lapsed */
	while (gs->unsettled) {
		struct gen_settle *u = gs->unsettled;

		gs->unsettled = u->next;
		settle_free(u);
	}
	pthread_mutex_unlock(&gs->fin_lock);
}

/* ---- the generation routes' operations ---- */

enum smr_rc chat_generation_resolve(struct ops_ctx *ctx, const char *id,
				    struct generation *row, struct space *sp,
				    struct smr_err *err)
{
	struct session sn = { 0 };
	enum smr_rc rc = store_generation_get(ctx->st, id, row, err);

	if (!rc)
		rc = store_session_get(ctx->st, row->session_id, &sn, err);
	if (!rc)
		rc = store_space_get(ctx->st, sn.repo_id, sp, err);
	session_release(&sn);
	if (rc)
		generation_release(row);
	return rc;
}

/* The turn of session with sequence number seq as JSON, or JSON null. */
static json_t *stored_turn(struct ops_ctx *ctx, const char *session_id, int64_t seq)
{
	struct turn *t = NULL;
	size_t n = 0;
	json_t *out = json_null();

	if (seq > 0 && !store_turn_list(ctx->st, session_id, seq - 1, &t, &n, NULL) && n) {
		json_decref(out);
		out = ops_turn_json(&t[0]);
	}
	turns_free(t, n);
	return out;
}

/* The final event of row, which ended, as the store has it: *type "done" or "error". */
static json_t *stored_end(struct ops_ctx *ctx, const struct generation *row, const char **type)
{
	json_t *doc = json_pack("{s:o, s:o, s:o}", "generation", ops_generation_json(row),
				"user_turn", stored_turn(ctx, row->session_id, row->user_seq),
				"assistant_turn",
				stored_turn(ctx, row->session_id, row->assistant_seq));
	int failed = !strcmp(row->status, TURN_ERROR) || !strcmp(row->status, TURN_INTERRUPTED);

	if (failed)
		json_object_set_new(doc, "error", json_pack("{s:s, s:s}", "code",
			!strcmp(row->status, TURN_ERROR) ? "provider_error" : "interrupted",
			"message", row->error ? row->error : "the reply failed"));
	*type = failed ? "error" : "done";
	return doc;
}

void gen_end_stored(struct ops_ctx *ctx, struct chat_gen *g, const struct generation *row)
{
	const char *type;
	json_t *doc = stored_end(ctx, row, &type);

	gen_end_remote(g, type, doc);
}

/*
 * A generation holding only the final event of one that ended, read from
 * the store, numbered after had (the reader's last event) as
 * gen_end_remote numbers an end it makes.
 */
static struct chat_gen *rebuild(struct ops_ctx *ctx, const struct generation *row, int64_t had)
{
	struct chat_gen *g = gen_alloc(ctx->rt, row->id, row->session_id);
	const char *type;
	json_t *doc;

	g->rebuilt = 1;
	g->ended = 1;
	if (!strcmp(row->status, "running")) {
		/* running in another process: what is stored so far */
		add_event_locked(g, "generation", json_pack("{s:o, s:o}", "generation",
			ops_generation_json(row), "user_turn",
			stored_turn(ctx, row->session_id, row->user_seq)));
		return g;
	}
	doc = stored_end(ctx, row, &type);
	claim_locked(g, had);            /* g is not shared yet */
	make_room_for_lost_locked(g);
	add_event_locked(g, type, doc);
	return g;
}

enum smr_rc chat_generation_open(struct ops_ctx *ctx, const char *id, int64_t had,
				 struct chat_gen **out, struct smr_err *err)
{
	struct generation row = { 0 };
	struct space sp = { 0 };
	json_t *p = json_pack("{s:s}", "generation_id", id);
	/* following a reply's events is generation.get's: the same access check */
	enum smr_rc rc = api_check_access(ctx, api_find("generation.get"), p, err);

	json_decref(p);
	if (!rc)
		rc = chat_generation_resolve(ctx, id, &row, &sp, err);
	if (!rc) {
		*out = find_live(ctx->rt, id);
		if (!*out && ctx->rt && ctx->rt->gens->relay)
			*out = relay_follow(ctx->rt->gens->relay, ctx, &row, had);
		if (!*out)
			*out = rebuild(ctx, &row, had);
	}
	generation_release(&row);
	space_release(&sp);
	return rc;
}

enum smr_rc chat_generation_stop(struct ops_ctx *ctx, const char *id, json_t **result,
				 struct smr_err *err)
{
	struct generation row = { 0 };
	struct space sp = { 0 };
	struct chat_gen *g = NULL;
	int stopping = 0;
	enum smr_rc rc = chat_generation_resolve(ctx, id, &row, &sp, err);

	if (!rc)
		g = find_live(ctx->rt, id);
	if (g) {
		pthread_mutex_lock(&g->lock);
		stopping = !g->ended;
		pthread_mutex_unlock(&g->lock);
		stop_gen(g, 0);
		chat_gen_unref(g);
	} else if (!rc && !strcmp(row.status, "running") && ctx->rt && ctx->rt->gens->relay) {
		/* its provider call is another server's: that one reads the request and stops */
		rc = store_generation_request_stop(ctx->st, id, &stopping, err);
	} else if (!rc && !strcmp(row.status, "running")) {
		rc = smr_errf(err, SMR_ECONFLICT, "generation '%s' runs in another server process;"
			      " stop it there", id);
	}
	if (!rc)
		*result = json_pack("{s:o, s:b}", "generation", ops_generation_json(&row),
				    "stopping", stopping);
	generation_release(&row);
	space_release(&sp);
	return rc;
}

enum smr_rc chat_generation_get(struct ops_ctx *ctx, const char *id, json_t **result,
				struct smr_err *err)
{
	struct generation row = { 0 };
	struct space sp = { 0 };
	struct chat_gen *g;
	char *text;
	enum smr_rc rc = chat_generation_resolve(ctx, id, &row, &sp, err);

	if (rc)
		return rc;
	*result = ops_generation_json(&row);
	json_object_set_new(*result, "space", json_string(sp.name));
	/*
	 * The text so far only while the stored row runs, from whichever server:
	 * the one that ran a reply keeps it in memory for a while after its end,
	 * and behind a balancer the same request must not answer differently
	 * there.  An ended reply's text is its assistant turn.
	 */
	g = strcmp(row.status, "running") ? NULL : find_live(ctx->rt, id);
	if (g) {
		text = gen_text(g);
		json_object_set_new(*result, "text", json_string(text));
		free(text);
		chat_gen_unref(g);
	} else if (!strcmp(row.status, "running") && ctx->rt && ctx->rt->gens->relay &&
		   !store_generation_text(ctx->st, id, &text, NULL)) {
		/* running on another server: what it wrote, at most a second old */
		json_object_set_new(*result, "text", json_string(text));
		free(text);
	}
	generation_release(&row);
	space_release(&sp);
	return SMR_OK;
}
