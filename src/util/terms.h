/*
 * terms.h -- the one word splitter of search: what the index stores, what a
 * query is cut into, and where a snippet's highlights go all come from it.
 *
 * A word is a maximal run of ASCII letters and digits and of bytes >= 0x80
 * (all of non-ASCII text counts as word characters), folded to lower case
 * in ASCII only.  That is exactly how SQLite FTS5's "ascii" tokenizer cuts
 * text, and PostgreSQL's array_to_tsvector takes the words as given, so both
 * backends index and match the same words.  Words longer than TERMS_WORD_MAX
 * bytes are skipped (hashes, base64), and an item keeps at most
 * TERMS_TEXT_MAX bytes of words (a tsvector holds at most 1 MB).
 */
#ifndef SMRITI_TERMS_H
#define SMRITI_TERMS_H

#include <stddef.h>

#include "util/buf.h"

#define TERMS_WORD_MAX 64
#define TERMS_TEXT_MAX (256 * 1024)

/*
 * The next word of s[0..n) at or after *pos: its start and length in s.
 * Returns 0 when there is none.  *pos moves past it.  Over-long words are
 * returned too (callers that index skip them).
 */
int terms_next(const char *s, size_t n, size_t *pos, size_t *start, size_t *len);

/* Appends the lower-cased words of s[0..n) to out, one space between words. */
void terms_normalize(const char *s, size_t n, struct buf *out);

/* Lower-cases word w[0..len) (ASCII only) into out (len + 1 bytes). */
void terms_fold(const char *w, size_t len, char *out);

#endif
