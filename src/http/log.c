/*
 * log.c -- the access log: one line per request, written by a thread of
 * its own.
 *
 * A write(2) per request cost a tenth of the server's time on the head
 * read, so request threads only append their line to a shared buffer under
 * a mutex, and the log thread writes whatever has gathered every 50 ms (or
 * at once past 64 KiB) in one call.  If stderr blocks and the buffer
 * reaches its cap, lines are dropped and counted rather than holding up
 * requests; the count is logged when writing resumes.
 */
#include "http/http_int.h"
#include "util/sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_FLUSH_MS 50
#define LOG_KICK_BYTES (64u << 10)
#define LOG_MAX_BYTES (4u << 20)

static void write_all(const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(STDERR_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Swaps the pending lines out under the lock and writes them outside it. */
static void flush_once(struct http_log *l, struct buf *out)
{
	struct buf t;
	size_t dropped;
	char note[160], now[32];
	int n;

	buf_reset(out);
	pthread_mutex_lock(&l->lock);
	t = l->pending;
	l->pending = *out;
	l->pending.max = LOG_MAX_BYTES;
	*out = t;
	dropped = l->dropped;
	l->dropped = 0;
	pthread_mutex_unlock(&l->lock);
	write_all(out->ptr, out->len);
	if (!dropped)
		return;
	if (l->json) {
		sys_now_iso(now);
		n = snprintf(note, sizeof(note), "{\"time\":\"%s\",\"level\":\"warning\","
			     "\"message\":\"access log lines dropped\",\"dropped\":%zu}\n", now, dropped);
	} else {
		n = snprintf(note, sizeof(note), "http: %zu access log lines dropped\n", dropped);
	}
	if (n > 0 && (size_t)n < sizeof(note))
		write_all(note, (size_t)n);
}

static void *log_main(void *arg)
{
	struct http_log *l = arg;
	struct buf out = BUF_INIT(0);
	struct timespec until;
	int stop = 0;

	sys_thread_name("smr-log");
	while (!stop) {
		sys_deadline(&until, LOG_FLUSH_MS);
		pthread_mutex_lock(&l->lock);
		if (!l->stop && l->pending.len < LOG_KICK_BYTES)
			pthread_cond_timedwait(&l->cond, &l->lock, &until);
		stop = l->stop;
		pthread_mutex_unlock(&l->lock);
		flush_once(l, &out);
	}
	buf_release(&out);
	return NULL;
}

int http_log_start(struct http_log *l)
{
	struct buf empty = BUF_INIT(LOG_MAX_BYTES);

	l->pending = empty;
	l->dropped = 0;
	l->stop = 0;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	if (pthread_create(&l->thread, NULL, log_main, l)) {
		pthread_mutex_destroy(&l->lock);
		pthread_cond_destroy(&l->cond);
		return -1;
	}
	l->running = 1;
	return 0;
}

void http_log_line(struct http_log *l, const char *line, size_t n)
{
	if (!l->running) {
		write_all(line, n);
		return;
	}
	pthread_mutex_lock(&l->lock);
	if (l->pending.len + n > LOG_MAX_BYTES) {
		l->dropped++;
	} else {
		buf_add(&l->pending, line, n);
		if (l->pending.len >= LOG_KICK_BYTES)
			pthread_cond_signal(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
}

void http_log_stop(struct http_log *l)
{
	if (!l->running)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = 1;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	buf_release(&l->pending);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	l->running = 0;
}
