/*
 * cmd_read.c -- the commands that read and move history: head, show, log,
 * diff, restore, handoff, fork and fsck.  Each is a thin mapping from arguments to
 * one operation and a renderer.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 1, OPT_LIMIT, OPT_INTO, OPT_AUTHOR, OPT_FIRST_PARENT, OPT_GRAPH, OPT_MESSAGE,
       OPT_RESTORE, OPT_QUIET };

static const struct option read_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "into", required_argument, NULL, OPT_INTO },
	{ "author", required_argument, NULL, OPT_AUTHOR },
	{ "first-parent", no_argument, NULL, OPT_FIRST_PARENT },
	{ "graph", no_argument, NULL, OPT_GRAPH },
	{ "message", required_argument, NULL, OPT_MESSAGE },
	{ "restore", no_argument, NULL, OPT_RESTORE },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct read_args {
	const struct cli_cmd *cmd;
	unsigned allowed;        /* 1 << OPT_x for each option the command takes */
	int json, first_parent, graph, restore, quiet;
	long limit;
	const char *into, *author, *message;
	int npos;
	char **pos;
};

static int take(int c, const char *val, void *arg)
{
	struct read_args *a = arg;
	char *end;

	if (c == 'n')
		c = OPT_LIMIT;
	if (c == 'm')
		c = OPT_MESSAGE;
	if (c == 'q')
		c = OPT_QUIET;
	if (c <= 0 || c > OPT_QUIET || !(a->allowed & (1u << c)))
		return CLI_OPT_REFUSED;
	if (c == OPT_QUIET)
		a->quiet = 1;
	if (c == OPT_MESSAGE)
		a->message = val;
	if (c == OPT_RESTORE)
		a->restore = 1;
	if (c == OPT_JSON)
		a->json = 1;
	if (c == OPT_FIRST_PARENT)
		a->first_parent = 1;
	if (c == OPT_GRAPH)
		a->graph = 1;
	if (c == OPT_INTO)
		a->into = val;
	if (c == OPT_AUTHOR)
		a->author = val;
	if (c == OPT_LIMIT) {
		/*
		 * git's -n 0 prints nothing, and a limit of 0 meaning "all" surprised
		 * people: 0 is refused, and leaving --limit out is the whole history.
		 */
		a->limit = strtol(val, &end, 10);
		if (*end || !*val || a->limit < 1)
			return cli_usage(a->cmd, "--limit wants a number >= 1 (leave it out for the"
					 " whole history), got '%s'", val);
	}
	return 0;
}

/* Parses the shared options; returns -1 after printing help, else an exit code. */
static int parse(const char *name, int argc, char **argv, unsigned allowed,
		 struct read_args *a)
{
	int rc, first;

	memset(a, 0, sizeof(*a));
	a->cmd = cli_find(name);
	a->allowed = allowed;
	a->limit = -1;
	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", a->cmd->usage);
		return -1;
	}
	rc = cli_options(a->cmd, argc, argv, "hn:m:q", read_opts, "unknown option", take, a, &first);
	a->npos = argc - first;
	a->pos = argv + first;
	if (!rc && a->json && a->quiet)
		rc = cli_usage(a->cmd, "give --json or --quiet, not both");
	return rc;
}

#define J (1u << OPT_JSON)
#define Q (1u << OPT_QUIET)      /* a write: --quiet prints HEAD's hash after it */

/* Prints res as JSON or with render, then frees it. */
static int output(int rc, json_t *res, int json, void (*render)(const json_t *))
{
	if (rc)
		return rc;
	if (json)
		cli_print_json(res);
	else
		render(res);
	json_decref(res);
	return 0;
}

/*
 * A write's output: under --quiet the hash at member key of res (key2 of
 * it when key2 is not NULL), else as output() does; frees res.
 */
static int written(int rc, json_t *res, const struct read_args *a,
		   void (*render)(const json_t *), const char *key, const char *key2)
{
	const json_t *v = json_object_get(res, key);

	if (rc || !a->quiet)
		return output(rc, res, a->json, render);
	cli_print_hash(key2 ? json_object_get(v, key2) : v);
	json_decref(res);
	return 0;
}

static int one_arg(const char *name, int argc, char **argv, struct cli_ctx *ctx,
		   const char *op, const char *key)
{
	struct read_args a;
	json_t *res = NULL;
	int rc = parse(name, argc, argv, J, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos > 1)
		return cli_usage(cli_find(name), "give one argument (or none in a project)");
	rc = cli_call(ctx, op, json_pack("{s:s?}", key, a.npos ? a.pos[0] : NULL), &res);
	return output(rc, res, a.json, render_checkpoint);
}

/* The hand-off note a HEAD document carries, and whether it still applies. */
static void render_note(const json_t *h)
{
	const char *author = json_string_value(json_object_get(h, "author"));
	const char *at = json_string_value(json_object_get(h, "created_at"));

	printf("\nHand-off note (%s%s%s):\n", author && *author ? author : "",
	       author && *author ? ", " : "", at ? at : "");
	printf("    %s\n", json_string_value(json_object_get(h, "note")));
	if (!json_is_true(json_object_get(h, "on_head")))
		printf("    (left on checkpoint %.12s; HEAD has moved since: check it still "
		       "applies)\n", json_string_value(json_object_get(h, "checkpoint")));
}

static void render_head(const json_t *c)
{
	const json_t *h = json_object_get(c, "handoff");

	render_checkpoint(c);
	if (h)
		render_note(h);
}

int cmd_head(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	int rc = parse("head", argc, argv, J, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos > 1)
		return cli_usage(cli_find("head"), "give one SPACE (or none in a project)");
	rc = cli_call(ctx, "head", json_pack("{s:s?}", "space", a.npos ? a.pos[0] : NULL),
		      &res);
	return output(rc, res, a.json, render_head);
}

static void render_handoff(const json_t *res)
{
	const json_t *c = json_object_get(res, "checkpoint");
	const char *from = json_string_value(json_object_get(json_object_get(c, "metadata"),
							     "restored_from"));

	printf("handed off %s at %.12s", json_string_value(json_object_get(c, "space")),
	       json_string_value(json_object_get(c, "commit_hash")));
	if (json_is_true(json_object_get(res, "restored")) && from)
		printf(" (restored from %.12s)", from);
	printf("\n");
}

int cmd_handoff(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	const char *author;
	int rc = parse("handoff", argc, argv,
		       J | Q | (1u << OPT_AUTHOR) | (1u << OPT_MESSAGE) | (1u << OPT_RESTORE), &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos > 2 || !a.message)
		return cli_usage(cli_find("handoff"), "give a SPACE, maybe a REF, and -m NOTE");
	if (a.restore && a.npos != 2)
		return cli_usage(cli_find("handoff"), "--restore needs the REF to restore");
	author = a.author ? a.author : cli_default_author();
	rc = cli_call(ctx, "handoff",
		      json_pack("{s:s?, s:s*, s:s, s:b, s:s?}", "space", a.npos ? a.pos[0] : NULL,
				"ref",
				a.npos == 2 ? a.pos[1] : NULL, "note", a.message, "restore",
				a.restore, "author", author), &res);
	return written(rc, res, &a, render_handoff, "checkpoint", "commit_hash");
}

int cmd_show(int argc, char **argv, struct cli_ctx *ctx)
{
	return one_arg("show", argc, argv, ctx, "show", "ref");
}

int cmd_log(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	int rc = parse("log", argc, argv, J | (1u << OPT_LIMIT) | (1u << OPT_FIRST_PARENT) |
		       (1u << OPT_GRAPH), &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos > 1)
		return cli_usage(cli_find("log"), "give one SPACE or REF (or none in a project)");
	rc = cli_call(ctx, "log",
		      json_pack("{s:s?, s:I, s:b, s:b}", "ref", a.npos ? a.pos[0] : NULL,
				"limit", (json_int_t)(a.limit < 0 ? 0 : a.limit),
				"first_parent", a.first_parent, "graph", a.graph), &res);
	return output(rc, res, a.json, render_log);
}

int cmd_diff(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	int rc = parse("diff", argc, argv, J, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos != 2)
		return cli_usage(cli_find("diff"), "give two REFs");
	rc = cli_call(ctx, "diff", json_pack("{s:s, s:s}", "from", a.pos[0], "to", a.pos[1]),
		      &res);
	return output(rc, res, a.json, render_diff);
}

int cmd_restore(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	const char *author;
	int rc = parse("restore", argc, argv, J | Q | (1u << OPT_AUTHOR), &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos < 1 || a.npos > 2)
		return cli_usage(cli_find("restore"), "give a SPACE and a REF (in a project, the"
				 " REF alone)");
	author = a.author ? a.author : cli_default_author();
	rc = cli_call(ctx, "restore",
		      json_pack("{s:s?, s:s, s:s?}", "space", a.npos == 2 ? a.pos[0] : NULL,
				"ref", a.pos[a.npos - 1],
				"author", author), &res);
	return written(rc, res, &a, render_checkpoint, "commit_hash", NULL);
}

static void render_fork(const json_t *sp)
{
	printf("forked into space '%s' at %.12s\n",
	       json_string_value(json_object_get(sp, "name")),
	       json_string_value(json_object_get(sp, "head")));
}

int cmd_fork(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	int rc = parse("fork", argc, argv, J | Q | (1u << OPT_INTO), &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos > 1 || !a.into)
		return cli_usage(cli_find("fork"), "give a REF and --into NEWSPACE");
	rc = cli_call(ctx, "fork", json_pack("{s:s?, s:s}", "ref", a.npos ? a.pos[0] : NULL,
					     "into", a.into),
		      &res);
	return written(rc, res, &a, render_fork, "head", NULL);
}

int cmd_fsck(int argc, char **argv, struct cli_ctx *ctx)
{
	struct read_args a;
	json_t *res = NULL;
	int rc = parse("fsck", argc, argv, J, &a), ok;

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.npos > 1)
		return cli_usage(cli_find("fsck"), "give at most one SPACE");
	rc = cli_call(ctx, "fsck", json_pack("{s:s*}", "space", a.npos ? a.pos[0] : NULL),
		      &res);
	if (rc)
		return rc;
	ok = json_is_true(json_object_get(res, "ok"));
	if (a.json)
		cli_print_json(res);
	else
		render_fsck(res);
	json_decref(res);
	return ok ? 0 : 1;
}
