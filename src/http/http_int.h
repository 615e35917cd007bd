/*
 * http_int.h -- the parts of the HTTP server shared between its files.
 *
 * How a request flows (server.c):
 *
 *   accept --> MHD event thread: admit (Host, token, Origin, Content-Type,
 *              Content-Length), route, buffer the body (capped), parse JSON
 *        |
 *        +-- read route ---------> handler runs right there, reply
 *        |
 *        +-- write / provider --> suspend the connection, queue the request
 *                                 on the worker pool (util/workq.h); a worker runs
 *                                 the handler, then resumes the connection
 *                                 and the event thread replies
 *
 * Every thread that runs handlers owns one store handle and one ops_ctx,
 * opened lazily on its first request (http_thread_ops).  Handlers (routes.c)
 * only turn a request into one operation call and its result into JSON;
 * handlers that run on a worker must not call MHD functions.
 */
#ifndef SMRITI_HTTP_INTERNAL_H
#define SMRITI_HTTP_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http/server.h"
#include "ops/api.h"
#include "ops/auth.h"
#include "ops/full/generation.h"
#include "util/buf.h"
#include "util/workq.h"

struct MHD_Connection;
struct MHD_Daemon;
struct MHD_Response;
struct http_req;
struct http_server;
struct http_ui;

/*
 * Threads that start chat sends (store the user turn, start the provider
 * call).  Their own pool, so that a burst of sends (hundreds of people
 * pressing Send) queues behind itself, not in front of an agent's write.
 * Their contexts are background ones (ops_opts.background: their store
 * writes never lead a commit group while a foreground write waits), and
 * their user turns that arrive together share a transaction and its fsync
 * (store/group.c).
 * Two of them, not one per send in a burst: how many run at once is how
 * much of the machine a burst takes from everyone else.  Eight admitted a
 * burst faster but left an agent's commit waiting several times longer;
 * one admitted it slower than the replies last.  Two, each waiting briefly
 * for the other's company before its transaction, hold the commit's tail
 * near its figure with no chat (bench/chat_stream.sh; the figures are in
 * docs/http.md).
 */
#define HTTP_CHAT_WORKERS 2

/* ---- listening address (guard.c) ---- */

struct http_listen {
	char host[64];                 /* as given, without [] around IPv6 */
	unsigned port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

/* Parses HOST:PORT or [V6]:PORT ("localhost" means 127.0.0.1); numeric hosts only. */
enum smr_rc http_parse_listen(const char *s, struct http_listen *out, struct smr_err *err);

/* 1 if sa is 127.0.0.0/8 or ::1 (or ::ffff:127.x). */
int http_is_loopback(const struct sockaddr *sa);

/*
 * Client addresses behind a proxy (guard.c).  An address is kept as 16
 * bytes, IPv4 as ::ffff:a.b.c.d; a network is an address and how many of
 * its leading bits count.
 */
struct http_net {
	unsigned char addr[16];
	unsigned bits;
};

/* Parses one address, IPv4 or IPv6 ("[v6]" too), of len bytes into key; 0 on success. */
int http_addr_parse(const char *s, size_t len, unsigned char key[16]);
/*
 * Parses SMRITI_TRUSTED_PROXIES: addresses or ADDRESS/BITS networks,
 * comma separated.  *out (caller frees) gets *n networks; SMR_EUSAGE naming
 * a bad entry.
 */
enum smr_rc http_trusted_parse(const char *list, struct http_net **out, size_t *n,
			       struct smr_err *err);
/* 1 when key is in one of the n networks. */
int http_net_has(const struct http_net *v, size_t n, const unsigned char key[16]);
/*
 * The client a trusted proxy forwards for: X-Forwarded-For read from the
 * right, skipping trusted addresses (nginx's real_ip_recursive), else
 * X-Real-IP; key holds the proxy's address and gets the client's.  An entry
 * that does not parse ends the walk.  Returns 1 when a header named one.
 */
int http_forwarded_client(const struct http_net *trusted, size_t n, const char *xff,
			  const char *xri, unsigned char key[16]);

/*
 * Binds and listens on w (server.c); w->port becomes the port bound (port 0
 * picks one).  what names the address in an error.  *fd is the socket.
 */
enum smr_rc http_open_listener(struct http_listen *w, const char *what, int *fd,
			       struct smr_err *err);

/* ---- request guards (guard.c): DNS rebinding, CSRF, bearer token ---- */

struct http_guard {
	char **hosts;          /* accepted Host values ("name:port"), lower case */
	size_t n;
	size_t n_own;          /* hosts[0..n_own) are our own names; the rest SMRITI_ALLOWED_HOSTS */
	int has_token;
	uint8_t token_sha[32]; /* SHA-256 of SMRITI_TOKEN */
	char cookie[65];       /* the UI's cookie value: hex SHA-256 of a prefix and the token */
};

/*
 * Accepts localhost, 127.0.0.1, [::1] and the bound host, each with port,
 * plus every entry of allowed (comma list; an entry without a port gets
 * ours).  token NULL or "" means none is required.
 */
void http_guard_init(struct http_guard *g, const char *bound_host, unsigned port,
		     const char *allowed, const char *token);
void http_guard_release(struct http_guard *g);
/* 1 if the Host header names this server. */
int http_guard_host(const struct http_guard *g, const char *host);
/*
 * 1 if origin is "http://" followed by one of our Host values, or
 * "https://" followed by a name of SMRITI_ALLOWED_HOSTS (a TLS proxy's).
 */
int http_guard_origin(const struct http_guard *g, const char *origin);
/* The token of an "Authorization: Bearer ..." header, or NULL. */
const char *http_bearer(const char *authorization);
/* 1 if authorization is "Bearer <token>" (compared in constant time). */
int http_guard_token(const struct http_guard *g, const char *authorization);
/*
 * 1 if a Cookie header carries the UI's cookie (smriti_auth=...) for this
 * server's token (compared in constant time); 0 without a token.
 */
int http_guard_cookie(const struct http_guard *g, const char *cookie_header);
/* 1 if token is the server's token (constant time); 0 without a token. */
int http_guard_token_is(const struct http_guard *g, const char *token);
/* The SHA-256 of a presented token, for http_guard_digest_is and the store's check alike. */
void http_token_digest(const char *token, uint8_t out[32]);
/* http_guard_token_is() for a token's http_token_digest (constant time); 0 without a token. */
int http_guard_digest_is(const struct http_guard *g, const uint8_t digest[32]);
/* 1 if a Content-Type may carry a JSON body: absent, application/json or x/y+json. */
int http_json_type(const char *content_type);

/*
 * The one decoding of a request path and of each query key and value
 * (MHD_OPTION_UNESCAPE_CALLBACK): %XX escapes decoded in place, the length
 * returned.  When a '%' is not followed by two hex digits, or a byte sent
 * or decoded is a control character (NUL included), s is left as it came
 * and *bad is set: the request is refused, so no code after it sees a path
 * cut short or a value with a byte its reader did not expect.
 */
size_t http_unescape(char *s, int *bad);
/* 1 if a request target as sent has no space and no control byte (RFC 9112 3.2). */
int http_target_clean(const char *target);
/*
 * Why one request header is refused, or NULL: a name that is not an RFC 9110
 * token (whitespace before the colon, RFC 9112 section 5.1), or a value with
 * a control character other than a tab, NUL included (RFC 9110 5.5).
 */
const char *http_header_problem(const char *name, size_t name_len, const char *value,
				size_t value_len);
/* For a header the server reads as one value: its index in [0, HTTP_SINGLE_HEADERS), else -1. */
int http_header_single(const char *name);
#define HTTP_SINGLE_HEADERS 11

/* ---- routes (routes.c, router.c) ---- */

typedef void (*http_handler)(struct http_req *r, struct ops_ctx *ctx);

#define ROUTE_BLOCKING 1u   /* may wait on a lock or a provider: runs on a worker */
#define ROUTE_BY_OP    2u   /* /api/ops/{op}: blocking when the operation writes */
#define ROUTE_OPEN     4u   /* answered without the bearer token */
#define ROUTE_NO_STORE 8u   /* needs no store handle */
#define ROUTE_CHAT 16u      /* starts a chat send: on the chat pool, not behind other writes */
#define ROUTE_BY_TOOL  32u  /* /mcp: each tool is its operation, checked as such */
#define ROUTE_ADMIN 64u     /* the administrator's (or a server's without sign-in): /metrics */

struct route_doc {
	const char *summary;
	const char *op;       /* operation called, NULL when none */
	const char *body;     /* request body schema (components), NULL when none */
	const char *result;   /* success schema (components) */
	int status;           /* success status */
	const char *query;    /* query parameters, space separated (openapi.c describes them);
				 "*": the parameters of the declaration of op */
	int events;           /* also answers text/event-stream */
};

struct http_route {
	const char *method;
	const char *pattern;  /* "/v4/repos/{id}": {x} matches one path segment */
	http_handler run;
	unsigned flags;
	struct route_doc doc;
};

extern const struct http_route http_routes[];

#define HTTP_ARG_MAX 512

/*
 * Finds the route for method and path and copies its {x} segment into arg.
 * NULL when none: *status is 404 (no such path) or 405 (allow[] then lists
 * the path's methods, comma separated), or 414 for an over-long segment.
 */
const struct http_route *http_route_find(const char *method, const char *path,
					 char arg[HTTP_ARG_MAX], int *status, char allow[64]);

/* The handler of every route an operation's declaration describes (routes.c). */
void http_declared(struct http_req *r, struct ops_ctx *ctx);

/* The web UI's files (ui.c): "/" and "/ui/{name}"; release at shutdown. */
void http_ui_index(struct http_req *r, struct ops_ctx *ctx);
void http_ui_asset(struct http_req *r, struct ops_ctx *ctx);
/* The UI's prebuilt responses (ui.c), made once at start-up; free with http_ui_free. */
struct http_ui *http_ui_build(void);
void http_ui_free(struct http_ui *ui);

/*
 * Decides who a request is (http_auth.c), on the event thread before routing:
 * the SMRITI_TOKEN (admin), a user's or agent's token from the store, the
 * UI's cookie for either, or nobody.  Nobody is let in only while the
 * server has no SMRITI_TOKEN and its database no users (then it is
 * loopback-only: http_listen).  Returns 0 to go on, else a 401 is set.
 */
int http_authenticate(struct http_req *r);

/* ---- connections (conn.c): slots, deadlines for slow clients ---- */

/* libmicrohttpd's own limit is this much over --max-connections, so that it hands us the newcomer. */
#define HTTP_CONN_SPARE 64

enum conn_phase {
	CONN_WAIT,      /* waiting for a request head (new or kept alive) */
	CONN_BODY,      /* head in, reading the body */
	CONN_BUSY,      /* a request at work, or its answer going out */
};

/* One connection (its MHD socket context), from MHD_CONNECTION_NOTIFY_STARTED to _CLOSED. */
struct http_conn {
	struct auth_memo *memo;          /* a server that wants tokens: the last one accepted here */
	int fd;
	unsigned char addr[16];          /* the client's address (IPv4 as ::ffff:a.b.c.d): the
					    peer's, or during a request a trusted proxy forwards,
					    the address it forwards for */
	unsigned char peer[16];          /* the address of the socket's other end */
	int trusted;                     /* the peer is a trusted proxy (SMRITI_TRUSTED_PROXIES) */
	uint64_t seq;                    /* order of arrival */
	atomic_int phase;                /* enum conn_phase */
	_Atomic int64_t head_us;         /* WAIT: when the sweeper saw its head's first byte; 0 */
	_Atomic int64_t since_us;        /* BODY: when the head was in */
	atomic_size_t body;              /* BODY: bytes of it so far */
	atomic_int rx_unknown;           /* WAIT: rx_base is to be read again */
	uint64_t rx_base;                /* the kernel's bytes received when the wait began (sweeper's) */
	int closing;                     /* shut down by us (table locked) */
	int bad_target;                  /* the request's path or query does not decode cleanly */
	const char *target;              /* the request target as sent (MHD's line buffer) */
	size_t target_len;               /* its length up to a NUL */
	struct http_conn *prev, *next;   /* the table, oldest first */
};

struct http_conns {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct http_conn *head, *tail;
	struct http_conn **sorted;       /* scratch for choosing whom to evict, cap entries */
	size_t cap;
	unsigned live;                   /* open and not being closed by us */
	unsigned max;                    /* --max-connections */
	unsigned per_addr;               /* --max-connections-per-address */
	struct http_net *trusted;        /* SMRITI_TRUSTED_PROXIES (owned) */
	size_t n_trusted;
	uint64_t seq;
	int64_t header_us, body_us;      /* --header-timeout, --body-timeout */
	size_t min_rate;                 /* --body-min-rate, bytes a second */
	int stop, running;
	pthread_t sweeper;
};

void http_conns_init(struct http_conns *cs, const struct http_config *cfg);
/*
 * The head of a request is in: on a trusted proxy's connection the
 * connection counts as the client's it forwards for (X-Forwarded-For,
 * X-Real-IP), until http_conn_request_end.  Returns 0, or how many
 * connections that client holds when that is past --max-connections-per-
 * address (the request is refused).
 */
unsigned http_conn_request(struct http_server *srv, struct http_conn *c, const char *xff,
			   const char *xri);
void http_conn_request_end(struct http_server *srv, struct http_conn *c);
void http_conns_release(struct http_conns *cs);
/* Starts and stops the thread closing connections past their deadline; 0 on success. */
int http_conns_start(struct http_server *srv);
void http_conns_stop(struct http_server *srv);
/*
 * MHD_OPTION_NOTIFY_CONNECTION: each connection gets a record (and, on a
 * server that wants tokens, a memo of the last person's or agent's token
 * accepted on it, ops/auth.h struct auth_memo, wiped when it closes); past
 * --max-connections someone's unfinished connection is evicted.
 */
enum MHD_ConnectionNotificationCode;
void http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* The record of conn, or NULL. Its event thread only. */
struct http_conn *http_conn_of(struct MHD_Connection *conn);
/* The request on c moved to phase (c NULL: nothing). */
void http_conn_phase(struct http_conn *c, enum conn_phase phase);
/* n more bytes of body arrived on c. */
void http_conn_body(struct http_conn *c, size_t n);

/* The UI's token cookie (http_auth.c): GET, POST and DELETE /v4/auth. */
void http_auth_get(struct http_req *r, struct ops_ctx *ctx);
void http_auth_post(struct http_req *r, struct ops_ctx *ctx);
void http_auth_delete(struct http_req *r, struct ops_ctx *ctx);
#define HTTP_AUTH_COOKIE "smriti_auth"

/* ---- GET /metrics (metrics.c) ---- */

struct http_metrics;
/* Counters for every route of http_routes; free with http_metrics_free. */
struct http_metrics *http_metrics_new(void);
void http_metrics_free(struct http_metrics *m);
/* One answered request of method (route NULL: none matched; status 0: none was sent). */
void http_metrics_count(struct http_metrics *m, const struct http_route *route,
			const char *method, int status, int64_t us);
/* The Prometheus text of every counter; caller free()s, *len its length. */
char *http_metrics_render(const struct http_metrics *m, int inflight, size_t *len);

/*
 * --metrics-listen (metrics.c): GET /metrics alone, without a token, on a
 * listener of its own, for a Prometheus that should not hold the
 * administrator's token.  open binds it (in http_listen, so a bad address
 * fails before anything starts; nothing without cfg->metrics_listen),
 * start serves it and prints its address, stop stops serving, free closes
 * it (http_close).
 */
enum smr_rc http_metrics_door_open(struct http_server *srv, struct smr_err *err);
enum smr_rc http_metrics_door_start(struct http_server *srv, struct smr_err *err);
void http_metrics_door_stop(struct http_server *srv);
void http_metrics_door_free(struct http_server *srv);
/* Where the door listens, or NULL without one. */
const struct http_listen *http_metrics_door_where(const struct http_server *srv);

/* The OpenAPI 3.1 document of http_routes; new reference (openapi.c). */
json_t *http_openapi(void);

/* ---- requests (server.c) ---- */

/* REQ_PARKED: a long poll waiting for a change, its connection suspended (changes_wait.c) */
enum req_state { REQ_NEW, REQ_REFUSED, REQ_BODY, REQ_QUEUED, REQ_PARKED, REQ_DONE, REQ_SENT };

/* What happens to upload data. */
enum body_mode {
	BODY_KEEP,       /* buffered for parsing */
	BODY_IGNORE,     /* GET/HEAD: read and dropped */
	BODY_TOO_BIG,    /* went past --max-body: dropped, 413 */
	BODY_BUSY,       /* all requests together hold too much: dropped, 503 */
};

struct http_req {
	struct http_server *srv;
	struct MHD_Connection *conn;
	const struct http_route *route;
	const struct api_op *op;         /* for ROUTE_BY_OP */
	char arg[HTTP_ARG_MAX];          /* the {x} of the route */
	struct buf body;
	enum body_mode body_mode;
	size_t held;                     /* bytes of body counted in srv->body_bytes */
	size_t drained;                  /* bytes read and dropped */
	json_t *in;                      /* body object; NULL without a body */
	int status;
	json_t *out;                     /* response document */
	struct item_texts *texts;        /* owned: out's checkpoint written already (api_render), or NULL */
	struct MHD_Response *fixed;      /* or a prebuilt response */
	char *set_cookie;                /* Set-Cookie value to send, or NULL; owned */
	char *text;                      /* or a text body (owned), of Content-Type text_type */
	size_t text_len;
	const char *text_type;
	int by_cookie;                   /* authenticated by the UI's cookie, not a bearer token */
	int has_who;                     /* who is set: a token or cookie was accepted */
	struct principal who;            /* the caller, for ctx->who while the handler runs */
	int at_once;                     /* refused before its body is read (length, framing) */
	int close;                       /* answer with Connection: close (a head not to trust) */
	struct http_conn *c;             /* the connection's record (conn.c), or NULL */
	enum req_state state;
	int64_t start_us;
	struct workq_item qi;            /* on the worker pool */
	int64_t queued_us;               /* when it went there */
	int chat_pool;                   /* on the chat-send pool */
	char allow[64];                  /* methods of the path, for a 405 */
	/* a reply being generated that this request answers with (http_follow) */
	struct chat_gen *gen;
	int gen_stream;                  /* its events as server-sent events, else its result */
	int want_stream;                 /* Accept names text/event-stream */
	int want_minimal;                /* Prefer: return=minimal (RFC 7240) */
	char *location;                  /* a 204's Location (http_reply_minimal), owned */
	int gen_wrap;                    /* its result as {"result": ...} (/api/ops/{op}) */
	struct chat_gen_cursor cursor;   /* from Last-Event-ID, then as sent */
	struct chat_gen_watch watch;
	atomic_int gen_holds;            /* JSON: the worker and the end; the last resumes */
	/* a stream's hold on its caller's access (ops/auth.h): the keeper ends it when it ends */
	uint64_t auth_gen;               /* the keeper's gen before the caller was checked */
	struct auth_hold hold;
	atomic_int access_lost;          /* set (by the keeper's thread) once lost_text is */
	char *lost_text;                 /* the stream's closing event; owned */
	size_t lost_off;                 /* bytes of it sent */
	struct http_mcp_stream *mcp;     /* an MCP subscriptions/listen it answers with, or NULL */
	char method[8];
	char path[160];                  /* escaped, for the access log */
};

/* Sets the response to doc (stolen) with status. */
void http_reply(struct http_req *r, int status, json_t *doc);
/*
 * Sets the answer to a write that asked for Prefer: return=minimal: 204, no
 * body, Preference-Applied, and Location (stolen; NULL: none) naming what
 * the write made.
 */
void http_reply_minimal(struct http_req *r, char *location);
/* Sets a {"error":{"code","message"}} response. */
void http_error(struct http_req *r, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Sets the error response of a failed operation; the fields of details (an
 * object, may be NULL; not stolen) go beside "error".
 */
void http_fail(struct http_req *r, enum smr_rc rc, const struct smr_err *err,
	       const json_t *details);
/*
 * Answers r with generation g (taking the caller's reference): with stream,
 * its events from r's Last-Event-ID on as text/event-stream, the connection
 * suspended while there is nothing new; else, once it ended, its result as
 * JSON (a worker's handler returns at once: the connection resumes at the
 * end, so no thread waits for the provider).
 */
void http_follow(struct http_req *r, struct chat_gen *g, int stream);
/* Value of a query parameter; event thread only (not on a worker). */
const char *http_query(struct http_req *r, const char *key);
/* Sets a text response (text owned, stolen) of Content-Type type with status. */
void http_reply_text(struct http_req *r, int status, const char *type, char *text, size_t len);
/* Text of /openapi.json and /healthz, prebuilt at start. */
void http_reply_fixed(struct http_req *r, int which);
#define FIXED_OPENAPI 0
#define FIXED_HEALTH 1

/* ---- per-thread contexts (pool.c) ---- */

struct MHD_Response;

struct http_ctx {
	struct ops_ctx *ops;
	/*
	 * The last 200 response this thread rendered and the document it
	 * rendered (a reference held, so no other document can take its
	 * address): a reply with the very same document, such as a HEAD that
	 * ops_head_doc() handed out again, is sent without rendering it again.
	 */
	json_t *doc;
	struct MHD_Response *resp;
	struct http_ctx *next;
};

/*
 * The calling thread's ops context, opening its store on first use (with
 * background, ops_opts.background: the chat workers' threads); NULL with
 * err set when the store cannot be opened.
 */
struct ops_ctx *http_thread_ops(struct http_server *srv, int background, struct smr_err *err);
/* The calling thread's context if it has opened one, else NULL. */
struct http_ctx *http_thread_ctx(void);
/* Closes every thread's store (after all threads stopped). */
void http_close_contexts(struct http_server *srv);

/* ---- the access log (log.c) ---- */

struct http_log {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct buf pending;              /* lines not written yet */
	size_t dropped;                  /* lines lost to a full buffer */
	int stop, running;
	int json;                        /* its own lines as JSON (--log-format json) */
	pthread_t thread;
};

/* Starts the log thread; 0 on success.  Until then lines are written directly. */
int http_log_start(struct http_log *l);
/* Queues one line (with its newline) for stderr. */
void http_log_line(struct http_log *l, const char *line, size_t n);
/* Writes what is left and stops the thread. */
void http_log_stop(struct http_log *l);

struct http_server {
	const struct http_config *cfg;
	struct http_guard guard;
	struct http_listen where;
	int fd;                          /* the listening socket, -1 before it is bound */
	struct MHD_Daemon *daemon;
	struct workq pool;               /* --workers threads: run a request, then resume it */
	struct workq chat_pool;          /* HTTP_CHAT_WORKERS threads starting chat sends */
	struct MHD_Response *fixed[2];
	struct http_ui *ui;              /* the web UI's files (ui.c) */
	struct http_log log;
	struct http_metrics *metrics;    /* NULL with --no-metrics */
	struct http_metrics_door *door;  /* --metrics-listen's, or NULL */
	struct http_conns conns;         /* every open connection (conn.c) */
	const char *store_name;
	struct runtime *rt;              /* chat runtime (http_serve's), read-only in all threads */
	atomic_int inflight;             /* requests admitted and not completed */
	atomic_size_t body_bytes;        /* request bodies buffered right now */
	size_t body_bytes_max;           /* cap on that: 32 x --max-body */
	atomic_int stopping;
	atomic_int users_seen;           /* the database has users: every request needs a token */
	_Atomic int64_t users_checked_us; /* when that was last looked up while it was 0 */
	pthread_mutex_t ctx_lock;
	struct http_ctx *ctxs;           /* every thread's context */
	struct auth_keeper *keeper;      /* http_serve's: every context's ctx->keeper */
	struct http_mcp_listens *mcp_listens; /* MCP listen streams and their watcher */
	struct ops_changes *changes;     /* http_serve's watch on writes: every context's too */
	struct http_waits *waits;        /* long polls of /v4/changes (changes_wait.c) */
};

/* ---- long polls of /v4/changes (changes_wait.c) ---- */

struct http_waits;
struct http_waits *http_waits_new(struct http_server *srv);
void http_waits_free(struct http_waits *ws);
/*
 * Parks r (its handler, on the event thread): its connection is suspended
 * until state.version for its caller (and space, NULL: none) differs from
 * since, or wait_s seconds have passed; then r has its reply and is
 * resumed.  -1 when the server is stopping (r is left as it was).
 */
int http_waits_park(struct http_req *r, const char *space, const char *since, long wait_s);
/* Answers every parked request with its own version and stops the thread (at shutdown). */
void http_waits_stop(struct http_waits *ws);

/* ---- MCP subscriptions/listen streams (mcp_listen.c) ---- */

struct mcp_session;
struct http_mcp_stream;
struct http_mcp_listens;

struct http_mcp_listens *http_mcp_listens_new(struct http_server *srv);
/* Ends every stream with the listen's result and stops the watcher (at shutdown). */
void http_mcp_listens_stop(struct http_mcp_listens *ls);
void http_mcp_listens_free(struct http_mcp_listens *ls);
/*
 * Makes r (on a worker) answer with a listen stream: s (stolen) holds its
 * subscriptions, ack (stolen) is its first event.  Sets r->mcp, or a 503
 * reply when the server is stopping.
 */
void http_mcp_listen(struct http_req *r, struct mcp_session *s, json_t *ack);
/* The streaming response of r->mcp (event thread); NULL when out of memory. */
struct MHD_Response *http_mcp_stream_response(struct http_req *r);
/* Forgets a stream (NULL: nothing), when its request ends. */
void http_mcp_stream_free(struct http_mcp_stream *st);

#endif
