/*
 * sse.c -- the server-sent events push parser (see sse.h for the rules it
 * follows and the caps it enforces).
 */
#include "provider/sse.h"
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

static const char bom[3] = { '\xEF', '\xBB', '\xBF' };

void sse_init(struct sse_parser *p, size_t max_line, size_t max_event, sse_event_fn on_event,
	      void *ud)
{
	memset(p, 0, sizeof(*p));
	p->on_event = on_event;
	p->ud = ud;
	p->max_line = max_line;
	p->max_event = max_event;
	p->line = (struct buf)BUF_INIT(0);
	p->data = (struct buf)BUF_INIT(0);
	p->type = (struct buf)BUF_INIT(0);
	p->id = (struct buf)BUF_INIT(0);
	p->scratch = (struct buf)BUF_INIT(0);
	p->retry_ms = -1;
}

void sse_reset(struct sse_parser *p)
{
	buf_reset(&p->line);
	buf_reset(&p->data);
	buf_reset(&p->type);
	buf_reset(&p->id);
	p->retry_ms = -1;
	p->bom_seen = 0;
	p->after_cr = 0;
	p->status = SSE_OK;
}

void sse_release(struct sse_parser *p)
{
	buf_release(&p->line);
	buf_release(&p->data);
	buf_release(&p->type);
	buf_release(&p->id);
	buf_release(&p->scratch);
}

static int field_is(const char *f, size_t n, const char *name)
{
	return strlen(name) == n && !memcmp(f, name, n);
}

static void dispatch(struct sse_parser *p)
{
	struct sse_event ev;

	if (!p->data.len) {
		buf_reset(&p->type);
		return;
	}
	p->data.ptr[--p->data.len] = '\0';      /* the last data line's LF */
	ev.data = p->data.ptr;
	ev.data_len = p->data.len;
	if (!utf8_valid(p->data.ptr, p->data.len)) {
		buf_reset(&p->scratch);
		utf8_repair(p->data.ptr, p->data.len, &p->scratch);
		ev.data = p->scratch.ptr;
		ev.data_len = p->scratch.len;
	}
	ev.type = p->type.len ? p->type.ptr : "message";
	ev.id = p->id.ptr;
	if (p->on_event(p->ud, &ev))
		p->status = SSE_STOPPED;
	buf_reset(&p->data);
	buf_reset(&p->type);
}

static void set_retry(struct sse_parser *p, const char *v, size_t n)
{
	long ms = 0;

	if (!n || n > 9)
		return;         /* empty, or past any sensible delay */
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return;
		ms = ms * 10 + (v[i] - '0');
	}
	p->retry_ms = ms;
}

static void take_field(struct sse_parser *p, const char *f, size_t fn, const char *v, size_t vn)
{
	if (field_is(f, fn, "data")) {
		if (p->data.len + vn + 1 > p->max_event) {
			p->status = SSE_TOO_BIG;
			return;
		}
		buf_add(&p->data, v, vn);
		buf_addch(&p->data, '\n');
	} else if (field_is(f, fn, "event")) {
		buf_reset(&p->type);
		buf_add(&p->type, v, vn);
	} else if (field_is(f, fn, "id")) {
		if (!memchr(v, '\0', vn)) {
			buf_reset(&p->id);
			buf_add(&p->id, v, vn);
		}
	} else if (field_is(f, fn, "retry")) {
		set_retry(p, v, vn);
	}
}

static void take_line(struct sse_parser *p, const char *s, size_t n)
{
	const char *colon;

	if (!n) {
		dispatch(p);
		return;
	}
	if (s[0] == ':')
		return;         /* a comment, e.g. a keep-alive */
	colon = memchr(s, ':', n);
	if (!colon) {
		take_field(p, s, n, "", 0);
		return;
	}
	n -= (size_t)(colon + 1 - s);
	if (n && colon[1] == ' ')
		take_field(p, s, (size_t)(colon - s), colon + 2, n - 1);
	else
		take_field(p, s, (size_t)(colon - s), colon + 1, n);
}

/* Keeps the start of a line cut by the end of this feed. */
static void hold_partial(struct sse_parser *p, const char *s, size_t n)
{
	if (p->line.len + n > p->max_line) {
		p->status = SSE_TOO_BIG;
		return;
	}
	buf_add(&p->line, s, n);
}

static size_t line_end(const char *s, size_t i, size_t n)
{
	while (i < n && s[i] != '\n' && s[i] != '\r')
		i++;
	return i;
}

static void feed_lines(struct sse_parser *p, const char *s, size_t n)
{
	size_t i = 0, j;

	while (i < n && p->status == SSE_OK) {
		if (p->after_cr) {
			p->after_cr = 0;
			if (s[i] == '\n') {
				i++;
				continue;
			}
		}
		j = line_end(s, i, n);
		if (j == n) {
			hold_partial(p, s + i, n - i);
			return;
		}
		if (p->line.len || j - i > p->max_line) {
			hold_partial(p, s + i, j - i);
			if (p->status != SSE_OK)
				return;
			take_line(p, p->line.ptr, p->line.len);
			buf_reset(&p->line);
		} else {
			take_line(p, s + i, j - i);
		}
		p->after_cr = s[j] == '\r';
		i = j + 1;
	}
}

enum sse_status sse_feed(struct sse_parser *p, const char *bytes, size_t n)
{
	while (p->bom_seen < 3 && n && p->status == SSE_OK) {
		if (*bytes == bom[p->bom_seen]) {
			p->bom_seen++;
			bytes++;
			n--;
			continue;
		}
		/* not a BOM after all: what matched so far is text */
		feed_lines(p, bom, (size_t)p->bom_seen);
		p->bom_seen = 3;
	}
	if (p->status == SSE_OK)
		feed_lines(p, bytes, n);
	return p->status;
}
