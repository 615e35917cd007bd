/*
 * test_bundle.c -- the bundle read from its text and written as it comes:
 * util/jspan.h's test of jansson's own text against jansson itself, the
 * streaming writer against bundle_to_json(), a bundle laid out by hand
 * (white space, keys in another order, escapes) read like the compact one,
 * every kind of damage refused, and a history long enough that the
 * reader's item cache forgets and meets items again round-tripping
 * through a store byte for byte.
 */
#include "harness.h"
#include "temp_store.h"

#include "domain/bundle.h"
#include "domain/checkpoint.h"
#include "ops/ops.h"
#include "util/jspan.h"
#include "util/xalloc.h"

#include <stdlib.h>

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

/* A random string: plain words, controls, quotes, backslashes, UTF-8. */
static json_t *random_string(void)
{
	static const char *const bits[] = { "a", "kafka", " ", "\"", "\\", "/", "\n", "\t",
					    "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x9c\x93",
					    "\xf0\x9f\x98\x80", "\b", "\f", "\r", "u0041" };
	char buf[128] = "";
	int n = (int)(next() % 8);

	for (int i = 0; i < n; i++)
		strcat(buf, bits[next() % (sizeof(bits) / sizeof(*bits))]);
	return json_string(buf);
}

static json_t *random_value(int depth)
{
	static const char *const keys[] = { "text", "status", "name", "kind", "a", "zz", "" };
	json_t *v;
	int n;

	switch (depth > 3 ? next() % 5 : next() % 7) {
	case 0:
		return random_string();
	case 1:
		return json_integer((json_int_t)next() - (json_int_t)(next() % 2) * 100000);
	case 2:
		return next() % 4 ? json_true() : json_real(0.5 * (int)(next() % 9));
	case 3:
		return next() % 2 ? json_null() : json_false();
	case 4:
		return json_integer(0);
	case 5:
		v = json_array();
		n = (int)(next() % 4);
		for (int i = 0; i < n; i++)
			json_array_append_new(v, random_value(depth + 1));
		return v;
	default:
		v = json_object();
		n = (int)(next() % 5);
		for (int i = 0; i < n; i++)
			json_object_set_new(v, keys[next() % 7], random_value(depth + 1));
		return v;
	}
}

/* jspan_compact(text) against what jansson writes for what it reads from text. */
static void check_compact_claim(const char *text)
{
	json_t *v = json_loadb(text, strlen(text), JSON_DECODE_ANY, NULL);
	int form = jspan_compact(text, strlen(text));
	char *compact, *sorted;

	if (!v)
		return;
	compact = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	sorted = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
	if (form)
		CHECK_STR(compact, text);
	if (form == JSPAN_SORTED)
		CHECK_STR(sorted, text);
	free(compact);
	free(sorted);
	json_decref(v);
}

TEST(jspan_compact_claims_only_what_jansson_writes)
{
	static const char *const hand[] = {
		"{\"a\":1,\"a\":2}", "{\"b\":1,\"a\":2}", "{ \"a\":1}", "[1, 2]", "\"\\u0041\"",
		"\"\\/\"", "\"\\u001F\"", "\"\\u001f\"", "\"\\u0008\"", "\"\\b\"", "-0", "0",
		"-12", "1.0", "1e3", "[]", "{}", "[[],{}]", "\"\\\"\\\\\"", "\"\\ud83d\\ude00\"",
		"{\"text\":\"x\",\"status\":\"open\"}", "{\"status\":\"open\",\"text\":\"x\"}",
		"{\"\":1,\"a\":2}", "{\"ab\":1,\"a\":2}", "{\"a\":1,\"ab\":2}", "true", "nul",
	};
	int claimed = 0;

	for (size_t i = 0; i < sizeof(hand) / sizeof(*hand); i++)
		check_compact_claim(hand[i]);
	CHECK_INT(jspan_compact("{\"b\":1,\"a\":2}", 13), JSPAN_COMPACT);
	CHECK_INT(jspan_compact("{\"a\":1,\"b\":2}", 13), JSPAN_SORTED);
	CHECK_INT(jspan_compact("[1, 2]", 6), 0);
	for (int i = 0; i < 20000; i++) {
		json_t *v = random_value(0);
		char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		check_compact_claim(text);
		claimed += jspan_compact(text, strlen(text)) != 0;
		free(text);
		json_decref(v);
	}
	CHECK(claimed > 10000);   /* jansson's own text is recognised, reals aside */
}

/* ---- bundles ---- */

/*
 * A history of n checkpoints; every 100th brings back an item last seen 100
 * before, and one entity stays from the first to the last (a list the
 * reader takes as the last checkpoint's for longer than its cache keeps
 * items nobody reads).
 */
static struct checkpoint *history(long n)
{
	struct checkpoint *v = xcalloc((size_t)n, sizeof(*v));

	for (long i = 0; i < n; i++) {
		struct checkpoint *c = &v[i];
		char text[64], at[40];

		checkpoint_init(c);
		if (i) {
			checkpoint_copy_content(c, &v[i - 1]);
			c->parent_hash = xstrdup(v[i - 1].hash);
		} else {
			json_array_append_new(c->entities, json_pack("{s:s, s:s}", "name", "kafka",
								     "kind", "queue"));
		}
		free(c->title);
		c->title = xasprintf("step %ld \"quoted\" caf\xc3\xa9", i);
		snprintf(text, sizeof(text), "decision %ld\twith a tab", i % 100 ? i : 0);
		if (json_array_size(c->decisions) > 5)
			json_array_remove(c->decisions, 0);
		json_array_append_new(c->decisions, json_pack("{s:s}", "text", text));
		if (i % 7 == 0)
			json_array_append_new(c->tasks, json_pack("{s:s, s:s}", "text", text,
								  "status", "open"));
		if (i % 50 == 0)
			json_array_append_new(c->artifacts, json_pack("{s:s, s:s, s:s}", "name",
								      "notes.md", "kind", "text",
								      "content", "a\nb \\ c"));
		json_object_set_new(c->metadata, "n", json_integer(i % 3));
		free(c->author);
		c->author = xstrdup(i % 2 ? "ann" : "bo");
		snprintf(at, sizeof(at), "2026-01-01T00:%02ld:%02ld.000000Z", i / 60 % 60, i % 60);
		c->created_at = xstrdup(at);
		checkpoint_seal(c);
	}
	return v;
}

static void fill(struct space_bundle *b, long n)
{
	memset(b, 0, sizeof(*b));
	b->space = (struct space){ xstrdup("00000000-0000-4000-8000-00000000000b"),
				   xstrdup("long"), xstrdup("a long one"),
				   xstrdup("2026-01-01T00:00:00.000000Z"), NULL, NULL };
	b->checkpoints = history(n);
	b->n_checkpoints = (size_t)n;
	b->space.head = xstrdup(b->checkpoints[n - 1].hash);
	b->n_sessions = 1;
	b->sessions = xcalloc(1, sizeof(*b->sessions));
	b->sessions[0] = (struct session){ .id = xstrdup("s-1"), .title = xstrdup("chat"),
					   .created_at = xstrdup("2026-01-01T00:00:00.000000Z"),
					   .history_base_seq = -1 };
	b->turns = xcalloc(1, sizeof(*b->turns));
	b->n_turns = xcalloc(1, sizeof(*b->n_turns));
	b->turns[0] = xcalloc(2, sizeof(**b->turns));
	b->n_turns[0] = 2;
	for (int i = 0; i < 2; i++)
		b->turns[0][i] = (struct turn){ .seq = i + 1, .role = xstrdup(i ? "assistant" : "user"),
						.content = xstrdup("where \"do\" events go?"),
						.created_at = xstrdup("2026-01-01T00:00:01.000000Z"),
						.prompt_tokens = -1, .completion_tokens = -1,
						.latency_ms = -1 };
	b->n_reflog = 1;
	b->reflog = xcalloc(1, sizeof(*b->reflog));
	b->reflog[0] = (struct reflog_entry){ .space_name = xstrdup("long"),
					      .new_hash = xstrdup(b->space.head),
					      .action = xstrdup("commit"), .actor = xstrdup("ann"),
					      .reason = xstrdup("commit (initial)"),
					      .created_at = xstrdup("2026-01-01T00:00:02.000000Z") };
}

/* The bundle text of b through the writer; t: each checkpoint's stored text, or NULL. */
static char *written(const struct space_bundle *b, const struct checkpoint_text *t)
{
	struct bundle_writer *w = bundle_writer_new();
	size_t len;

	bundle_writer_space(w, &b->space);
	for (size_t i = 0; i < b->n_checkpoints; i++)
		bundle_writer_checkpoint(w, &b->checkpoints[i], t ? &t[i] : NULL);
	bundle_writer_space_end(w, b);
	return bundle_writer_finish(w, &len);
}

static char *compact_of(const struct space_bundle *b)
{
	json_t *doc = bundle_to_json(b, 1);
	char *text = json_dumps(doc, JSON_COMPACT);

	json_decref(doc);
	return text;
}

TEST(bundle_writer_writes_what_bundle_to_json_does)
{
	struct space_bundle b, *r = NULL;
	struct smr_err err = SMR_ERR_INIT;
	char *want, *got, *again;
	size_t n = 0;

	fill(&b, 1500);
	want = compact_of(&b);
	got = written(&b, NULL);
	CHECK_STR(got, want);
	CHECK_INT(bundle_read(want, strlen(want), &r, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (r) {   /* the texts the reader keeps for a store are jansson's, and write back so */
		json_t *d = json_loadb(r[0].texts[7].json[0], r[0].texts[7].len[0], 0, NULL);
		char *s = json_dumps(d, JSON_COMPACT);

		CHECK(strlen(s) == r[0].texts[7].len[0] &&
		      !memcmp(s, r[0].texts[7].json[0], strlen(s)));
		free(s);
		json_decref(d);
		CHECK_INT(r[0].n_checkpoints, 1500);
		CHECK_STR(r[0].checkpoints[1499].title, b.checkpoints[1499].title);
		again = written(&r[0], r[0].texts);
		CHECK_STR(again, want);
		free(again);
	}
	space_bundles_free(r, n);
	free(got);
	free(want);
	space_bundle_release(&b);
}

TEST(bundle_read_takes_a_bundle_laid_out_by_hand)
{
	struct space_bundle b, *r = NULL;
	struct smr_err err = SMR_ERR_INIT;
	json_t *doc;
	char *compact, *pretty, *back;
	size_t n = 0;

	fill(&b, 80);
	compact = compact_of(&b);
	doc = json_loads(compact, 0, NULL);
	/* each checkpoint's keys the other way round: its hash covers values, not order */
	{
		json_t *list = json_object_get(json_array_get(json_object_get(doc, "spaces"), 0),
					       "checkpoints"), *ck, *rev;
		const char *keys[32];
		size_t i, k;

		json_array_foreach(list, i, ck) {
			const char *key;
			json_t *val;

			k = 0;
			json_object_foreach(ck, key, val)
				keys[k++] = key;
			rev = json_object();
			while (k-- > 0)
				json_object_set(rev, keys[k], json_object_get(ck, keys[k]));
			json_array_set_new(list, i, rev);
		}
	}
	/* and white space everywhere (the bundle's sha256 covers values, in their order) */
	pretty = json_dumps(doc, JSON_INDENT(3));
	CHECK_INT(bundle_read(pretty, strlen(pretty), &r, &n, &err), SMR_OK);
	if (r) {
		CHECK_INT(r[0].n_checkpoints, 80);
		/* what a store writes is compact whatever the layout read */
		CHECK(r[0].texts[5].len[0] > 2 && !memchr(r[0].texts[5].json[0], '\n',
							  r[0].texts[5].len[0]));
		back = written(&r[0], r[0].texts);
		CHECK_STR(back, compact);
		free(back);
	}
	space_bundles_free(r, n);
	json_decref(doc);
	free(pretty);
	free(compact);
	space_bundle_release(&b);
}

/* bundle_read of text with the first `from` replaced by `to`: the code it gives. */
static enum smr_rc read_edited(const char *text, const char *from, const char *to,
			       struct smr_err *err)
{
	const char *at = strstr(text, from);
	struct space_bundle *r = NULL;
	size_t n = 0;
	char *bad;
	enum smr_rc rc;

	CHECK(at != NULL);
	if (!at)
		return SMR_OK;
	bad = xasprintf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	rc = bundle_read(bad, strlen(bad), &r, &n, err);
	space_bundles_free(r, n);
	free(bad);
	return rc;
}

TEST(bundle_read_refuses_every_kind_of_damage)
{
	struct space_bundle b;
	struct smr_err err = SMR_ERR_INIT;
	char *text;

	fill(&b, 300);
	text = compact_of(&b);
	/* a byte of an item met only once, deep in the history */
	CHECK_INT(read_edited(text, "decision 251\\t", "decisioN 251\\t", &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "does not hash to its commit_hash") != NULL);
	/* the same item as an earlier one's bytes, in another checkpoint: still refused */
	CHECK_INT(read_edited(text, "step 200 ", "step 201 ", &err), SMR_EUNPROC);
	CHECK_INT(read_edited(text, "\"author\":\"bo\"", "\"author\":\"bo\",\"author\":\"bo\"",
			      &err), SMR_EUNPROC);
	CHECK_INT(read_edited(text, "\"author\":\"bo\"", "\"autor\":\"bo\"", &err), SMR_EUNPROC);
	CHECK_INT(read_edited(text, "{\"text\":\"decision 7", "{\"text\":7,\"x\":\"decision 7",
			      &err), SMR_EUNPROC);
	CHECK_INT(read_edited(text, "\"decisions\":[", "\"decisions\":{", &err), SMR_EUNPROC);
	CHECK_INT(read_edited(text, "\"status\":\"open\"", "\"status\":\"opne\"", &err),
		  SMR_EUNPROC);
	/* the turns and reflog: the bundle's sha256 */
	CHECK_INT(read_edited(text, "events go", "Events go", &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "does not match its sha256") != NULL);
	CHECK_INT(read_edited(text, "\"seq\":2", "\"seq\":3", &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "does not match its sha256") != NULL);
	/* not JSON, not a bundle */
	CHECK(read_edited(text, "]}]}", "]}", &err) != SMR_OK);
	CHECK_INT(read_edited(text, "smriti-bundle", "zip", &err), SMR_EINVAL);
	CHECK_INT(read_edited(text, "\"version\":1", "\"version\":2", &err), SMR_EUNPROC);
	/* the list of Spaces with a comma and nothing after it, or a stray byte: not JSON, refused */
	for (int i = 0; i < 2; i++) {
		static const char *const stray[] = { ",", " x" };
		size_t len = strlen(text);
		struct space_bundle *r = NULL;
		size_t n = 0;
		char *bad;

		CHECK(len > 2 && !strcmp(text + len - 2, "]}"));
		bad = xasprintf("%.*s%s]}", (int)(len - 2), text, stray[i]);
		CHECK_INT(bundle_read(bad, strlen(bad), &r, &n, &err), SMR_EUNPROC);
		CHECK(strstr(err.msg, "does not match its sha256") != NULL);   /* text that is not JSON */
		CHECK(r == NULL);
		space_bundles_free(r, n);
		free(bad);
	}
	{
		struct space_bundle *r = NULL;
		size_t n = 0;

		CHECK_INT(bundle_read(text, 100, &r, &n, &err), SMR_EINVAL);
		CHECK_INT(bundle_read("", 0, &r, &n, &err), SMR_EINVAL);
		CHECK(r == NULL);
	}
	free(text);
	space_bundle_release(&b);
}

TEST(bundle_of_a_long_history_round_trips_through_a_store)
{
	char path[TEMP_STORE_PATH_MAX];
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;
	struct space_bundle b;
	struct smr_err err = SMR_ERR_INIT;
	json_t *rep = NULL;
	char *text, *back = NULL;
	size_t len = 0;

	fill(&b, 2500);
	text = compact_of(&b);
	temp_store_open(path, &st, &ctx);
	CHECK_INT(ops_import_text(ctx, text, strlen(text), &rep, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(rep, "checkpoints")), 2500);
	json_decref(rep);
	CHECK_INT(ops_export_text(ctx, NULL, 0, &back, &len, &err), SMR_OK);
	CHECK_STR(back, text);
	CHECK_INT(len, strlen(text));
	/* again: nothing added, nothing changed */
	CHECK_INT(ops_import_text(ctx, back, len, &rep, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(rep, "checkpoints")), 0);
	json_decref(rep);
	free(back);
	temp_store_close(path, ctx);
	free(text);
	space_bundle_release(&b);
}
