/*
 * server.c -- the libmicrohttpd side of the HTTP server: admitting a
 * request, buffering its body, running or queueing its handler, writing the
 * JSON response and the access log, start-up and clean shutdown.
 *
 * Threading model.  MHD runs a small pool of event threads (--threads, one
 * per CPU by default), each with its own epoll loop over many connections.
 * Reads run inline on those threads: a SQLite read on a cached prepared
 * statement takes microseconds, and skipping a hand-off to another thread
 * is what lets two cores answer over 20,000 /repos/{id}/head reads a
 * second.  Anything that may wait on the store -- a write (SQLite's write
 * lock, fsync) -- suspends its connection (MHD_suspend_connection) and goes
 * to the worker pool (util/workq.h); the worker resumes the connection when
 * the result is ready.  A chat send uses a worker only to store the user's
 * turn and start the provider call: the reply streams on the provider's
 * event loop, and the connection stays suspended until its generation has
 * something new (http_follow), so no thread waits for a provider and writes
 * never queue behind chat sends.  Thread-per-connection would give the same
 * isolation but would cost a thread (and a store handle) per keep-alive
 * connection and a context switch per request.
 */
#include "http/http_int.h"
#include "ops/changes.h"
#include "util/metrics.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

/*
 * One address may hold a quarter of the connections at most: libmicrohttpd
 * closes its next ones at once.  Past --max-connections a newcomer evicts
 * an unfinished connection of the address holding the most (conn.c).
 * Behind a reverse proxy every client is the proxy's address.
 */
/*
 * libmicrohttpd's idle timers, which restart with every byte: a connection
 * that has sent nothing of a request head (a new one, or a keep-alive one
 * between requests) is closed after IDLE_TIMEOUT_S; once the head is in, a
 * slow upload or a slow reader of the answer gets REQUEST_TIMEOUT_S between
 * bytes.  The fixed deadlines for a head and the rate of a body are
 * conn.c's.  Suspended connections (a request at work) never time out.
 */
#define IDLE_TIMEOUT_S 15
#define REQUEST_TIMEOUT_S 120
/*
 * Per-connection pool for the request line, headers and read buffer.  MHD
 * zeroes it between requests, so a larger one costs time on every request.
 */
#define CONN_MEMORY (16u << 10)
#define DRAIN_MAX (64u << 20)       /* body bytes read and dropped past the cap */
#define EVENT_THREADS_MAX 8
#define SHUTDOWN_WAIT_US (5 * 1000000)

/* ---- responses ---- */

void http_reply(struct http_req *r, int status, json_t *doc)
{
	json_decref(r->out);
	r->out = doc;
	r->status = status;
	api_texts_drop(r->texts);   /* they were the document's before */
	r->texts = NULL;
}

void http_reply_minimal(struct http_req *r, char *location)
{
	json_decref(r->out);
	r->out = NULL;
	api_texts_drop(r->texts);
	r->texts = NULL;
	free(r->location);
	r->location = location;
	r->status = 204;
}

static void error_doc(struct http_req *r, int status, const char *code, const char *msg)
{
	http_reply(r, status, json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg));
}

void http_error(struct http_req *r, int status, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error_doc(r, status, code, msg);
}

void http_fail(struct http_req *r, enum smr_rc rc, const struct smr_err *err,
	       const json_t *details)
{
	const char *key;
	json_t *v;

	if (rc == SMR_OK)
		rc = SMR_EINTERNAL;
	error_doc(r, smr_rc_http_status(rc), smr_rc_name(rc),
		  err && err->msg[0] ? err->msg : "operation failed");
	if (!json_is_object(details))
		return;
	json_object_foreach((json_t *)details, key, v)
		if (strcmp(key, "error"))
			json_object_set(r->out, key, v);
}

const char *http_query(struct http_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

void http_reply_text(struct http_req *r, int status, const char *type, char *text, size_t len)
{
	free(r->text);
	r->text = text;
	r->text_len = len;
	r->text_type = type;
	r->status = status;
}

void http_reply_fixed(struct http_req *r, int which)
{
	r->fixed = r->srv->fixed[which];
	r->status = 200;
}

static void add_common_headers(struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
}

/* A response owning text (malloc'ed; freed by MHD). */
static struct MHD_Response *text_response(char *text, size_t len)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (resp)
		add_common_headers(resp);
	return resp;
}

/* The 204 of http_reply_minimal; NULL when MHD has no memory for it. */
static struct MHD_Response *minimal_response(const struct http_req *r)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL,
								     MHD_RESPMEM_PERSISTENT);

	if (!resp)
		return NULL;
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "Preference-Applied", "return=minimal");
	MHD_add_response_header(resp, "Vary", "Prefer");
	if (r->location)
		MHD_add_response_header(resp, "Location", r->location);
	if (r->close)
		MHD_add_response_header(resp, "Connection", "close");
	return resp;
}

static int dump_to_buf(const char *data, size_t n, void *b)
{
	buf_add(b, data, n);
	return 0;
}

/*
 * Keeps resp, the rendering of a plain 200 reply, as this thread's last
 * (struct http_ctx); 1 when kept (the context then owns it).
 */
static int keep_reply(struct http_req *r, struct MHD_Response *resp)
{
	struct http_ctx *c = http_thread_ctx();

	if (!c || r->status != 200 || r->set_cookie)
		return 0;
	if (c->resp)
		MHD_destroy_response(c->resp);
	json_decref(c->doc);
	c->doc = json_incref(r->out);
	c->resp = resp;
	return 1;
}

/* This thread's last rendering when r replies with the very same document, else NULL. */
static struct MHD_Response *kept_reply(const struct http_req *r)
{
	struct http_ctx *c = http_thread_ctx();

	if (c && c->resp && r->out == c->doc && r->status == 200 && !r->set_cookie)
		return c->resp;
	return NULL;
}

/* ---- following a generation ---- */

static void gen_suspend(void *ud)
{
	MHD_suspend_connection(((struct http_req *)ud)->conn);
}

static void gen_resume(void *ud)
{
	MHD_resume_connection(((struct http_req *)ud)->conn);
}

/* The end of a generation answered as JSON: the last of the worker and the end resumes. */
static void gen_release_hold(struct http_req *r)
{
	if (atomic_fetch_sub(&r->gen_holds, 1) != 1)
		return;
	r->state = REQ_DONE;
	MHD_resume_connection(r->conn);
}

static void gen_ended(void *ud)
{
	gen_release_hold(ud);
}

/*
 * The keeper found that the caller of r's stream may no longer read it (on
 * the keeper's thread, under its lock of holds): the stream ends with an
 * event saying why, after the event it is in; the reply goes on.
 */
static void stream_lost(void *ud, enum smr_rc rc, const char *msg)
{
	struct http_req *r = ud;
	json_t *data = json_pack("{s:s, s:{s:s, s:s}}", "generation", chat_gen_id(r->gen),
				 "error", "code", smr_rc_name(rc), "message", msg);
	char *json = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII);

	r->lost_text = xasprintf("event: closed\ndata: %s\n\n",
				 json ? json : "{\"error\":{\"code\":\"unauthorized\","
					       "\"message\":\"access to this reply ended\"}}");
	free(json);
	json_decref(data);
	atomic_store(&r->access_lost, 1);
	chat_gen_poke(r->gen, &r->watch);
}

/* A signed-in person's or agent's stream is held (ops/auth.h): it ends with their access. */
static void hold_access(struct http_req *r)
{
	if (!r->has_who || r->who.admin || !r->srv->keeper)
		return;
	r->hold = (struct auth_hold){ .who = r->who, .op = "generation.get",
		.params = json_pack("{s:s}", "generation_id", chat_gen_id(r->gen)),
		.lost = stream_lost, .ud = r, .gen = r->auth_gen };
	ops_auth_hold(r->srv->keeper, &r->hold);
}

void http_follow(struct http_req *r, struct chat_gen *g, int stream)
{
	r->gen = g;
	r->gen_stream = stream;
	r->watch = (struct chat_gen_watch){ .suspend = gen_suspend, .resume = gen_resume,
					    .ud = r };
	if (stream) {
		hold_access(r);
		return;
	}
	atomic_store(&r->gen_holds, 2);
	r->watch.resume = gen_ended;
	chat_gen_watch_end(g, &r->watch);
}

/* The end of a stream whose caller lost access: the event under way, then the closing one. */
static ssize_t sse_closing(struct http_req *r, char *buf, size_t max)
{
	size_t left = chat_gen_event_left(r->gen, &r->cursor), n;

	if (left)
		return chat_gen_read(r->gen, &r->cursor, buf, left < max ? left : max, NULL);
	n = strlen(r->lost_text + r->lost_off);
	if (!n)
		return (ssize_t)MHD_CONTENT_READER_END_OF_STREAM;
	n = n < max ? n : max;
	memcpy(buf, r->lost_text + r->lost_off, n);
	r->lost_off += n;
	return (ssize_t)n;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_req *r = cls;
	long n;

	(void)pos;
	if (atomic_load(&r->access_lost))
		return sse_closing(r, buf, max);
	n = chat_gen_read(r->gen, &r->cursor, buf, max, &r->watch);
	return n < 0 ? (ssize_t)MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

/*
 * The block MHD allocates (zeroed) with each streaming response, per stream
 * for as long as it lasts: it reads the body into it when it cannot send
 * chunks (HTTP/1.0); chunks go out of the connection's own buffer.
 * chat_gen_read hands out events in pieces of any size, so a small block
 * costs nothing but a few more reads there, while a large one is held by
 * every open stream (docs/http.md, "Memory under a burst").
 */
#define SSE_BLOCK 2048

static enum MHD_Result send_events(struct http_req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ok;

	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, r, NULL);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	r->status = 200;
	ok = MHD_queue_response(r->conn, 200, resp);
	MHD_destroy_response(resp);
	return ok;
}

/* An MCP subscriptions/listen: its events for as long as it lasts (mcp_listen.c). */
static enum MHD_Result send_mcp_stream(struct http_req *r)
{
	struct MHD_Response *resp = http_mcp_stream_response(r);
	enum MHD_Result ok;

	if (!resp)
		return MHD_NO;
	r->status = 200;
	ok = MHD_queue_response(r->conn, 200, resp);
	MHD_destroy_response(resp);
	return ok;
}

/* A generation answered as JSON: its result (it has ended). */
static void gen_result(struct http_req *r)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *doc = NULL;
	enum smr_rc rc = chat_gen_result(r->gen, &doc, &err);

	if (rc)
		http_fail(r, rc, &err, doc);
	else if (r->gen_wrap)
		http_reply(r, 200, json_pack("{s:O}", "result", doc));
	else
		http_reply(r, 200, json_incref(doc));
	json_decref(doc);
}

static enum MHD_Result send_reply(struct http_req *r)
{
	struct MHD_Response *resp = r->fixed;
	struct buf text = BUF_INIT(0);
	enum MHD_Result ok;
	int shared = r->fixed != NULL;
	size_t len;
	char *body;

	r->state = REQ_SENT;
	if (r->gen && r->gen_stream)
		return send_events(r);
	if (r->mcp)
		return send_mcp_stream(r);
	if (r->gen)
		gen_result(r);
	if (!resp && r->text) {
		resp = MHD_create_response_from_buffer(r->text_len, r->text, MHD_RESPMEM_MUST_FREE);
		r->text = NULL;
		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, "Content-Type", r->text_type);
		MHD_add_response_header(resp, "Cache-Control", "no-store");
		MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	}
	if (!resp && r->status == 204)
		resp = minimal_response(r);
	if (!resp && (resp = kept_reply(r)) != NULL)
		shared = 1;
	if (!resp) {
		if (!r->out)
			error_doc(r, 500, "internal", "no response was produced");
		/* a checkpoint the operation sealed is written from its items' texts */
		body = r->texts ? api_render(r->out, r->texts, &len) : NULL;
		if (!body) {
			json_dump_callback(r->out, dump_to_buf, &text, JSON_COMPACT | JSON_ENCODE_ANY);
			body = buf_detach(&text, &len);
		}
		resp = text_response(body, len);
		if (!resp)
			return MHD_NO;
		if (r->status == 405)
			MHD_add_response_header(resp, "Allow", r->allow);
		if (r->status == 401)
			MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
		if (r->set_cookie)
			MHD_add_response_header(resp, "Set-Cookie", r->set_cookie);
		if (r->close)
			MHD_add_response_header(resp, "Connection", "close");
		shared = !r->close && keep_reply(r, resp);
	}
	ok = MHD_queue_response(r->conn, (unsigned)r->status, resp);
	if (!shared)
		MHD_destroy_response(resp);
	return ok;
}

/* ---- the access log ---- */

/* Copies a path for the log: printable ASCII kept, everything else %XX, capped. */
static void log_path(char *out, size_t size, const char *url)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
		if (n + 4 >= size) {
			memcpy(out + size - 4, "...", 3);
			n = size - 1;
			break;
		}
		if (*p > 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
}

/*
 * One line per request: method, path, status, duration; never bodies or
 * headers.  As JSON (--log-format json) it also has the time and the route
 * template; the path is already escaped to printable ASCII without '"' or
 * '\\' (log_path), so it needs no further quoting.
 */
static void access_log(struct http_req *r, enum MHD_RequestTerminationCode toe)
{
	char line[512], now[32];
	int64_t us = sys_monotonic_us() - r->start_us;
	int status = r->state == REQ_SENT ? r->status : 0;
	int closed = toe != MHD_REQUEST_TERMINATED_COMPLETED_OK;
	int by = r->has_who && !r->who.admin;   /* a person or an agent; never a token */
	int n;

	if (r->srv->cfg->log_json) {
		char method[32];

		log_path(method, sizeof(method), r->method);   /* a token, but MHD does not insist */
		sys_now_iso(now);
		n = snprintf(line, sizeof(line),
			     "{\"time\":\"%s\",\"method\":\"%s\",\"path\":\"%s\",\"route\":%s%s%s,"
			     "\"status\":%d,\"duration_ms\":%lld.%03lld,\"closed\":%s%s%s%s}\n", now,
			     method, r->path, r->route ? "\"" : "",
			     r->route ? r->route->pattern : "null", r->route ? "\"" : "", status,
			     (long long)(us / 1000), (long long)(us % 1000), closed ? "true" : "false",
			     by ? ",\"user\":\"" : "", by ? r->who.name : "", by ? "\"" : "");
	} else {
		/* names are [a-z0-9._-/] only */
		n = snprintf(line, sizeof(line), "http: %s %s %d %lld.%03lldms%s%s%s\n", r->method,
			     r->path, status, (long long)(us / 1000), (long long)(us % 1000),
			     closed ? " (connection closed)" : "", by ? " by " : "",
			     by ? r->who.name : "");
	}
	if (n > 0)
		http_log_line(&r->srv->log, line,
			      (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* ---- the request lifecycle ---- */

static struct http_req *req_new(struct http_server *srv, struct MHD_Connection *conn,
				const char *method, const char *url)
{
	struct http_req *r = xmalloc(sizeof(*r));

	r->srv = srv;
	r->conn = conn;
	r->route = NULL;
	r->op = NULL;
	r->arg[0] = '\0';
	r->body = (struct buf)BUF_INIT(srv->cfg->max_body);
	r->body_mode = BODY_KEEP;
	r->held = 0;
	r->drained = 0;
	r->in = NULL;
	r->status = 0;
	r->out = NULL;
	r->texts = NULL;
	r->fixed = NULL;
	r->set_cookie = NULL;
	r->text = NULL;
	r->text_len = 0;
	r->text_type = NULL;
	r->by_cookie = 0;
	r->has_who = 0;
	memset(&r->who, 0, sizeof(r->who));
	r->at_once = 0;
	r->close = 0;
	r->c = http_conn_of(conn);
	r->state = REQ_NEW;
	r->start_us = sys_monotonic_us();
	r->qi.next = NULL;
	r->allow[0] = '\0';
	r->gen = NULL;
	r->gen_stream = 0;
	r->want_stream = 0;
	r->want_minimal = 0;
	r->location = NULL;
	r->gen_wrap = 0;
	r->cursor = (struct chat_gen_cursor){ 1, 0 };
	atomic_init(&r->gen_holds, 0);
	r->auth_gen = 0;
	memset(&r->hold, 0, sizeof(r->hold));
	atomic_init(&r->access_lost, 0);
	r->lost_text = NULL;
	r->lost_off = 0;
	r->mcp = NULL;
	snprintf(r->method, sizeof(r->method), "%s", method);
	if (srv->cfg->access_log)
		log_path(r->path, sizeof(r->path), url);
	else
		r->path[0] = '\0';
	atomic_fetch_add(&srv->inflight, 1);
	return r;
}

/* Frees the buffered body and gives its bytes back to the server-wide count. */
static void drop_body(struct http_req *r)
{
	buf_release(&r->body);
	atomic_fetch_sub(&r->srv->body_bytes, r->held);
	r->held = 0;
}

static void req_free(struct http_req *r)
{
	ops_auth_unhold(r->srv->keeper, &r->hold);   /* first: the keeper no longer calls back */
	free(r->lost_text);
	http_mcp_stream_free(r->mcp);
	if (r->gen) {
		chat_gen_unwatch(r->gen, &r->watch);
		chat_gen_unref(r->gen);
	}
	json_decref(r->in);
	json_decref(r->out);
	api_texts_drop(r->texts);
	drop_body(r);
	free(r->set_cookie);
	free(r->text);
	free(r->location);
	free(r);
}

static int is_write(const char *method)
{
	return !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH") ||
	       !strcmp(method, "DELETE");
}

static const char *header(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* Checks that do not need the body.  Returns 0 to go on, else a response is set. */
static int refuse_write(struct http_req *r)
{
	const char *origin = header(r, "Origin");
	const char *site = header(r, "Sec-Fetch-Site");

	if (origin && !http_guard_origin(&r->srv->guard, origin)) {
		http_error(r, 403, "forbidden", "cross-origin writes are refused");
		return 1;
	}
	/* a cookie rides along on any request the browser makes: insist on our Origin */
	if (r->by_cookie && !origin) {
		http_error(r, 403, "forbidden", "writes authenticated by cookie need an Origin header");
		return 1;
	}
	if (site && !strcasecmp(site, "cross-site")) {
		http_error(r, 403, "forbidden", "cross-site writes are refused");
		return 1;
	}
	if (!http_json_type(header(r, "Content-Type"))) {
		http_error(r, 415, "unsupported_media_type",
			   "request bodies must be JSON (Content-Type: application/json)");
		return 1;
	}
	return 0;
}

static int refuse_length(struct http_req *r)
{
	const char *cl = header(r, "Content-Length");
	char *end;
	unsigned long long n;

	if (!cl)
		return 0;
	errno = 0;
	n = strtoull(cl, &end, 10);
	if (errno || *end || n > r->srv->cfg->max_body) {
		r->at_once = 1;
		http_error(r, 413, "too_large", "request body is larger than %zu bytes",
			   r->srv->cfg->max_body);
		return 1;
	}
	return 0;
}

struct framing {
	unsigned content_length, transfer_encoding;
	int chunked;                     /* the one Transfer-Encoding is "chunked" */
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct framing *f = cls;

	(void)kind;
	if (!strcasecmp(key, "Content-Length")) {
		f->content_length++;
	} else if (!strcasecmp(key, "Transfer-Encoding")) {
		f->transfer_encoding++;
		f->chunked = value && !strcasecmp(value, "chunked");
	}
	return MHD_YES;
}

/*
 * Where the body ends must be beyond doubt (RFC 9112 section 6.3): two
 * Content-Length headers, or Transfer-Encoding beside Content-Length, are
 * how a request is smuggled past a proxy that reads the other one, so they
 * are a 400; so is a transfer coding other than a lone "chunked", which
 * would leave the body's end to the connection's close.  The answer goes
 * out before the body is read, and the connection closes after it.
 */
static int refuse_framing(struct http_req *r)
{
	struct framing f = { 0, 0, 0 };

	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_framing, &f);
	r->at_once = f.content_length > 1 || f.transfer_encoding;
	if (f.content_length > 1) {
		http_error(r, 400, "invalid_framing",
			   "the request has %u Content-Length headers; send exactly one",
			   f.content_length);
		return 1;
	}
	if (f.transfer_encoding && f.content_length) {
		http_error(r, 400, "invalid_framing",
			   "the request has both Transfer-Encoding and Content-Length;"
			   " send only one of them");
		return 1;
	}
	if (f.transfer_encoding > 1 || (f.transfer_encoding && !f.chunked)) {
		http_error(r, 400, "invalid_framing",
			   "the only Transfer-Encoding accepted is 'chunked'; or send Content-Length");
		return 1;
	}
	r->at_once = 0;
	return 0;
}

/* Finds the first query parameter whose decoded key or value is not UTF-8. */
static enum MHD_Result find_non_utf8(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	const char **bad = cls;

	(void)kind;
	if (utf8_valid(key, strlen(key)) && (!value || utf8_valid(value, strlen(value))))
		return MHD_YES;
	*bad = key;
	return MHD_NO;
}

/*
 * A query parameter that decodes to bytes that are not UTF-8 is refused
 * here, for every route, naming it: the operations take text, and a handler
 * that could not put it in a JSON document would report it missing.
 */
static int refuse_query_bytes(struct http_req *r)
{
	const char *bad = NULL;

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, find_non_utf8, &bad);
	if (!bad)
		return 0;
	if (utf8_valid(bad, strlen(bad)))
		http_error(r, 400, "invalid_input", "query parameter '%.64s' is not valid UTF-8", bad);
	else
		http_error(r, 400, "invalid_input", "a query parameter's name is not valid UTF-8");
	return 1;
}

struct head_check {
	const char *problem;             /* the first header refused, and why */
	char name[48];
	unsigned seen[HTTP_SINGLE_HEADERS];
};

static enum MHD_Result check_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    size_t key_size, const char *value, size_t value_size)
{
	struct head_check *h = cls;
	int single = http_header_single(key);

	(void)kind;
	h->problem = http_header_problem(key, key_size, value, value_size);
	if (!h->problem && single >= 0 && ++h->seen[single] > 1)
		h->problem = "is given twice; this server reads it once";
	if (!h->problem)
		return MHD_YES;
	log_path(h->name, sizeof(h->name), key);
	return MHD_NO;
}

/*
 * One strict reading of the head (RFC 9112 section 5, RFC 9110 5.5): a
 * header name that is not a token (as "Content-Length : 17", which
 * libmicrohttpd keeps under the name "Content-Length " and so frames the
 * request without its body), a control character in a value, or a second
 * Host, Origin or other header read once is a 400, and the connection
 * closes after it: what follows the head cannot be trusted to be a body.
 */
static int refuse_head(struct http_req *r)
{
	struct head_check h;

	memset(&h, 0, sizeof(h));
	MHD_get_connection_values_n(r->conn, MHD_HEADER_KIND, check_header, &h);
	if (!h.problem)
		return 0;
	r->at_once = r->close = 1;
	http_error(r, 400, "invalid_header", "the request header '%s' %s", h.name, h.problem);
	return 1;
}

/* A path or query that did not decode cleanly (http_unescape). */
static int refuse_target(struct http_req *r)
{
	if (!r->c || !r->c->bad_target)
		return 0;
	r->close = 1;
	http_error(r, 400, "invalid_input",
		   "the request path or query has a control character (such as %%00) or a '%%'"
		   " not followed by two hex digits");
	return 1;
}

static int admit(struct http_req *r, const char *url, const char *method)
{
	struct http_server *srv = r->srv;
	int status = 404;
	unsigned held;

	if (refuse_framing(r) || refuse_head(r) || refuse_target(r))
		return 1;
	/* a trusted proxy's request counts as its client's, who may hold only so many */
	held = http_conn_request(srv, r->c, header(r, "X-Forwarded-For"), header(r, "X-Real-IP"));
	if (held) {
		http_error(r, 503, "unavailable", "your address holds %u connections, more than the"
			   " %u one address may; close some and retry", held, srv->conns.per_addr);
		return 1;
	}
	if (!http_guard_host(&srv->guard, header(r, "Host"))) {
		http_error(r, 421, "misdirected",
			   "this server does not answer to that Host header"
			   " (add the name to SMRITI_ALLOWED_HOSTS)");
		return 1;
	}
	if (!utf8_valid(url, strlen(url))) {
		http_error(r, 400, "invalid_input", "the request path is not valid UTF-8");
		return 1;
	}
	if (refuse_query_bytes(r))
		return 1;
	r->route = http_route_find(method, url, r->arg, &status, r->allow);
	if (!(r->route && (r->route->flags & ROUTE_OPEN)) && http_authenticate(r))
		return 1;
	if (is_write(method) && refuse_write(r))
		return 1;
	if (!r->route) {
		if (status == 405)
			http_error(r, 405, "method_not_allowed", "%s is not allowed here (allowed: %s)",
				   r->method, r->allow);
		else if (status == 414)
			http_error(r, 414, "too_long", "a path segment is too long");
		else
			http_error(r, 404, "not_found", "no route for %s %.200s", r->method, url);
		return 1;
	}
	return refuse_length(r);
}

/*
 * Appends upload data.  Past --max-body, or when the bodies that all
 * requests hold together would pass their cap (32 x --max-body, so that a
 * thousand connections cannot make the server hold gigabytes), the body is
 * dropped and only counted.
 */
static void take_body(struct http_req *r, const char *data, size_t n)
{
	struct http_server *srv = r->srv;

	if (r->body_mode == BODY_KEEP &&
	    atomic_fetch_add(&srv->body_bytes, n) + n > srv->body_bytes_max) {
		atomic_fetch_sub(&srv->body_bytes, n);
		r->body_mode = BODY_BUSY;
		drop_body(r);
	}
	if (r->body_mode == BODY_KEEP) {
		r->held += n;
		buf_add(&r->body, data, n);
		if (!r->body.err)
			return;
		r->body_mode = BODY_TOO_BIG;
		drop_body(r);
	}
	r->drained += n;
}

/* Drops " near '...'" from a jansson message: it would echo the request back. */
static void parse_error(struct http_req *r, const json_error_t *je)
{
	char text[JSON_ERROR_TEXT_LENGTH];
	char *near;

	snprintf(text, sizeof(text), "%s", je->text);
	near = strstr(text, " near ");
	if (near)
		*near = '\0';
	http_error(r, 400, "invalid_input", "request body is not valid JSON: %s (line %d, column %d)",
		   text, je->line, je->column);
}

static int parse_body(struct http_req *r)
{
	json_error_t je;

	if (r->body_mode == BODY_IGNORE)
		return 0;
	if (r->body_mode == BODY_TOO_BIG) {
		http_error(r, 413, "too_large", "request body is larger than %zu bytes",
			   r->srv->cfg->max_body);
		return 1;
	}
	if (r->body_mode == BODY_BUSY) {
		http_error(r, 503, "unavailable",
			   "the server is holding too many request bodies; try again");
		return 1;
	}
	if (!r->body.len)
		return 0;
	r->in = json_loadb(r->body.ptr, r->body.len, JSON_REJECT_DUPLICATES, &je);
	drop_body(r);
	if (!r->in) {
		parse_error(r, &je);
		return 1;
	}
	if (!json_is_object(r->in)) {
		http_error(r, 400, "invalid_input", "request body must be a JSON object");
		return 1;
	}
	return 0;
}

static void run_handler(struct http_req *r)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;

	if (!(r->route->flags & ROUTE_NO_STORE)) {
		ctx = http_thread_ops(r->srv, r->chat_pool, &err);
		if (!ctx) {
			http_fail(r, err.code == SMR_OK ? SMR_EUNAVAIL : err.code, &err, NULL);
			return;
		}
	}
	if (ctx)
		ops_set_caller(ctx, r->has_who ? &r->who : NULL);
	r->route->run(r, ctx);
	if (ctx) {
		ops_set_caller(ctx, NULL);
		ops_auth_stale(ctx);    /* the next request reads the auth epoch again */
	}
}

/* Worker side: run, then hand the connection back to its event thread. */
static void job_run(struct workq_item *it, void *unused)
{
	struct http_req *r = (struct http_req *)((char *)it - offsetof(struct http_req, qi));

	(void)unused;
	metrics_worker_queue(r->chat_pool, sys_monotonic_us() - r->queued_us);
	run_handler(r);
	if (r->gen && !r->gen_stream) {
		gen_release_hold(r);        /* the reply's end resumes it, if it is not over */
		return;
	}
	r->state = REQ_DONE;
	MHD_resume_connection(r->conn);    /* r may be freed from here on */
}

static void job_cancel(struct workq_item *it, void *unused)
{
	struct http_req *r = (struct http_req *)((char *)it - offsetof(struct http_req, qi));

	(void)unused;
	http_error(r, 503, "unavailable", "the server is shutting down; nothing was done");
	r->state = REQ_DONE;
	MHD_resume_connection(r->conn);
}

/* Accept: text/event-stream, and Last-Event-ID for where to resume. */
static void stream_headers(struct http_req *r)
{
	const char *accept = header(r, "Accept");
	const char *last = header(r, "Last-Event-ID");
	char *end;
	long long id;

	r->want_stream = accept && strstr(accept, "text/event-stream") != NULL;
	if (last && *last) {
		id = strtoll(last, &end, 10);
		if (!*end && id >= 0 && id < INT64_MAX)
			r->cursor.next = id + 1;
	}
}

/*
 * The return preference of one Prefer header's value (RFC 7240: a list of
 * token[=value][;params], tokens case-insensitive, a value maybe quoted):
 * 1 for return=minimal, 0 for return=representation, -1 when it names none.
 */
static int prefer_return(const char *v)
{
	while (*v) {
		size_t n, k;

		v += strspn(v, " \t,");
		n = strcspn(v, ",;");
		k = strcspn(v, ",");
		if (n >= 6 && !strncasecmp(v, "return", 6)) {
			const char *x = v + 6 + strspn(v + 6, " \t");

			if (*x == '=') {
				x++;
				x += strspn(x, " \t\"");
				if (!strncasecmp(x, "minimal", 7) && strchr("\" \t;,", x[7]))
					return 1;
				if (!strncasecmp(x, "representation", 14) && strchr("\" \t;,", x[14]))
					return 0;
			}
		}
		v += k;
	}
	return -1;
}

/* MHD_get_connection_values' callback: the first return preference of the Prefer headers. */
static enum MHD_Result prefer_header(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	int *pref = cls;

	(void)kind;
	if (strcasecmp(key, "Prefer") || !value || *pref >= 0)
		return MHD_YES;
	*pref = prefer_return(value);
	return MHD_YES;
}

/* Prefer: return=minimal on a write: its success is a 204 (http_reply_minimal). */
static void prefer_headers(struct http_req *r)
{
	int pref = -1;

	if (!is_write(r->method))
		return;
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, prefer_header, &pref);
	r->want_minimal = pref == 1;
}

static enum MHD_Result dispatch(struct http_req *r)
{
	unsigned flags = r->route->flags;
	int blocking = flags & ROUTE_BLOCKING;

	stream_headers(r);
	prefer_headers(r);
	if (flags & ROUTE_BY_OP) {
		r->op = api_find(r->arg);
		if (!r->op) {
			http_error(r, 404, "not_found", "no operation '%s'", r->arg);
			return send_reply(r);
		}
		blocking = r->op->writes || r->op->slow;
	}
	if (!blocking) {
		run_handler(r);
		/* a long poll parked: the thread that answers it resumes the connection */
		return r->state == REQ_PARKED ? MHD_YES : send_reply(r);
	}
	if (atomic_load(&r->srv->stopping)) {
		http_error(r, 503, "unavailable", "the server is shutting down; nothing was done");
		return send_reply(r);
	}
	r->state = REQ_QUEUED;
	r->chat_pool = flags & ROUTE_CHAT || (r->op && chat_op_streams(r->op->name));
	r->queued_us = sys_monotonic_us();
	MHD_suspend_connection(r->conn);
	if (workq_submit(r->chat_pool ? &r->srv->chat_pool : &r->srv->pool, &r->qi))
		job_cancel(&r->qi, NULL);
	return MHD_YES;
}

/* MHD_OPTION_UNESCAPE_CALLBACK: the path and every query key and value, decoded once. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	int bad = 0;
	size_t n = http_unescape(s, &bad);
	struct http_conn *c;

	(void)cls;
	if (bad && (c = http_conn_of(conn)) != NULL)
		c->bad_target = 1;
	return n;
}

/*
 * MHD_OPTION_URI_LOG_CALLBACK: the request target as it was sent, before
 * libmicrohttpd splits and decodes it.  libmicrohttpd 0.9.75 takes a target
 * with a space in it ("GET /a b HTTP/1.1") as the path "/a b"; it is
 * refused here, with control bytes sent as they are.  Returns the request's
 * first *con_cls: none (on_access makes the request).
 */
static void *raw_target(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct http_conn *c = http_conn_of(conn);

	(void)cls;
	if (c) {
		c->bad_target = !http_target_clean(uri);
		c->target = uri;
		c->target_len = strlen(uri);
	}
	return NULL;
}

/*
 * 1 when a NUL sent inside the request target cut it short: libmicrohttpd
 * 0.9.75 keeps the request line in one buffer, the target ending with the
 * space it turned into the NUL before the version, so a target whose text
 * ends earlier held a NUL ("GET /healthz<NUL>x HTTP/1.1" would be /healthz).
 * Checked against the layout of that version only.
 */
static int target_cut(const struct http_conn *c, const char *version)
{
#if MHD_VERSION < 0x00097700
	return c->target && version && *version && c->target + c->target_len + 1 != version;
#else
	(void)c;
	(void)version;
	return 0;
#endif
}

/*
 * MHD answers with "Connection: close" when a response is queued before the
 * request was read whole, so replies wait for the final call; only a 413
 * for a declared over-long body goes out at once, so that it is not read.
 */
static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version, const char *data,
				 size_t *size, void **con_cls)
{
	struct http_req *r = *con_cls;

	if (!r) {
		r = req_new(cls, conn, method, url);
		*con_cls = r;
		http_conn_phase(r->c, CONN_BODY);
		if (r->c && target_cut(r->c, version))
			r->c->bad_target = 1;
		/* the head is in: a slow body or a slow reader gets the longer timeout */
		MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
					  (unsigned)REQUEST_TIMEOUT_S);
		r->state = admit(r, url, method) ? REQ_REFUSED : REQ_BODY;
		/* a body on GET or HEAD means nothing here: it is read and dropped */
		if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
			r->body_mode = BODY_IGNORE;
		if (r->at_once)
			return send_reply(r);
		return MHD_YES;
	}
	if (*size) {
		http_conn_body(r->c, *size);
		if (r->state == REQ_BODY)
			take_body(r, data, *size);
		else
			r->drained += *size;
		*size = 0;
		return r->drained > DRAIN_MAX ? MHD_NO : MHD_YES;
	}
	http_conn_phase(r->c, CONN_BUSY);
	switch (r->state) {
	case REQ_BODY:
		if (parse_body(r))
			return send_reply(r);
		return dispatch(r);
	case REQ_REFUSED:
	case REQ_DONE:
		return send_reply(r);
	default:
		return MHD_YES;
	}
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct http_req *r = *con_cls;

	if (!r)
		return;
	if (srv->metrics)
		http_metrics_count(srv->metrics, r->route, r->method,
				   r->state == REQ_SENT ? r->status : 0,
				   sys_monotonic_us() - r->start_us);
	if (srv->cfg->access_log)
		access_log(r, toe);
	http_conn_request_end(srv, r->c);
	/* back to waiting for a request head (keep-alive); not on a closing connection */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
		MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
					  (unsigned)IDLE_TIMEOUT_S);
		http_conn_phase(r->c, CONN_WAIT);
	}
	req_free(r);
	*con_cls = NULL;
	atomic_fetch_sub(&srv->inflight, 1);
}

/*
 * A line that is not a request's (level "info", "warning" or "error"; source
 * "libmicrohttpd" or "smriti"): text
 * after "smriti: http: ", or under --log-format json an object like the
 * access log's, so that a log collector reading JSON is never handed text.
 * It goes through the access log's buffer (written directly when there is
 * no log thread), so that the two never interleave out of order.
 */
static void mhd_log_line(struct http_server *srv, const char *level, const char *source,
			 const char *msg)
{
	size_t n = strlen(msg);
	char now[32];
	char *text, *line;
	json_t *o;

	if (!srv->cfg->log_json) {
		text = xasprintf("smriti: http: %s\n", msg);
	} else {
		sys_now_iso(now);
		o = json_pack("{s:s, s:s, s:s, s:s}", "time", now, "level", level, "source",
			      source, "message",
			      utf8_valid(msg, n) ? msg : "(a message that is not UTF-8)");
		line = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		text = line ? xasprintf("%s\n", line) : NULL;
		free(line);
	}
	if (text)
		http_log_line(&srv->log, text, strlen(text));
	free(text);
}

__attribute__((format(printf, 2, 0)))
/* libmicrohttpd's own messages (a connection it refused, a socket error). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	if (vsnprintf(line, sizeof(line), fmt, ap) <= 0)
		return;
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	mhd_log_line(cls, "error", "libmicrohttpd", line);
}

/* ---- start-up and shutdown ---- */

enum smr_rc http_open_listener(struct http_listen *w, const char *what, int *fd,
			       struct smr_err *err)
{
	int one = 1;
	int s = socket(w->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (s < 0)
		return smr_errf(err, SMR_EINTERNAL, "cannot create a socket: %s", strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (w->addr.ss_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&w->addr, w->addrlen) || listen(s, 511)) {
		int e = errno;

		close(s);
		return smr_errf(err, SMR_EUNAVAIL, "cannot listen on %s: %s", what, strerror(e));
	}
	w->addrlen = sizeof(w->addr);
	getsockname(s, (struct sockaddr *)&w->addr, &w->addrlen);
	w->port = ntohs(w->addr.ss_family == AF_INET6 ?
			((struct sockaddr_in6 *)&w->addr)->sin6_port :
			((struct sockaddr_in *)&w->addr)->sin_port);
	*fd = s;
	return SMR_OK;
}

/*
 * Beyond loopback every request must carry a token: SMRITI_TOKEN, or the
 * database has users (whose tokens it then wants).  A server that has
 * neither is refused, not opened to the network.
 */
static enum smr_rc check_exposure(struct http_server *srv, int has_users, struct smr_err *err)
{
	const struct http_config *cfg = srv->cfg;

	if (http_is_loopback((struct sockaddr *)&srv->where.addr) ||
	    (cfg->token && *cfg->token) || has_users)
		return SMR_OK;
	return smr_errf(err, SMR_EUSAGE,
			"refusing to listen on '%s' without users or SMRITI_TOKEN: add users"
			" (smriti user add NAME; smriti token create NAME) or set a token"
			" (clients then send 'Authorization: Bearer TOKEN'), or listen on"
			" 127.0.0.1", srv->where.host);
}

/*
 * Opens the store once up front: migrations run, and a bad DSN fails before
 * we listen; a server that already has users wants tokens from the start.
 */
static enum smr_rc check_store(struct http_server *srv, struct smr_err *err)
{
	struct ops_ctx *ctx;
	enum smr_rc rc = ops_open(&ctx, srv->cfg->dsn, NULL, err);
	int users = 0;

	if (rc)
		return rc;

	srv->store_name = ops_store_name(ctx);
	rc = ops_auth_users_exist(ctx, &users, err);
	if (!rc)
		rc = check_exposure(srv, users, err);
	if (!rc && users)
		atomic_store(&srv->users_seen, 1);
	ops_close(ctx);
	return rc;
}

static struct MHD_Response *json_fixed(json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	struct MHD_Response *resp = text_response(text, strlen(text));

	json_decref(doc);
	return resp;
}

static void build_fixed(struct http_server *srv)
{
	srv->fixed[FIXED_OPENAPI] = json_fixed(http_openapi());
	srv->fixed[FIXED_HEALTH] = json_fixed(json_pack("{s:b, s:s}", "ok", 1, "store",
							srv->store_name));
}

static unsigned event_threads(const struct http_config *cfg)
{
	long n = cfg->threads ? (long)cfg->threads : sysconf(_SC_NPROCESSORS_ONLN);


	if (n < 1)
		return 1;
	return n > EVENT_THREADS_MAX ? EVENT_THREADS_MAX : (unsigned)n;
}

/*
 * MHD_OPTION_STRICT_FOR_CLIENT stays at 0: in 0.9.75 level 1 only adds a
 * 400 for a missing Host (which is answered here, 421, as JSON) and for a
 * space in the target (raw_target), and its own 400 for a missing Host
 * came out with its status line twice.  A libmicrohttpd with client
 * discipline levels (0.9.77 and later) is asked for level 1, which refuses
 * a NUL inside a header line.
 */
static struct MHD_Daemon *start_daemon(struct http_server *srv, int fd)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_TURBO;

	return MHD_start_daemon(flags, 0, NULL, NULL, on_access, srv,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_THREAD_POOL_SIZE, event_threads(srv->cfg),
				MHD_OPTION_CONNECTION_LIMIT, srv->conns.max + HTTP_CONN_SPARE,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				MHD_OPTION_NOTIFY_CONNECTION, http_conn_notify, srv,
				MHD_OPTION_URI_LOG_CALLBACK, raw_target, srv,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape, srv,
#if MHD_VERSION >= 0x00097701
				MHD_OPTION_CLIENT_DISCIPLINE_LVL, 1,
#endif
				MHD_OPTION_END);
}

/* A start-up line, "MESSAGE on URL": text, or under --log-format json an object like every other line. */
static void print_url_line(const struct http_server *srv, const char *message, const char *url)
{
	char now[32];
	json_t *o;
	char *text;

	if (!srv->cfg->log_json) {
		fprintf(stderr, "%s on %s\n", message, url);
		return;
	}
	sys_now_iso(now);
	o = json_pack("{s:s, s:s, s:s, s:s}", "time", now, "level", "info", "message", message,
		      "url", url);
	text = json_dumps(o, JSON_COMPACT);
	fprintf(stderr, "%s\n", text ? text : "{}");
	free(text);
	json_decref(o);
}

/* The first lines: where --metrics-listen serves, then where the server listens. */
static void print_listening(const struct http_server *srv)
{
	const struct http_listen *door = http_metrics_door_where(srv);
	int v6 = srv->where.addr.ss_family == AF_INET6 && strcmp(srv->where.host, "localhost");
	char url[160];

	if (door) {
		snprintf(url, sizeof(url), "http://%s%s%s:%u/metrics",
			 door->addr.ss_family == AF_INET6 ? "[" : "", door->host,
			 door->addr.ss_family == AF_INET6 ? "]" : "", door->port);
		print_url_line(srv, "metrics", url);
	}
	snprintf(url, sizeof(url), "http://%s%s%s:%u", v6 ? "[" : "", srv->where.host,
		 v6 ? "]" : "", srv->where.port);
	print_url_line(srv, "listening", url);
	fflush(stderr);
}

/* Finishes what was started: workers first, then requests still on the wire. */
static void shut_down(struct http_server *srv)
{
	int64_t deadline;

	atomic_store(&srv->stopping, 1);
	http_metrics_door_stop(srv);
	MHD_quiesce_daemon(srv->daemon);
	workq_stop(&srv->chat_pool);
	workq_stop(&srv->pool);
	http_mcp_listens_stop(srv->mcp_listens);     /* no worker opens one now */
	http_waits_stop(srv->waits);
	/* replies get a grace period, then end as interrupted; their readers get the end */
	chat_generations_shutdown(srv->rt);
	deadline = sys_monotonic_us() + SHUTDOWN_WAIT_US;
	while (atomic_load(&srv->inflight) > 0 && sys_monotonic_us() < deadline)
		usleep(10000);
	MHD_stop_daemon(srv->daemon);
}

static void wait_for_signal(const sigset_t *sigs)
{
	int sig;

	while (sigwait(sigs, &sig) == 0)
		if (sig == SIGINT || sig == SIGTERM)
			return;
}

static enum smr_rc check_config(struct http_server *srv, struct smr_err *err)
{
	const struct http_config *cfg = srv->cfg;
	enum smr_rc rc = http_parse_listen(cfg->listen, &srv->where, err);

	if (!rc)
		rc = http_trusted_parse(cfg->trusted_proxies, &srv->conns.trusted,
					&srv->conns.n_trusted, err);
	return rc;
}


enum smr_rc http_listen(const struct http_config *cfg, struct http_server **out,
			struct smr_err *err)
{
	struct http_server *srv = xcalloc(1, sizeof(*srv));
	enum smr_rc rc;

	srv->cfg = cfg;
	srv->fd = -1;
	srv->body_bytes_max = cfg->max_body * 32;
	pthread_mutex_init(&srv->ctx_lock, NULL);
	http_conns_init(&srv->conns, cfg);
	rc = check_config(srv, err);
	if (!rc)
		rc = check_store(srv, err);
	if (!rc)
		rc = http_open_listener(&srv->where, cfg->listen, &srv->fd, err);
	if (!rc)
		rc = http_metrics_door_open(srv, err);
	if (rc) {
		http_close(srv);
		return rc;
	}
	http_guard_init(&srv->guard, srv->where.host, srv->where.port, cfg->allowed_hosts,
			cfg->token);
	build_fixed(srv);
	srv->ui = http_ui_build();
	if (cfg->metrics)
		srv->metrics = http_metrics_new();
	srv->mcp_listens = http_mcp_listens_new(srv);
	srv->waits = http_waits_new(srv);
	*out = srv;
	return SMR_OK;
}

/* Starts the workers, then the daemon that hands them requests. */
static enum smr_rc start(struct http_server *srv, struct smr_err *err)
{
	enum smr_rc rc;

	srv->pool.run = srv->chat_pool.run = job_run;
	srv->pool.cancel = srv->chat_pool.cancel = job_cancel;
	srv->pool.name = "smr-worker";
	srv->chat_pool.name = "smr-chat";
	if (workq_start(&srv->pool, srv->cfg->workers, NULL) ||
	    workq_start(&srv->chat_pool, HTTP_CHAT_WORKERS, NULL))
		return smr_errf(err, SMR_EINTERNAL, "cannot start worker threads");
	rc = http_metrics_door_start(srv, err);
	if (rc)
		return rc;
	srv->daemon = start_daemon(srv, srv->fd);
	if (!srv->daemon)
		return smr_errf(err, SMR_EINTERNAL, "cannot start the HTTP server on %s",
				srv->cfg->listen);
	return SMR_OK;
}

enum smr_rc http_serve(struct http_server *srv, struct runtime *rt, struct smr_err *err)
{
	sigset_t sigs, old;
	enum smr_rc rc;

	srv->rt = rt;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	/* before any request thread exists, which then sees log.running set */
	srv->log.json = srv->cfg->log_json;
	if (srv->cfg->access_log && http_log_start(&srv->log))
		mhd_log_line(srv, "warning", "smriti",
			     "cannot start the log thread; logging without it");
	rc = ops_auth_keeper_start(srv->cfg->dsn, &srv->keeper, err);
	if (!rc)
		rc = ops_changes_start(srv->cfg->dsn, &srv->changes, err);
	if (!rc)
		ops_auth_keeper_tell(srv->keeper, srv->changes);
	if (!rc && http_conns_start(srv))
		rc = smr_errf(err, SMR_EINTERNAL, "cannot start the connection sweeper thread");
	if (!rc)
		rc = start(srv, err);
	if (!rc) {
		print_listening(srv);
		wait_for_signal(&sigs);
		shut_down(srv);
	} else {
		workq_stop(&srv->pool);
		workq_stop(&srv->chat_pool);
	}
	http_conns_stop(srv);
	http_log_stop(&srv->log);
	workq_free(&srv->pool);
	workq_free(&srv->chat_pool);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	http_close_contexts(srv);
	ops_auth_keeper_stop(srv->keeper);     /* after the last request */
	srv->keeper = NULL;
	ops_changes_stop(srv->changes);        /* after its subscribers (shut_down) */
	srv->changes = NULL;
	return rc;
}

void http_close(struct http_server *srv)
{
	if (!srv)
		return;
	for (int i = 0; i < 2; i++)
		if (srv->fixed[i])
			MHD_destroy_response(srv->fixed[i]);
	http_ui_free(srv->ui);
	http_mcp_listens_free(srv->mcp_listens);
	http_waits_free(srv->waits);
	http_metrics_door_free(srv);
	http_metrics_free(srv->metrics);
	http_guard_release(&srv->guard);
	if (srv->fd >= 0)
		close(srv->fd);
	pthread_mutex_destroy(&srv->ctx_lock);
	http_conns_release(&srv->conns);
	free(srv);
}
