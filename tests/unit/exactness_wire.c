/*
 * exactness_wire.c -- the wire half of the context-exactness property test
 * (see exactness.h): a real `smriti-full serve` (the binary built beside
 * this test binary) on a fresh SQLite file, its operations called over HTTP
 * (`POST /api/ops/{op}`, what the remote CLI uses), and the Node fake
 * provider (tests/fake-provider/server.mjs, through fake_provider.h)
 * scripted with the same steps the in-process fake takes.  What the
 * provider received is read from the Node fake's record.
 */
#include "harness.h"
#include "exactness.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static struct {
	pid_t pid;
	int port;
	char dir[64];
} srv;

static size_t collect(char *data, size_t size, size_t nmemb, void *ctx)
{
	buf_add(ctx, data, size * nmemb);
	return size * nmemb;
}

/* POST body (JSON text) to the server's path; the reply's JSON (new reference) and status. */
static json_t *post(const char *path, const char *body, long *status)
{
	CURL *c = curl_easy_init();
	struct buf b = BUF_INIT(0);
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	char *url = xasprintf("http://127.0.0.1:%d%s", srv.port, path);
	json_t *doc;

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	*status = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	doc = json_loadb(b.ptr, b.len, 0, NULL);
	buf_release(&b);
	free(url);
	return doc;
}

static enum smr_rc rc_named(const char *name)
{
	for (int rc = SMR_OK; rc <= SMR_EFORBIDDEN; rc++)
		if (name && !strcmp(smr_rc_name((enum smr_rc)rc), name))
			return (enum smr_rc)rc;
	return SMR_EINTERNAL;
}

json_t *ex_wire_call(const char *op, const json_t *params, enum smr_rc *rc, char *msg,
		     size_t msg_size)
{
	char *path = xasprintf("/api/ops/%s", op), *body = json_dumps(params, JSON_COMPACT);
	long status;
	json_t *doc = post(path, body, &status), *res = NULL, *e;

	e = json_object_get(doc, "error");
	if (status == 200 && json_object_get(doc, "result")) {
		*rc = SMR_OK;
		res = json_incref(json_object_get(doc, "result"));
	} else {
		*rc = e ? rc_named(json_string_value(json_object_get(e, "code"))) : SMR_EINTERNAL;
		snprintf(msg, msg_size, "HTTP %ld: %s", status,
			 e ? json_string_value(json_object_get(e, "message")) : "no error document");
	}
	json_decref(doc);
	free(path);
	free(body);
	return res;
}

/* ---- the Node fake ---- */

static int units(const char *reply)
{
	int n = *reply ? 1 : 0;

	for (; *reply; reply++)
		n += *reply == ' ';
	return n ? n : 1;
}

void ex_wire_queue(const struct fake_step *s, const char *hold)
{
	json_t *step = json_object(), *body;
	char *text;

	if (s->end == FAKE_STATUS) {
		json_object_set_new(step, "status", json_integer(s->status));
	} else if (s->json) {
		json_object_set_new(step, "json", json_loads(s->json, 0, NULL));
	} else {
		json_object_set_new(step, "reply", json_string(s->reply ? s->reply : "fake reply"));
		json_object_set_new(step, "deltas", json_integer(units(s->reply ? s->reply : "x")));
	}
	if (s->end == FAKE_TRUNCATED)
		json_object_set_new(step, "truncated", json_true());
	if (s->end == FAKE_STREAM_ERROR || s->end == FAKE_CUT) {
		json_object_set_new(step, s->end == FAKE_CUT ? "cut" : "stream_error", json_true());
		json_object_set_new(step, "fail_after", json_integer(s->after));
	}
	if (s->end == FAKE_HOLD) {
		json_object_set_new(step, "hold", json_string(hold));
		json_object_set_new(step, "pause_after", json_integer(s->after));
	}
	body = json_pack("{s:[o]}", "steps", step);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(fake_control("POST", "/_control/script", text));
	free(text);
	json_decref(body);
}

void ex_wire_reset(void)
{
	json_decref(fake_control("POST", "/_control/reset", "{}"));
}

json_t *ex_wire_take(void)
{
	json_t *got = fake_requests(), *out = json_array(), *r;
	size_t i;

	json_array_foreach(got, i, r)
		json_array_append_new(out, json_pack("{s:O, s:O}", "path", json_object_get(r, "path"),
						      "body", json_object_get(r, "body")));
	json_decref(got);
	ex_wire_reset();
	return out;
}

int ex_wire_wait_hold(const char *name, long timeout_ms)
{
	struct timespec pause = { 0, 1000000 };
	json_t *h;
	int waiting = 0;

	for (long i = 0; i < timeout_ms && !waiting; i++) {
		h = fake_control("GET", "/_control/holds", NULL);
		waiting = json_integer_value(json_object_get(json_object_get(
			json_object_get(h, "holds"), name), "waiting")) > 0;
		json_decref(h);
		if (!waiting)
			nanosleep(&pause, NULL);
	}
	return waiting;
}

void ex_wire_release(const char *name)
{
	char *body = xasprintf("{\"hold\":\"%s\"}", name);

	json_decref(fake_control("POST", "/_control/release", body));
	free(body);
}

/* ---- the server ---- */

/* The smriti-full beside this binary (build/ or build-asan/); caller frees. */
static char *server_binary(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	return xasprintf("%s/smriti-full", self);
}

/* environ with vars[] (K=V) in front, so they win. */
static char **env_with(char *const *vars, size_t n)
{
	size_t have = 0;
	char **env;

	while (environ[have])
		have++;
	env = xcalloc(n + have + 1, sizeof(*env));
	memcpy(env, vars, n * sizeof(*env));
	memcpy(env + n, environ, have * sizeof(*env));
	return env;
}

/* Reads the port from the server's log (its "listening on http://HOST:PORT" line). */
static int wait_listening(const char *log)
{
	struct timespec pause = { 0, 10000000 };
	char line[256];
	const char *p;
	FILE *f;

	for (int i = 0; i < 3000; i++) {
		f = fopen(log, "r");
		while (f && fgets(line, sizeof(line), f)) {
			p = strstr(line, "listening on http://127.0.0.1:");
			if (p) {
				fclose(f);
				return atoi(p + strlen("listening on http://127.0.0.1:"));
			}
		}
		if (f)
			fclose(f);
		if (waitpid(srv.pid, NULL, WNOHANG) == srv.pid)
			return -1;
		nanosleep(&pause, NULL);
	}
	return -1;
}

int ex_wire_start(char *const *vars, size_t n_vars, char *why, size_t why_size)
{
	char *bin = server_binary(), *argv[] = { bin, "serve", "--listen", "127.0.0.1:0", NULL };
	char *log, *db, **env, **all;
	posix_spawn_file_actions_t fa;
	int rc;

	/* tmpfs when there is one: the server fsyncs every write, and the disk is not what is tested */
	snprintf(srv.dir, sizeof(srv.dir), "%s/smriti-exactness-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!bin || access(bin, X_OK) || !mkdtemp(srv.dir)) {
		snprintf(why, why_size, "%s is not there: build it first (make)", bin ? bin : "smriti-full");
		free(bin);
		return -1;
	}
	log = xasprintf("%s/serve.log", srv.dir);
	db = xasprintf("SMRITI_DB=%s/db.sqlite", srv.dir);
	all = xcalloc(n_vars + 1, sizeof(*all));
	memcpy(all, vars, n_vars * sizeof(*all));
	all[n_vars] = db;
	env = env_with(all, n_vars + 1);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&srv.pid, bin, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	srv.port = rc ? -1 : wait_listening(log);
	if (srv.port < 0)
		snprintf(why, why_size, "%s serve did not start (see %s)", bin, log);
	free(env);
	free(all);
	free(db);
	free(log);
	free(bin);
	return srv.port < 0 ? -1 : 0;
}

/* Copies the end of the server's log to stderr. */
static void show_log(void)
{
	char *path = xasprintf("%s/serve.log", srv.dir), chunk[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f && fseek(f, -4000, SEEK_END))
		rewind(f);
	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, stderr);
	if (f)
		fclose(f);
	free(path);
}

/* Stops the server (it must exit cleanly: 0, no sanitizer report) and removes its files. */
int ex_wire_stop(void)
{
	static const char *const files[] = {
		"serve.log", "db.sqlite", "db.sqlite-wal", "db.sqlite-shm", NULL,
	};
	int status = -1;
	char *path;

	if (srv.pid <= 0)
		return 0;
	kill(srv.pid, SIGTERM);
	waitpid(srv.pid, &status, 0);
	srv.pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "exactness: smriti serve exited with status %d; its log:\n", status);
		show_log();
	}
	for (int i = 0; files[i]; i++) {
		path = xasprintf("%s/%s", srv.dir, files[i]);
		unlink(path);
		free(path);
	}
	rmdir(srv.dir);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}
