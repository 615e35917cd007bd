/*
 * test_decl.c -- the operations' declarations (ops/decl.h): the one schema
 * check's words (paths, enum values, missing members), and that the
 * OpenAPI document and the MCP tool list are both made from them, so one
 * changed declaration changes both.
 */
#include "harness.h"

#include "http/server.h"
#include "mcp/mcp.h"
#include "ops/decl.h"

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
	CHECK_STR(err.msg, "parameter 'tasks[1].status' must be one of: open, done");
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
