/*
 * test_draft_save.c -- domain/draft_save.c and the duplicate rule of
 * domain/checkpoint.c: a draft on top of HEAD keeps HEAD's items, adds its
 * new ones once, marks a done task done; replace drops HEAD's; the
 * person's rejections and drops; one refusal text for a repeated item.
 */
#include "harness.h"

#include "domain/checkpoint.h"
#include "domain/draft.h"
#include "domain/patch.h"

#include <stdlib.h>
#include <string.h>

static const char head_json[] =
	"{\"title\":\"Plan\",\"summary\":\"So far\",\"decisions\":[\"Use C\",\"Use SQLite\"],"
	"\"tasks\":[\"Ship\",{\"text\":\"Test\",\"status\":\"done\"}],\"entities\":[\"Kyoto\"],"
	"\"artifacts\":[{\"name\":\"a.md\",\"content\":\"v1\"}]}";

static const char draft_json[] =
	"{\"title\":\"Next\",\"summary\":\"\",\"decisions\":[{\"text\":\"Use C\"},"
	"{\"text\":\"Use Rust for tools\"},{\"text\":\"Use Rust for tools\"}],\"assumptions\":[],"
	"\"tasks\":[{\"text\":\"Ship\",\"status\":\"done\"},{\"text\":\"Test\",\"status\":\"open\"}],"
	"\"open_questions\":[],\"entities\":[{\"name\":\"Kyoto\",\"kind\":\"city\"}],"
	"\"artifacts\":[{\"name\":\"a.md\",\"kind\":\"markdown\",\"content\":\"v2\"}],"
	"\"metadata\":{\"draft\":{\"job_id\":\"j\"}}}";

static void load(struct checkpoint *c, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	checkpoint_init(c);
	CHECK(j != NULL);
	CHECK_INT(checkpoint_from_json(j, c, NULL), SMR_OK);
	json_decref(j);
}

/* The draft on head with the choice; out gets the result, *desc its description. */
static enum smr_rc save(const struct draft_choice *ch, struct checkpoint *out, char **desc,
			struct smr_err *err)
{
	struct checkpoint head;
	json_t *draft = json_loads(draft_json, 0, NULL), *patch = NULL, *changes = NULL;
	enum smr_rc rc;

	load(&head, head_json);
	checkpoint_init(out);
	rc = draft_patch(&head, draft, ch, &patch, err);
	if (!rc)
		rc = patch_apply(&head, patch, out, &changes, err);
	if (!rc && desc)
		*desc = patch_describe(changes);
	json_decref(changes);
	json_decref(patch);
	json_decref(draft);
	checkpoint_release(&head);
	return rc;
}

static const char *text_at(const json_t *list, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(list, i), key));
}

TEST(draft_save_keeps_head_and_adds_once)
{
	struct draft_choice ch = { 0 };
	struct checkpoint out;
	char *desc = NULL;

	CHECK_INT(save(&ch, &out, &desc, NULL), SMR_OK);
	CHECK_INT(json_array_size(out.decisions), 3);
	CHECK_STR(text_at(out.decisions, 0, "text"), "Use C");
	CHECK_STR(text_at(out.decisions, 1, "text"), "Use SQLite");
	CHECK_STR(text_at(out.decisions, 2, "text"), "Use Rust for tools");
	CHECK_STR(text_at(out.tasks, 0, "status"), "done");
	CHECK_STR(text_at(out.tasks, 1, "status"), "done");   /* HEAD's done stays done */
	CHECK_INT(json_array_size(out.entities), 1);
	CHECK_STR(text_at(out.artifacts, 0, "content"), "v2");
	CHECK_STR(out.title, "Next");
	CHECK_STR(out.summary, "So far");                      /* the draft has none */
	CHECK(json_object_get(out.metadata, "draft") != NULL);
	CHECK_STR(desc, "+1 decision, 1 task done, 1 artifact replaced, new title");
	CHECK_INT(checkpoint_check_unique(&out, NULL), SMR_OK);
	free(desc);
	checkpoint_release(&out);
}

TEST(draft_save_review_statuses)
{
	struct checkpoint head;
	json_t *draft = json_loads(draft_json, 0, NULL), *r;

	load(&head, head_json);
	r = draft_review(&head, draft);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "decisions"), 0), "status")), "in_head");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "decisions"), 1), "status")), "new");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "decisions"), 2), "status")), "repeated");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "tasks"), 0), "status")), "done");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "tasks"), 1), "status")), "in_head");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(r, "artifacts"), 0), "status")), "replaces");
	CHECK_INT(json_array_size(json_object_get(r, "open_questions")), 0);
	json_decref(r);
	json_decref(draft);
	checkpoint_release(&head);
}

TEST(draft_save_replace_and_choices)
{
	json_t *reject = json_loads("{\"decisions\":[\"Use Rust for tools\"],\"task\":[\"Ship\"]}", 0, NULL);
	json_t *drop = json_loads("{\"tasks\":[1],\"decisions\":[\"Use SQLite\"]}", 0, NULL);
	struct draft_choice ch = { .replace = 1 };
	struct checkpoint out;
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(save(&ch, &out, NULL, NULL), SMR_OK);
	CHECK_INT(json_array_size(out.decisions), 2);          /* the draft's, once each */
	CHECK_STR(text_at(out.tasks, 1, "status"), "open");    /* exactly the draft */
	CHECK_STR(text_at(out.entities, 0, "kind"), "city");
	checkpoint_release(&out);

	ch = (struct draft_choice){ .reject = reject, .drop = drop, .title = "Mine" };
	CHECK_INT(save(&ch, &out, NULL, NULL), SMR_OK);
	CHECK_INT(json_array_size(out.decisions), 1);          /* Use SQLite dropped, Rust rejected */
	CHECK_INT(json_array_size(out.tasks), 1);              /* Ship dropped: its done mark is not an error */
	CHECK_STR(out.title, "Mine");
	checkpoint_release(&out);
	json_decref(reject);
	json_decref(drop);

	reject = json_loads("{\"decisions\":[\"Not there\"]}", 0, NULL);
	ch = (struct draft_choice){ .reject = reject };
	CHECK_INT(save(&ch, &out, NULL, &err), SMR_EUNPROC);
	CHECK_STR(err.msg, "the draft has no decision 'Not there'");
	checkpoint_release(&out);
	json_decref(reject);
	reject = json_loads("[1]", 0, NULL);
	ch = (struct draft_choice){ .reject = reject };
	CHECK_INT(save(&ch, &out, NULL, &err), SMR_EINVAL);
	checkpoint_release(&out);
	json_decref(reject);
}

TEST(draft_save_nothing_new_is_refused)
{
	struct checkpoint head;
	json_t *draft = json_loads("{\"title\":\"\",\"summary\":\"\",\"decisions\":[{\"text\":\"Use C\"}],"
				   "\"metadata\":{}}", 0, NULL), *patch = (json_t *)1;
	struct draft_choice ch = { 0 };
	struct smr_err err = SMR_ERR_INIT;

	load(&head, head_json);
	CHECK_INT(draft_patch(&head, draft, &ch, &patch, &err), SMR_EUNPROC);
	CHECK(patch == NULL);
	CHECK(strstr(err.msg, "nothing that HEAD does not have") != NULL);
	json_decref(draft);
	checkpoint_release(&head);
}

TEST(duplicate_rule_one_text)
{
	struct checkpoint c;
	struct smr_err err = SMR_ERR_INIT;
	char long_text[700];

	load(&c, "{\"decisions\":[\"A\",\"B\"],\"entities\":[\"X\",{\"name\":\"X\",\"kind\":\"k\"}]}");
	CHECK_INT(checkpoint_check_unique(&c, &err), SMR_EUNPROC);
	CHECK_STR(err.msg, "entity 'X' is already there (a list holds each item once)");
	checkpoint_release(&c);
	memset(long_text, 'a', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = 0;
	CHECK_INT(checkpoint_err_duplicate("open_questions", long_text, &err), SMR_EUNPROC);
	CHECK(!strncmp(err.msg, "question 'aaa", 13));
	CHECK(strstr(err.msg, "a...' is already there") != NULL);
}
