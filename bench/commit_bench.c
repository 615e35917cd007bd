/*
 * commit_bench.c -- checkpoint commits per second through the store API
 * (ops_checkpoint_create: validate, hash, compare-and-swap HEAD in one
 * transaction) next to a plain SQLite insert of one row per transaction
 * with the same journal and synchronous settings, on the same disk.
 *
 *   bench-commit compare DIR N      prints both rates and their ratio
 *   bench-commit seed DB SPACE N    writes N checkpoints into SPACE (for log benchmarks)
 */
#include "ops/context.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *what, const struct smr_err *err)
{
	fprintf(stderr, "bench-commit: %s: %s\n", what, err ? err->msg : "");
	return 1;
}

static int commit_n(const char *db, const char *space, long n, double *secs)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct checkpoint c;
	json_t *fields;
	double t0;

	if (store_open(db, &st, &err))
		return die("open", &err);
	ops_open_on(&ctx, st, NULL, NULL);
	ops_space_create(ctx, space, "benchmark", &sp, NULL);
	space_release(&sp);
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		fields = json_pack("{s:s, s:[s], s:[s]}", "title", "step",
				   "decisions", "keep going", "tasks", "measure");
		memset(&c, 0, sizeof(c));
		if (ops_checkpoint_create(ctx, space, fields, NULL, "bench", &c, &err))
			return die("commit", &err);
		checkpoint_release(&c);
		json_decref(fields);
	}
	*secs = now_s() - t0;
	ops_close(ctx);
	store_close(st);
	return 0;
}

static int plain_n(const char *db, long n, double *secs)
{
	sqlite3 *h;
	sqlite3_stmt *q;
	double t0;

	if (sqlite3_open(db, &h) != SQLITE_OK)
		return die("open plain", NULL);
	sqlite3_exec(h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		     "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)", NULL, NULL, NULL);
	sqlite3_prepare_v2(h, "INSERT INTO t (body) VALUES (?)", -1, &q, NULL);
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		sqlite3_bind_text(q, 1, "{\"title\":\"step\",\"decisions\":[\"keep going\"]}", -1,
				  SQLITE_STATIC);
		sqlite3_step(q);
		sqlite3_reset(q);
		sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	}
	*secs = now_s() - t0;
	sqlite3_finalize(q);
	sqlite3_close(h);
	return 0;
}

int main(int argc, char **argv)
{
	char a[4096], b[4096];
	double ts = 0, tp = 0;
	long n;

	if (argc == 5 && !strcmp(argv[1], "seed"))
		return commit_n(argv[2], argv[3], atol(argv[4]), &ts);
	if (argc != 4 || strcmp(argv[1], "compare")) {
		fprintf(stderr, "usage: bench-commit compare DIR N | seed DB SPACE N\n");
		return 2;
	}
	n = atol(argv[3]);
	snprintf(a, sizeof(a), "%s/store.db", argv[2]);
	snprintf(b, sizeof(b), "%s/plain.db", argv[2]);
	/* alternate so that neither side always runs on a warmer disk */
	if (plain_n(b, n / 2, &tp) || commit_n(a, "bench", n / 2, &ts))
		return 1;
	{
		double ts2 = 0, tp2 = 0;

		if (commit_n(a, "bench", n - n / 2, &ts2) || plain_n(b, n - n / 2, &tp2))
			return 1;
		ts += ts2;
		tp += tp2;
	}
	printf("store API commits/s      %10.0f\n", (double)n / ts);
	printf("plain SQLite inserts/s   %10.0f\n", (double)n / tp);
	printf("ratio (store / plain)    %10.2f\n", tp / ts);
	return 0;
}
