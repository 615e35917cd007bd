/*
 * pool.c -- every thread's ops context (and so its store handle).
 *
 * Each thread that runs handlers, event thread or worker (util/workq.h),
 * opens its own context on its first request: SQLite handles (and
 * PostgreSQL connections) must not be shared between threads.
 */
#include "http/http_int.h"
#include "util/xalloc.h"

#include <microhttpd.h>
#include <stdlib.h>

static __thread struct http_ctx *tls_ctx;

struct ops_ctx *http_thread_ops(struct http_server *srv, int background, struct smr_err *err)
{
	struct http_ctx *c;

	if (tls_ctx)
		return tls_ctx->ops;
	c = xcalloc(1, sizeof(*c));
	if (ops_open(&c->ops, srv->cfg->dsn,
		     &(struct ops_opts){ .rt = srv->rt, .keeper = srv->keeper,
					 .changes = srv->changes,
					 .actor = srv->cfg->actor, .background = background },
		     err)) {
		free(c);
		return NULL;
	}
	pthread_mutex_lock(&srv->ctx_lock);
	c->next = srv->ctxs;
	srv->ctxs = c;
	pthread_mutex_unlock(&srv->ctx_lock);
	tls_ctx = c;
	return c->ops;
}

struct http_ctx *http_thread_ctx(void)
{
	return tls_ctx;
}

void http_close_contexts(struct http_server *srv)
{
	struct http_ctx *c = srv->ctxs, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->resp)
			MHD_destroy_response(c->resp);
		json_decref(c->doc);
		ops_close(c->ops);
		free(c);
	}
	srv->ctxs = NULL;
	tls_ctx = NULL;
}
