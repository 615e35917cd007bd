/*
 * cmd_search.c -- `smriti search QUERY`: full-text search over what the
 * checkpoints introduced (and chat turns with --turns), a thin mapping
 * onto the "search" operation.  Matches are bold on a terminal and marked
 * **like this** otherwise.
 */
#include "cli/cli.h"
#include "util/buf.h"
#include "util/jfield.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHORT 12

enum { OPT_JSON = 1, OPT_SPACE, OPT_FIELD, OPT_AUTHOR, OPT_SINCE, OPT_UNTIL, OPT_TURNS, OPT_LIMIT };

static const struct option search_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "space", required_argument, NULL, OPT_SPACE },
	{ "field", required_argument, NULL, OPT_FIELD },
	{ "author", required_argument, NULL, OPT_AUTHOR },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "turns", no_argument, NULL, OPT_TURNS },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct search_args {
	const struct cli_cmd *cmd;
	json_t *params;
	json_t *spaces;
	int json;
};

static int take(int c, const char *val, void *arg)
{
	struct search_args *a = arg;
	static const char *const keys[] = { [OPT_FIELD] = "field", [OPT_AUTHOR] = "author",
					    [OPT_SINCE] = "since", [OPT_UNTIL] = "until" };
	char *end;
	long n;

	switch (c) {
	case OPT_JSON:
		a->json = 1;
		return 0;
	case OPT_SPACE:
		json_array_append_new(a->spaces, json_string(val));
		return 0;
	case OPT_FIELD:
	case OPT_AUTHOR:
	case OPT_SINCE:
	case OPT_UNTIL:
		json_object_set_new(a->params, keys[c], json_string(val));
		return 0;
	case OPT_TURNS:
		json_object_set_new(a->params, "turns", json_true());
		return 0;
	case 'n':
	case OPT_LIMIT:
		n = strtol(val, &end, 10);
		if (*end || !*val || n < 1)
			return cli_usage(a->cmd, "--limit wants a number >= 1, got '%s'", val);
		json_object_set_new(a->params, "limit", json_integer(n));
		return 0;
	}
	return CLI_OPT_REFUSED;
}

/*
 * The snippet, its highlights in bold on a terminal that takes it; in a
 * file or a pipe the text exactly as stored (--json has the highlights).
 */
static void print_snippet(const json_t *r, int bold)
{
	const char *s = jfield_str(r, "snippet");
	const char *on = bold ? "\033[1m" : "", *off = bold ? "\033[0m" : "";
	size_t at = 0, i;
	json_t *h;

	printf("    ");
	json_array_foreach(json_object_get(r, "highlights"), i, h) {
		size_t a = (size_t)json_integer_value(json_array_get(h, 0));
		size_t b = (size_t)json_integer_value(json_array_get(h, 1));

		if (a < at || b > strlen(s))
			continue;
		printf("%.*s%s%.*s%s", (int)(a - at), s + at, on, (int)(b - a), s + a, off);
		at = b;
	}
	printf("%s\n", s + at);
}

/*
 * Appends to names the Spaces holding a checkpoint's item ("a, b") and to
 * heads whether their HEADs still hold it: "in HEAD" (all), "no longer in
 * HEAD" (none), else "in HEAD of " the ones that do.
 */
static void spaces_text(const json_t *r, struct buf *names, struct buf *heads)
{
	const json_t *spaces = json_object_get(r, "spaces"), *s;
	size_t i, held = 0;

	json_array_foreach(spaces, i, s) {
		buf_addf(names, "%s%s", i ? ", " : "", jfield_str(s, "space"));
		held += json_is_true(json_object_get(s, "in_head"));
	}
	if (held == json_array_size(spaces) || !held) {
		buf_addf(heads, "%s", held ? "in HEAD" : "no longer in HEAD");
		return;
	}
	buf_addf(heads, "in HEAD of ");
	held = 0;
	json_array_foreach(spaces, i, s)
		if (json_is_true(json_object_get(s, "in_head")))
			buf_addf(heads, "%s%s", held++ ? ", " : "", jfield_str(s, "space"));
}

static void render_checkpoint_hit(const json_t *r)
{
	struct buf names = BUF_INIT(0), heads = BUF_INIT(0);

	spaces_text(r, &names, &heads);
	printf("%s  %s  %.*s  (%s%s%.16s)  %s\n", names.ptr, jfield_str(r, "field"), SHORT,
	       jfield_str(r, "commit_hash"), jfield_str(r, "author"),
	       *jfield_str(r, "author") ? ", " : "", jfield_str(r, "created_at"), heads.ptr);
	buf_release(&names);
	buf_release(&heads);
}

static void render_search(const json_t *res)
{
	int bold = cli_emphasis();
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(res, "results"), i, r) {
		const json_t *first = json_object_get(r, "first");

		if (!strcmp(jfield_str(r, "kind"), "turn"))
			printf("%s  turn %lld of session %.8s  (%s, %.16s)\n", jfield_str(r, "space"),
			       (long long)json_integer_value(json_object_get(r, "seq")),
			       jfield_str(r, "session_id"), jfield_str(r, "author"), jfield_str(r, "created_at"));
		else
			render_checkpoint_hit(r);
		print_snippet(r, bold);
		if (first && strcmp(jfield_str(first, "commit_hash"), jfield_str(r, "commit_hash")))
			printf("    first in %.*s (%s, %.16s)\n", SHORT, jfield_str(first, "commit_hash"),
			       jfield_str(first, "author"), jfield_str(first, "created_at"));
	}
	if (!json_array_size(json_object_get(res, "results")))
		printf("no matches\n");
	else if ((size_t)json_integer_value(json_object_get(res, "total")) > i)
		printf("(%zu of %lld matches; --limit shows more)\n", i,
		       (long long)json_integer_value(json_object_get(res, "total")));
}

int cmd_search(int argc, char **argv, struct cli_ctx *ctx)
{
	struct search_args a = { cli_find("search"), json_object(), json_array(), 0 };
	struct buf q = BUF_INIT(0);
	json_t *res = NULL;
	int first, rc;

	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", a.cmd->usage);
		rc = 0;
		goto out;
	}
	rc = cli_options(a.cmd, argc, argv, "hn:", search_opts, "unknown option", take, &a,
			 &first);
	if (rc) {
		rc = rc == CLI_OPT_DONE ? 0 : rc;
		goto out;
	}
	if (first == argc) {
		rc = cli_usage(a.cmd, "give words to search for");
		goto out;
	}
	for (int i = first; i < argc; i++)
		buf_addf(&q, "%s%s", i > first ? " " : "", argv[i]);
	json_object_set_new(a.params, "query", json_string(q.ptr));
	if (json_array_size(a.spaces))
		json_object_set(a.params, "spaces", a.spaces);
	rc = cli_call(ctx, "search", a.params, &res);
	a.params = NULL;
	if (!rc && a.json)
		cli_print_json(res);
	else if (!rc)
		render_search(res);
out:
	json_decref(res);
	json_decref(a.params);
	json_decref(a.spaces);
	buf_release(&q);
	return rc;
}
