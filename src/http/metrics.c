/*
 * metrics.c -- GET /metrics: the server's request counters and the
 * process-wide ones of util/metrics.h, in the Prometheus text format.
 *
 * Requests are counted by route template (never the raw path, so an id
 * does not make a new series), method and status, with a latency histogram
 * per route.  Counting is on the hot path of every request, so it is a few
 * relaxed atomic additions into arrays sized once at start-up: no lock, no
 * allocation (bench/metrics.sh measures what it costs).
 */
#include "http/internal.h"
#include "util/metrics.h"
#include "util/sys.h"
#include "util/xalloc.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>

#define STATUS_MIN 100
#define STATUS_SPAN 500             /* 100..599 */

struct http_metrics {
	size_t n_routes;                 /* http_routes; index n_routes: no route matched */
	atomic_uint_fast64_t *requests;  /* [route][status - STATUS_MIN] */
	struct metrics_hist *latency;    /* [route] */
	int64_t started_us;              /* wall clock at start, for process_start_time */
};

struct http_metrics *http_metrics_new(void)
{
	struct http_metrics *m = xcalloc(1, sizeof(*m));

	while (http_routes[m->n_routes].method)
		m->n_routes++;
	m->requests = xcalloc((m->n_routes + 1) * STATUS_SPAN, sizeof(*m->requests));
	m->latency = xcalloc(m->n_routes + 1, sizeof(*m->latency));
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

void http_metrics_count(struct http_metrics *m, const struct http_route *route, int status,
			int64_t us)
{
	size_t i = route ? (size_t)(route - http_routes) : m->n_routes;

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
		snprintf(out, size, "method=\"\",route=\"unmatched\"");
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
	for (size_t i = 0; i <= m->n_routes; i++) {
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
	for (size_t i = 0; i <= m->n_routes; i++) {
		if (!route_seen(m, i))
			continue;
		route_labels(m, i, labels, sizeof(labels));
		metrics_hist_render(out, "smriti_http_request_seconds", labels, &m->latency[i]);
	}
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
	buf_addf(&out, "# HELP smriti_http_requests_in_flight Requests admitted and not answered"
		       " yet (this one included).\n# TYPE smriti_http_requests_in_flight gauge\n"
		       "smriti_http_requests_in_flight %d\n", inflight);
	render_requests(m, &out);
	metrics_render(&out);
	return buf_detach(&out, len);
}
