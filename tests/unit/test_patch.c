/*
 * test_patch.c -- domain/patch.c: what each part of a patch does to the
 * parent's state, naming items by text and by position, the refusals
 * (nothing applied), and the one-line description of a change.
 */
#include "harness.h"

#include "domain/checkpoint.h"
#include "domain/patch.h"

#include <stdlib.h>

static const char parent_json[] =
	"{\"title\":\"Dates fixed\",\"decisions\":[\"Travel 3-10 April\",\"Fly\"],"
	"\"assumptions\":[\"Blossoms early April\"],\"tasks\":[\"Book flights\",\"Pack\"],"
	"\"open_questions\":[\"Ryokan or hotel?\"],\"entities\":[\"Kyoto\"],"
	"\"artifacts\":[{\"name\":\"plan.md\",\"content\":\"v1\"}],\"metadata\":{\"k\":\"v\"}}";

static void load(struct checkpoint *c, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	checkpoint_init(c);
	CHECK(j != NULL);
	CHECK_INT(checkpoint_from_json(j, c, NULL), SMR_OK);
	json_decref(j);
}

/* Applies patch text to the parent; *desc gets the description (caller frees). */
static enum smr_rc apply(const char *patch, struct checkpoint *out, char **desc,
			 struct smr_err *err)
{
	struct checkpoint parent;
	json_t *p = json_loads(patch, 0, NULL), *changes = NULL;
	enum smr_rc rc;

	CHECK(p != NULL);
	load(&parent, parent_json);
	checkpoint_init(out);
	rc = patch_apply(&parent, p, out, &changes, err);
	if (desc)
		*desc = rc ? NULL : patch_describe(changes);
	json_decref(changes);
	json_decref(p);
	checkpoint_release(&parent);
	return rc;
}

static const char *text_at(const json_t *list, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(list, i), key));
}

TEST(patch_carries_the_parent_forward)
{
	struct checkpoint out;
	char *desc = NULL;

	CHECK_INT(apply("{\"title\":\"Flights booked\",\"add\":{\"decision\":[\"Via Helsinki\","
			"\"Window seat\"]},\"done\":[\"Book flights\"]}", &out, &desc, NULL), SMR_OK);
	CHECK_STR(out.title, "Flights booked");
	CHECK_INT(json_array_size(out.decisions), 4);
	CHECK_STR(text_at(out.decisions, 0, "text"), "Travel 3-10 April");
	CHECK_STR(text_at(out.decisions, 3, "text"), "Window seat");
	CHECK_STR(text_at(out.tasks, 0, "status"), "done");
	CHECK_INT(json_array_size(out.open_questions), 1);
	CHECK_INT(json_object_size(out.metadata), 0);     /* not carried */
	CHECK_STR(desc, "+2 decisions, 1 task done, new title");
	free(desc);
	checkpoint_release(&out);
}

/*
 * A list the patch leaves alone is the parent's very list (nothing
 * copied); one it changes is copied first, so the parent keeps its own.
 */
TEST(patch_copies_only_the_lists_it_changes)
{
	struct checkpoint parent, out;
	json_t *p = json_loads("{\"add\":{\"tasks\":[\"Buy yen\"]},\"done\":[\"Pack\"],"
			       "\"drop\":{\"entities\":[\"Kyoto\"]}}", 0, NULL);
	char *before;

	load(&parent, parent_json);
	before = checkpoint_content_text(&parent);
	checkpoint_init(&out);
	CHECK_INT(patch_apply(&parent, p, &out, NULL, NULL), SMR_OK);
	CHECK(out.decisions == parent.decisions);
	CHECK(out.assumptions == parent.assumptions);
	CHECK(out.open_questions == parent.open_questions);
	CHECK(out.artifacts == parent.artifacts);
	CHECK(out.tasks != parent.tasks);
	CHECK(out.entities != parent.entities);
	CHECK_INT(json_array_size(out.tasks), 3);
	CHECK_STR(text_at(out.tasks, 1, "status"), "done");
	CHECK_INT(json_array_size(out.entities), 0);
	/* the parent as it was: two open tasks, its entity */
	char *after = checkpoint_content_text(&parent);

	CHECK_STR(after, before);
	CHECK_STR(text_at(parent.tasks, 1, "status"), "open");
	free(before);
	free(after);
	json_decref(p);
	checkpoint_release(&out);
	checkpoint_release(&parent);
}

TEST(patch_names_items_by_text_or_position)
{
	struct checkpoint out;
	char *desc = NULL;

	/* positions are the parent's, as `smriti show` printed them */
	CHECK_INT(apply("{\"drop\":{\"decisions\":[1],\"questions\":[\"1\"],\"entity\":[\"Kyoto\"]},"
			"\"done\":[\"2\"],\"add\":{\"artifacts\":[{\"name\":\"plan.md\","
			"\"content\":\"v2\"}]}}", &out, &desc, NULL), SMR_OK);
	CHECK_INT(json_array_size(out.decisions), 1);
	CHECK_STR(text_at(out.decisions, 0, "text"), "Fly");
	CHECK_INT(json_array_size(out.open_questions), 0);
	CHECK_INT(json_array_size(out.entities), 0);
	CHECK_STR(text_at(out.tasks, 1, "status"), "done");
	CHECK_INT(json_array_size(out.artifacts), 1);
	CHECK_STR(text_at(out.artifacts, 0, "content"), "v2");
	CHECK_STR(desc, "-1 decision, 1 task done, -1 question, -1 entity, 1 artifact replaced");
	free(desc);
	checkpoint_release(&out);
	/* reopen */
	CHECK_INT(apply("{\"done\":[1]}", &out, NULL, NULL), SMR_OK);
	checkpoint_release(&out);
}

TEST(patch_refusals)
{
	static const struct {
		const char *patch, *msg;
		enum smr_rc rc;
	} bad[] = {
		{ "{\"drop\":{\"decisions\":[\"Nope\"]}}",
		  "no decision 'Nope' in the parent checkpoint (it has 2 decisions)", SMR_EUNPROC },
		{ "{\"drop\":{\"tasks\":[3]}}", "no task at position 3", SMR_EUNPROC },
		{ "{\"drop\":{\"tasks\":[0]}}", "no task at position 0", SMR_EUNPROC },
		{ "{\"done\":[\"Book hotel\"]}", "no task 'Book hotel'", SMR_EUNPROC },
		{ "{\"reopen\":[\"Pack\"]}", "task 'Pack' is already open", SMR_EUNPROC },
		{ "{\"add\":{\"decisions\":[\"Fly\"]}}", "decision 'Fly' is already there",
		  SMR_EUNPROC },
		{ "{\"add\":{\"tasks\":[\"New\",\"New\"]}}", "task 'New' is already there",
		  SMR_EUNPROC },
		{ "{\"drop\":{\"decisions\":[\"Fly\",2]}}", "dropped twice", SMR_EUNPROC },
		{ "{\"drop\":{\"tasks\":[\"Pack\"]},\"done\":[\"Pack\"]}",
		  "task 'Pack' is dropped by this change", SMR_EUNPROC },
		{ "{\"drop\":{\"colours\":[\"red\"]}}", "unknown field 'colours'", SMR_EINVAL },
		{ "{\"add\":{\"decisions\":[\" \"]}}", "non-empty", SMR_EINVAL },
		{ "{\"replace\":true}", "unknown patch field 'replace'", SMR_EINVAL },
		{ "{}", "nothing to change", SMR_EUSAGE },
		{ "{\"metadata\":{}}", "nothing to change", SMR_EUSAGE },
		{ "{\"title\":3}", "'title' must be a string", SMR_EINVAL },
		{ "{\"done\":\"Pack\"}", "'done' must be an array", SMR_EINVAL },
		{ "{\"done\":[1.5]}", "by its text or its position", SMR_EINVAL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct checkpoint out;
		struct smr_err err = SMR_ERR_INIT;

		if (apply(bad[i].patch, &out, NULL, &err) != bad[i].rc)
			test_fail(__FILE__, __LINE__, "%s: wrong code", bad[i].patch);
		if (!strstr(err.msg, bad[i].msg))
			test_fail(__FILE__, __LINE__, "%s: got '%s', want '%s'", bad[i].patch,
				  err.msg, bad[i].msg);
		checkpoint_release(&out);
	}
}

TEST(patch_on_an_empty_space)
{
	struct checkpoint out;
	json_t *p = json_loads("{\"title\":\"First\",\"add\":{\"tasks\":[\"A\"]}}", 0, NULL);
	json_t *changes = NULL;
	struct smr_err err = SMR_ERR_INIT;

	checkpoint_init(&out);
	CHECK_INT(patch_apply(NULL, p, &out, &changes, NULL), SMR_OK);
	CHECK_INT(json_array_size(out.tasks), 1);
	json_decref(p);
	json_decref(changes);
	checkpoint_release(&out);
	p = json_loads("{\"drop\":{\"tasks\":[1]}}", 0, NULL);
	checkpoint_init(&out);
	CHECK_INT(patch_apply(NULL, p, &out, NULL, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "(it has 0 tasks)") != NULL);
	json_decref(p);
	checkpoint_release(&out);
}
