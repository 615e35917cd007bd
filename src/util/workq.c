/*
 * workq.c -- worker threads over one queue under one mutex (see workq.h).
 */
#include "util/workq.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <stdlib.h>

/* Takes the next item, waiting for one; NULL once stopping with nothing queued. */
static struct workq_item *take(struct workq *q, int *stopping)
{
	struct workq_item *it;

	pthread_mutex_lock(&q->lock);
	while (!q->head && !q->stopping)
		pthread_cond_wait(&q->cond, &q->lock);
	it = q->head;
	if (it) {
		q->head = it->next;
		if (!q->head)
			q->tail = NULL;
		q->queued--;
	}
	*stopping = q->stopping;
	pthread_mutex_unlock(&q->lock);
	return it;
}

struct worker_start {
	struct workq *q;
	void *arg;
};

static void *worker_main(void *p)
{
	struct worker_start w = *(struct worker_start *)p;
	struct workq_item *it;
	int stopping;

	free(p);
	if (w.q->name)
		sys_thread_name(w.q->name);
	for (;;) {
		it = take(w.q, &stopping);
		if (!it)
			break;
		if (stopping)
			w.q->cancel(it, w.arg);
		else
			w.q->run(it, w.arg);
	}
	return NULL;
}

int workq_start(struct workq *q, unsigned n, void *const *args)
{
	struct worker_start *w;

	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->head = q->tail = NULL;
	q->queued = 0;
	q->stopping = 0;
	q->threads = xcalloc(n ? n : 1, sizeof(*q->threads));
	for (q->n = 0; q->n < n; q->n++) {
		w = xmalloc(sizeof(*w));
		w->q = q;
		w->arg = args ? args[q->n] : NULL;
		if (sys_thread_start(&q->threads[q->n], worker_main, w)) {
			free(w);
			return -1;
		}
	}
	return 0;
}

int workq_room(struct workq *q, size_t max)
{
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	if (q->stopping)
		rc = WORKQ_STOPPING;
	else if (max && q->queued >= max)
		rc = WORKQ_FULL;
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int workq_submit(struct workq *q, struct workq_item *it)
{
	int rc = 0;

	it->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		rc = WORKQ_STOPPING;
	} else {
		if (q->tail)
			q->tail->next = it;
		else
			q->head = it;
		q->tail = it;
		q->queued++;
	}
	pthread_mutex_unlock(&q->lock);
	/*
	 * After the unlock: a worker woken while the submitter still held the
	 * lock (on two cores it often runs at once) went straight back to sleep
	 * on the lock, two more context switches a request.  The condition
	 * outlives every worker, and a worker that took the item meanwhile only
	 * wakes to find the queue empty.
	 */
	if (!rc)
		pthread_cond_signal(&q->cond);
	return rc;
}

void workq_stop(struct workq *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < q->n; i++)
		pthread_join(q->threads[i], NULL);
	q->n = 0;
}

void workq_free(struct workq *q)
{
	free(q->threads);
	q->threads = NULL;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
}
