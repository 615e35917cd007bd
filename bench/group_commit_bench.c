/*
 * group_commit_bench.c -- the writers of bench/group_commit.mjs (and of the
 * 32 writers on PostgreSQL of bench/peers.sh), in C: the same requests for
 * far less CPU than node, so that on two cores the load generator takes
 * less of what the server is measured on.
 *
 *   bench-group_commit [-k KIND] [-o HASHES] URL DOC_FILE SECS SPACE...
 *
 * One writer per SPACE argument, all at once (libcurl's multi interface,
 * one thread, one kept-alive connection each); a Space named N times is
 * written by N writers.  Writer I's J-th write is titled or named "SPACE wI
 * step J", so no two writes are the same document.  KIND says what a write
 * is:
 *   parent    POST URL/chat/commit: DOC_FILE's checkpoint with repo_id SPACE
 *             and, from the writer's second write on, parent_commit_id the
 *             hash of its last one (a compare-and-swap on HEAD; default);
 *   noparent  the same without parent_commit_id: on whatever HEAD is;
 *   summary   PATCH URL/v4/repos/SPACE/head {"summary": ...}, no parent;
 *   task      PATCH URL/v4/repos/SPACE/head {"add": {"tasks": [...]}}.
 * Until SECS have passed each writer sends its next write when the last one
 * was answered.  A 409 is counted, not hidden, and the writer goes on (with
 * a parent, on HEAD read again); any other answer but a 201 stops
 * the run (exit 1).  Prints one line: acknowledged writes, seconds from the
 * first request to the last answer, this process's CPU seconds (user +
 * system), 409s, and an acknowledged write's latency in microseconds at the
 * median, the 99th percentile and the maximum.  With -o, the commit_hash of
 * every acknowledged write goes to HASHES, one a line.
 *
 * Jansson parsing every 201's checkpoint and serialising every body took
 * half of this process's time, about what node spent on all of it: a
 * writer serialises the checkpoint once and writes only its title and
 * parent in front of it, and finds the hash in the answer as text.
 */
#include "util/buf.h"
#include "util/sys.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum kind { K_PARENT, K_NOPARENT, K_SUMMARY, K_TASK };

struct writer {
	CURL *h;
	const char *space;
	int index;
	char *rest;               /* DOC_FILE's checkpoint with repo_id, no title, as JSON */
	char parent[65];          /* the hash its next write names as parent, or "" */
	struct buf body;          /* the body in flight */
	struct buf reply;
	long step;
	long acked;
	long conflicts;
};

/* What every writer shares: the kind, the latencies, the hashes' file. */
struct run {
	enum kind kind;
	const char *base;         /* URL */
	FILE *hashes;
	curl_off_t *lat;          /* microseconds of each acknowledged write */
	size_t nlat, caplat;
};

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "bench-group_commit: %s: %s\n", what, msg);
	return 1;
}

static size_t take_reply(char *data, size_t size, size_t n, void *arg)
{
	buf_add(arg, data, size * n);
	return size * n;
}

/* s as a JSON string, quotes included, into b. */
static void add_json_text(struct buf *b, const char *s)
{
	json_t *t = json_string(s);
	char *tj = json_dumps(t, JSON_ENCODE_ANY);

	buf_adds(b, tj);
	free(tj);
	json_decref(t);
}

/* Sets up w's next request body for its kind. */
static void next_request(struct writer *w, enum kind kind)
{
	char title[200];

	snprintf(title, sizeof(title), "%s w%d step %ld", w->space, w->index, w->step++);
	buf_release(&w->body);
	if (kind == K_SUMMARY || kind == K_TASK) {
		buf_adds(&w->body, kind == K_SUMMARY ? "{\"summary\":" : "{\"add\":{\"tasks\":[");
		add_json_text(&w->body, title);
		buf_adds(&w->body, kind == K_SUMMARY ? "}" : "]}}");
	} else {
		buf_adds(&w->body, "{\"title\":");
		add_json_text(&w->body, title);
		buf_addch(&w->body, ',');
		if (kind == K_PARENT && *w->parent)
			buf_addf(&w->body, "\"parent_commit_id\":\"%s\",", w->parent);
		buf_adds(&w->body, w->rest + 1);
	}
	buf_release(&w->reply);
	curl_easy_setopt(w->h, CURLOPT_POSTFIELDSIZE, (long)w->body.len);
	curl_easy_setopt(w->h, CURLOPT_POSTFIELDS, w->body.ptr);
}

/* Copies the 64 hex digits at p into out; 0 when they are there. */
static int take_hash(const char *p, char out[65])
{
	if (!p || strspn(p, "0123456789abcdef") < 64)
		return -1;
	memcpy(out, p, 64);
	out[64] = '\0';
	return 0;
}

/*
 * w's Space's HEAD, read with a request of its own that holds up the other
 * writers while it runs (409s are not what a run of this bench is for).
 */
static int reread_head(struct writer *w, const char *base)
{
	static const char key[] = "\"head\":\"";
	struct buf got = BUF_INIT(0);
	CURL *h = curl_easy_init();
	char url[1024];
	const char *at;
	int rc;

	snprintf(url, sizeof(url), "%s/v4/repos/%s", base, w->space);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, take_reply);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	rc = curl_easy_perform(h);
	at = rc == CURLE_OK ? strstr(got.ptr, key) : NULL;
	rc = take_hash(at ? at + sizeof(key) - 1 : NULL, w->parent);
	curl_easy_cleanup(h);
	buf_release(&got);
	return rc ? die(w->space, "a 409, and HEAD could not be read again") : 0;
}

/* A 409: counted; with a parent, the writer goes on from HEAD as it is now. */
static int conflicted(struct writer *w, const struct run *r)
{
	w->conflicts++;
	return r->kind == K_PARENT ? reread_head(w, r->base) : 0;
}

static void add_latency(struct run *r, curl_off_t us)
{
	if (r->nlat == r->caplat) {
		r->caplat = r->caplat ? 2 * r->caplat : 4096;
		r->lat = realloc(r->lat, r->caplat * sizeof(*r->lat));
		if (!r->lat) {
			die("latencies", "out of memory");
			exit(1);
		}
	}
	r->lat[r->nlat++] = us;
}

/* An answer: a 201 moves the writer's parent to its hash; 0 unless the run must stop. */
static int took(struct writer *w, struct run *r)
{
	static const char key[] = "\"commit_hash\":\"";
	const char *at = strstr(w->reply.ptr, key);
	long status = 0;
	curl_off_t us = 0;
	char hash[65];

	curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &status);
	if (status == 409)
		return conflicted(w, r);
	if (status != 201) {
		fprintf(stderr, "bench-group_commit: %s: %ld %.*s\n", w->space, status,
			(int)w->reply.len, w->reply.ptr);
		return -1;
	}
	if (take_hash(at ? at + sizeof(key) - 1 : NULL, hash))
		return die(w->space, "a 201 without a commit_hash");
	memcpy(w->parent, hash, sizeof(hash));
	w->acked++;
	curl_easy_getinfo(w->h, CURLINFO_TOTAL_TIME_T, &us);
	add_latency(r, us);
	if (r->hashes)
		fprintf(r->hashes, "%s\n", hash);
	return 0;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void setup(struct writer *w, CURLM *m, const char *base, struct curl_slist *hdrs,
		  const json_t *doc, enum kind kind)
{
	json_t *rest = json_deep_copy(doc);
	char url[1024];

	json_object_del(rest, "title");
	json_object_set_new(rest, "repo_id", json_string(w->space));
	w->rest = json_dumps(rest, JSON_COMPACT);
	json_decref(rest);
	w->body = (struct buf)BUF_INIT(0);
	w->reply = (struct buf)BUF_INIT(0);
	if (kind == K_SUMMARY || kind == K_TASK)
		snprintf(url, sizeof(url), "%s/v4/repos/%s/head", base, w->space);
	else
		snprintf(url, sizeof(url), "%s/chat/commit", base);
	w->h = curl_easy_init();
	curl_easy_setopt(w->h, CURLOPT_URL, url);
	if (kind == K_SUMMARY || kind == K_TASK)
		curl_easy_setopt(w->h, CURLOPT_CUSTOMREQUEST, "PATCH");
	curl_easy_setopt(w->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, take_reply);
	curl_easy_setopt(w->h, CURLOPT_WRITEDATA, &w->reply);
	curl_easy_setopt(w->h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(w->h, CURLOPT_PRIVATE, w);
	next_request(w, kind);
	curl_multi_add_handle(m, w->h);
}

/* Runs the writers until the deadline and the last answer; 0 when no answer stopped the run. */
static int drive(CURLM *m, int n, struct run *r, int64_t deadline)
{
	int running = 0, left = n;
	CURLMsg *msg;

	while (left) {
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &(int){ 0 }))) {
			struct writer *w;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&w);
			curl_multi_remove_handle(m, w->h);
			if (msg->data.result != CURLE_OK)
				return die(w->space, curl_easy_strerror(msg->data.result));
			if (took(w, r))
				return 1;
			if (sys_monotonic_us() >= deadline) {
				left--;
				continue;
			}
			next_request(w, r->kind);
			curl_multi_add_handle(m, w->h);
		}
		if (left)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	return 0;
}

static int by_value(const void *a, const void *b)
{
	curl_off_t x = *(const curl_off_t *)a, y = *(const curl_off_t *)b;

	return (x > y) - (x < y);
}

/* The latency at quantile q (nearest rank) of the sorted latencies. */
static long quantile(const struct run *r, double q)
{
	size_t i = (size_t)(q * (double)r->nlat + 0.999999);

	if (!r->nlat)
		return 0;
	return (long)r->lat[i ? i - 1 : 0];
}

static int parse_kind(const char *s, enum kind *kind)
{
	static const char *const names[] = { "parent", "noparent", "summary", "task" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(s, names[i])) {
			*kind = (enum kind)i;
			return 0;
		}
	return die("-k", "KIND is parent, noparent, summary or task");
}

int main(int argc, char **argv)
{
	struct run r = { .kind = K_PARENT };
	struct curl_slist *hdrs = NULL;
	struct writer *ws;
	json_error_t je;
	json_t *doc;
	CURLM *m;
	int n, opt, failed;
	int64_t t0, t1;
	double cpu0;
	long total = 0, conflicts = 0;

	while ((opt = getopt(argc, argv, "k:o:")) != -1) {
		if (opt == 'k' && parse_kind(optarg, &r.kind))
			return 1;
		if (opt == 'o' && !(r.hashes = fopen(optarg, "w")))
			return die(optarg, "cannot write");
		if (opt == '?')
			return 1;
	}
	argv += optind - 1;
	argc -= optind - 1;
	if (argc < 5)
		return die("usage", "bench-group_commit [-k KIND] [-o HASHES] URL DOC_FILE SECS SPACE...");
	r.base = argv[1];
	doc = json_load_file(argv[2], 0, &je);
	if (!json_is_object(doc))
		return die(argv[2], je.text);
	n = argc - 4;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	m = curl_multi_init();
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)n);
	curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)n);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	ws = calloc((size_t)n, sizeof(*ws));
	cpu0 = cpu_seconds();
	t0 = sys_monotonic_us();
	for (int i = 0; i < n; i++) {
		ws[i].space = argv[4 + i];
		ws[i].index = i;
		setup(&ws[i], m, argv[1], hdrs, doc, r.kind);
	}
	failed = drive(m, n, &r, t0 + (int64_t)(atof(argv[3]) * 1e6));
	t1 = sys_monotonic_us();
	for (int i = 0; i < n; i++) {
		total += ws[i].acked;
		conflicts += ws[i].conflicts;
		curl_multi_remove_handle(m, ws[i].h);
		curl_easy_cleanup(ws[i].h);
		free(ws[i].rest);
		buf_release(&ws[i].body);
		buf_release(&ws[i].reply);
	}
	free(ws);
	curl_slist_free_all(hdrs);
	curl_multi_cleanup(m);
	curl_global_cleanup();
	json_decref(doc);
	if (r.hashes && fclose(r.hashes))
		failed = die("-o", "the hashes were not all written");
	if (!failed) {
		qsort(r.lat, r.nlat, sizeof(*r.lat), by_value);
		printf("%ld %.3f %.3f %ld %ld %ld %ld\n", total, (double)(t1 - t0) / 1e6,
		       cpu_seconds() - cpu0, conflicts, quantile(&r, 0.5), quantile(&r, 0.99),
		       quantile(&r, 1.0));
	}
	free(r.lat);
	return failed;
}
