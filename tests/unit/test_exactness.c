/*
 * test_exactness.c -- the property test of context exactness (issue 24):
 * random scenarios of Spaces, Checkpoints and chat sessions, and for every
 * request that reaches the provider, a comparison with what the documented
 * rules say it must hold (exactness_oracle.c): no turn from before the
 * boundary, no turn after it missing, exactly the mounted Checkpoint's state,
 * artifacts capped at 2,000 characters without a split UTF-8 character, and
 * no Checkpoint text in a draft prompt.
 *
 * A scenario mixes: Checkpoint writes (whole and patches), restores, a fork
 * of the Space and merges back; sessions started plain or mounted, mounts
 * that fork a session (v5.3) and v5.2 clients sending commit_hash and
 * history_base_seq on every send, remounts, refused mounts and sends;
 * sends to openai, anthropic and an OpenAI-compatible server in any order,
 * whose streamed replies complete, are truncated, stopped, fail mid-stream,
 * lose their connection, fail before any text or succeed on a retry; resends
 * of a failed message; drafts.
 *
 * Everything runs in this process through the operations layer (api_call,
 * the chat runtime) on a real SQLite store (in memory, a fresh one every
 * EX_BATCH scenarios) against the in-process fake provider on loopback
 * (fake_provider.h).  The same scenarios run on PostgreSQL when
 * SMRITI_TEST_PG is set (fewer: each one costs round trips).
 *
 * A third run takes the same scenarios through a real `smriti-full serve`
 * over HTTP, against the Node fake (exactness_wire.c).
 *
 * Environment (docs/testing.md, "Context exactness"):
 *   SMRITI_EXACTNESS_SCENARIOS=N       in process on SQLite (10,000; 1,000 under ASan)
 *   SMRITI_EXACTNESS_PG_SCENARIOS=N    on PostgreSQL, with SMRITI_TEST_PG (30; 15)
 *   SMRITI_EXACTNESS_WIRE_SCENARIOS=N  through smriti serve (200; 40)
 *   SMRITI_EXACTNESS_SEED=S            the run's seed (default: from the clock)
 *   SMRITI_EXACTNESS_REPLAY=S          run the one scenario of seed S (what a failure prints)
 */
#include "harness.h"
#include "exactness.h"
#include "fake_provider.h"
#include "ops/api.h"
#include "ops/full/generation.h"
#include "ops/full/runtime.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define EX_DEFAULT 1000
#else
#define EX_DEFAULT 10000
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EX_PG_DEFAULT 15
#else
#define EX_PG_DEFAULT 30
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EX_WIRE_DEFAULT 40
#else
#define EX_WIRE_DEFAULT 200
#endif
#define EX_BATCH 100

/* 1: scenarios run against `smriti serve` and the Node fake (exactness_wire.c) */
static int wire_on;
/* the chat runtime of the scenarios run in this process */
static struct runtime *inproc_rt;
/* the test running, for the replay hint */
static const char *test_name = "exactness";

static const char preamble[] = "PREAMBLE of the exactness test: answer the latest message.";

enum outcome { O_COMPLETE, O_TRUNCATED, O_STOPPED, O_STREAM_ERROR, O_CUT, O_FAILED, O_RETRIED };
static const char *const outcome_names[] = {
	"complete", "truncated", "stopped", "error mid-reply", "connection lost", "failed",
	"retried",
};
static const char *const providers[] = { "openai", "anthropic", "local" };
static const char *const models[] = { "gpt-4o-mini", "claude-sonnet-4-5", "llama3.2" };
static const char *const paths[] = { "/v1/chat/completions", "/v1/messages",
				     "/local/v1/chat/completions" };
/* the Node fake serves OpenAI-style requests at one path */
static const char *const wire_paths[] = { "/v1/chat/completions", "/v1/messages",
					  "/v1/chat/completions" };

/* ---- randomness (splitmix64: one 64-bit seed replays a scenario) ---- */

static uint64_t next64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int pick(struct ex_scen *sc, int n)
{
	return n <= 1 ? 0 : (int)(next64(&sc->rng) % (uint64_t)n);
}

static int chance(struct ex_scen *sc, int percent)
{
	return pick(sc, 100) < percent;
}

/* ---- text ---- */

/* The first PLAIN_WORDS hold no white space: a reply's words are its deltas on both fakes. */
static const char *const words[] = {
	"plan", "Lisbon", "café", "naïve", "€uro", "漢字", "😀ok", "data", "x", "résumé",
	"Ω", "budget", "\"quoted\"", "back\\slash", "tab\there", "line\nbreak",
};
#define PLAIN_WORDS 14

static void add_words(struct ex_scen *sc, struct buf *b, int n, int plain)
{
	int kinds = plain ? PLAIN_WORDS : (int)(sizeof(words) / sizeof(words[0]));

	for (int i = 0; i < n; i++) {
		buf_adds(b, words[pick(sc, kinds)]);
		if (i + 1 < n)
			buf_addch(b, ' ');
	}
}

/* "<token> words..."; caller frees. */
static char *tok_text(struct ex_scen *sc, int tok, const char *lead, int n_words, int plain)
{
	struct buf b = BUF_INIT(0);

	buf_addf(&b, "%s%s", lead, ex_tok_str(sc, tok));
	if (n_words)
		buf_addch(&b, ' ');
	add_words(sc, &b, n_words, plain);
	return buf_detach(&b, NULL);
}

/* Characters of 1 to 4 bytes, so a cut at 2,000 characters often falls beside a long one. */
static const char *const fill[] = { "a", "é", "€", "漢", "😀", "z", " ", "\n", "Ж", "𝄞" };

/* An artifact's content: its token, then filler to exactly `chars` characters. */
static char *artifact_content(struct ex_scen *sc, int tok)
{
	struct buf b = BUF_INIT(0);
	int r = pick(sc, 10), chars;
	size_t have;

	chars = r < 4 ? 20 + pick(sc, 400) : r < 7 ? 1995 + pick(sc, 11) : 2006 + pick(sc, 1500);
	buf_adds(&b, ex_tok_str(sc, tok));
	have = ex_chars(b.ptr);
	for (; (int)have < chars; have++)
		buf_adds(&b, fill[pick(sc, sizeof(fill) / sizeof(fill[0]))]);
	return buf_detach(&b, NULL);
}

/* ---- the log of what a scenario did ---- */

static void say(struct ex_scen *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct ex_scen *sc, const char *fmt, ...)
{
	va_list ap;
	char line[400];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	buf_addf(&sc->log, "    %s\n", line);
}

/* api_call on the scenario's context; params are taken.  Returns the result (new ref) or NULL. */
static json_t *call(struct ex_scen *sc, const char *op, json_t *params, enum smr_rc *rc)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;

	if (wire_on)
		res = ex_wire_call(op, params, rc, err.msg, sizeof(err.msg));
	else
		*rc = api_call(sc->ctx, op, params, &res, &err);
	if (*rc)
		say(sc, "  %s: %s: %s", op, smr_rc_name(*rc), err.msg);
	json_decref(params);
	return res;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* ---- the model's checkpoints ---- */

static void ck_free(struct ex_ck *c)
{
	free(c->title);
	free(c->summary);
	for (int l = 0; l < EX_LISTS; l++)
		for (int i = 0; i < c->n[l]; i++) {
			free(c->items[l][i].text);
			free(c->items[l][i].content);
		}
	memset(c, 0, sizeof(*c));
}

static void ck_copy(struct ex_ck *d, const struct ex_ck *s)
{
	*d = *s;
	d->title = s->title ? xstrdup(s->title) : NULL;
	d->summary = xstrdup(s->summary);
	for (int l = 0; l < EX_LISTS; l++)
		for (int i = 0; i < s->n[l]; i++) {
			d->items[l][i].text = xstrdup(s->items[l][i].text);
			d->items[l][i].content = s->items[l][i].content ?
						 xstrdup(s->items[l][i].content) : NULL;
		}
}

static const char list_letter[EX_LISTS] = { 'd', 'a', 'q', 'k', 'e', 'f' };
static const char *const list_lead[EX_LISTS] = {
	"Decision ", "Assumption ", "Question ", "Task ", "Entity ", "",
};
static const char *const list_keys[EX_LISTS] = {
	"decisions", "assumptions", "open_questions", "tasks", "entities", "artifacts",
};

/* A new item in list l of c (the checkpoint to be written as index k). */
static void item_add(struct ex_scen *sc, struct ex_ck *c, int l, int k)
{
	struct ex_item *it;

	if (c->n[l] == EX_MAX_ITEMS)
		return;
	it = &c->items[l][c->n[l]++];
	it->tok = ex_tok_new(sc, list_letter[l], "%s item added by checkpoint %d", list_keys[l], k);
	if (l == L_ART) {
		it->text = xasprintf("artifact-%d", sc->next_tok);
		it->content = artifact_content(sc, it->tok);
	} else {
		it->text = tok_text(sc, it->tok, list_lead[l], pick(sc, 4), 0);
		it->content = NULL;
		it->done = l == L_TASK && chance(sc, 20);
	}
}

static void item_drop(struct ex_ck *c, int l, int i)
{
	free(c->items[l][i].text);
	free(c->items[l][i].content);
	memmove(&c->items[l][i], &c->items[l][i + 1], (size_t)(c->n[l] - i - 1) * sizeof(c->items[l][0]));
	c->n[l]--;
}

static json_t *item_json(const struct ex_item *it, int l)
{
	if (l == L_TASK)
		return json_pack("{s:s, s:s}", "text", it->text, "status", it->done ? "done" : "open");
	if (l == L_ENT)
		return json_pack("{s:s, s:s, s:s}", "name", it->text, "kind", "concept",
				 "description", "a thing of the work");
	if (l == L_ART)
		return json_pack("{s:s, s:s, s:s}", "name", it->text, "kind", "text", "content",
				 it->content);
	return json_pack("{s:s}", "text", it->text);
}

static json_t *ck_json(const struct ex_ck *c)
{
	json_t *o = json_pack("{s:s, s:s}", "title", c->title, "summary", c->summary), *a;

	for (int l = 0; l < EX_LISTS; l++) {
		a = json_array();
		for (int i = 0; i < c->n[l]; i++)
			json_array_append_new(a, item_json(&c->items[l][i], l));
		json_object_set_new(o, list_keys[l], a);
	}
	return o;
}

/* Marks in anc[] k and every checkpoint it descends from. */
static void ancestors(const struct ex_scen *sc, int k, unsigned char *anc)
{
	if (k < 0 || anc[k])
		return;
	anc[k] = 1;
	ancestors(sc, sc->cks[k].parent, anc);
	ancestors(sc, sc->cks[k].parent2, anc);
}

/* A random checkpoint of Space p, or -1. */
static int member(struct ex_scen *sc, int p)
{
	int v[EX_MAX_CK], n = 0;

	for (int k = 0; k < sc->n_ck; k++)
		if (sc->sp[p].member[k])
			v[n++] = k;
	return n ? v[pick(sc, n)] : -1;
}

/* A checkpoint that is not Space p's, or -1. */
static int stranger(struct ex_scen *sc, int p)
{
	int v[EX_MAX_CK], n = 0;

	for (int k = 0; k < sc->n_ck; k++)
		if (!sc->sp[p].member[k])
			v[n++] = k;
	return n ? v[pick(sc, n)] : -1;
}

/* Takes the stored document of a new checkpoint k written into Space p on its HEAD. */
static void ck_written(struct ex_scen *sc, int k, int p, const json_t *doc)
{
	struct ex_ck *c = &sc->cks[k];

	snprintf(c->hash, sizeof(c->hash), "%s", str(doc, "commit_hash"));
	c->parent = sc->sp[p].head;
	c->parent2 = -1;
	sc->sp[p].head = k;
	sc->sp[p].member[k] = 1;
	sc->n_ck++;
	say(sc, "  -> checkpoint %d %.12s", k, c->hash);
	ex_check_stored(sc, doc, k);
}

/* ---- checkpoint operations ---- */

static void op_create(struct ex_scen *sc, int p)
{
	int k = sc->n_ck, head = sc->sp[p].head;
	struct ex_ck *c = &sc->cks[k];
	enum smr_rc rc;
	json_t *res;

	memset(c, 0, sizeof(*c));
	if (head >= 0)
		ck_copy(c, &sc->cks[head]);
	free(c->title);
	c->title_tok = ex_tok_new(sc, 't', "title of checkpoint %d", k);
	c->title = tok_text(sc, c->title_tok, "Title ", pick(sc, 3), 0);
	if (!c->summary || chance(sc, 50)) {
		free(c->summary);
		c->summary_tok = ex_tok_new(sc, 's', "summary of checkpoint %d", k);
		c->summary = tok_text(sc, c->summary_tok, "Summary ", pick(sc, 6), 0);
	}
	for (int i = 1 + pick(sc, 4); i > 0; i--)
		item_add(sc, c, pick(sc, EX_LISTS), k);
	if (chance(sc, 40)) {
		int l = pick(sc, EX_LISTS);

		if (c->n[l] > 1)
			item_drop(c, l, pick(sc, c->n[l]));
	}
	for (int i = 0; i < c->n[L_TASK]; i++)
		if (chance(sc, 15))
			c->items[L_TASK][i].done = !c->items[L_TASK][i].done;
	say(sc, "checkpoint.create on %s (checkpoint %d)", sc->sp[p].name, k);
	res = call(sc, "checkpoint.create", json_pack("{s:s, s:o}", "space", sc->sp[p].name,
						      "checkpoint", ck_json(c)), &rc);
	if (rc) {
		ex_fail(sc, "checkpoint.create failed: %s", smr_rc_name(rc));
		ck_free(c);
	} else {
		ck_written(sc, k, p, res);
	}
	sc->st->creates++;
	json_decref(res);
}

/* The patch: 1 or 2 items added; on the main line also maybe a drop and a task done. */
static json_t *patch_of(struct ex_scen *sc, struct ex_ck *c, int k, int side)
{
	json_t *add = json_object(), *drop = json_object(), *done = json_array(), *a;
	int l, i, n_tasks = c->n[L_TASK];

	for (int j = 1 + pick(sc, 2); j > 0; j--) {
		l = pick(sc, EX_LISTS);
		if (c->n[l] == EX_MAX_ITEMS)
			continue;
		item_add(sc, c, l, k);
		a = json_object_get(add, list_keys[l]);
		if (!a)
			json_object_set_new(add, list_keys[l], a = json_array());
		json_array_append_new(a, item_json(&c->items[l][c->n[l] - 1], l));
	}
	l = pick(sc, EX_LISTS);
	if (!side && chance(sc, 30) && c->n[l] > 1 && !json_object_get(add, list_keys[l])) {
		i = pick(sc, c->n[l]);
		json_object_set_new(drop, list_keys[l], json_pack("[s]", c->items[l][i].text));
		item_drop(c, l, i);
	}
	for (i = 0; !side && i < c->n[L_TASK]; i++)
		if (!c->items[L_TASK][i].done && chance(sc, 30)) {
			if (i >= n_tasks)
				break;
			c->items[L_TASK][i].done = 1;
			json_array_append_new(done, json_string(c->items[L_TASK][i].text));
			break;
		}
	return json_pack("{s:o, s:o, s:o}", "add", add, "drop", drop, "done", done);
}

static void op_patch(struct ex_scen *sc, int p)
{
	int k = sc->n_ck, head = sc->sp[p].head;
	struct ex_ck *c = &sc->cks[k];
	json_t *patch, *res;
	enum smr_rc rc;

	if (head < 0)
		return;
	ck_copy(c, &sc->cks[head]);
	patch = patch_of(sc, c, k, sc->sp[p].side);
	json_object_set_new(patch, "space", json_string(sc->sp[p].name));
	say(sc, "checkpoint.update on %s (checkpoint %d)", sc->sp[p].name, k);
	res = call(sc, "checkpoint.update", patch, &rc);
	if (rc) {
		ex_fail(sc, "checkpoint.update failed: %s", smr_rc_name(rc));
		ck_free(c);
	} else {
		ck_written(sc, k, p, json_object_get(res, "checkpoint"));
	}
	sc->st->patches++;
	json_decref(res);
}

static void op_restore(struct ex_scen *sc)
{
	int k = sc->n_ck, from = member(sc, 0);
	json_t *res;
	enum smr_rc rc;

	if (from < 0)
		return;
	ck_copy(&sc->cks[k], &sc->cks[from]);
	say(sc, "restore %s to checkpoint %d (checkpoint %d)", sc->sp[0].name, from, k);
	res = call(sc, "restore", json_pack("{s:s, s:s}", "space", sc->sp[0].name, "ref",
					    sc->cks[from].hash), &rc);
	if (rc) {
		ex_fail(sc, "restore failed: %s", smr_rc_name(rc));
		ck_free(&sc->cks[k]);
	} else {
		ck_written(sc, k, 0, res);
	}
	sc->st->restores++;
	json_decref(res);
}

static void op_fork(struct ex_scen *sc)
{
	int from = chance(sc, 70) ? sc->sp[0].head : member(sc, 0);
	struct ex_space *f = &sc->sp[1];
	json_t *res;
	enum smr_rc rc;

	if (from < 0)
		return;
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.40s-fork", sc->sp[0].name);
	f->head = from;
	f->side = 1;
	ancestors(sc, from, f->member);
	say(sc, "fork checkpoint %d into %s", from, f->name);
	res = call(sc, "fork", json_pack("{s:s, s:s}", "ref", sc->cks[from].hash, "into", f->name),
		   &rc);
	if (rc)
		ex_fail(sc, "fork failed: %s", smr_rc_name(rc));
	else
		sc->n_sp = 2;
	sc->st->forks++;
	json_decref(res);
}

/* The nearest common ancestor of a and b, or -1. */
static int merge_base(const struct ex_scen *sc, int a, int b)
{
	unsigned char aa[EX_MAX_CK] = { 0 }, bb[EX_MAX_CK] = { 0 }, below[EX_MAX_CK];
	int best = -1;

	ancestors(sc, a, aa);
	ancestors(sc, b, bb);
	for (int k = 0; k < sc->n_ck; k++) {
		if (!aa[k] || !bb[k])
			continue;
		memset(below, 0, sizeof(below));
		ancestors(sc, k, below);
		if (best < 0 || below[best])
			best = k;
	}
	return best;
}

static int has_key(const struct ex_ck *c, int l, const char *text)
{
	for (int i = 0; c && i < c->n[l]; i++)
		if (!strcmp(c->items[l][i].text, text))
			return 1;
	return 0;
}

/* Ours plus what theirs added since base (the fork only adds, so nothing conflicts). */
static void merged_state(struct ex_scen *sc, struct ex_ck *out, int ours, int theirs, int base)
{
	const struct ex_ck *t = &sc->cks[theirs], *b = base >= 0 ? &sc->cks[base] : NULL;
	struct ex_item *it;

	ck_copy(out, &sc->cks[ours]);
	free(out->title);
	out->title = NULL;
	for (int l = 0; l < EX_LISTS; l++)
		for (int i = 0; i < t->n[l]; i++) {
			if (has_key(b, l, t->items[l][i].text) || out->n[l] == EX_MAX_ITEMS)
				continue;
			it = &out->items[l][out->n[l]++];
			*it = t->items[l][i];
			it->text = xstrdup(it->text);
			it->content = it->content ? xstrdup(it->content) : NULL;
		}
}

static void op_merge(struct ex_scen *sc)
{
	int ours = sc->sp[0].head, theirs = sc->sp[1].head, k = sc->n_ck;
	unsigned char ao[EX_MAX_CK] = { 0 }, at[EX_MAX_CK] = { 0 };
	const char *want;
	json_t *res;
	enum smr_rc rc;

	ancestors(sc, ours, ao);
	ancestors(sc, theirs, at);
	want = ao[theirs] ? "up-to-date" : at[ours] ? "fast-forward" : "merged";
	if (!strcmp(want, "merged"))
		merged_state(sc, &sc->cks[k], ours, theirs, merge_base(sc, ours, theirs));
	say(sc, "merge %s (checkpoint %d) into %s (checkpoint %d): %s", sc->sp[1].name, theirs,
	    sc->sp[0].name, ours, want);
	res = call(sc, "merge", json_pack("{s:s, s:s}", "space", sc->sp[0].name, "ref",
					  sc->cks[theirs].hash), &rc);
	if (rc || strcmp(str(res, "status"), want)) {
		ex_fail(sc, "merge answered %s '%s', the model wants '%s'", smr_rc_name(rc),
			str(res, "status"), want);
	} else if (!strcmp(want, "merged")) {
		ck_written(sc, k, 0, json_object_get(res, "checkpoint"));
		sc->cks[k].parent = ours;
		sc->cks[k].parent2 = theirs;
	} else if (!strcmp(want, "fast-forward")) {
		sc->sp[0].head = theirs;
	}
	if (!rc)
		for (int i = 0; i < EX_MAX_CK; i++)
			sc->sp[0].member[i] |= at[i];
	if (sc->n_ck == k && !strcmp(want, "merged"))
		ck_free(&sc->cks[k]);
	sc->st->merges++;
	json_decref(res);
}

/* ---- sessions ---- */

/* Store and model agree on the turns of session si (the model is what the oracle reads). */
static void check_turns(struct ex_scen *sc, int si)
{
	struct ex_sess *s = &sc->ss[si];
	enum smr_rc rc;
	json_t *res = call(sc, "session.get", json_pack("{s:s}", "session_id", s->id), &rc);
	const json_t *turns = json_object_get(res, "turns"), *t;

	if (rc || (int)json_array_size(turns) != s->n) {
		ex_fail(sc, "session %d holds %zu turns, the model %d", si, json_array_size(turns),
			s->n);
		json_decref(res);
		return;
	}
	for (int i = 0; i < s->n; i++) {
		t = json_array_get(turns, (size_t)i);
		if (json_integer_value(json_object_get(t, "sequence_number")) != s->turns[i].seq ||
		    strcmp(str(t, "role"), s->turns[i].user ? "user" : "assistant") ||
		    strcmp(str(t, "content"), s->turns[i].content)) {
			ex_fail(sc, "session %d's turn %d is stored as %s seq %lld '%.80s', the model"
				" has seq %lld '%.80s'", si, i, str(t, "role"),
				(long long)json_integer_value(json_object_get(t, "sequence_number")),
				str(t, "content"), (long long)s->turns[i].seq, s->turns[i].content);
			break;
		}
	}
	json_decref(res);
}

static int sess_new(struct ex_scen *sc, const json_t *doc, int p, int ck, int forked)
{
	struct ex_sess *s = &sc->ss[sc->n_ss];

	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", str(doc, "id"));
	s->space = p;
	s->ck = ck;
	s->forked = forked;
	s->client_ck = -1;
	s->last_provider = -1;
	say(sc, "  -> session %d", sc->n_ss);
	return sc->n_ss++;
}

static void op_session_create(struct ex_scen *sc)
{
	int p = pick(sc, sc->n_sp), ck = chance(sc, 50) ? member(sc, p) : -1;
	json_t *params = json_pack("{s:s, s:s}", "space", sc->sp[p].name, "title", "a session"), *res;
	enum smr_rc rc;

	if (ck >= 0)
		json_object_set_new(params, "commit_hash", json_string(sc->cks[ck].hash));
	say(sc, "session.create on %s, checkpoint %d", sc->sp[p].name, ck);
	res = call(sc, "session.create", params, &rc);
	if (rc)
		ex_fail(sc, "session.create failed: %s", smr_rc_name(rc));
	else
		sess_new(sc, res, p, ck, 0);
	json_decref(res);
}

static void op_mount(struct ex_scen *sc, int si)
{
	int p = sc->ss[si].space, ck = member(sc, p);
	json_t *res;
	enum smr_rc rc;

	if (ck < 0)
		return;
	say(sc, "session.mount session %d on checkpoint %d", si, ck);
	res = call(sc, "session.mount", json_pack("{s:s, s:s}", "session_id", sc->ss[si].id,
						  "commit_hash", sc->cks[ck].hash), &rc);
	if (rc)
		ex_fail(sc, "session.mount failed: %s", smr_rc_name(rc));
	else
		sess_new(sc, res, p, ck, 1);
	sc->st->mounts++;
	json_decref(res);
}

/* Mounting a Checkpoint of another line is refused (422) and makes no session. */
static void op_bad_mount(struct ex_scen *sc, int si)
{
	int p = sc->ss[si].space, ck = stranger(sc, p);
	json_t *res;
	enum smr_rc rc;

	if (ck < 0)
		return;
	say(sc, "session.mount session %d on checkpoint %d, not of its Space", si, ck);
	res = call(sc, "session.mount", json_pack("{s:s, s:s}", "session_id", sc->ss[si].id,
						  "commit_hash", sc->cks[ck].hash), &rc);
	if (rc != SMR_EUNPROC)
		ex_fail(sc, "a mount of checkpoint %d, not of the session's Space, answered %s", ck,
			smr_rc_name(rc));
	json_decref(res);
	res = call(sc, "session.list", json_pack("{s:s}", "space", sc->sp[p].name), &rc);
	{
		int n = 0;

		for (int i = 0; i < sc->n_ss; i++)
			n += sc->ss[i].space == p;
		if ((int)json_array_size(res) != n)
			ex_fail(sc, "after a refused mount Space %d has %zu sessions, the model %d", p,
				json_array_size(res), n);
	}
	sc->st->refused++;
	json_decref(res);
}

/* A v5.2 client mounts (or remounts): it sends commit_hash and history_base_seq from now on. */
static void op_client_mount(struct ex_scen *sc, int si)
{
	struct ex_sess *s = &sc->ss[si];

	s->client_on = 1;
	/* history_base_seq alone on a session that has a Checkpoint mounted is not documented */
	s->client_ck = s->ck < 0 && chance(sc, 25) ? -1 : member(sc, s->space);
	/* docs/providers.md: the client's boundary is the last sequence number at mount time */
	s->client_base = chance(sc, 75) ? s->last : pick(sc, (int)s->last + 1);
	say(sc, "client mount on session %d: checkpoint %d, history_base_seq %lld", si,
	    s->client_ck, (long long)s->client_base);
	sc->st->mounts++;
}

static void op_client_unmount(struct ex_scen *sc, int si)
{
	sc->ss[si].client_on = 0;
	say(sc, "client unmount on session %d", si);
}

static void add_turn(struct ex_sess *s, int user, const char *content)
{
	struct ex_turn *t = &s->turns[s->n++];

	t->seq = ++s->last;
	t->user = user;
	t->content = xstrdup(content);
	t->failed = 0;
}

/* The reply text received after `after` deltas (words with their trailing space). */
static char *received(const char *reply, int after, int all)
{
	const char *p = reply, *sp;

	for (int i = 0; *p && (all || i < after); i++) {
		sp = strchr(p, ' ');
		p = sp ? sp + 1 : p + strlen(p);
	}
	return xstrndup(reply, (size_t)(p - reply));
}

/* ---- the fake provider: in this process, or the Node one behind a real server ---- */

static void fake_queue(struct ex_scen *sc, const struct fake_step *step)
{
	if (wire_on)
		ex_wire_queue(step, sc->hold);
	else
		fake_inproc_queue(step);
}

static json_t *fake_take(void)
{
	return wire_on ? ex_wire_take() : fake_inproc_take();
}

static void fake_forget(void)
{
	if (wire_on)
		ex_wire_reset();
	else
		fake_inproc_reset();
}

/* What was sent to the provider: every request checked against the expectation. */
static void check_requests(struct ex_scen *sc, int prov, int ck, const json_t *want, int n_want)
{
	json_t *reqs = fake_take();
	const char *path = wire_on ? wire_paths[prov] : paths[prov];
	size_t i;
	const json_t *r;

	if ((int)json_array_size(reqs) != n_want)
		ex_fail(sc, "the provider received %zu requests, want %d", json_array_size(reqs),
			n_want);
	json_array_foreach(reqs, i, r) {
		if (strcmp(str(r, "path"), path))
			ex_fail(sc, "the request went to %s, want %s (%s)", str(r, "path"), path,
				providers[prov]);
		if (ex_check_chat(sc, r, ck, want, preamble))
			break;
		sc->st->requests++;
	}
	json_decref(reqs);
}

/* Polls generation.get until the reply so far is text, then stops the generation. */
static void stop_at(struct ex_scen *sc, const char *gen_id, const char *text)
{
	json_t *res = NULL;
	enum smr_rc rc;

	for (int i = 0; i < 100000; i++) {
		res = call(sc, "generation.get", json_pack("{s:s}", "generation_id", gen_id), &rc);
		if (!strcmp(str(res, "text"), text) || rc)
			break;
		json_decref(res);
		res = NULL;
		usleep(50);
	}
	json_decref(res);
	json_decref(call(sc, "generation.stop", json_pack("{s:s}", "generation_id", gen_id), &rc));
}

/* chat.send with a stop once the first `after` deltas arrived (this process). */
static enum smr_rc send_and_stop_inproc(struct ex_scen *sc, json_t *params, const char *text)
{
	struct smr_err err = SMR_ERR_INIT;
	struct chat_gen *g = NULL;
	unsigned holds = fake_inproc_holds();
	json_t *res = NULL;
	enum smr_rc rc = chat_send_start_json(sc->ctx, params, &g, &err);

	if (rc) {
		json_decref(params);
		return rc;
	}
	json_decref(params);
	if (!fake_inproc_wait_hold(holds, 10000))
		ex_fail(sc, "the stream never reached its hold");
	stop_at(sc, chat_gen_id(g), text);
	gen_wait(g, sc->ctx);
	res = NULL;
	rc = chat_gen_result(g, &res, &err);
	json_decref(res);
	chat_gen_unref(g);
	fake_inproc_release();
	return rc;
}

struct bg_send {
	json_t *params;
	enum smr_rc rc;
};

static void *bg_send_main(void *arg)
{
	struct bg_send *b = arg;
	char msg[256];

	json_decref(ex_wire_call("chat.send", b->params, &b->rc, msg, sizeof(msg)));
	return NULL;
}

/* The same through the server: the send on a thread of its own, the stop from here. */
static enum smr_rc send_and_stop_wire(struct ex_scen *sc, json_t *params, const char *text)
{
	struct bg_send b = { params, SMR_OK };
	const char *session = str(params, "session_id");
	pthread_t t;
	json_t *res;
	enum smr_rc rc;

	if (pthread_create(&t, NULL, bg_send_main, &b)) {
		json_decref(params);
		return ex_fail(sc, "cannot start a thread"), SMR_EINTERNAL;
	}
	if (!ex_wire_wait_hold(sc->hold, 10000))
		ex_fail(sc, "the stream never reached its hold '%s'", sc->hold);
	res = call(sc, "session.get", json_pack("{s:s}", "session_id", session), &rc);
	stop_at(sc, str(json_object_get(res, "generation"), "id"), text);
	json_decref(res);
	pthread_join(t, NULL);
	ex_wire_release(sc->hold);
	json_decref(params);
	return b.rc;
}

static enum smr_rc send_and_stop(struct ex_scen *sc, json_t *params, const char *text)
{
	return wire_on ? send_and_stop_wire(sc, params, text) :
	       send_and_stop_inproc(sc, params, text);
}

static int pick_outcome(struct ex_scen *sc)
{
	static const int weight[] = { 40, 10, 10, 10, 8, 14, 8 };
	int r = pick(sc, 100), o = 0;

	while (r >= weight[o])
		r -= weight[o++];
	return o;
}

/* The steps the fake answers an outcome with; the reply text stored afterwards. */
static char *script(struct ex_scen *sc, int o, const char *reply)
{
	int n_words = 1, after;
	struct fake_step step = { FAKE_COMPLETE, reply, 0, 0, NULL };

	for (const char *p = reply; *p; p++)
		n_words += *p == ' ';
	after = o == O_STOPPED ? pick(sc, n_words + 1) : 1 + pick(sc, n_words);
	if (o == O_RETRIED) {
		struct fake_step fail = { FAKE_STATUS, NULL, 0, 500, NULL };

		fake_queue(sc, &fail);
	}
	step.end = o == O_TRUNCATED ? FAKE_TRUNCATED : o == O_STOPPED ? FAKE_HOLD :
		   o == O_STREAM_ERROR ? FAKE_STREAM_ERROR : o == O_CUT ? FAKE_CUT :
		   o == O_FAILED ? FAKE_STATUS : FAKE_COMPLETE;
	step.after = after;
	step.status = 400;
	if (o == O_STOPPED)
		snprintf(sc->hold, sizeof(sc->hold), "h%06x-%d", sc->tag, sc->next_tok);
	fake_queue(sc, &step);
	if (o == O_FAILED)
		return NULL;
	return received(reply, after, o == O_COMPLETE || o == O_TRUNCATED || o == O_RETRIED);
}

static json_t *send_params(struct ex_scen *sc, int si, int prov, const char *message)
{
	struct ex_sess *s = &sc->ss[si];
	json_t *p = json_pack("{s:s, s:s, s:s, s:s}", "session_id", s->id, "message", message,
			      "provider", providers[prov], "model", models[prov]);

	if (s->client_on) {
		if (s->client_ck >= 0)
			json_object_set_new(p, "commit_hash", json_string(sc->cks[s->client_ck].hash));
		json_object_set_new(p, "history_base_seq", json_integer(s->client_base));
		sc->st->client_sends++;
	}
	return p;
}

static void model_after_send(struct ex_sess *s, int reuse, const char *message, const char *got)
{
	if (!reuse)
		add_turn(s, 1, message);
	s->turns[s->n - 1].failed = got == NULL;
	if (got)
		add_turn(s, 0, got);
}

static void op_send(struct ex_scen *sc, int si, int resend)
{
	struct ex_sess *s = &sc->ss[si];
	struct ex_turn *last = s->n ? &s->turns[s->n - 1] : NULL;
	int reuse = resend && last && last->user && last->failed, prov = pick(sc, 3), o, tok;
	int ck = s->client_on ? s->client_ck : s->ck;
	int64_t base = s->client_on ? s->client_base : 0;
	char *message, *reply, *got;
	json_t *want;
	enum smr_rc rc;

	if (s->n + 2 > EX_MAX_TURNS)
		return;
	tok = ex_tok_new(sc, 'u', "user turn seq %lld of session %d", (long long)s->last + 1, si);
	message = reuse ? xstrdup(last->content) : tok_text(sc, tok, "", pick(sc, 8), 0);
	tok = ex_tok_new(sc, 'r', "reply seq %lld of session %d",
			 (long long)(reuse ? last->seq : s->last + 1) + 1, si);
	reply = chance(sc, 5) ? xstrdup("") : tok_text(sc, tok, "", pick(sc, 7), 1);
	o = pick_outcome(sc);
	if (!*reply && (o == O_STREAM_ERROR || o == O_CUT))
		o = O_TRUNCATED;        /* an error before any text is O_FAILED's case */
	want = ex_expected_messages(sc, si, base, reuse, message, prov == 1);
	got = script(sc, o, reply);
	say(sc, "chat.send session %d via %s, %s%s: %s (checkpoint %d, after seq %lld)", si,
	    providers[prov], reuse ? "the failed message again, " : "", outcome_names[o],
	    s->client_on ? "client boundary" : "structural", ck, (long long)base);
	if (o == O_STOPPED)
		rc = send_and_stop(sc, send_params(sc, si, prov, message), got);
	else
		json_decref(call(sc, "chat.send", send_params(sc, si, prov, message), &rc));
	if ((rc == SMR_OK) != (o <= O_STOPPED || o == O_RETRIED))
		ex_fail(sc, "chat.send answered %s for an outcome '%s'", smr_rc_name(rc),
			outcome_names[o]);
	check_requests(sc, prov, ck, want, o == O_RETRIED ? 2 : 1);
	model_after_send(s, reuse, message, got);
	check_turns(sc, si);
	sc->st->switches += s->last_provider >= 0 && s->last_provider != prov;
	s->last_provider = prov;
	sc->st->sends++;
	sc->st->outcomes[o]++;
	json_decref(want);
	free(message);
	free(reply);
	free(got);
}

/* A v5.2 send with a boundary out of range or a Checkpoint of another line: 422, nothing written. */
static void op_bad_send(struct ex_scen *sc, int si)
{
	struct ex_sess *s = &sc->ss[si];
	int bad_ck = stranger(sc, s->space);
	json_t *p = json_pack("{s:s, s:s, s:s}", "session_id", s->id, "message", "refused",
			      "provider", "openai"), *reqs;
	enum smr_rc rc;

	if (bad_ck >= 0 && chance(sc, 50))
		json_object_set_new(p, "commit_hash", json_string(sc->cks[bad_ck].hash));
	else
		json_object_set_new(p, "history_base_seq",
				    json_integer(chance(sc, 30) ? -1 : s->last + 1 + pick(sc, 3)));
	say(sc, "chat.send session %d with a bad boundary", si);
	json_decref(call(sc, "chat.send", p, &rc));
	if (rc != SMR_EUNPROC)
		ex_fail(sc, "a send with a bad boundary answered %s", smr_rc_name(rc));
	reqs = fake_take();
	if (json_array_size(reqs))
		ex_fail(sc, "a refused send reached the provider");
	json_decref(reqs);
	check_turns(sc, si);
	sc->st->refused++;
}

static const char draft_reply[] =
	"{\"title\":\"Drafted\",\"summary\":\"what was said\",\"decisions\":[],\"assumptions\":[],"
	"\"tasks\":[],\"open_questions\":[],\"entities\":[],\"artifacts\":[]}";

/* A server runs drafts in the background: the job once it has ended (job taken). */
static json_t *draft_finished(struct ex_scen *sc, json_t *job)
{
	enum smr_rc rc;

	json_t *next;

	for (int i = 0; job && i < 10000 && (!strcmp(str(job, "status"), "queued") ||
					     !strcmp(str(job, "status"), "running")); i++) {
		usleep(1000);
		next = call(sc, "draft.get", json_pack("{s:s}", "job_id", str(job, "job_id")), &rc);
		json_decref(job);
		job = next;
	}
	return job;
}

static void op_draft(struct ex_scen *sc, int si)
{
	struct fake_step step = { FAKE_COMPLETE, NULL, 0, 0, draft_reply };
	int prov = pick(sc, 3);
	json_t *res, *reqs;
	enum smr_rc rc;

	fake_queue(sc, &step);
	say(sc, "draft.create session %d via %s", si, providers[prov]);
	res = call(sc, "draft.create", json_pack("{s:s, s:s, s:s}", "session_id", sc->ss[si].id,
						 "provider", providers[prov], "model",
						 models[prov]), &rc);
	res = draft_finished(sc, res);
	reqs = fake_take();
	if (!sc->ss[si].n && rc != SMR_EUNPROC)
		ex_fail(sc, "a draft of a session with no turns answered %s", smr_rc_name(rc));
	else if (sc->ss[si].n && (rc || strcmp(str(res, "status"), "done")))
		ex_fail(sc, "the draft job ended %s (%s): %s", str(res, "status"), smr_rc_name(rc),
			str(res, "error"));
	else if ((int)json_array_size(reqs) != (sc->ss[si].n ? 1 : 0))
		ex_fail(sc, "a draft made %zu provider requests", json_array_size(reqs));
	else if (sc->ss[si].n)
		ex_check_draft(sc, json_array_get(reqs, 0), si, preamble);
	fake_forget();
	sc->st->drafts++;
	json_decref(reqs);
	json_decref(res);
}

/* ---- a scenario ---- */

static int any_session(struct ex_scen *sc)
{
	return pick(sc, sc->n_ss);
}

static void step(struct ex_scen *sc)
{
	int r = pick(sc, 100), si = any_session(sc);
	int room = sc->n_ck + 1 < EX_MAX_CK && sc->n_tok + 40 < EX_MAX_TOKS;

	if (!sc->n_ss || (r < 6 && sc->n_ss < EX_MAX_SESS))
		op_session_create(sc);
	else if (r < 50)
		op_send(sc, si, chance(sc, 50));
	else if (r < 56 && sc->n_ss < EX_MAX_SESS)
		op_mount(sc, si);
	else if (r < 58)
		op_bad_mount(sc, si);
	else if (r < 64)
		op_client_mount(sc, si);
	else if (r < 66)
		op_client_unmount(sc, si);
	else if (r < 68)
		op_bad_send(sc, si);
	else if (r < 74 && room)
		op_create(sc, 0);
	else if (r < 82 && room)
		op_patch(sc, pick(sc, sc->n_sp));
	else if (r < 85 && room)
		op_restore(sc);
	else if (r < 88 && sc->n_sp == 1)
		op_fork(sc);
	else if (r < 93 && sc->n_sp == 2 && room)
		op_merge(sc);
	else if (r < 97)
		op_draft(sc, si);
	else
		op_send(sc, si, 1);
}

static void scen_free(struct ex_scen *sc)
{
	for (int k = 0; k < EX_MAX_CK; k++)
		ck_free(&sc->cks[k]);
	for (int i = 0; i < sc->n_ss; i++)
		for (int j = 0; j < sc->ss[i].n; j++)
			free(sc->ss[i].turns[j].content);
	buf_release(&sc->log);
	buf_release(&sc->why);
}

/* Runs the scenario of seed; 0 when every request held. */
static int scenario(struct ops_ctx *ctx, uint64_t seed, long index, struct ex_stats *st)
{
	struct ex_scen *sc = xcalloc(1, sizeof(*sc));
	enum smr_rc rc;
	int steps, failed;

	sc->seed = sc->rng = seed;
	sc->tag = (unsigned)(seed & 0xffffff);
	sc->ctx = ctx;
	sc->st = st;
	sc->log = (struct buf)BUF_INIT(0);
	sc->why = (struct buf)BUF_INIT(0);
	/* the process in the name: a PostgreSQL database outlives a run, and a replay repeats one */
	snprintf(sc->sp[0].name, sizeof(sc->sp[0].name), "ex-%ld-%06x-%d", index, sc->tag,
		 (int)getpid());
	sc->sp[0].head = -1;
	sc->n_sp = 1;
	fake_forget();
	json_decref(call(sc, "space.create", json_pack("{s:s}", "name", sc->sp[0].name), &rc));
	if (rc)
		ex_fail(sc, "space.create failed: %s", smr_rc_name(rc));
	if (chance(sc, 80))
		op_create(sc, 0);
	steps = 4 + pick(sc, 10);
	for (int i = 0; i < steps && !sc->why.len; i++)
		step(sc);
	failed = sc->why.len > 0;
	if (failed)
		fprintf(stderr, "exactness: scenario %ld of the run (seed %#llx) failed after:\n%s"
			"  %s\n  replay it: SMRITI_EXACTNESS_REPLAY=%#llx build/unit-tests %s\n",
			index + 1, (unsigned long long)seed, sc->log.ptr, sc->why.ptr,
			(unsigned long long)seed, test_name);
	st->scenarios++;
	scen_free(sc);
	free(sc);
	return failed;
}

/* ---- the run ---- */

#define N_ENV 10

/* The environment of a chat runtime whose providers are a fake at port, as K=V (caller frees). */
static void provider_env(int port, const char *local, char *out[N_ENV])
{
	int n = 0;

	out[n++] = xasprintf("OPENAI_API_KEY=sk-exactness");
	out[n++] = xasprintf("OPENAI_BASE_URL=http://127.0.0.1:%d/v1", port);
	out[n++] = xasprintf("ANTHROPIC_API_KEY=sk-exactness");
	out[n++] = xasprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port);
	out[n++] = xasprintf("SMRITI_LOCAL_BASE_URL=http://127.0.0.1:%d%s", port, local);
	out[n++] = xasprintf("SMRITI_LOCAL_API_KEY=sk-exactness");
	out[n++] = xasprintf("SMRITI_PROVIDER_BACKOFF_MS=1");
	out[n++] = xasprintf("SMRITI_SYSTEM_PREAMBLE=%s", preamble);
	/* no trimming for the budget: every turn after the boundary must be there */
	out[n++] = xasprintf("SMRITI_CONTEXT_BUDGET_CHARS=100000000");
	out[n++] = xasprintf("SMRITI_CONTEXT_BUDGETS=gpt=100000000,claude=100000000,llama=100000000");
}

/* A chat runtime on the in-process fake; the environment is left as it was. */
static struct runtime *make_runtime(void)
{
	char *env[N_ENV], *was[N_ENV], *eq;
	struct runtime *rt;

	provider_env(fake_inproc_port, "/local/v1", env);
	for (int i = 0; i < N_ENV; i++) {
		eq = strchr(env[i], '=');
		*eq = '\0';
		was[i] = getenv(env[i]) ? xstrdup(getenv(env[i])) : NULL;
		setenv(env[i], eq + 1, 1);
	}
	rt = runtime_new_from_env();
	for (int i = 0; i < N_ENV; i++) {
		if (was[i])
			setenv(env[i], was[i], 1);
		else
			unsetenv(env[i]);
		free(was[i]);
		free(env[i]);
	}
	return rt;
}

static long env_count(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : dflt;
}

static void print_stats(const struct ex_stats *st, const char *where, uint64_t base)
{
	printf("exactness: %ld scenarios on %s (seed %#llx): %ld sends, %ld provider requests"
	       " checked, %ld provider switches mid-session, %ld client-boundary sends, %ld mounts, %ld drafts,"
	       " %ld refused; replies:", st->scenarios, where, (unsigned long long)base, st->sends,
	       st->requests, st->switches, st->client_sends, st->mounts, st->drafts, st->refused);
	for (int o = 0; o <= O_RETRIED; o++)
		printf(" %ld %s%s", st->outcomes[o], outcome_names[o], o < O_RETRIED ? "," : "");
	printf("; checkpoints: %ld written, %ld patched, %ld restores, %ld forks, %ld merges\n",
	       st->creates, st->patches, st->restores, st->forks, st->merges);
	fflush(stdout);
}

/* The run's seeds: SMRITI_EXACTNESS_SEED, else from the clock; the replayed one alone. */
static uint64_t run_seed(long *n, int *replay, uint64_t *one)
{
	const char *r = getenv("SMRITI_EXACTNESS_REPLAY");

	*replay = r && *r;
	if (*replay) {
		*n = 1;
		*one = strtoull(r, NULL, 0);
	}
	return (uint64_t)env_count("SMRITI_EXACTNESS_SEED",
				   (long)(time(NULL) ^ ((long)getpid() << 16)));
}

/* Opens a fresh store of dsn into ctx every EX_BATCH scenarios; -1 when it cannot. */
static int fresh_store(struct ops_ctx **ctx, const char *dsn, struct runtime *rt, long i,
		       int *open)
{
	struct smr_err err = SMR_ERR_INIT;

	if (*open && i % EX_BATCH)
		return 0;
	if (*open)
		ops_close(*ctx);
	*open = 0;
	if (ops_open(ctx, dsn, &(struct ops_opts){ .rt = rt }, &err)) {
		test_fail(__FILE__, __LINE__, "cannot open the store: %s", err.msg);
		return -1;
	}
	*open = 1;
	return 0;
}

/* n scenarios in this process on stores of dsn, or (dsn NULL) through `smriti serve`. */
static void run(const char *dsn, const char *where, long n)
{
	int replay = 0, open = 0, failed = 0;
	uint64_t one = 0, base = run_seed(&n, &replay, &one), seeds = base;
	struct ex_stats st = { 0 };
	struct ops_ctx *ctx = NULL;

	for (long i = 0; i < n && !failed; i++) {
		uint64_t seed = replay ? one : next64(&seeds);

		if (dsn && fresh_store(&ctx, dsn, inproc_rt, i, &open))
			break;
		failed = scenario(dsn ? ctx : NULL, seed, i, &st);
		if (failed)
			test_fail(__FILE__, __LINE__, "exactness: scenario %ld of seed %#llx failed"
				  " (its report is above)", i + 1, (unsigned long long)seed);
	}
	if (open)
		ops_close(ctx);
	print_stats(&st, where, replay ? one : base);
}

/* In this process: the in-process fake and a chat runtime pointing at it. */
static void run_inproc(const char *dsn, const char *where, long n)
{
	struct runtime *rt;

	if (fake_inproc_start()) {
		test_fail(__FILE__, __LINE__, "the in-process fake provider did not start");
		return;
	}
	rt = make_runtime();
	inproc_rt = rt;
	run(dsn, where, n);
	inproc_rt = NULL;
	runtime_free(rt);
}

TEST(exactness_property_sqlite)
{
	test_name = "exactness_property_sqlite";
	run_inproc(":memory:", "SQLite, in process",
		   env_count("SMRITI_EXACTNESS_SCENARIOS", EX_DEFAULT));
}

TEST(exactness_property_postgres)
{
	const char *pg = getenv("SMRITI_TEST_PG");

	if (!pg || !*pg)
		return;
	test_name = "exactness_property_postgres";
	run_inproc(pg, "PostgreSQL, in process",
		   env_count("SMRITI_EXACTNESS_PG_SCENARIOS", EX_PG_DEFAULT));
}

/* Through a real server and the Node fake: the wire formats, HTTP and the finisher thread. */
TEST(exactness_property_wire)
{
	char *env[N_ENV], why[300];

	test_name = "exactness_property_wire";
	if (fake_script("[]")) {
		test_fail(__FILE__, __LINE__, "the Node fake provider did not start");
		return;
	}
	provider_env(fake_port, "/v1", env);
	if (ex_wire_start(env, N_ENV, why, sizeof(why))) {
		test_fail(__FILE__, __LINE__, "%s", why);
	} else {
		wire_on = 1;
		run(NULL, "smriti serve (SQLite) with the Node fake",
		    env_count("SMRITI_EXACTNESS_WIRE_SCENARIOS", EX_WIRE_DEFAULT));
		wire_on = 0;
		if (ex_wire_stop())
			test_fail(__FILE__, __LINE__, "smriti serve did not exit cleanly");
	}
	for (int i = 0; i < N_ENV; i++)
		free(env[i]);
}
