/*
 * mcp_tools.c -- the MCP tools, generated from the operations'
 * declarations (ops/decl.h): every operation declaring an "mcp" member is
 * a tool, whose name, description, inputSchema and outputSchema come from
 * that one declaration, the same that /openapi.json is made from.
 *
 * A tool is a mapping, never a second implementation: its arguments are
 * checked against its inputSchema, turned into the operation's parameters,
 * and the operation's result document is returned as structuredContent
 * (arrays wrapped in an object, since outputSchema roots are objects) plus
 * the same JSON as a text block.  An operation's failure (not found,
 * conflict, invalid input) is a tool result with isError, never a JSON-RPC
 * error: the agent sees the message and can correct itself.
 *
 * The tool definitions are built once per process (pthread_once) and only
 * read afterwards, so HTTP worker threads share them.  Every json_t *
 * returned here is a new reference the caller json_decref()s.
 */
#include "mcp/mcp.h"
#include "mcp/mcp_int.h"
#include "ops/api.h"
#include "ops/decl.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A tool as the declarations (ops/decl.h) describe it: the operation's
 * "mcp" member names the tool, its title and description, the arguments
 * it offers (the operation's parameters, each narrowed where the tool
 * wants: "arguments": {"limit": {"maximum": 1000}}), the one parameter
 * whose members it takes flat ("flatten": "checkpoint"), the defaults it
 * fills in ("default"; "defaultAuthor": the session's author for a write)
 * and, for a result that is not an object, the key that wraps it ("wrap").
 */
struct mcp_tool {
	const char *name;
	const char *op;              /* operation run by api_call */
	const json_t *mcp;           /* the declaration's "mcp" member */
	json_t *def;                 /* the tools/list entry */
};

static struct mcp_tool tools[MCP_TOOLS_MAX];
static size_t ntools;
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

/* The schema of parameter name of op's declaration, narrowed by the tool's override. */
static json_t *argument_schema(const json_t *props, const char *name, const json_t *over)
{
	const json_t *base = json_object_get(props, name);
	json_t *s = base ? json_deep_copy(base) : json_object();

	if (json_is_object(over))
		json_object_update(s, (json_t *)over);
	return s;
}

/* The members of the flattened parameter's schema (its $ref resolved); borrowed. */
static const json_t *flat_props(const json_t *decl, const json_t *params, const char *flat)
{
	const json_t *s = json_object_get(json_object_get(params, "properties"), flat);
	const char *ref = json_string_value(json_object_get(s, "$ref"));

	if (ref)
		s = decl_def(json_object_get(decl, "$defs"), ref);
	return json_object_get(s, "properties");
}

/* The names a tool's required list keeps: the operation's, less what the tool does not offer. */
static json_t *tool_required(const json_t *params, const json_t *mcp, const json_t *props)
{
	const json_t *req = json_object_get(mcp, "required");
	json_t *out = json_array(), *x;
	size_t i;

	if (!req)
		req = json_object_get(params, "required");
	json_array_foreach(req, i, x)
		if (json_object_get(props, json_string_value(x)))
			json_array_append(out, (json_t *)x);
	return out;
}

/* inputSchema: the offered parameters, closed, with every $ref inlined; new reference. */
static json_t *tool_input(const json_t *decl, const json_t *op)
{
	const json_t *params = json_object_get(op, "params"), *mcp = json_object_get(op, "mcp");
	const json_t *all = json_object_get(params, "properties");
	const json_t *offer = json_object_get(mcp, "arguments");
	const char *flat = json_string_value(json_object_get(mcp, "flatten")), *key;
	json_t *props = json_object(), *x, *schema, *out;

	json_object_foreach((json_t *)(offer ? offer : all), key, x)
		if (!flat || strcmp(key, flat))
			json_object_set_new(props, key, argument_schema(all, key, offer ? x : NULL));
	if (flat)
		json_object_update(props, (json_t *)flat_props(decl, params, flat));
	schema = json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props,
			   "required", tool_required(params, mcp, props),
			   "additionalProperties", 0);
	out = decl_inline(json_object_get(decl, "$defs"), schema);
	json_decref(schema);
	return out;
}

/* outputSchema: the result, inlined; a result that is not an object is wrapped. */
static json_t *tool_output(const json_t *decl, const json_t *op)
{
	const json_t *mcp = json_object_get(op, "mcp");
	const char *wrap = json_string_value(json_object_get(mcp, "wrap"));
	json_t *out = decl_inline(json_object_get(decl, "$defs"), json_object_get(op, "result"));

	if (!wrap)
		return out;
	return json_pack("{s:s, s:{s:o}, s:[s], s:b}", "type", "object", "properties", wrap, out,
			 "required", wrap, "additionalProperties", 0);
}

static json_t *tool_def(const json_t *decl, const char *op_name, const json_t *op)
{
	const json_t *mcp = json_object_get(op, "mcp");
	int ro = json_is_true(json_object_get(mcp, "readOnly"));
	json_t *def;

	/* _meta names the operation, whose access rule (x-smriti-operations) applies */
	def = json_pack("{s:O, s:O, s:O, s:o, s:o, s:{s:b, s:b, s:b, s:b}, s:{s:s}}",
			"name", json_object_get(mcp, "tool"), "title", json_object_get(mcp, "title"),
			"description", json_object_get(mcp, "description"),
			"inputSchema", tool_input(decl, op), "outputSchema", tool_output(decl, op),
			"annotations", "readOnlyHint", ro, "destructiveHint", 0, "idempotentHint", ro,
			"openWorldHint", 0, "_meta", "smriti/operation", op_name);
	if (!def)
		BUG("the MCP tool of operation '%s' is not declared whole", op_name);
	return def;
}

json_t *mcp_tool_defs(const json_t *decl)
{
	json_t *list = json_array(), *op;
	const char *name;

	if (!decl) {
		size_t n;
		const char *const *names = decl_mcp_ops(&n);

		for (size_t i = 0; i < n; i++)
			json_array_append_new(list, tool_def(NULL, names[i], decl_op(names[i])));
		return list;
	}
	json_object_foreach((json_t *)json_object_get(decl, "operations"), name, op)
		if (json_object_get(op, "mcp"))
			json_array_append_new(list, tool_def(decl, name, op));
	return list;
}

/*
 * From the index, not decl_all(): parsing every declaration was two thirds
 * of the instructions of a stdio MCP server's start (callgrind).
 */
static void build_tools(void)
{
	json_t *defs = mcp_tool_defs(NULL), *def;
	size_t i;

	if (json_array_size(defs) > MCP_TOOLS_MAX)
		BUG("%zu MCP tools are declared: raise MCP_TOOLS_MAX", json_array_size(defs));
	json_array_foreach(defs, i, def) {
		const char *op = json_string_value(json_object_get(json_object_get(def, "_meta"),
								   "smriti/operation"));

		tools[i].name = json_string_value(json_object_get(def, "name"));
		tools[i].op = op;
		tools[i].mcp = json_object_get(decl_op(op), "mcp");
		tools[i].def = json_incref(def);
	}
	ntools = json_array_size(defs);
	json_decref(defs);
}

static const struct mcp_tool *tool_at(size_t i)
{
	pthread_once(&tools_once, build_tools);
	return &tools[i];
}

static size_t tool_count(void)
{
	pthread_once(&tools_once, build_tools);
	return ntools;
}

/* ---- argument mappings ---- */

static const char *author_of(const struct mcp_session *s, const json_t *args)
{
	const char *a = json_string_value(json_object_get(args, "author"));

	if (a)
		return a;
	return s->default_author ? s->default_author : s->client_name;
}

/*
 * The operation's parameters from checked arguments: the tool's defaults,
 * the session's author where the tool says so, and a flattened
 * parameter gathered back into its object; new reference.
 */
static json_t *tool_params(const struct mcp_session *s, const struct mcp_tool *t,
			   const json_t *args)
{
	const json_t *props = json_object_get(json_object_get(decl_op(t->op), "params"),
					      "properties");
	const char *flat = json_string_value(json_object_get(t->mcp, "flatten")), *key;
	const char *author = author_of(s, args);
	json_t *p = json_object(), *inner = flat ? json_object() : NULL, *v;

	json_object_update(p, (json_t *)json_object_get(t->mcp, "default"));
	json_object_foreach((json_t *)args, key, v)
		json_object_set(inner && !json_object_get(props, key) ? inner : p, key, v);
	if (author && json_is_true(json_object_get(t->mcp, "defaultAuthor")))
		json_object_set_new(p, "author", mcp_json_text(author));
	if (inner)
		json_object_set_new(p, flat, inner);
	return p;
}

void mcp_tools_enable(struct mcp_session *s)
{
	for (size_t i = 0; i < tool_count(); i++)
		s->enabled[i] = api_find(tool_at(i)->op) != NULL;
}

json_t *mcp_tools_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	json_t *list = json_array();

	if (json_object_get(params, "cursor")) {
		json_decref(list);
		return mcp_failf(fail, MCP_INVALID_PARAMS, "invalid cursor: tools/list has one page");
	}
	for (size_t i = 0; i < tool_count(); i++)
		if (s->enabled[i])
			json_array_append(list, tool_at(i)->def);
	return json_pack("{s:o}", "tools", list);
}

static json_t *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *tool_error(const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text",
			 mcp_json_text(msg), "isError", 1);
}

/* Makes result (carrying doc) the session's last tool result (see struct mcp_session). */
static void keep_result(struct mcp_session *s, json_t *doc, json_t *result)
{
	json_decref(s->last_doc);
	json_decref(s->last_result);
	free(s->last_result_text);
	s->last_doc = json_incref(doc);
	s->last_result = json_incref(result);
	s->last_result_text = NULL;
}

/*
 * The successful result: structuredContent plus the same JSON as text;
 * consumes doc.  The very document of the session's last result gives that
 * result again.
 */
static json_t *tool_result(struct mcp_session *s, const struct mcp_tool *t, json_t *doc)
{
	json_t *sc = doc, *out;
	size_t len;
	char *text;

	if (doc == s->last_doc && s->last_result) {
		json_decref(doc);
		return json_incref(s->last_result);
	}
	if (!json_is_object(doc))
		sc = json_pack("{s:o}", json_string_value(json_object_get(t->mcp, "wrap")) ?
				 json_string_value(json_object_get(t->mcp, "wrap")) : "result", doc);
	text = json_dumps(sc, JSON_COMPACT);
	if (!text)
		BUG("cannot serialise the result of tool '%s'", t->name);
	len = strlen(text);
	/* jansson wrote text, so it is valid UTF-8: skip the second check */
	out = json_pack("{s:[{s:s, s:o}], s:o, s:b}", "content", "type", "text", "text",
			json_string_nocheck(text), "structuredContent", sc, "isError", 0);
	free(text);
	if (sc == doc && len < MCP_MAX_MESSAGE / 4)
		keep_result(s, doc, out);
	return out;
}

static int find_tool(const struct mcp_session *s, const char *name)
{
	for (size_t i = 0; i < tool_count(); i++)
		if (s->enabled[i] && !strcmp(tool_at(i)->name, name))
			return (int)i;
	return -1;
}

static json_t *run_tool(struct mcp_session *s, size_t i, const json_t *args)
{
	const struct mcp_tool *t = tool_at(i);
	struct smr_err err = SMR_ERR_INIT;
	json_t *params, *result = NULL;
	enum smr_rc rc;

	if (decl_check(json_object_get(t->def, "inputSchema"), args, "argument", &err))
		return tool_error("invalid arguments for %s: %s", t->name, err.msg);
	params = tool_params(s, t, args);
	rc = s->call(s->cls, t->op, params, &result, &err);
	json_decref(params);
	if (rc) {
		json_decref(result);
		return tool_error("%s: %s", smr_rc_name(rc), err.msg);
	}
	if (!result)
		return tool_error("internal: %s returned nothing", t->op);
	return tool_result(s, t, result);
}

json_t *mcp_tools_call(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");
	json_t *empty = NULL, *out;
	int i;

	if (!name)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "tools/call needs a string 'name'");
	i = find_tool(s, name);
	if (i < 0)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "Unknown tool: '%.200s'", name);
	if (args && !json_is_object(args))
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "tools/call 'arguments' must be an object");
	if (!args)
		args = empty = json_object();
	out = run_tool(s, (size_t)i, args);
	json_decref(empty);
	return out;
}
