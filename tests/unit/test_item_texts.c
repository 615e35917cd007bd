/*
 * test_item_texts.c -- domain/item_texts.c: a checkpoint sealed from its
 * items' kept texts has the hash the whole canonical form gives, for
 * awkward content and along chains of patches that share items; the lists
 * a store writes are jansson's; a patch that marks a task done leaves the
 * checkpoint it was made from as it was.
 */
#include "harness.h"

#include "domain/checkpoint.h"
#include "domain/item_texts.h"
#include "domain/patch.h"

#include <stdlib.h>

/* The hash of c written whole, the way fsck recomputes it. */
static void check_hash(const struct checkpoint *c)
{
	char whole[HASH_HEX_LEN + 1];

	checkpoint_compute_hash(c, whole);
	CHECK_STR(c->hash, whole);
}

/* Each list of c, put together from its texts, is what jansson writes. */
static void check_stored(const struct checkpoint *c)
{
	const json_t *list;
	char *want;

	for (size_t f = 0; checkpoint_list_fields[f]; f++) {
		struct buf b = BUF_INIT(0);

		list = checkpoint_list(c, checkpoint_list_fields[f]);
		want = json_dumps(list, ITEM_TEXTS_STORED);
		CHECK_INT(item_texts_list(c->texts, list, 0, &b), 0);
		CHECK_STR(b.ptr, want);
		free(want);
		buf_release(&b);
	}
}

/* A checkpoint holding exactly the JSON of text: no normalising, keys in any order. */
static void raw(struct checkpoint *c, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	json_t **slot;

	CHECK(j != NULL);
	checkpoint_init(c);
	for (size_t f = 0; checkpoint_list_fields[f]; f++) {
		slot = checkpoint_list_slot(c, checkpoint_list_fields[f]);
		if (json_object_get(j, checkpoint_list_fields[f])) {
			json_decref(*slot);
			*slot = json_incref(json_object_get(j, checkpoint_list_fields[f]));
		}
	}
	if (json_object_get(j, "metadata")) {
		json_decref(c->metadata);
		c->metadata = json_incref(json_object_get(j, "metadata"));
	}
	json_decref(j);
}

TEST(item_texts_seal_hashes_as_the_whole_canonical_form)
{
	struct checkpoint c;

	raw(&c, "{\"tasks\":[{\"text\":\"t\\u00e9 \\\"q\\\" \\\\ / \\u0001\\n\",\"status\":\"open\","
		"\"zeta\":1.5,\"alpha\":[1,2.25,{\"b\":null,\"a\":true}]}],"
		"\"decisions\":[{\"text\":\"\\u2713 \\ud83d\\ude00\"},{\"text\":\"plain\"}],"
		"\"artifacts\":[{\"name\":\"a.md\",\"kind\":\"text\",\"content\":\"x\\ty\"}],"
		/* keys in order at every depth (one text serves both forms), reals among them */
		"\"entities\":[{\"a\":0.1,\"ab\":{\"c\":1e-7,\"d\":[3.0,-0.0,1e300]},\"name\":\"x\"},"
		"{\"ab\":1,\"a\":2},{\"a\":[{\"b\":1,\"a\":0}],\"b\":1}],"
		"\"metadata\":{\"z\":0.1,\"a\":{\"y\":-3,\"x\":\"\\u00ff\"}}}");
	c.title = strdup("A title with \"quotes\" and \xc3\xa9");
	c.summary = NULL;                     /* written as "" */
	c.author = strdup("ada");
	c.created_at = strdup("2026-12-07T03:00:00.000000Z");
	c.parent_hash = strdup("ab");
	c.merge_parent_hash = strdup("cd");
	checkpoint_seal(&c);
	CHECK(c.texts != NULL);
	check_hash(&c);
	check_stored(&c);
	/* sealed again from its own texts, with nothing to write anew */
	checkpoint_seal(&c);
	check_hash(&c);
	checkpoint_release(&c);

	checkpoint_init(&c);                  /* nothing at all */
	checkpoint_seal(&c);
	check_hash(&c);
	checkpoint_release(&c);
}

TEST(item_texts_a_patch_shares_items_and_leaves_its_parent_alone)
{
	struct checkpoint head, out;
	json_t *j = json_loads("{\"title\":\"t\",\"decisions\":[\"a\",\"b\"],"
			       "\"tasks\":[\"Book\",\"Pack\"],\"entities\":[\"Kyoto\"]}", 0, NULL);
	json_t *patch = json_loads("{\"done\":[\"Book\"],\"add\":{\"tasks\":[\"Fly\"]},"
				   "\"drop\":{\"decisions\":[\"a\"]}}", 0, NULL);
	char *before;

	checkpoint_init(&head);
	CHECK_INT(checkpoint_from_json(j, &head, NULL), SMR_OK);
	checkpoint_seal(&head);
	before = checkpoint_content_text(&head);
	checkpoint_init(&out);
	CHECK_INT(patch_apply(&head, patch, &out, NULL, NULL), SMR_OK);
	CHECK(out.texts == head.texts);       /* shared until sealed */
	CHECK(json_array_get(out.entities, 0) == json_array_get(head.entities, 0));
	CHECK(json_array_get(out.tasks, 0) != json_array_get(head.tasks, 0));   /* replaced */
	checkpoint_seal(&out);
	CHECK(out.texts != head.texts);
	check_hash(&out);
	check_stored(&out);
	CHECK_STR(json_string_value(json_object_get(json_array_get(out.tasks, 0), "status")), "done");
	{
		char *after = checkpoint_content_text(&head);

		CHECK_STR(after, before);         /* the parent's task is still open */
		free(after);
	}
	free(before);
	json_decref(j);
	json_decref(patch);
	checkpoint_release(&head);
	checkpoint_release(&out);
}

/*
 * A checkpoint written whole again takes its parent's items where they are
 * the same text at the same place: not the same values with keys in
 * another order, nor 0.0 for -0.0, nor an item moved.  Its hash and lists
 * are what they would have been.
 */
TEST(item_texts_a_write_adopts_the_items_its_parent_has_the_same)
{
	static const char *const child =
		"{\"decisions\":[{\"text\":\"same\"},{\"text\":\"x\",\"n\":0.0},"
		"{\"text\":\"new\"},{\"text\":\"order\",\"b\":1},{\"text\":\"moved\"}],"
		"\"tasks\":[{\"text\":\"t\",\"status\":\"open\"}],"
		"\"entities\":[{\"name\":\"e\",\"meta\":[1,{\"k\":2.5}]}]}";
	struct checkpoint parent, c, plain;

	raw(&parent, "{\"decisions\":[{\"text\":\"same\"},{\"text\":\"x\",\"n\":-0.0},"
		"{\"text\":\"moved\"},{\"b\":1,\"text\":\"order\"}],"
		"\"tasks\":[{\"text\":\"t\",\"status\":\"open\"}],"
		"\"entities\":[{\"name\":\"e\",\"meta\":[1,{\"k\":2.5}]}]}");
	parent.title = strdup("parent");
	checkpoint_seal(&parent);
	raw(&c, child);
	c.title = strdup("child");
	raw(&plain, child);   /* the same checkpoint, made without its parent */
	plain.title = strdup("child");
	checkpoint_adopt_items(&c, &parent);
	CHECK(c.texts == parent.texts);
	CHECK(json_array_get(c.decisions, 0) == json_array_get(parent.decisions, 0));
	CHECK(json_array_get(c.decisions, 1) != json_array_get(parent.decisions, 1));
	CHECK(json_array_get(c.decisions, 2) != json_array_get(parent.decisions, 2));
	CHECK(json_array_get(c.decisions, 3) != json_array_get(parent.decisions, 3));
	CHECK(json_array_get(c.tasks, 0) == json_array_get(parent.tasks, 0));
	CHECK(json_array_get(c.entities, 0) == json_array_get(parent.entities, 0));
	checkpoint_seal(&c);
	checkpoint_seal(&plain);
	check_hash(&c);
	check_stored(&c);
	CHECK_STR(c.hash, plain.hash);
	{
		char *x = checkpoint_content_text(&c), *y = checkpoint_content_text(&plain);
		struct buf bx = BUF_INIT(0), by = BUF_INIT(0);

		CHECK_STR(x, y);
		/* the stored lists too, whose keys keep their order */
		CHECK_INT(item_texts_list(c.texts, c.decisions, 0, &bx), 0);
		CHECK_INT(item_texts_list(plain.texts, plain.decisions, 0, &by), 0);
		CHECK_STR(bx.ptr, by.ptr);
		buf_release(&bx);
		buf_release(&by);
		free(x);
		free(y);
	}
	/* sealed already: nothing more is adopted */
	checkpoint_adopt_items(&plain, &parent);
	CHECK(json_array_get(plain.decisions, 0) != json_array_get(parent.decisions, 0));
	checkpoint_release(&parent);
	checkpoint_release(&c);
	checkpoint_release(&plain);
}

TEST(item_texts_lacking_an_item_writes_nothing)
{
	struct checkpoint c;
	struct buf b = BUF_INIT(0);
	json_t *other = json_pack("[{s:s}]", "text", "not sealed");

	raw(&c, "{\"decisions\":[{\"text\":\"a\"}]}");
	checkpoint_seal(&c);
	buf_adds(&b, "kept");
	CHECK_INT(item_texts_list(c.texts, other, 1, &b), -1);
	CHECK_STR(b.ptr, "kept");
	CHECK_INT(item_texts_list(c.texts, c.decisions, 1, &b), 0);
	CHECK_STR(b.ptr, "kept[{\"text\":\"a\"}]");
	buf_release(&b);
	json_decref(other);
	checkpoint_release(&c);
}

/* A small fixed-seed generator, so a failure repeats. */
static unsigned long long rng = 88172645463325252ull;

static unsigned next(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static json_t *random_text(void)
{
	static const char *const bits[] = {
		"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f", "\xc3\xa9", "\xe2\x9c\x93",
		"\xf0\x9f\x98\x80", "0", "{", "]",
	};
	char s[64] = "";

	for (unsigned i = 0, n = 1 + next(8); i < n; i++)
		strcat(s, bits[next(sizeof(bits) / sizeof(bits[0]))]);
	return json_string(s);
}

static json_t *random_item(unsigned serial)
{
	json_t *o = json_object();
	char text[32];

	snprintf(text, sizeof(text), "item %u", serial);
	/* keys in an order that is not the sorted one, and values of every kind */
	json_object_set_new(o, "text", json_string(text));
	if (next(2))
		json_object_set_new(o, "status", json_string(next(2) ? "open" : "done"));
	if (next(3) == 0)
		json_object_set_new(o, "note", random_text());
	if (next(4) == 0)
		json_object_set_new(o, "weight", json_real((double)next(1000) / 7.0));
	if (next(5) == 0)
		json_object_set_new(o, "b", json_pack("{s:i,s:[b,n]}", "y", (int)next(99), "a",
						      next(2), NULL));
	return o;
}

TEST(item_texts_random_chains_of_changes_hash_as_written_whole)
{
	struct checkpoint cur, next_c;
	json_t **slot, *copy;
	unsigned serial = 0;
	size_t at, n;

	checkpoint_init(&cur);
	for (int step = 0; step < 300; step++) {
		checkpoint_init(&next_c);
		checkpoint_share_content(&next_c, &cur);
		for (int k = 0, changes = 1 + (int)next(4); k < changes; k++) {
			slot = checkpoint_list_slot(&next_c, checkpoint_list_fields[next(6)]);
			n = json_array_size(*slot);
			switch (next(3)) {
			case 0:                        /* add */
				json_array_append_new(*slot, random_item(serial++));
				break;
			case 1:                        /* drop */
				if (n)
					json_array_remove(*slot, next((unsigned)n));
				break;
			default:                       /* replace with a changed copy */
				if (!n)
					break;
				at = next((unsigned)n);
				copy = json_copy(json_array_get(*slot, at));
				json_object_set_new(copy, "note", random_text());
				json_array_set_new(*slot, at, copy);
			}
		}
		if (next(10) == 0) {
			free(next_c.title);
			next_c.title = strdup(next(2) ? "t\xc3\xa9 \"x\"" : "");
		}
		free(next_c.parent_hash);
		next_c.parent_hash = cur.hash ? strdup(cur.hash) : NULL;
		checkpoint_seal(&next_c);
		check_hash(&next_c);
		if (step % 50 == 0)
			check_stored(&next_c);
		checkpoint_release(&cur);
		cur = next_c;
	}
	checkpoint_release(&cur);
}

/* item_texts_render(v, t) is json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY), byte for byte. */
static void check_render(const json_t *v, const struct item_texts *t)
{
	struct buf b = BUF_INIT(0);
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	CHECK_INT(item_texts_render(v, t, &b), 0);
	CHECK_STR(b.ptr, want);
	free(want);
	buf_release(&b);
}

TEST(item_texts_render_writes_what_jansson_writes)
{
	struct checkpoint c;
	json_t *doc, *answer, *mixed, *alone = json_string("alone \"x\""), *none = json_array();

	raw(&c, "{\"tasks\":[{\"text\":\"t\\u00e9 \\\"q\\\" \\n\",\"status\":\"open\",\"w\":0.25}],"
		"\"decisions\":[{\"text\":\"\\u2713\"},{\"text\":\"b\",\"why\":{\"z\":1,\"a\":[null,true]}}],"
		"\"metadata\":{\"z\":0.1,\"a\":\"\\u00ff\"}}");
	c.title = strdup("T\xc3\xa9");
	checkpoint_seal(&c);
	doc = checkpoint_to_json(&c);
	/* an answer around it, keys in no sorted order, as an operation makes it */
	answer = json_pack("{s:O, s:{s:{s:i}}, s:s, s:[i,f,b,n]}", "checkpoint", doc, "changes",
			   "tasks", "added", 1, "changed", "+1 task", "misc", 3, 1.5, 0);
	check_render(answer, c.texts);
	check_render(answer, NULL);
	check_render(json_array_get(c.decisions, 1), c.texts);
	/* a list with an item the texts do not hold is written item by item */
	mixed = json_copy(c.decisions);
	json_array_append_new(mixed, json_pack("{s:s}", "text", "new"));
	check_render(mixed, c.texts);
	check_render(alone, c.texts);
	check_render(none, c.texts);
	json_decref(alone);
	json_decref(none);
	json_decref(mixed);
	json_decref(answer);
	json_decref(doc);
	checkpoint_release(&c);
}
