/*
 * cmd_checkpoint.c -- `smriti checkpoint create` (alias `smriti commit`):
 * gather a checkpoint's fields from flags, files and JSON, and write it.
 */
#include "cli/cli.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INPUT_MAX (16u << 20)      /* --from-json and artifact files */

static const struct cli_cmd checkpoint_cmd = {
	"checkpoint",
	"checkpoint create SPACE [--title T] [--summary S] [--decision D]...\n"
	"         [--assumption A]... [--task T]... [--question Q]... [--entity E]...\n"
	"         [--artifact NAME=@FILE]... [--meta KEY=VALUE]... [--from-json FILE|-]\n"
	"         [--parent HASH] [--author NAME] [--json]\n"
	"       (alias: smriti commit SPACE ...)",
	cmd_checkpoint, 0,
};

enum {
	OPT_TITLE = 1, OPT_SUMMARY, OPT_DECISION, OPT_ASSUMPTION, OPT_TASK, OPT_QUESTION,
	OPT_ENTITY, OPT_ARTIFACT, OPT_META, OPT_FROM_JSON, OPT_PARENT, OPT_AUTHOR, OPT_JSON,
};

static const struct option opts[] = {
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "message", required_argument, NULL, OPT_TITLE },
	{ "summary", required_argument, NULL, OPT_SUMMARY },
	{ "decision", required_argument, NULL, OPT_DECISION },
	{ "assumption", required_argument, NULL, OPT_ASSUMPTION },
	{ "task", required_argument, NULL, OPT_TASK },
	{ "question", required_argument, NULL, OPT_QUESTION },
	{ "entity", required_argument, NULL, OPT_ENTITY },
	{ "artifact", required_argument, NULL, OPT_ARTIFACT },
	{ "meta", required_argument, NULL, OPT_META },
	{ "from-json", required_argument, NULL, OPT_FROM_JSON },
	{ "parent", required_argument, NULL, OPT_PARENT },
	{ "author", required_argument, NULL, OPT_AUTHOR },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ckpt_args {
	json_t *fields;          /* the checkpoint being assembled */
	const char *from_json, *parent, *author;
	int json;
};

static int check_utf8(const char *opt, const char *s)
{
	if (!utf8_valid(s, strlen(s)))
		return cli_fail(SMR_EINVAL, "the value of --%s is not valid UTF-8", opt);
	return 0;
}

/* Appends item to fields[list], creating the array if needed. */
static void append_item(json_t *fields, const char *list, json_t *item)
{
	json_t *arr = json_object_get(fields, list);

	if (!arr) {
		arr = json_array();
		json_object_set_new(fields, list, arr);
	}
	json_array_append_new(arr, item);
}

static int add_artifact(json_t *fields, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char *name, *content = NULL;
	size_t len = 0;
	struct smr_err err = SMR_ERR_INIT;
	int rc = 0;

	if (!eq || eq == spec || eq[1] != '@' || !eq[2])
		return cli_fail(SMR_EUSAGE, "--artifact wants NAME=@FILE, got '%s'", spec);
	name = xstrndup(spec, (size_t)(eq - spec));
	if (sys_read_file(eq + 2, INPUT_MAX, &content, &len, &err))
		rc = cli_fail(err.code, "artifact '%s': %s", name, err.msg);
	else if (!utf8_valid(content, len) || strlen(content) != len)
		rc = cli_fail(SMR_EINVAL, "artifact file '%s' is not UTF-8 text", eq + 2);
	else if (!utf8_valid(name, strlen(name)))
		rc = cli_fail(SMR_EINVAL, "artifact name is not valid UTF-8");
	else
		append_item(fields, "artifacts",
			    json_pack("{s:s, s:s, s:s}", "name", name, "kind", "text",
				      "content", content));
	free(name);
	free(content);
	return rc;
}

static int add_meta(json_t *fields, const char *spec)
{
	const char *eq = strchr(spec, '=');
	json_t *meta = json_object_get(fields, "metadata");
	char *key;

	if (!eq || eq == spec)
		return cli_fail(SMR_EUSAGE, "--meta wants KEY=VALUE, got '%s'", spec);
	if (!meta) {
		meta = json_object();
		json_object_set_new(fields, "metadata", meta);
	}
	if (!json_is_object(meta))
		return cli_fail(SMR_EINVAL, "'metadata' must be an object");
	key = xstrndup(spec, (size_t)(eq - spec));
	json_object_set_new(meta, key, json_string(eq + 1));
	free(key);
	return 0;
}

static const char *list_of(int opt)
{
	switch (opt) {
	case OPT_DECISION:
		return "decisions";
	case OPT_ASSUMPTION:
		return "assumptions";
	case OPT_TASK:
		return "tasks";
	case OPT_QUESTION:
		return "open_questions";
	case OPT_ENTITY:
		return "entities";
	}
	return NULL;
}

static int take_option(int c, const char *val, void *arg)
{
	struct ckpt_args *a = arg;
	const struct option *o;

	if (c == 'm')
		c = OPT_TITLE;
	for (o = opts; o->name && o->val != c; o++)
		;
	if (o->name && o->has_arg && check_utf8(o->name, val))
		return 2;
	switch (c) {
	case OPT_TITLE:
		json_object_set_new(a->fields, "title", json_string(val));
		return 0;
	case OPT_SUMMARY:
		json_object_set_new(a->fields, "summary", json_string(val));
		return 0;
	case OPT_ARTIFACT:
		return add_artifact(a->fields, val);
	case OPT_META:
		return add_meta(a->fields, val);
	case OPT_FROM_JSON:
		a->from_json = val;
		return 0;
	case OPT_PARENT:
		a->parent = val;
		return 0;
	case OPT_AUTHOR:
		a->author = val;
		return 0;
	case OPT_JSON:
		a->json = 1;
		return 0;
	}
	if (list_of(c)) {
		append_item(a->fields, list_of(c), json_string(val));
		return 0;
	}
	return CLI_OPT_REFUSED;
}

/* Loads --from-json and lays the flags over it: scalars replace, list items append. */
static int merge_from_json(struct ckpt_args *a)
{
	char *text = NULL;
	size_t len = 0;
	struct smr_err err = SMR_ERR_INIT;
	json_error_t jerr;
	json_t *base, *v, *have;
	const char *key;

	if (sys_read_file(a->from_json, INPUT_MAX, &text, &len, &err))
		return cli_fail(err.code, "%s", err.msg);
	base = json_loadb(text, len, 0, &jerr);
	free(text);
	if (!base)
		return cli_fail(SMR_EINVAL, "cannot parse '%s': %s (line %d, column %d)",
				a->from_json, jerr.text, jerr.line, jerr.column);
	if (!json_is_object(base)) {
		json_decref(base);
		return cli_fail(SMR_EINVAL, "'%s' must hold a JSON object", a->from_json);
	}
	json_object_foreach(a->fields, key, v) {
		have = json_object_get(base, key);
		if (json_is_array(v) && json_is_array(have))
			json_array_extend(have, v);
		else if (json_is_object(v) && json_is_object(have))
			json_object_update(have, v);
		else
			json_object_set(base, key, v);
	}
	json_decref(a->fields);
	a->fields = base;
	return 0;
}

static void print_created(const json_t *c)
{
	const char *parent = json_string_value(json_object_get(c, "parent_hash"));

	printf("[%s%s %.12s] %s\n", json_string_value(json_object_get(c, "space")),
	       parent ? "" : " (root)", json_string_value(json_object_get(c, "commit_hash")),
	       json_string_value(json_object_get(c, "title")));
}

static int create(int argc, char **argv, struct cli_ctx *ctx)
{
	struct ckpt_args a = { json_object(), NULL, NULL, NULL, 0 };
	json_t *res = NULL;
	int first, rc;

	rc = cli_options(&checkpoint_cmd, argc, argv, "hm:", opts, "unknown option", take_option,
			 &a, &first);
	if (!rc && argc - first != 1)
		rc = cli_usage(&checkpoint_cmd, "give exactly one SPACE");
	if (!rc && a.from_json)
		rc = merge_from_json(&a);
	if (!rc && !a.author && !json_object_get(a.fields, "author"))
		a.author = cli_default_author();
	if (!rc)
		rc = cli_call(ctx, "checkpoint.create",
			      json_pack("{s:s, s:O, s:s?, s:s?}", "space", argv[first],
					"checkpoint", a.fields, "parent", a.parent,
					"author", a.author), &res);
	if (!rc && a.json)
		cli_print_json(res);
	else if (!rc)
		print_created(res);
	json_decref(res);
	json_decref(a.fields);
	return rc;
}

int cmd_checkpoint(int argc, char **argv, struct cli_ctx *ctx)
{
	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", checkpoint_cmd.usage);
		return 0;
	}
	if (argc < 2)
		return cli_usage(&checkpoint_cmd, "missing subcommand");
	if (!strcmp(argv[1], "create"))
		return create(argc - 1, argv + 1, ctx);
	return cli_usage(&checkpoint_cmd, "unknown subcommand 'checkpoint %s'", argv[1]);
}

int cmd_commit(int argc, char **argv, struct cli_ctx *ctx)
{
	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", checkpoint_cmd.usage);
		return 0;
	}
	return create(argc, argv, ctx);
}
