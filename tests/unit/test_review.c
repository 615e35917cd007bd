/*
 * test_review.c -- the deterministic pass of checkpoint review: for every
 * finding type a fixed checkpoint that must produce it and one that must
 * not, the import of findings from another pass, and the review operation
 * on a real store leaving the checkpoint untouched.
 */
#include "harness.h"
#include "temp_store.h"

#include "domain/checkpoint.h"
#include "domain/review.h"
#include "domain/words.h"
#include "ops/api.h"
#include "ops/ops.h"
#include "ops/review_ingest.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <unistd.h>

/* A checkpoint from JSON text (lists of strings are fine); caller releases. */
static void load(struct checkpoint *c, const char *json)
{
	json_error_t jerr;
	json_t *in = json_loads(json, 0, &jerr);
	struct smr_err err = SMR_ERR_INIT;

	checkpoint_init(c);
	if (!in) {
		test_fail(__FILE__, __LINE__, "bad fixture JSON: %s", jerr.text);
		return;
	}
	if (checkpoint_from_json(in, c, &err))
		test_fail(__FILE__, __LINE__, "bad fixture: %s", err.msg);
	json_decref(in);
}

/* Runs the pass and returns the findings of one type (new reference). */
static json_t *findings_of(const char *json, const char *type)
{
	struct checkpoint c;
	json_t *all, *out = json_array(), *f;
	size_t i;

	load(&c, json);
	all = review_deterministic(&c, NULL);
	json_array_foreach(all, i, f) {
		CHECK_STR(json_string_value(json_object_get(f, "source")), "deterministic");
		if (!strcmp(json_string_value(json_object_get(f, "type")), type))
			json_array_append(out, f);
	}
	json_decref(all);
	checkpoint_release(&c);
	return out;
}

static size_t count_of(const char *json, const char *type)
{
	json_t *v = findings_of(json, type);
	size_t n = json_array_size(v);

	json_decref(v);
	return n;
}

/* Field, index and text of item k of finding f. */
static void check_item(const json_t *f, size_t k, const char *field, int index, const char *text)
{
	const json_t *it = json_array_get(json_object_get(f, "items"), k);

	CHECK_STR(json_string_value(json_object_get(it, "field")), field);
	CHECK_INT(json_integer_value(json_object_get(it, "index")), index);
	CHECK_STR(json_string_value(json_object_get(it, "text")), text);
}

/* 1 if the decisions a and b are reported as type. */
static int pair_found(const char *type, const char *a, const char *b)
{
	char *json = xasprintf("{\"decisions\": [\"%s\", \"%s\"]}", a, b);
	size_t n = count_of(json, type);

	free(json);
	return n == 1;
}

TEST(review_contradiction_negations)
{
	json_t *v = findings_of("{\"decisions\": [\"Use Postgres\", \"Ship on Monday\","
				" \"Do not use Postgres\"]}", "contradiction");

	CHECK_INT(json_array_size(v), 1);
	check_item(json_array_get(v, 0), 0, "decisions", 0, "Use Postgres");
	check_item(json_array_get(v, 0), 1, "decisions", 2, "Do not use Postgres");
	CHECK(strstr(json_string_value(json_object_get(json_array_get(v, 0), "message")),
		     "cannot both hold"));
	json_decref(v);

	CHECK(pair_found("contradiction", "Use Postgres", "Don't use Postgres"));
	CHECK(pair_found("contradiction", "Use Postgres", "Don\u2019t use Postgres."));
	CHECK(pair_found("contradiction", "use postgres", "Avoid Postgres"));
	CHECK(pair_found("contradiction", "Use Postgres", "We will never use Postgres"));
	CHECK(pair_found("contradiction", "Use Postgres", "Use SQLite instead of Postgres"));
	CHECK(pair_found("contradiction", "Use Postgres", "Pick SQLite rather than Postgres"));
	CHECK(pair_found("contradiction", "Use Postgres", "Use SQLite, not Postgres"));
	CHECK(pair_found("contradiction", "Use Postgres", "Postgres should not be used"));
	CHECK(pair_found("contradiction", "Deploy on Fridays", "No deploys on Fridays"));
	CHECK(pair_found("contradiction", "Use SQLite instead of Postgres",
			 "Use Postgres instead of SQLite"));
}

TEST(review_contradiction_negative_cases)
{
	/* overlap alone is not a contradiction */
	CHECK(!pair_found("contradiction", "Use Postgres", "Use Postgres for analytics only"));
	CHECK(!pair_found("contradiction", "Use Postgres", "Do not use Postgres for analytics"));
	CHECK(!pair_found("contradiction", "Use Postgres", "Use MySQL"));
	CHECK(!pair_found("contradiction", "Use Postgres but do not shard it", "Use Postgres"));
	/* a conditional decision can hold beside its opposite */
	CHECK(!pair_found("contradiction", "Use Postgres", "If traffic grows, do not use Postgres"));
	CHECK(!pair_found("contradiction", "Avoid Postgres unless the team knows it",
			  "Use Postgres"));
	/* other dependency clauses are not part of the claim */
	CHECK(pair_found("contradiction", "Use Postgres because it is boring", "Never use Postgres"));
	CHECK(pair_found("contradiction", "Given low traffic, use SQLite", "Do not use SQLite"));
	/* both negative, or both say the same thing another way */
	CHECK(!pair_found("contradiction", "Do not use Postgres", "Avoid Postgres"));
	CHECK(!pair_found("contradiction", "Use SQLite instead of Postgres", "Avoid Postgres"));
	CHECK(!pair_found("contradiction", "Postgres is banned", "Never use Postgres"));
	CHECK_INT(count_of("{\"decisions\": [\"Use Postgres\"]}", "contradiction"), 0);
	CHECK_INT(count_of("{\"title\": \"empty\"}", "contradiction"), 0);
}

TEST(review_duplicate_decisions)
{
	json_t *v = findings_of("{\"decisions\": [\"Use Postgres\", \"Ship weekly\","
				" \"We will use Postgres.\"]}", "duplicate_decision");

	CHECK_INT(json_array_size(v), 1);
	check_item(json_array_get(v, 0), 0, "decisions", 0, "Use Postgres");
	check_item(json_array_get(v, 0), 1, "decisions", 2, "We will use Postgres.");
	json_decref(v);
	CHECK(pair_found("duplicate_decision", "Avoid Postgres", "Don't use Postgres"));
	CHECK(pair_found("duplicate_decision", "Use Postgres but don't shard it",
			 "use postgres but do not shard it"));
	/* duplicates are not contradictions, and near-duplicates are not duplicates */
	CHECK(!pair_found("contradiction", "Use Postgres", "We will use Postgres"));
	CHECK(!pair_found("duplicate_decision", "Use Postgres", "Do not use Postgres"));
	CHECK(!pair_found("duplicate_decision", "Use Postgres", "Use Postgres for analytics only"));
	CHECK(!pair_found("duplicate_decision", "Use Postgres but do not shard it",
			  "Use Postgres but shard it"));
}

TEST(review_hidden_assumption)
{
	json_t *v = findings_of("{\"decisions\": [\"Use SQLite because the dataset fits in"
				" memory\", \"Ship on Monday\"],"
				" \"assumptions\": [\"Users are on desktop\"]}",
				"hidden_assumption");

	CHECK_INT(json_array_size(v), 1);
	check_item(json_array_get(v, 0), 0, "decisions", 0,
		   "Use SQLite because the dataset fits in memory");
	CHECK(strstr(json_string_value(json_object_get(json_array_get(v, 0), "message")),
		     "relies on 'the dataset fits in memory'"));
	json_decref(v);

	CHECK_INT(count_of("{\"decisions\": [\"If traffic grows past 1k rps, shard the"
			   " database\"]}", "hidden_assumption"), 1);
	CHECK_INT(count_of("{\"decisions\": [\"Cache pages as long as content is static\"]}",
			   "hidden_assumption"), 1);
	CHECK_INT(count_of("{\"decisions\": [\"Run nightly; relies on cheap spot instances\"]}",
			   "hidden_assumption"), 1);
	/* two clauses, one covered */
	CHECK_INT(count_of("{\"decisions\": [\"Use SQLite since writes are rare, because the"
			   " dataset fits in memory\"], \"assumptions\": [\"Writes are rare\"]}",
			   "hidden_assumption"), 1);
}

TEST(review_hidden_assumption_negative_cases)
{
	/* the clause is listed as an assumption (other words, same content) */
	CHECK_INT(count_of("{\"decisions\": [\"Use SQLite because the dataset fits in memory\"],"
			   " \"assumptions\": [\"The whole dataset fits in RAM memory\"]}",
			   "hidden_assumption"), 0);
	/* ... or as another decision */
	CHECK_INT(count_of("{\"decisions\": [\"Shard the database if traffic grows\","
			   " \"Plan for traffic growth: traffic grows 10x this year\"]}",
			   "hidden_assumption"), 0);
	/* a vague condition names nothing to rely on */
	CHECK_INT(count_of("{\"decisions\": [\"Add a feature flag if needed\","
			   " \"Scale out when possible\", \"Retry if necessary\"]}",
			   "hidden_assumption"), 0);
	/* no dependency phrase at all */
	CHECK_INT(count_of("{\"decisions\": [\"Use SQLite for the dataset\"]}",
			   "hidden_assumption"), 0);
	/* a decision does not cover itself */
	CHECK_INT(count_of("{\"decisions\": [\"Use SQLite because SQLite is simple\"]}",
			   "hidden_assumption"), 1);
}

TEST(review_resolved_question)
{
	json_t *v = findings_of("{\"decisions\": [\"Ship weekly\", \"Do not deploy on Fridays\"],"
				" \"open_questions\": [\"What is the launch date?\","
				" \"Should we deploy on Fridays?\"]}", "resolved_question");

	CHECK_INT(json_array_size(v), 1);
	check_item(json_array_get(v, 0), 0, "open_questions", 1, "Should we deploy on Fridays?");
	check_item(json_array_get(v, 0), 1, "decisions", 1, "Do not deploy on Fridays");
	json_decref(v);

	CHECK_INT(count_of("{\"decisions\": [\"Use Postgres as the primary database\"],"
			   " \"open_questions\": [\"Which database should we use?\"]}",
			   "resolved_question"), 1);
	/* the decision names an entity whose kind the question asks about */
	CHECK_INT(count_of("{\"decisions\": [\"Use Postgres\"],"
			   " \"open_questions\": [\"Which database should we use?\"],"
			   " \"entities\": [{\"name\": \"Postgres\", \"kind\": \"database\"}]}",
			   "resolved_question"), 1);
}

TEST(review_resolved_question_negative_cases)
{
	/* one shared word out of four is not an answer */
	CHECK_INT(count_of("{\"decisions\": [\"Use Postgres as the database\"],"
			   " \"open_questions\": [\"Which cloud region should host the"
			   " database?\"]}", "resolved_question"), 0);
	/* an entity kind only counts when the decision names that entity */
	CHECK_INT(count_of("{\"decisions\": [\"Use Redis for sessions\"],"
			   " \"open_questions\": [\"Which database should we use?\"],"
			   " \"entities\": [{\"name\": \"Postgres\", \"kind\": \"database\"}]}",
			   "resolved_question"), 0);
	CHECK_INT(count_of("{\"open_questions\": [\"Which database should we use?\"]}",
			   "resolved_question"), 0);
	CHECK_INT(count_of("{\"decisions\": [\"Use Postgres\"],"
			   " \"open_questions\": [\"What should we do?\"]}",
			   "resolved_question"), 0);
}

TEST(review_disconnected_entity)
{
	json_t *v = findings_of("{\"decisions\": [\"Use Postgres\"],"
				" \"entities\": [\"Postgres\", \"Redis\", {\"name\": \"Kafka\","
				" \"description\": \"event log next to Redis\"}]}",
				"disconnected_entity");

	/* Redis is named in Kafka's description; Kafka is named by nothing */
	CHECK_INT(json_array_size(v), 1);
	check_item(json_array_get(v, 0), 0, "entities", 2, "Kafka");
	json_decref(v);
	/* a substring inside a word is not a mention */
	CHECK_INT(count_of("{\"decisions\": [\"Use Postgresql\"], \"entities\": [\"Postgres\"]}",
			   "disconnected_entity"), 1);
	CHECK_INT(count_of("{\"decisions\": [\"Rename the Go module\"], \"entities\": [\"Go\"],"
			   " \"tasks\": [\"Read about goroutines\"]}", "disconnected_entity"), 0);
}

TEST(review_disconnected_entity_negative_cases)
{
	static const char *const places[] = {
		"{\"tasks\": [\"Migrate the invoices table\"], \"entities\": [\"Invoice\"]}",
		"{\"assumptions\": [\"INVOICE volume is low\"], \"entities\": [\"invoice\"]}",
		"{\"open_questions\": [\"Who owns Invoice?\"], \"entities\": [\"Invoice\"]}",
		"{\"summary\": \"The invoice's flow\", \"entities\": [\"Invoice\"]}",
		"{\"title\": \"Invoice redesign\", \"entities\": [\"Invoice\"]}",
		"{\"artifacts\": [{\"name\": \"plan.md\", \"content\": \"see Invoice\"}],"
		" \"entities\": [\"Invoice\"]}",
		"{\"decisions\": [\"Port to C++ now\"], \"entities\": [\"c++\"]}",
		"{\"decisions\": [\"Use Zürich region\"], \"entities\": [\"ZüRICH\"]}",
		NULL,
	};

	for (size_t i = 0; places[i]; i++)
		if (count_of(places[i], "disconnected_entity"))
			test_fail(__FILE__, __LINE__, "entity reported in %s", places[i]);
}

TEST(review_mentions_word_boundaries)
{
	CHECK(words_mentions("we use Postgres.", "postgres"));
	CHECK(words_mentions("Postgres's planner", "Postgres"));
	CHECK(words_mentions("two Postgres\xE2\x80\x99s", "Postgres"));
	CHECK(words_mentions("«Zürich»", "zürich"));
	CHECK(!words_mentions("PostgreSQL", "Postgres"));
	CHECK(!words_mentions("xPostgres", "Postgres"));
	CHECK(!words_mentions("caféteria", "café"));
	CHECK(!words_mentions("anything", "  "));
	CHECK(!words_mentions("", "Postgres"));
}

TEST(review_findings_are_ordered_by_type)
{
	struct checkpoint c;
	json_t *all;
	const char *want[] = { "contradiction", "duplicate_decision", "hidden_assumption",
			       "resolved_question", "disconnected_entity" };

	load(&c, "{\"decisions\": [\"Use Postgres because it is boring\", \"Avoid MySQL\","
		 " \"Don't use MySQL\", \"Use MySQL\"], \"open_questions\": [\"Should we use"
		 " MySQL?\"], \"entities\": [\"Oracle\"]}");
	all = review_deterministic(&c, NULL);
	CHECK_INT(json_array_size(all), 6);
	for (size_t i = 0, k = 0; i < json_array_size(all); i++) {
		const char *t = json_string_value(json_object_get(json_array_get(all, i), "type"));

		while (k < 5 && strcmp(t, want[k]))
			k++;
		CHECK(k < 5);
	}
	json_decref(all);
	checkpoint_release(&c);
}

TEST(review_import_llm_findings)
{
	struct checkpoint c;
	struct smr_err err = SMR_ERR_INIT;
	json_t *raw, *out = NULL;

	load(&c, "{\"decisions\": [\"Use Postgres\", \"Keep costs flat\"],"
		 " \"entities\": [\"Postgres\"]}");
	raw = json_pack("{s:s, s:s, s:[{s:s, s:i, s:s}, {s:s, s:i}]}", "type", "contradiction",
			"message", "managed Postgres raises costs", "items", "field", "decisions",
			"index", 0, "text", "forged text", "field", "decisions", "index", 1);
	CHECK_INT(review_finding_import(raw, &c, "llm", &out, &err), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(out, "source")), "llm");
	check_item(out, 0, "decisions", 0, "Use Postgres");
	check_item(out, 1, "decisions", 1, "Keep costs flat");
	json_decref(out);
	json_decref(raw);

	raw = json_pack("{s:s, s:s, s:[{s:s, s:i}]}", "type", "vibes", "message", "m",
			"items", "field", "decisions", "index", 0);
	CHECK_INT(review_finding_import(raw, &c, "llm", &out, &err), SMR_EUNPROC);
	CHECK(out == NULL);
	CHECK(strstr(err.msg, "unknown finding type 'vibes'"));
	json_decref(raw);
	raw = json_pack("{s:s, s:s, s:[{s:s, s:i}]}", "type", "disconnected_entity",
			"message", "m", "items", "field", "entities", "index", 3);
	CHECK_INT(review_finding_import(raw, &c, "llm", &out, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "entities has no item 3"));
	json_decref(raw);
	raw = json_pack("{s:s, s:s, s:[]}", "type", "contradiction", "message", "m", "items");
	CHECK_INT(review_finding_import(raw, &c, "llm", &out, &err), SMR_EUNPROC);
	json_decref(raw);
	checkpoint_release(&c);
}

TEST(review_caps_make_the_pass_partial)
{
	struct checkpoint c;
	json_t *all;
	char name[32];
	int partial = 0;
	char *summary = xmalloc(100001);

	/* more entities than the cap: the ones past it are not checked */
	checkpoint_init(&c);
	for (int i = 0; i < REVIEW_MAX_ITEMS + 5; i++) {
		snprintf(name, sizeof(name), "Thing%d", i);
		json_array_append_new(c.entities, json_pack("{s:s}", "name", name));
	}
	all = review_deterministic(&c, &partial);
	CHECK_INT(partial, 1);
	CHECK_INT(json_array_size(all), REVIEW_MAX_ITEMS);
	json_decref(all);
	checkpoint_release(&c);

	/* a long text scanned for every entity exhausts the scan budget */
	checkpoint_init(&c);
	memset(summary, 'x', 100000);
	summary[100000] = '\0';
	c.summary = summary;
	for (int i = 0; i < REVIEW_MAX_ITEMS; i++) {
		snprintf(name, sizeof(name), "Thing%d", i);
		json_array_append_new(c.entities, json_pack("{s:s}", "name", name));
	}
	partial = 0;
	all = review_deterministic(&c, &partial);
	CHECK_INT(partial, 1);
	CHECK(json_array_size(all) > 0);
	CHECK(json_array_size(all) < REVIEW_MAX_ITEMS);
	json_decref(all);
	checkpoint_release(&c);

	/* within the caps the pass is whole */
	load(&c, "{\"decisions\": [\"Use Postgres\"], \"entities\": [\"Redis\"]}");
	all = review_deterministic(&c, &partial);
	CHECK_INT(partial, 0);
	json_decref(all);
	checkpoint_release(&c);
}

/* ---- the operation on a real store ---- */

struct fixture {
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx;
};

static void setup(struct fixture *f)
{
	temp_store_open(f->path, &f->st, &f->ctx);
}

static void teardown(struct fixture *f)
{
	temp_store_close(f->path, f->ctx);
}

TEST(review_operation_leaves_checkpoint_unchanged)
{
	struct fixture f;
	struct space sp = { 0 };
	struct checkpoint c = { 0 }, again = { 0 };
	json_t *fields, *params, *res = NULL, *before, *after, *report = NULL;
	struct smr_err err = SMR_ERR_INIT;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "rev", NULL, &sp, NULL), SMR_OK);
	fields = json_pack("{s:s, s:[s, s], s:[s]}", "title", "t", "decisions", "Use Postgres",
			   "Avoid Postgres", "entities", "Redis");
	CHECK_INT(ops_checkpoint_create(f.ctx, "rev", fields, NULL, "me", &c, NULL), SMR_OK);
	before = checkpoint_to_json(&c);
	params = json_pack("{s:s}", "ref", "rev");
	CHECK_INT(api_call(f.ctx, "review", params, &res, &err), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(res, "commit_hash")), c.hash);
	CHECK_INT(json_array_size(json_object_get(res, "findings")), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(res, "passes"),
								   1), "source")), "llm");
	CHECK(json_is_false(json_object_get(json_array_get(json_object_get(res, "passes"), 1),
					    "ran")));
	CHECK_INT(ops_resolve(f.ctx, "rev", &again, &err), SMR_OK);
	after = checkpoint_to_json(&again);
	CHECK(json_equal(before, after));
	CHECK_INT(ops_fsck(f.ctx, NULL, &report, &err), SMR_OK);
	CHECK(json_is_true(json_object_get(report, "ok")));
	CHECK_INT(json_integer_value(json_object_get(report, "checkpoints")), 1);
	json_decref(params);
	params = json_pack("{s:s}", "ref", "nosuch");
	json_decref(res);
	res = NULL;
	CHECK_INT(api_call(f.ctx, "review", params, &res, &err), SMR_ENOTFOUND);
	json_decref(res);
	json_decref(report);
	json_decref(params);
	json_decref(before);
	json_decref(after);
	json_decref(fields);
	checkpoint_release(&c);
	checkpoint_release(&again);
	space_release(&sp);
	teardown(&f);
}

/* A stand-in second pass: reports one finding, and one the import must drop. */
static enum smr_rc fake_pass(struct ops_ctx *ctx, const struct checkpoint *c,
			     const json_t *params, json_t *raw, const char **skip_reason,
			     struct smr_err *err)
{
	(void)ctx;
	(void)c;
	(void)err;
	if (json_is_true(json_object_get(params, "skip"))) {
		*skip_reason = "skipped on purpose";
		return SMR_OK;
	}
	json_array_append_new(raw, json_pack("{s:s, s:s, s:[{s:s, s:i}]}", "type",
					     "hidden_assumption", "message", "costs stay flat",
					     "items", "field", "decisions", "index", 0));
	json_array_append_new(raw, json_pack("{s:s}", "type", "nonsense"));
	return SMR_OK;
}

static const struct review_pass fake = { "llm", fake_pass };

TEST(review_operation_second_pass_seam)
{
	struct fixture f;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	json_t *fields, *params, *res = NULL, *pass, *last;
	struct smr_err err = SMR_ERR_INIT;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "seam", NULL, &sp, NULL), SMR_OK);
	fields = json_pack("{s:[s]}", "decisions", "Use Postgres");
	CHECK_INT(ops_checkpoint_create(f.ctx, "seam", fields, NULL, "me", &c, NULL), SMR_OK);
	f.ctx->llm_review = &fake;
	params = json_pack("{s:s}", "ref", "seam");
	CHECK_INT(api_call(f.ctx, "review", params, &res, &err), SMR_OK);
	last = json_array_get(json_object_get(res, "findings"), 0);
	CHECK_STR(json_string_value(json_object_get(last, "source")), "llm");
	check_item(last, 0, "decisions", 0, "Use Postgres");
	pass = json_array_get(json_object_get(res, "passes"), 1);
	CHECK(json_is_true(json_object_get(pass, "ran")));
	CHECK_INT(json_integer_value(json_object_get(pass, "findings")), 1);
	CHECK_INT(json_integer_value(json_object_get(pass, "dropped")), 1);
	json_decref(res);
	res = NULL;
	json_decref(params);
	params = json_pack("{s:s, s:b}", "ref", "seam", "skip", 1);
	CHECK_INT(api_call(f.ctx, "review", params, &res, &err), SMR_OK);
	pass = json_array_get(json_object_get(res, "passes"), 1);
	CHECK(json_is_false(json_object_get(pass, "ran")));
	CHECK_STR(json_string_value(json_object_get(pass, "reason")), "skipped on purpose");
	json_decref(res);
	res = NULL;
	json_decref(params);
	params = json_pack("{s:s, s:b}", "ref", "seam", "llm", 0);
	CHECK_INT(api_call(f.ctx, "review", params, &res, &err), SMR_OK);
	pass = json_array_get(json_object_get(res, "passes"), 1);
	CHECK(json_is_false(json_object_get(pass, "ran")));
	CHECK_STR(json_string_value(json_object_get(pass, "reason")), "not requested");
	CHECK_INT(json_array_size(json_object_get(res, "findings")), 0);
	json_decref(res);
	json_decref(params);
	json_decref(fields);
	checkpoint_release(&c);
	space_release(&sp);
	teardown(&f);
}
