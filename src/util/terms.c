/*
 * terms.c -- split text into search words (see terms.h).
 */
#include "util/terms.h"

#include <string.h>

static int is_word_byte(unsigned char c)
{
	return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

int terms_next(const char *s, size_t n, size_t *pos, size_t *start, size_t *len)
{
	size_t i = *pos;

	while (i < n && !is_word_byte((unsigned char)s[i]))
		i++;
	if (i == n) {
		*pos = n;
		return 0;
	}
	*start = i;
	while (i < n && is_word_byte((unsigned char)s[i]))
		i++;
	*len = i - *start;
	*pos = i;
	return 1;
}

void terms_fold(const char *w, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)w[i];

		out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	out[len] = '\0';
}

void terms_normalize(const char *s, size_t n, struct buf *out)
{
	char word[TERMS_WORD_MAX + 1];
	size_t pos = 0, start, len, added = 0;

	while (terms_next(s, n, &pos, &start, &len)) {
		if (len > TERMS_WORD_MAX)
			continue;
		if (added + len + 1 > TERMS_TEXT_MAX)
			break;
		terms_fold(s + start, len, word);
		if (added)
			buf_addch(out, ' ');
		buf_add(out, word, len);
		added += len + 1;
	}
}
