/*
 * cmd_checkpoint.c -- `smriti checkpoint create` (alias `smriti commit`):
 * gather a checkpoint's fields from flags, files and JSON, and write it.
 *
 * The flags change the parent's state (checkpoint.update: --decision adds,
 * --drop removes, --done marks a task done, --title replaces), so the next
 * checkpoint keeps what it does not mention.  --replace and --from-json
 * write exactly the state given instead (checkpoint.create).
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
	"         [--artifact NAME=@FILE]... [--drop FIELD=TEXT|N]... [--done TASK|N]...\n"
	"         [--reopen TASK|N]... [--meta KEY=VALUE]... [--replace | --from-json FILE|-]\n"
	"         [--parent HASH] [--author NAME] [--json | --quiet]\n"
	"       (alias: smriti commit SPACE ...)\n"
	"       Starts from the parent (HEAD, or --parent): items are added, --drop removes\n"
	"       one (FIELD is decision, assumption, task, question, entity or artifact; an\n"
	"       item is named by its text or the number `smriti show` prints), --title and\n"
	"       --summary replace.  --replace and --from-json write exactly what is given.\n"
	"       --quiet (-q) prints only the new checkpoint's hash.",
	cmd_checkpoint, 0,
};

enum {
	OPT_TITLE = 1, OPT_SUMMARY, OPT_DECISION, OPT_ASSUMPTION, OPT_TASK, OPT_QUESTION,
	OPT_ENTITY, OPT_ARTIFACT, OPT_META, OPT_FROM_JSON, OPT_PARENT, OPT_AUTHOR, OPT_JSON,
	OPT_DROP, OPT_DONE, OPT_REOPEN, OPT_REPLACE, OPT_QUIET = 'q',
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
	{ "drop", required_argument, NULL, OPT_DROP },
	{ "done", required_argument, NULL, OPT_DONE },
	{ "reopen", required_argument, NULL, OPT_REOPEN },
	{ "replace", no_argument, NULL, OPT_REPLACE },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ckpt_args {
	json_t *fields;          /* the checkpoint being assembled */
	json_t *changes;         /* --drop, --done, --reopen as patch fields */
	const char *from_json, *parent, *author;
	int json, replace, quiet;
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

/* --drop FIELD=TEXT into changes.drop.FIELD (the field name is checked by the operation). */
static int add_drop(json_t *changes, const char *spec)
{
	const char *eq = strchr(spec, '=');
	json_t *drop = json_object_get(changes, "drop");
	char *field;

	if (!eq || eq == spec || !eq[1])
		return cli_fail(SMR_EUSAGE,
				"--drop wants FIELD=TEXT (or FIELD=N), e.g. --drop decision=\"Use X\";"
				" got '%s'", spec);
	if (!drop) {
		drop = json_object();
		json_object_set_new(changes, "drop", drop);
	}
	field = xstrndup(spec, (size_t)(eq - spec));
	append_item(drop, field, json_string(eq + 1));
	free(field);
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
	case OPT_REPLACE:
		a->replace = 1;
		return 0;
	case OPT_QUIET:
		a->quiet = 1;
		return 0;
	case OPT_DROP:
		return add_drop(a->changes, val);
	case OPT_DONE:
		append_item(a->changes, "done", json_string(val));
		return 0;
	case OPT_REOPEN:
		append_item(a->changes, "reopen", json_string(val));
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

static void print_created(const json_t *c, const char *changed)
{
	const char *parent = json_string_value(json_object_get(c, "parent_hash"));

	printf("[%s%s %.12s] %s\n", json_string_value(json_object_get(c, "space")),
	       parent ? "" : " (root)", json_string_value(json_object_get(c, "commit_hash")),
	       json_string_value(json_object_get(c, "title")));
	if (changed)
		printf(" %s\n", changed);
}

/* The flags as a patch on the parent: lists to add, the rest as they are; new reference. */
static json_t *patch_of(const struct ckpt_args *a)
{
	json_t *patch = json_deep_copy(a->changes), *add = json_object(), *v;
	const char *key;

	json_object_foreach(a->fields, key, v) {
		if (json_is_array(v))
			json_object_set(add, key, v);
		else
			json_object_set(patch, key, v);
	}
	if (json_object_size(add))
		json_object_set(patch, "add", add);
	json_decref(add);
	json_object_del(patch, "author");
	return patch;
}

/* Writes the flags on top of the parent (checkpoint.update). */
static int update(struct cli_ctx *ctx, const struct ckpt_args *a, const char *space)
{
	json_t *params = patch_of(a), *res = NULL;
	int rc;

	/* none: null, which cli_call() fills with the project's Space */
	json_object_set_new(params, "space", space ? json_string(space) : json_null());
	if (a->parent)
		json_object_set_new(params, "parent", json_string(a->parent));
	if (a->author)
		json_object_set_new(params, "author", json_string(a->author));
	rc = cli_call(ctx, "checkpoint.update", params, &res);
	if (!rc && a->quiet)
		cli_print_hash(json_object_get(json_object_get(res, "checkpoint"), "commit_hash"));
	else if (!rc && a->json)
		cli_print_json(json_object_get(res, "checkpoint"));
	else if (!rc)
		print_created(json_object_get(res, "checkpoint"),
			      json_string_value(json_object_get(res, "changed")));
	json_decref(res);
	return rc;
}

/* Writes exactly the state given (checkpoint.create). */
static int create_exact(struct cli_ctx *ctx, const struct ckpt_args *a, const char *space)
{
	json_t *res = NULL;
	int rc;

	rc = cli_call(ctx, "checkpoint.create",
		      json_pack("{s:s?, s:O, s:s?, s:s?}", "space", space, "checkpoint", a->fields,
				"parent", a->parent, "author", a->author), &res);
	if (!rc && a->quiet)
		cli_print_hash(json_object_get(res, "commit_hash"));
	else if (!rc && a->json)
		cli_print_json(res);
	else if (!rc)
		print_created(res, NULL);
	json_decref(res);
	return rc;
}

static int create(int argc, char **argv, struct cli_ctx *ctx)
{
	struct ckpt_args a = { json_object(), json_object(), NULL, NULL, NULL, 0, 0, 0 };
	int first, rc, exact;

	rc = cli_options(&checkpoint_cmd, argc, argv, "hm:q", opts, "unknown option", take_option,
			 &a, &first);
	if (!rc && argc - first > 1)
		rc = cli_usage(&checkpoint_cmd, "give one SPACE (or none in a project: see "
			       "'smriti init')");
	exact = a.replace || a.from_json;
	if (!rc && a.json && a.quiet)
		rc = cli_usage(&checkpoint_cmd, "give --json or --quiet, not both");
	if (!rc && exact && json_object_size(a.changes))
		rc = cli_usage(&checkpoint_cmd, "--drop, --done and --reopen change the parent's"
			       " state; they do not go with --replace or --from-json");
	if (!rc && !exact && !json_object_size(a.changes) && !json_object_size(a.fields))
		rc = cli_usage(&checkpoint_cmd, "nothing to change: give --decision, --task, ...,"
			       " --drop, --done, --title or --summary");
	if (!rc && a.replace && a.from_json)
		rc = cli_usage(&checkpoint_cmd, "give --replace or --from-json, not both");
	if (!rc && a.from_json)
		rc = merge_from_json(&a);
	if (!rc && !a.author && !json_object_get(a.fields, "author"))
		a.author = cli_default_author();
	if (!rc && !a.author)
		a.author = json_string_value(json_object_get(a.fields, "author"));
	if (!rc)
		rc = exact ? create_exact(ctx, &a, argc > first ? argv[first] : NULL) :
			     update(ctx, &a, argc > first ? argv[first] : NULL);
	json_decref(a.fields);
	json_decref(a.changes);
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
