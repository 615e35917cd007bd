/*
 * mcp_stdio.c -- the stdio transport: one JSON-RPC message per line on
 * stdin, one response per line on stdout, nothing else on stdout.
 *
 * Lines are cut at '\n' (a trailing '\r' is dropped, blank lines are
 * skipped).  A line longer than MCP_MAX_MESSAGE is never held in memory:
 * the reader stops buffering at the cap, discards the rest up to the next
 * newline, answers -32600 with id null and goes on with the next line.
 * Responses are written when no complete line is left in what was read, so
 * a client that pipelines requests gets its answers in large writes.
 *
 * While the client has resources/subscribe subscriptions, the loop looks at
 * the subscribed HEADs and writes the notifications due (mcp_subscribe.c)
 * when wake_fd says a write may have moved one (the process's watch on
 * writes, ops/changes.h, writes a byte to it), or, without one (a remote
 * store), every SUB_POLL_MS; without subscriptions it just blocks in read.
 */
#include "mcp/mcp_int.h"
#include "util/xalloc.h"
#include "util/sys.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define SUB_POLL_MS 500

struct stdio_state {
	struct mcp_session *s;
	struct buf line;         /* the line being read, capped at MCP_MAX_MESSAGE */
	struct buf out;          /* responses not yet written */
	int discarding;          /* 1 while skipping the rest of an over-long line */
	int out_fd;
	int wake_fd;             /* readable when a write may have moved a HEAD; -1: none */
};

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n) {
		k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int flush_out(struct stdio_state *st)
{
	int rc = write_all(st->out_fd, st->out.ptr, st->out.len);

	buf_reset(&st->out);
	return rc;
}

static void queue(struct stdio_state *st, char *resp)
{
	if (!resp)
		return;
	buf_adds(&st->out, resp);
	buf_addch(&st->out, '\n');
	free(resp);
}

static void too_long(struct stdio_state *st)
{
	json_t *e = mcp_error(NULL, MCP_INVALID_REQUEST,
			      "invalid request: message longer than %zu bytes", MCP_MAX_MESSAGE);

	queue(st, json_dumps(e, JSON_COMPACT));
	json_decref(e);
}

/* A complete line (without its '\n') is in st->line, or the line overflowed. */
static void end_of_line(struct stdio_state *st)
{
	size_t n = st->line.len;

	if (st->discarding || st->line.err) {
		too_long(st);
	} else {
		if (n && st->line.ptr[n - 1] == '\r')
			n--;
		if (strspn(st->line.ptr, " \t\r") < n)
			queue(st, mcp_handle_text(st->s, st->line.ptr, n));
	}
	st->discarding = 0;
	buf_reset(&st->line);
}

/* Appends to the current line; past the cap, frees it and discards until '\n'. */
static void take(struct stdio_state *st, const char *p, size_t n)
{
	if (st->discarding)
		return;
	buf_add(&st->line, p, n);
	if (st->line.err) {
		buf_release(&st->line);
		st->line.max = MCP_MAX_MESSAGE;
		st->discarding = 1;
	}
}

static void feed(struct stdio_state *st, const char *p, size_t n)
{
	const char *nl;

	while (n) {
		nl = memchr(p, '\n', n);
		if (!nl) {
			take(st, p, n);
			return;
		}
		take(st, p, (size_t)(nl - p));
		end_of_line(st);
		n -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
}

/*
 * Queues the notifications due for subscriptions: when woken, else at most
 * every SUB_POLL_MS (without a wake_fd).
 */
static void check_subs(struct stdio_state *st, int64_t *last_us, int woken)
{
	int64_t now = sys_monotonic_us();
	json_t *due, *msg;
	size_t i;

	if (!mcp_subscriptions_active(st->s))
		return;
	if (!woken && (st->wake_fd >= 0 || now - *last_us < SUB_POLL_MS * 1000))
		return;
	*last_us = now;
	due = mcp_subscriptions_check(st->s);
	json_array_foreach(due, i, msg)
		queue(st, json_dumps(msg, JSON_COMPACT));
	json_decref(due);
}

/* Empties the wake pipe: one look answers every write before it. */
static void drain_wake(int fd)
{
	char sink[64];

	while (read(fd, sink, sizeof(sink)) > 0)
		;
}

/*
 * 1 when input is ready (or the wait was cut short), 0 when it is time to
 * look at subscriptions (*woken: because wake_fd said so).
 */
static int wait_input(struct stdio_state *st, int in_fd, int *woken)
{
	struct pollfd pfd[2] = { { in_fd, POLLIN, 0 }, { st->wake_fd, POLLIN, 0 } };
	int n;

	*woken = 0;
	if (!mcp_subscriptions_active(st->s))
		return 1;
	n = poll(pfd, st->wake_fd >= 0 ? 2 : 1, st->wake_fd >= 0 ? -1 : SUB_POLL_MS);
	if (n > 0 && pfd[1].revents) {
		drain_wake(st->wake_fd);
		*woken = 1;
	}
	return n > 0 && pfd[0].revents;
}

int mcp_serve_stdio(struct mcp_session *s, int in_fd, int out_fd, int wake_fd)
{
	struct stdio_state st = { s, BUF_INIT(MCP_MAX_MESSAGE), BUF_INIT(0), 0, out_fd, wake_fd };
	char *chunk = xmalloc(READ_CHUNK);
	int64_t last_look = 0;
	ssize_t k;
	int rc = 0, woken;

	mcp_session_enable_notifications(s);
	for (;;) {
		if (!wait_input(&st, in_fd, &woken)) {
			check_subs(&st, &last_look, woken);
			if (st.out.len && flush_out(&st)) {
				rc = 1;
				break;
			}
			continue;
		}
		k = read(in_fd, chunk, READ_CHUNK);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		feed(&st, chunk, (size_t)k);
		/* with a watch, a look after each read: the messages may have written */
		check_subs(&st, &last_look, woken || wake_fd >= 0);
		if (st.out.len && flush_out(&st)) {
			rc = 1;
			break;
		}
	}
	if (!rc && (st.line.len || st.discarding))
		end_of_line(&st);     /* a last message without its newline */
	if (!rc && st.out.len)
		rc = flush_out(&st) ? 1 : 0;
	free(chunk);
	buf_release(&st.line);
	buf_release(&st.out);
	return rc;
}
