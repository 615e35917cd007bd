/*
 * search_bench.c -- issue 13's figures, each next to a baseline measured in
 * the same run on the same data:
 *
 *   1. import of N checkpoints from a bundle's text (ops_import_text: the
 *      text walked, every hash recomputed, every item checked, one
 *      transaction, search index written) and export back to bundle text
 *      (ops_export_text, compared with what was imported), in
 *      checkpoints/s; baseline: the same checkpoints' rows inserted into a
 *      plain SQLite table in one transaction;
 *   2. search on that Space of N checkpoints, in-process (ops_search,
 *      everything from query parsing to snippets), median and p90 over a
 *      set of one-word, two-word, phrase and prefix queries; baseline: the
 *      naive search, a LIKE '%word%' scan finding every matching checkpoint
 *      row (what ranking them needs);
 *   3. the index's size (search_items and the FTS5 tables, from dbstat)
 *      over the size of the distinct text it indexes.
 *
 *   bench-search DIR N
 *
 * The history is synthetic and deterministic: each checkpoint changes one
 * or two items of its parent (a decision replaced, a task added or done,
 * every tenth step a new summary), with words from a vocabulary of a few
 * thousand made-up words and a few common ones.
 */
#include "domain/bundle.h"
#include "domain/checkpoint.h"
#include "ops/context.h"
#include "util/terms.h"
#include "util/xalloc.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VOCAB 4000
#define QUERIES 200

static unsigned long long rng = 88172645463325252ULL;

static unsigned next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

/*
 * CPU time of this process: the machine is shared, and wall time measures
 * the neighbours as much as the code.  The one fsync of a transaction is
 * not in it; the rows/s baseline is measured the same way.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char vocab[VOCAB][12];
static const char *const common[] = { "use", "the", "for", "drop", "keep", "queue", "cache",
				      "postgres", "kafka", "latency", "deploy", "retry" };

static void make_vocab(void)
{
	static const char *const syl[] = { "ka", "lo", "mi", "ren", "sho", "ta", "vu", "zel",
					   "qui", "bra", "do", "fen", "gor", "hal", "jin", "pex" };

	for (int i = 0; i < VOCAB; i++)
		snprintf(vocab[i], sizeof(vocab[i]), "%s%s%s", syl[next() % 16], syl[next() % 16],
			 syl[i % 16]);
}

static const char *word(void)
{
	return next() % 5 == 0 ? common[next() % 12] : vocab[next() % VOCAB];
}

static char *sentence(int words)
{
	char buf[256];
	size_t len = 0;

	for (int i = 0; i < words && len < sizeof(buf) - 16; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "", word());
	return xstrdup(buf);
}

/* n checkpoints, each one or two items away from its parent. */
static struct checkpoint *history(long n)
{
	struct checkpoint *v = xcalloc((size_t)n, sizeof(*v));

	for (long i = 0; i < n; i++) {
		struct checkpoint *c = &v[i];
		char at[40];

		checkpoint_init(c);
		if (i) {
			checkpoint_copy_content(c, &v[i - 1]);
			c->parent_hash = xstrdup(v[i - 1].hash);
		} else {
			for (int k = 0; k < 6; k++) {
				char *d = sentence(6);

				json_array_append_new(c->decisions, json_pack("{s:s}", "text", d));
				free(d);
			}
		}
		free(c->title);
		c->title = sentence(4);
		if (i % 10 == 0) {
			free(c->summary);
			c->summary = sentence(20);
		}
		{
			char *d = sentence(7);

			json_array_set_new(c->decisions, next() % json_array_size(c->decisions),
					   json_pack("{s:s}", "text", d));
			free(d);
		}
		if (next() % 3 == 0) {
			char *t = sentence(5);

			json_array_append_new(c->tasks, json_pack("{s:s, s:s}", "text", t, "status",
								  "open"));
			free(t);
			if (json_array_size(c->tasks) > 8)
				json_array_remove(c->tasks, 0);
		}
		free(c->author);
		c->author = xstrdup(next() % 2 ? "agent-a" : "agent-b");
		snprintf(at, sizeof(at), "2026-01-%02ldT%02ld:%02ld:%02ld.%06ldZ", 1 + i / 86400,
			 i / 3600 % 24, i / 60 % 60, i % 60, i % 1000000);
		c->created_at = xstrdup(at);
		checkpoint_seal(c);
	}
	return v;
}

/* Bytes of the distinct text the index covers: each item a checkpoint introduced, once. */
static double distinct_text_bytes(sqlite3 *db)
{
	sqlite3_stmt *q;
	double bytes = 0;

	/* the index keeps each introduced item's words; its text is as long as its words or more */
	sqlite3_prepare_v2(db, "SELECT SUM(LENGTH(terms)) FROM (SELECT DISTINCT field, terms"
			   " FROM search_items)", -1, &q, NULL);
	if (sqlite3_step(q) == SQLITE_ROW)
		bytes = sqlite3_column_double(q, 0);
	sqlite3_finalize(q);
	return bytes;
}

static double index_bytes(sqlite3 *db)
{
	sqlite3_stmt *q;
	double bytes = 0;

	if (sqlite3_prepare_v2(db, "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'search%'",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW)
		bytes = sqlite3_column_double(q, 0);
	sqlite3_finalize(q);
	return bytes;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double plain_insert(const char *path, const char *text_of_all, long n, double *secs)
{
	sqlite3 *h;
	sqlite3_stmt *q;
	size_t len = strlen(text_of_all), each = len / (size_t)n;
	double t0;

	sqlite3_open(path, &h);
	sqlite3_exec(h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		     "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)", NULL, NULL, NULL);
	sqlite3_prepare_v2(h, "INSERT INTO t (body) VALUES (?)", -1, &q, NULL);
	t0 = now_s();
	sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	for (long i = 0; i < n; i++) {
		sqlite3_bind_text(q, 1, text_of_all + (size_t)i * each, (int)each, SQLITE_STATIC);
		sqlite3_step(q);
		sqlite3_reset(q);
	}
	sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	*secs = now_s() - t0;
	sqlite3_finalize(q);
	sqlite3_close(h);
	return (double)n / *secs;
}

/* The median of LIKE scans for the queries' first words, in ms. */
static double like_scan_ms(const char *path, char **queries, int nq)
{
	sqlite3 *h;
	sqlite3_stmt *q;
	double *t = xcalloc((size_t)nq, sizeof(*t)), med;

	sqlite3_open(path, &h);
	/* every match, as a search that ranks them must see them all */
	sqlite3_prepare_v2(h, "SELECT commit_hash, title FROM commits WHERE title LIKE ?1"
			   " OR summary LIKE ?1 OR decisions LIKE ?1 OR tasks LIKE ?1", -1, &q, NULL);
	for (int i = 0; i < nq; i++) {
		char pat[64];
		double t0 = now_s();

		snprintf(pat, sizeof(pat), "%%%.*s%%", (int)strcspn(queries[i], " *\""),
			 queries[i] + (queries[i][0] == '"'));
		sqlite3_bind_text(q, 1, pat, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(q) == SQLITE_ROW)
			;
		sqlite3_reset(q);
		t[i] = (now_s() - t0) * 1000;
	}
	qsort(t, (size_t)nq, sizeof(*t), cmp_double);
	med = t[nq / 2];
	free(t);
	sqlite3_finalize(q);
	sqlite3_close(h);
	return med;
}

static char **make_queries(void)
{
	char **q = xcalloc(QUERIES, sizeof(*q));

	for (int i = 0; i < QUERIES; i++) {
		const char *a = vocab[next() % VOCAB], *b = vocab[next() % VOCAB];

		switch (i % 4) {
		case 0: q[i] = xstrdup(a); break;
		case 1: q[i] = xasprintf("%s %s", a, common[next() % 12]); break;
		case 2: q[i] = xasprintf("\"%s %s\"", common[next() % 12], b); break;
		default: q[i] = xasprintf("%.5s*", a); break;
		}
	}
	return q;
}

int main(int argc, char **argv)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space_bundle b = { 0 };
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;
	char db[4096], plain[4096], *text, **queries;
	double t0, t_import, t_export, t_plain, *lat, size, distinct;
	json_t *doc, *rep = NULL, *out = NULL;
	sqlite3 *h;
	long n;

	if (argc < 3 || (n = atol(argv[2])) < 10) {
		fprintf(stderr, "usage: bench-search DIR N [--bundle-only]\n");
		return 2;
	}
	snprintf(db, sizeof(db), "%s/search.db", argv[1]);
	snprintf(plain, sizeof(plain), "%s/plain.db", argv[1]);
	make_vocab();
	b.space = (struct space){ xstrdup("00000000-0000-4000-8000-000000000001"), xstrdup("bench"),
				  xstrdup(""), xstrdup("2026-01-01T00:00:00.000000Z"), NULL, NULL };
	b.checkpoints = history(n);
	b.n_checkpoints = (size_t)n;
	b.space.head = xstrdup(b.checkpoints[n - 1].hash);
	doc = bundle_to_json(&b, 1);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	space_bundle_release(&b);

	/* 1. import and export */
	if (store_open(db, &st, &err))
		return fprintf(stderr, "open: %s\n", err.msg), 1;
	ops_open_on(&ctx, st, NULL, NULL);
	t0 = now_s();
	if (ops_import_text(ctx, text, strlen(text), &rep, &err))
		return fprintf(stderr, "import: %s\n", err.msg), 1;
	t_import = now_s() - t0;
	json_decref(rep);
	t0 = now_s();
	{
		const char *one[] = { "bench" };
		char *back;
		size_t len;

		if (ops_export_text(ctx, one, 1, &back, &len, &err))
			return fprintf(stderr, "export: %s\n", err.msg), 1;
		t_export = now_s() - t0;
		if (strcmp(back, text))
			return fprintf(stderr, "export: not the bundle imported\n"), 1;
		free(back);
	}
	plain_insert(plain, text, n, &t_plain);
	printf("1. bundle import and export of %ld checkpoints (SQLite)\n", n);
	printf("   import (parse, hashes, one transaction, index)  %9.0f checkpoints/s\n",
	       (double)n / t_import);
	printf("   export (read, bundle text)                       %9.0f checkpoints/s\n",
	       (double)n / t_export);
	printf("   baseline: plain SQLite insert, one transaction   %9.0f rows/s\n",
	       (double)n / t_plain);
	printf("   ratio import / baseline %.2f, export / baseline %.2f\n", t_plain / t_import,
	       t_plain / t_export);

	if (argc > 3 && !strcmp(argv[3], "--bundle-only")) {   /* bench/bundle.sh; profiling */
		free(text);
		ops_close(ctx);
		store_close(st);
		return 0;
	}
	/* 2. search */
	queries = make_queries();
	lat = xcalloc(QUERIES, sizeof(*lat));
	for (int round = 0; round < 2; round++)   /* the first round warms the cache */
		for (int i = 0; i < QUERIES; i++) {
			struct search_params p = { .query = queries[i] };

			t0 = now_s();
			if (ops_search(ctx, &p, &out, &err))
				return fprintf(stderr, "search '%s': %s\n", queries[i], err.msg), 1;
			lat[i] = (now_s() - t0) * 1000;
			json_decref(out);
		}
	qsort(lat, QUERIES, sizeof(*lat), cmp_double);
	{
		double naive = like_scan_ms(db, queries, QUERIES);

		printf("2. search, in-process, %d queries on a Space of %ld checkpoints\n", QUERIES, n);
		printf("   ops_search median %.2f ms, p90 %.2f ms\n", lat[QUERIES / 2],
		       lat[QUERIES * 9 / 10]);
		printf("   baseline: LIKE scan of the rows, median %.2f ms (ratio %.1fx faster)\n",
		       naive, naive / lat[QUERIES / 2]);
	}

	/* 3. index size */
	sqlite3_open(db, &h);
	size = index_bytes(h);
	distinct = distinct_text_bytes(h);
	sqlite3_close(h);
	printf("3. index size %.1f MB over %.1f MB of distinct indexed text: ratio %.2f\n",
	       size / 1e6, distinct / 1e6, size / distinct);
	for (int i = 0; i < QUERIES; i++)
		free(queries[i]);
	free(queries);
	free(lat);
	free(text);
	ops_close(ctx);
	store_close(st);
	return 0;
}
