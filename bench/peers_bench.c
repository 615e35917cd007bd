/*
 * peers_bench.c -- Smriti's side of the in-process comparison with
 * LangGraph.js's checkpoint savers (bench/peers.sh; the savers' side is
 * bench/peers/savers.mjs): one worker on one store handle, durable
 * checkpoint writes per second through ops_checkpoint_create, each naming
 * the parent it wrote before (a compare-and-swap on HEAD), then HEAD reads
 * per second through ops_head (what `smriti head` does), all with the
 * checkpoint document the savers store.
 *
 *   bench-peers DSN SPACE FIELDS.json WRITES READS
 *
 * The Space is created first and left in the store (bench/peers.sh then
 * reads it with a cold `smriti head`).  Prints one JSON line:
 * {"write_per_s", "read_per_s", "read_cpu_us" (CPU time per read, which a
 * loaded machine changes less than the rate), "max_rss_kb"}.
 */
#include "ops/ops.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define WARM_WRITES 20
#define WARM_READS 200

/* Writes n checkpoints titled "step I", each on top of *parent (updated). */
static int write_loop(struct ops_ctx *ctx, const char *space, json_t *fields, long n,
		      char **parent, struct smr_err *err)
{
	struct checkpoint c;
	char title[32];

	for (long i = 0; i < n; i++) {
		snprintf(title, sizeof(title), "step %ld", i);
		json_object_set_new(fields, "title", json_string(title));
		memset(&c, 0, sizeof(c));
		if (ops_checkpoint_create(ctx, space, fields, *parent, "bench", &c, err)) {
			checkpoint_release(&c);
			return -1;
		}
		free(*parent);
		*parent = xstrdup(c.hash);
		checkpoint_release(&c);
	}
	return 0;
}

static int read_loop(struct ops_ctx *ctx, const char *space, long n, struct smr_err *err)
{
	struct checkpoint c;

	for (long i = 0; i < n; i++) {
		memset(&c, 0, sizeof(c));
		if (ops_head(ctx, space, &c, err)) {
			checkpoint_release(&c);
			return -1;
		}
		checkpoint_release(&c);
	}
	return 0;
}

static double per_second(long n, int64_t t0, int64_t t1)
{
	return t1 > t0 ? (double)n * 1e6 / (double)(t1 - t0) : 0;
}

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * Runs both loops after a warm-up; rates[0] writes/s, rates[1] reads/s,
 * rates[2] CPU us per read.
 */
static int measure(struct ops_ctx *ctx, const char *space, json_t *fields, long writes,
		   long reads, double rates[3], struct smr_err *err)
{
	char *parent = NULL;
	int64_t t0, t1;
	double cpu0;
	int rc;

	rc = write_loop(ctx, space, fields, WARM_WRITES, &parent, err) ||
	     read_loop(ctx, space, WARM_READS, err);
	t0 = sys_monotonic_us();
	rc = rc || write_loop(ctx, space, fields, writes, &parent, err);
	t1 = sys_monotonic_us();
	rates[0] = per_second(writes, t0, t1);
	cpu0 = cpu_us();
	rc = rc || read_loop(ctx, space, reads, err);
	rates[1] = per_second(reads, t1, sys_monotonic_us());
	rates[2] = (cpu_us() - cpu0) / (double)reads;
	free(parent);
	return rc ? -1 : 0;
}

static int create_space(struct ops_ctx *ctx, const char *space, struct smr_err *err)
{
	struct space sp;
	int rc;

	memset(&sp, 0, sizeof(sp));
	rc = ops_space_create(ctx, space, "peer comparison", &sp, err);
	space_release(&sp);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct rusage ru;
	json_error_t jerr;
	json_t *fields;
	double rates[3] = { 0, 0, 0 };
	int rc;

	if (argc != 6 || atol(argv[4]) < 1 || atol(argv[5]) < 1) {
		fprintf(stderr, "usage: bench-peers DSN SPACE FIELDS.json WRITES READS\n");
		return 2;
	}
	fields = json_load_file(argv[3], 0, &jerr);
	if (!json_is_object(fields)) {
		fprintf(stderr, "bench-peers: '%s': %s\n", argv[3], fields ? "not an object" : jerr.text);
		json_decref(fields);
		return 1;
	}
	/* ops_open, as every transport opens Smriti (with what a context keeps between calls) */
	if (ops_open(&ctx, argv[1], NULL, &err)) {
		fprintf(stderr, "bench-peers: cannot open '%s': %s\n", argv[1], err.msg);
		json_decref(fields);
		return 1;
	}
	rc = create_space(ctx, argv[2], &err) ||
	     measure(ctx, argv[2], fields, atol(argv[4]), atol(argv[5]), rates, &err);
	ops_close(ctx);
	json_decref(fields);
	if (rc) {
		fprintf(stderr, "bench-peers: %s\n", err.msg);
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"write_per_s\": %.1f, \"read_per_s\": %.1f, \"read_cpu_us\": %.1f,"
	       " \"max_rss_kb\": %ld}\n", rates[0], rates[1], rates[2], ru.ru_maxrss);
	return 0;
}
