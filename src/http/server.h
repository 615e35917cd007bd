/*
 * server.h -- Smriti's HTTP server: the public face used by `smriti serve`.
 *
 * The server is a transport like the CLI: it parses a request, calls one
 * operation (ops/api.h) and renders the result as JSON.  See docs/http.md
 * for the routes and http_int.h for how requests flow through threads.
 */
#ifndef SMRITI_HTTP_SERVER_H
#define SMRITI_HTTP_SERVER_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

#define HTTP_DEFAULT_LISTEN "127.0.0.1:7411"
#define HTTP_DEFAULT_WORKERS 8
#define HTTP_DEFAULT_MAX_BODY (8u << 20)
/* Slow clients (docs/http.md, Limits): nginx's and Apache mod_reqtimeout's figures. */
#define HTTP_DEFAULT_MAX_CONNS 1024
#define HTTP_DEFAULT_MAX_PER_ADDRESS 256
#define HTTP_DEFAULT_HEADER_TIMEOUT 20     /* s from a head's first byte to its end */
#define HTTP_DEFAULT_BODY_TIMEOUT 20       /* s for a body, plus one per body_min_rate bytes */
#define HTTP_DEFAULT_BODY_MIN_RATE 500     /* bytes a second */

struct http_config {
	const char *listen;         /* HOST:PORT or [V6]:PORT; port 0 picks a free one */
	const char *dsn;            /* store to open, one handle per thread */
	unsigned workers;           /* threads running writes and provider calls */
	unsigned threads;           /* event threads answering reads; 0: one per CPU */
	size_t max_body;            /* request body cap in bytes (413 past it) */
	const char *token;          /* SMRITI_TOKEN, or NULL: no token required */
	const char *allowed_hosts;  /* SMRITI_ALLOWED_HOSTS, comma list, or NULL */
	int access_log;             /* 1: one line per request on stderr */
	int log_json;               /* 1: access log lines are JSON objects (--log-format json) */
	int metrics;                /* 1: count requests and serve GET /metrics */
	const char *metrics_listen; /* HOST:PORT (or PORT: loopback) of a listener serving
				       GET /metrics alone without a token, or NULL */
	/*
	 * Who a write names when neither a token's identity nor the caller
	 * names anyone: the server process's default author, computed once at
	 * start-up (ops_ctx.actor of every thread's context); NULL: none.
	 */
	const char *actor;
	/* 0 in each of these means its HTTP_DEFAULT_ */
	unsigned max_conns;         /* open connections; past it an unfinished one is evicted */
	unsigned header_timeout;    /* seconds a request head may take from its first byte */
	unsigned body_timeout;      /* seconds a body may take, plus one per body_min_rate bytes */
	size_t body_min_rate;       /* bytes a second */
	unsigned max_per_address;   /* connections of one client address */
	/*
	 * SMRITI_TRUSTED_PROXIES: the proxies (addresses or ADDRESS/BITS, comma
	 * separated) whose X-Forwarded-For / X-Real-IP name the client; the
	 * headers of any other peer are ignored.  NULL: none.
	 */
	const char *trusted_proxies;
};

struct http_server;
struct runtime;

/*
 * Checks cfg, opens the store once (running its migrations) and binds the
 * listening socket, but serves nothing yet: so a server that cannot listen
 * starts nothing else.  Fails on a bad address, a non-loopback bind without
 * a token, or a store that cannot be opened.  cfg is borrowed until
 * http_close().  Caller http_close()s *out.
 */
enum smr_rc http_listen(const struct http_config *cfg, struct http_server **out,
			struct smr_err *err);

/*
 * Serves this binary's operations with rt, the chat runtime and its draft
 * runner that the caller built (borrowed; NULL in a binary without one):
 * prints "listening on http://HOST:PORT" on stderr once it accepts
 * connections, runs until SIGINT or SIGTERM, then shuts down cleanly.  When
 * it returns no request is running any more.
 */
enum smr_rc http_serve(struct http_server *srv, struct runtime *rt, struct smr_err *err);

/*
 * The OpenAPI 3.1 document of the HTTP API, as /openapi.json serves it
 * (indented); caller free()s.  Needs no server, so a client can be
 * generated from `smriti openapi`.
 */
char *http_openapi_text(void);

/*
 * The OpenAPI document made from decl (a declarations document as
 * ops/decl.h's decl_all() returns) and this binary's routes; new
 * reference.  The server serves decl_all()'s; tests pass changed ones.
 */
json_t *http_openapi_from(const json_t *decl);

/* Frees what http_listen() made; NULL is a no-op. */
void http_close(struct http_server *srv);

#endif
