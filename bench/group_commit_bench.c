/*
 * group_commit_bench.c -- the writers of bench/group_commit.mjs, in C: the
 * same requests for far less CPU, so that on two cores the load generator
 * takes less of what the server is measured on.
 *
 *   bench-group_commit URL DOC_FILE SECS SPACE...
 *
 * One writer per SPACE, all at once (libcurl's multi interface, one
 * thread, one kept-alive connection each): each POSTs DOC_FILE's checkpoint
 * to URL/chat/commit with its own title ("SPACE step I"), repo_id SPACE and,
 * from its second write on, parent_commit_id the commit_hash of its last
 * 201, until SECS have passed.  Anything but a 201 stops the run (exit 1).
 * Prints one line: acknowledged writes, seconds from the first request to
 * the last answer, and this process's CPU seconds (user + system).
 *
 * Jansson parsing every 201's checkpoint and serialising every body took
 * half of this process's time, about what node spent on all of it: a
 * writer serialises the checkpoint once and writes only its title and
 * parent in front of it, and takes the hash from the answer's first member
 * (the server writes "commit_hash" first).
 */
#include "util/buf.h"
#include "util/sys.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

struct writer {
	CURL *h;
	const char *space;
	char *rest;               /* DOC_FILE's checkpoint with repo_id, no title, as JSON */
	char parent[65];          /* the hash of its last 201, or "" */
	struct buf body;          /* the body in flight */
	struct buf reply;
	long step;
	long acked;
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

/* Sets up w's next POST: {"title": ..., "parent_commit_id": ..., the rest}. */
static void next_request(struct writer *w)
{
	char title[160];
	json_t *t;
	char *tj;

	snprintf(title, sizeof(title), "%s step %ld", w->space, w->step++);
	t = json_string(title);
	tj = json_dumps(t, JSON_ENCODE_ANY);
	json_decref(t);
	buf_release(&w->body);
	buf_addf(&w->body, "{\"title\":%s,", tj);
	if (*w->parent)
		buf_addf(&w->body, "\"parent_commit_id\":\"%s\",", w->parent);
	buf_adds(&w->body, w->rest + 1);
	free(tj);
	buf_release(&w->reply);
	curl_easy_setopt(w->h, CURLOPT_POSTFIELDSIZE, (long)w->body.len);
	curl_easy_setopt(w->h, CURLOPT_POSTFIELDS, w->body.ptr);
}

/* A 201 moves the writer's parent to the hash it got; 0 when it was one. */
static int took(struct writer *w)
{
	static const char key[] = "{\"commit_hash\":\"";
	long status = 0;
	const char *hash = w->reply.ptr + sizeof(key) - 1;

	curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 201) {
		fprintf(stderr, "bench-group_commit: %s: %ld %.*s\n", w->space, status,
			(int)w->reply.len, w->reply.ptr);
		return -1;
	}
	if (w->reply.len < sizeof(key) + 65 || memcmp(w->reply.ptr, key, sizeof(key) - 1) ||
	    strspn(hash, "0123456789abcdef") != 64 || hash[64] != '"') {
		die(w->space, "a 201 that does not start with its commit_hash");
		return -1;
	}
	memcpy(w->parent, hash, 64);
	w->parent[64] = '\0';
	w->acked++;
	return 0;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void setup(struct writer *w, CURLM *m, const char *url, struct curl_slist *hdrs,
		  const json_t *doc, const char *space)
{
	json_t *rest = json_deep_copy(doc);

	json_object_del(rest, "title");
	json_object_set_new(rest, "repo_id", json_string(space));
	w->space = space;
	w->rest = json_dumps(rest, JSON_COMPACT);
	json_decref(rest);
	w->body = (struct buf)BUF_INIT(0);
	w->reply = (struct buf)BUF_INIT(0);
	w->h = curl_easy_init();
	curl_easy_setopt(w->h, CURLOPT_URL, url);
	curl_easy_setopt(w->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, take_reply);
	curl_easy_setopt(w->h, CURLOPT_WRITEDATA, &w->reply);
	curl_easy_setopt(w->h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(w->h, CURLOPT_PRIVATE, w);
	next_request(w);
	curl_multi_add_handle(m, w->h);
}

int main(int argc, char **argv)
{
	struct curl_slist *hdrs = NULL;
	struct writer *ws;
	json_error_t je;
	json_t *doc;
	CURLM *m;
	CURLMsg *msg;
	char url[512];
	int n, running = 0, left, failed = 0;
	int64_t t0, deadline, t1;
	double cpu0;
	long total = 0;

	if (argc < 5)
		return die("usage", "bench-group_commit URL DOC_FILE SECS SPACE...");
	doc = json_load_file(argv[2], 0, &je);
	if (!json_is_object(doc))
		return die(argv[2], je.text);
	n = argc - 4;
	snprintf(url, sizeof(url), "%s/chat/commit", argv[1]);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	m = curl_multi_init();
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)n);
	curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)n);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	ws = calloc((size_t)n, sizeof(*ws));
	cpu0 = cpu_seconds();
	t0 = sys_monotonic_us();
	deadline = t0 + (int64_t)(atof(argv[3]) * 1e6);
	for (int i = 0; i < n; i++)
		setup(&ws[i], m, url, hdrs, doc, argv[4 + i]);
	left = n;
	while (left && !failed) {
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &(int){ 0 }))) {
			struct writer *w;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&w);
			curl_multi_remove_handle(m, w->h);
			if (msg->data.result != CURLE_OK) {
				failed = die(w->space, curl_easy_strerror(msg->data.result));
				break;
			}
			if (took(w)) {
				failed = 1;
				break;
			}
			if (sys_monotonic_us() >= deadline) {
				left--;
				continue;
			}
			next_request(w);
			curl_multi_add_handle(m, w->h);
		}
		if (left && !failed)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	t1 = sys_monotonic_us();
	for (int i = 0; i < n; i++) {
		total += ws[i].acked;
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
	if (failed)
		return 1;
	printf("%ld %.3f %.3f\n", total, (double)(t1 - t0) / 1e6, cpu_seconds() - cpu0);
	return 0;
}
