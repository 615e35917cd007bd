/*
 * search.c -- query parsing, phrase checks, ranking and snippets (see
 * search.h).
 */
#include "domain/search.h"
#include "util/buf.h"
#include "util/terms.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BM25_K1 1.2
#define BM25_B 0.75

/* Adds word to q's terms unless it is there; 0, or -1 past SEARCH_WORDS_MAX. */
static int add_term(struct search_query *q, const char *word, int prefix)
{
	for (size_t i = 0; i < q->n_terms; i++)
		if (q->terms[i].prefix == prefix && !strcmp(q->terms[i].word, word))
			return 0;
	if (q->n_terms == SEARCH_WORDS_MAX)
		return -1;
	q->terms = xrealloc(q->terms, (q->n_terms + 1) * sizeof(*q->terms));
	q->terms[q->n_terms].word = xstrdup(word);
	q->terms[q->n_terms].prefix = prefix;
	q->n_terms++;
	return 0;
}

/* The words of s[0..n) as one phrase (kept only with two words or more). */
static int add_phrase(struct search_query *q, const char *s, size_t n)
{
	struct search_phrase ph = { NULL, 0 };
	size_t pos = 0, start, len;
	char word[TERMS_WORD_MAX + 1];
	int rc = 0;

	while (!rc && terms_next(s, n, &pos, &start, &len)) {
		if (len > TERMS_WORD_MAX)
			len = TERMS_WORD_MAX;   /* never indexed: matches nothing */
		terms_fold(s + start, len, word);
		rc = add_term(q, word, 0);
		ph.words = xrealloc(ph.words, (ph.n + 1) * sizeof(*ph.words));
		ph.words[ph.n++] = xstrdup(word);
	}
	if (ph.n < 2 || rc) {
		for (size_t i = 0; i < ph.n; i++)
			free(ph.words[i]);
		free(ph.words);
		return rc;
	}
	q->phrases = xrealloc(q->phrases, (q->n_phrases + 1) * sizeof(*q->phrases));
	q->phrases[q->n_phrases++] = ph;
	return 0;
}

/* Plain words of s[0..n); a word followed by '*' is a prefix. */
static int add_words(struct search_query *q, const char *s, size_t n)
{
	size_t pos = 0, start, len;
	char word[TERMS_WORD_MAX + 1];

	while (terms_next(s, n, &pos, &start, &len)) {
		if (len > TERMS_WORD_MAX)
			len = TERMS_WORD_MAX;
		terms_fold(s + start, len, word);
		if (add_term(q, word, pos < n && s[pos] == '*'))
			return -1;
	}
	return 0;
}

enum smr_rc search_parse(const char *text, struct search_query *q, struct smr_err *err)
{
	size_t n = strlen(text), i = 0, open;
	int rc = 0;

	memset(q, 0, sizeof(*q));
	if (n > SEARCH_QUERY_MAX)
		return smr_errf(err, SMR_ETOOBIG, "search query is %zu bytes; the limit is %d",
				n, SEARCH_QUERY_MAX);
	if (!utf8_valid(text, n))
		return smr_errf(err, SMR_EINVAL, "search query is not valid UTF-8");
	while (!rc && i < n) {
		const char *quote = memchr(text + i, '"', n - i);
		size_t stop = quote ? (size_t)(quote - text) : n;

		rc = add_words(q, text + i, stop - i);
		if (rc || !quote)
			break;
		open = stop + 1;
		quote = memchr(text + open, '"', n - open);
		stop = quote ? (size_t)(quote - text) : n;   /* an unclosed quote runs to the end */
		rc = add_phrase(q, text + open, stop - open);
		i = quote ? stop + 1 : n;
	}
	if (rc)
		return smr_errf(err, SMR_EINVAL, "search query has more than %d different words",
				SEARCH_WORDS_MAX);
	if (!q->n_terms)
		return smr_errf(err, SMR_EINVAL,
				"nothing to search for: give at least one word of letters or digits");
	return SMR_OK;
}

void search_query_release(struct search_query *q)
{
	for (size_t i = 0; i < q->n_terms; i++)
		free(q->terms[i].word);
	for (size_t i = 0; i < q->n_phrases; i++) {
		for (size_t j = 0; j < q->phrases[i].n; j++)
			free(q->phrases[i].words[j]);
		free(q->phrases[i].words);
	}
	free(q->terms);
	free(q->phrases);
	memset(q, 0, sizeof(*q));
}

static int term_matches(const struct search_term *t, const char *w, size_t len)
{
	size_t tl = strlen(t->word);

	if (t->prefix)
		return len >= tl && !memcmp(w, t->word, tl);
	return len == tl && !memcmp(w, t->word, tl);
}

/* The words of an indexed item (space-separated, already folded). */
struct item_words {
	const char **w;
	size_t *len;
	size_t n;
};

/* Splits words into iw, reusing its arrays (room for *cap words). */
static void split_words(const char *words, struct item_words *iw, size_t *cap)
{
	size_t n = strlen(words), pos = 0, start, len;

	iw->n = 0;
	while (terms_next(words, n, &pos, &start, &len)) {
		if (iw->n == *cap) {
			*cap = *cap ? *cap * 2 : 32;
			iw->w = xrealloc(iw->w, *cap * sizeof(*iw->w));
			iw->len = xrealloc(iw->len, *cap * sizeof(*iw->len));
		}
		iw->w[iw->n] = words + start;
		iw->len[iw->n++] = len;
	}
}

static int has_phrase(const struct item_words *iw, const struct search_phrase *ph)
{
	for (size_t i = 0; i + ph->n <= iw->n; i++) {
		size_t j = 0;

		while (j < ph->n && iw->len[i + j] == strlen(ph->words[j]) &&
		       !memcmp(iw->w[i + j], ph->words[j], iw->len[i + j]))
			j++;
		if (j == ph->n)
			return 1;
	}
	return 0;
}

static double field_weight(const char *field)
{
	if (!strcmp(field, "title"))
		return 3.0;
	if (!strcmp(field, "decisions"))
		return 2.0;
	if (!strcmp(field, "summary"))
		return 1.5;
	if (!strcmp(field, "artifacts"))
		return 0.8;
	return 1.0;
}

/* One item's words are split at a time into one scratch: a search ranks thousands. */
void search_rank(const struct search_query *q, size_t n, const char *const *fields,
		 const char *const *words, double *scores)
{
	struct item_words iw = { NULL, NULL, 0 };
	size_t *tf = xcalloc(n * q->n_terms + 1, sizeof(*tf)), *df, *len, cap = 0;
	double avg = 0;

	df = xcalloc(q->n_terms + 1, sizeof(*df));
	len = xcalloc(n + 1, sizeof(*len));
	for (size_t i = 0; i < n; i++) {
		int phrases = 1;

		split_words(words[i], &iw, &cap);
		len[i] = iw.n;
		avg += (double)iw.n;
		for (size_t t = 0; t < q->n_terms; t++) {
			for (size_t k = 0; k < iw.n; k++)
				tf[i * q->n_terms + t] += term_matches(&q->terms[t], iw.w[k],
								       iw.len[k]);
			df[t] += tf[i * q->n_terms + t] > 0;
		}
		for (size_t p = 0; p < q->n_phrases && phrases; p++)
			phrases = has_phrase(&iw, &q->phrases[p]);
		scores[i] = phrases ? 0 : -1;
	}
	avg = n ? avg / (double)n : 1;
	for (size_t i = 0; i < n; i++) {
		double s = scores[i], norm = BM25_K1 * (1 - BM25_B + BM25_B * (double)len[i] /
						      (avg > 0 ? avg : 1));

		for (size_t t = 0; t < q->n_terms && s >= 0; t++) {
			double f = (double)tf[i * q->n_terms + t];
			double idf = log(1 + ((double)n - (double)df[t] + 0.5) / ((double)df[t] + 0.5));

			if (f == 0)
				s = -1;
			else
				s += idf * f * (BM25_K1 + 1) / (f + norm);
		}
		/* rounded, so that both backends' (and every libm's) orders agree */
		scores[i] = s < 0 ? -1 : round(s * field_weight(fields[i]) * 1e6) / 1e6;
	}
	free(iw.w);
	free(iw.len);
	free(len);
	free(tf);
	free(df);
}

/* 1 when the word s[0..len) of original text matches a term of q. */
static int word_hits(const struct search_query *q, const char *s, size_t len)
{
	char word[TERMS_WORD_MAX + 1];

	if (len > TERMS_WORD_MAX)
		return 0;
	terms_fold(s, len, word);
	for (size_t t = 0; t < q->n_terms; t++)
		if (term_matches(&q->terms[t], word, len))
			return 1;
	return 0;
}

/* Moves i back (or forward with dir 1) onto the start of a UTF-8 character. */
static size_t char_boundary(const char *s, size_t n, size_t i, int forward)
{
	while (i > 0 && i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
		i = forward ? i + 1 : i - 1;
	return i;
}

char *search_snippet(const struct search_query *q, const char *text, size_t width,
		     json_t **highlights)
{
	size_t n = strlen(text), pos = 0, start, len, first = n, from, to, base;
	struct buf b = BUF_INIT(0);

	while (terms_next(text, n, &pos, &start, &len))
		if (word_hits(q, text + start, len)) {
			first = start;
			break;
		}
	if (first == n)
		first = 0;
	from = first > width / 3 ? first - width / 3 : 0;
	from = char_boundary(text, n, from, 1);
	to = from + width < n ? char_boundary(text, n, from + width, 0) : n;
	*highlights = json_array();
	if (from > 0)
		buf_adds(&b, "\xe2\x80\xa6");   /* … */
	base = b.len;
	for (size_t i = from; i < to; i++)
		buf_addch(&b, text[i] == '\n' || text[i] == '\r' || text[i] == '\t' ? ' ' : text[i]);
	if (to < n)
		buf_adds(&b, "\xe2\x80\xa6");
	pos = from;
	while (terms_next(text, to, &pos, &start, &len))
		if (word_hits(q, text + start, len))
			json_array_append_new(*highlights,
					      json_pack("[I, I]", (json_int_t)(base + start - from),
							(json_int_t)(base + start - from + len)));
	return buf_detach(&b, NULL);
}
