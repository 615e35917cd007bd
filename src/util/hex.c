/*
 * hex.c -- lower-case hexadecimal (see hex.h).
 */
#include "util/hex.h"

#include <string.h>

static const char digits[] = "0123456789abcdef";

void hex_digits(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
}

void hex_encode(const uint8_t *b, size_t n, char *out)
{
	hex_digits(b, n, out);
	out[2 * n] = '\0';
}

size_t hex_span(const char *s)
{
	return strspn(s, digits);
}

static int digit_value(char c)
{
	const char *p = c ? strchr(digits, c) : NULL;

	return p ? (int)(p - digits) : -1;
}

int hex_decode(const char *s, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		int hi = digit_value(s[2 * i]), lo = hi < 0 ? -1 : digit_value(s[2 * i + 1]);

		if (lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
