/*
 * test_provider_stream.c -- streamed calls on the provider loop against the
 * real fake provider process: text, usage and ends for both wire formats
 * and vLLM's, bytes cut anywhere, deltas that arrive while the fake still
 * holds the rest, mid-stream errors and cuts, retries before the first
 * byte but never after, Stop, the timeouts, shutting down, and hundreds of
 * streams on one loop thread.
 */
#include "harness.h"
#include "fake_provider.h"
#include "provider/loop.h"
#include "provider/provider_int.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MAX_MS 15000       /* a bound against hangs, never a timing assertion */

/* What the callbacks of one call saw. */
struct rec {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct buf text;
	int deltas, split_char, usage_calls, done_calls, error_calls;
	struct provider_usage usage;
	enum provider_end end;
	struct smr_err err;
	char finish[32], request_id[64];
	int attempts;
	size_t text_bytes;
};

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->text = (struct buf)BUF_INIT(0);
}

static void rec_release(struct rec *r)
{
	buf_release(&r->text);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}

static void on_delta(void *ud, const char *text, size_t len)
{
	struct rec *r = ud;

	pthread_mutex_lock(&r->lock);
	if (!utf8_valid(text, len))
		r->split_char = 1;
	buf_add(&r->text, text, len);
	r->deltas++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static void on_usage(void *ud, const struct provider_usage *u)
{
	struct rec *r = ud;

	pthread_mutex_lock(&r->lock);
	r->usage = *u;
	r->usage_calls++;
	pthread_mutex_unlock(&r->lock);
}

static void on_end(struct rec *r, const struct provider_outcome *o, int error)
{
	pthread_mutex_lock(&r->lock);
	r->end = o->end;
	if (o->err)
		r->err = *o->err;
	snprintf(r->finish, sizeof(r->finish), "%s", o->finish_reason ? o->finish_reason : "-");
	snprintf(r->request_id, sizeof(r->request_id), "%s", o->request_id ? o->request_id : "-");
	r->attempts = o->attempts;
	r->text_bytes = o->text_bytes;
	r->usage = o->usage;
	if (error)
		r->error_calls++;
	else
		r->done_calls++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static void on_done(void *ud, const struct provider_outcome *o)
{
	on_end(ud, o, 0);
}

static void on_error(void *ud, const struct provider_outcome *o)
{
	on_end(ud, o, 1);
}

static const struct provider_stream_cbs cbs = { on_delta, on_usage, on_done, on_error };

/* Waits until the call ended (want_deltas < 0) or had that many deltas; 0 on a hang. */
static int wait_for(struct rec *r, int want_deltas)
{
	struct timespec until;
	int ok;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MAX_MS / 1000;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		ok = want_deltas < 0 ? r->done_calls + r->error_calls > 0 : r->deltas >= want_deltas;
		if (ok || pthread_cond_timedwait(&r->cond, &r->lock, &until))
			break;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

static const struct provider_msg one_msg[] = { { "user", "tell me" } };

static struct provider_req req_for(const struct provider_msg *msgs, size_t n)
{
	struct provider_req r = { 0 };

	r.model = "stream-model";
	r.system = "Be brief.";
	r.msgs = msgs;
	r.n_msgs = n;
	r.temperature = -1;
	return r;
}

/* Starts streaming req from p into r (initialised here); the handle. */
static struct provider_stream *begin(struct provider *p, const struct provider_req *req,
				     struct rec *r)
{
	struct provider_stream *s = NULL;
	struct smr_err err = SMR_ERR_INIT;

	rec_init(r);
	CHECK_INT(provider_stream_start(p, req, &cbs, r, &s, &err), SMR_OK);
	return s;
}

/* Streams one reply from p to the end; the caller releases r. */
static void stream_one(struct provider *p, struct rec *r)
{
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = begin(p, &req, r);

	CHECK(wait_for(r, -1));
	provider_stream_release(s);
	CHECK_INT(r->done_calls + r->error_calls, 1);
	CHECK(!r->split_char);
}

static size_t requests_made(void)
{
	json_t *reqs = fake_requests();
	size_t n = json_array_size(reqs);

	json_decref(reqs);
	return n;
}

#define MULTI "Gr\xC3\xBC\xC3\x9F" "e \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x8C\x8D caf\xC3\xA9 ok"

TEST(stream_openai_text_usage_and_request)
{
	struct provider *p;
	struct rec r;
	json_t *reqs;
	const json_t *q;

	SCRIPT("[{\"reply\":\"" MULTI "\",\"deltas\":5,\"usage\":{\"input\":7,\"output\":6}}]");
	p = fake_provider("openai", "/v1");
	stream_one(p, &r);
	CHECK_INT(r.done_calls, 1);
	CHECK_INT(r.end, PROVIDER_END_COMPLETE);
	CHECK_STR(r.text.ptr, MULTI);
	CHECK_INT(r.deltas, 5);
	CHECK_INT(r.text_bytes, strlen(MULTI));
	CHECK_INT(r.usage.prompt_tokens, 7);
	CHECK_INT(r.usage.completion_tokens, 6);
	CHECK_INT(r.usage_calls, 1);
	CHECK_STR(r.finish, "stop");
	CHECK_INT(r.attempts, 1);
	CHECK(!strncmp(r.request_id, "req_", 4));
	reqs = fake_requests();
	q = json_array_get(reqs, 0);
	CHECK(json_is_true(json_object_get(json_object_get(q, "body"), "stream")));
	CHECK(json_is_true(json_object_get(json_object_get(json_object_get(q, "body"),
							   "stream_options"), "include_usage")));
	CHECK_STR(json_string_value(json_object_get(json_object_get(q, "headers"), "accept")),
		  "text/event-stream");
	json_decref(reqs);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_anthropic_text_usage_and_truncation)
{
	struct provider *p;
	struct rec r;

	SCRIPT("[{\"reply\":\"" MULTI "\",\"deltas\":5,\"usage\":{\"input\":9,\"output\":5}},"
	       "{\"reply\":\"cut off\",\"truncated\":true}]");
	p = fake_provider("anthropic", "");
	stream_one(p, &r);
	CHECK_INT(r.end, PROVIDER_END_COMPLETE);
	CHECK_STR(r.text.ptr, MULTI);
	CHECK_INT(r.deltas, 5);
	CHECK_INT(r.usage.prompt_tokens, 9);
	CHECK_INT(r.usage.completion_tokens, 5);
	CHECK_STR(r.finish, "end_turn");
	rec_release(&r);
	stream_one(p, &r);
	CHECK_INT(r.done_calls, 1);
	CHECK_INT(r.end, PROVIDER_END_TRUNCATED);
	CHECK_STR(r.finish, "max_tokens");
	CHECK_STR(r.text.ptr, "cut off");
	rec_release(&r);
	provider_free(p);
}

TEST(stream_local_vllm_dialect_truncated)
{
	struct provider *p;
	struct rec r;

	SCRIPT("[{\"reply\":\"seven words\",\"dialect\":\"vllm\",\"truncated\":true,"
	       "\"usage\":{\"input\":3,\"output\":2}}]");
	p = fake_provider("local", "/v1");
	stream_one(p, &r);
	CHECK_INT(r.end, PROVIDER_END_TRUNCATED);
	CHECK_STR(r.finish, "length");
	CHECK_STR(r.text.ptr, "seven words");
	CHECK_INT(r.usage.prompt_tokens, 3);
	CHECK_INT(r.usage.completion_tokens, 2);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_bytes_cut_anywhere_with_any_line_ending)
{
	static const char *const steps[] = {
		"{\"reply\":\"" MULTI "\",\"chunk_bytes\":1,\"line_ending\":\"crlf\","
		"\"bom\":true,\"comments\":true}",
		/* spread out so that most pieces arrive as reads of their own */
		"{\"reply\":\"" MULTI "\",\"chunk_bytes\":13,\"line_ending\":\"cr\",\"trickle_ms\":50}",
		"{\"reply\":\"" MULTI "\",\"chunk_bytes\":7,\"comments\":true}",
	};
	struct provider *p;
	struct rec r;
	char *script;

	for (size_t i = 0; i < 3; i++) {
		for (int backend = 0; backend < 2; backend++) {
			script = xasprintf("[%s]", steps[i]);
			SCRIPT(script);
			free(script);
			p = backend ? fake_provider("anthropic", "") : fake_provider("openai", "/v1");
			stream_one(p, &r);
			CHECK_INT(r.end, PROVIDER_END_COMPLETE);
			if (strcmp(r.text.ptr, MULTI))
				test_fail(__FILE__, __LINE__, "step %zu backend %d: '%s' (%s)", i,
					  backend, r.text.ptr, r.err.msg);
			rec_release(&r);
			provider_free(p);
		}
	}
}

TEST(stream_first_delta_arrives_while_the_fake_holds_the_rest)
{
	struct provider *p = NULL;
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = NULL;
	struct rec r;
	json_t *holds;

	SCRIPT("[{\"reply\":\"first second third\",\"deltas\":3,\"hold\":\"rest\"}]");
	p = fake_provider("openai", "/v1");
	s = begin(p, &req, &r);
	CHECK(wait_for(&r, 1));
	holds = fake_control("GET", "/_control/holds", NULL);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_object_get(holds, "holds"),
								     "rest"), "waiting")), 1);
	json_decref(holds);
	pthread_mutex_lock(&r.lock);
	CHECK_STR(r.text.ptr, "first ");
	CHECK_INT(r.done_calls + r.error_calls, 0);
	pthread_mutex_unlock(&r.lock);
	fake_release("rest");
	CHECK(wait_for(&r, -1));
	CHECK_INT(r.end, PROVIDER_END_COMPLETE);
	CHECK_STR(r.text.ptr, "first second third");
	provider_stream_release(s);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_mid_stream_error_keeps_the_text_and_names_the_error)
{
	struct provider *p;
	struct rec r;

	SCRIPT("[{\"reply\":\"one two three four\",\"deltas\":4,\"stream_error\":true,"
	       "\"fail_after\":2},{\"reply\":\"never\"}]");
	p = fake_provider("openai", "/v1");
	stream_one(p, &r);
	CHECK_INT(r.error_calls, 1);
	CHECK_INT(r.end, PROVIDER_END_ERROR);
	CHECK_INT(r.err.code, SMR_EPROVIDER);
	CHECK_STR(r.err.msg, "openai: error mid-reply: server_error: The server had an error "
		  "while processing your request. Sorry about that!");
	CHECK_STR(r.text.ptr, "one two ");
	CHECK_INT(r.text_bytes, 8);
	CHECK_INT(requests_made(), 1);
	rec_release(&r);
	provider_free(p);

	SCRIPT("[{\"reply\":\"alpha beta gamma\",\"deltas\":3,\"stream_error\":true}]");
	p = fake_provider("anthropic", "");
	stream_one(p, &r);
	CHECK_INT(r.error_calls, 1);
	CHECK_STR(r.err.msg, "anthropic: error mid-reply: overloaded_error: Overloaded");
	CHECK_STR(r.text.ptr, "alpha beta ");
	CHECK_INT(r.usage.prompt_tokens >= 1, 1);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_cut_after_text_is_an_error_and_not_retried)
{
	struct provider *p;
	struct rec r;

	SCRIPT("[{\"reply\":\"kept part lost part\",\"deltas\":4,\"cut\":true,\"fail_after\":2},"
	       "{\"reply\":\"never\"}]");
	p = fake_provider("openai", "/v1");
	stream_one(p, &r);
	CHECK_INT(r.error_calls, 1);
	CHECK_INT(r.err.code, SMR_EPROVIDER);
	CHECK(!strncmp(r.err.msg, "openai: connection lost mid-reply: ", 35));
	CHECK_STR(r.text.ptr, "kept part ");
	CHECK_INT(r.attempts, 1);
	CHECK_INT(requests_made(), 1);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_failures_before_the_first_text_are_retried)
{
	struct provider *p;
	struct rec r;

	/* a cut before any text, then 429 with retry-after: 0, then the reply */
	SCRIPT("[{\"reply\":\"x\",\"cut\":true,\"fail_after\":0},{\"status\":429,\"retry_after\":0},"
	       "{\"reply\":\"once only\"}]");
	p = fake_provider("openai", "/v1");
	stream_one(p, &r);
	CHECK_INT(r.end, PROVIDER_END_COMPLETE);
	CHECK_STR(r.text.ptr, "once only");
	CHECK_INT(r.attempts, 3);
	CHECK_INT(requests_made(), 3);
	rec_release(&r);
	provider_free(p);

	SCRIPT("[{\"status\":529},{\"reply\":\"recovered\"}]");
	p = fake_provider("anthropic", "");
	stream_one(p, &r);
	CHECK_STR(r.text.ptr, "recovered");
	CHECK_INT(r.attempts, 2);
	rec_release(&r);
	provider_free(p);

	SCRIPT("[{\"status\":500},{\"status\":500},{\"status\":500},{\"reply\":\"x\"}]");
	p = fake_provider("openai", "/v1");
	stream_one(p, &r);
	CHECK_INT(r.error_calls, 1);
	CHECK(strstr(r.err.msg, "openai: 500 server_error: The server had an error") == r.err.msg);
	CHECK(strstr(r.err.msg, "(after 3 attempts)") != NULL);
	CHECK_INT(r.deltas, 0);
	rec_release(&r);
	provider_free(p);
}

/* The number of threads in this process. */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

TEST(stream_cancel_stops_at_once_and_keeps_the_text)
{
	struct provider *p;
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = NULL;
	struct rec r;
	json_t *holds = NULL;

	SCRIPT("[{\"reply\":\"shown then stopped\",\"deltas\":3,\"hold\":\"h\"}]");
	p = fake_provider("openai", "/v1");
	s = begin(p, &req, &r);
	CHECK(wait_for(&r, 1));
	provider_stream_cancel(s);
	CHECK(wait_for(&r, -1));
	CHECK_INT(r.done_calls, 1);
	CHECK_INT(r.error_calls, 0);
	CHECK_INT(r.end, PROVIDER_END_STOPPED);
	CHECK_STR(r.text.ptr, "shown ");
	provider_stream_cancel(s);              /* after the end: nothing happens */
	provider_stream_release(s);
	/* the transfer was aborted: the fake sees its client go while it still holds the rest */
	for (int i = 0; i < 500; i++) {
		json_decref(holds);
		holds = fake_control("GET", "/_control/holds", NULL);
		if (!json_integer_value(json_object_get(json_object_get(
			    json_object_get(holds, "holds"), "h"), "waiting")))
			break;
		usleep(10000);
	}
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_object_get(holds, "holds"),
								     "h"), "waiting")), 0);
	CHECK(!json_is_true(json_object_get(json_object_get(json_object_get(holds, "holds"), "h"),
					    "released")));
	json_decref(holds);
	CHECK_INT(r.done_calls, 1);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_cancel_before_the_reply_and_during_a_retry_wait)
{
	struct provider *p;
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = NULL;
	struct rec r;

	SCRIPT("[{\"delay_ms\":20000,\"reply\":\"too late\"}]");
	p = fake_provider("anthropic", "");
	s = begin(p, &req, &r);
	provider_stream_cancel(s);
	CHECK(wait_for(&r, -1));
	CHECK_INT(r.end, PROVIDER_END_STOPPED);
	CHECK_INT(r.text_bytes, 0);
	provider_stream_release(s);
	rec_release(&r);

	/* 429 asking for 30 s: Stop ends the wait, no second request */
	SCRIPT("[{\"status\":429,\"retry_after\":30},{\"reply\":\"never\"}]");
	s = begin(p, &req, &r);
	while (requests_made() < 1)
		usleep(5000);
	provider_stream_cancel(s);
	CHECK(wait_for(&r, -1));
	CHECK_INT(r.end, PROVIDER_END_STOPPED);
	CHECK_INT(r.attempts, 1);
	CHECK_INT(requests_made(), 1);
	provider_stream_release(s);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_timeouts_first_byte_idle_and_total)
{
	struct provider *p;
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = NULL;
	struct rec r;

	SCRIPT("[{\"delay_ms\":5000,\"reply\":\"late\"},{\"reply\":\"never\"}]");
	p = fake_provider("openai", "/v1");
	p->cfg.first_byte_timeout_ms = 300;
	stream_one(p, &r);
	CHECK_INT(r.err.code, SMR_ETIMEOUT);
	CHECK_STR(r.err.msg, "openai: no reply within 300 ms");
	CHECK_INT(requests_made(), 1);          /* timeouts are not retried */
	rec_release(&r);

	SCRIPT("[{\"reply\":\"before silence\",\"deltas\":2,\"silence_ms\":5000}]");
	p->cfg.idle_timeout_ms = 300;
	stream_one(p, &r);
	CHECK_INT(r.err.code, SMR_ETIMEOUT);
	CHECK_STR(r.err.msg, "openai: the reply stalled: nothing received for 300 ms");
	CHECK_STR(r.text.ptr, "before ");
	rec_release(&r);

	/* the total time of an attempt (timeout_ms) cuts a reply still trickling in */
	SCRIPT("[{\"reply\":\"a b c d e f\",\"deltas\":6,\"trickle_ms\":3000}]");
	p->cfg.idle_timeout_ms = 60000;
	req.timeout_ms = 600;
	s = begin(p, &req, &r);
	CHECK(wait_for(&r, -1));
	CHECK_INT(r.err.code, SMR_ETIMEOUT);
	CHECK_STR(r.err.msg, "openai: reply not finished within 600 ms");
	CHECK(r.deltas >= 1 && r.deltas < 6);
	provider_stream_release(s);
	rec_release(&r);
	provider_free(p);
}

TEST(stream_free_interrupts_calls_in_flight)
{
	struct provider *p;
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = NULL;
	struct rec r;

	SCRIPT("[{\"reply\":\"alpha beta gamma\",\"hold\":\"forever\"}]");
	p = fake_provider("openai", "/v1");
	s = begin(p, &req, &r);
	CHECK(wait_for(&r, 1));
	provider_free(p);
	CHECK_INT(r.error_calls, 1);
	CHECK_INT(r.end, PROVIDER_END_INTERRUPTED);
	CHECK_INT(r.err.code, SMR_EUNAVAIL);
	CHECK_STR(r.text.ptr, "alpha ");
	provider_stream_release(s);
	rec_release(&r);
}

TEST(stream_refuses_schemas_and_reads_a_json_answer)
{
	struct provider *p;
	struct provider_req req = req_for(one_msg, 1);
	struct provider_stream *s = (struct provider_stream *)&req;
	struct smr_err err = SMR_ERR_INIT;
	json_t *schema = json_pack("{s:s}", "type", "object");
	struct rec r;

	SCRIPT("[{\"malformed\":true}]");
	p = fake_provider("openai", "/v1");
	req.schema = schema;
	rec_init(&r);
	CHECK_INT(provider_stream_start(p, &req, &cbs, &r, &s, &err), SMR_EINVAL);
	CHECK(s == NULL);
	CHECK_STR(err.msg, "openai: a reply that must match a schema cannot be streamed");
	rec_release(&r);
	/* a server that answers a stream request with a JSON document is read as one */
	stream_one(p, &r);
	CHECK_INT(r.error_calls, 1);
	CHECK(!strncmp(r.err.msg, "openai: malformed reply (HTTP 200): ", 36));
	rec_release(&r);
	provider_free(p);
	json_decref(schema);
}

#define CONCURRENT 200

TEST(stream_hundreds_at_once_on_one_loop_thread)
{
	struct provider_msg *msgs = xcalloc(CONCURRENT, sizeof(*msgs));
	struct provider_stream **s = xcalloc(CONCURRENT, sizeof(*s));
	struct rec *r = xcalloc(CONCURRENT, sizeof(*r));
	struct smr_err err = SMR_ERR_INIT;
	struct provider_req req;
	struct provider *p;
	struct buf steps = BUF_INIT(0);
	int threads, complete = 0;
	char *want;

	buf_addch(&steps, '[');
	for (int i = 0; i < CONCURRENT; i++)
		buf_adds(&steps, i ? ",{\"deltas\":4,\"trickle_ms\":400}" :
			 "{\"deltas\":4,\"trickle_ms\":400}");
	buf_addch(&steps, ']');
	SCRIPT(steps.ptr);
	p = fake_provider("openai", "/v1");
	threads = thread_count();
	for (int i = 0; i < CONCURRENT; i++) {
		msgs[i] = (struct provider_msg){ "user", xasprintf("message number %d", i) };
		req = req_for(&msgs[i], 1);
		rec_init(&r[i]);
		CHECK_INT(provider_stream_start(p, &req, &cbs, &r[i], &s[i], &err), SMR_OK);
	}
	CHECK(wait_for(&r[0], 1));
	CHECK_INT(thread_count(), threads + 1);  /* the loop, not a thread per call */
	for (int i = 0; i < CONCURRENT; i++) {
		CHECK(wait_for(&r[i], -1));
		want = xasprintf("fake reply to: message number %d", i);
		complete += r[i].end == PROVIDER_END_COMPLETE && !strcmp(r[i].text.ptr, want);
		free(want);
		provider_stream_release(s[i]);
		rec_release(&r[i]);
		free((char *)msgs[i].content);
	}
	CHECK_INT(complete, CONCURRENT);
	provider_free(p);
	buf_release(&steps);
	free(msgs);
	free(s);
	free(r);
}
