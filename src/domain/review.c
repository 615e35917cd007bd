/*
 * review.c -- the deterministic pass of checkpoint review, and the check
 * that brings findings of other passes into the same typed form.
 *
 * Every heuristic here is word-based and deliberately conservative: a
 * finding must be explainable from the words of the items it names.
 *
 *  - Words, stop words, stems and mentions are domain/words.h's.
 *  - A decision is read as one or two claims: a polarity (negated when it
 *    opens with "do not", "don't", "never", "avoid", "no", ... or ends in
 *    "is not used", "is banned", ...) and the set of its significant words.
 *    "A instead of B", "A rather than B" and "A, not B" give a second claim
 *    about B with the opposite polarity.
 *
 * See docs/review.md for each finding type's rule and its examples.
 */
#include "domain/review.h"
#include "domain/checkpoint.h"
#include "domain/words.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define QUOTE_CHARS 80          /* longest item text quoted in a message */

const char *const review_types[] = {
	"contradiction", "duplicate_decision", "hidden_assumption", "resolved_question",
	"disconnected_entity", NULL,
};

/* ---- the words review reads (domain/words.h holds the toolkit) ---- */

/* Words that negate a claim when they open it. */
static const char *const lead_negations[] = {
	"not", "dont", "doesnt", "didnt", "wont", "wouldnt", "shouldnt", "mustnt", "cant",
	"cannot", "never", "no", "avoid", "avoiding", "stop", "stopping", "drop", "dropping",
	"ban", "forbid", "reject", "refrain", NULL,
};

/* Negation words that stay in a claim's words (as "not") when inside it. */
static const char *const inner_negations[] = {
	"not", "dont", "doesnt", "didnt", "wont", "wouldnt", "shouldnt", "mustnt", "cant",
	"cannot", "never", "no", NULL,
};

/* "X is not used", "X is banned": a claim's polarity read from its end. */
static const char *const passive_uses[] = {
	"used", "allowed", "permitted", "adopted", "chosen", "needed", "required", NULL,
};
static const char *const passive_bans[] = {
	"banned", "forbidden", "prohibited", "disallowed", "avoided", "rejected",
	"dropped", "deprecated", NULL,
};
static const char *const passive_aux[] = {
	"be", "is", "are", "being", "been", "get", "gets", NULL,
};

/*
 * Adds the significant words of ws->v[a..b) to out.  With keep_not, inner
 * negations count as the word "not" (a claim's meaning); without, they are
 * left out (a topic's words).
 */
static void set_add_range(struct stems *out, const struct words *ws, size_t a, size_t b,
			  int keep_not)
{
	for (size_t i = a; i < b; i++) {
		if (words_in_list(ws->v[i].norm, inner_negations)) {
			if (keep_not)
				stems_add(out, "not");
		} else if (words_significant(ws->v[i].norm)) {
			stems_add(out, ws->v[i].norm);
		}
	}
}

/* Adds the significant words of text to out (negations left out). */
static void set_add_text(struct stems *out, const char *text)
{
	struct words ws;

	words_split(text, &ws);
	set_add_range(out, &ws, 0, ws.n, 0);
	words_release(&ws);
}

/* ---- dependency clauses ("because ...", "if ...") ---- */

/* Phrases that introduce what a decision relies on. */
static const char *const dependency_phrases[][4] = {
	{ "assuming" }, { "assume" }, { "assumes" }, { "since" }, { "because" },
	{ "given", "that" }, { "as", "long", "as" }, { "so", "long", "as" },
	{ "provided", "that" }, { "providing", "that" }, { "relies", "on" },
	{ "rely", "on" }, { "relying", "on" }, { "depends", "on" }, { "depend", "on" },
	{ "depending", "on" }, { "based", "on" }, { "assumption", "that" }, { "if" },
	{ "unless" },
};

/* Number of words of a dependency phrase starting at word i, 0 if none does. */
static size_t phrase_at(const struct words *ws, size_t i)
{
	size_t np = sizeof(dependency_phrases) / sizeof(dependency_phrases[0]), k;

	if (i == 0 && !strcmp(ws->v[0].norm, "given"))
		return 1;       /* "Given low traffic, ..." */
	for (size_t p = 0; p < np; p++) {
		for (k = 0; k < 4 && dependency_phrases[p][k]; k++)
			if (i + k >= ws->n || strcmp(ws->v[i + k].norm, dependency_phrases[p][k]))
				break;
		if (k == 4 || !dependency_phrases[p][k])
			return k;
	}
	return 0;
}

/* Byte offset where the clause starting at byte from ends. */
static size_t clause_end(const char *text, size_t from)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);

	for (size_t i = from; i < n; i++) {
		if (strchr(",;:!?()", s[i]))
			return i;
		if (s[i] == '.' && (i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\n'))
			return i;
		if (s[i] == 0xE2 && i + 2 < n && s[i + 1] == 0x80 &&
		    (s[i + 2] == 0x93 || s[i + 2] == 0x94))
			return i;       /* en or em dash */
	}
	return n;
}

/* ---- claims of a decision ---- */

struct claim {
	int neg;
	struct stems words;
};

struct decision {
	const char *text;
	struct claim claims[2];
	size_t nclaims;
	struct stems topic;       /* its significant words, negations left out */
	struct stems answers;     /* topic plus the kinds of the entities it mentions */
	int conditional;        /* holds only "if" or "unless" something */
};

/* Reads the polarity at the end of ws->v[a..*b) and trims what it consumed. */
static int trailing_polarity(const struct words *ws, size_t a, size_t *b)
{
	size_t e = *b;
	int neg = 0;

	if (e > a && words_in_list(ws->v[e - 1].norm, passive_bans))
		neg = 1;
	else if (!(e > a && words_in_list(ws->v[e - 1].norm, passive_uses)))
		return 0;
	e--;
	while (e > a && words_in_list(ws->v[e - 1].norm, passive_aux))
		e--;
	if (e > a && words_in_list(ws->v[e - 1].norm, inner_negations)) {
		neg = !neg;
		e--;
	}
	*b = e;
	return neg;
}

/* One claim from ws->v[a..b); neg0 is the polarity it starts from. */
static void claim_parse(const struct words *ws, size_t a, size_t b, int neg0, struct claim *cl)
{
	int neg = neg0;

	neg ^= trailing_polarity(ws, a, &b);
	while (a < b) {
		const char *w = ws->v[a].norm;

		if (words_in_list(w, lead_negations)) {
			neg = !neg;
			if (!strcmp(w, "no") && a + 1 < b && !strcmp(ws->v[a + 1].norm, "longer"))
				a++;
		} else if (words_significant(w)) {
			break;
		}
		a++;
	}
	cl->neg = neg;
	set_add_range(&cl->words, ws, a, b, 1);
}

/* 1 if the text between words i-1 and i holds a comma, semicolon or dash. */
static int gap_breaks(const char *text, const struct words *ws, size_t i)
{
	for (size_t k = ws->v[i - 1].end; k < ws->v[i].start; k++)
		if (strchr(",;-", text[k]) || (unsigned char)text[k] == 0xE2)
			return 1;       /* 0xE2: en or em dash (U+2013, U+2014) */
	return 0;
}

/* Where a second claim starts in [a, b) ("instead of", "rather than", ", not"); 0 if none. */
static size_t find_split(const char *text, const struct words *ws, size_t a, size_t b,
			 size_t *skip)
{
	for (size_t i = a + 1; i < b; i++) {
		const char *w = ws->v[i].norm;
		const char *next = i + 1 < b ? ws->v[i + 1].norm : "";

		if ((!strcmp(w, "instead") && !strcmp(next, "of")) ||
		    (!strcmp(w, "rather") && !strcmp(next, "than"))) {
			*skip = 2;
			return i;
		}
		if (!strcmp(w, "not") && gap_breaks(text, ws, i)) {
			*skip = 1;
			return i;
		}
	}
	return 0;
}

/* First word at or after byte offset pos. */
static size_t word_from(const struct words *ws, size_t k, size_t pos)
{
	while (k < ws->n && ws->v[k].start < pos)
		k++;
	return k;
}

/*
 * The words [*a, *b) a decision claims, without its dependency clauses: an
 * opening clause ("If traffic grows, ...") is skipped, and the claim ends
 * where a later one starts ("... because reads dominate").
 */
static int conditional_at(const struct words *ws, size_t k)
{
	return !strcmp(ws->v[k].norm, "if") || !strcmp(ws->v[k].norm, "unless");
}

static void claim_range(const char *text, const struct words *ws, size_t *a, size_t *b,
			int *conditional)
{
	size_t k = 0, len;

	*a = 0;
	*b = ws->n;
	while (k < ws->n) {
		len = phrase_at(ws, k);
		if (len && conditional_at(ws, k))
			*conditional = 1;
		if (!len) {
			k++;
		} else if (k == *a && k + len < ws->n) {
			*a = word_from(ws, k + len,
				       clause_end(text, ws->v[k + len].start) + 1);
			k = *a;
		} else {
			*b = k;
			return;
		}
	}
}

static void decision_parse(const char *text, struct decision *d)
{
	struct words ws;
	size_t a, b, split, skip = 0;

	memset(d, 0, sizeof(*d));
	d->text = text;
	words_split(text, &ws);
	claim_range(text, &ws, &a, &b, &d->conditional);
	split = a < b ? find_split(text, &ws, a, b, &skip) : 0;
	claim_parse(&ws, a, split ? split : b, 0, &d->claims[0]);
	d->nclaims = 1;
	if (split) {
		claim_parse(&ws, split + skip, b, !d->claims[0].neg, &d->claims[1]);
		d->nclaims = 2;
	}
	set_add_range(&d->topic, &ws, 0, ws.n, 0);
	words_release(&ws);
}

static void decision_release(struct decision *d)
{
	for (size_t i = 0; i < d->nclaims; i++)
		stems_release(&d->claims[i].words);
	stems_release(&d->topic);
	stems_release(&d->answers);
}

/* ---- findings ---- */

static const char *item_text(const json_t *list, size_t i, const char *key)
{
	const char *s = json_string_value(json_object_get(json_array_get(list, i), key));

	return s ? s : "";
}

/* How many items of list the pairwise checks look at. */
static size_t capped(const json_t *list)
{
	size_t n = json_array_size(list);

	return n < REVIEW_MAX_ITEMS ? n : REVIEW_MAX_ITEMS;
}

/* text quoted for a message, cut at QUOTE_CHARS characters; caller frees. */
static char *quote(const char *text)
{
	size_t n = strlen(text), cut = utf8_prefix_bytes(text, n, QUOTE_CHARS);

	if (cut == n)
		return xasprintf("'%s'", text);
	return xasprintf("'%.*s...'", (int)cut, text);
}

static json_t *item_json(const char *field, size_t index, const char *text)
{
	return json_pack("{s:s, s:I, s:s}", "field", field, "index", (json_int_t)index,
			 "text", text);
}

/* Appends a finding; takes ownership of message and items. */
static void add_finding(json_t *out, const char *type, char *message, json_t *items)
{
	json_array_append_new(out, json_pack("{s:s, s:s, s:o, s:s}", "type", type,
					     "message", message, "items", items,
					     "source", REVIEW_SOURCE_DETERMINISTIC));
	free(message);
}

/* A finding about two items of the checkpoint; takes ownership of message. */
static void add_pair(json_t *out, const char *type, char *message, const char *fa, size_t ia,
		     const char *ta, const char *fb, size_t ib, const char *tb)
{
	add_finding(out, type, message,
		    json_pack("[o, o]", item_json(fa, ia, ta), item_json(fb, ib, tb)));
}

/* "'A' and 'B' <relation>"; caller frees. */
static char *pair_message(const char *a, const char *b, const char *relation)
{
	char *qa = quote(a), *qb = quote(b);
	char *msg = xasprintf("%s and %s %s", qa, qb, relation);

	free(qa);
	free(qb);
	return msg;
}

static int signatures_equal(const struct decision *a, const struct decision *b)
{
	if (a->nclaims != b->nclaims || !a->claims[0].words.n)
		return 0;
	for (size_t k = 0; k < a->nclaims; k++)
		if (a->claims[k].neg != b->claims[k].neg ||
		    !stems_equal(&a->claims[k].words, &b->claims[k].words))
			return 0;
	return 1;
}

/*
 * 1 if a claim of a and a claim of b say the same thing with opposite
 * polarity.  A conditional decision ("... if traffic grows") can hold beside
 * its opposite, so it contradicts nothing.
 */
static int negates(const struct decision *a, const struct decision *b)
{
	if (a->conditional || b->conditional)
		return 0;
	for (size_t i = 0; i < a->nclaims; i++)
		for (size_t j = 0; j < b->nclaims; j++)
			if (a->claims[i].words.n && a->claims[i].neg != b->claims[j].neg &&
			    stems_equal(&a->claims[i].words, &b->claims[j].words))
				return 1;
	return 0;
}

/* contradiction and duplicate_decision: every pair of decisions. */
static void check_decision_pairs(const struct decision *d, size_t n, json_t *contra,
				 json_t *dups)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			if (negates(&d[i], &d[j]))
				add_pair(contra, "contradiction",
					 pair_message(d[i].text, d[j].text,
						      "cannot both hold: one negates the other"),
					 "decisions", i, d[i].text, "decisions", j, d[j].text);
			else if (signatures_equal(&d[i], &d[j]))
				add_pair(dups, "duplicate_decision",
					 pair_message(d[i].text, d[j].text,
						      "state the same decision"),
					 "decisions", i, d[i].text, "decisions", j, d[j].text);
		}
	}
}

/* ---- hidden assumptions ---- */

/* 1 if the clause's words are at least half covered by some assumption or other decision. */
static int clause_covered(const struct stems *clause, const struct stems *assumptions, size_t na,
			  const struct decision *d, size_t nd, size_t self)
{
	for (size_t k = 0; k < na; k++)
		if (2 * stems_overlap(clause, &assumptions[k]) >= clause->n)
			return 1;
	for (size_t k = 0; k < nd; k++)
		if (k != self && 2 * stems_overlap(clause, &d[k].topic) >= clause->n)
			return 1;
	return 0;
}

static void report_hidden(json_t *out, const char *decision, size_t index, const char *clause,
			  size_t clause_len)
{
	char *text = xstrndup(clause, clause_len);
	char *qd = quote(decision), *qc = quote(text);

	add_finding(out, "hidden_assumption",
		    xasprintf("%s relies on %s, which is listed neither as a decision nor as an"
			      " assumption", qd, qc),
		    json_pack("[o]", item_json("decisions", index, decision)));
	free(qd);
	free(qc);
	free(text);
}

/* hidden_assumption: the dependency clauses of decision i. */
static void check_hidden_one(const struct decision *d, size_t nd, size_t i,
			     const struct stems *assumptions, size_t na, json_t *out)
{
	const char *text = d[i].text;
	struct words ws;
	struct stems clause;
	size_t k = 0, len, first, end, last;

	words_split(text, &ws);
	while (k < ws.n) {
		len = phrase_at(&ws, k);
		if (!len) {
			k++;
			continue;
		}
		first = k + len;
		end = first < ws.n ? clause_end(text, ws.v[first].start) : 0;
		for (last = first; last < ws.n && ws.v[last].end <= end; last++)
			;
		memset(&clause, 0, sizeof(clause));
		set_add_range(&clause, &ws, first, last, 0);
		if (clause.n && !clause_covered(&clause, assumptions, na, d, nd, i))
			report_hidden(out, text, i, text + ws.v[first].start,
				      ws.v[last - 1].end - ws.v[first].start);
		stems_release(&clause);
		k = last > k + 1 ? last : k + 1;
	}
	words_release(&ws);
}

static void check_hidden(const struct checkpoint *c, const struct decision *d, size_t nd,
			 json_t *out)
{
	size_t na = capped(c->assumptions);
	struct stems *assumptions = xcalloc(na ? na : 1, sizeof(*assumptions));

	for (size_t k = 0; k < na; k++)
		set_add_text(&assumptions[k], item_text(c->assumptions, k, "text"));
	for (size_t i = 0; i < nd; i++)
		check_hidden_one(d, nd, i, assumptions, na, out);
	for (size_t k = 0; k < na; k++)
		stems_release(&assumptions[k]);
	free(assumptions);
}

/* ---- resolved questions ---- */

static char *answered_message(const char *question, const char *decision)
{
	char *qq = quote(question), *qd = quote(decision);
	char *msg = xasprintf("open question %s looks already answered by the decision %s", qq,
			      qd);

	free(qq);
	free(qd);
	return msg;
}

/* resolved_question: each open question against the decision that best answers it. */
static void check_questions(const struct checkpoint *c, const struct decision *d, size_t nd,
			    json_t *out)
{
	size_t nq = capped(c->open_questions), need, best, best_n, n;
	struct stems q;
	const char *qt;

	for (size_t i = 0; i < nq; i++) {
		qt = item_text(c->open_questions, i, "text");
		memset(&q, 0, sizeof(q));
		set_add_text(&q, qt);
		need = (2 * q.n + 2) / 3;       /* two thirds of its words, rounded up */
		best = nd;
		best_n = 0;
		for (size_t k = 0; q.n && k < nd; k++) {
			n = stems_overlap(&q, &d[k].answers);
			if (n >= need && n > best_n) {
				best = k;
				best_n = n;
			}
		}
		if (best < nd)
			add_pair(out, "resolved_question", answered_message(qt, d[best].text),
				 "open_questions", i, qt, "decisions", best, d[best].text);
		stems_release(&q);
	}
}

/* ---- entities ---- */

/*
 * Mention checks scan text for names, which costs text length times the
 * number of entities; a checkpoint fed by the network could make that
 * large, so the scans share a budget.  Once it is spent the remaining
 * checks are skipped (nothing is reported for them) and the pass says it
 * is partial.
 */
struct scan {
	const struct checkpoint *c;
	size_t budget;          /* bytes of text that may still be scanned */
	int partial;            /* a cap or the budget left something unchecked */
};

/* words_mentions within the budget; -1 when it is spent. */
static int mentions(struct scan *sc, const char *text, const char *name)
{
	size_t n = strlen(text);

	if (n > sc->budget) {
		sc->budget = 0;
		sc->partial = 1;
		return -1;
	}
	sc->budget -= n;
	return words_mentions(text, name);
}

static const char *entity_name(const struct checkpoint *c, size_t i)
{
	return item_text(c->entities, i, "name");
}

/* answers = topic + the kinds of the entities a decision mentions. */
static void add_entity_kinds(struct scan *sc, struct decision *d)
{
	size_t ne = capped(sc->c->entities);

	for (size_t k = 0; k < d->topic.n; k++)
		stems_add(&d->answers, d->topic.v[k]);
	for (size_t e = 0; e < ne; e++) {
		const char *kind = item_text(sc->c->entities, e, "kind");

		if (*kind && mentions(sc, d->text, entity_name(sc->c, e)) == 1)
			set_add_text(&d->answers, kind);
	}
}

/* 1 if an item of list mentions name, 0 if none does, -1 out of budget. */
static int list_mentions(struct scan *sc, const json_t *list, const char *key,
			 const char *name)
{
	size_t n = json_array_size(list);
	int m = 0;

	for (size_t i = 0; i < n && !m; i++)
		m = mentions(sc, item_text(list, i, key), name);
	return m;
}

/* 1 if anything in c other than entity self mentions name, 0 if nothing, -1 out of budget. */
static int entity_referenced(struct scan *sc, size_t self, const char *name)
{
	static const char *const lists[] = { "decisions", "assumptions", "tasks",
					     "open_questions", NULL };
	const struct checkpoint *c = sc->c;
	size_t ne = json_array_size(c->entities);
	int m = mentions(sc, c->title ? c->title : "", name);

	if (!m)
		m = mentions(sc, c->summary ? c->summary : "", name);
	for (size_t i = 0; !m && lists[i]; i++)
		m = list_mentions(sc, checkpoint_list(c, lists[i]), "text", name);
	if (!m)
		m = list_mentions(sc, c->artifacts, "name", name);
	if (!m)
		m = list_mentions(sc, c->artifacts, "content", name);
	for (size_t e = 0; !m && e < ne; e++)
		if (e != self)
			m = mentions(sc, item_text(c->entities, e, "description"), name);
	return m;
}

/* disconnected_entity: entities nothing else mentions. */
static void check_entities(struct scan *sc, json_t *out)
{
	size_t ne = capped(sc->c->entities);
	const char *name;
	char *q;

	for (size_t e = 0; e < ne; e++) {
		name = entity_name(sc->c, e);
		if (entity_referenced(sc, e, name))
			continue;
		q = quote(name);
		add_finding(out, "disconnected_entity",
			    xasprintf("entity %s is not mentioned by any decision, assumption,"
				      " task, open question, the title, the summary or an artifact",
				      q),
			    json_pack("[o]", item_json("entities", e, name)));
		free(q);
	}
}

/* ---- the pass ---- */

int review_type_known(const char *type)
{
	return type && words_in_list(type, review_types);
}

json_t *review_deterministic(const struct checkpoint *c, int *partial)
{
	size_t nd = capped(c->decisions), ntypes = 0;
	struct decision *d = xcalloc(nd ? nd : 1, sizeof(*d));
	struct scan sc = { c, REVIEW_SCAN_BUDGET, 0 };
	json_t *found[8], *out = json_array();

	if (json_array_size(c->decisions) > REVIEW_MAX_ITEMS ||
	    json_array_size(c->assumptions) > REVIEW_MAX_ITEMS ||
	    json_array_size(c->open_questions) > REVIEW_MAX_ITEMS ||
	    json_array_size(c->entities) > REVIEW_MAX_ITEMS)
		sc.partial = 1;
	while (review_types[ntypes])
		found[ntypes++] = json_array();
	for (size_t i = 0; i < nd; i++) {
		decision_parse(item_text(c->decisions, i, "text"), &d[i]);
		add_entity_kinds(&sc, &d[i]);
	}
	check_decision_pairs(d, nd, found[0], found[1]);
	check_hidden(c, d, nd, found[2]);
	check_questions(c, d, nd, found[3]);
	check_entities(&sc, found[4]);
	for (size_t t = 0; t < ntypes; t++) {
		json_array_extend(out, found[t]);
		json_decref(found[t]);
	}
	for (size_t i = 0; i < nd; i++)
		decision_release(&d[i]);
	free(d);
	if (partial)
		*partial = sc.partial;
	return out;
}

/* ---- findings of other passes ---- */

static enum smr_rc import_item(const json_t *raw, size_t i, const struct checkpoint *c,
			       json_t *items, struct smr_err *err)
{
	const char *field = json_string_value(json_object_get(raw, "field"));
	const json_t *index = json_object_get(raw, "index");
	const json_t *list = field ? checkpoint_list(c, field) : NULL;
	json_int_t idx;

	if (!list)
		return smr_errf(err, SMR_EUNPROC, "finding item %zu names no checkpoint field", i);
	if (!json_is_integer(index))
		return smr_errf(err, SMR_EUNPROC, "finding item %zu has no integer 'index'", i);
	idx = json_integer_value(index);
	if (idx < 0 || (size_t)idx >= json_array_size(list))
		return smr_errf(err, SMR_EUNPROC, "finding item %zu: %s has no item %lld", i, field,
				(long long)idx);
	json_array_append_new(items, item_json(field, (size_t)idx,
					       item_text(list, (size_t)idx,
							 !strcmp(field, "entities") ||
							 !strcmp(field, "artifacts") ?
							 "name" : "text")));
	return SMR_OK;
}

enum smr_rc review_finding_import(const json_t *raw, const struct checkpoint *c,
				  const char *source, json_t **out, struct smr_err *err)
{
	const char *type = json_string_value(json_object_get(raw, "type"));
	const char *message = json_string_value(json_object_get(raw, "message"));
	const json_t *raw_items = json_object_get(raw, "items");
	size_t n = json_array_size(raw_items);
	json_t *items;
	enum smr_rc rc = SMR_OK;

	*out = NULL;
	if (!json_is_object(raw))
		return smr_errf(err, SMR_EUNPROC, "a finding must be an object");
	if (!review_type_known(type))
		return smr_errf(err, SMR_EUNPROC, "unknown finding type '%s'", type ? type : "");
	if (!message || !*message)
		return smr_errf(err, SMR_EUNPROC, "a finding needs a non-empty 'message'");
	if (!json_is_array(raw_items) || !n || n > REVIEW_ITEMS_MAX)
		return smr_errf(err, SMR_EUNPROC, "a finding needs 1 to %d 'items'",
				REVIEW_ITEMS_MAX);
	items = json_array();
	for (size_t i = 0; !rc && i < n; i++)
		rc = import_item(json_array_get(raw_items, i), i, c, items, err);
	if (rc) {
		json_decref(items);
		return rc;
	}
	*out = json_pack("{s:s, s:s, s:o, s:s}", "type", type, "message", message, "items", items,
			 "source", source);
	return SMR_OK;
}
