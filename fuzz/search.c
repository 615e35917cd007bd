/*
 * search.c -- fuzz target: the search query parser (domain/search.h) and
 * what the SQLite backend makes of it, for query text nobody would type.
 *
 * Per input (the whole input is the query):
 *  - search_parse: a refusal has a code and a message; a query has 1 to
 *    SEARCH_WORDS_MAX distinct terms of word characters only (util/terms.h:
 *    no quote, no space, no FTS5 operator can survive), each phrase two
 *    words or more, every phrase word one of the terms.
 *  - The FTS5 MATCH expression the backend builds (store_fts5_query) runs
 *    against a real in-memory FTS5 table made like the store's (ascii
 *    tokenizer, detail=none) holding the query's own text as indexed:
 *    any SQL or FTS5 error is a finding, and so is that document not
 *    matching when no word of the query is too long to be indexed.
 *    search_rank scores that document >= 0 too, and search_snippet keeps
 *    its highlights inside the snippet.
 *  - ops_search on a store holding a few checkpoints and turns: no
 *    internal error, whatever the query.
 *  - words_split (domain/words.h, the review's splitter) over the same
 *    text: words in order, inside the text, folded; words_mentions runs.
 */
#include "store.h"

#include "domain/search.h"
#include "domain/words.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/terms.h"
#include "util/utf8.h"

#include <jansson.h>
#include <sqlite3.h>

static struct ops_ctx *ctx;
static sqlite3 *fts;
static sqlite3_stmt *ins, *match, *wipe;

static void call(const char *op, const char *params)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *p = json_loads(params, 0, NULL), *result = NULL;

	if (!p || api_call(ctx, op, p, &result, &err)) {
		fprintf(stderr, "setting up: %s: %s\n", op, err.msg);
		abort();
	}
	json_decref(result);
	json_decref(p);
}

static sqlite3_stmt *prep(const char *sql)
{
	sqlite3_stmt *q = NULL;

	if (sqlite3_prepare_v2(fts, sql, -1, &q, NULL)) {
		fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(fts));
		abort();
	}
	return q;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_store_open(&ctx);
	call("space.create", "{\"name\": \"demo\"}");
	call("checkpoint.create", "{\"space\": \"demo\", \"checkpoint\": {\"title\": \"Billing"
	     " rewrite\", \"summary\": \"Move invoices to Postgres\", \"decisions\": [\"Use"
	     " SQLite for tests\", \"Keep NEAR AND OR as words\"], \"tasks\": [\"write the"
	     " docs\"], \"entities\": [{\"name\": \"Ünïcode café\"}]}}");
	call("checkpoint.create", "{\"space\": \"demo\", \"checkpoint\": {\"title\": \"Billing"
	     " v2\", \"open_questions\": [\"why \\\"quoted\\\" text*?\"]}}");
	call("ingest", "{\"space\": \"demo\", \"transcript\": \"User: how do invoices work?\\n"
	     "Assistant: Postgres stores invoices; SQLite runs the tests.\\n\"}");
	/* the store's search_fts (store/schema_sqlite.h), without its external content */
	if (sqlite3_open(":memory:", &fts) ||
	    sqlite3_exec(fts, "CREATE VIRTUAL TABLE t USING fts5(terms, tokenize='ascii',"
			 " detail='none')", NULL, NULL, NULL)) {
		fprintf(stderr, "cannot make an FTS5 table: %s\n", sqlite3_errmsg(fts));
		abort();
	}
	ins = prep("INSERT INTO t(rowid, terms) VALUES (1, ?)");
	match = prep("SELECT rowid FROM t WHERE t MATCH ?");
	wipe = prep("DELETE FROM t");
	return 0;
}

/* The parsed query's shape. */
static void check_query(const struct search_query *q)
{
	FUZZ_CHECK(q->n_terms >= 1 && q->n_terms <= SEARCH_WORDS_MAX);
	for (size_t i = 0; i < q->n_terms; i++) {
		const char *w = q->terms[i].word;
		size_t len = strlen(w), pos = 0, start, wl;

		FUZZ_CHECK(len >= 1 && len <= TERMS_WORD_MAX);
		/* one word, all of it: nothing else gets into a MATCH string */
		FUZZ_CHECK(terms_next(w, len, &pos, &start, &wl) && start == 0 && wl == len);
		for (size_t k = 0; k < len; k++)
			FUZZ_CHECK(!(w[k] >= 'A' && w[k] <= 'Z'));
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(q->terms[j].prefix != q->terms[i].prefix ||
				   strcmp(q->terms[j].word, w));
	}
	for (size_t i = 0; i < q->n_phrases; i++) {
		FUZZ_CHECK(q->phrases[i].n >= 2);
		for (size_t j = 0; j < q->phrases[i].n; j++) {
			size_t k = 0;

			while (k < q->n_terms && (q->terms[k].prefix ||
						  strcmp(q->terms[k].word, q->phrases[i].words[j])))
				k++;
			FUZZ_CHECK(k < q->n_terms);
		}
	}
}

/* 1 when every word of text can be indexed (none over TERMS_WORD_MAX). */
static int all_indexable(const char *text)
{
	size_t n = strlen(text), pos = 0, start, len;

	while (terms_next(text, n, &pos, &start, &len))
		if (len > TERMS_WORD_MAX)
			return 0;
	return 1;
}

/* The query's MATCH against an FTS5 table holding the query's own words. */
static void check_fts(const struct search_query *q, const char *indexed, int expect_hit)
{
	struct search_word *w = calloc(q->n_terms, sizeof(*w));
	char *expr;
	int rc, hit = 0;

	FUZZ_CHECK(w);
	for (size_t i = 0; i < q->n_terms; i++)
		w[i] = (struct search_word){ q->terms[i].word, q->terms[i].prefix };
	expr = store_fts5_query(w, q->n_terms);
	sqlite3_bind_text(ins, 1, indexed, -1, SQLITE_STATIC);
	FUZZ_CHECK(sqlite3_step(ins) == SQLITE_DONE);
	sqlite3_reset(ins);
	sqlite3_bind_text(match, 1, expr, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(match)) == SQLITE_ROW)
		hit = 1;
	if (rc != SQLITE_DONE)
		fprintf(stderr, "MATCH '%s': %s\n", expr, sqlite3_errmsg(fts));
	FUZZ_CHECK(rc == SQLITE_DONE);
	sqlite3_reset(match);
	if (expect_hit && !hit)
		fprintf(stderr, "MATCH '%s' misses '%s'\n", expr, indexed);
	FUZZ_CHECK(hit || !expect_hit);
	FUZZ_CHECK(sqlite3_step(wipe) == SQLITE_DONE);
	sqlite3_reset(wipe);
	free(expr);
	free(w);
}

static void check_rank_and_snippet(const struct search_query *q, const char *text,
				   const char *indexed, int expect_hit)
{
	const char *fields[] = { "title", "decisions" };
	const char *words[] = { indexed, "" };
	double scores[2];
	json_t *hl = NULL, *pair;
	char *snip;
	size_t i;

	search_rank(q, 2, fields, words, scores);
	FUZZ_CHECK(scores[0] >= 0 || !expect_hit);
	FUZZ_CHECK(scores[1] < 0);
	snip = search_snippet(q, text, 80, &hl);
	FUZZ_CHECK(snip && json_is_array(hl));
	FUZZ_CHECK(utf8_valid(snip, strlen(snip)));
	json_array_foreach(hl, i, pair) {
		json_int_t a = json_integer_value(json_array_get(pair, 0));
		json_int_t b = json_integer_value(json_array_get(pair, 1));

		FUZZ_CHECK(0 <= a && a < b && (size_t)b <= strlen(snip));
	}
	json_decref(hl);
	free(snip);
}

static void check_ops_search(const char *text)
{
	struct smr_err err = SMR_ERR_INIT;
	struct search_params p = { 0 };
	json_t *out = NULL;
	enum smr_rc rc;

	p.query = text;
	p.turns = 1;
	rc = ops_search(ctx, &p, &out, &err);
	if (rc == SMR_EINTERNAL)
		fprintf(stderr, "search: internal error: %s\n", err.msg);
	FUZZ_CHECK(rc != SMR_EINTERNAL);
	FUZZ_CHECK(rc == SMR_OK ? json_is_object(out) : err.msg[0] != '\0');
	json_decref(out);
}

static void check_words(const char *text)
{
	struct words ws = { 0 };
	size_t n = strlen(text), last = 0;

	words_split(text, &ws);
	for (size_t i = 0; i < ws.n; i++) {
		FUZZ_CHECK(ws.v[i].start >= last && ws.v[i].start < ws.v[i].end);
		FUZZ_CHECK(ws.v[i].end <= n && ws.v[i].norm);
		FUZZ_CHECK(strlen(ws.v[i].norm) <= ws.v[i].end - ws.v[i].start);
		for (const char *c = ws.v[i].norm; *c; c++)
			FUZZ_CHECK(!(*c >= 'A' && *c <= 'Z'));
		last = ws.v[i].end;
		(void)words_significant(ws.v[i].norm);
	}
	if (ws.n)
		(void)words_mentions(text, ws.v[ws.n - 1].norm);
	words_release(&ws);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	struct search_query q;
	char *text = fuzz_text(data, size);

	if (search_parse(text, &q, &err) == SMR_OK) {
		struct buf b = BUF_INIT(0);
		char *indexed;
		int expect_hit = all_indexable(text);

		check_query(&q);
		terms_normalize(text, strlen(text), &b);
		indexed = buf_detach(&b, NULL);
		check_fts(&q, indexed, expect_hit);
		check_rank_and_snippet(&q, text, indexed, expect_hit);
		free(indexed);
	} else {
		FUZZ_CHECK(err.code != SMR_OK && err.msg[0]);
	}
	search_query_release(&q);
	check_ops_search(text);
	if (utf8_valid(text, strlen(text)))
		check_words(text);
	free(text);
	return 0;
}
