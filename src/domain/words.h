/*
 * words.h -- the word toolkit under checkpoint review (domain/review.c).
 * Pure code.
 *
 *  - Text is split into words: ASCII letters and digits, '_' and any
 *    non-ASCII code point that is not punctuation; an apostrophe inside a
 *    word is dropped ("don't" -> "dont").  ASCII is folded to lower case.
 *  - A word is significant unless it is a stop word (articles, pronouns,
 *    prepositions, auxiliaries, question words and the "use"-like verbs);
 *    significant words are compared by a crude stem (a plural 's' dropped).
 */
#ifndef SMRITI_DOMAIN_WORDS_H
#define SMRITI_DOMAIN_WORDS_H

#include <stddef.h>

struct word {
	size_t start, end;      /* byte range in the text */
	char *norm;             /* folded, apostrophes dropped */
};

struct words {
	struct word *v;
	size_t n, cap;
};

/* Splits text into words; release with words_release(). */
void words_split(const char *text, struct words *ws);
void words_release(struct words *ws);

/* 1 if w is one of the NULL-terminated list. */
int words_in_list(const char *w, const char *const *list);

/* 1 unless w (folded) is a stop word. */
int words_significant(const char *w);

/* A set of stems: sorted, unique, owned; zero it to start. */
struct stems {
	char **v;
	size_t n, cap;
};

/* Adds word's stem (a plural 's' dropped) unless it is there. */
void stems_add(struct stems *s, const char *word);
void stems_release(struct stems *s);
/* How many stems a and b share. */
size_t stems_overlap(const struct stems *a, const struct stems *b);
int stems_equal(const struct stems *a, const struct stems *b);

/*
 * 1 if text mentions name: case-insensitive for ASCII, on word boundaries,
 * allowing a plural or possessive ending ("Invoice" in "invoices",
 * "Postgres's").  An empty name is mentioned nowhere.
 */
int words_mentions(const char *text, const char *name);

#endif
