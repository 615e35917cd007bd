/*
 * test_workq.c -- the work queue under the HTTP worker pool and the draft
 * runner: every item is run or cancelled exactly once, in a worker, and a
 * stopping queue takes no more.
 */
#include "harness.h"
#include "util/workq.h"

#include <stddef.h>
#include <unistd.h>

struct job {
	struct workq_item qi;
	int ran, cancelled;
	void *worker;
};

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, running;

static struct job *job_of(struct workq_item *it)
{
	return (struct job *)((char *)it - offsetof(struct job, qi));
}

/* Holds its worker until the test opens the gate. */
static void run(struct workq_item *it, void *arg)
{
	pthread_mutex_lock(&gate_lock);
	running++;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	job_of(it)->ran++;
	job_of(it)->worker = arg;
}

static void cancel(struct workq_item *it, void *arg)
{
	job_of(it)->cancelled++;
	job_of(it)->worker = arg;
}

static void *stop_main(void *q)
{
	workq_stop(q);
	return NULL;
}

TEST(workq_runs_then_cancels_what_is_queued_at_stop)
{
	struct workq q = { .run = run, .cancel = cancel };
	struct job jobs[5] = { 0 }, late = { 0 };
	pthread_t stopper;
	int tag;
	void *args[1] = { &tag };

	gate_open = running = 0;
	CHECK_INT(workq_start(&q, 1, args), 0);
	for (int i = 0; i < 5; i++)
		CHECK_INT(workq_submit(&q, &jobs[i].qi), 0);
	pthread_mutex_lock(&gate_lock);
	while (!running)                   /* the one worker holds jobs[0] */
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	CHECK_INT(workq_room(&q, 4), WORKQ_FULL);
	CHECK_INT(workq_room(&q, 5), 0);
	CHECK_INT(workq_room(&q, 0), 0);
	/* stop while jobs[0] runs: it finishes, the four queued are cancelled */
	CHECK_INT(pthread_create(&stopper, NULL, stop_main, &q), 0);
	while (workq_room(&q, 0) != WORKQ_STOPPING)
		usleep(1000);
	CHECK_INT(workq_submit(&q, &late.qi), WORKQ_STOPPING);
	pthread_mutex_lock(&gate_lock);
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	pthread_join(stopper, NULL);
	CHECK_INT(workq_submit(&q, &late.qi), WORKQ_STOPPING);
	workq_free(&q);
	CHECK_INT(jobs[0].ran, 1);
	CHECK_INT(jobs[0].cancelled, 0);
	for (int i = 1; i < 5; i++) {
		CHECK_INT(jobs[i].ran, 0);
		CHECK_INT(jobs[i].cancelled, 1);
		CHECK(jobs[i].worker == &tag);
	}
	CHECK_INT(late.ran + late.cancelled, 0);
}

TEST(workq_many_workers_run_every_item_once)
{
	struct workq q = { .run = run, .cancel = cancel };
	struct job jobs[64] = { 0 };
	int sum = 0;

	gate_open = 1;
	CHECK_INT(workq_start(&q, 4, NULL), 0);
	for (int i = 0; i < 64; i++)
		CHECK_INT(workq_submit(&q, &jobs[i].qi), 0);
	while (workq_room(&q, 1))          /* until a worker took the last one */
		usleep(1000);
	workq_stop(&q);
	workq_free(&q);
	for (int i = 0; i < 64; i++)
		sum += jobs[i].ran + jobs[i].cancelled;
	CHECK_INT(sum, 64);
}
