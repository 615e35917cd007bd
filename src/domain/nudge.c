/*
 * nudge.c -- when to suggest a Checkpoint (see nudge.h): a turn-count
 * threshold and decision language in the exchange.
 */
#include "domain/nudge.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const phrases[] = {
	"let's go with", "lets go with", "let us go with", "we'll go with", "we will go with",
	"we decided", "we've decided", "we have decided", "i've decided", "i have decided",
	"decision:", "final decision", "final answer", "agreed", "we agree", "settled on",
	NULL,
};

static int is_word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c >= 0x80;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * Bytes of s matched by phrase (ASCII case-insensitive; a typographic
 * apostrophe counts as '), or 0 when it does not occur at s.
 */
static size_t match_at(const char *s, const char *phrase)
{
	const char *p = s;

	for (; *phrase; phrase++) {
		if (*phrase == '\'' && !strncmp(p, "\xE2\x80\x99", 3)) {
			p += 3;
			continue;
		}
		if (lower(*p) != *phrase)
			return 0;
		p++;
	}
	return (size_t)(p - s);
}

const char *nudge_find_decision(const char *text)
{
	size_t n;

	if (!text)
		return NULL;
	for (const char *s = text; *s; s++) {
		if (s > text && is_word_char((unsigned char)s[-1]))
			continue;
		for (size_t i = 0; phrases[i]; i++) {
			n = match_at(s, phrases[i]);
			if (!n)
				continue;
			/* a phrase ending in a letter must end a word ("agreed", not "agreedly") */
			if (is_word_char((unsigned char)phrases[i][strlen(phrases[i]) - 1]) &&
			    is_word_char((unsigned char)s[n]))
				continue;
			return phrases[i];
		}
	}
	return NULL;
}

void nudge_eval(const struct nudge_in *in, struct nudge *out)
{
	int64_t threshold = in->threshold > 0 ? in->threshold : NUDGE_DEFAULT_THRESHOLD;
	const char *hit;

	memset(out, 0, sizeof(*out));
	if (in->turns_since_checkpoint >= threshold)
		out->reasons[out->n_reasons++] =
			xasprintf("%lld turns since the last checkpoint (threshold %lld)",
				  (long long)in->turns_since_checkpoint, (long long)threshold);
	hit = nudge_find_decision(in->message);
	if (hit)
		out->reasons[out->n_reasons++] =
			xasprintf("decision language in the message: \"%s\"", hit);
	hit = nudge_find_decision(in->reply);
	if (hit)
		out->reasons[out->n_reasons++] =
			xasprintf("decision language in the reply: \"%s\"", hit);
	out->suggested = out->n_reasons > 0;
}

void nudge_release(struct nudge *n)
{
	for (size_t i = 0; i < n->n_reasons; i++)
		free(n->reasons[i]);
	memset(n, 0, sizeof(*n));
}
