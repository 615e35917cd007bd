/*
 * test_draft.c -- Draft with AI, the pure part: the extraction prompt holds
 * the instruction and only the turns after the boundary (nothing else), the
 * budget drops the oldest turns, and replies are validated against the
 * checkpoint schema.
 */
#include "harness.h"
#include "domain/draft.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>

static const char *const texts[] = {
	"Old talk about Kafka.", "Kafka is fine.", "Let us plan the trip.",
	"We will take the night train to Vienna.", "I assume the train runs on Sundays.",
	"Book the sleeper cabin. Which hotel?",
};

/* Six turns, seq 1..6, alternating user/assistant, with texts[] as content. */
static struct turn *six_turns(void)
{
	struct turn *v = xcalloc(6, sizeof(*v));

	for (size_t i = 0; i < 6; i++) {
		v[i].seq = (int64_t)i + 1;
		v[i].role = xstrdup(i % 2 ? "assistant" : "user");
		v[i].content = xstrdup(texts[i]);
		v[i].session_id = xstrdup("s");
		v[i].created_at = xstrdup("t");
	}
	return v;
}

static struct draft_prompt_in in_of(const struct turn *v, size_t n, int64_t after)
{
	struct draft_prompt_in in = { v, n, after, -1, 0 };

	return in;
}

TEST(draft_prompt_is_the_instruction_and_the_turns_after_the_boundary)
{
	struct turn *v = six_turns();
	struct draft_prompt_in in = in_of(v, 6, 3);
	struct draft_prompt p;
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(draft_prompt_build(&in, &p, &err), SMR_OK);
	CHECK_STR(p.system, draft_instruction);
	CHECK(strstr(p.system, "Extract only what is explicitly present in the conversation"));
	CHECK(strstr(p.system, "Do not infer"));
	/* exactly the transcript of turns 4..6 and the closing request: nothing else */
	CHECK_STR(p.user,
		  "The conversation, turns 4 to 6:\n\n"
		  "[turn 4] Assistant:\nWe will take the night train to Vienna.\n\n"
		  "[turn 5] User:\nI assume the train runs on Sundays.\n\n"
		  "[turn 6] Assistant:\nBook the sleeper cabin. Which hotel?\n\n"
		  "End of the conversation. Extract the checkpoint fields from it: only what is"
		  " explicitly present. Reply with one JSON object of the schema.");
	CHECK(!strstr(p.user, "Kafka"));
	CHECK(!strstr(p.system, "Kafka"));
	CHECK_INT(p.first_seq, 4);
	CHECK_INT(p.last_seq, 6);
	CHECK_INT(p.n_turns, 3);
	CHECK_INT(p.n_dropped, 0);
	draft_prompt_release(&p);
	turns_free(v, 6);
}

TEST(draft_prompt_without_boundary_takes_every_turn_up_to_upto)
{
	struct turn *v = six_turns();
	struct draft_prompt_in in = in_of(v, 6, 0);
	struct draft_prompt p;

	in.upto_seq = 5;
	CHECK_INT(draft_prompt_build(&in, &p, NULL), SMR_OK);
	CHECK_INT(p.first_seq, 1);
	CHECK_INT(p.last_seq, 5);
	CHECK(strstr(p.user, "[turn 1] User:\nOld talk about Kafka."));
	CHECK(!strstr(p.user, "sleeper"));
	draft_prompt_release(&p);
	turns_free(v, 6);
}

TEST(draft_prompt_with_no_turns_in_range_is_unprocessable)
{
	struct turn *v = six_turns();
	struct draft_prompt_in in = in_of(v, 6, 6);
	struct draft_prompt p;
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(draft_prompt_build(&in, &p, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "no turns after its mount boundary"));
	CHECK(!p.user && !p.system);
	draft_prompt_release(&p);
	in = in_of(NULL, 0, -1);
	CHECK_INT(draft_prompt_build(&in, &p, NULL), SMR_EUNPROC);
	turns_free(v, 6);
}

TEST(draft_prompt_over_budget_drops_the_oldest_turns)
{
	struct turn *v = six_turns();
	struct draft_prompt_in in = in_of(v, 6, 0);
	struct draft_prompt p;

	/* turn 6: "[turn 6] Assistant:\n" 20 + 36 + 2; turn 5: 15 + 35 + 2; turn 4: 61 */
	in.budget_chars = 58 + 52 + 60;
	CHECK_INT(draft_prompt_build(&in, &p, NULL), SMR_OK);
	CHECK_INT(p.first_seq, 5);
	CHECK_INT(p.last_seq, 6);
	CHECK_INT(p.n_dropped, 4);
	CHECK(strstr(p.user, "(4 earlier turns were left out to fit the model's context.)"));
	CHECK(!strstr(p.user, "night train"));
	CHECK(!p.cut);
	draft_prompt_release(&p);
	turns_free(v, 6);
}

TEST(draft_prompt_cuts_a_single_turn_over_budget_at_a_character)
{
	struct turn t = { 0 };
	struct draft_prompt_in in = { &t, 1, 0, -1, 100 };
	struct draft_prompt p;
	struct buf b = BUF_INIT(0);

	for (int i = 0; i < 300; i++)
		buf_adds(&b, "\xc3\xa9");          /* é, two bytes each */
	t.seq = 1;
	t.role = (char *)"user";
	t.content = b.ptr;
	CHECK_INT(draft_prompt_build(&in, &p, NULL), SMR_OK);
	CHECK(p.cut);
	CHECK_INT(p.first_seq, 1);
	CHECK(utf8_valid(p.user, strlen(p.user)));
	CHECK(strstr(p.user, "[... truncated, 264 more characters]"));
	draft_prompt_release(&p);
	buf_release(&b);
}

TEST(draft_schema_is_strict_with_every_key_required)
{
	json_t *s = draft_schema();
	json_t *req = json_object_get(s, "required");
	const json_t *task = json_object_get(json_object_get(json_object_get(
		json_object_get(s, "properties"), "tasks"), "items"), "properties");
	static const char *const keys[] = { "title", "summary", "decisions", "assumptions",
					    "tasks", "open_questions", "entities", "artifacts" };

	CHECK(json_is_false(json_object_get(s, "additionalProperties")));
	CHECK_INT(json_array_size(req), 8);
	for (size_t i = 0; i < 8; i++)
		CHECK_STR(json_string_value(json_array_get(req, i)), keys[i]);
	CHECK_INT(json_array_size(json_object_get(json_object_get(task, "status"), "enum")), 2);
	json_decref(s);
}

static json_t *good_reply(void)
{
	return json_pack("{s:s, s:s, s:[{s:s}, s], s:[{s:s}], s:[{s:s}, {s:s, s:s}],"
			 " s:[{s:s}], s:[{s:s, s:s, s:s}], s:[]}",
			 "title", "Trip", "summary", "Planning a trip.",
			 "decisions", "text", "Take the night train", "Go to Vienna",
			 "assumptions", "text", "The train runs on Sundays",
			 "tasks", "text", "Book the sleeper", "text", "Pack", "status", "done",
			 "open_questions", "text", "Which hotel?",
			 "entities", "name", "Vienna", "kind", "place", "description", "",
			 "artifacts");
}

TEST(draft_validate_normalises_a_good_reply)
{
	json_t *reply = good_reply(), *d = NULL;
	const json_t *ent;

	CHECK_INT(draft_validate(reply, &d, NULL), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(d, "title")), "Trip");
	CHECK_STR(json_string_value(json_object_get(json_array_get(
		json_object_get(d, "decisions"), 1), "text")), "Go to Vienna");
	CHECK_STR(json_string_value(json_object_get(json_array_get(
		json_object_get(d, "tasks"), 0), "status")), "open");
	CHECK_STR(json_string_value(json_object_get(json_array_get(
		json_object_get(d, "tasks"), 1), "status")), "done");
	ent = json_array_get(json_object_get(d, "entities"), 0);
	CHECK_STR(json_string_value(json_object_get(ent, "kind")), "place");
	CHECK(!json_object_get(ent, "description"));      /* "" means not stated */
	CHECK(json_is_object(json_object_get(d, "metadata")));
	CHECK_INT(json_object_size(d), 9);
	json_decref(d);
	json_decref(reply);
}

/* Validates reply (stolen) and expects SMR_EUNPROC with want in the message. */
static void expect_invalid(json_t *reply, const char *want)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *d = NULL;

	CHECK_INT(draft_validate(reply, &d, &err), SMR_EUNPROC);
	CHECK(d == NULL);
	if (!strstr(err.msg, want))
		test_fail(__FILE__, __LINE__, "error '%s' does not say '%s'", err.msg, want);
	json_decref(reply);
}

TEST(draft_validate_rejects_replies_not_of_the_schema)
{
	json_t *r;

	expect_invalid(json_pack("[]"), "not a JSON object");
	expect_invalid(json_string("Use Postgres"), "not a JSON object");
	r = good_reply();
	json_object_del(r, "assumptions");
	expect_invalid(r, "no 'assumptions'");
	r = good_reply();
	json_object_set_new(r, "metadata", json_object());
	expect_invalid(r, "unknown key 'metadata'");
	r = good_reply();
	json_object_set_new(r, "confidence", json_real(0.9));
	expect_invalid(r, "unknown key 'confidence'");
	r = good_reply();
	json_object_set_new(r, "decisions", json_string("Take the train"));
	expect_invalid(r, "'decisions' must be an array");
	r = good_reply();
	json_object_set_new(r, "title", json_integer(7));
	expect_invalid(r, "'title' must be a string");
	r = good_reply();
	json_object_set_new(r, "open_questions", json_pack("[{s:s}]", "text", "  "));
	expect_invalid(r, "open_questions[0].text must be a non-empty string");
	r = good_reply();
	json_object_set_new(r, "tasks", json_pack("[{s:s, s:s}]", "text", "x", "status", "later"));
	expect_invalid(r, "tasks[0].status");
	r = good_reply();
	json_object_set_new(r, "entities", json_pack("[{s:i}]", "name", 3));
	expect_invalid(r, "entities[0].name");
	r = good_reply();
	json_object_set_new(r, "artifacts", json_pack("[{s:s}]", "name", "plan"));
	expect_invalid(r, "artifacts[0].content");
	r = good_reply();
	{
		json_t *many = json_array();

		for (int i = 0; i <= DRAFT_MAX_ITEMS; i++)
			json_array_append_new(many, json_string("d"));
		json_object_set_new(r, "decisions", many);
	}
	expect_invalid(r, "more than 500 decisions");
}

TEST(draft_provenance_goes_into_metadata)
{
	json_t *reply = good_reply(), *d = NULL, *prov;
	struct draft_provenance p = { "sess-1", 4, 9, "openai", "gpt-x", "job-1" };

	CHECK_INT(draft_validate(reply, &d, NULL), SMR_OK);
	draft_set_provenance(d, &p);
	prov = json_object_get(json_object_get(d, "metadata"), "draft");
	CHECK_STR(json_string_value(json_object_get(prov, "session_id")), "sess-1");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(prov, "turn_range"),
						     "first_seq")), 4);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(prov, "turn_range"),
						     "last_seq")), 9);
	CHECK_STR(json_string_value(json_object_get(prov, "provider")), "openai");
	CHECK_STR(json_string_value(json_object_get(prov, "model")), "gpt-x");
	CHECK_STR(json_string_value(json_object_get(prov, "job_id")), "job-1");
	json_decref(d);
	json_decref(reply);
}

TEST(draft_repair_note_says_what_was_wrong)
{
	char *note = draft_repair_note("the reply has no 'tasks'");

	CHECK(strstr(note, "could not be used: the reply has no 'tasks'."));
	CHECK(strstr(note, "only what is explicitly present"));
	free(note);
}
