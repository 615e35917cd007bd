/*
 * cmd_bundle.c -- `smriti export [SPACE...] [-o FILE]` writes one bundle
 * (domain/bundle.h) of the named Spaces, or of all of them; `smriti export
 * --git DIR SPACE [--branch NAME] [--force]` turns one into a branch of a git
 * repository (ops_git_export, here on the local machine even when the Space
 * is on a server); `smriti import
 * FILE|-` reads a bundle back, all or nothing.  Thin mappings onto the
 * "export" and "import" operations.
 */
#include "cli/cli.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 1, OPT_ALL, OPT_OUTPUT, OPT_GIT, OPT_BRANCH, OPT_FORCE };

static const struct option bundle_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "git", required_argument, NULL, OPT_GIT },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct bundle_args {
	const struct cli_cmd *cmd;
	int json, all;
	const char *output, *git;
	struct ops_git_opts to;   /* --branch, --force */
};

static int take(int c, const char *val, void *arg)
{
	struct bundle_args *a = arg;
	int is_export = !strcmp(a->cmd->name, "export");

	if (c == OPT_JSON)
		a->json = 1;
	else if (c == OPT_GIT && is_export)
		a->git = val;
	else if (c == OPT_BRANCH && is_export)
		a->to.branch = val;
	else if (c == OPT_FORCE && is_export)
		a->to.force = 1;
	else if (c == OPT_ALL && is_export)
		a->all = 1;
	else if ((c == OPT_OUTPUT || c == 'o') && is_export)
		a->output = val;
	else
		return CLI_OPT_REFUSED;
	return 0;
}

static int parse(const char *name, int argc, char **argv, struct bundle_args *a, int *first)
{
	memset(a, 0, sizeof(*a));
	a->cmd = cli_find(name);
	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", a->cmd->usage);
		return CLI_OPT_DONE;
	}
	return cli_options(a->cmd, argc, argv, "ho:", bundle_opts,
			   "unknown option or missing value", take, a, first);
}

/* The bundle's text and a newline to f; nonzero on a write error. */
static int put_bundle(const json_t *res, FILE *f)
{
	const json_t *text = json_object_get(res, "bundle_text");

	if (json_is_string(text))   /* a local export: its text as written */
		return fwrite(json_string_value(text), 1, json_string_length(text), f) !=
		       json_string_length(text) || fputc('\n', f) == EOF;
	return json_dumpf(res, f, JSON_COMPACT) || fputc('\n', f) == EOF;
}

/*
 * Writes the bundle (the export's result) to path (or stdout for NULL /
 * "-"), replacing the file only once it is whole.
 */
static int write_bundle(const json_t *doc, const char *path)
{
	char *tmp;
	FILE *f;
	int bad;

	if (!path || !strcmp(path, "-")) {
		bad = put_bundle(doc, stdout) || fflush(stdout);
		return bad ? cli_fail(SMR_EINTERNAL, "cannot write the bundle: %s",
				      strerror(errno)) : 0;
	}
	tmp = xasprintf("%s.part", path);
	f = fopen(tmp, "w");
	bad = !f || put_bundle(doc, f);
	if (f && fclose(f))
		bad = 1;
	if (!bad && rename(tmp, path))
		bad = 1;
	if (bad) {
		int e = errno;

		remove(tmp);
		free(tmp);
		return cli_fail(SMR_EINTERNAL, "cannot write '%s': %s", path, strerror(e));
	}
	free(tmp);
	return 0;
}

/* export --git DIR SPACE: the bundle (local or remote), written into a git repository here. */

/* "trip: 1 new commit, 5 in all, branch smriti/trip of DIR": git's commits, counted right. */
static void print_export_line(const json_t *rep, const char *dir)
{
	long long added = json_integer_value(json_object_get(rep, "added"));

	printf("%s: %lld new commit%s, %lld in all, branch %s of %s\n",
	       json_string_value(json_object_get(rep, "space")), added, added == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(rep, "commits")),
	       json_string_value(json_object_get(rep, "branch")), dir);
}
static int export_git(struct cli_ctx *ctx, const struct bundle_args *a, const char *space)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *bundle = NULL, *rep = NULL;
	int rc = cli_call(ctx, "export", json_pack("{s:[s]}", "spaces", space), &bundle);
	enum smr_rc src;

	if (rc)
		return rc;
	src = ops_git_export(bundle, a->git, &a->to, &rep, &err);
	json_decref(bundle);
	if (src)
		return cli_fail(src, "%s", err.msg);
	if (a->json)
		cli_print_json(rep);
	else
		print_export_line(rep, a->git);
	json_decref(rep);
	return 0;
}

int cmd_export(int argc, char **argv, struct cli_ctx *ctx)
{
	struct bundle_args a;
	json_t *res = NULL, *spaces, *params;
	int first, rc = parse("export", argc, argv, &a, &first);

	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (a.git && (a.all || a.output || argc - first != 1))
		return cli_usage(a.cmd, "--git DIR takes exactly one SPACE");
	if (!a.git && (a.to.branch || a.to.force))
		return cli_usage(a.cmd, "--branch and --force go with --git DIR");
	if (a.git)
		return export_git(ctx, &a, argv[first]);
	if (a.all && first < argc)
		return cli_usage(a.cmd, "give SPACE names or --all, not both");
	if (!a.all && first == argc)
		return cli_usage(a.cmd, "give the SPACEs to export, or --all");
	spaces = json_array();
	for (int i = first; i < argc; i++)
		json_array_append_new(spaces, json_string(argv[i]));
	params = a.all ? (json_decref(spaces), json_object()) : json_pack("{s:o}", "spaces", spaces);
	if (!ctx->remote)   /* the text as written: nothing parsed on the way */
		json_object_set_new(params, "text", json_true());
	rc = cli_call(ctx, "export", params, &res);
	if (!rc)
		rc = write_bundle(res, a.output);
	json_decref(res);
	return rc;
}

static void render_import(const json_t *r)
{
	size_t i;
	json_t *s;

	json_array_foreach(json_object_get(r, "spaces"), i, s)
		printf("%s space '%s': %lld checkpoints, %lld sessions, %lld turns, %lld reflog"
		       " entries added\n",
		       json_is_true(json_object_get(s, "created")) ? "created" : "updated",
		       json_string_value(json_object_get(s, "name")),
		       (long long)json_integer_value(json_object_get(s, "checkpoints")),
		       (long long)json_integer_value(json_object_get(s, "sessions")),
		       (long long)json_integer_value(json_object_get(s, "turns")),
		       (long long)json_integer_value(json_object_get(s, "reflog")));
}

/* import on the local store: the file's text to the operation, which walks it. */
static int import_local(struct cli_ctx *ctx, const struct bundle_args *a, const char *path)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL, *text;
	size_t len = 0;
	char *s = NULL;
	int rc;

	if (sys_read_file(path, 0, &s, &len, &err))
		return cli_fail(SMR_EINVAL, "cannot read the bundle: %s", err.msg);
	text = json_stringn(s, len);
	free(s);
	if (!text)
		return cli_fail(SMR_EINVAL, "cannot read the bundle '%s': not UTF-8 text", path);
	rc = cli_call(ctx, "import", json_pack("{s:o}", "bundle_text", text), &res);
	if (!rc && a->json)
		cli_print_json(res);
	else if (!rc)
		render_import(res);
	json_decref(res);
	return rc;
}

int cmd_import(int argc, char **argv, struct cli_ctx *ctx)
{
	struct bundle_args a;
	json_error_t jerr;
	json_t *doc, *res = NULL;
	int first, rc = parse("import", argc, argv, &a, &first);

	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc - first != 1)
		return cli_usage(a.cmd, "give one bundle FILE (or - for standard input)");
	if (!ctx->remote)
		return import_local(ctx, &a, argv[first]);
	if (!strcmp(argv[first], "-"))
		doc = json_loadf(stdin, 0, &jerr);
	else
		doc = json_load_file(argv[first], 0, &jerr);
	if (!doc)
		return cli_fail(SMR_EINVAL, "cannot read the bundle '%s': %s (line %d)",
				argv[first], jerr.text, jerr.line);
	rc = cli_call(ctx, "import", json_pack("{s:o}", "bundle", doc), &res);
	if (!rc && a.json)
		cli_print_json(res);
	else if (!rc)
		render_import(res);
	json_decref(res);
	return rc;
}
