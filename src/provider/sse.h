/*
 * sse.h -- a push parser for server-sent events (text/event-stream), per the
 * WHATWG HTML rules (WIRE.md section 4), fed the bytes of a reply in
 * whatever pieces the network delivers.
 *
 * Any split is fine: an event, a line, a CRLF pair or a multi-byte UTF-8
 * character may be cut across sse_feed() calls.  Lines end in CRLF, LF or
 * CR; a leading BOM is dropped; lines starting with ':' are comments (the
 * keep-alives some servers send); a blank line dispatches the event being
 * built; a field is "name:value" with one space after the colon removed; an
 * unknown field is ignored; an event with no data is not dispatched; an
 * event still being built at the end of the stream is dropped.  The data
 * handed to the callback is well-formed UTF-8: malformed bytes become U+FFFD
 * as the spec's decoder does.
 *
 * Hard caps bound what a hostile server can make us hold: a line longer
 * than max_line bytes, or an event whose data passes max_event bytes, makes
 * the parser fail (SSE_TOO_BIG, sticky) instead of buffering it.
 */
#ifndef SMRITI_PROVIDER_SSE_H
#define SMRITI_PROVIDER_SSE_H

#include <stddef.h>

#include "util/buf.h"

struct sse_event {
	const char *type;       /* the "event" field, "message" when absent */
	const char *data;       /* the data lines joined by LF; NUL-terminated */
	size_t data_len;
	const char *id;         /* the last event id seen so far ("" when none) */
};

/* Called per dispatched event; returns 0 to go on, non-zero to stop parsing. */
typedef int (*sse_event_fn)(void *ud, const struct sse_event *ev);

enum sse_status {
	SSE_OK = 0,
	SSE_STOPPED,            /* the callback asked to stop; later bytes are ignored */
	SSE_TOO_BIG,            /* a line or an event passed its cap */
};

struct sse_parser {
	sse_event_fn on_event;
	void *ud;
	size_t max_line, max_event;
	struct buf line;        /* a line cut across feeds */
	struct buf data, type, id, scratch;
	long retry_ms;          /* the last valid "retry" field, -1 if none */
	int bom_seen;           /* bytes of the BOM matched so far; 3 once past it */
	int after_cr;           /* the last byte was CR: an LF next is the same line end */
	enum sse_status status;
};

void sse_init(struct sse_parser *p, size_t max_line, size_t max_event, sse_event_fn on_event,
	      void *ud);

/* Parses n more bytes; returns the (sticky) status. */
enum sse_status sse_feed(struct sse_parser *p, const char *bytes, size_t n);

/* Back to the state after sse_init (for a new reply), keeping the memory. */
void sse_reset(struct sse_parser *p);

void sse_release(struct sse_parser *p);

#endif
