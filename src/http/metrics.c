/*
 * metrics.c -- GET /metrics: the server's request counters and the
 * process-wide ones of util/metrics.h, in the Prometheus text format.
 *
 * Requests are counted by route template (never the raw path, so an id
 * does not make a new series), method and status, with a latency histogram
 * per route.  Counting is on the hot path of every request, so it is a few
 * relaxed atomic additions into arrays sized once at start-up: no lock, no
 * allocation (bench/metrics.sh measures what it costs).
 *
 * On the main listener /metrics is the administrator's (routes.c): its
 * counters show everyone's activity.  --metrics-listen serves it alone on
 * a listener of its own (the end of this file).
 */
#include "http/http_int.h"
#include "util/metrics.h"
#include "util/sys.h"
#include "util/xalloc.h"
#include "version.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATUS_MIN 100
#define STATUS_SPAN 500             /* 100..599 */

/*
 * A request no route matched is counted under its method, so a scan of
 * POSTs stands apart from stray GETs; any other method is "other".
 */
static const char *const unmatched_methods[] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other",
};

#define UNMATCHED (sizeof(unmatched_methods) / sizeof(*unmatched_methods))

struct http_metrics {
	size_t n_routes;                 /* http_routes; then UNMATCHED slots, one a method */
	atomic_uint_fast64_t *requests;  /* [route][status - STATUS_MIN] */
	struct metrics_hist *latency;    /* [route] */
	int64_t started_us;              /* wall clock at start, for process_start_time */
};

struct http_metrics *http_metrics_new(void)
{
	struct http_metrics *m = xcalloc(1, sizeof(*m));

	while (http_routes[m->n_routes].method)
		m->n_routes++;
	m->requests = xcalloc((m->n_routes + UNMATCHED) * STATUS_SPAN, sizeof(*m->requests));
	m->latency = xcalloc(m->n_routes + UNMATCHED, sizeof(*m->latency));
	m->started_us = sys_realtime_us();
	return m;
}

void http_metrics_free(struct http_metrics *m)
{
	if (!m)
		return;
	free(m->requests);
	free(m->latency);
	free(m);
}

/* The slot of a request for method that matched no route. */
static size_t unmatched_slot(const struct http_metrics *m, const char *method)
{
	size_t k = 0;

	while (k < UNMATCHED - 1 && strcmp(method ? method : "", unmatched_methods[k]))
		k++;
	return m->n_routes + k;
}

void http_metrics_count(struct http_metrics *m, const struct http_route *route,
			const char *method, int status, int64_t us)
{
	size_t i = route ? (size_t)(route - http_routes) : unmatched_slot(m, method);

	if (status < STATUS_MIN || status >= STATUS_MIN + STATUS_SPAN)
		status = 599;            /* connection closed before an answer: none was sent */
	atomic_fetch_add_explicit(&m->requests[i * STATUS_SPAN + (size_t)(status - STATUS_MIN)], 1,
				  memory_order_relaxed);
	metrics_hist_observe(&m->latency[i], us);
}

static void route_labels(const struct http_metrics *m, size_t i, char *out, size_t size)
{
	if (i < m->n_routes)
		snprintf(out, size, "method=\"%s\",route=\"%s\"", http_routes[i].method,
			 http_routes[i].pattern);
	else
		snprintf(out, size, "method=\"%s\",route=\"unmatched\"",
			 unmatched_methods[i - m->n_routes]);
}

static int route_seen(const struct http_metrics *m, size_t i)
{
	for (size_t s = 0; s < STATUS_SPAN; s++)
		if (atomic_load_explicit(&m->requests[i * STATUS_SPAN + s], memory_order_relaxed))
			return 1;
	return 0;
}

static void render_requests(const struct http_metrics *m, struct buf *out)
{
	char labels[256];

	buf_adds(out, "# HELP smriti_http_requests_total HTTP requests answered, by route template"
		      " and status (599: the connection closed first).\n"
		      "# TYPE smriti_http_requests_total counter\n");
	for (size_t i = 0; i < m->n_routes + UNMATCHED; i++) {
		route_labels(m, i, labels, sizeof(labels));
		for (size_t s = 0; s < STATUS_SPAN; s++) {
			uint_fast64_t n = atomic_load_explicit(&m->requests[i * STATUS_SPAN + s],
							       memory_order_relaxed);

			if (n)
				buf_addf(out, "smriti_http_requests_total{%s,status=\"%zu\"} %llu\n",
					 labels, s + STATUS_MIN, (unsigned long long)n);
		}
	}
	buf_adds(out, "# HELP smriti_http_request_seconds Time from a request's arrival to its"
		      " answer, by route template.\n"
		      "# TYPE smriti_http_request_seconds histogram\n");
	for (size_t i = 0; i < m->n_routes + UNMATCHED; i++) {
		if (!route_seen(m, i))
			continue;
		route_labels(m, i, labels, sizeof(labels));
		metrics_hist_render(out, "smriti_http_request_seconds", labels, &m->latency[i]);
	}
}

/* The process_* family every Prometheus exporter has (names as client_golang's). */
static void render_process(struct buf *out)
{
	struct sys_process p;

	if (sys_process_stats(&p))
		return;             /* no /proc: say nothing rather than zeroes */
	buf_addf(out, "# HELP process_cpu_seconds_total Total user and system CPU time spent in"
		      " seconds.\n# TYPE process_cpu_seconds_total counter\n"
		      "process_cpu_seconds_total %.6f\n", p.cpu_seconds);
	buf_addf(out, "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		      "# TYPE process_resident_memory_bytes gauge\n"
		      "process_resident_memory_bytes %lld\n", p.resident_bytes);
	buf_addf(out, "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
		      "# TYPE process_virtual_memory_bytes gauge\n"
		      "process_virtual_memory_bytes %lld\n", p.virtual_bytes);
	buf_addf(out, "# HELP process_open_fds Number of open file descriptors.\n"
		      "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n", p.open_fds);
	if (p.max_fds >= 0)
		buf_addf(out, "# HELP process_max_fds Maximum number of open file descriptors.\n"
			      "# TYPE process_max_fds gauge\nprocess_max_fds %ld\n", p.max_fds);
}

char *http_metrics_render(const struct http_metrics *m, int inflight, size_t *len)
{
	struct buf out = BUF_INIT(0);

	buf_addf(&out, "# HELP smriti_build_info The running version.\n"
		       "# TYPE smriti_build_info gauge\nsmriti_build_info{version=\"%s\"} 1\n",
		 SMRITI_VERSION);
	buf_addf(&out, "# HELP process_start_time_seconds Start time of the process since the"
		       " Unix epoch.\n# TYPE process_start_time_seconds gauge\n"
		       "process_start_time_seconds %.3f\n", (double)m->started_us / 1e6);
	render_process(&out);
	buf_addf(&out, "# HELP smriti_http_requests_in_flight Requests admitted and not answered"
		       " yet (this one included).\n# TYPE smriti_http_requests_in_flight gauge\n"
		       "smriti_http_requests_in_flight %d\n", inflight);
	render_requests(m, &out);
	metrics_render(&out, provider_names, PROVIDER_KINDS);
	return buf_detach(&out, len);
}

/* ---- --metrics-listen: GET /metrics alone on a listener of its own ---- */

/*
 * A Prometheus scraping the main listener would have to hold the
 * administrator's token (every right).  The door serves the counters and
 * nothing else, without a token, where the operator puts it: loopback
 * unless told otherwise, as Prometheus exporters are deployed.  It still
 * checks Host (a web page reaching a loopback port by DNS rebinding reads
 * nothing) and takes GET and HEAD only.
 */
#define DOOR_CONNECTIONS 16
#define DOOR_TIMEOUT_S 10
#define DOOR_DEFAULT_HOST "127.0.0.1"

struct http_metrics_door {
	struct http_listen where;
	struct http_guard guard;
	int fd;
	struct MHD_Daemon *daemon;
};

/* A {"error":{code,message}} answer on conn. */
static enum MHD_Result door_error(struct MHD_Connection *conn, unsigned status,
				  const char *code, const char *msg)
{
	json_t *doc = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
	char *text = json_dumps(doc, JSON_COMPACT);
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	json_decref(doc);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (status == 405)
		MHD_add_response_header(resp, "Allow", "GET, HEAD");
	ok = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ok;
}

static enum MHD_Result door_metrics(struct http_server *srv, struct MHD_Connection *conn)
{
	size_t len;
	char *text = http_metrics_render(srv->metrics, atomic_load(&srv->inflight), &len);
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	ok = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp);
	return ok;
}

static enum MHD_Result door_access(void *cls, struct MHD_Connection *conn, const char *url,
				   const char *method, const char *version,
				   const char *upload, size_t *upload_size, void **state)
{
	struct http_server *srv = cls;
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");

	(void)version;
	(void)upload;
	if (!*state) {                  /* the head is in: answer once the body (if any) is */
		*state = srv;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;       /* a body is read and dropped */
		return MHD_YES;
	}
	if (!http_guard_host(&srv->door->guard, host))
		return door_error(conn, 421, "misdirected",
				  "this listener does not answer to that Host header");
	if (strcmp(url, "/metrics"))
		return door_error(conn, 404, "not_found",
				  "this listener serves GET /metrics only (--metrics-listen)");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return door_error(conn, 405, "method_not_allowed",
				  "/metrics takes GET (or HEAD)");
	return door_metrics(srv, conn);
}

enum smr_rc http_metrics_door_open(struct http_server *srv, struct smr_err *err)
{
	const char *spec = srv->cfg->metrics_listen;
	struct http_metrics_door *d;
	char *full = NULL;
	enum smr_rc rc;

	if (!spec)
		return SMR_OK;
	if (!srv->cfg->metrics)
		return smr_errf(err, SMR_EUSAGE, "--metrics-listen serves the metrics that"
				" --no-metrics turns off; give one or the other");
	if (strspn(spec, "0123456789") == strlen(spec))   /* a port alone: loopback */
		spec = full = xasprintf(DOOR_DEFAULT_HOST ":%s", spec);
	d = xcalloc(1, sizeof(*d));
	d->fd = -1;
	rc = http_parse_listen(spec, &d->where, err);
	if (!rc)
		rc = http_open_listener(&d->where, spec, &d->fd, err);
	free(full);
	if (rc) {
		free(d);
		return smr_err_prefix(err, rc, "--metrics-listen: ");
	}
	http_guard_init(&d->guard, d->where.host, d->where.port, NULL, NULL);
	srv->door = d;
	return SMR_OK;
}

enum smr_rc http_metrics_door_start(struct http_server *srv, struct smr_err *err)
{
	struct http_metrics_door *d = srv->door;

	if (!d)
		return SMR_OK;
	/* no MHD_USE_ERROR_LOG: the server's log (and its format) is the main listener's */
	d->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
				     0, NULL, NULL, door_access, srv,
				     MHD_OPTION_LISTEN_SOCKET, d->fd,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)DOOR_CONNECTIONS,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)DOOR_TIMEOUT_S,
				     MHD_OPTION_END);
	if (!d->daemon)
		return smr_errf(err, SMR_EINTERNAL, "cannot start the metrics listener on %s:%u",
				d->where.host, d->where.port);
	return SMR_OK;
}

const struct http_listen *http_metrics_door_where(const struct http_server *srv)
{
	return srv->door ? &srv->door->where : NULL;
}

void http_metrics_door_stop(struct http_server *srv)
{
	if (srv->door && srv->door->daemon) {
		MHD_stop_daemon(srv->door->daemon);
		srv->door->daemon = NULL;
	}
}

void http_metrics_door_free(struct http_server *srv)
{
	if (!srv->door)
		return;
	http_metrics_door_stop(srv);
	http_guard_release(&srv->door->guard);
	if (srv->door->fd >= 0)
		close(srv->door->fd);
	free(srv->door);
	srv->door = NULL;
}
