/*
 * merge.c -- fuzz target: three-way merge (domain/merge.h) with its
 * resolution document, and patches (domain/patch.h), the two ways a
 * caller's JSON reshapes a Checkpoint's state.
 *
 * The input is lines: base, ours, theirs (checkpoint JSON, each validated
 * as any write is; "null" or an invalid line is no base / an empty state),
 * a resolution and a patch.  Properties, those of the unit tests' random
 * histories (tests/unit/test_merge.c) on states nobody generated:
 *  - the fuzzed resolution: SMR_OK, SMR_ECONFLICT (with conflicts) or
 *    SMR_EINVAL, each with a message; a merged state reads back from its
 *    JSON to the same canonical form (or is refused only for a limit);
 *  - the title is never merged: no conflict names it, and a merge keeps
 *    the title its caller gave it (the merge's own, as a commit message),
 *    so the state compared below is everything but the title;
 *  - merge(base, a, a) = a, and merging an ancestor changes nothing:
 *    merge(a, a, b) = b and merge(a, b, a) = b (lists compared as sets,
 *    since a merge keeps ours' order);
 *  - symmetry: merge(base, a, b) and merge(base, b, a) agree on the result
 *    and on the conflicts, mirrored; {"*": "ours"} one way equals
 *    {"*": "theirs"} the other way, and always succeeds;
 *  - determinism: the same merge twice gives the same bytes;
 *  - the patch applied to ours: an error has a message; a result is a
 *    valid state, and merge(ours, ours, patched) = patched.
 */
#include "fuzz.h"
#include "../tests/unit/json_sets.h"

#include "domain/checkpoint.h"
#include "domain/merge.h"
#include "domain/patch.h"

#include <jansson.h>

/* Line i of the input into c; 0 when it held no checkpoint (c stays empty). */
static int read_state(const char *line, size_t len, struct checkpoint *c)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	int ok = 0;

	checkpoint_init(c);
	if (json_is_object(doc)) {
		ok = checkpoint_from_json(doc, c, &err) == SMR_OK;
		if (!ok) {
			checkpoint_release(c);
			checkpoint_init(c);
		}
	}
	json_decref(doc);
	return ok;
}

/* c's state (summary, lists; as sets unless ordered; not the title); new reference. */
static json_t *state(const struct checkpoint *c, int ordered)
{
	json_t *o = json_pack("{s:s}", "summary", c->summary ? c->summary : "");

	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		const json_t *l = checkpoint_list(c, checkpoint_list_fields[i]);

		json_object_set_new(o, checkpoint_list_fields[i],
				    !ordered ? json_as_set(l) : l ? json_deep_copy(l) : json_array());
	}
	return o;
}

static void check_same_state(const struct checkpoint *x, const struct checkpoint *y,
			     int ordered, const char *what)
{
	json_t *a = state(x, ordered), *b = state(y, ordered);

	if (!json_equal(a, b)) {
		char *sa = json_dumps(a, JSON_COMPACT), *sb = json_dumps(b, JSON_COMPACT);

		fprintf(stderr, "%s:\n%s\n%s\n", what, sa, sb);
		free(sa);
		free(sb);
		abort();
	}
	json_decref(a);
	json_decref(b);
}

#define MERGE_TITLE "Merge theirs into ours"

/* The merge's return code; *out holds the state when it is SMR_OK. */
static enum smr_rc merge(const struct checkpoint *base, const struct checkpoint *ours,
			 const struct checkpoint *theirs, const json_t *res,
			 struct checkpoint *out, json_t **conflicts)
{
	struct smr_err err = SMR_ERR_INIT;
	enum smr_rc rc;
	json_t *c;
	size_t i;

	checkpoint_init(out);
	out->title = strdup(MERGE_TITLE);   /* the caller's, as ops_merge gives it */
	*conflicts = NULL;
	rc = checkpoint_merge3(base, ours, theirs, res, out, conflicts, &err);
	FUZZ_CHECK(rc == SMR_OK || rc == SMR_ECONFLICT || rc == SMR_EINVAL);
	FUZZ_CHECK(rc == SMR_OK || err.msg[0]);
	FUZZ_CHECK(rc != SMR_ECONFLICT || json_array_size(*conflicts) > 0);
	FUZZ_CHECK(rc != SMR_OK || !strcmp(out->title, MERGE_TITLE));
	json_array_foreach(*conflicts, i, c)
		FUZZ_CHECK(strcmp(json_string_value(json_object_get(c, "field")), "title"));
	return rc;
}

/* A merged state is one a write would accept again: same canonical form from its JSON. */
static void check_rereads(const struct checkpoint *c)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint back;
	json_t *doc = checkpoint_to_json(c);
	char *text = json_dumps(doc, JSON_COMPACT), *c1, *c2;
	json_t *again = json_loads(text, 0, NULL);
	enum smr_rc rc;

	FUZZ_CHECK(again);
	checkpoint_init(&back);
	rc = checkpoint_from_json(again, &back, &err);
	if (rc && rc != SMR_ETOOBIG)
		fprintf(stderr, "a merged state is refused: %s\n%s\n", err.msg, text);
	FUZZ_CHECK(rc == SMR_OK || rc == SMR_ETOOBIG);
	if (!rc) {
		c1 = checkpoint_canonical(c);
		c2 = checkpoint_canonical(&back);
		FUZZ_CHECK(!strcmp(c1, c2));
		free(c1);
		free(c2);
	}
	checkpoint_release(&back);
	json_decref(again);
	json_decref(doc);
	free(text);
}

static void check_identities(const struct checkpoint *base, const struct checkpoint *a,
			     const struct checkpoint *b)
{
	struct checkpoint out, out2;
	json_t *c1, *c2, *m, *s;
	json_t *ours = json_pack("{s:s}", "*", "ours"), *theirs = json_pack("{s:s}", "*", "theirs");
	enum smr_rc rc1, rc2;
	char *t1, *t2;

	/* merge(base, a, a) = a */
	FUZZ_CHECK(merge(base, a, a, NULL, &out, &c1) == SMR_OK);
	check_same_state(&out, a, 1, "merge(base, a, a) is not a");
	checkpoint_release(&out);
	json_decref(c1);
	/* an ancestor merged either way: the other side's state */
	FUZZ_CHECK(merge(a, a, b, NULL, &out, &c1) == SMR_OK);
	check_same_state(&out, b, 0, "merge(a, a, b) is not b");
	checkpoint_release(&out);
	json_decref(c1);
	FUZZ_CHECK(merge(a, b, a, NULL, &out, &c1) == SMR_OK);
	check_same_state(&out, b, 1, "merge(a, b, a) is not b");
	checkpoint_release(&out);
	json_decref(c1);
	/* symmetry */
	rc1 = merge(base, a, b, NULL, &out, &c1);
	rc2 = merge(base, b, a, NULL, &out2, &c2);
	FUZZ_CHECK(rc1 == rc2);
	m = conflicts_mirrored(c1);
	s = json_as_set(c2);
	FUZZ_CHECK(json_equal(m, s));
	json_decref(m);
	json_decref(s);
	if (rc1 == SMR_OK) {
		check_same_state(&out, &out2, 0, "merge(base, a, b) is not merge(base, b, a)");
		check_rereads(&out);
	}
	checkpoint_release(&out);
	checkpoint_release(&out2);
	json_decref(c1);
	json_decref(c2);
	FUZZ_CHECK(merge(base, a, b, ours, &out, &c1) == SMR_OK);
	FUZZ_CHECK(merge(base, b, a, theirs, &out2, &c2) == SMR_OK);
	check_same_state(&out, &out2, 0, "ours one way is not theirs the other");
	/* deterministic */
	t1 = checkpoint_canonical(&out);
	checkpoint_release(&out);
	json_decref(c1);
	FUZZ_CHECK(merge(base, a, b, ours, &out, &c1) == SMR_OK);
	t2 = checkpoint_canonical(&out);
	FUZZ_CHECK(!strcmp(t1, t2));
	free(t1);
	free(t2);
	checkpoint_release(&out);
	checkpoint_release(&out2);
	json_decref(c1);
	json_decref(c2);
	json_decref(ours);
	json_decref(theirs);
}

static void check_patch(const struct checkpoint *ours, const json_t *patch)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint out, merged;
	json_t *changes = NULL, *conflicts;
	enum smr_rc rc;
	char *desc;

	checkpoint_init(&out);
	rc = patch_apply(ours, patch, &out, &changes, &err);
	if (rc) {
		FUZZ_CHECK(err.msg[0]);
	} else {
		FUZZ_CHECK(json_is_object(changes));
		desc = patch_describe(changes);
		FUZZ_CHECK(desc);
		free(desc);
		check_rereads(&out);
		FUZZ_CHECK(merge(ours, ours, &out, NULL, &merged, &conflicts) == SMR_OK);
		check_same_state(&merged, &out, 0, "merge(a, a, patched) is not patched");
		checkpoint_release(&merged);
		json_decref(conflicts);
	}
	json_decref(changes);
	checkpoint_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	const char *line[5] = { "", "", "", "", "" };
	size_t len[5] = { 0 };
	struct checkpoint base, ours, theirs, out;
	json_t *res, *patch, *conflicts;
	int has_base;

	for (int i = 0; i < 5 && p < end; i++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		line[i] = p;
		len[i] = nl ? (size_t)(nl - p) : (size_t)(end - p);
		p = nl ? nl + 1 : end;
	}
	has_base = read_state(line[0], len[0], &base);
	read_state(line[1], len[1], &ours);
	read_state(line[2], len[2], &theirs);
	res = json_loadb(line[3], len[3], JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	patch = json_loadb(line[4], len[4], JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);

	/* the resolution as given */
	if (res && merge(has_base ? &base : NULL, &ours, &theirs, res, &out, &conflicts) == SMR_OK)
		check_rereads(&out);
	if (res) {
		checkpoint_release(&out);
		json_decref(conflicts);
	}
	check_identities(has_base ? &base : NULL, &ours, &theirs);
	if (patch)
		check_patch(&ours, patch);

	json_decref(res);
	json_decref(patch);
	checkpoint_release(&base);
	checkpoint_release(&ours);
	checkpoint_release(&theirs);
	return 0;
}
