/*
 * buf.c -- growable, capped byte buffer (see buf.h for the contract).
 */
#include "util/buf.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char buf_empty[1];

static int buf_grow(struct buf *b, size_t extra)
{
	size_t want, cap;

	if (b->err)
		return -1;
	if (b->max && (extra > b->max || b->len > b->max - extra)) {
		b->err = 1;
		return -1;
	}
	want = b->len + extra + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	if (b->ptr == buf_empty)
		b->ptr = NULL;
	b->ptr = xrealloc(b->ptr, cap);
	b->cap = cap;
	return 0;
}

void buf_reserve(struct buf *b, size_t extra)
{
	buf_grow(b, extra);
}

void buf_add(struct buf *b, const void *data, size_t n)
{
	if (buf_grow(b, n))
		return;
	memcpy(b->ptr + b->len, data, n);
	b->len += n;
	b->ptr[b->len] = '\0';
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addch(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/*
 * Formats into the room the buffer has, and only when that was too small
 * grows it and formats again (as git's strbuf does): measuring first with
 * vsnprintf(NULL, 0) cost a second pass on every call, and glibc walks a
 * long %s of that pass through a 64-byte scratch buffer.
 */
void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->ptr && b->ptr != buf_empty && b->cap > b->len ? b->cap - b->len : 0;
	int n;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = room ? vsnprintf(b->ptr + b->len, room, fmt, ap) : vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (room)
			b->ptr[b->len] = '\0';
		return;
	}
	if ((size_t)n < room) {
		if (b->max && (size_t)n > b->max - b->len) {   /* over the cap: as buf_grow refuses */
			b->ptr[b->len] = '\0';
			b->err = 1;
			return;
		}
		b->len += (size_t)n;
		return;
	}
	if (room)
		b->ptr[b->len] = '\0';   /* the failed attempt's bytes are not the buffer's */
	if (buf_grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->ptr != buf_empty)
		b->ptr[0] = '\0';
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->ptr == buf_empty ? xstrdup("") : b->ptr;

	if (len)
		*len = b->len;
	b->ptr = buf_empty;
	b->len = b->cap = 0;
	b->err = 0;
	return p;
}

void buf_release(struct buf *b)
{
	if (b->ptr != buf_empty)
		free(b->ptr);
	b->ptr = buf_empty;
	b->len = b->cap = 0;
	b->err = 0;
}
