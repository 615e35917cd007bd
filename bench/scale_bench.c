/*
 * scale_bench.c -- the two halves of bench/scale.sh (issue 32) that a shell
 * cannot do quickly:
 *
 *   bench-scale build DSN BIG FORKN SPACES
 *	writes, through the store's API (store_import: one transaction per
 *	batch of SCALE_BATCH (5,000) checkpoints or Spaces / 5, the search
 *	index and the reflog
 *	written as it goes, the rows that committing each would write), a
 *	Space "big" of BIG checkpoints, a
 *	Space "fork-src" of FORKN (none when 0) and SPACES Spaces "sNNNNN" of
 *	one checkpoint each.  Each checkpoint changes one item of its parent
 *	(a decision replaced; every 10th step the word "latency" in it, every
 *	3rd a task added), so states stay at about ten items and the history
 *	is as an agent's hand-offs make it.  Prints the rate on stderr.
 *
 *   bench-scale http URL N METHOD PATH [BODY]
 *	N requests one after the other on one kept-alive connection
 *	(libcurl), each with BODY (JSON; each "%ld" in it becomes the
 *	request's number, from SCALE_HTTP_FIRST (default 0) on, and each
 *	"%lp" the number before it, so every patch adds an item of its own
 *	and can drop the one the patch before added) and the headers of
 *	SCALE_HTTP_HEADER (one "Name: value", optional); a request
 *	longer than SCALE_HTTP_TIMEOUT seconds (when set) fails.  Anything
 *	but a 2xx stops the run (exit 1).  Prints "median_ms p90_ms req_per_s
 *	bytes_per_answer".
 *
 * Hashes are real (checkpoint_seal), so fsck and every read treat the
 * database as any other.  Timestamps are synthetic and increasing.
 */
#include "domain/checkpoint.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long batch = 5000;         /* SCALE_BATCH: checkpoints a transaction */
#define ITEMS 8                  /* decisions a state keeps */

static unsigned long long rng = 88172645463325252ULL;

static unsigned next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A made-up sentence of a few words into text; every 10th step has "latency" in it. */
static void sentence(long step, int k, char *text, size_t size)
{
	static const char *const syl[] = { "ka", "lo", "mi", "ren", "sho", "ta", "vu", "zel",
					   "qui", "bra", "do", "fen", "gor", "hal", "jin", "pex" };
	size_t n = 0;

	for (int w = 0; w < 6 && n < size; w++)
		n += (size_t)snprintf(text + n, size - n, "%s%s%s%s", w ? " " : "",
				      syl[next() % 16], syl[next() % 16], syl[next() % 16]);
	if (n < size)
		snprintf(text + n, size - n, " %s step %ld.%d", step % 10 == 0 ? "latency" : "keep",
			 step, k);
}

static json_t *item(long step, int k)
{
	char text[160];

	sentence(step, k, text, sizeof(text));
	return json_pack("{s:s}", "text", text);
}

/* Checkpoint `step` of a chain: parent's state with one decision replaced. */
static void make_step(struct checkpoint *c, const struct checkpoint *parent, long step)
{
	char title[48], at[40];
	long t = step;

	checkpoint_init(c);
	if (parent) {
		checkpoint_copy_content(c, parent);
		c->parent_hash = xstrdup(parent->hash);
	}
	while (json_array_size(c->decisions) < ITEMS)
		json_array_append_new(c->decisions, item(step, (int)json_array_size(c->decisions)));
	json_array_set_new(c->decisions, (size_t)step % ITEMS, item(step, 0));
	if (step % 3 == 0) {
		char text[160];

		sentence(step, 9, text, sizeof(text));
		json_array_append_new(c->tasks, json_pack("{s:s, s:s}", "text", text, "status",
							  "open"));
		if (json_array_size(c->tasks) > 4)
			json_array_remove(c->tasks, 0);
	}
	free(c->title);
	snprintf(title, sizeof(title), "step %ld", step);
	c->title = xstrdup(title);
	free(c->author);
	c->author = xstrdup(step % 2 ? "agent-a" : "agent-b");
	/* a second a step: 28 days hold 2,419,200 of them */
	snprintf(at, sizeof(at), "2026-02-%02ldT%02ld:%02ld:%02ld.000000Z", 1 + t / 86400 % 28,
		 t / 3600 % 24, t / 60 % 60, t % 60);
	c->created_at = xstrdup(at);
	checkpoint_seal(c);
}

struct chain {
	struct space sp;
	struct checkpoint last;      /* the newest checkpoint written, the next one's parent */
	long written;
	long step0;                  /* steps are numbered globally: timestamps stay apart */
};

/* Writes checkpoints [from, to) of c's chain in one transaction. */
static enum smr_rc chain_batch(struct store *st, struct chain *c, long n, struct smr_err *err)
{
	struct checkpoint *v = xcalloc((size_t)n, sizeof(*v));
	const struct checkpoint **commits = xcalloc((size_t)n, sizeof(*commits));
	const struct checkpoint **parents = xcalloc((size_t)n, sizeof(*parents));
	struct import_space in = { 0 };
	struct ref_move created = { "bench/scale.sh", "create", c->sp.created_at };
	enum smr_rc rc;

	for (long i = 0; i < n; i++) {
		const struct checkpoint *p = i ? &v[i - 1] : c->written ? &c->last : NULL;

		make_step(&v[i], p, c->step0 + c->written + i);
		commits[i] = &v[i];
		parents[i] = p;
	}
	in = (struct import_space){ .space = &c->sp, .create = c->written == 0, .commits = commits,
				    .parents = parents, .n_commits = (size_t)n,
				    .head = v[n - 1].hash, .created = &created,
				    .record_commits = 1 };
	rc = store_import(st, &in, 1, err);
	checkpoint_release(&c->last);
	c->last = v[n - 1];
	memset(&v[n - 1], 0, sizeof(v[n - 1]));
	for (long i = 0; i < n - 1; i++)
		checkpoint_release(&v[i]);
	c->written += n;
	free(v);
	free(commits);
	free(parents);
	return rc;
}

static void space_named(struct space *sp, const char *name, long k)
{
	char id[40];

	snprintf(id, sizeof(id), "5ca1e000-0000-4000-8000-%012ld", k);
	*sp = (struct space){ xstrdup(id), xstrdup(name), xstrdup("bench/scale.sh"),
			      xstrdup("2026-01-01T00:00:00.000000Z"), NULL, NULL };
}

/* A Space of n checkpoints, batch per transaction, with a progress line on stderr. */
static enum smr_rc build_chain(struct store *st, const char *name, long k, long n, long step0,
			       struct smr_err *err)
{
	struct chain c = { .step0 = step0 };
	double t0 = wall_s();
	enum smr_rc rc = SMR_OK;

	space_named(&c.sp, name, k);
	checkpoint_init(&c.last);
	while (!rc && c.written < n) {
		rc = chain_batch(st, &c, n - c.written < batch ? n - c.written : batch, err);
		fprintf(stderr, "\r  %s: %ld of %ld checkpoints, %.0f/s", name, c.written, n,
			(double)c.written / (wall_s() - t0));
	}
	fprintf(stderr, "\n");
	checkpoint_release(&c.last);
	space_release(&c.sp);
	return rc;
}

/* Spaces [from, to) of one checkpoint each, in one transaction. */
static enum smr_rc spaces_batch(struct store *st, long from, long to, struct smr_err *err)
{
	size_t n = (size_t)(to - from);
	struct space *sp = xcalloc(n, sizeof(*sp));
	struct checkpoint *c = xcalloc(n, sizeof(*c));
	const struct checkpoint **commits = xcalloc(n, sizeof(*commits));
	struct import_space *in = xcalloc(n, sizeof(*in));
	struct ref_move created = { "bench/scale.sh", "create", "2026-01-01T00:00:00.000000Z" };
	enum smr_rc rc;
	char name[32];

	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "s%05ld", from + (long)i);
		space_named(&sp[i], name, 1000 + from + (long)i);
		make_step(&c[i], NULL, from + (long)i);
		commits[i] = &c[i];
		in[i] = (struct import_space){ .space = &sp[i], .create = 1, .commits = &commits[i],
					       .n_commits = 1, .head = c[i].hash, .created = &created,
					       .record_commits = 1 };
	}
	rc = store_import(st, in, n, err);
	for (size_t i = 0; i < n; i++) {
		checkpoint_release(&c[i]);
		space_release(&sp[i]);
	}
	free(sp);
	free(c);
	free(commits);
	free(in);
	return rc;
}

static int build(const char *dsn, long big, long forkn, long spaces)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	enum smr_rc rc = store_open(dsn, &st, &err);
	double t0 = wall_s();
	long step = batch / 5 > 0 ? batch / 5 : 1;   /* Spaces a transaction */

	if (!rc)
		rc = build_chain(st, "big", 1, big, 0, &err);
	if (!rc && forkn > 0)
		rc = build_chain(st, "fork-src", 2, forkn, big, &err);
	for (long i = 0; !rc && i < spaces; i += step) {
		rc = spaces_batch(st, i, i + step < spaces ? i + step : spaces, &err);
		fprintf(stderr, "\r  %ld of %ld Spaces", i + step < spaces ? i + step : spaces,
			spaces);
	}
	if (spaces)
		fprintf(stderr, "\n");
	store_close(st);
	if (rc)
		return fprintf(stderr, "bench-scale build: %s\n", err.msg), 1;
	fprintf(stderr, "  built %ld checkpoints in %.1f s (%.0f/s)\n", big + forkn + spaces,
		wall_s() - t0, (double)(big + forkn + spaces) / (wall_s() - t0));
	return 0;
}

/* ---- the HTTP client ---- */

static size_t count_bytes(char *data, size_t size, size_t n, void *total)
{
	(void)data;
	*(size_t *)total += size * n;
	return size * n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* BODY with each "%ld" replaced by i and each "%lp" by i - 1; caller frees. */
static char *body_of(const char *fmt, long i)
{
	struct buf b = BUF_INIT(0);

	for (const char *p = fmt; *p;) {
		const char *hit = strstr(p, "%l");
		size_t n = hit ? (size_t)(hit - p) : strlen(p);

		buf_add(&b, p, n);
		p += n;
		if (hit && (hit[2] == 'd' || hit[2] == 'p')) {
			buf_addf(&b, "%ld", hit[2] == 'd' ? i : i - 1);
			p += 3;
		} else if (hit) {
			buf_add(&b, p, 2);
			p += 2;
		}
	}
	return buf_detach(&b, NULL);
}

/* One request; its latency in ms, or -1 after printing why it failed. */
static double one_request(CURL *h, const char *body)
{
	double t0 = wall_s();
	long status = 0;
	CURLcode cc;

	if (body)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (cc != CURLE_OK || status < 200 || status > 299) {
		fprintf(stderr, "bench-scale http: %s, status %ld\n", curl_easy_strerror(cc), status);
		return -1;
	}
	return (wall_s() - t0) * 1000;
}

static CURL *client(const char *url, const char *method, struct curl_slist **hdr, size_t *bytes)
{
	CURL *h = curl_easy_init();
	const char *extra = getenv("SCALE_HTTP_HEADER");
	const char *limit = getenv("SCALE_HTTP_TIMEOUT");

	*hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (extra && *extra)
		*hdr = curl_slist_append(*hdr, extra);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count_bytes);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, bytes);
	if (limit && atol(limit) > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT, atol(limit));
	return h;
}

static int http(const char *base, long n, const char *method, const char *path, const char *fmt)
{
	char *url = xasprintf("%s%s", base, path);
	double *lat = xcalloc((size_t)n, sizeof(*lat)), t0, secs;
	struct curl_slist *hdr = NULL;
	size_t bytes = 0;
	long first = getenv("SCALE_HTTP_FIRST") ? atol(getenv("SCALE_HTTP_FIRST")) : 0;
	CURL *h;
	int rc = 0;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = client(url, method, &hdr, &bytes);
	t0 = wall_s();
	for (long i = 0; i < n && !rc; i++) {
		char *body = fmt ? body_of(fmt, first + i) : NULL;

		lat[i] = one_request(h, body);
		rc = lat[i] < 0;
		free(body);
	}
	secs = wall_s() - t0;
	if (!rc) {
		qsort(lat, (size_t)n, sizeof(*lat), cmp_double);
		printf("%.3f %.3f %.1f %.0f\n", lat[n / 2], lat[n * 9 / 10], (double)n / secs,
		       (double)bytes / (double)n);
	}
	curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	curl_global_cleanup();
	free(lat);
	free(url);
	return rc;
}

int main(int argc, char **argv)
{
	if (getenv("SCALE_BATCH") && atol(getenv("SCALE_BATCH")) > 0)
		batch = atol(getenv("SCALE_BATCH"));
	if (argc == 6 && !strcmp(argv[1], "build"))
		return build(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "http") && atol(argv[3]) > 0)
		return http(argv[2], atol(argv[3]), argv[4], argv[5], argc == 7 ? argv[6] : NULL);
	fprintf(stderr, "usage: bench-scale build DSN BIG FORKN SPACES\n"
		"       bench-scale http URL N METHOD PATH [BODY]\n");
	return 2;
}
