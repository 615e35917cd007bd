/*
 * utf8.h -- UTF-8 validation and character-safe truncation.
 *
 * Smriti counts characters (code points), never bytes, when it caps text
 * shown to a model, and it never cuts inside a multi-byte sequence.
 */
#ifndef SMRITI_UTF8_H
#define SMRITI_UTF8_H

#include <stddef.h>

/* 1 if s[0..n) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
int utf8_valid(const char *s, size_t n);

/* Number of code points in well-formed s[0..n). */
size_t utf8_chars(const char *s, size_t n);

/* Byte length of the first max_chars code points of well-formed s[0..n). */
size_t utf8_prefix_bytes(const char *s, size_t n, size_t max_chars);

/*
 * Terminal columns s[0..n) takes: combining marks none, East Asian wide
 * and emoji two, the rest one (malformed bytes one each).  A small table,
 * not wcwidth(3), so it holds in the C locale that services run in.
 */
size_t utf8_width(const char *s, size_t n);

struct buf;

/*
 * Appends s[0..n) to out with each malformed sequence (its maximal subpart,
 * as the WHATWG decoder does) replaced by U+FFFD.
 */
void utf8_repair(const char *s, size_t n, struct buf *out);

#endif
