/*
 * bundle.c -- fuzz target: bundle import (domain/bundle.h), what `smriti
 * import` and the import operation read from a file a stranger may have
 * written.  The input's first byte picks how it is read: odd, the rest is
 * taken as it is (a mutated bundle almost never matches its sha256, so this
 * tries the digest check itself); even, the harness first re-seals it --
 * recomputes every checkpoint's commit_hash (renaming its children's
 * parent references to match) and then the sha256 -- so that the checks
 * behind the digest (types, checkpoint rules, parents first, HEAD, turn
 * order, reflog rows) see the mutations.
 *
 * Properties: a refusal has a code and a message; a bundle that verifies
 * keeps every checkpoint's commit_hash, and its re-export verifies again
 * with the same Spaces and hashes and re-exports to the same bytes (so an
 * export is a fixed point: any mutation is refused or round trips).  A
 * bundle that verifies is also imported (ops_import) into a fresh
 * in-memory store: the import is refused with a message and nothing
 * written, or the store exports those Spaces to exactly the re-exported
 * bytes, a second import adds nothing, and fsck is clean.  Never an
 * internal error.
 */
#include "store.h"

#include "domain/bundle.h"
#include "domain/checkpoint.h"

#include <jansson.h>

/* A string member's value or NULL (borrowed). */
static char *str(const json_t *o, const char *key)
{
	return (char *)json_string_value(json_object_get(o, key));
}

/* old -> new commit_hash renames of one re-seal; small, so a list. */
struct renames {
	char (*from)[65], (*to)[65];
	size_t n, cap;
};

static const char *renamed(const struct renames *r, const char *h)
{
	for (size_t i = 0; h && i < r->n; i++)
		if (!strcmp(r->from[i], h))
			return r->to[i];
	return h;
}

/* Gives ck the commit_hash import will compute for it (as read_checkpoint does). */
static void reseal_checkpoint(json_t *ck, struct renames *r)
{
	static const char *const lists[] = { "decisions", "assumptions", "tasks",
					     "open_questions", "entities", "artifacts" };
	struct checkpoint c = { 0 };
	json_t **slots[] = { &c.decisions, &c.assumptions, &c.tasks, &c.open_questions,
			     &c.entities, &c.artifacts };
	char hash[HASH_HEX_LEN + 1];
	const char *old = str(ck, "commit_hash");

	if (!json_is_object(ck))
		return;
	for (size_t i = 0; i < 2; i++) {
		const char *key = i ? "merge_parent_hash" : "parent_hash";
		const char *p = str(ck, key);

		if (p && renamed(r, p) != p)
			json_object_set_new(ck, key, json_string(renamed(r, p)));
	}
	c.parent_hash = str(ck, "parent_hash");
	c.merge_parent_hash = str(ck, "merge_parent_hash");
	c.title = str(ck, "title");
	c.summary = str(ck, "summary");
	c.author = str(ck, "author");
	c.created_at = str(ck, "created_at");
	c.metadata = json_object_get(ck, "metadata");
	for (size_t i = 0; i < 6; i++) {
		*slots[i] = json_object_get(ck, lists[i]);
		if (!json_is_array(*slots[i]))
			return;
	}
	if (!c.title || !c.summary || !c.author || !c.created_at || !json_is_object(c.metadata))
		return;
	checkpoint_compute_hash(&c, hash);
	if (old && strlen(old) < 65 && strcmp(old, hash)) {
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 8;
			r->from = realloc(r->from, r->cap * sizeof(*r->from));
			r->to = realloc(r->to, r->cap * sizeof(*r->to));
			FUZZ_CHECK(r->from && r->to);
		}
		strcpy(r->from[r->n], old);
		strcpy(r->to[r->n++], hash);
	}
	json_object_set_new(ck, "commit_hash", json_string(hash));
}

/* Re-seals doc in place: every checkpoint's hash, each Space's head, then the sha256. */
static void reseal(json_t *doc)
{
	json_t *spaces = json_object_get(doc, "spaces"), *sp, *ck;
	char digest[65];
	size_t i, j;

	if (!json_is_array(spaces))
		return;
	json_array_foreach(spaces, i, sp) {
		struct renames r = { 0 };
		const char *head = str(sp, "head");

		json_array_foreach(json_object_get(sp, "checkpoints"), j, ck)
			reseal_checkpoint(ck, &r);
		if (head && renamed(&r, head) != head)
			json_object_set_new(sp, "head", json_string(renamed(&r, head)));
		free(r.from);
		free(r.to);
	}
	bundle_digest(spaces, digest);
	json_object_set_new(doc, "sha256", json_string(digest));
}

/* The bundle read back from the compact text of doc; 0 when it verified. */
static int reread(const json_t *doc, char **text, struct space_bundle **v, size_t *n)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *again;
	enum smr_rc rc;

	*text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
	FUZZ_CHECK(*text);
	again = json_loads(*text, JSON_REJECT_DUPLICATES, NULL);
	FUZZ_CHECK(again);
	rc = bundle_from_json(again, v, n, &err);
	if (rc)
		fprintf(stderr, "a re-exported bundle was refused: %s\n", err.msg);
	json_decref(again);
	return rc;
}

static void check_same(const struct space_bundle *a, size_t na, const struct space_bundle *b,
		       size_t nb)
{
	FUZZ_CHECK(na == nb);
	for (size_t i = 0; i < na; i++) {
		FUZZ_CHECK(!strcmp(a[i].space.id, b[i].space.id));
		FUZZ_CHECK(!strcmp(a[i].space.name, b[i].space.name));
		FUZZ_CHECK(!a[i].space.head == !b[i].space.head);
		FUZZ_CHECK(!a[i].space.head || !strcmp(a[i].space.head, b[i].space.head));
		FUZZ_CHECK(a[i].n_checkpoints == b[i].n_checkpoints);
		for (size_t j = 0; j < a[i].n_checkpoints; j++)
			FUZZ_CHECK(!strcmp(a[i].checkpoints[j].hash, b[i].checkpoints[j].hash));
		FUZZ_CHECK(a[i].n_sessions == b[i].n_sessions);
		for (size_t j = 0; j < a[i].n_sessions; j++)
			FUZZ_CHECK(a[i].n_turns[j] == b[i].n_turns[j]);
		FUZZ_CHECK(a[i].n_reflog == b[i].n_reflog);
	}
}

/* 1 when two Spaces of v share an id or a name (an import may then refuse or merge them). */
static int shared_names(const struct space_bundle *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(v[i].space.id, v[j].space.id) ||
			    !strcmp(v[i].space.name, v[j].space.name))
				return 1;
	return 0;
}

/* doc (verified; v its n Spaces, text its re-export) imported into a fresh store. */
static void check_import(const json_t *doc, const struct space_bundle *v, size_t n,
			 const char *text)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	json_t *report = NULL, *out = NULL;
	const char **names = calloc(n + 1, sizeof(*names));
	enum smr_rc rc;
	char *again;

	FUZZ_CHECK(names);
	for (size_t i = 0; i < n; i++)
		names[i] = v[i].space.name;
	fuzz_store_open(&ctx);
	rc = ops_import(ctx, doc, &report, &err);
	if (rc == SMR_EINTERNAL)
		fprintf(stderr, "import: internal error: %s\n", err.msg);
	FUZZ_CHECK(rc != SMR_EINTERNAL);
	FUZZ_CHECK(rc == SMR_OK || err.msg[0]);
	json_decref(report);
	report = NULL;
	if (rc) {
		/* refused: nothing written */
		FUZZ_CHECK(ops_export(ctx, NULL, 0, &out, &err) == SMR_OK);
		FUZZ_CHECK(json_array_size(json_object_get(out, "spaces")) == 0);
	} else if (!shared_names(v, n)) {
		FUZZ_CHECK(ops_export(ctx, names, n, &out, &err) == SMR_OK);
		again = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(17));
		if (strcmp(again, text))
			fprintf(stderr, "the store exports what it imported differently:\n%s\n%s\n",
				text, again);
		FUZZ_CHECK(!strcmp(again, text));
		free(again);
		FUZZ_CHECK(ops_import(ctx, doc, &report, &err) == SMR_OK);
		FUZZ_CHECK(json_integer_value(json_object_get(report, "checkpoints")) == 0);
		fuzz_check_fsck(ctx, "after the import");
	}
	json_decref(report);
	json_decref(out);
	free(names);
	ops_close(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space_bundle *v = NULL, *v1 = NULL, *v2 = NULL;
	size_t n = 0, n1 = 0, n2 = 0, i, j;
	json_t *doc, *export1, *export2, *sp, *ck;
	char *text1, *text2;

	if (!size)
		return 0;
	doc = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return 0;
	if (!(data[0] & 1))
		reseal(doc);
	if (bundle_from_json(doc, &v, &n, &err) != SMR_OK) {
		FUZZ_CHECK(err.code != SMR_OK && err.msg[0]);
		FUZZ_CHECK(!v);
		json_decref(doc);
		return 0;
	}
	/* verified: every checkpoint kept the hash it was written with */
	json_array_foreach(json_object_get(doc, "spaces"), i, sp)
		json_array_foreach(json_object_get(sp, "checkpoints"), j, ck)
			FUZZ_CHECK(!strcmp(v[i].checkpoints[j].hash, str(ck, "commit_hash")));
	export1 = bundle_to_json(v, n);
	FUZZ_CHECK(!reread(export1, &text1, &v1, &n1));
	check_same(v, n, v1, n1);
	export2 = bundle_to_json(v1, n1);
	FUZZ_CHECK(!reread(export2, &text2, &v2, &n2));
	check_same(v1, n1, v2, n2);
	if (strcmp(text1, text2))
		fprintf(stderr, "re-exports differ:\n%s\n%s\n", text1, text2);
	FUZZ_CHECK(!strcmp(text1, text2));
	check_import(doc, v, n, text1);
	free(text1);
	free(text2);
	json_decref(export1);
	json_decref(export2);
	space_bundles_free(v, n);
	space_bundles_free(v1, n1);
	space_bundles_free(v2, n2);
	json_decref(doc);
	return 0;
}
