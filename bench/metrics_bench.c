/*
 * metrics_bench.c -- what counting one request costs: http_metrics_count()
 * (the three relaxed atomic additions on_completed makes per request, with
 * the clock read that feeds its histogram), called by 1 thread and then by
 * 2 threads on the same route, as the event threads of a loaded server do,
 * so the counters' cache lines bounce between cores.  The baseline in the
 * same run is the same loop reading the clock alone.  bench/metrics.sh
 * prints the result beside the server's CPU time per request, to put the
 * nanoseconds in proportion.
 *
 *   bench-metrics [CALLS]     (default 20000000 per thread)
 */
#include "http/http_int.h"
#include "util/sys.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct arg {
	struct http_metrics *m;      /* NULL: the clock alone */
	long calls;
	int64_t sink;
};

static void *loop(void *p)
{
	struct arg *a = p;

	for (long i = 0; i < a->calls; i++) {
		int64_t t = sys_monotonic_us();

		if (a->m)
			http_metrics_count(a->m, &http_routes[0], http_routes[0].method, 200, t & 1023);
		a->sink += t;
	}
	return NULL;
}

/* ns per call with n threads each making calls; m NULL for the baseline. */
static double run(struct http_metrics *m, int n, long calls)
{
	pthread_t th[2];
	struct arg a[2] = { { m, calls, 0 }, { m, calls, 0 } };
	int64_t t0 = sys_monotonic_us();

	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, loop, &a[i]);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return (double)(sys_monotonic_us() - t0) * 1000.0 / (double)calls;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000000L;
	struct http_metrics *m = http_metrics_new();
	double base1, base2, on1, on2;

	if (calls <= 0)
		calls = 20000000L;
	base1 = run(NULL, 1, calls);
	on1 = run(m, 1, calls);
	base2 = run(NULL, 2, calls);
	on2 = run(m, 2, calls);
	printf("counting one request (http_metrics_count), %ld calls per thread:\n", calls);
	printf("  1 thread:  %.1f ns per call, clock alone %.1f ns: counting adds %.1f ns\n", on1,
	       base1, on1 - base1);
	printf("  2 threads: %.1f ns per call, clock alone %.1f ns: counting adds %.1f ns"
	       " (shared cache lines)\n", on2, base2, on2 - base2);
	http_metrics_free(m);
	return 0;
}
