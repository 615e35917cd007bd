/*
 * cmd_space.c -- `smriti space create|list|rename|delete`.
 */
#include "cli/cli.h"
#include "util/utf8.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const struct cli_cmd space_cmd = {
	"space",
	"space create NAME [--description TEXT] [--json]\n"
	"       smriti space list [--json | --names] [--limit N] [--after NAME]\n"
	"       smriti space rename NAME NEWNAME [--json]\n"
	"       smriti space delete NAME --yes [--json]",
	cmd_space, 0,
};

enum { OPT_JSON = 1, OPT_YES, OPT_DESC, OPT_NAMES, OPT_LIMIT, OPT_AFTER };

static const struct option space_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "yes", no_argument, NULL, OPT_YES },
	{ "names", no_argument, NULL, OPT_NAMES },
	{ "description", required_argument, NULL, OPT_DESC },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "after", required_argument, NULL, OPT_AFTER },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct space_args {
	int json, yes, names;
	long limit;                  /* space list: 0 for every Space */
	const char *description, *after;
	int npos;
	char **pos;
};

static int take(int c, const char *val, void *arg)
{
	struct space_args *a = arg;
	char *end;

	switch (c) {
	case OPT_JSON:
		a->json = 1;
		return 0;
	case OPT_YES:
		a->yes = 1;
		return 0;
	case OPT_NAMES:
		a->names = 1;
		return 0;
	case OPT_DESC:
		a->description = val;
		return 0;
	case OPT_LIMIT:
		/* as log's: 0 is refused, and leaving --limit out lists every Space */
		a->limit = strtol(val, &end, 10);
		if (*end || !*val || a->limit < 1)
			return cli_usage(&space_cmd, "--limit wants a number >= 1 (leave it out for"
					 " every Space), got '%s'", val);
		return 0;
	case OPT_AFTER:
		a->after = val;
		return 0;
	}
	return CLI_OPT_REFUSED;
}

static int parse(int argc, char **argv, struct space_args *a)
{
	int rc, first;

	memset(a, 0, sizeof(*a));
	rc = cli_options(&space_cmd, argc, argv, "h", space_opts, "unknown option", take, a,
			 &first);
	a->npos = argc - first;
	a->pos = argv + first;
	return rc;
}

static int print_space(int rc, json_t *res, int json, const char *verb)
{
	if (rc)
		return rc;
	if (json)
		cli_print_json(res);
	else
		printf("%s space '%s'\n", verb, json_string_value(json_object_get(res, "name")));
	json_decref(res);
	return 0;
}

static int space_create(struct cli_ctx *ctx, struct space_args *a)
{
	json_t *res = NULL;
	int rc;

	if (a->npos != 1)
		return cli_usage(&space_cmd, "space create takes one NAME");
	if (!utf8_valid(a->pos[0], strlen(a->pos[0])) ||
	    (a->description && !utf8_valid(a->description, strlen(a->description))))
		return cli_fail(SMR_EINVAL, "space name and description must be valid UTF-8");
	rc = cli_call(ctx, "space.create",
		      json_pack("{s:s, s:s?}", "name", a->pos[0], "description", a->description),
		      &res);
	return print_space(rc, res, a->json, "created");
}

/*
 * One name a line, exactly as stored: for scripts and shell completion
 * (a name holds no control character, so a line is a name).
 */
static void print_names(const json_t *spaces)
{
	const json_t *s;
	size_t i;

	json_array_foreach(spaces, i, s)
		printf("%s\n", json_string_value(json_object_get(s, "name")));
}

static int space_list(struct cli_ctx *ctx, struct space_args *a)
{
	json_t *res = NULL;
	int rc;

	if (a->npos != 0)
		return cli_usage(&space_cmd, "space list takes no arguments");
	if (a->json && a->names)
		return cli_usage(&space_cmd, "--json and --names are two forms: pick one");
	rc = cli_call(ctx, "space.list", json_pack("{s:s?, s:I}", "after", a->after, "limit",
						   (json_int_t)a->limit), &res);
	if (rc)
		return rc;
	if (a->json)
		cli_print_json(res);
	else if (a->names)
		print_names(res);
	else
		render_spaces(res);
	json_decref(res);
	return 0;
}

static int space_rename(struct cli_ctx *ctx, struct space_args *a)
{
	json_t *res = NULL;
	int rc;

	if (a->npos != 2)
		return cli_usage(&space_cmd, "space rename takes NAME and NEWNAME");
	if (!utf8_valid(a->pos[1], strlen(a->pos[1])))
		return cli_fail(SMR_EINVAL, "space name must be valid UTF-8");
	rc = cli_call(ctx, "space.rename",
		      json_pack("{s:s, s:s}", "space", a->pos[0], "new_name", a->pos[1]), &res);
	return print_space(rc, res, a->json, "renamed to");
}

static int space_delete(struct cli_ctx *ctx, struct space_args *a)
{
	json_t *res = NULL;
	int rc;

	if (a->npos != 1)
		return cli_usage(&space_cmd, "space delete takes one NAME");
	if (!a->yes)
		return cli_fail(SMR_EUSAGE,
				"deleting space '%s' removes all its checkpoints and sessions;"
				" add --yes to confirm", a->pos[0]);
	rc = cli_call(ctx, "space.delete", json_pack("{s:s}", "space", a->pos[0]), &res);
	if (rc)
		return rc;
	if (a->json)
		cli_print_json(res);
	else
		printf("deleted space '%s'\n", json_string_value(json_object_get(res, "deleted")));
	json_decref(res);
	return 0;
}

int cmd_space(int argc, char **argv, struct cli_ctx *ctx)
{
	struct space_args a;
	const char *sub;
	int rc;

	if (argc < 2 || cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", space_cmd.usage);
		return argc < 2 && !cli_wants_help(argc, argv) ? 2 : 0;
	}
	sub = argv[1];
	rc = parse(argc - 1, argv + 1, &a);
	if (rc)
		return rc;
	if ((a.limit || a.after) && strcmp(sub, "list") && strcmp(sub, "ls"))
		return cli_usage(&space_cmd, "--limit and --after are for space list");
	if (!strcmp(sub, "create"))
		return space_create(ctx, &a);
	if (!strcmp(sub, "list") || !strcmp(sub, "ls"))
		return space_list(ctx, &a);
	if (!strcmp(sub, "rename"))
		return space_rename(ctx, &a);
	if (!strcmp(sub, "delete") || !strcmp(sub, "rm"))
		return space_delete(ctx, &a);
	return cli_usage(&space_cmd, "unknown subcommand 'space %s'", sub);
}
