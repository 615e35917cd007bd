/*
 * jspan.h -- where a JSON value ends in a text, found without building it.
 *
 * A reader of a large document (a bundle of 100,000 checkpoints) walks its
 * structure with these and hands each small value it needs to jansson, so
 * that the whole document is never one tree in memory.  jspan_end() only
 * finds the extent (strings, escapes, nesting); it does not check the
 * value, which whoever uses the span still parses.
 */
#ifndef SMRITI_JSPAN_H
#define SMRITI_JSPAN_H

#include <stddef.h>

/* The first byte of [p, end) that is not JSON white space (end if none). */
const char *jspan_ws(const char *p, const char *end);

/*
 * The end of the value that starts at p (p itself is not white space): one
 * past its closing quote or bracket, or past its last character for a
 * number or literal.  NULL when the value is not terminated before end or
 * does not start like a JSON value.
 */
const char *jspan_end(const char *p, const char *end);

/*
 * The values of the compact JSON array [p, p + n) (no white space between
 * them), one a call: *at starts NULL; each call moves *at and *len to the
 * next value and returns 1, then 0 after the last; -1 when the text is not
 * such an array.
 */
int jspan_array_next(const char *p, size_t n, const char **at, size_t *len);

/*
 * 1 when the bytes [s, s + n) need nothing escaped in a JSON string (no
 * quote, backslash or control character) and are well-formed UTF-8.
 */
int jspan_plain(const char *s, size_t n);

/*
 * 1 when the string token [p, q) (quotes included) holds no escape and no
 * control character and is well-formed UTF-8: then its value is the bytes
 * between the quotes, and jansson writes it back exactly as [p, q).
 */
int jspan_plain_string(const char *p, const char *q);

/*
 * What jansson would write for the value [p, p + n), which it parsed
 * (so the text is valid JSON), with JSON_COMPACT: JSPAN_COMPACT when it is
 * these very bytes (no white space, strings escaped as jansson escapes,
 * integers without a sign or zero to drop, no reals, no key twice),
 * JSPAN_SORTED when, besides, every object's keys are in byte order (so
 * JSON_SORT_KEYS writes them too), 0 when it may not be.
 */
#define JSPAN_COMPACT 1
#define JSPAN_SORTED 2
int jspan_compact(const char *p, size_t n);

#endif
