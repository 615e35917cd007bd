/*
 * test_checkpoint.c -- canonical form, hashing (fixed vectors computed
 * independently from docs/checkpoint-hash.md), validation and
 * normalisation of checkpoint fields, diff and reference parsing.
 */
#include "harness.h"

#include "domain/checkpoint.h"
#include "domain/diff.h"
#include "domain/patch.h"
#include "domain/merge.h"
#include "domain/ref.h"
#include "util/utf8.h"

#include <stdlib.h>

static const char vector_input[] =
	"{\"title\":\"Pick a database\",\"summary\":\"We compared options.\","
	"\"decisions\":[\"Use SQLite\"],\"assumptions\":[{\"text\":\"One machine\"}],"
	"\"tasks\":[\"Write the schema\"],\"open_questions\":[\"When do we need PostgreSQL?\"],"
	"\"entities\":[{\"name\":\"SQLite\",\"kind\":\"software\"}],"
	"\"artifacts\":[{\"name\":\"notes.md\",\"content\":\"na\xc3\xafve caf\xc3\xa9 \xe2\x9c\x93\"}],"
	"\"metadata\":{\"source\":\"test\"},\"author\":\"ada\"}";

static const char vector_canonical[] =
	"{\"artifacts\":[{\"content\":\"na\xc3\xafve caf\xc3\xa9 \xe2\x9c\x93\",\"kind\":\"text\","
	"\"name\":\"notes.md\"}],\"assumptions\":[{\"text\":\"One machine\"}],\"author\":\"ada\","
	"\"created_at\":\"2026-01-02T03:04:05.000006Z\",\"decisions\":[{\"text\":\"Use SQLite\"}],"
	"\"entities\":[{\"kind\":\"software\",\"name\":\"SQLite\"}],\"merge_parent\":null,"
	"\"metadata\":{\"source\":\"test\"},\"open_questions\":[{\"text\":\"When do we need "
	"PostgreSQL?\"}],\"parent\":null,\"summary\":\"We compared options.\",\"tasks\":[{\"status\":"
	"\"open\",\"text\":\"Write the schema\"}],\"title\":\"Pick a database\",\"v\":1}";

/* Builds the checkpoint of vector_input; caller releases. */
static void load_vector(struct checkpoint *c)
{
	json_t *in = json_loads(vector_input, 0, NULL);

	checkpoint_init(c);
	CHECK(in != NULL);
	CHECK_INT(checkpoint_from_json(in, c, NULL), SMR_OK);
	c->created_at = strdup("2026-01-02T03:04:05.000006Z");
	json_decref(in);
}

TEST(checkpoint_canonical_form_is_sorted_compact_utf8)
{
	struct checkpoint c;
	char *canon;

	load_vector(&c);
	canon = checkpoint_canonical(&c);
	CHECK_STR(canon, vector_canonical);
	free(canon);
	checkpoint_release(&c);
}

TEST(checkpoint_hash_matches_fixed_vectors)
{
	struct checkpoint c;

	load_vector(&c);
	checkpoint_seal(&c);
	CHECK_STR(c.hash, "6fa5ac51b42ffbcab7d5e6d7d0d15cb9419dd1b124fef31efcdf20043f20cf3c");
	/* a child: same fields, new title, parent = the first hash */
	c.parent_hash = strdup(c.hash);
	free(c.title);
	c.title = strdup("Second");
	checkpoint_seal(&c);
	CHECK_STR(c.hash, "0b9057f5d4d3e225f744d6dc2f7b60bc07cb5297fe20b42ba6a0e964cbcb6dfd");
	checkpoint_release(&c);
}

/* A merge: both parents are hashed, in order (docs/checkpoint-hash.md's merge vector). */
TEST(checkpoint_hash_of_a_merge_covers_both_parents)
{
	struct checkpoint c;

	load_vector(&c);
	c.parent_hash = strdup("6fa5ac51b42ffbcab7d5e6d7d0d15cb9419dd1b124fef31efcdf20043f20cf3c");
	c.merge_parent_hash =
		strdup("ba5b5ba8608c17d5a1f81e96ff0cdc51ac49da7a2c2aa861e6d8f3dc77b6bfd2");
	json_object_clear(c.metadata);
	json_object_set_new(c.metadata, "merge_base", json_string(
		"070133e460cdd18b75753706f2df9b89c74274ef2f4148d96e2a521ad739435c"));
	free(c.created_at);
	c.created_at = strdup("2026-01-03T00:00:00.000000Z");
	checkpoint_seal(&c);
	CHECK_STR(c.hash, "8d85fde114bc610c3441fcefcb8276001d75c76aaa6adf3bb713f4944a9da455");
	/* the same two parents the other way round is another checkpoint */
	free(c.parent_hash);
	c.parent_hash = strdup("ba5b5ba8608c17d5a1f81e96ff0cdc51ac49da7a2c2aa861e6d8f3dc77b6bfd2");
	free(c.merge_parent_hash);
	c.merge_parent_hash =
		strdup("6fa5ac51b42ffbcab7d5e6d7d0d15cb9419dd1b124fef31efcdf20043f20cf3c");
	checkpoint_seal(&c);
	CHECK_STR(c.hash, "46f57113e3d0262740f11f0e13cddc2261a616cf0f6753b86e1e6bf13c92830b");
	checkpoint_release(&c);
}

TEST(checkpoint_hash_covers_every_field_but_not_the_space)
{
	struct checkpoint c;
	char base[65], h[65];

	load_vector(&c);
	checkpoint_compute_hash(&c, base);
	c.space = strdup("elsewhere");
	checkpoint_compute_hash(&c, h);
	CHECK_STR(h, base);
	json_object_set_new(json_array_get(c.tasks, 0), "status", json_string("done"));
	checkpoint_compute_hash(&c, h);
	CHECK(strcmp(h, base) != 0);
	json_object_set_new(json_array_get(c.tasks, 0), "status", json_string("open"));
	free(c.author);
	c.author = strdup("bob");
	checkpoint_compute_hash(&c, h);
	CHECK(strcmp(h, base) != 0);
	free(c.author);
	c.author = strdup("ada");
	json_object_set_new(c.metadata, "x", json_integer(1));
	checkpoint_compute_hash(&c, h);
	CHECK(strcmp(h, base) != 0);
	checkpoint_release(&c);
}

TEST(checkpoint_normalises_strings_and_task_status)
{
	struct checkpoint c;

	load_vector(&c);
	CHECK_STR(json_string_value(json_object_get(json_array_get(c.decisions, 0), "text")),
		  "Use SQLite");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c.tasks, 0), "status")),
		  "open");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c.artifacts, 0), "kind")),
		  "text");
	checkpoint_release(&c);
}

/* Expects input to be rejected with code and a message containing needle. */
static void expect_rejected(const char *input, enum smr_rc code, const char *needle)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;
	json_t *in = json_loads(input, JSON_DECODE_ANY, NULL);

	checkpoint_init(&c);
	CHECK(in != NULL);
	CHECK_INT(checkpoint_from_json(in, &c, &err), code);
	if (!strstr(err.msg, needle))
		test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", err.msg, needle);
	checkpoint_release(&c);
	json_decref(in);
}

TEST(checkpoint_rejects_wrong_shapes_with_clear_messages)
{
	expect_rejected("[]", SMR_EINVAL, "JSON object");
	expect_rejected("{\"title\":3}", SMR_EINVAL, "'title' must be a string");
	expect_rejected("{\"decisions\":\"x\"}", SMR_EINVAL, "'decisions' must be an array");
	expect_rejected("{\"decisions\":[1]}", SMR_EINVAL, "decisions[0]");
	expect_rejected("{\"decisions\":[{\"txt\":\"a\"}]}", SMR_EINVAL, "decisions[0].text");
	expect_rejected("{\"decisions\":[\"  \"]}", SMR_EINVAL, "non-empty");
	expect_rejected("{\"tasks\":[{\"text\":\"a\",\"status\":\"maybe\"}]}", SMR_EINVAL,
			"'open' or 'done'");
	expect_rejected("{\"artifacts\":[\"a\"]}", SMR_EINVAL, "artifacts[0]");
	expect_rejected("{\"artifacts\":[{\"name\":\"a\"}]}", SMR_EINVAL, "content");
	expect_rejected("{\"entities\":[{\"name\":\"a\",\"kind\":2}]}", SMR_EINVAL, "kind");
	expect_rejected("{\"metadata\":[]}", SMR_EINVAL, "metadata");
	expect_rejected("{\"decision\":[\"a\"]}", SMR_EINVAL, "unknown checkpoint field 'decision'");
}

TEST(checkpoint_accepts_its_own_json_back)
{
	struct checkpoint a, b;
	json_t *doc;
	char ha[65], hb[65];

	load_vector(&a);
	checkpoint_seal(&a);
	a.space = strdup("s");
	doc = checkpoint_to_json(&a);
	checkpoint_init(&b);
	CHECK_INT(checkpoint_from_json(doc, &b, NULL), SMR_OK);
	b.created_at = strdup(a.created_at);
	checkpoint_compute_hash(&a, ha);
	checkpoint_compute_hash(&b, hb);
	CHECK_STR(hb, ha);
	json_decref(doc);
	checkpoint_release(&a);
	checkpoint_release(&b);
}

TEST(checkpoint_empty_detection)
{
	struct checkpoint c;

	checkpoint_init(&c);
	CHECK(checkpoint_is_empty(&c));
	c.title = strdup("   ");
	CHECK(checkpoint_is_empty(&c));
	json_array_append_new(c.open_questions, json_pack("{s:s}", "text", "why?"));
	CHECK(!checkpoint_is_empty(&c));
	checkpoint_release(&c);
}

TEST(diff_reports_added_removed_changed_by_identity)
{
	struct checkpoint a, b;
	json_t *d, *tasks;

	load_vector(&a);
	load_vector(&b);
	a.hash = strdup("aaaa");
	b.hash = strdup("bbbb");
	json_array_append_new(b.decisions, json_pack("{s:s}", "text", "Use C"));
	json_array_clear(b.assumptions);
	json_object_set_new(json_array_get(b.tasks, 0), "status", json_string("done"));
	d = checkpoint_diff(&a, &b);
	CHECK(json_is_false(json_object_get(d, "identical")));
	CHECK_INT(json_array_size(json_object_get(json_object_get(d, "decisions"), "added")), 1);
	CHECK_INT(json_array_size(json_object_get(json_object_get(d, "assumptions"), "removed")), 1);
	tasks = json_object_get(json_object_get(d, "tasks"), "changed");
	CHECK_INT(json_array_size(tasks), 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(json_array_get(tasks, 0), "to"),
						    "status")), "done");
	CHECK(json_object_get(d, "title") == NULL);
	CHECK(json_object_get(d, "entities") == NULL);
	json_decref(d);
	d = checkpoint_diff(&a, &a);
	CHECK(json_is_true(json_object_get(d, "identical")));
	json_decref(d);
	checkpoint_release(&a);
	checkpoint_release(&b);
}

/* The counts a history row shows: per field, and tasks done apart. */
TEST(diff_counts_per_field_and_tasks_done)
{
	struct checkpoint a, b;
	json_t *n, *t;
	size_t n_assumptions;

	load_vector(&a);
	load_vector(&b);
	json_array_append_new(b.decisions, json_pack("{s:s}", "text", "Use C"));
	json_array_append_new(b.decisions, json_pack("{s:s}", "text", "Use make"));
	json_array_remove(b.assumptions, 0);
	json_object_set_new(json_array_get(b.tasks, 0), "status", json_string("done"));
	n = checkpoint_diff_counts(&a, &b);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(n, "decisions"), "added")), 2);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(n, "assumptions"), "removed")), 1);
	t = json_object_get(n, "tasks");
	CHECK_INT(json_integer_value(json_object_get(t, "changed")), 1);
	CHECK_INT(json_integer_value(json_object_get(t, "done")), 1);
	CHECK(json_object_get(n, "entities") == NULL);
	json_decref(n);
	/* against nothing (a first checkpoint) everything is added */
	n_assumptions = json_array_size(a.assumptions);
	n = checkpoint_diff_counts(NULL, &a);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(n, "assumptions"), "added")),
		  (long long)n_assumptions);
	json_decref(n);
	n = checkpoint_diff_counts(&a, &a);
	CHECK_INT(json_object_size(n), 0);
	json_decref(n);
	checkpoint_release(&a);
	checkpoint_release(&b);
}

TEST(ref_parse_splits_ancestry)
{
	struct ref_spec r;

	CHECK_INT(ref_parse("demo", NULL, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "demo");
	CHECK_INT(r.ancestors, 0);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("demo~3", NULL, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "demo");
	CHECK_INT(r.ancestors, 3);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("abcd~", NULL, &r, NULL), SMR_OK);
	CHECK_INT(r.ancestors, 1);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("demo~x", NULL, &r, NULL), SMR_EUSAGE);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("demo~-1", NULL, &r, NULL), SMR_EUSAGE);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("~2", NULL, &r, NULL), SMR_EUSAGE);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("", NULL, &r, NULL), SMR_EUSAGE);
	ref_spec_release(&r);
	/* a final ^ / ^1 / ^2 names a parent */
	CHECK_INT(ref_parse("demo^2", NULL, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "demo");
	CHECK_INT(r.parent, 2);
	CHECK_INT(r.ancestors, 0);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("demo~2^", NULL, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "demo");
	CHECK_INT(r.ancestors, 2);
	CHECK_INT(r.parent, 1);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("demo^3", NULL, &r, NULL), SMR_OK);   /* not a parent: a name */
	CHECK_STR(r.base, "demo^3");
	CHECK_INT(r.parent, 0);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("^2", NULL, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "^2");
	ref_spec_release(&r);
	CHECK(is_hash_prefix("abcd"));
	CHECK(!is_hash_prefix("abc"));
	CHECK(!is_hash_prefix("ABCD"));
	CHECK(!is_hash_prefix("abcg"));
}

TEST(utf8_validation_and_character_prefixes)
{
	const char *s = "a\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80z";   /* a é ✓ 😀 z */

	CHECK(utf8_valid(s, strlen(s)));
	CHECK_INT(utf8_chars(s, strlen(s)), 5);
	CHECK_INT(utf8_prefix_bytes(s, strlen(s), 2), 3);
	CHECK_INT(utf8_prefix_bytes(s, strlen(s), 4), 10);
	CHECK_INT(utf8_prefix_bytes(s, strlen(s), 99), strlen(s));
	CHECK(!utf8_valid("\xc3", 1));             /* truncated */
	CHECK(!utf8_valid("\xc0\xaf", 2));         /* overlong */
	CHECK(!utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
	CHECK(!utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	CHECK(!utf8_valid("\xff", 1));
}

TEST(ref_parse_reads_reflog_forms)
{
	const char *now = "2026-12-03T12:00:00.123456Z";
	struct ref_spec r;

	CHECK_INT(ref_parse("demo@{3}~2", now, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "demo");
	CHECK_INT(r.at, REF_AT_INDEX);
	CHECK_INT(r.at_index, 3);
	CHECK_INT(r.ancestors, 2);
	ref_spec_release(&r);
	CHECK_INT(ref_parse("@{yesterday}", now, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "");
	CHECK_INT(r.at, REF_AT_TIME);
	CHECK_STR(r.at_time, "2026-12-02T12:00:00.999999Z");
	ref_spec_release(&r);
	CHECK_INT(ref_parse("a b@{2026-12-01 12:00}", now, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "a b");
	CHECK_STR(r.at_time, "2026-12-01T12:00:00.999999Z");
	ref_spec_release(&r);
	CHECK_INT(ref_parse("x@{2026-12-01}", now, &r, NULL), SMR_OK);
	CHECK_STR(r.at_time, "2026-12-01T00:00:00.999999Z");
	ref_spec_release(&r);
	CHECK_INT(ref_parse("x@{1.week.ago}", now, &r, NULL), SMR_OK);
	CHECK_STR(r.at_time, "2026-11-26T12:00:00.999999Z");
	ref_spec_release(&r);
	CHECK_INT(ref_parse("x@{90 minutes ago}", now, &r, NULL), SMR_OK);
	CHECK_STR(r.at_time, "2026-12-03T10:30:00.999999Z");
	ref_spec_release(&r);
	CHECK_INT(ref_parse("x@{2026-13-01}", now, &r, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse("x@{3 fortnights ago}", now, &r, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse("x@{}", now, &r, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse("x@{-1}", now, &r, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse("x@{99999999999999999999}", now, &r, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse("x@{yesterday}", NULL, &r, NULL), SMR_EUSAGE);
	/* without a closing brace it is a plain name */
	CHECK_INT(ref_parse("x@{1", now, &r, NULL), SMR_OK);
	CHECK_STR(r.base, "x@{1");
	CHECK_INT(r.at, REF_AT_NONE);
	ref_spec_release(&r);
}

/* Runs checkpoint_from_json on doc (stolen); returns its code, message in err. */
static enum smr_rc from_doc(json_t *doc, struct smr_err *err)
{
	struct checkpoint c;
	enum smr_rc rc;

	checkpoint_init(&c);
	rc = checkpoint_from_json(doc, &c, err);
	checkpoint_release(&c);
	json_decref(doc);
	return rc;
}

static json_t *strings(size_t n, size_t len)
{
	json_t *a = json_array();
	char *s = malloc(len + 1);

	memset(s, 'x', len);
	s[len] = '\0';
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(s));
	free(s);
	return a;
}

TEST(checkpoint_limits_name_the_limit)
{
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(from_doc(json_pack("{s:o}", "decisions", strings(CHECKPOINT_MAX_ITEMS, 1)), &err),
		  SMR_OK);
	CHECK_INT(from_doc(json_pack("{s:o}", "decisions", strings(CHECKPOINT_MAX_ITEMS + 1, 1)),
			   &err), SMR_ETOOBIG);
	CHECK_STR(err.msg, "'decisions' has 1001 items; a list may have at most 1000");
	CHECK_INT(from_doc(json_pack("{s:o}", "tasks", strings(1, CHECKPOINT_MAX_ITEM_CHARS)), &err),
		  SMR_OK);
	CHECK_INT(from_doc(json_pack("{s:o}", "tasks", strings(2, CHECKPOINT_MAX_ITEM_CHARS + 1)),
			   &err), SMR_ETOOBIG);
	CHECK_STR(err.msg, "tasks[0] has 10001 characters; an item may have at most 10000");
	/* every string of an item counts, not only its text */
	CHECK_INT(from_doc(json_pack("{s:[{s:s, s:o}]}", "entities", "name", "e", "tags",
				     strings(2, 5000)), &err), SMR_ETOOBIG);
}

/* n artifacts whose content is len copies of ch. */
static json_t *artifacts(size_t n, size_t len, char ch)
{
	json_t *a = json_array();
	char *s = malloc(len + 1);

	memset(s, ch, len);
	s[len] = '\0';
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "name", "a", "content", s));
	free(s);
	return a;
}

/*
 * The whole checkpoint's limit is on its canonical JSON, escapes counted
 * as written: a newline is two bytes there, a letter one.
 */
TEST(checkpoint_limit_in_bytes_counts_the_json)
{
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(from_doc(json_pack("{s:o}", "artifacts", artifacts(4, 1000000, 'x')), &err),
		  SMR_OK);
	CHECK_INT(from_doc(json_pack("{s:o}", "artifacts", artifacts(5, 900000, 'x')), &err),
		  SMR_ETOOBIG);
	CHECK(strstr(err.msg, "the checkpoint is 45") == err.msg);
	CHECK(strstr(err.msg, "bytes as JSON; at most 4194304 bytes (4 MiB)") != NULL);
	/* 2 MB as JSON, though six bytes a character would be too many */
	CHECK_INT(from_doc(json_pack("{s:o}", "artifacts", artifacts(1, 1000000, '\n')), &err),
		  SMR_OK);
	CHECK_INT(from_doc(json_pack("{s:o}", "artifacts", artifacts(3, 700000, '\n')), &err),
		  SMR_ETOOBIG);
	CHECK(strstr(err.msg, "the checkpoint is 42") == err.msg);
}

/*
 * A patch's limit counts the items it shares with its sealed parent from
 * their kept texts: an undercount there would let a checkpoint past 4 MiB.
 */
TEST(checkpoint_limit_holds_for_a_patch_counted_from_kept_texts)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint base, out;
	json_t *doc = json_pack("{s:o}", "artifacts", artifacts(4, 1000000, 'x'));
	json_t *patch, *changes = NULL;
	char *big = malloc(300001);

	checkpoint_init(&base);
	CHECK_INT(checkpoint_from_json(doc, &base, &err), SMR_OK);
	checkpoint_seal(&base);
	CHECK(base.texts != NULL);
	memset(big, 'x', 300000);
	big[300000] = '\0';
	for (size_t len = 300000; ; len = 100000) {
		big[len] = '\0';
		patch = json_pack("{s:{s:[{s:s, s:s}]}}", "add", "artifacts", "name", "b",
				  "content", big);
		checkpoint_init(&out);
		err = (struct smr_err)SMR_ERR_INIT;
		CHECK_INT(patch_apply(&base, patch, &out, &changes, &err),
			  len == 300000 ? SMR_ETOOBIG : SMR_OK);
		if (len == 300000)
			CHECK(strstr(err.msg, "the checkpoint is 43") == err.msg);
		json_decref(changes);
		changes = NULL;
		json_decref(patch);
		checkpoint_release(&out);
		if (len == 100000)
			break;
	}
	free(big);
	json_decref(doc);
	checkpoint_release(&base);
}

/* A checkpoint with n decisions "PREFIX0", "PREFIX1", ... (init'ed; caller releases). */
static void with_decisions(struct checkpoint *c, size_t n, const char *prefix)
{
	char text[32];

	checkpoint_init(c);
	for (size_t i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%s%zu", prefix, i);
		json_array_append_new(c->decisions, json_pack("{s:s}", "text", text));
	}
}

/* Patches and merges build checkpoints without checkpoint_from_json: the limits hold there too. */
TEST(checkpoint_limits_hold_for_patches_and_merges)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint base, ours, theirs, out;
	json_t *patch, *changes = NULL, *conflicts = NULL;

	with_decisions(&ours, CHECKPOINT_MAX_ITEMS, "d");
	patch = json_pack("{s:{s:[s]}}", "add", "decision", "one too many");
	checkpoint_init(&out);
	CHECK_INT(patch_apply(&ours, patch, &out, &changes, &err), SMR_ETOOBIG);
	CHECK_STR(err.msg, "'decisions' has 1001 items; a list may have at most 1000");
	json_decref(changes);
	json_decref(patch);
	checkpoint_release(&out);

	/* each side within the limit, their union past it */
	with_decisions(&base, 0, "b");
	with_decisions(&theirs, CHECKPOINT_MAX_ITEMS, "t");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, NULL, &out, &conflicts, &err),
		  SMR_ETOOBIG);
	CHECK_STR(err.msg, "'decisions' has 2000 items; a list may have at most 1000");
	json_decref(conflicts);
	checkpoint_release(&out);
	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
}

/* Found by fuzz/ref.c: "+026-12-01" was the year 26, "0622-12-01" printed as "622-...". */
TEST(ref_parse_date_wants_four_digits)
{
	const char *now = "2026-12-03T09:00:00.000000Z";
	char out[32];

	CHECK_INT(ref_parse_date("+026-12-01", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("-026-12-01", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("2026-+1-01", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("2026-12-01 +1:00", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("0622-12-01", now, out, NULL), SMR_EUSAGE);   /* printed "622-..." */
	CHECK_INT(ref_parse_date("2026-12-01", now, out, NULL), SMR_OK);
	CHECK_INT(strlen(out), 27);
	/* fuzz/ref.c again: "1234year.ago" was the year 792, printed short */
	CHECK_INT(ref_parse_date("1234year.ago", now, out, NULL), SMR_OK);
	CHECK_STR(out, "1970-01-01T00:00:00.999999Z");
	CHECK_INT(ref_parse_date("56 years ago", now, out, NULL), SMR_OK);
	CHECK_STR(out, "1970-12-17T09:00:00.999999Z");   /* 365-day years */
	/* fuzz/ref.c: "8374-09-31" was read as the first of October */
	CHECK_INT(ref_parse_date("8374-09-31", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("2026-04-31 12:00", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("2026-02-29", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("2100-02-29", now, out, NULL), SMR_EUSAGE);
	CHECK_INT(ref_parse_date("2028-02-29", now, out, NULL), SMR_OK);
	CHECK_STR(out, "2028-02-29T00:00:00.999999Z");
	CHECK_INT(ref_parse_date("2000-02-29", now, out, NULL), SMR_OK);
	CHECK_INT(ref_parse_date("2026-12-31", now, out, NULL), SMR_OK);
	CHECK_STR(out, "2026-12-31T00:00:00.999999Z");
}
