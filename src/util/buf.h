/*
 * buf.h -- a growable byte buffer that is never NULL and has a hard cap.
 *
 * Modelled on git's strbuf and curl's dynbuf: ptr always points at a
 * NUL-terminated string (buf_empty when nothing was added), and once an
 * append would pass max the buffer stops growing and err sticks, so code fed
 * by the network can append freely and check once at the end.
 */
#ifndef SMRITI_BUF_H
#define SMRITI_BUF_H

#include <stddef.h>

struct buf {
	char *ptr;
	size_t len, cap, max;   /* max 0 means no cap */
	int err;                /* set once an append went past max */
};

extern char buf_empty[1];

#define BUF_INIT(limit) { buf_empty, 0, 0, (limit), 0 }

void buf_add(struct buf *b, const void *data, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addch(struct buf *b, char c);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Room for extra more bytes at once (a size known ahead spares the doublings). */
void buf_reserve(struct buf *b, size_t extra);
void buf_reset(struct buf *b);          /* len back to 0, keeps memory */
/* Hands the string to the caller, who free()s it; b is back to BUF_INIT. */
char *buf_detach(struct buf *b, size_t *len);
void buf_release(struct buf *b);        /* frees memory; b is back to BUF_INIT */

#endif
