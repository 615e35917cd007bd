/*
 * loop.c -- the provider's event loop: one thread running libcurl's multi
 * interface over epoll, carrying every call of that provider (see loop.h
 * for the life of a call, its timeouts and the threading rules).
 *
 * Other threads talk to the loop through two queues under a mutex (calls to
 * start, calls to cancel) and an eventfd that wakes it.  Everything else --
 * the multi handle, the list of calls, their state -- belongs to the loop
 * thread alone.
 */
#include "provider/call.h"
#include "provider/decode.h"
#include "provider/loop.h"
#include "util/metrics.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

_Static_assert(PROVIDER_KINDS <= METRICS_PROVIDER_SLOTS, "every provider kind counted apart");

#define MAX_EVENTS 64
#define RECV_BUFFER 4096L      /* CURLOPT_BUFFERSIZE: see easy_for */

enum call_state {
	CALL_IDLE,              /* no transfer, no timer: not started yet, or between attempts */
	CALL_RUNNING,           /* its easy handle is in the multi */
	CALL_WAITING,           /* for its retry time */
	CALL_DONE,
};

/* Where loop_post's caller waits. */
struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	enum smr_rc rc;
	struct smr_err err;
};

struct provider_stream {
	atomic_int refs;                /* the caller's handle, the loop, a queued cancel */
	atomic_int cancelled;
	struct provider *p;
	struct provider_loop *loop;
	struct call_request rq;         /* its headers with call_headers()'s added */
	long timeout_ms, first_byte_ms, idle_ms;
	int stream;                     /* an SSE reply; else a whole body for loop_post */
	struct provider_stream_cbs cbs;
	void *ud;
	struct waiter *waiter;          /* loop_post's, else NULL */

	/* the loop thread's */
	enum call_state state;
	CURL *easy;
	struct call_reply reply;        /* status, headers; the body unless decoded */
	struct reply_decoder dec;
	int sse;                        /* this attempt's body goes to the decoder */
	int got_body;                   /* this attempt has received body bytes */
	size_t relayed;                 /* text bytes handed to on_delta */
	int64_t start_us, attempt_us, last_byte_us, retry_at_us;
	char errbuf[CURL_ERROR_SIZE];
	struct provider_stream *prev, *next;    /* in loop->calls */

	/* under loop->lock */
	struct provider_stream *start_next, *cancel_next;
	int cancel_queued;              /* once: a second cancel has nothing to add */
};

struct provider_loop {
	struct provider *p;
	pthread_t thread;
	int epfd, wakefd;
	CURLM *multi;
	pthread_mutex_t lock;
	struct provider_stream *starts, **starts_tail, *cancels;
	int stopping;

	/* the loop thread's */
	struct provider_stream *calls;  /* running or waiting to retry */
	int64_t curl_due_us;            /* when libcurl wants its timeout action, or -1 */
	int64_t check_due_us;           /* no call's own deadline is earlier, or -1 */
	unsigned seed;                  /* backoff jitter */
};

/* ---- calls and their references ---- */

static void call_unref(struct provider_stream *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	decoder_release(&s->dec);
	call_reply_release(&s->reply);
	call_request_release(&s->rq);
	free(s);
}

static void on_text(void *ud, const char *text, size_t len)
{
	struct provider_stream *s = ud;

	if (atomic_load(&s->cancelled))
		return;         /* Stop was pressed while this piece was being read */
	s->relayed += len;
	s->cbs.on_delta(s->ud, text, len);
}

static void on_usage(void *ud, const struct provider_usage *u)
{
	struct provider_stream *s = ud;

	if (s->cbs.on_usage && !atomic_load(&s->cancelled))
		s->cbs.on_usage(s->ud, u);
}

/* A call with two references (the caller's and the loop's), taking rq's contents. */
static struct provider_stream *call_new(struct provider *p, struct call_request *rq,
					int stream, long timeout_ms)
{
	struct provider_stream *s = xcalloc(1, sizeof(*s));

	atomic_init(&s->refs, 2);
	atomic_init(&s->cancelled, 0);
	s->p = p;
	s->rq = *rq;
	memset(rq, 0, sizeof(*rq));
	s->rq.headers = call_headers(s->rq.headers, stream);
	s->stream = stream;
	s->timeout_ms = timeout_ms > 0 ? timeout_ms : p->cfg.timeout_ms;
	if (stream) {
		s->first_byte_ms = p->cfg.first_byte_timeout_ms;
		s->idle_ms = p->cfg.idle_timeout_ms;
	}
	s->reply = (struct call_reply){ .body = BUF_INIT(p->cfg.max_reply_bytes),
					.retry_after_ms = -1, .should_retry = -1 };
	decoder_init(&s->dec, p, on_text, on_usage, s);
	s->start_us = sys_monotonic_us();
	return s;
}

static void link_call(struct provider_loop *l, struct provider_stream *s)
{
	s->prev = NULL;
	s->next = l->calls;
	if (l->calls)
		l->calls->prev = s;
	l->calls = s;
}

static void unlink_call(struct provider_loop *l, struct provider_stream *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else if (l->calls == s)
		l->calls = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

/* ---- the end of a call ---- */

static void wake_waiter(struct provider_stream *s, const struct smr_err *err)
{
	struct waiter *w = s->waiter;

	pthread_mutex_lock(&w->lock);
	if (err)
		w->err = *err;
	w->rc = err ? err->code : SMR_OK;
	w->done = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void tell_caller(struct provider_stream *s, enum provider_end end,
			const struct smr_err *err)
{
	struct provider_outcome o = {
		.end = end,
		.err = err,
		.finish_reason = s->dec.finish_reason,
		.model = s->dec.model,
		.request_id = s->reply.request_id ? s->reply.request_id : s->dec.reply_id,
		.usage = s->dec.usage,
		.text_bytes = s->relayed,
		.attempts = s->reply.attempts,
		.waited_ms = s->reply.waited_ms,
		.latency_us = sys_monotonic_us() - s->start_us,
	};

	if (err)
		s->cbs.on_error(s->ud, &o);
	else
		s->cbs.on_done(s->ud, &o);
}

/* Counts the call for GET /metrics: how it ended and how long it took. */
static void count_call(const struct provider_stream *s, enum provider_end end,
		       const struct smr_err *err)
{
	enum metrics_outcome o = METRICS_OK;

	/* a stream ends in an error for a non-2xx answer; a waiter's caller judges it later */
	if (err && err->code == SMR_ETIMEOUT)
		o = METRICS_TIMEOUT;
	else if (s->reply.status && (s->reply.status < 200 || s->reply.status > 299))
		o = METRICS_HTTP_ERROR;
	else if (err)
		o = METRICS_ERROR;
	else if (end == PROVIDER_END_TRUNCATED)
		o = METRICS_TRUNCATED;
	else if (end == PROVIDER_END_STOPPED || end == PROVIDER_END_INTERRUPTED)
		o = METRICS_STOPPED;
	metrics_provider_call(provider_kind(s->p->name), o, sys_monotonic_us() - s->start_us);
}

/* Ends s: exactly one callback (or the waiter's wake-up), then the loop lets go of it. */
static void finish(struct provider_loop *l, struct provider_stream *s, enum provider_end end,
		   const struct smr_err *err)
{
	if (s->state == CALL_RUNNING)
		curl_multi_remove_handle(l->multi, s->easy);
	unlink_call(l, s);
	if (s->easy)
		curl_easy_cleanup(s->easy);
	s->easy = NULL;
	s->state = CALL_DONE;
	count_call(s, end, err);
	if (s->waiter)
		wake_waiter(s, err);
	else
		tell_caller(s, end, err);
	call_unref(s);
}

static void fail(struct provider_loop *l, struct provider_stream *s, enum smr_rc code,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Ends s with an error "<provider>: <message>". */
static void fail(struct provider_loop *l, struct provider_stream *s, enum smr_rc code,
		 const char *fmt, ...)
{
	struct smr_err err = SMR_ERR_INIT;
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	smr_errf(&err, code, "%s: %s", s->p->name, msg);
	finish(l, s, PROVIDER_END_ERROR, &err);
}

/* ---- deadlines: first byte, idle, retry ---- */

static void note_deadline(struct provider_loop *l, int64_t t)
{
	if (t >= 0 && (l->check_due_us < 0 || t < l->check_due_us))
		l->check_due_us = t;
}

static int64_t call_deadline(const struct provider_stream *s)
{
	if (s->state == CALL_WAITING)
		return s->retry_at_us;
	if (s->state != CALL_RUNNING)
		return -1;
	if (!s->got_body)
		return s->first_byte_ms > 0 ? s->attempt_us + s->first_byte_ms * 1000 : -1;
	return s->idle_ms > 0 ? s->last_byte_us + s->idle_ms * 1000 : -1;
}

/* ---- one attempt ---- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct provider_stream *s = ud;
	size_t n = size * nmemb;

	if (atomic_load(&s->cancelled))
		return CURL_WRITEFUNC_ERROR;
	s->last_byte_us = sys_monotonic_us();
	if (!s->got_body) {
		s->got_body = 1;
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->reply.status);
		/* an SSE body unless the server answered with a JSON document */
		s->sse = s->stream && s->reply.status / 100 == 2 && !s->reply.json_body;
		note_deadline(s->loop, call_deadline(s));
	}
	if (s->sse)
		return decoder_feed(&s->dec, data, n) ? CURL_WRITEFUNC_ERROR : n;
	buf_add(&s->reply.body, data, n);
	return s->reply.body.err ? CURL_WRITEFUNC_ERROR : n;
}

static CURL *easy_for(struct provider_stream *s)
{
	CURL *c = curl_easy_init();

	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, s->rq.url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->rq.headers);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, s->rq.body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(s->rq.body));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, s->p->cfg.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, s->timeout_ms);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "smriti/0.1");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, call_on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &s->reply);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(c, CURLOPT_PRIVATE, s);
	/*
	 * libcurl allocates each transfer's receive buffer at this size
	 * (default 16 KiB) for as long as the transfer lasts; a provider's
	 * events are a few hundred bytes, and a bigger body is only read in
	 * more pieces, while the default's bytes are held by every reply that
	 * streams (docs/http.md, "Memory under a burst").
	 */
	curl_easy_setopt(c, CURLOPT_BUFFERSIZE, RECV_BUFFER);
	return c;
}

static void attempt_begin(struct provider_loop *l, struct provider_stream *s)
{
	if (!s->easy)
		s->easy = easy_for(s);
	if (!s->easy) {
		fail(l, s, SMR_EINTERNAL, "cannot set up a transfer");
		return;
	}
	call_reply_next_attempt(&s->reply);
	decoder_reset(&s->dec);
	s->reply.attempts++;
	s->errbuf[0] = '\0';
	s->got_body = s->sse = 0;
	s->attempt_us = sys_monotonic_us();
	s->state = CALL_RUNNING;
	curl_multi_add_handle(l->multi, s->easy);
	note_deadline(l, call_deadline(s));
}

static void retry_later(struct provider_loop *l, struct provider_stream *s, long delay_ms)
{
	s->state = CALL_WAITING;
	s->retry_at_us = sys_monotonic_us() + (int64_t)delay_ms * 1000;
	s->reply.waited_ms += delay_ms;
	s->reply.http_us += (int64_t)delay_ms * 1000;
	note_deadline(l, s->retry_at_us);
}

/* A 2xx JSON document where a stream was asked for: relayed as one piece. */
static void whole_reply_as_stream(struct provider_loop *l, struct provider_stream *s)
{
	struct provider_req none = { 0 };
	struct provider_resp resp = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	json_t *doc = call_parse_reply(s->p, &s->reply, &err);

	if (doc && !s->p->ops->parse_reply(s->p, &none, doc, &resp, &err)) {
		decoder_text(&s->dec, resp.text, strlen(resp.text));
		decoder_usage(&s->dec, resp.prompt_tokens, resp.completion_tokens);
		decoder_set(&s->dec.model, json_object_get(doc, "model"));
		s->dec.finish_reason = resp.finish_reason;
		resp.finish_reason = NULL;
	}
	json_decref(doc);
	provider_resp_release(&resp);
	if (err.code || s->dec.failed)
		finish(l, s, PROVIDER_END_ERROR, err.code ? &err : &s->dec.err);
	else
		finish(l, s, decoder_end_for(s->dec.finish_reason), NULL);
}

static void http_reply(struct provider_loop *l, struct provider_stream *s)
{
	struct smr_err err = SMR_ERR_INIT;
	long delay;

	if (s->reply.status / 100 != 2) {
		/* no text was relayed: non-2xx bodies are never decoded */
		delay = call_http_retry_delay(s->p, &s->reply, &l->seed);
		if (delay >= 0) {
			retry_later(l, s, delay);
		} else if (!s->stream) {
			finish(l, s, PROVIDER_END_COMPLETE, NULL);  /* loop_post's caller reads it */
		} else {
			call_http_error(s->p, &s->reply, &err);
			finish(l, s, PROVIDER_END_ERROR, &err);
		}
		return;
	}
	if (!s->stream) {
		finish(l, s, PROVIDER_END_COMPLETE, NULL);
	} else if (s->sse || !s->got_body) {
		decoder_close(&s->dec);
		if (s->dec.failed)
			finish(l, s, PROVIDER_END_ERROR, &s->dec.err);
		else
			finish(l, s, decoder_end_for(s->dec.finish_reason), NULL);
	} else {
		whole_reply_as_stream(l, s);
	}
}

static void transport_failed(struct provider_loop *l, struct provider_stream *s, CURLcode cc)
{
	struct smr_err err = SMR_ERR_INIT;
	long delay = -1;

	if (!s->dec.text_bytes)
		delay = call_transport_retry_delay(s->p, cc, s->reply.attempts, &l->seed);
	if (delay >= 0) {
		retry_later(l, s, delay);
	} else if (!s->dec.text_bytes) {
		call_transport_error(s->p, cc, s->rq.url, s->errbuf, s->timeout_ms, &s->reply, &err);
		finish(l, s, PROVIDER_END_ERROR, &err);
	} else if (cc == CURLE_OPERATION_TIMEDOUT) {
		fail(l, s, SMR_ETIMEOUT, "reply not finished within %ld ms", s->timeout_ms);
	} else {
		fail(l, s, SMR_EPROVIDER, "connection lost mid-reply: %s",
		     *s->errbuf ? s->errbuf : curl_easy_strerror(cc));
	}
}

static void attempt_end(struct provider_loop *l, struct provider_stream *s, CURLcode cc)
{
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->reply.status);
	curl_multi_remove_handle(l->multi, s->easy);
	s->state = CALL_IDLE;
	s->reply.http_us += sys_monotonic_us() - s->attempt_us;
	if (atomic_load(&s->cancelled))
		finish(l, s, PROVIDER_END_STOPPED, NULL);
	else if (s->dec.failed)
		finish(l, s, PROVIDER_END_ERROR, &s->dec.err);
	else if (cc != CURLE_OK)
		transport_failed(l, s, cc);
	else
		http_reply(l, s);
}

/* First byte or idle deadline passed. */
static void time_out(struct provider_loop *l, struct provider_stream *s)
{
	if (s->got_body)
		fail(l, s, SMR_ETIMEOUT, "the reply stalled: nothing received for %ld ms",
		     s->idle_ms);
	else
		fail(l, s, SMR_ETIMEOUT, "no reply within %ld ms", s->first_byte_ms);
}

static void check_deadlines(struct provider_loop *l)
{
	int64_t now = sys_monotonic_us(), t;
	struct provider_stream *s, *next;

	if (l->check_due_us < 0 || now < l->check_due_us)
		return;
	l->check_due_us = -1;
	for (s = l->calls; s; s = next) {
		next = s->next;
		t = call_deadline(s);
		if (t < 0)
			continue;
		if (t > now)
			note_deadline(l, t);
		else if (s->state == CALL_WAITING)
			attempt_begin(l, s);
		else
			time_out(l, s);
	}
}

/* ---- libcurl's side: sockets, timer, finished transfers ---- */

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *ud, void *socketp)
{
	struct provider_loop *l = ud;
	struct epoll_event ev = { 0 };

	(void)easy;
	(void)socketp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	ev.data.fd = fd;
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) && errno == ENOENT)
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *ud)
{
	struct provider_loop *l = ud;

	(void)multi;
	l->curl_due_us = timeout_ms < 0 ? -1 : sys_monotonic_us() + (int64_t)timeout_ms * 1000;
	return 0;
}

static void reap(struct provider_loop *l)
{
	char *priv;
	CURLMsg *m;
	CURLcode cc;
	int left;

	while ((m = curl_multi_info_read(l->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		cc = m->data.result;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		attempt_end(l, (struct provider_stream *)priv, cc);
	}
}

static void socket_ready(struct provider_loop *l, const struct epoll_event *ev)
{
	int flags = 0, running;

	if (ev->events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (ev->events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (ev->events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(l->multi, ev->data.fd, flags, &running);
}

/* ---- the thread ---- */

static int wait_ms(const struct provider_loop *l)
{
	int64_t due = l->curl_due_us, now;

	if (due < 0 || (l->check_due_us >= 0 && l->check_due_us < due))
		due = l->check_due_us;
	if (due < 0)
		return -1;
	now = sys_monotonic_us();
	if (due <= now)
		return 0;
	return (due - now) / 1000 + 1 > INT_MAX ? INT_MAX : (int)((due - now) / 1000 + 1);
}

static void wake(struct provider_loop *l)
{
	uint64_t one = 1;

	if (write(l->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		abort();        /* cannot happen with a valid eventfd */
}

/* Starts and cancels queued by other threads; 1 once the loop should stop. */
static int take_commands(struct provider_loop *l)
{
	struct provider_stream *starts, *cancels, *s;

	pthread_mutex_lock(&l->lock);
	if (l->stopping) {
		pthread_mutex_unlock(&l->lock);
		return 1;
	}
	starts = l->starts;
	cancels = l->cancels;
	l->starts = l->cancels = NULL;
	l->starts_tail = &l->starts;
	pthread_mutex_unlock(&l->lock);
	for (; starts; starts = s) {
		s = starts->start_next;
		link_call(l, starts);
		if (atomic_load(&starts->cancelled))
			finish(l, starts, PROVIDER_END_STOPPED, NULL);
		else
			attempt_begin(l, starts);
	}
	for (; cancels; cancels = s) {
		s = cancels->cancel_next;
		if (cancels->state == CALL_RUNNING || cancels->state == CALL_WAITING)
			finish(l, cancels, PROVIDER_END_STOPPED, NULL);
		call_unref(cancels);
	}
	return 0;
}

static void run_once(struct provider_loop *l)
{
	struct epoll_event evs[MAX_EVENTS];
	uint64_t count;
	int n, running;

	n = epoll_wait(l->epfd, evs, MAX_EVENTS, wait_ms(l));
	for (int i = 0; i < n; i++) {
		if (evs[i].data.fd == l->wakefd) {
			if (read(l->wakefd, &count, sizeof(count)) < 0 && errno != EAGAIN)
				abort();
			continue;
		}
		socket_ready(l, &evs[i]);
	}
	if (l->curl_due_us >= 0 && sys_monotonic_us() >= l->curl_due_us) {
		l->curl_due_us = -1;
		curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	reap(l);
}

/* Every call still held ends as INTERRUPTED. */
static void shut_down(struct provider_loop *l)
{
	struct smr_err err = SMR_ERR_INIT;
	struct provider_stream *s;

	smr_errf(&err, SMR_EUNAVAIL, "%s: the provider was shut down during the call", l->p->name);
	pthread_mutex_lock(&l->lock);
	while ((s = l->starts)) {
		l->starts = s->start_next;
		link_call(l, s);
	}
	while ((s = l->cancels)) {
		l->cancels = s->cancel_next;
		call_unref(s);
	}
	pthread_mutex_unlock(&l->lock);
	while (l->calls)
		finish(l, l->calls, PROVIDER_END_INTERRUPTED, &err);
}

static void *loop_main(void *arg)
{
	struct provider_loop *l = arg;

	/* relaying deltas may wait a little (if the operator says so: SMRITI_BACKGROUND_NICE) */
	sys_thread_name("smr-loop");
	sys_thread_lower_priority();
	for (;;) {
		run_once(l);
		if (take_commands(l))
			break;
		check_deadlines(l);
	}
	shut_down(l);
	return NULL;
}

static void loop_close_fds(struct provider_loop *l)
{
	if (l->multi)
		curl_multi_cleanup(l->multi);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->wakefd >= 0)
		close(l->wakefd);
	pthread_mutex_destroy(&l->lock);
}

static struct provider_loop *loop_new(struct provider *p, struct smr_err *err)
{
	struct provider_loop *l = xcalloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN };

	l->epfd = l->wakefd = -1;
	l->p = p;
	l->curl_due_us = l->check_due_us = -1;
	l->starts_tail = &l->starts;
	l->seed = (unsigned)sys_monotonic_us();
	pthread_mutex_init(&l->lock, NULL);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	l->multi = curl_multi_init();
	ev.data.fd = l->wakefd;
	if (l->epfd < 0 || l->wakefd < 0 || !l->multi ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev)) {
		smr_errf(err, SMR_EINTERNAL, "%s: cannot start the provider loop: %s", p->name,
			 strerror(errno));
		goto fail;
	}
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
	if (pthread_create(&l->thread, NULL, loop_main, l)) {
		smr_errf(err, SMR_EINTERNAL, "%s: cannot start the provider loop's thread", p->name);
		goto fail;
	}
	return l;
fail:
	loop_close_fds(l);
	free(l);
	return NULL;
}

void provider_loop_free(struct provider_loop *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stopping = 1;
	pthread_mutex_unlock(&l->lock);
	wake(l);
	pthread_join(l->thread, NULL);
	loop_close_fds(l);
	free(l);
}

/* ---- the callers' side ---- */

/* Queues s on p's loop, starting the loop if this is p's first call. */
static enum smr_rc submit(struct provider *p, struct provider_stream *s, struct smr_err *err)
{
	struct provider_loop *l;

	pthread_mutex_lock(&p->loop_lock);
	if (!p->loop)
		p->loop = loop_new(p, err);
	l = p->loop;
	pthread_mutex_unlock(&p->loop_lock);
	if (!l)
		return SMR_EINTERNAL;
	s->loop = l;
	pthread_mutex_lock(&l->lock);
	if (l->stopping) {
		pthread_mutex_unlock(&l->lock);
		return smr_errf(err, SMR_EUNAVAIL, "%s: the provider is shutting down", p->name);
	}
	s->start_next = NULL;
	*l->starts_tail = s;
	l->starts_tail = &s->start_next;
	pthread_mutex_unlock(&l->lock);
	wake(l);
	return SMR_OK;
}

enum smr_rc provider_stream_start(struct provider *p, const struct provider_req *req,
				  const struct provider_stream_cbs *cbs, void *ud,
				  struct provider_stream **out, struct smr_err *err)
{
	struct call_request rq;
	struct provider_stream *s;

	*out = NULL;
	if (req->schema)
		return smr_errf(err, SMR_EINVAL,
				"%s: a reply that must match a schema cannot be streamed", p->name);
	p->ops->request(p, req, 1, &rq);
	s = call_new(p, &rq, 1, req->timeout_ms);
	s->cbs = *cbs;
	s->ud = ud;
	if (submit(p, s, err)) {
		call_unref(s);
		call_unref(s);
		return err->code;
	}
	*out = s;
	return SMR_OK;
}

void provider_stream_cancel(struct provider_stream *s)
{
	struct provider_loop *l = s->loop;
	int queue;

	atomic_store(&s->cancelled, 1);
	pthread_mutex_lock(&l->lock);
	queue = !s->cancel_queued && !l->stopping;
	if (queue) {
		s->cancel_queued = 1;
		atomic_fetch_add(&s->refs, 1);
		s->cancel_next = l->cancels;
		l->cancels = s;
	}
	pthread_mutex_unlock(&l->lock);
	if (queue)
		wake(l);
}

void provider_stream_release(struct provider_stream *s)
{
	if (s)
		call_unref(s);
}

enum smr_rc loop_post(struct provider *p, struct call_request *rq, long timeout_ms,
		      struct call_reply *out, struct smr_err *err)
{
	struct waiter w = { .done = 0 };
	struct provider_stream *s = call_new(p, rq, 0, timeout_ms);
	enum smr_rc rc;

	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	s->waiter = &w;
	rc = submit(p, s, err);
	if (rc) {
		call_unref(s);          /* the loop's reference, never taken up */
	} else {
		pthread_mutex_lock(&w.lock);
		while (!w.done)
			pthread_cond_wait(&w.cond, &w.lock);
		pthread_mutex_unlock(&w.lock);
		rc = w.rc;
		if (rc)
			*err = w.err;
	}
	*out = s->reply;
	memset(&s->reply, 0, sizeof(s->reply));
	call_unref(s);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return rc;
}
