/*
 * fake_provider.c -- the fake LLM provider process for unit tests (see
 * fake_provider.h).
 */
#include "harness.h"
#include "fake_provider.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static pid_t fake_pid;
int fake_port;

static void fake_stop(void)
{
	if (fake_pid > 0) {
		kill(fake_pid, SIGTERM);
		waitpid(fake_pid, NULL, 0);
		fake_pid = 0;
	}
	curl_global_cleanup();
}

/* Starts `node tests/fake-provider/server.mjs --port 0` and reads "LISTENING <port>". */
static int fake_start(void)
{
	char *argv[] = { "node", "tests/fake-provider/server.mjs", "--port", "0", NULL };
	posix_spawn_file_actions_t fa;
	int fds[2];
	char line[64];
	size_t len = 0;
	ssize_t n;

	if (fake_port)
		return 0;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (pipe(fds))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	if (posix_spawnp(&fake_pid, "node", &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	while (len < sizeof(line) - 1 && !memchr(line, '\n', len)) {
		n = read(fds[0], line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fds[0]);
	line[len] = '\0';
	atexit(fake_stop);
	if (sscanf(line, "LISTENING %d", &fake_port) != 1) {
		fprintf(stderr, "fake provider did not start: '%s'\n", line);
		return -1;
	}
	return 0;
}

static size_t collect(char *data, size_t size, size_t nmemb, void *ctx)
{
	buf_add(ctx, data, size * nmemb);
	return size * nmemb;
}

json_t *fake_control(const char *method, const char *path, const char *body)
{
	CURL *c = curl_easy_init();
	struct buf b = BUF_INIT(0);
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	char *url = xasprintf("http://127.0.0.1:%d%s", fake_port, path);
	json_t *doc;

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_perform(c);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	doc = json_loads(b.ptr, 0, NULL);
	buf_release(&b);
	free(url);
	return doc;
}

int fake_script(const char *steps)
{
	char *body = xasprintf("{\"steps\":%s}", steps);
	json_t *r;

	if (fake_start())
		return -1;
	json_decref(fake_control("POST", "/_control/reset", "{}"));
	r = fake_control("POST", "/_control/script", body);
	free(body);
	if (!json_is_true(json_object_get(r, "ok"))) {
		json_decref(r);
		return -1;
	}
	json_decref(r);
	return 0;
}

json_t *fake_requests(void)
{
	return fake_control("GET", "/_control/requests", NULL);
}

void fake_release(const char *name)
{
	char *body = xasprintf("{\"hold\":\"%s\"}", name);

	json_decref(fake_control("POST", "/_control/release", body));
	free(body);
}

struct provider *fake_provider(const char *name, const char *path_base)
{
	struct provider_cfg cfg;

	provider_cfg_defaults(&cfg);
	cfg.base_url = xasprintf("http://127.0.0.1:%d%s", fake_port, path_base);
	cfg.api_key = xstrdup("sk-test-0123456789");
	cfg.default_model = xstrdup("m");
	cfg.backoff_ms = 10;
	cfg.backoff_max_ms = 40;
	return provider_new(name, &cfg);
}
