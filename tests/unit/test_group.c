/*
 * test_group.c -- the SQLite commit group (store/group.c): a background
 * thread's write (a chat send's user turn) never leads a transaction while a
 * foreground write (an agent's commit) waits, and the foreground writer's
 * transaction carries its own write alone; the background one follows in a
 * transaction of its own, and both are committed, every transaction on the
 * handle the group keeps.  What makes a write background is the context it
 * goes through (ops_opts.background), not the thread it runs on.
 */
#include "harness.h"
#include "temp_store.h"
#include "store/group.h"
#include "util/buf.h"
#include "util/metrics.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

struct writer {
	struct store *st;          /* its own handle on the shared file */
	int background;
	struct store *ran_on;      /* the handle its rows ran on: the group's */
	int order;                 /* when its rows ran: 1, 2, 3 */
	enum smr_rc rc;
};

static atomic_int rows_run;

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int holding, released;

/* The first leader's rows: they hold the transaction open until released. */
static enum smr_rc hold_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct writer *w = arg;

	(void)err;
	w->ran_on = st;
	w->order = atomic_fetch_add(&rows_run, 1) + 1;
	pthread_mutex_lock(&hold_lock);
	holding = 1;
	pthread_cond_broadcast(&hold_cond);
	while (!released)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	return SMR_OK;
}

static enum smr_rc note_rows(struct store *st, void *arg, struct smr_err *err)
{
	struct writer *w = arg;

	(void)err;
	w->ran_on = st;
	w->order = atomic_fetch_add(&rows_run, 1) + 1;
	return SMR_OK;
}

static void *write_main(void *arg)
{
	struct writer *w = arg;

	w->rc = group_write(w->st->group, w->st, w->background, w->ran_on ? hold_rows : note_rows,
			    w, NULL);
	return NULL;
}

TEST(group_background_write_waits_for_a_foreground_leader)
{
	char path[TEMP_STORE_PATH_MAX];
	struct ops_ctx *ctx = NULL;
	struct store *first, *bg_st = NULL, *fg_st = NULL;
	struct writer lead = { 0 }, bg = { 0 }, fg = { 0 };
	pthread_t t_lead, t_bg, t_fg;

	temp_store_open(path, &first, &ctx);
	CHECK_INT(store_open(path, &bg_st, NULL), SMR_OK);
	CHECK_INT(store_open(path, &fg_st, NULL), SMR_OK);
	CHECK(first->group && first->group == bg_st->group && bg_st->group == fg_st->group);
	lead = (struct writer){ .st = first, .ran_on = first };     /* ran_on set: hold_rows */
	bg = (struct writer){ .st = bg_st, .background = 1 };
	fg = (struct writer){ .st = fg_st };
	CHECK(!pthread_create(&t_lead, NULL, write_main, &lead));
	pthread_mutex_lock(&hold_lock);
	while (!holding)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	/* the background write queues first, then the foreground one */
	CHECK(!pthread_create(&t_bg, NULL, write_main, &bg));
	while (group_queued(first->group) < 1)
		sched_yield();
	CHECK(!pthread_create(&t_fg, NULL, write_main, &fg));
	while (group_queued(first->group) < 2)
		sched_yield();
	pthread_mutex_lock(&hold_lock);
	released = 1;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
	pthread_join(t_lead, NULL);
	pthread_join(t_bg, NULL);
	pthread_join(t_fg, NULL);
	CHECK_INT(lead.rc, SMR_OK);
	CHECK_INT(bg.rc, SMR_OK);
	CHECK_INT(fg.rc, SMR_OK);
	/* the foreground writer led the second transaction, alone; the background one came next */
	CHECK_INT(fg.order, 2);
	CHECK_INT(bg.order, 3);
	/* all three on the one handle the group keeps, none of the writers' own */
	CHECK(lead.ran_on == fg.ran_on && fg.ran_on == bg.ran_on);
	CHECK(fg.ran_on != first && fg.ran_on != bg_st && fg.ran_on != fg_st);
	store_close(bg_st);
	store_close(fg_st);
	temp_store_close(path, ctx);
}

/* The count of store writes metrics has seen from writers of kind ("foreground", "background"). */
static unsigned long long writes_of(const char *kind)
{
	struct buf out = BUF_INIT(0);
	char series[96];
	const char *p;
	unsigned long long n = ~0ULL;

	metrics_render(&out, NULL, 0);
	snprintf(series, sizeof(series), "smriti_store_write_wait_seconds_count{writer=\"%s\"} ",
		 kind);
	p = strstr(out.ptr, series);
	if (p)
		n = strtoull(p + strlen(series), NULL, 10);
	buf_release(&out);
	return n;
}

/*
 * A context opened with ops_opts.background writes as background work, on
 * whatever thread it runs; one opened without it, in the same thread, as
 * foreground work.
 */
TEST(group_background_is_the_context_s_not_the_thread_s)
{
	char path[TEMP_STORE_PATH_MAX];
	struct ops_ctx *fg = NULL, *bg = NULL;
	struct store *st;
	struct space sp = { 0 };
	unsigned long long fg0, bg0;

	temp_store_open(path, &st, &fg);
	CHECK_INT(ops_open(&bg, path, &(struct ops_opts){ .background = 1 }, NULL), SMR_OK);
	fg0 = writes_of("foreground");
	bg0 = writes_of("background");
	CHECK_INT(ops_space_create(bg, "behind", NULL, &sp, NULL), SMR_OK);
	space_release(&sp);
	CHECK_INT(writes_of("background"), bg0 + 1);
	CHECK_INT(writes_of("foreground"), fg0);
	CHECK_INT(ops_space_create(fg, "ahead", NULL, &sp, NULL), SMR_OK);
	space_release(&sp);
	CHECK_INT(writes_of("foreground"), fg0 + 1);
	CHECK_INT(writes_of("background"), bg0 + 1);
	ops_close(bg);
	temp_store_close(path, fg);
}
