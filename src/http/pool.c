/*
 * pool.c -- the server's worker threads and every thread's store handle.
 *
 * Requests that may wait (a write queued behind SQLite's write lock, a
 * provider call of many seconds) are handed here by the event threads, so
 * that those keep answering reads.  The queue is a plain linked list under
 * one mutex; workers sleep on a condition variable.  Each thread, event or
 * worker, opens its own store handle on its first request: SQLite handles
 * (and PostgreSQL connections) must not be shared between threads.
 */
#include "http/internal.h"
#include "util/xalloc.h"

#include <stdlib.h>

static __thread struct http_ctx *tls_ctx;

struct ops_ctx *http_thread_ops(struct http_server *srv, struct smr_err *err)
{
	struct http_ctx *c;

	if (tls_ctx)
		return &tls_ctx->ops;
	c = xcalloc(1, sizeof(*c));
	if (ops_open(&c->ops, srv->cfg->dsn, err)) {
		free(c);
		return NULL;
	}
	c->ops.rt = srv->rt;
	pthread_mutex_lock(&srv->ctx_lock);
	c->next = srv->ctxs;
	srv->ctxs = c;
	pthread_mutex_unlock(&srv->ctx_lock);
	tls_ctx = c;
	return &c->ops;
}

void http_close_contexts(struct http_server *srv)
{
	struct http_ctx *c = srv->ctxs, *next;

	for (; c; c = next) {
		next = c->next;
		ops_close(&c->ops);
		free(c);
	}
	srv->ctxs = NULL;
	tls_ctx = NULL;
}

static void *worker_main(void *arg)
{
	struct http_pool *p = arg;
	struct http_req *r;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->head)
			break;
		r = p->head;
		p->head = r->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		p->run(r);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pool_start(struct http_pool *p, unsigned n)
{
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->threads = xcalloc(n, sizeof(*p->threads));
	for (p->n = 0; p->n < n; p->n++)
		if (pthread_create(&p->threads[p->n], NULL, worker_main, p))
			return -1;
	return 0;
}

void pool_submit(struct http_pool *p, struct http_req *r)
{
	int cancel;

	r->next = NULL;
	pthread_mutex_lock(&p->lock);
	cancel = p->stopping;
	if (!cancel) {
		if (p->tail)
			p->tail->next = r;
		else
			p->head = r;
		p->tail = r;
		pthread_cond_signal(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	if (cancel)
		p->cancel(r);
}

void pool_stop(struct http_pool *p)
{
	struct http_req *queued, *next;

	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	queued = p->head;
	p->head = p->tail = NULL;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (; queued; queued = next) {
		next = queued->next;
		p->cancel(queued);
	}
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	p->n = 0;
}

void pool_free(struct http_pool *p)
{
	free(p->threads);
	p->threads = NULL;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
}
