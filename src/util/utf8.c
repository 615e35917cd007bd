/*
 * utf8.c -- strict UTF-8 validation (RFC 3629), code-point counting and the
 * repair of malformed text with U+FFFD.
 */
#include "util/utf8.h"
#include "util/buf.h"

/* Length of the well-formed sequence starting at s, or 0 if it is not one. */
static size_t seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && s[1] < 0xA0)
			return 0;       /* overlong */
		if (c == 0xED && s[1] >= 0xA0)
			return 0;       /* UTF-16 surrogate */
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
		    (s[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && s[1] < 0x90)
			return 0;       /* overlong */
		if (c == 0xF4 && s[1] >= 0x90)
			return 0;       /* above U+10FFFF */
		return 4;
	}
	return 0;
}

int utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		k = seq_len(p + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

size_t utf8_chars(const char *s, size_t n)
{
	size_t i, count = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			count++;
	return count;
}

size_t utf8_prefix_bytes(const char *s, size_t n, size_t max_chars)
{
	size_t i, count = 0;

	for (i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (count == max_chars)
				return i;
			count++;
		}
	}
	return n;
}

/*
 * Bytes in the longest prefix of s[0..n) that could begin a well-formed
 * sequence (its "maximal subpart", at least 1): the unit that the WHATWG
 * decoder replaces with one U+FFFD.
 */
static size_t maximal_subpart(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t want, i;

	if (c >= 0xC2 && c <= 0xDF)
		want = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		want = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		want = 4;
	else
		return 1;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	for (i = 1; i < want && i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			break;
		lo = 0x80;
		hi = 0xBF;
	}
	return i;
}

void utf8_repair(const char *s, size_t n, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		k = seq_len(p + i, n - i);
		if (k) {
			buf_add(out, s + i, k);
			i += k;
		} else {
			buf_add(out, "\xEF\xBF\xBD", 3);
			i += maximal_subpart(p + i, n - i);
		}
	}
}
