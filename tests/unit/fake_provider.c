/*
 * fake_provider.c -- the fake LLM provider for unit tests (see
 * fake_provider.h): the Node process (tests/fake-provider/server.mjs), and
 * the same wire formats served in this process for tests that make many
 * thousands of calls.
 */
#include "harness.h"
#include "fake_provider.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
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

/* ---- the in-process fake ---- */

#define INPROC_QUEUE 16

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;         /* a stream reached its hold; a release */
	struct MHD_Daemon *d;
	struct fake_step steps[INPROC_QUEUE];
	int n_steps;
	json_t *requests;
	unsigned reached;            /* holds reached since the start */
	unsigned release;            /* bumped by each release */
} ip = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

int fake_inproc_port;

struct ip_stream {
	struct buf body;             /* the SSE text */
	size_t hold_at;              /* bytes sent before the hold or the cut */
	int hold, cut;
};

struct ip_req {
	struct buf body;
};

static void step_free(struct fake_step *s)
{
	free((char *)s->reply);
	free((char *)s->json);
}

static struct fake_step next_step(void)
{
	struct fake_step s = { FAKE_COMPLETE, NULL, 0, 0, NULL };

	pthread_mutex_lock(&ip.lock);
	if (ip.n_steps) {
		s = ip.steps[0];
		memmove(ip.steps, ip.steps + 1, (size_t)--ip.n_steps * sizeof(ip.steps[0]));
	}
	pthread_mutex_unlock(&ip.lock);
	if (!s.reply)
		s.reply = xstrdup("fake reply");
	return s;
}

static void add_event(struct buf *b, const char *event, json_t *data)
{
	char *text = json_dumps(data, JSON_COMPACT);

	if (event)
		buf_addf(b, "event: %s\n", event);
	buf_addf(b, "data: %s\n\n", text);
	free(text);
	json_decref(data);
}

static void openai_delta(struct buf *b, const char *piece)
{
	add_event(b, NULL, json_pack("{s:s, s:s, s:s, s:[{s:i, s:{s:s}, s:n}]}", "id", "c1",
				      "object", "chat.completion.chunk", "model", "m", "choices",
				      "index", 0, "delta", "content", piece, "finish_reason"));
}

static void anthropic_delta(struct buf *b, const char *piece)
{
	add_event(b, "content_block_delta",
		  json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_delta", "index", 0,
			    "delta", "type", "text_delta", "text", piece));
}

static void openai_head(struct buf *b)
{
	add_event(b, NULL, json_pack("{s:s, s:s, s:s, s:[{s:i, s:{s:s, s:s}, s:n}]}", "id", "c1",
				      "object", "chat.completion.chunk", "model", "m", "choices",
				      "index", 0, "delta", "role", "assistant", "content", "",
				      "finish_reason"));
}

static void anthropic_head(struct buf *b)
{
	add_event(b, "message_start",
		  json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[], s:n, s:{s:i, s:i}}}", "type",
			    "message_start", "message", "id", "msg_1", "type", "message", "role",
			    "assistant", "model", "m", "content", "stop_reason", "usage",
			    "input_tokens", 1, "output_tokens", 0));
	add_event(b, "content_block_start",
		  json_pack("{s:s, s:i, s:{s:s, s:s}}", "type", "content_block_start", "index", 0,
			    "content_block", "type", "text", "text", ""));
}

static void openai_tail(struct buf *b, int truncated)
{
	add_event(b, NULL, json_pack("{s:s, s:s, s:s, s:[{s:i, s:{}, s:s}]}", "id", "c1",
				      "object", "chat.completion.chunk", "model", "m", "choices",
				      "index", 0, "delta", "finish_reason",
				      truncated ? "length" : "stop"));
	add_event(b, NULL, json_pack("{s:s, s:[], s:{s:i, s:i, s:i}}", "id", "c1", "choices",
				      "usage", "prompt_tokens", 1, "completion_tokens", 1,
				      "total_tokens", 2));
	buf_adds(b, "data: [DONE]\n\n");
}

static void anthropic_tail(struct buf *b, int truncated)
{
	add_event(b, "content_block_stop",
		  json_pack("{s:s, s:i}", "type", "content_block_stop", "index", 0));
	add_event(b, "message_delta",
		  json_pack("{s:s, s:{s:s}, s:{s:i}}", "type", "message_delta", "delta",
			    "stop_reason", truncated ? "max_tokens" : "end_turn", "usage",
			    "output_tokens", 1));
	add_event(b, "message_stop", json_pack("{s:s}", "type", "message_stop"));
}

/* The stream of step for a provider (anthropic or not) as SSE text. */
static struct ip_stream *plan_stream(const struct fake_step *s, int anthropic)
{
	struct ip_stream *st = xcalloc(1, sizeof(*st));
	const char *p = s->reply, *sp;
	int all = s->end == FAKE_COMPLETE || s->end == FAKE_TRUNCATED, n = 0;
	char *piece;

	st->body = (struct buf)BUF_INIT(0);
	(anthropic ? anthropic_head : openai_head)(&st->body);
	while (*p && (all || n < s->after)) {
		sp = strchr(p, ' ');
		sp = sp ? sp + 1 : p + strlen(p);
		piece = xstrndup(p, (size_t)(sp - p));
		(anthropic ? anthropic_delta : openai_delta)(&st->body, piece);
		free(piece);
		p = sp;
		n++;
	}
	st->hold_at = st->body.len;
	st->hold = s->end == FAKE_HOLD;
	st->cut = s->end == FAKE_CUT;
	if (all)
		(anthropic ? anthropic_tail : openai_tail)(&st->body, s->end == FAKE_TRUNCATED);
	else if (s->end == FAKE_STREAM_ERROR && anthropic)
		add_event(&st->body, "error", json_pack("{s:s, s:{s:s, s:s}}", "type", "error",
							"error", "type", "overloaded_error",
							"message", "Overloaded"));
	else if (s->end == FAKE_STREAM_ERROR)
		add_event(&st->body, NULL, json_pack("{s:{s:s, s:s}}", "error", "message",
						      "The server had an error", "type",
						      "server_error"));
	return st;
}

/* Waits at the hold until a release (or 10 s: a test that forgot must not hang). */
static void wait_at_hold(void)
{
	struct timespec until;
	unsigned seen;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&ip.lock);
	seen = ip.release;
	ip.reached++;
	pthread_cond_broadcast(&ip.cond);
	while (ip.release == seen &&
	       pthread_cond_timedwait(&ip.cond, &ip.lock, &until) == 0)
		;
	pthread_mutex_unlock(&ip.lock);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct ip_stream *st = cls;
	size_t end = st->hold || st->cut ? st->hold_at : st->body.len, n;

	if (pos >= end && st->hold) {
		st->hold = 0;
		wait_at_hold();
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (pos >= end)
		return st->cut ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
	n = end - (size_t)pos < max ? end - (size_t)pos : max;
	memcpy(out, st->body.ptr + pos, n);
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct ip_stream *st = cls;

	buf_release(&st->body);
	free(st);
}

static enum MHD_Result queue_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								  MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ok;

	MHD_add_response_header(r, "Content-Type", "application/json");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result queue_json(struct MHD_Connection *c, unsigned status, json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	enum MHD_Result ok = queue_text(c, status, text);

	free(text);
	json_decref(doc);
	return ok;
}

static enum MHD_Result answer_error(struct MHD_Connection *c, int status, int anthropic)
{
	if (anthropic)
		return queue_json(c, (unsigned)status, json_pack(
			"{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
			status >= 500 ? "api_error" : "invalid_request_error", "message",
			"scripted failure"));
	return queue_json(c, (unsigned)status, json_pack(
		"{s:{s:s, s:s, s:n, s:n}}", "error", "message", "scripted failure", "type",
		status >= 500 ? "server_error" : "invalid_request_error", "param", "code"));
}

/* A whole reply: the step's JSON as text (OpenAI) or as the forced tool's input (Anthropic). */
static enum MHD_Result answer_whole(struct MHD_Connection *c, const struct fake_step *s,
				    const json_t *body, int anthropic)
{
	const char *text = s->json ? s->json : s->reply;
	const char *tool = json_string_value(json_object_get(json_object_get(body, "tool_choice"),
							     "name"));
	json_t *input;

	if (!anthropic)
		return queue_json(c, 200, json_pack(
			"{s:s, s:s, s:s, s:[{s:i, s:{s:s, s:s}, s:s}], s:{s:i, s:i, s:i}}", "id",
			"c1", "object", "chat.completion", "model", "m", "choices", "index", 0,
			"message", "role", "assistant", "content", text, "finish_reason", "stop",
			"usage", "prompt_tokens", 1, "completion_tokens", 1, "total_tokens", 2));
	input = tool ? json_loads(text, 0, NULL) : NULL;
	if (input)
		return queue_json(c, 200, json_pack(
			"{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:o}], s:s, s:{s:i, s:i}}", "id",
			"msg_1", "type", "message", "role", "assistant", "model", "m", "content",
			"type", "tool_use", "id", "toolu_1", "name", tool, "input", input,
			"stop_reason", "tool_use", "usage", "input_tokens", 1, "output_tokens", 1));
	return queue_json(c, 200, json_pack(
		"{s:s, s:s, s:s, s:s, s:[{s:s, s:s}], s:s, s:{s:i, s:i}}", "id", "msg_1", "type",
		"message", "role", "assistant", "model", "m", "content", "type", "text", "text",
		text, "stop_reason", "end_turn", "usage", "input_tokens", 1, "output_tokens", 1));
}

static void record(const char *url, json_t *body)
{
	pthread_mutex_lock(&ip.lock);
	if (!ip.requests)
		ip.requests = json_array();
	json_array_append_new(ip.requests, json_pack("{s:s, s:O}", "path", url, "body", body));
	pthread_mutex_unlock(&ip.lock);
}

static enum MHD_Result answer(struct MHD_Connection *c, const char *url, struct ip_req *rq)
{
	json_t *body = json_loadb(rq->body.ptr, rq->body.len, 0, NULL);
	int anthropic = strstr(url, "/messages") != NULL;
	struct fake_step s;
	struct MHD_Response *r;
	struct ip_stream *st;
	enum MHD_Result ok;

	if (!body)
		body = json_stringn(rq->body.ptr, rq->body.len);
	if (!body)
		body = json_string("(the request body is not valid UTF-8)");
	record(url, body);
	s = next_step();
	if (s.end == FAKE_STATUS)
		ok = answer_error(c, s.status, anthropic);
	else if (!json_is_true(json_object_get(body, "stream")))
		ok = answer_whole(c, &s, body, anthropic);
	else {
		st = plan_stream(&s, anthropic);
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st,
						      stream_free);
		MHD_add_response_header(r, "Content-Type", "text/event-stream");
		ok = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
	}
	step_free(&s);
	json_decref(body);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **con_cls)
{
	struct ip_req *rq = *con_cls;

	(void)cls;
	(void)method;
	(void)version;
	if (!rq) {
		rq = xcalloc(1, sizeof(*rq));
		rq->body = (struct buf)BUF_INIT(0);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		buf_add(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	return answer(c, url, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct ip_req *rq = *con_cls;

	(void)cls;
	(void)c;
	(void)why;
	if (rq) {
		buf_release(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

static void inproc_stop(void)
{
	fake_inproc_release();
	MHD_stop_daemon(ip.d);
	fake_inproc_reset();
}

int fake_inproc_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	if (ip.d)
		return 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ip.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
				0, NULL, NULL, on_request, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				MHD_OPTION_END);
	if (!ip.d)
		return -1;
	fake_inproc_port = MHD_get_daemon_info(ip.d, MHD_DAEMON_INFO_BIND_PORT)->port;
	atexit(inproc_stop);
	return 0;
}

void fake_inproc_queue(const struct fake_step *step)
{
	struct fake_step s = *step;

	s.reply = s.reply ? xstrdup(s.reply) : NULL;
	s.json = s.json ? xstrdup(s.json) : NULL;
	pthread_mutex_lock(&ip.lock);
	if (ip.n_steps < INPROC_QUEUE)
		ip.steps[ip.n_steps++] = s;
	else
		step_free(&s);
	pthread_mutex_unlock(&ip.lock);
}

void fake_inproc_reset(void)
{
	pthread_mutex_lock(&ip.lock);
	while (ip.n_steps)
		step_free(&ip.steps[--ip.n_steps]);
	json_decref(ip.requests);
	ip.requests = NULL;
	pthread_mutex_unlock(&ip.lock);
}

json_t *fake_inproc_take(void)
{
	json_t *r;

	pthread_mutex_lock(&ip.lock);
	r = ip.requests ? ip.requests : json_array();
	ip.requests = NULL;
	pthread_mutex_unlock(&ip.lock);
	return r;
}

unsigned fake_inproc_holds(void)
{
	unsigned n;

	pthread_mutex_lock(&ip.lock);
	n = ip.reached;
	pthread_mutex_unlock(&ip.lock);
	return n;
}

int fake_inproc_wait_hold(unsigned after, long timeout_ms)
{
	struct timespec until;
	int held;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ip.lock);
	while (ip.reached <= after && pthread_cond_timedwait(&ip.cond, &ip.lock, &until) == 0)
		;
	held = ip.reached > after;
	pthread_mutex_unlock(&ip.lock);
	return held;
}

void fake_inproc_release(void)
{
	pthread_mutex_lock(&ip.lock);
	ip.release++;
	pthread_cond_broadcast(&ip.cond);
	pthread_mutex_unlock(&ip.lock);
}
