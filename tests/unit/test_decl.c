/*
 * test_decl.c -- the operations' declarations (ops/decl.h): the one schema
 * check's words (paths, enum values, missing members), and that the
 * OpenAPI document and the MCP tool list are both made from them, so one
 * changed declaration changes both.
 */
#include "harness.h"
#include "temp_store.h"

#include "http/server.h"
#include "mcp/mcp.h"
#include "ops/api.h"
#include "ops/auth.h"
#include "ops/decl.h"
#include "util/embedded.h"

#include <pthread.h>
#include <string.h>

static enum smr_rc check_text(const char *schema, const char *value, struct smr_err *err)
{
	json_t *s = json_loads(schema, 0, NULL), *v = json_loads(value, 0, NULL);
	enum smr_rc rc;

	CHECK(s && v);
	rc = decl_check(s, v, "parameter", err);
	json_decref(s);
	json_decref(v);
	return rc;
}

TEST(decl_check_names_the_path_and_the_values_allowed)
{
	const char *tasks = "{\"type\":\"object\",\"properties\":{\"tasks\":{\"type\":\"array\","
			    "\"items\":{\"$ref\":\"#/$defs/TaskIn\"}}}}";
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(check_text(tasks, "{\"tasks\":[\"a\",{\"text\":\"b\",\"status\":\"gone\"}]}",
			     &err), SMR_EINVAL);
	CHECK_STR(err.msg, "parameter 'tasks[1].status' must be one of: open, done (not 'gone')");
	CHECK_INT(check_text(tasks, "{\"tasks\":[3]}", &err), SMR_EINVAL);
	CHECK_STR(err.msg, "parameter 'tasks[0]' must be a string or an object, not an integer");
	CHECK_INT(check_text(tasks, "{\"tasks\":[\"a\",{\"text\":\"b\",\"status\":\"done\"}]}",
			     &err), SMR_OK);
	CHECK_INT(check_text("{\"type\":\"object\",\"required\":[\"space\"]}", "{}", &err),
		  SMR_EUSAGE);
	CHECK_STR(err.msg, "missing required parameter 'space'");
	CHECK_INT(check_text("{\"properties\":{\"h\":{\"type\":\"string\",\"pattern\":"
			     "\"^[0-9a-f]{4}$\"}}}", "{\"h\":\"12zz\"}", &err), SMR_EINVAL);
	CHECK_STR(err.msg, "parameter 'h' must match ^[0-9a-f]{4}$");
}

/*
 * The path is put into words only when a check fails (ops/schema.c): the
 * words must still name every step, items and members nested in each
 * other, a member of an additionalProperties schema, and a path too long
 * for a message cut, not overrun.
 */
TEST(decl_check_words_a_nested_path_only_on_failure)
{
	const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"items\":"
			"{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"array\",\"minItems\":2,"
			"\"items\":{\"type\":\"integer\",\"maximum\":9}}},\"additionalProperties\":"
			"{\"type\":\"object\",\"additionalProperties\":false}}}}}";
	char value[600], want[300];
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(check_text(s, "{\"a\":[{\"b\":[1,2]},{\"b\":[3,10]}]}", &err), SMR_EINVAL);
	CHECK_STR(err.msg, "parameter 'a[1].b[1]' must be at most 9");
	CHECK_INT(check_text(s, "{\"a\":[{\"b\":[1]}]}", &err), SMR_EINVAL);
	CHECK_STR(err.msg, "parameter 'a[0].b' must have at least 2 items");
	CHECK_INT(check_text(s, "{\"a\":[{\"c\":{\"d\":1}}]}", &err), SMR_EINVAL);
	CHECK_STR(err.msg, "unknown parameter 'a[0].c.d'");
	CHECK_INT(check_text(s, "{\"a\":[{\"b\":[1,2]},{\"c\":{}}]}", &err), SMR_OK);
	snprintf(value, sizeof(value), "{\"a\":[{\"%0300d\":{\"x\":1}}]}", 0);
	CHECK_INT(check_text(s, value, &err), SMR_EINVAL);
	snprintf(want, sizeof(want), "unknown parameter 'a[0].%0250d'", 0);
	CHECK_STR(err.msg, want);
}

/*
 * A schema is compiled at its first check and the nodes are kept for the
 * process (ops/schema_node.c): two threads whose first checks of one new
 * schema race must both get its answers, every time after too, and the
 * nodes must outlive the caller's reference to the schema (ASan sees a
 * node read from a freed schema).
 */
struct racer {
	const json_t *schema, *good, *bad;
	pthread_barrier_t *start;
	int wrong;
};

static void *race_checks(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->start);
	for (int i = 0; i < 200; i++) {
		struct smr_err err = SMR_ERR_INIT;

		if (decl_check(r->schema, r->good, "parameter", &err) != SMR_OK)
			r->wrong++;
		if (decl_check(r->schema, r->bad, "parameter", &err) != SMR_EINVAL ||
		    strcmp(err.msg, "parameter 'tasks[1].status' must be one of: open, done"
			   " (not 'gone')"))
			r->wrong++;
	}
	return NULL;
}

TEST(decl_check_compiles_a_schema_once_for_every_thread)
{
	json_t *schema = json_loads("{\"type\":\"object\",\"properties\":{\"tasks\":{\"type\":"
				    "\"array\",\"items\":{\"$ref\":\"#/$defs/TaskIn\"}}},"
				    "\"additionalProperties\":false}", 0, NULL);
	json_t *good = json_loads("{\"tasks\":[\"a\",{\"text\":\"b\",\"status\":\"done\"}]}", 0, NULL);
	json_t *bad = json_loads("{\"tasks\":[\"a\",{\"text\":\"b\",\"status\":\"gone\"}]}", 0, NULL);
	pthread_barrier_t start;
	struct racer r[2];
	pthread_t t[2];
	struct smr_err err = SMR_ERR_INIT;

	CHECK(schema && good && bad);
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		r[i] = (struct racer){ schema, good, bad, &start, 0 };
		CHECK_INT(pthread_create(&t[i], NULL, race_checks, &r[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(r[i].wrong, 0);
	}
	pthread_barrier_destroy(&start);
	json_object_set_new(good, "extra", json_true());
	json_decref(schema);    /* the compiled nodes keep what they need */
	CHECK_INT(decl_check(schema, good, "parameter", &err), SMR_EINVAL);
	CHECK_STR(err.msg, "unknown parameter 'extra'");
	json_decref(good);
	json_decref(bad);
}

/* The declarations with the Checkpoint's title described anew; new reference. */
static json_t *changed_decl(const char *words)
{
	json_t *d = json_deep_copy(decl_all());
	json_t *props = json_object_get(json_object_get(json_object_get(d, "$defs"), "Checkpoint"),
					"properties");

	json_object_set_new(props, "title", json_pack("{s:s, s:s}", "type", "string",
						      "description", words));
	return d;
}

static const json_t *tool_named(const json_t *tools, const char *name)
{
	size_t i;
	json_t *t;

	json_array_foreach(tools, i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")), name))
			return t;
	return NULL;
}

static const char *title_words(const json_t *checkpoint_schema)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(
		checkpoint_schema, "properties"), "title"), "description"));
}

TEST(decl_one_declaration_makes_openapi_and_the_mcp_tools)
{
	json_t *decl = changed_decl("changed in one place");
	json_t *doc = http_openapi_from(decl), *tools = mcp_tool_defs(decl);
	json_t *before = mcp_tool_defs(decl_all());
	const json_t *head = tool_named(tools, "read_head");
	const json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");

	CHECK(head != NULL);
	CHECK_STR(title_words(json_object_get(head, "outputSchema")), "changed in one place");
	CHECK_STR(title_words(json_object_get(schemas, "Checkpoint")), "changed in one place");
	/* and the unchanged declarations say otherwise: the words came from the change */
	CHECK(title_words(json_object_get(tool_named(before, "read_head"), "outputSchema")) == NULL);
	CHECK_INT((int)json_array_size(tools), (int)json_array_size(before));
	json_decref(before);
	json_decref(tools);
	json_decref(doc);
	json_decref(decl);
}

/*
 * Every operation of this binary is declared whole: its parameters, its
 * result and the access it needs (a rule api_call() understands), so no
 * operation is checked by hand or open by omission.
 */
TEST(decl_every_operation_declares_params_result_and_access)
{
	size_t n = 0;

	for (size_t t = 0; api_tables[t]; t++) {
		for (const struct api_op *op = api_tables[t]; op->name; op++, n++) {
			const json_t *d = decl_op(op->name);
			struct api_access a;

			api_access_parse(json_object_get(d, "access"), &a);
			if (!json_is_object(json_object_get(d, "params")) ||
			    !json_object_get(d, "result") || a.need == NEED_UNDECLARED)
				test_fail(__FILE__, __LINE__, "operation '%s' is not declared whole"
					  " (params, result, access)", op->name);
		}
	}
	CHECK(n > 50);
}

/* Runs op with params (JSON text) on ctx; *err says why it failed. */
static enum smr_rc run_text(struct ops_ctx *ctx, const char *op, const char *params,
			    struct smr_err *err)
{
	json_t *p = json_loads(params, 0, NULL), *res = NULL;
	enum smr_rc rc;

	CHECK(p != NULL);
	rc = api_call(ctx, op, p, &res, err);
	json_decref(res);
	json_decref(p);
	return rc;
}

/*
 * The operations' functions check nothing by hand any more: every class of
 * bad parameter is refused by the one check of the declaration, before the
 * function runs, in words that name the parameter (and, for an enum, the
 * values allowed and the one given), and nothing is written.
 */
TEST(decl_bad_parameters_are_refused_as_declared)
{
	static const struct {
		const char *op, *params;
		enum smr_rc rc;
		const char *msg;
	} cases[] = {
		/* type */
		{ "space.create", "{\"name\":5}", SMR_EINVAL,
		  "parameter 'name' must be a string, not an integer" },
		{ "handoff", "{\"space\":\"a\",\"note\":\"n\",\"restore\":\"yes\"}", SMR_EINVAL,
		  "parameter 'restore' must be a boolean, not a string" },
		{ "search", "{\"query\":\"x\",\"spaces\":[\"a\",3]}", SMR_EINVAL,
		  "parameter 'spaces[1]' must be a string, not an integer" },
		{ "session.switch", "{\"session_id\":\"s\",\"seq\":\"2\"}", SMR_EINVAL,
		  "parameter 'seq' must be an integer, not a string" },
		/* required */
		{ "head", "{}", SMR_EUSAGE, "missing required parameter 'space'" },
		{ "chat.edit", "{\"session_id\":\"s\",\"seq\":1}", SMR_EUSAGE,
		  "missing required parameter 'message'" },
		{ "grant.list", "{\"space\":null}", SMR_EUSAGE, "missing required parameter 'space'" },
		/* enum */
		{ "grant", "{\"user\":\"u\",\"space\":\"a\",\"role\":\"boss\"}", SMR_EINVAL,
		  "parameter 'role' must be one of: reader, writer, owner (not 'boss')" },
		{ "ingest", "{\"space\":\"a\",\"transcript\":\"t\",\"format\":\"pdf\"}", SMR_EINVAL,
		  "parameter 'format' must be one of: auto, text, markdown, chatgpt, claude"
		  " (not 'pdf')" },
		/* minLength */
		{ "fork", "{\"ref\":\"a\",\"into\":\"\"}", SMR_EINVAL,
		  "parameter 'into' must not be empty" },
		{ "chat.send", "{\"session_id\":\"s\",\"message\":\"\"}", SMR_EINVAL,
		  "parameter 'message' must not be empty" },
		/* range */
		{ "search", "{\"query\":\"x\",\"limit\":201}", SMR_EINVAL,
		  "parameter 'limit' must be at most 200" },
		{ "session.fork", "{\"session_id\":\"s\",\"seq\":0}", SMR_EINVAL,
		  "parameter 'seq' must be at least 1" },
		/* unknown, where the operation is closed */
		{ "draft.create", "{\"session_id\":\"s\",\"colour\":1}", SMR_EINVAL,
		  "unknown parameter 'colour'" },
	};
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx;
	struct smr_err err = SMR_ERR_INIT;
	json_t *before = NULL, *after = NULL;

	temp_store_open(path, &st, &ctx);
	CHECK_INT(api_call(ctx, "space.list", NULL, &before, &err), SMR_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err = (struct smr_err)SMR_ERR_INIT;
		CHECK_INT(run_text(ctx, cases[i].op, cases[i].params, &err), cases[i].rc);
		CHECK_STR(err.msg, cases[i].msg);
	}
	CHECK_INT(api_call(ctx, "space.list", NULL, &after, &err), SMR_OK);
	CHECK(json_equal(before, after));
	json_decref(before);
	json_decref(after);
		temp_store_close(path, ctx);
}

/*
 * decl_op and decl_ref parse one entry of the build's index
 * (tools/decl_index.c): each must be what decl_all() merges from the
 * files, and the index must hold every operation and schema, no more.
 */
TEST(decl_the_index_holds_exactly_what_the_files_declare)
{
	const json_t *all = decl_all(), *v;
	const char *name;
	size_t n = 0;
	char ref[128];

	json_object_foreach((json_t *)json_object_get(all, "operations"), name, v) {
		CHECK(json_equal(decl_op(name), v));
		n++;
	}
	CHECK_INT(n, embedded_decl_ops_n);
	CHECK(decl_op("no.such.operation") == NULL);
	n = 0;
	json_object_foreach((json_t *)json_object_get(all, "$defs"), name, v) {
		snprintf(ref, sizeof(ref), "#/$defs/%s", name);
		CHECK(json_equal(decl_ref(ref), v));
		n++;
	}
	CHECK_INT(n, embedded_decl_defs_n);
}

TEST(decl_the_mcp_tools_from_the_index_are_those_of_all_the_declarations)
{
	json_t *indexed = mcp_tool_defs(NULL), *whole = mcp_tool_defs(decl_all());
	size_t n;

	decl_mcp_ops(&n);
	CHECK(n > 0);
	CHECK_INT((int)json_array_size(indexed), (int)n);
	/* the same tools, word for word and in the same order */
	CHECK(json_equal(indexed, whole));
	json_decref(indexed);
	json_decref(whole);
}
