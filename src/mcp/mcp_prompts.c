/*
 * mcp_prompts.c -- MCP prompts and argument completion.
 *
 *   prompts/list          two prompts, each with one argument, space:
 *                         "handoff", from the "handoff.text" operation: the
 *                         hand-off an agent starts from (HEAD and the newest
 *                         hand-off note, in the one checkpoint Markdown);
 *                         "prime", from the "prime" operation: what `smriti
 *                         prime` prints, with MCP's tool names
 *   prompts/get           a prompt's text
 *   completion/complete   Space names for the prompts' "space" and the HEAD
 *                         resource templates' "name"
 *
 * The text is the operation's; this file only maps MCP's shapes onto it.
 * Completion lists what "space.list" returns, so a caller is offered only
 * the Spaces it may read, and only those with a checkpoint (the prompt and
 * a HEAD resource of an empty Space are not found).  A completion asked for
 * a prompt, template or argument that has no values here is answered with
 * none rather than an error: it is a hint, and a client may ask about
 * anything it shows an input for.
 *
 * Every json_t * returned here is a new reference.
 */
#include "mcp/mcp_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COMPLETION_MAX 100      /* the most values one completion may carry (MCP) */

/* The prompts: each an operation's text for one Space. */
static const struct prompt {
	const char *name, *title, *description;
	const char *op;         /* answers {text, ...} for {space} */
	const char *tools;      /* its "tools" parameter, or NULL */
	const char *what;       /* "Hand-off of the Space 'X'" */
} prompts[] = {
	{ "handoff", "Pick up a Space", "The hand-off an agent starts from: the Space's HEAD "
	  "Checkpoint (decisions, tasks, open questions, ...) and the newest hand-off note a "
	  "person left on it", "handoff.text", NULL, "Hand-off" },
	{ "prime", "Prime an agent on a Space", "A few hundred tokens for an agent's context: "
	  "the hand-off loop with this server's tool names (read HEAD, work, write on the "
	  "parent you read, what a conflict means), HEAD's state, open tasks and questions, "
	  "the last hand-off note", "prime", "mcp", "Primer" },
};

#define N_PROMPTS (sizeof(prompts) / sizeof(prompts[0]))

static const struct prompt *find_prompt(const char *name)
{
	for (size_t i = 0; name && i < N_PROMPTS; i++)
		if (!strcmp(prompts[i].name, name))
			return &prompts[i];
	return NULL;
}

void mcp_prompts_capabilities(json_t *caps)
{
	json_object_set_new(caps, "prompts", json_pack("{s:b}", "listChanged", 0));
	json_object_set_new(caps, "completions", json_object());
}

json_t *mcp_prompts_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	json_t *list = json_array();

	(void)s;
	if (json_object_get(params, "cursor")) {
		json_decref(list);
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "invalid cursor: prompts/list has one page");
	}
	for (size_t i = 0; i < N_PROMPTS; i++)
		json_array_append_new(list, json_pack(
			"{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}", "name", prompts[i].name,
			"title", prompts[i].title, "description", prompts[i].description,
			"arguments", "name", "space", "description",
			"The Space (completion offers the names)", "required", 1));
	return json_pack("{s:o}", "prompts", list);
}

/* The prompt's one argument, or NULL with fail set. */
static const char *space_argument(const struct prompt *pr, const json_t *args,
				  struct mcp_fail *fail)
{
	const char *key, *space = NULL;
	const json_t *v;

	if (args && !json_is_object(args)) {
		mcp_failf(fail, MCP_INVALID_PARAMS, "invalid params: 'arguments' must be an object");
		return NULL;
	}
	json_object_foreach((json_t *)args, key, v) {
		if (strcmp(key, "space")) {
			mcp_failf(fail, MCP_INVALID_PARAMS, "prompt '%s' takes no argument '%s'"
				  " (its one argument is 'space')", pr->name, key);
			return NULL;
		}
		space = json_string_value(v);
	}
	if (!space || !*space)
		mcp_failf(fail, MCP_INVALID_PARAMS, "prompt '%s' needs the argument 'space' "
			  "(a Space name, as a string)", pr->name);
	return space && *space ? space : NULL;
}

/* prompts/get's result from the operation's {text, ...} for space. */
static json_t *prompt_result(const struct prompt *pr, const char *space, const json_t *doc)
{
	return json_pack("{s:s+++, s:[{s:s, s:{s:s, s:O}}]}",
			 "description", pr->what, " of the Space '", space, "'",
			 "messages", "role", "user", "content", "type", "text",
			 "text", json_object_get(doc, "text"));
}

json_t *mcp_prompts_get(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct prompt *pr = find_prompt(name);
	const char *space;
	struct smr_err err = SMR_ERR_INIT;
	json_t *p, *doc = NULL, *out = NULL;
	enum smr_rc rc;

	if (!name)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "prompts/get needs a string 'name'");
	if (!pr)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "unknown prompt '%s' (prompts/list "
				 "names them)", name);
	space = space_argument(pr, json_object_get(params, "arguments"), fail);
	if (!space)
		return NULL;
	p = json_pack("{s:s}", "space", space);
	if (pr->tools)
		json_object_set_new(p, "tools", json_string(pr->tools));
	rc = s->call(s->cls, pr->op, p, &doc, &err);
	if (rc == SMR_ENOTFOUND || rc == SMR_EINVAL || rc == SMR_EUSAGE)
		mcp_failf(fail, MCP_INVALID_PARAMS, "%s", err.msg);
	else if (rc)
		mcp_failf(fail, MCP_INTERNAL_ERROR, "%s", err.msg);
	else
		out = prompt_result(pr, space, doc);
	json_decref(p);
	json_decref(doc);
	return out;
}

/* Whether ref's argument arg is a Space name: the prompt's, a HEAD template's. */
static int completes_space(const json_t *ref, const char *arg)
{
	const char *type = json_string_value(json_object_get(ref, "type"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uri = json_string_value(json_object_get(ref, "uri"));

	if (!strcmp(type, "ref/prompt"))
		return find_prompt(name) && !strcmp(arg, "space");
	return uri && !strcmp(arg, "name") && (!strcmp(uri, "smriti://spaces/{name}/head") ||
					       !strcmp(uri, "smriti://spaces/{name}/head.json"));
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* {values, total, hasMore}: the names in spaces with a HEAD starting with prefix. */
static json_t *matching_names(const json_t *spaces, const char *prefix)
{
	size_t i, n = 0, len = strlen(prefix);
	const char **v = xcalloc(json_array_size(spaces) + 1, sizeof(*v));
	const char *name;
	json_t *sp, *values = json_array();

	json_array_foreach(spaces, i, sp) {
		name = json_string_value(json_object_get(sp, "name"));
		if (name && json_is_string(json_object_get(sp, "head")) &&
		    !strncasecmp(name, prefix, len))
			v[n++] = name;
	}
	qsort(v, n, sizeof(*v), by_string);
	for (i = 0; i < n && i < COMPLETION_MAX; i++)
		json_array_append_new(values, mcp_json_text(v[i]));
	free(v);
	return json_pack("{s:o, s:I, s:b}", "values", values, "total", (json_int_t)n,
			 "hasMore", n > COMPLETION_MAX);
}

json_t *mcp_completion_complete(struct mcp_session *s, const json_t *params,
				struct mcp_fail *fail)
{
	const json_t *ref = json_object_get(params, "ref");
	const json_t *arg = json_object_get(params, "argument");
	const char *type = json_string_value(json_object_get(ref, "type"));
	const char *name = json_string_value(json_object_get(arg, "name"));
	const char *value = json_string_value(json_object_get(arg, "value"));
	struct smr_err err = SMR_ERR_INIT;
	json_t *spaces = NULL, *out;

	if (!type || (strcmp(type, "ref/prompt") && strcmp(type, "ref/resource")))
		return mcp_failf(fail, MCP_INVALID_PARAMS, "completion/complete needs 'ref' with "
				 "type \"ref/prompt\" (and a name) or \"ref/resource\" (and a uri)");
	if (!name || !value)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "completion/complete needs 'argument' "
				 "with a string 'name' and a string 'value'");
	if (!completes_space(ref, name))
		return json_pack("{s:{s:[], s:i, s:b}}", "completion", "values", "total", 0,
				 "hasMore", 0);
	if (s->call(s->cls, "space.list", NULL, &spaces, &err)) {
		json_decref(spaces);
		return mcp_failf(fail, MCP_INTERNAL_ERROR, "cannot list spaces: %s", err.msg);
	}
	out = json_pack("{s:o}", "completion", matching_names(spaces, value));
	json_decref(spaces);
	return out;
}
