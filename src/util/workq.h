/*
 * workq.h -- a fixed set of worker threads taking items off one FIFO queue.
 *
 * The HTTP server's worker pool (http/pool.c) and the draft runner
 * (ops/full/draft.c) both run on it; what an item means stays with them.
 * An item is the caller's own struct with a struct workq_item inside it, so
 * the queue allocates nothing per item.  Worker i gets args[i] with every
 * item it runs (a store handle of its own, say).  Workers take no signals.
 *
 *   submit --> queued --a worker--> run(item, arg)
 *                 \
 *                  +--workq_stop--> cancel(item, arg), in a worker
 *
 * The caller owns the struct workq and its items; run() and cancel() each
 * get an item exactly once and may free it.
 */
#ifndef SMRITI_WORKQ_H
#define SMRITI_WORKQ_H

#include <pthread.h>
#include <stddef.h>

struct workq_item {
	struct workq_item *next;
};

struct workq {
	void (*run)(struct workq_item *it, void *arg);     /* does the work */
	void (*cancel)(struct workq_item *it, void *arg);  /* answers work that will not run */
	const char *name;                                   /* the workers' thread name, or NULL */
	/* the rest is the queue's own */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct workq_item *head, *tail;
	size_t queued;
	int stopping;
	pthread_t *threads;
	unsigned n;
};

#define WORKQ_STOPPING 1
#define WORKQ_FULL 2

/*
 * Starts n workers; worker i gets args[i] (args may be NULL).  Set run and
 * cancel first.  0 on success; on failure the workers that did start run
 * until workq_stop().
 */
int workq_start(struct workq *q, unsigned n, void *const *args);

/* 0 when q takes items and holds fewer than max queued (0: no cap); else WORKQ_*. */
int workq_room(struct workq *q, size_t max);

/* Queues it; WORKQ_STOPPING (it is not queued: the caller answers it) once stopping. */
int workq_submit(struct workq *q, struct workq_item *it);

/*
 * Stops taking items: the workers cancel what is still queued, finish what
 * they run, and exit; waits for them.  Submits after it are refused.
 */
void workq_stop(struct workq *q);

/* Frees what workq_start made, once nothing can submit any more. */
void workq_free(struct workq *q);

#endif
