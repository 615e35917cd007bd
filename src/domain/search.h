/*
 * search.h -- the rules of full-text search, apart from any database: what
 * a query means, which items it matches, how they rank, and the snippet
 * shown for each.  Pure code over util/terms.h's words.
 *
 * A query is words (all must match), "quoted phrases" (their words in that
 * order, next to each other) and word* (any word starting with it).  Every
 * other character separates words, so FTS syntax (NEAR, AND, OR, column:,
 * parentheses, ^) is just text here: nothing a user types reaches a query
 * language.  The store finds the items that hold every word; this file
 * checks phrases and ranks, so both backends answer alike.
 */
#ifndef SMRITI_SEARCH_H
#define SMRITI_SEARCH_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

#define SEARCH_QUERY_MAX 4096   /* bytes of query text */
#define SEARCH_WORDS_MAX 32     /* distinct words of a query */

struct search_term {
	char *word;       /* folded (util/terms.h) */
	int prefix;       /* word* */
};

struct search_phrase {
	char **words;
	size_t n;
};

struct search_query {
	struct search_term *terms;      /* distinct; what every match must hold */
	size_t n_terms;
	struct search_phrase *phrases;  /* of two words or more */
	size_t n_phrases;
};

/*
 * Parses text into q.  SMR_EINVAL for a query with no words, invalid
 * UTF-8 or more than SEARCH_WORDS_MAX words; SMR_ETOOBIG past
 * SEARCH_QUERY_MAX bytes.  Caller search_query_release()s (also on error).
 */
enum smr_rc search_parse(const char *text, struct search_query *q, struct smr_err *err);
void search_query_release(struct search_query *q);

/*
 * Scores n candidate items (fields[i], words[i]: the indexed words) for q
 * into scores[i]: BM25 over the candidates themselves (their number, word
 * frequencies and lengths), weighted by field (title 3, decisions 2,
 * summary 1.5, artifacts 0.8, others 1).  An item that misses a phrase or
 * a word scores -1.
 */
void search_rank(const struct search_query *q, size_t n, const char *const *fields,
		 const char *const *words, double *scores);

/*
 * A window of text (about width bytes, on UTF-8 boundaries, "…" where cut,
 * line breaks as spaces) around its first match; *highlights gets a new
 * array of [start, end) byte offsets of the matching words in the snippet.
 * Caller frees the string and json_decref()s the array.
 */
char *search_snippet(const struct search_query *q, const char *text, size_t width,
		     json_t **highlights);

#endif
