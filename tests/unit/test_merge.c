/*
 * test_merge.c -- the three-way rules of domain/merge.c as a table (every
 * combination of absent / as in base / changed one way / changed another
 * way on each side, for items of each kind and for the summary), the
 * title (never merged: the merge's own), the resolutions, and a property
 * test over random histories: merge(a, b) and merge(b, a) give the same
 * state with the conflicts mirrored, merging an ancestor changes nothing,
 * and the merge is deterministic.
 */
#include "harness.h"
#include "json_sets.h"

#include "domain/checkpoint.h"
#include "domain/merge.h"

#include <stdlib.h>

/* A side's value: A absent, B as in base, X and Y two different changes; C a conflict. */
static const struct {
	char base, ours, theirs, want;
} rules[] = {
	/* nothing in base */
	{ 'A', 'A', 'A', 'A' }, { 'A', 'X', 'A', 'X' }, { 'A', 'A', 'X', 'X' },
	{ 'A', 'X', 'X', 'X' }, { 'A', 'X', 'Y', 'C' }, { 'A', 'Y', 'X', 'C' },
	{ 'A', 'Y', 'A', 'Y' }, { 'A', 'A', 'Y', 'Y' }, { 'A', 'Y', 'Y', 'Y' },
	/* in base */
	{ 'B', 'B', 'B', 'B' }, { 'B', 'A', 'B', 'A' }, { 'B', 'B', 'A', 'A' },
	{ 'B', 'A', 'A', 'A' }, { 'B', 'X', 'B', 'X' }, { 'B', 'B', 'X', 'X' },
	{ 'B', 'X', 'X', 'X' }, { 'B', 'X', 'Y', 'C' }, { 'B', 'Y', 'X', 'C' },
	{ 'B', 'A', 'X', 'C' }, { 'B', 'X', 'A', 'C' }, { 'B', 'Y', 'B', 'Y' },
	{ 'B', 'B', 'Y', 'Y' }, { 'B', 'A', 'Y', 'C' }, { 'B', 'Y', 'A', 'C' },
	{ 'B', 'Y', 'Y', 'Y' },
};

/* The item of each kind in its three versions (B in base, X and Y changed). */
static const struct {
	const char *field, *b, *x, *y;
} kinds[] = {
	{ "decisions", "{\"text\":\"D\"}", "{\"text\":\"D\",\"why\":\"x\"}",
	  "{\"text\":\"D\",\"why\":\"y\"}" },
	{ "assumptions", "{\"text\":\"S\"}", "{\"text\":\"S\",\"src\":\"x\"}",
	  "{\"text\":\"S\",\"src\":\"y\"}" },
	/* a task's status */
	{ "tasks", "{\"text\":\"T\",\"status\":\"open\"}", "{\"text\":\"T\",\"status\":\"done\"}",
	  "{\"text\":\"T\",\"status\":\"open\",\"owner\":\"y\"}" },
	{ "open_questions", "{\"text\":\"Q\"}", "{\"text\":\"Q\",\"note\":\"x\"}",
	  "{\"text\":\"Q\",\"note\":\"y\"}" },
	{ "entities", "{\"name\":\"E\"}", "{\"name\":\"E\",\"kind\":\"x\"}",
	  "{\"name\":\"E\",\"kind\":\"y\"}" },
	/* an artifact changed by content */
	{ "artifacts", "{\"name\":\"a.md\",\"kind\":\"text\",\"content\":\"b\"}",
	  "{\"name\":\"a.md\",\"kind\":\"text\",\"content\":\"x\"}",
	  "{\"name\":\"a.md\",\"kind\":\"text\",\"content\":\"y\"}" },
	/* the summary: absent is "" */
	{ "summary", "b", "x", "y" },
};

static int is_text(const char *field)
{
	return !strcmp(field, "summary");
}

static const char *version(size_t k, char v)
{
	return v == 'B' ? kinds[k].b : v == 'X' ? kinds[k].x : v == 'Y' ? kinds[k].y : NULL;
}

/* A checkpoint holding version v of kind k (and nothing else); caller releases. */
static void holding(struct checkpoint *c, size_t k, char v)
{
	const char *s = version(k, v);

	checkpoint_init(c);
	if (!s)
		return;
	if (!strcmp(kinds[k].field, "summary"))
		c->summary = strdup(s);
	else
		json_array_append_new(*checkpoint_list_slot(c, kinds[k].field),
				      json_loads(s, 0, NULL));
}

/* Whether out holds version v of kind k. */
static int holds(const struct checkpoint *out, size_t k, char v)
{
	const char *s = version(k, v), *got;
	const json_t *list;
	json_t *want;
	int ok;

	if (is_text(kinds[k].field)) {
		got = out->summary;
		return !strcmp(got ? got : "", s ? s : "");
	}
	list = checkpoint_list(out, kinds[k].field);
	if (!s)
		return json_array_size(list) == 0;
	want = json_loads(s, 0, NULL);
	ok = json_array_size(list) == 1 && json_equal(json_array_get(list, 0), want);
	json_decref(want);
	return ok;
}

static void run_rule(size_t k, size_t r)
{
	struct checkpoint base, ours, theirs, out;
	json_t *conflicts = NULL;
	enum smr_rc rc;

	holding(&base, k, rules[r].base);
	holding(&ours, k, rules[r].ours);
	holding(&theirs, k, rules[r].theirs);
	checkpoint_init(&out);
	rc = checkpoint_merge3(&base, &ours, &theirs, NULL, &out, &conflicts, NULL);
	if (rules[r].want == 'C') {
		CHECK_INT(rc, SMR_ECONFLICT);
		CHECK_INT(json_array_size(conflicts), 1);
		CHECK_STR(json_string_value(json_object_get(json_array_get(conflicts, 0), "field")),
			  kinds[k].field);
	} else {
		CHECK_INT(rc, SMR_OK);
		CHECK_INT(json_array_size(conflicts), 0);
		if (!holds(&out, k, rules[r].want))
			test_fail(__FILE__, __LINE__, "%s: base %c ours %c theirs %c: want %c",
				  kinds[k].field, rules[r].base, rules[r].ours, rules[r].theirs,
				  rules[r].want);
	}
	json_decref(conflicts);
	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
	checkpoint_release(&out);
}

TEST(merge_three_way_table)
{
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++)
			run_rule(k, r);
}

/* A checkpoint titled t (NULL: none) holding one decision; caller releases. */
static void titled(struct checkpoint *c, const char *t)
{
	checkpoint_init(c);
	c->title = t ? strdup(t) : NULL;
	json_array_append_new(c->decisions, json_pack("{s:s}", "text", "D"));
}

/*
 * A title is a checkpoint's own message (a git commit message): whatever
 * the three titles are, the merge never conflicts over them and keeps the
 * title its caller gave it.  Two lines that both moved, each with its own
 * title, used to conflict on every merge.
 */
TEST(merge_never_merges_the_title)
{
	static const char *const v[] = { NULL, "b", "x", "y" };
	struct checkpoint base, ours, theirs, out;
	json_t *conflicts = NULL, *res;
	struct smr_err err = SMR_ERR_INIT;

	for (size_t i = 0; i < 64; i++) {
		titled(&base, v[i % 4]);
		titled(&ours, v[i / 4 % 4]);
		titled(&theirs, v[i / 16]);
		titled(&out, "Merge alt into main");
		CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, NULL, &out, &conflicts, NULL),
			  SMR_OK);
		CHECK_INT(json_array_size(conflicts), 0);
		CHECK_STR(out.title, "Merge alt into main");
		json_decref(conflicts);
		checkpoint_release(&base);
		checkpoint_release(&ours);
		checkpoint_release(&theirs);
		checkpoint_release(&out);
	}
	/* a resolution of the title names nothing that can conflict */
	titled(&base, "b");
	titled(&ours, "x");
	titled(&theirs, "y");
	checkpoint_init(&out);
	res = json_pack("{s:s}", "title", "ours");
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, &err),
		  SMR_EINVAL);
	CHECK(strstr(err.msg, "cannot name the title") != NULL);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
	checkpoint_release(&out);
	/* the caller's title counts in the limits */
	titled(&base, "b");
	titled(&ours, "x");
	titled(&theirs, "y");
	checkpoint_init(&out);
	out.title = malloc(CHECKPOINT_MAX_ITEM_CHARS + 2);
	memset(out.title, 't', CHECKPOINT_MAX_ITEM_CHARS + 1);
	out.title[CHECKPOINT_MAX_ITEM_CHARS + 1] = 0;
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, NULL, &out, &conflicts, &err),
		  SMR_ETOOBIG);
	json_decref(conflicts);
	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
	checkpoint_release(&out);
}

TEST(merge_title_names_both_lines)
{
	char *t = merge_title("trip-alt", "trip");

	CHECK_STR(t, "Merge trip-alt into trip");
	free(t);
}

/* A checkpoint from JSON text; caller releases. */
static void load(struct checkpoint *c, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	checkpoint_init(c);
	CHECK(j != NULL);
	CHECK_INT(checkpoint_from_json(j, c, NULL), SMR_OK);
	json_decref(j);
}

TEST(merge_resolutions)
{
	struct checkpoint base, ours, theirs, out;
	json_t *conflicts = NULL, *res;
	struct smr_err err = SMR_ERR_INIT;

	load(&base, "{\"summary\":\"t\",\"decisions\":[\"keep\"],\"tasks\":[\"T\"]}");
	load(&ours, "{\"summary\":\"ours\",\"decisions\":[\"keep\",\"o\"],"
		    "\"tasks\":[{\"text\":\"T\",\"status\":\"done\"}]}");
	load(&theirs, "{\"summary\":\"theirs\",\"decisions\":[\"keep\",\"t\"],\"tasks\":[]}");

	/* two conflicts: the summary, and task T done here but dropped there */
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, NULL, &out, &conflicts, &err),
		  SMR_ECONFLICT);
	CHECK_INT(json_array_size(conflicts), 2);
	CHECK(strstr(err.msg, "2 conflicts: summary, tasks 'T'") != NULL);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* all ours */
	res = json_pack("{s:s}", "*", "ours");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, NULL), SMR_OK);
	CHECK_STR(out.summary, "ours");
	CHECK_INT(json_array_size(out.decisions), 3);     /* keep, o, t */
	CHECK_INT(json_array_size(out.tasks), 1);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* one by one, with singular field names */
	res = json_pack("{s:s, s:{s:s}}", "summary", "theirs", "task", "T", "theirs");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, NULL), SMR_OK);
	CHECK_STR(out.summary, "theirs");
	CHECK_INT(json_array_size(out.tasks), 0);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* half resolved: the rest is still a conflict */
	res = json_pack("{s:s}", "summary", "ours");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, NULL),
		  SMR_ECONFLICT);
	CHECK_INT(json_array_size(conflicts), 1);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* a resolution of something not in conflict, or of an unknown side, is refused */
	res = json_pack("{s:s, s:{s:s}, s:{s:s}}", "summary", "ours", "tasks", "T", "ours",
			"decisions", "keep", "ours");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, &err),
		  SMR_EINVAL);
	CHECK(strstr(err.msg, "decisions 'keep', which is not in conflict") != NULL);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);
	res = json_pack("{s:s}", "*", "mine");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, NULL),
		  SMR_EINVAL);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
}

/* A resolution may edit a conflicting value instead of picking a side; a bad edit is refused. */
TEST(merge_resolution_edits_an_item)
{
	struct checkpoint base, ours, theirs, out;
	json_t *conflicts = NULL, *res;
	struct smr_err err = SMR_ERR_INIT;

	load(&base, "{\"summary\":\"t\",\"tasks\":[\"T\"]}");
	load(&ours, "{\"summary\":\"ours\",\"tasks\":[{\"text\":\"T\",\"status\":\"done\"}]}");
	load(&theirs, "{\"summary\":\"theirs\",\"tasks\":[]}");

	res = json_loads("{\"summary\":{\"edit\":\"both\"},"
			 "\"tasks\":{\"T\":{\"edit\":\"T, later\"}}}", 0, NULL);
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, &err), SMR_OK);
	CHECK_STR(out.summary, "both");
	CHECK_INT(json_array_size(out.tasks), 1);
	/* normalised as any task: a string becomes an open task */
	CHECK_STR(json_string_value(json_object_get(json_array_get(out.tasks, 0), "text")),
		  "T, later");
	CHECK_STR(json_string_value(json_object_get(json_array_get(out.tasks, 0), "status")),
		  "open");
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* an edit to null drops the item */
	res = json_loads("{\"summary\":\"ours\",\"tasks\":{\"T\":{\"edit\":null}}}", 0, NULL);
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, &err), SMR_OK);
	CHECK_INT(json_array_size(out.tasks), 0);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* a summary edited to a number, a task to an empty one: refused */
	res = json_loads("{\"summary\":{\"edit\":3},\"tasks\":{\"T\":\"ours\"}}", 0, NULL);
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, &err),
		  SMR_EINVAL);
	CHECK(strstr(err.msg, "edited summary must be a string") != NULL);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);
	res = json_loads("{\"summary\":\"ours\",\"tasks\":{\"T\":{\"edit\":{\"text\":\"\"}}}}",
			 0, NULL);
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &ours, &theirs, res, &out, &conflicts, &err),
		  SMR_EINVAL);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
}

/*
 * The canonical text of c's state, for comparing two of them: its content
 * without the title (a merge's title is its own, never a side's); caller
 * frees.
 */
static char *content(const struct checkpoint *c)
{
	struct checkpoint copy;
	char *s;

	checkpoint_init(&copy);
	checkpoint_copy_content(&copy, c);
	free(copy.title);
	copy.title = NULL;
	s = checkpoint_canonical(&copy);
	checkpoint_release(&copy);
	return s;
}

/*
 * Found by fuzz/merge.c (input fuzz/corpus/merge/duplicate-items): a list
 * may hold two items of the same text, and a merge matched only the first,
 * so merging an ancestor lost theirs' second "t2" (merge(a, a, b) was not
 * b) and merge(base, a, a) turned a's second copy into its first.
 */
TEST(merge_keeps_items_of_the_same_text_apart)
{
	struct checkpoint base, a, b, out;
	json_t *conflicts = NULL, *res;
	char *want, *got;

	load(&base, "{\"decisions\":[\"a\",\"b\"],\"tasks\":[\"t1\",\"t2\"]}");
	load(&a, "{\"decisions\":[\"a\",\"b\"],\"tasks\":[\"t1\",\"t2\"]}");
	load(&b, "{\"decisions\":[\"b\"],\"tasks\":[{\"text\":\"t2\",\"status\":\"done\"},"
		 "\"t2\"]}");

	/* an ancestor merged: the other side, both copies of t2 */
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&a, &a, &b, NULL, &out, &conflicts, NULL), SMR_OK);
	CHECK_INT(json_array_size(out.tasks), 2);
	json_decref(conflicts);
	checkpoint_release(&out);
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&a, &b, &a, NULL, &out, &conflicts, NULL), SMR_OK);
	want = content(&b);
	got = content(&out);
	CHECK_STR(got, want);
	free(got);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* merge(base, b, b) = b: the second t2 stays open */
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &b, &b, NULL, &out, &conflicts, NULL), SMR_OK);
	got = content(&out);
	CHECK_STR(got, want);
	free(got);
	free(want);
	json_decref(conflicts);
	checkpoint_release(&out);

	/* one resolution entry settles both copies' conflicts */
	checkpoint_release(&a);
	load(&a, "{\"decisions\":[\"a\",\"b\"],\"tasks\":[\"t1\",{\"text\":\"t2\",\"note\":\"x\"},"
		 "{\"text\":\"t2\",\"note\":\"y\"}]}");
	checkpoint_release(&base);
	load(&base, "{\"tasks\":[\"t2\",{\"text\":\"t2\",\"note\":\"z\"}]}");
	res = json_pack("{s:{s:s}}", "tasks", "t2", "theirs");
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &a, &b, NULL, &out, &conflicts, NULL), SMR_ECONFLICT);
	CHECK_INT(json_array_size(conflicts), 2);
	json_decref(conflicts);
	checkpoint_release(&out);
	checkpoint_init(&out);
	CHECK_INT(checkpoint_merge3(&base, &a, &b, res, &out, &conflicts, NULL), SMR_OK);
	want = content(&b);
	got = content(&out);
	CHECK(strstr(got, "\"tasks\":[{\"status\":\"open\",\"text\":\"t1\"},"
		     "{\"status\":\"done\",\"text\":\"t2\"},"
		     "{\"status\":\"open\",\"text\":\"t2\"}]") != NULL);
	free(want);
	free(got);
	json_decref(res);
	json_decref(conflicts);
	checkpoint_release(&out);

	checkpoint_release(&base);
	checkpoint_release(&a);
	checkpoint_release(&b);
}

/* ---- property test over random histories ---- */

static unsigned long long rng_state;
static int with_conflicts, clean;       /* the property test covers both */

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng_state >> 33) % n);
}

static const char *const words[] = { "alpha", "beta", "gamma", "delta", "eps", "zeta" };

/*
 * One random edit of c: add, drop or change an item, or change the summary
 * or the title (which the merge leaves to its caller).
 */
static void mutate(struct checkpoint *c)
{
	static const char *const lists[] = { "decisions", "tasks", "artifacts" };
	const char *field = lists[rnd(3)];
	json_t *list = *checkpoint_list_slot(c, field), *item;
	const char *w = words[rnd(6)];
	const char *key = checkpoint_item_key(field);
	size_t n = json_array_size(list), i;

	switch (rnd(4)) {
	case 0:                               /* add (if not there) */
		json_array_foreach(list, i, item)
			if (!strcmp(json_string_value(json_object_get(item, key)), w))
				return;
		if (!strcmp(field, "artifacts"))
			item = json_pack("{s:s, s:s, s:s}", "name", w, "kind", "text", "content", w);
		else if (!strcmp(field, "tasks"))
			item = json_pack("{s:s, s:s}", "text", w, "status", "open");
		else
			item = json_pack("{s:s}", "text", w);
		json_array_append_new(list, item);
		return;
	case 1:                               /* drop */
		if (n)
			json_array_remove(list, rnd((unsigned)n));
		return;
	case 2:                               /* change: status, content, or an extra */
		if (!n)
			return;
		item = json_array_get(list, rnd((unsigned)n));
		if (!strcmp(field, "tasks"))
			json_object_set_new(item, "status", json_string(
				!strcmp(json_string_value(json_object_get(item, "status")), "done") ?
				"open" : "done"));
		else if (!strcmp(field, "artifacts"))
			json_object_set_new(item, "content", json_string(words[rnd(6)]));
		else
			json_object_set_new(item, "note", json_string(words[rnd(6)]));
		return;
	default:
		free(c->summary);
		c->summary = strdup(words[rnd(6)]);
		free(c->title);
		c->title = strdup(words[rnd(6)]);
	}
}

static void derive(struct checkpoint *out, const struct checkpoint *from, int edits)
{
	checkpoint_init(out);
	checkpoint_copy_content(out, from);
	for (int i = 0; i < edits; i++)
		mutate(out);
}

/* The state of c (the title is not state) with every list as a set; new reference. */
static json_t *state_set(const struct checkpoint *c)
{
	json_t *o = json_pack("{s:s}", "summary", c->summary ? c->summary : "");

	for (size_t i = 0; checkpoint_list_fields[i]; i++)
		json_object_set_new(o, checkpoint_list_fields[i],
				    json_as_set(checkpoint_list(c, checkpoint_list_fields[i])));
	return o;
}

static char *merged_text(const struct checkpoint *b, const struct checkpoint *o,
			 const struct checkpoint *t, const json_t *res, enum smr_rc *rc,
			 json_t **conflicts)
{
	struct checkpoint out;
	char *s;

	checkpoint_init(&out);
	*rc = checkpoint_merge3(b, o, t, res, &out, conflicts, NULL);
	s = checkpoint_canonical(&out);
	checkpoint_release(&out);
	return s;
}

static void one_history(void)
{
	struct checkpoint base, a, b, a2, out_ab, out_ba;
	json_t *c_ab = NULL, *c_ba = NULL, *s1, *s2, *m, *ours, *theirs;
	enum smr_rc rc_ab, rc_ba, rc;
	char *t1, *t2;

	checkpoint_init(&base);
	derive(&a, &base, 8);                   /* a common history... */
	checkpoint_release(&base);
	base = a;
	derive(&a, &base, (int)rnd(5));         /* ...and two lines from it */
	derive(&b, &base, (int)rnd(5));

	/* symmetric: same state (lists as sets), conflicts mirrored */
	checkpoint_init(&out_ab);
	checkpoint_init(&out_ba);
	rc_ab = checkpoint_merge3(&base, &a, &b, NULL, &out_ab, &c_ab, NULL);
	rc_ba = checkpoint_merge3(&base, &b, &a, NULL, &out_ba, &c_ba, NULL);
	CHECK_INT(rc_ab, rc_ba);
	with_conflicts += rc_ab == SMR_ECONFLICT;
	clean += rc_ab == SMR_OK;
	m = conflicts_mirrored(c_ab);
	s1 = json_as_set(c_ba);
	CHECK(json_equal(m, s1));
	json_decref(m);
	json_decref(s1);
	if (!rc_ab) {
		s1 = state_set(&out_ab);
		s2 = state_set(&out_ba);
		CHECK(json_equal(s1, s2));
		json_decref(s1);
		json_decref(s2);
	}
	/* ours on one side is theirs on the other */
	ours = json_pack("{s:s}", "*", "ours");
	theirs = json_pack("{s:s}", "*", "theirs");
	checkpoint_release(&out_ab);
	checkpoint_release(&out_ba);
	checkpoint_init(&out_ab);
	checkpoint_init(&out_ba);
	json_decref(c_ab);
	json_decref(c_ba);
	CHECK_INT(checkpoint_merge3(&base, &a, &b, ours, &out_ab, &c_ab, NULL), SMR_OK);
	CHECK_INT(checkpoint_merge3(&base, &b, &a, theirs, &out_ba, &c_ba, NULL), SMR_OK);
	s1 = state_set(&out_ab);
	s2 = state_set(&out_ba);
	CHECK(json_equal(s1, s2));
	json_decref(s1);
	json_decref(s2);

	json_decref(c_ab);
	json_decref(c_ba);

	/* deterministic */
	t1 = merged_text(&base, &a, &b, ours, &rc, &c_ab);
	t2 = merged_text(&base, &a, &b, ours, &rc, &c_ba);
	CHECK_STR(t1, t2);
	free(t1);
	free(t2);
	json_decref(c_ab);
	json_decref(c_ba);

	/* merging an ancestor (which is then the merge base) never changes state */
	derive(&a2, &a, (int)rnd(4));
	t1 = merged_text(&a, &a2, &a, NULL, &rc, &c_ab);
	CHECK_INT(rc, SMR_OK);
	t2 = content(&a2);
	CHECK_STR(t1, t2);
	free(t1);
	free(t2);
	t1 = merged_text(&a, &a, &a2, NULL, &rc, &c_ba);   /* and the other way: a2's state */
	CHECK_INT(rc, SMR_OK);
	t2 = content(&a2);
	CHECK_STR(t1, t2);
	free(t1);
	free(t2);

	json_decref(ours);
	json_decref(theirs);
	json_decref(c_ab);
	json_decref(c_ba);
	checkpoint_release(&out_ab);
	checkpoint_release(&out_ba);
	checkpoint_release(&base);
	checkpoint_release(&a);
	checkpoint_release(&a2);
	checkpoint_release(&b);
}

TEST(merge_properties_over_random_histories)
{
	rng_state = 12;
	for (int i = 0; i < 500; i++)
		one_history();
	CHECK(with_conflicts > 50);
	CHECK(clean > 50);
}
