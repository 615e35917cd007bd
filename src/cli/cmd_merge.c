/*
 * cmd_merge.c -- `smriti merge SPACE REF`: bring another line of work (a
 * fork, an older branch of history) into SPACE's HEAD.  Says whether it
 * merged, fast-forwarded or found nothing to do; names each conflict and
 * exits 4 with nothing written until they are resolved (--ours, --theirs,
 * or --resolve FILE with per-item choices).  The merge checkpoint's title
 * is its own (-m), as a git merge commit's message is.  --dry-run says
 * what would happen (and how far each line went) and writes nothing.
 */
#include "cli/cli.h"
#include "util/sys.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESOLUTION_MAX (1u << 20)

static const struct cli_cmd merge_cmd = {
	"merge",
	"merge SPACE REF [--ours | --theirs | --resolve FILE|-] [-m TITLE] [--author NAME]\n"
	"       [--dry-run] [--json | --quiet]\n"
	"       Merges REF (a checkpoint, or another Space that shares history, e.g. a\n"
	"       fork) into the HEAD of SPACE, item by item from their nearest common\n"
	"       ancestor.  Conflicts write nothing: settle all with --ours or --theirs,\n"
	"       or one by one with a JSON resolution such as\n"
	"       {\"summary\": \"ours\", \"decisions\": {\"Use SQLite\": \"theirs\"}}.\n"
	"       Titles are never merged: the merge has its own, -m/--title TITLE, else\n"
	"       \"Merge REF into SPACE\".  --dry-run writes nothing: it says whether the\n"
	"       merge would be clean, lists its conflicts, and how many Checkpoints REF\n"
	"       has that SPACE lacks (ahead) and SPACE has that REF lacks (behind).\n"
	"       A resolution may also edit an item: {\"decisions\": {\"X\": {\"edit\": ITEM}}}.\n"
	"       --quiet (-q) prints only the hash HEAD is at after the merge.",
	cmd_merge, 0,
};

enum { OPT_OURS = 1, OPT_THEIRS, OPT_RESOLVE, OPT_AUTHOR, OPT_JSON, OPT_DRY, OPT_TITLE = 'm',
       OPT_QUIET = 'q' };

static const struct option opts[] = {
	{ "ours", no_argument, NULL, OPT_OURS },
	{ "theirs", no_argument, NULL, OPT_THEIRS },
	{ "resolve", required_argument, NULL, OPT_RESOLVE },
	{ "author", required_argument, NULL, OPT_AUTHOR },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "dry-run", no_argument, NULL, OPT_DRY },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct merge_args {
	const char *side, *resolve, *author, *title;
	int json, sides, dry_run, quiet;
};

static int take(int c, const char *val, void *arg)
{
	struct merge_args *a = arg;

	switch (c) {
	case OPT_OURS:
	case OPT_THEIRS:
		a->side = c == OPT_OURS ? "ours" : "theirs";
		a->sides++;
		return 0;
	case OPT_RESOLVE:
		a->resolve = val;
		a->sides++;
		return 0;
	case OPT_AUTHOR:
		a->author = val;
		return 0;
	case OPT_TITLE:
		a->title = val;
		return 0;
	case OPT_JSON:
		a->json = 1;
		return 0;
	case OPT_DRY:
		a->dry_run = 1;
		return 0;
	case OPT_QUIET:
		a->quiet = 1;
		return 0;
	}
	return CLI_OPT_REFUSED;
}

/* The resolution document: {"*": side} or the file's object; *out a new reference. */
static int resolution(const struct merge_args *a, json_t **out)
{
	struct smr_err err = SMR_ERR_INIT;
	json_error_t jerr;
	char *text = NULL;
	size_t len = 0;

	*out = NULL;
	if (a->side) {
		*out = json_pack("{s:s}", "*", a->side);
		return 0;
	}
	if (!a->resolve)
		return 0;
	if (sys_read_file(a->resolve, RESOLUTION_MAX, &text, &len, &err))
		return cli_fail(err.code, "%s", err.msg);
	*out = json_loadb(text, len, 0, &jerr);
	free(text);
	if (!*out)
		return cli_fail(SMR_EINVAL, "cannot parse '%s': %s (line %d, column %d)",
				a->resolve, jerr.text, jerr.line, jerr.column);
	if (!json_is_object(*out))
		return cli_fail(SMR_EINVAL, "'%s' must hold a JSON object", a->resolve);
	return 0;
}

/* One side of a conflict in a few words. */
static void side_text(const char *name, const json_t *v)
{
	char *s;

	if (json_is_null(v) || !v) {
		fprintf(stderr, "%s: (not there)", name);
		return;
	}
	if (json_is_string(v)) {
		fprintf(stderr, "%s: \"%s\"", name, json_string_value(v));
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	fprintf(stderr, "%s: %s", name, s ? s : "?");
	free(s);
}

static void print_conflicts(const json_t *res, int dry_run)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(res, "conflicts"), i, c) {
		const char *item = json_string_value(json_object_get(c, "item"));

		fprintf(stderr, "  %s", json_string_value(json_object_get(c, "field")));
		if (item)
			fprintf(stderr, " '%s'", item);
		fputs(":  ", stderr);
		side_text("ours", json_object_get(c, "ours"));
		fputs(";  ", stderr);
		side_text("theirs", json_object_get(c, "theirs"));
		fputc('\n', stderr);
	}
	if (!dry_run)
		fputs("resolve with --ours, --theirs or --resolve FILE (see smriti merge --help)\n",
		      stderr);
}

/* A dry run: ahead/behind, then what the merge would do. */
static void print_dry_run(const char *space, const char *ref, const json_t *res)
{
	const char *status = json_string_value(json_object_get(res, "status"));
	size_t n = json_array_size(json_object_get(res, "conflicts"));

	printf("%s is %lld ahead of and %lld behind %s\n", ref,
	       (long long)json_integer_value(json_object_get(res, "ahead")),
	       (long long)json_integer_value(json_object_get(res, "behind")), space);
	if (!strcmp(status, "conflict")) {
		printf("would not merge cleanly: %zu conflict%s (nothing written)\n", n,
		       n == 1 ? "" : "s");
		print_conflicts(res, 1);
	} else if (!strcmp(status, "up-to-date")) {
		printf("nothing to merge: %s has everything of %s\n", space, ref);
	} else {
		printf("would merge cleanly (%s; nothing written)\n",
		       !strcmp(status, "fast-forward") ? "a fast-forward" : "a merge Checkpoint");
	}
}

static void print_result(const char *space, const char *ref, const json_t *res)
{
	const char *status = json_string_value(json_object_get(res, "status"));
	const json_t *c = json_object_get(res, "checkpoint"), *f;
	const char *hash = json_string_value(json_object_get(c, "commit_hash"));
	size_t i, n = json_array_size(json_object_get(res, "contradictions"));

	if (!strcmp(status, "up-to-date"))
		printf("already up to date: %s has everything of %s\n", space, ref);
	else if (!strcmp(status, "fast-forward"))
		printf("fast-forward: %s is now at %.12s (%s)\n", space, hash,
		       json_string_value(json_object_get(c, "title")));
	else
		printf("[%s %.12s] merged %s (common ancestor %.12s)\n", space, hash, ref,
		       json_string_value(json_object_get(res, "base")));
	if (!n)
		return;
	printf("review: %zu contradiction%s in the merged state:\n", n, n == 1 ? "" : "s");
	json_array_foreach(json_object_get(res, "contradictions"), i, f)
		printf("  - %s\n", json_string_value(json_object_get(f, "message")));
}

int cmd_merge(int argc, char **argv, struct cli_ctx *ctx)
{
	struct merge_args a = { NULL, NULL, NULL, NULL, 0, 0, 0, 0 };
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL, *reso = NULL;
	const char *space, *ref;
	int first, rc;

	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", merge_cmd.usage);
		return 0;
	}
	rc = cli_options(&merge_cmd, argc, argv, "hm:q", opts, "unknown option", take, &a, &first);
	if (rc == CLI_OPT_DONE)
		return 0;
	if (!rc && (argc - first < 1 || argc - first > 2))
		rc = cli_usage(&merge_cmd, "give a SPACE and a REF to merge into it (in a project,"
			       " the REF alone)");
	if (!rc && a.sides > 1)
		rc = cli_usage(&merge_cmd, "give one of --ours, --theirs and --resolve");
	if (!rc && a.quiet && (a.json || a.dry_run))
		rc = cli_usage(&merge_cmd, a.json ? "give --json or --quiet, not both" :
			       "--quiet prints the hash a merge writes; a --dry-run writes none");
	if (!rc)
		rc = resolution(&a, &reso);
	if (rc)
		return rc;
	/* no SPACE and no project: null, which cli_fill_space refuses in its one message */
	space = argc - first == 2 ? argv[first] : ctx->project.space;
	ref = argv[argc - 1];
	/* who is merging, as `smriti commit` names its author */
	if (!a.author)
		a.author = cli_default_author();
	rc = (int)cli_call_keep(ctx, "merge",
				json_pack("{s:s?, s:s, s:O?, s:s?, s:s?, s:b}", "space", space,
					  "ref", ref, "resolution", reso, "author",
					  a.author, "title", a.title, "dry_run", a.dry_run),
				&res, &err);
	if (rc) {
		rc = cli_fail((enum smr_rc)rc, "%s", err.msg);
		if (res && !a.json)
			print_conflicts(res, 0);
		else if (res)
			cli_print_json(res);
	} else if (a.quiet) {
		cli_print_hash(json_object_get(json_object_get(res, "checkpoint"), "commit_hash"));
	} else if (a.json) {
		cli_print_json(res);
	} else if (a.dry_run) {
		print_dry_run(space, ref, res);
	} else {
		print_result(space, ref, res);
	}
	json_decref(res);
	json_decref(reso);
	return rc;
}
