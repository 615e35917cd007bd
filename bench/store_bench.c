/*
 * store_bench.c -- PostgreSQL next to SQLite in the same run: checkpoint
 * commits per second and HEAD reads per second through the operations layer
 * (ops_checkpoint_create with the parent it read, a compare-and-swap on
 * HEAD; ops_head, what `smriti head` and GET .../head do), with 1 and with
 * THREADS workers, each worker on its own store handle as the server's
 * workers are.
 *
 *   bench-store [-u] [-n COMMITS] [-r READS] [-t THREADS] NAME=DSN...
 *
 * -u: the commits are patches on HEAD (ops_checkpoint_update without a
 * parent: HEAD locked and read, the patch applied, the result written in
 * the same transaction), as `smriti update` and MCP's update_checkpoint
 * write them.
 *
 * e.g. bench-store sqlite=/tmp/b.db postgres=postgres://smriti@127.0.0.1:5432/smriti
 * Each worker commits into a Space of its own (no conflicts: this measures
 * the write path, not retries).  bench/store_pg.sh runs it on a throwaway
 * cluster and a temporary SQLite file.
 */
#include "ops/context.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BACKENDS 4
#define MAX_THREADS 64

struct job {
	const char *dsn;
	char space[64];
	long count;
	int commit;         /* 1: commits, 0: head reads */
	int patch;          /* commits are patches on HEAD (-u) */
	int failed;
	char msg[512];
};

static void fail(struct job *j, const struct smr_err *err)
{
	j->failed = 1;
	snprintf(j->msg, sizeof(j->msg), "%s", err->msg);
}

static void patch_loop(struct job *j, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;
	char title[32];
	json_t *patch;

	for (long i = 0; i < j->count && !j->failed; i++) {
		snprintf(title, sizeof(title), "step %ld", i);
		patch = json_pack("{s:s, s:{s:I}}", "title", title, "metadata", "i", (json_int_t)i);
		memset(&c, 0, sizeof(c));
		if (ops_checkpoint_update(ctx, j->space, patch, NULL, "bench", &c, NULL, &err))
			fail(j, &err);
		checkpoint_release(&c);
		json_decref(patch);
	}
}

static void commit_loop(struct job *j, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;
	char *parent = NULL;
	json_t *fields;

	for (long i = 0; i < j->count && !j->failed; i++) {
		fields = json_pack("{s:s, s:[s], s:[s], s:{s:I}}", "title", "step",
				   "decisions", "keep going", "tasks", "measure",
				   "metadata", "i", (json_int_t)i);
		memset(&c, 0, sizeof(c));
		if (ops_checkpoint_create(ctx, j->space, fields, parent, "bench", &c, &err))
			fail(j, &err);
		free(parent);
		parent = xstrdup(c.hash);
		checkpoint_release(&c);
		json_decref(fields);
	}
	free(parent);
}

static void read_loop(struct job *j, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;

	for (long i = 0; i < j->count && !j->failed; i++) {
		memset(&c, 0, sizeof(c));
		if (ops_head(ctx, j->space, &c, &err))
			fail(j, &err);
		checkpoint_release(&c);
	}
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;

	if (store_open(j->dsn, &st, &err)) {
		fail(j, &err);
		return NULL;
	}
	ops_open_on(&ctx, st, NULL, NULL);
	if (j->commit && j->patch)
		patch_loop(j, ctx);
	else if (j->commit)
		commit_loop(j, ctx);
	else
		read_loop(j, ctx);
	ops_close(ctx);
	store_close(st);
	return NULL;
}

/* Runs threads workers of count operations each; returns operations per second (0 on error). */
static int patches;   /* -u */

static double run(const char *dsn, const char *tag, int threads, long count, int commit)
{
	struct job jobs[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	int64_t t0, t1;
	int failed = 0;

	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < threads; i++) {
		jobs[i].dsn = dsn;
		jobs[i].count = count;
		jobs[i].commit = commit;
		jobs[i].patch = patches;
		snprintf(jobs[i].space, sizeof(jobs[i].space), "bench-%s-%d", tag, i);
	}
	t0 = sys_monotonic_us();
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, &jobs[i]);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	t1 = sys_monotonic_us();
	for (int i = 0; i < threads; i++) {
		if (jobs[i].failed) {
			fprintf(stderr, "bench-store: %s: %s\n", dsn, jobs[i].msg);
			failed = 1;
		}
	}
	if (failed || t1 <= t0)
		return 0;
	return (double)threads * (double)count * 1e6 / (double)(t1 - t0);
}

/* Creates the Spaces the workers use, each with one checkpoint so HEAD exists. */
static int prepare(const char *dsn, const char *tag, int threads)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;
	struct space sp;
	struct checkpoint c;
	char name[64];
	int rc = 0;

	if (store_open(dsn, &st, &err)) {
		fprintf(stderr, "bench-store: cannot open %s: %s\n", dsn, err.msg);
		return -1;
	}
	ops_open_on(&ctx, st, NULL, NULL);
	for (int i = 0; i < threads && !rc; i++) {
		json_t *fields = json_pack("{s:s}", "title", "start");

		snprintf(name, sizeof(name), "bench-%s-%d", tag, i);
		memset(&sp, 0, sizeof(sp));
		memset(&c, 0, sizeof(c));
		rc = ops_space_create(ctx, name, "benchmark", &sp, &err) ||
		     ops_checkpoint_create(ctx, name, fields, NULL, "bench", &c, &err);
		if (rc)
			fprintf(stderr, "bench-store: %s: %s\n", dsn, err.msg);
		space_release(&sp);
		checkpoint_release(&c);
		json_decref(fields);
	}
	ops_close(ctx);
	store_close(st);
	return rc ? -1 : 0;
}

struct row {
	const char *name;
	double rate[4];     /* commits x1, commits xT, reads x1, reads xT */
};

static int measure(struct row *r, const char *dsn, int threads, long commits, long reads)
{
	char tag[32];
	char unique[37];

	sys_uuid(unique);
	snprintf(tag, sizeof(tag), "%.8s", unique);
	if (prepare(dsn, tag, threads))
		return -1;
	r->rate[0] = run(dsn, tag, 1, commits, 1);
	r->rate[1] = run(dsn, tag, threads, commits, 1);
	r->rate[2] = run(dsn, tag, 1, reads, 0);
	r->rate[3] = run(dsn, tag, threads, reads, 0);
	for (int i = 0; i < 4; i++)
		if (r->rate[i] <= 0)
			return -1;
	return 0;
}

static void print_table(const struct row *rows, int n, int threads)
{
	const char *w = patches ? "patches/s" : "commits/s";

	printf("%-10s %14s %14s %14s %14s\n", "backend", w, w, "head reads/s", "head reads/s");
	printf("%-10s %14s %14d %14s %14d\n", "", "1 worker", threads, "1 worker", threads);
	for (int i = 0; i < n; i++)
		printf("%-10s %14.0f %14.0f %14.0f %14.0f\n", rows[i].name, rows[i].rate[0],
		       rows[i].rate[1], rows[i].rate[2], rows[i].rate[3]);
	for (int i = 1; i < n; i++)
		printf("%-10s %13.2fx %13.2fx %13.2fx %13.2fx\n", "ratio", rows[i].rate[0] /
		       rows[0].rate[0], rows[i].rate[1] / rows[0].rate[1], rows[i].rate[2] /
		       rows[0].rate[2], rows[i].rate[3] / rows[0].rate[3]);
	if (n > 1)
		printf("(ratio: %s / %s)\n", rows[1].name, rows[0].name);
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-store [-u] [-n COMMITS] [-r READS] [-t THREADS] NAME=DSN...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct row rows[MAX_BACKENDS];
	long commits = 300, reads = 3000;
	int threads = 4, n = 0, opt;

	while ((opt = getopt(argc, argv, "un:r:t:")) != -1) {
		if (opt == 'u')
			patches = 1;
		else if (opt == 'n')
			commits = strtol(optarg, NULL, 10);
		else if (opt == 'r')
			reads = strtol(optarg, NULL, 10);
		else if (opt == 't')
			threads = (int)strtol(optarg, NULL, 10);
		else
			return usage();
	}
	if (optind == argc || argc - optind > MAX_BACKENDS || commits < 1 || reads < 1 ||
	    threads < 1 || threads > MAX_THREADS)
		return usage();
	for (int i = optind; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			return usage();
		*eq = '\0';
		rows[n].name = argv[i];
		if (measure(&rows[n], eq + 1, threads, commits, reads))
			return 1;
		n++;
	}
	printf("%ld %s and %ld head reads per worker; every commit is durable"
	       " (SQLite synchronous=FULL, PostgreSQL synchronous_commit=on, fsync on)\n",
	       commits, patches ? "patches on HEAD" : "commits", reads);
	print_table(rows, n, threads);
	return 0;
}
