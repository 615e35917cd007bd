/*
 * words.c -- the word toolkit of review (see words.h): splitting text into
 * folded words, stop words, sets of crude stems, and whole-word mentions.
 */
#include "domain/words.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- characters and words ---- */

/* Decodes the code point at s[0..n); *len gets its byte length (>= 1). */
static unsigned decode(const unsigned char *s, size_t n, size_t *len)
{
	unsigned cp;
	size_t k, want;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	want = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
	if (!want || want > n)
		return 0xFFFD;
	cp = s[0] & (0x7F >> want);
	for (k = 1; k < want; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 0xFFFD;
		cp = (cp << 6) | (s[k] & 0x3F);
	}
	*len = want;
	return cp;
}

static int is_word_cp(unsigned cp)
{
	if (cp < 0x80)
		return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		       (cp >= '0' && cp <= '9') || cp == '_';
	if (cp <= 0xBF || cp == 0xD7 || cp == 0xF7 || cp == 0xFFFD)
		return 0;       /* C1 controls, Latin-1 punctuation and signs */
	if ((cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) ||
	    (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF0F) ||
	    cp >= 0x1F000)
		return 0;       /* general punctuation, symbols, CJK punctuation, emoji */
	return 1;
}

static int is_apostrophe(unsigned cp)
{
	return cp == '\'' || cp == 0x2019;
}

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static void words_push(struct words *ws, size_t start, size_t end, struct buf *w)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? ws->cap * 2 : 16;
		ws->v = xrealloc(ws->v, ws->cap * sizeof(*ws->v));
	}
	ws->v[ws->n].start = start;
	ws->v[ws->n].end = end;
	ws->v[ws->n++].norm = buf_detach(w, NULL);
}

/* 1 if the code point at s[i..n) is a word character. */
static int word_at(const unsigned char *s, size_t n, size_t i)
{
	size_t len;

	return i < n && is_word_cp(decode(s + i, n - i, &len));
}

/* Splits text into words; release with words_release(). */
void words_split(const char *text, struct words *ws)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), i = 0, len, start = 0;
	struct buf w = BUF_INIT(0);
	unsigned cp;

	memset(ws, 0, sizeof(*ws));
	while (i < n) {
		cp = decode(s + i, n - i, &len);
		if (is_word_cp(cp)) {
			if (!w.len)
				start = i;
			for (size_t k = 0; k < len; k++)
				buf_addch(&w, (char)fold(s[i + k]));
		} else if (w.len && is_apostrophe(cp) && word_at(s, n, i + len)) {
			/* inside a word: "don't" reads as "dont" */
		} else if (w.len) {
			words_push(ws, start, i, &w);
		}
		i += len;
	}
	if (w.len)
		words_push(ws, start, n, &w);
}

void words_release(struct words *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		free(ws->v[i].norm);
	free(ws->v);
	memset(ws, 0, sizeof(*ws));
}

int words_in_list(const char *w, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(w, *list))
			return 1;
	return 0;
}

static const char *const stopwords[] = {
	"a", "an", "the", "and", "or", "but", "nor", "so", "yet", "of", "to", "in", "on",
	"at", "by", "for", "from", "with", "as", "into", "onto", "about", "over", "under",
	"above", "below", "than", "then", "that", "this", "these", "those", "it", "its",
	"we", "i", "you", "they", "he", "she", "our", "ours", "us", "me", "my", "your",
	"their", "them", "be", "is", "are", "was", "were", "been", "being", "am", "do",
	"does", "did", "done", "will", "would", "shall", "should", "can", "could", "may",
	"might", "must", "have", "has", "had", "which", "what", "who", "whom", "whose",
	"when", "where", "why", "how", "whether", "there", "here", "all", "any", "some",
	"each", "every", "if", "also", "just", "very", "too", "up", "out", "lets", "let",
	"well", "ill", "weve", "ive", "im", "were", "gonna", "going", "go", "use", "uses",
	"used", "using", "adopt", "adopting", "choose", "chose", "choosing", "pick",
	"picking", "select", "prefer", "stick", "decide", "decided", "decision",
	"agreed", "agree", "always", "hereby", "please", "via", "per", "one", "like",
	/* vague conditions: "if needed" relies on nothing nameable */
	"needed", "necessary", "possible", "required", "appropriate", "applicable",
	"relevant", "useful", "desired", "wanted", "feasible", "sensible", NULL,
};

int words_significant(const char *w)
{
	return !words_in_list(w, stopwords);
}

/* ---- sets of stems ---- */

void stems_add(struct stems *s, const char *word)
{
	size_t len = strlen(word), lo = 0, hi = s->n, mid;
	char *stem;
	int cmp;

	if (len > 3 && word[len - 1] == 's' && word[len - 2] != 's')
		len--;
	stem = xstrndup(word, len);
	while (lo < hi) {
		mid = (lo + hi) / 2;
		cmp = strcmp(s->v[mid], stem);
		if (!cmp) {
			free(stem);
			return;
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	memmove(&s->v[lo + 1], &s->v[lo], (s->n - lo) * sizeof(*s->v));
	s->v[lo] = stem;
	s->n++;
}

void stems_release(struct stems *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

size_t stems_overlap(const struct stems *a, const struct stems *b)
{
	size_t i = 0, j = 0, n = 0;
	int cmp;

	while (i < a->n && j < b->n) {
		cmp = strcmp(a->v[i], b->v[j]);
		if (!cmp)
			n++;
		if (cmp <= 0)
			i++;
		if (cmp >= 0)
			j++;
	}
	return n;
}

int stems_equal(const struct stems *a, const struct stems *b)
{
	return a->n == b->n && stems_overlap(a, b) == a->n;
}

/* ---- mentions ---- */

static int prev_is_word(const char *text, size_t p)
{
	size_t k = p - 1, len;

	while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80)
		k--;
	return is_word_cp(decode((const unsigned char *)text + k, p - k, &len));
}

/* Past a plural or possessive ending at q, if one ends a word there; else q. */
static size_t skip_suffix(const char *text, size_t n, size_t q)
{
	static const char *const suffixes[] = { "'s", "\xE2\x80\x99s", "es", "s", NULL };
	const unsigned char *s = (const unsigned char *)text;
	size_t len;

	for (size_t i = 0; suffixes[i]; i++) {
		len = strlen(suffixes[i]);
		if (q + len <= n && !strncmp(text + q, suffixes[i], len) &&
		    !word_at(s, n, q + len))
			return q + len;
	}
	return q;
}

static int match_fold(const char *text, const char *name, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fold((unsigned char)text[i]) != fold((unsigned char)name[i]))
			return 0;
	return 1;
}

int words_mentions(const char *text, const char *name)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t tn = strlen(text), nn, len, q;
	int word_start, word_end;

	while (*name == ' ' || *name == '\t' || *name == '\n')
		name++;
	nn = strlen(name);
	while (nn && (name[nn - 1] == ' ' || name[nn - 1] == '\t' || name[nn - 1] == '\n'))
		nn--;
	if (!nn)
		return 0;
	word_start = is_word_cp(decode((const unsigned char *)name, nn, &len));
	q = nn - 1;
	while (q > 0 && ((unsigned char)name[q] & 0xC0) == 0x80)
		q--;
	word_end = is_word_cp(decode((const unsigned char *)name + q, nn - q, &len));
	for (size_t p = 0; p + nn <= tn; p++) {
		if (!match_fold(text + p, name, nn))
			continue;
		if (word_start && p > 0 && prev_is_word(text, p))
			continue;
		if (word_end && word_at(s, tn, skip_suffix(text, tn, p + nn)))
			continue;
		return 1;
	}
	return 0;
}
