/*
 * jspan.c -- the extent of JSON values in a text (see jspan.h).
 */
#include "util/jspan.h"
#include "util/utf8.h"

#include <string.h>

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

const char *jspan_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

/* One past the closing quote of the string opening at p, or NULL. */
static const char *string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		const char *b;

		if (!q)
			return NULL;
		/* a quote preceded by an odd number of backslashes is escaped */
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q + 1;
		p = q;
	}
	return NULL;
}

/* One past the bracket closing the object or array opening at p, or NULL. */
static const char *nested_end(const char *p, const char *end)
{
	size_t depth = 0;

	while (p < end) {
		char c = *p;

		if (c == '"') {
			p = string_end(p, end);
			if (!p)
				return NULL;
			continue;
		}
		if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

const char *jspan_end(const char *p, const char *end)
{
	if (p >= end)
		return NULL;
	if (*p == '"')
		return string_end(p, end);
	if (*p == '{' || *p == '[')
		return nested_end(p, end);
	if (!strchr("-0123456789tfn", *p))
		return NULL;
	while (p < end && !is_ws(*p) && *p != ',' && *p != '}' && *p != ']' && *p != ':')
		p++;
	return p;
}

int jspan_plain_string(const char *p, const char *q)
{
	if (q - p < 2 || *p != '"' || q[-1] != '"')
		return 0;
	for (const char *s = p + 1; s < q - 1; s++)
		if (*s == '\\' || (unsigned char)*s < 0x20)
			return 0;
	return utf8_valid(p + 1, (size_t)(q - p - 2));
}
