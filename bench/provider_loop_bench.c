/*
 * provider_loop_bench.c -- the provider loop alone (src/provider/loop.h):
 * how many streamed replies it carries at once against the fake provider
 * trickling each reply over a few seconds, at what memory and CPU cost, and
 * how long a delta takes from the fake's write to our callback.
 *
 *   bench-provider_loop PORT [STREAMS [TRICKLE_MS [DELTAS]]]   (see provider_loop.sh)
 *
 * Two runs on one loop: a single stream first (the baseline), then STREAMS
 * at once (default 500, each DELTAS deltas (50) over TRICKLE_MS (5000)).
 * The fake writes the time it sends each delta into the delta's text
 * (`stamp`), so the latency is our callback's clock minus the fake's, on the
 * same machine.  Memory is this process's resident set: before the run, at
 * the peak of it (VmHWM), and the growth per stream.
 */
#include "provider/loop.h"
#include "util/buf.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct run {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ended, complete, failed;
	int64_t *lat_us;        /* delta latencies, appended by the loop thread */
	size_t n_lat, cap_lat;
	struct smr_err first_error;
};

static int64_t epoch_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void on_delta(void *ud, const char *text, size_t len)
{
	struct run *r = ud;
	int64_t now = epoch_us(), sent = strtoll(text, NULL, 10);

	(void)len;
	if (sent > 0 && r->n_lat < r->cap_lat)
		r->lat_us[r->n_lat++] = now - sent;
}

static void on_end(struct run *r, const struct provider_outcome *o)
{
	pthread_mutex_lock(&r->lock);
	r->ended++;
	if (o->end == PROVIDER_END_COMPLETE) {
		r->complete++;
	} else {
		if (!r->failed++ && o->err)
			r->first_error = *o->err;
	}
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static void on_done(void *ud, const struct provider_outcome *o)
{
	on_end(ud, o);
}

static void on_error(void *ud, const struct provider_outcome *o)
{
	on_end(ud, o);
}

static size_t discard(char *data, size_t size, size_t nmemb, void *ud)
{
	(void)data;
	(void)ud;
	return size * nmemb;
}

/* Resets the fake and queues n copies of step. */
static int script_fake(int port, int n, const char *step)
{
	struct buf body = BUF_INIT(0);
	char url[96];
	CURL *c = curl_easy_init();
	long status = 0;

	buf_adds(&body, "{\"steps\":[");
	for (int i = 0; i < n; i++)
		buf_addf(&body, "%s%s", i ? "," : "", step);
	buf_adds(&body, "]}");
	for (int k = 0; k < 2; k++) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/_control/%s", port,
			 k ? "script" : "reset");
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, k ? body.ptr : "{}");
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
		if (curl_easy_perform(c) || (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status),
					     status != 200))
			break;
	}
	curl_easy_cleanup(c);
	buf_release(&body);
	return status == 200 ? 0 : -1;
}

/* Resident set now and at its peak, in KiB, from /proc/self/status. */
static void rss_kib(long *now, long *peak)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];

	*now = *peak = -1;
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "VmRSS: %ld", now);
		sscanf(line, "VmHWM: %ld", peak);
	}
	if (f)
		fclose(f);
}

static double cpu_s(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
	       (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t percentile(int64_t *v, size_t n, double q)
{
	if (!n)
		return -1;
	return v[(size_t)(q * (double)(n - 1))];
}

struct figures {
	int complete, failed;
	double wall_s, cpu_s;
	int64_t p50_us, p99_us;
	size_t deltas;
	long rss_before, rss_peak;
};

static void start_all(struct provider *p, struct run *r, int streams,
		      struct provider_stream **handles)
{
	static const struct provider_msg msg = { "user", "stream please" };
	static const struct provider_stream_cbs cbs = { on_delta, NULL, on_done, on_error };
	struct provider_req req = { .model = "bench", .msgs = &msg, .n_msgs = 1,
				    .temperature = -1 };
	struct smr_err err = SMR_ERR_INIT;

	for (int i = 0; i < streams; i++) {
		if (provider_stream_start(p, &req, &cbs, r, &handles[i], &err)) {
			fprintf(stderr, "bench-provider_loop: %s\n", err.msg);
			exit(1);
		}
	}
}

static struct figures run_streams(struct provider *p, int port, int streams, int trickle_ms,
				  int deltas)
{
	struct provider_stream **handles = xcalloc((size_t)streams, sizeof(*handles));
	struct run r = { .cap_lat = (size_t)streams * (size_t)deltas + 16 };
	struct figures f = { 0 };
	struct buf step = BUF_INIT(0);
	double c0;
	int64_t t0;
	long now;

	/* a reply of DELTAS words, each delta's text replaced by its send time */
	buf_adds(&step, "{\"reply\":\"");
	for (int i = 0; i < deltas; i++)
		buf_adds(&step, "word ");
	buf_addf(&step, "\",\"deltas\":%d,\"trickle_ms\":%d,\"stamp\":true}", deltas, trickle_ms);
	if (script_fake(port, streams, step.ptr)) {
		fprintf(stderr, "bench-provider_loop: no fake provider on port %d\n", port);
		exit(1);
	}
	buf_release(&step);
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	r.lat_us = xcalloc(r.cap_lat, sizeof(*r.lat_us));
	rss_kib(&f.rss_before, &now);
	c0 = cpu_s();
	t0 = sys_monotonic_us();
	start_all(p, &r, streams, handles);
	pthread_mutex_lock(&r.lock);
	while (r.ended < streams)
		pthread_cond_wait(&r.cond, &r.lock);
	pthread_mutex_unlock(&r.lock);
	f.wall_s = (double)(sys_monotonic_us() - t0) / 1e6;
	f.cpu_s = cpu_s() - c0;
	rss_kib(&now, &f.rss_peak);
	f.complete = r.complete;
	f.failed = r.failed;
	if (r.failed)
		fprintf(stderr, "  first failure: %s\n", r.first_error.msg);
	qsort(r.lat_us, r.n_lat, sizeof(*r.lat_us), cmp_i64);
	f.deltas = r.n_lat;
	f.p50_us = percentile(r.lat_us, r.n_lat, 0.5);
	f.p99_us = percentile(r.lat_us, r.n_lat, 0.99);
	for (int i = 0; i < streams; i++)
		provider_stream_release(handles[i]);
	free(handles);
	free(r.lat_us);
	pthread_mutex_destroy(&r.lock);
	pthread_cond_destroy(&r.cond);
	return f;
}

static void print(const char *what, int streams, const struct figures *f)
{
	printf("%-9s %5d streams: %5d complete, %d failed, %.2f s wall, %.2f s CPU (%.1f us per "
	       "delta), %zu deltas, delta latency median %lld us, p99 %lld us, RSS %ld KiB before, "
	       "peak %ld KiB\n", what, streams, f->complete, f->failed, f->wall_s, f->cpu_s,
	       f->deltas ? f->cpu_s * 1e6 / (double)f->deltas : 0.0, f->deltas,
	       (long long)f->p50_us, (long long)f->p99_us, f->rss_before, f->rss_peak);
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 0;
	int streams = argc > 2 ? atoi(argv[2]) : 500;
	int trickle_ms = argc > 3 ? atoi(argv[3]) : 5000;
	int deltas = argc > 4 ? atoi(argv[4]) : 50;
	struct provider_cfg cfg;
	struct figures one, many;
	struct provider *p;

	if (port <= 0 || streams <= 0 || trickle_ms < 0 || deltas <= 0) {
		fprintf(stderr, "usage: bench-provider_loop PORT [STREAMS [TRICKLE_MS [DELTAS]]]\n");
		return 2;
	}
	provider_cfg_defaults(&cfg);
	cfg.base_url = xasprintf("http://127.0.0.1:%d/v1", port);
	cfg.api_key = xstrdup("sk-bench");
	p = provider_new("openai", &cfg);
	one = run_streams(p, port, 1, trickle_ms, deltas);
	print("baseline", 1, &one);
	many = run_streams(p, port, streams, trickle_ms, deltas);
	print("loaded", streams, &many);
	printf("ratios: median delta latency %.2fx the single stream's, p99 %.2fx; RSS growth %.1f "
	       "KiB per stream in flight\n",
	       (double)many.p50_us / (double)(one.p50_us > 0 ? one.p50_us : 1),
	       (double)many.p99_us / (double)(one.p99_us > 0 ? one.p99_us : 1),
	       (double)(many.rss_peak - many.rss_before) / streams);
	provider_free(p);
	curl_global_cleanup();
	return many.complete == streams ? 0 : 1;
}
