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

int jspan_array_next(const char *p, size_t n, const char **at, size_t *len)
{
	const char *end, *s, *q;

	if (n < 2 || p[0] != '[' || p[n - 1] != ']')
		return -1;
	end = p + n - 1;
	s = *at ? *at + *len : p + 1;
	if (s == end)
		return 0;
	if (*at && *s++ != ',')
		return -1;
	q = jspan_end(s, end);   /* NULL on white space too */
	if (!q || (q != end && *q != ','))
		return -1;
	*at = s;
	*len = (size_t)(q - s);
	return 1;
}

int jspan_plain(const char *s, size_t n)
{
	unsigned char high = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
			return 0;
		high |= (unsigned char)s[i];
	}
	/* ASCII is UTF-8: the check of multi-byte sequences only where there are some */
	return high < 0x80 || utf8_valid(s, n);
}

int jspan_plain_string(const char *p, const char *q)
{
	return q - p >= 2 && *p == '"' && q[-1] == '"' && jspan_plain(p + 1, (size_t)(q - p - 2));
}

/* ---- is it jansson's compact text? ---- */

struct walk {
	const char *p, *end;
	int sorted;
};

/* A string as jansson escapes it: raw bytes but for " \ and controls. */
static int compact_string(struct walk *w, const char **s, size_t *len)
{
	const char *p = w->p + 1;

	*s = p;
	for (; p < w->end && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return 0;
		if (*p != '\\')
			continue;
		if (++p == w->end)
			return 0;
		if (*p && strchr("\"\\bfnrt", *p))
			continue;
		/* \u00XX, upper-case hex, only for a control without a short escape */
		if (*p != 'u' || w->end - p < 5 || p[1] != '0' || p[2] != '0' ||
		    (p[3] != '0' && p[3] != '1') || !strchr("0123456789ABCDEF", p[4]) || !p[4] ||
		    (p[3] == '0' && strchr("89ACD", p[4])))
			return 0;
		p += 4;
	}
	if (p == w->end)
		return 0;
	*len = (size_t)(p - *s);
	w->p = p + 1;
	return 1;
}

static int compact_value(struct walk *w, int depth);

/* An object's members: keys without escapes, none twice; sorted noted. */
static int compact_object(struct walk *w, int depth)
{
	const char *keys[16], *k;
	size_t lens[16], n = 0, len;

	w->p++;
	if (w->p < w->end && *w->p == '}')
		return w->p++, 1;
	for (;;) {
		if (w->p == w->end || *w->p != '"' || n == 16 || !compact_string(w, &k, &len) ||
		    memchr(k, '\\', len))
			return 0;
		for (size_t i = 0; i < n; i++)
			if (lens[i] == len && !memcmp(keys[i], k, len))
				return 0;
		if (n) {
			size_t m = len < lens[n - 1] ? len : lens[n - 1];
			int c = memcmp(keys[n - 1], k, m);

			if (c > 0 || (c == 0 && lens[n - 1] > len))
				w->sorted = 0;
		}
		keys[n] = k;
		lens[n++] = len;
		if (w->p == w->end || *w->p++ != ':' || !compact_value(w, depth + 1))
			return 0;
		if (w->p < w->end && *w->p == '}')
			return w->p++, 1;
		if (w->p == w->end || *w->p++ != ',')
			return 0;
	}
}

static int compact_array(struct walk *w, int depth)
{
	w->p++;
	if (w->p < w->end && *w->p == ']')
		return w->p++, 1;
	for (;;) {
		if (!compact_value(w, depth + 1))
			return 0;
		if (w->p < w->end && *w->p == ']')
			return w->p++, 1;
		if (w->p == w->end || *w->p++ != ',')
			return 0;
	}
}

/* An integer as %lld writes it; a real (., e, E) is not sure. */
static int compact_number(struct walk *w)
{
	const char *p = w->p;

	if (p < w->end && *p == '-')
		p++;
	if (p == w->end || *p < '0' || *p > '9')
		return 0;
	if (*p == '0' && p != w->p)   /* -0 is written 0 */
		return 0;
	while (p < w->end && *p >= '0' && *p <= '9')
		p++;
	if (p < w->end && (*p == '.' || *p == 'e' || *p == 'E'))
		return 0;
	w->p = p;
	return 1;
}

static int compact_value(struct walk *w, int depth)
{
	const char *s;
	size_t len;

	if (w->p == w->end || depth > 64)
		return 0;
	switch (*w->p) {
	case '{':
		return compact_object(w, depth);
	case '[':
		return compact_array(w, depth);
	case '"':
		return compact_string(w, &s, &len);
	case 't':
	case 'f':
	case 'n': {
		const char *lit = *w->p == 't' ? "true" : *w->p == 'f' ? "false" : "null";
		size_t n = strlen(lit);

		if ((size_t)(w->end - w->p) < n || memcmp(w->p, lit, n))
			return 0;
		w->p += n;
		return 1;
	}
	default:
		return compact_number(w);
	}
}

int jspan_compact(const char *p, size_t n)
{
	struct walk w = { p, p + n, 1 };

	if (!compact_value(&w, 0) || w.p != w.end)
		return 0;
	return w.sorted ? JSPAN_SORTED : JSPAN_COMPACT;
}
