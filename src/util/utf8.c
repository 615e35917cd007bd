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

/* ---- display width ---- */

struct cp_range {
	unsigned lo, hi;
};

/* Combining marks and zero-width characters: they take no column. */
static const struct cp_range zero_width[] = {
	{ 0x0300, 0x036F }, { 0x0483, 0x0489 }, { 0x0591, 0x05BD }, { 0x0610, 0x061A },
	{ 0x064B, 0x065F }, { 0x0E31, 0x0E31 }, { 0x0E34, 0x0E3A }, { 0x0E47, 0x0E4E },
	{ 0x1AB0, 0x1AFF }, { 0x1DC0, 0x1DFF }, { 0x200B, 0x200F }, { 0x20D0, 0x20FF },
	{ 0xFE00, 0xFE0F }, { 0xFE20, 0xFE2F }, { 0xE0100, 0xE01EF },
};

/* East Asian Wide and Fullwidth blocks, and the emoji planes: two columns. */
static const struct cp_range double_width[] = {
	{ 0x1100, 0x115F }, { 0x2E80, 0x303E }, { 0x3041, 0x33FF }, { 0x3400, 0x4DBF },
	{ 0x4E00, 0x9FFF }, { 0xA000, 0xA4CF }, { 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF },
	{ 0xFE30, 0xFE4F }, { 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x1F300, 0x1F64F },
	{ 0x1F900, 0x1F9FF }, { 0x20000, 0x3FFFD },
};

static int in_ranges(unsigned cp, const struct cp_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cp >= r[i].lo && cp <= r[i].hi)
			return 1;
	return 0;
}

/* Decodes one code point of well-formed s (len from seq_len). */
static unsigned decode(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[5] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	unsigned cp = s[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		cp = (cp << 6) | (s[i] & 0x3F);
	return cp;
}

size_t utf8_width(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t cols = 0;

	while (n) {
		size_t len = seq_len(p, n);
		unsigned cp;

		if (!len) {                /* malformed: one column per byte, as a terminal shows it */
			cols++;
			p++;
			n--;
			continue;
		}
		cp = decode(p, len);
		if (in_ranges(cp, zero_width, sizeof(zero_width) / sizeof(*zero_width)))
			;
		else if (in_ranges(cp, double_width, sizeof(double_width) / sizeof(*double_width)))
			cols += 2;
		else
			cols++;
		p += len;
		n -= len;
	}
	return cols;
}
