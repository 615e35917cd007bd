/*
 * cmd_ingest.c -- `smriti ingest FILE|- --space SPACE`: store a pasted or
 * exported conversation (labelled text, Markdown, ChatGPT or Claude JSON)
 * as a new session of a Space, for backfill (the V1 ingestion path).
 */
#include "cli/cli.h"
#include "domain/ingest.h"
#include "util/sys.h"
#include "util/utf8.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_SPACE = 1, OPT_FORMAT, OPT_TITLE, OPT_JSON };

static const struct option opts[] = {
	{ "space", required_argument, NULL, OPT_SPACE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ingest_args {
	const char *space, *format, *title, *file;
	int json;
};

static void print_help(const struct cli_cmd *cmd)
{
	printf("usage: smriti %s\n\n"
	       "Creates a session in SPACE holding the turns of a transcript read from FILE\n"
	       "(or stdin with '-').  Formats (detected unless --format is given):\n"
	       "  text      \"User: ...\" / \"Assistant: ...\" labels (also Human, You, Me,\n"
	       "            Claude, ChatGPT, AI)\n"
	       "  markdown  \"## User\" / \"## Assistant\" headings or \"**User:**\" labels\n"
	       "  chatgpt   one conversation of ChatGPT's conversations.json\n"
	       "  claude    one conversation of Claude's data export\n"
	       "Input is capped at 5 MiB and %d turns.\n", cmd->usage, INGEST_MAX_TURNS);
}

static int take(int c, const char *val, void *arg)
{
	struct ingest_args *a = arg;

	if (c == OPT_SPACE)
		a->space = val;
	else if (c == OPT_FORMAT)
		a->format = val;
	else if (c == OPT_TITLE)
		a->title = val;
	else if (c == OPT_JSON)
		a->json = 1;
	else
		return CLI_OPT_REFUSED;
	return 0;
}

static int parse_args(const struct cli_cmd *cmd, int argc, char **argv, struct ingest_args *a)
{
	int first, rc;

	memset(a, 0, sizeof(*a));
	rc = cli_options(cmd, argc, argv, "", opts, "unknown option or missing value", take, a,
			 &first);
	if (rc)
		return rc;
	if (argc - first != 1)
		return cli_usage(cmd, "give exactly one FILE (or '-' for stdin)");
	a->file = argv[first];
	if (a->title && !utf8_valid(a->title, strlen(a->title)))
		return cli_fail(SMR_EINVAL, "the value of --title is not valid UTF-8");
	return 0;
}

/* The file's text as a JSON string (it may hold NUL bytes; the operation refuses them). */
static int read_transcript(const char *path, json_t **out)
{
	struct smr_err err = SMR_ERR_INIT;
	char *text = NULL;
	size_t len = 0;

	if (sys_read_file(path, INGEST_MAX_BYTES, &text, &len, &err))
		return cli_fail(err.code, "cannot ingest: %s", err.msg);
	if (!utf8_valid(text, len)) {
		free(text);
		return cli_fail(SMR_EINVAL, "cannot ingest '%s': it is not UTF-8 text", path);
	}
	*out = json_stringn(text, len);
	free(text);
	return 0;
}

static void render_ingest(const json_t *res)
{
	const json_t *s = json_object_get(res, "session");

	printf("ingested %lld turns (%s) into space '%s'\nsession %s: %s\n",
	       (long long)json_integer_value(json_object_get(res, "turns")),
	       json_string_value(json_object_get(res, "format")),
	       json_string_value(json_object_get(s, "space")),
	       json_string_value(json_object_get(s, "id")),
	       json_string_value(json_object_get(s, "title")));
}

int cmd_ingest(int argc, char **argv, struct cli_ctx *ctx)
{
	const struct cli_cmd *cmd = cli_find("ingest");
	struct ingest_args a;
	json_t *text = NULL, *res = NULL;
	int rc;

	if (cli_wants_help(argc, argv)) {
		print_help(cmd);
		return 0;
	}
	rc = parse_args(cmd, argc, argv, &a);
	/* the Space is an option here: say which one, not "name a SPACE" */
	if (!rc && !a.space && !ctx->project.space)
		rc = cli_usage(cmd, "ingest needs --space SPACE (or a project's Space: run"
			       " 'smriti init SPACE' in the project)");
	if (!rc)
		rc = read_transcript(a.file, &text);
	if (rc)
		return rc;
	rc = cli_call(ctx, "ingest",
		      json_pack("{s:s?, s:o, s:s?, s:s?}", "space", a.space, "transcript", text,
				"format", a.format, "title", a.title), &res);
	if (rc)
		return rc;
	if (a.json)
		cli_print_json(res);
	else
		render_ingest(res);
	json_decref(res);
	return 0;
}
