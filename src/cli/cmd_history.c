/*
 * cmd_history.c -- `smriti reflog SPACE` (every move of a Space's HEAD,
 * newest first, as git prints its reflog), `smriti blame REF` (who
 * introduced each item, and when) and `smriti gc [--prune[=DATE]
 * [--expire=DATE]]` (lists soft-deleted Spaces; --prune removes them for
 * good, expires old reflog entries and removes what nothing reaches).  Thin mappings onto
 * the "reflog", "blame" and "gc" operations.
 */
#include "cli/cli.h"
#include "util/jfield.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHORT 12

enum { OPT_JSON = 1, OPT_LIMIT, OPT_PRUNE, OPT_EXPIRE };

static const struct option history_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "prune", optional_argument, NULL, OPT_PRUNE },
	{ "expire", required_argument, NULL, OPT_EXPIRE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct history_args {
	const struct cli_cmd *cmd;
	int json, prune;
	long limit;
	const char *before, *expire;
};

static int take(int c, const char *val, void *arg)
{
	struct history_args *a = arg;
	char *end;

	if (c == OPT_JSON) {
		a->json = 1;
	} else if (c == OPT_LIMIT && !strcmp(a->cmd->name, "reflog")) {
		a->limit = strtol(val, &end, 10);
		if (*end || !*val || a->limit < 0)
			return cli_usage(a->cmd, "--limit wants a number >= 0, got '%s'", val);
	} else if (c == OPT_PRUNE && !strcmp(a->cmd->name, "gc")) {
		a->prune = 1;
		a->before = val;
	} else if (c == OPT_EXPIRE && !strcmp(a->cmd->name, "gc")) {
		a->expire = val;
	} else {
		return CLI_OPT_REFUSED;
	}
	return 0;
}

static void render_reflog(const json_t *list)
{
	size_t i;
	json_t *e;

	json_array_foreach(list, i, e) {
		const char *h = json_string_value(json_object_get(e, "new"));

		printf("%-*.*s %s@{%zu}: %s  (%s%s%.19sZ)\n", SHORT, SHORT,
		       h ? h : "-", jfield_str(e, "space"), i, jfield_str(e, "reason"), jfield_str(e, "actor"),
		       *jfield_str(e, "actor") ? ", " : "", jfield_str(e, "created_at"));
	}
}

static void render_gc(const json_t *r)
{
	size_t i;
	json_t *sp;
	const json_t *deleted = json_object_get(r, "deleted");
	int pruned = json_is_true(json_object_get(r, "pruned"));

	json_array_foreach(deleted, i, sp)
		printf("%s deleted space %s (deleted %.19sZ, last checkpoint %.*s)\n",
		       pruned ? "removed" : "keeps", jfield_str(sp, "name"), jfield_str(sp, "deleted_at"), SHORT,
		       json_is_string(json_object_get(sp, "head")) ? jfield_str(sp, "head") : "none");
	if (!pruned && json_array_size(deleted))
		printf("run `smriti gc --prune` to remove them for good\n");
	if (!json_array_size(deleted))
		printf("no deleted spaces to remove\n");
	if (pruned)
		printf("expired %lld reflog entries; removed %lld checkpoints only they reached,"
		       " %lld unused chunks and %lld unused items\n",
		       (long long)json_integer_value(json_object_get(r, "expired_reflog")),
		       (long long)json_integer_value(json_object_get(r, "unreached_checkpoints")),
		       (long long)json_integer_value(json_object_get(r, "unused_chunks")),
		       (long long)json_integer_value(json_object_get(r, "unused_items")));
}

static int run(const char *name, int argc, char **argv, struct history_args *a, int *first)
{
	memset(a, 0, sizeof(*a));
	a->cmd = cli_find(name);
	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", a->cmd->usage);
		return CLI_OPT_DONE;
	}
	return cli_options(a->cmd, argc, argv, "h", history_opts, "unknown option", take, a,
			   first);
}

static void render_blame(const json_t *res)
{
	size_t i;
	json_t *it;

	json_array_foreach(json_object_get(res, "items"), i, it) {
		const json_t *by = json_object_get(it, "introduced");
		const json_t *src = json_object_get(by, "source");
		char where[48];
		const char *text = jfield_str(it, "text");
		const char *nl = strchr(text, '\n');

		snprintf(where, sizeof(where), "%s[%lld]", jfield_str(it, "field"),
			 (long long)json_integer_value(json_object_get(it, "ordinal")));
		printf("%-18s %.*s %-12.12s %.16s  %.*s%s", where, SHORT, jfield_str(by, "commit_hash"),
		       json_is_true(json_object_get(by, "hidden")) ? "(hidden)" : jfield_str(by, "author"),
		       jfield_str(by, "created_at"),
		       nl ? (int)(nl - text) : (int)strlen(text), text, nl ? " ..." : "");
		if (json_is_object(src))
			printf("  (drafted from session %.8s, turns %lld-%lld)", jfield_str(src, "session_id"),
			       (long long)json_integer_value(json_object_get(src, "first_seq")),
			       (long long)json_integer_value(json_object_get(src, "last_seq")));
		printf("\n");
	}
}

int cmd_blame(int argc, char **argv, struct cli_ctx *ctx)
{
	struct history_args a;
	json_t *res = NULL;
	int first, rc = run("blame", argc, argv, &a, &first);

	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc - first > 1)
		return cli_usage(a.cmd, "give one REF (or none in a project)");
	rc = cli_call(ctx, "blame", json_pack("{s:s?}", "ref", argc > first ? argv[first] : NULL),
		      &res);
	if (rc)
		return rc;
	if (a.json)
		cli_print_json(res);
	else
		render_blame(res);
	json_decref(res);
	return 0;
}

int cmd_reflog(int argc, char **argv, struct cli_ctx *ctx)
{
	struct history_args a;
	json_t *res = NULL;
	int first, rc = run("reflog", argc, argv, &a, &first);

	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc - first > 1)
		return cli_usage(a.cmd, "give one SPACE (or none in a project)");
	rc = cli_call(ctx, "reflog", json_pack("{s:s?, s:I}", "space",
					       argc > first ? argv[first] : NULL, "limit",
					       (json_int_t)a.limit), &res);
	if (rc)
		return rc;
	if (a.json)
		cli_print_json(res);
	else
		render_reflog(res);
	json_decref(res);
	return 0;
}

int cmd_gc(int argc, char **argv, struct cli_ctx *ctx)
{
	struct history_args a;
	json_t *res = NULL;
	int first, rc = run("gc", argc, argv, &a, &first);

	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc != first)
		return cli_usage(a.cmd, "gc takes no operands");
	if (a.expire && !a.prune)
		return cli_usage(a.cmd, "--expire applies with --prune");
	rc = cli_call(ctx, "gc", json_pack("{s:b, s:s?, s:s?}", "prune", a.prune, "before",
					   a.before, "expire", a.expire), &res);
	if (rc)
		return rc;
	if (a.json)
		cli_print_json(res);
	else
		render_gc(res);
	json_decref(res);
	return 0;
}
