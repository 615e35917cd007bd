/*
 * cmd_review.c -- `smriti review REF`: run checkpoint review on demand and
 * show the findings grouped by type, each with the items it concerns and
 * the pass (deterministic or llm) that produced it.
 */
#include "cli/cli.h"
#include "util/jfield.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *type, *heading;
} groups[] = {
	{ "contradiction", "Contradictions" },
	{ "duplicate_decision", "Duplicate decisions" },
	{ "hidden_assumption", "Hidden assumptions" },
	{ "resolved_question", "Resolved questions" },
	{ "disconnected_entity", "Disconnected entities" },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static void render_finding(const json_t *f)
{
	const json_t *item;
	size_t i;

	printf("  - %s  [%s]\n", jfield_str(f, "message"), jfield_str(f, "source"));
	json_array_foreach(json_object_get(f, "items"), i, item)
		printf("      %s[%lld]: %s\n", jfield_str(item, "field"),
		       (long long)json_integer_value(json_object_get(item, "index")),
		       jfield_str(item, "text"));
}

/* Prints the findings of one type (type NULL: those of no known type). */
static void render_group(const json_t *findings, const char *type, const char *heading)
{
	const json_t *f;
	size_t i, n = 0;
	int known;

	json_array_foreach(findings, i, f) {
		known = 0;
		for (size_t g = 0; g < NGROUPS; g++)
			known |= !strcmp(jfield_str(f, "type"), groups[g].type);
		if (type ? strcmp(jfield_str(f, "type"), type) : known)
			continue;
		if (!n++)
			printf("\n%s:\n", heading);
		render_finding(f);
	}
}

static void render_passes(const json_t *passes)
{
	const json_t *p;
	size_t i;

	json_array_foreach(passes, i, p) {
		if (json_is_true(json_object_get(p, "ran")))
			printf("%s pass: ran, %lld finding%s\n", jfield_str(p, "source"),
			       (long long)json_integer_value(json_object_get(p, "findings")),
			       json_integer_value(json_object_get(p, "findings")) == 1 ? "" : "s");
		else
			printf("%s pass: did not run (%s)\n", jfield_str(p, "source"), jfield_str(p, "reason"));
	}
}

static void render_review(const json_t *r)
{
	const json_t *findings = json_object_get(r, "findings");
	size_t n = json_array_size(findings);

	printf("review of checkpoint %.12s in space '%s'\n", jfield_str(r, "commit_hash"),
	       jfield_str(r, "space"));
	render_passes(json_object_get(r, "passes"));
	if (!n) {
		printf("\nno findings\n");
		return;
	}
	for (size_t g = 0; g < NGROUPS; g++)
		render_group(findings, groups[g].type, groups[g].heading);
	render_group(findings, NULL, "Other findings");
	printf("\n%zu finding%s\n", n, n == 1 ? "" : "s");
}

static const struct option opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "no-llm", no_argument, NULL, 'n' },
	{ "provider", required_argument, NULL, 'p' },
	{ "model", required_argument, NULL, 'm' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct review_args {
	const char *provider, *model;
	int json, no_llm;
};

static int take(int c, const char *val, void *arg)
{
	struct review_args *a = arg;

	if (c == 'j')
		a->json = 1;
	else if (c == 'n')
		a->no_llm = 1;
	else if (c == 'p')
		a->provider = val;
	else if (c == 'm')
		a->model = val;
	else
		return CLI_OPT_REFUSED;
	return 0;
}

int cmd_review(int argc, char **argv, struct cli_ctx *ctx)
{
	const struct cli_cmd *cmd = cli_find("review");
	struct review_args a = { 0 };
	json_t *res = NULL, *params;
	int first, rc;

	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n\n"
		       "Reviews a checkpoint on demand: contradictions and duplicates among its\n"
		       "decisions, decisions relying on something not listed as a decision or an\n"
		       "assumption, open questions a decision already answers, and entities\n"
		       "nothing mentions.  The checkpoint is never changed.  --no-llm skips the\n"
		       "LLM pass of smriti-full, which runs when a provider is configured (or\n"
		       "--provider is given); --model picks the provider's model.\n", cmd->usage);
		return 0;
	}
	rc = cli_options(cmd, argc, argv, "", opts, "unknown option", take, &a, &first);
	if (rc)
		return rc;
	if (argc - first > 1)
		return cli_usage(cmd, "give one REF (or none in a project)");
	params = json_pack("{s:s?, s:b}", "ref", argc > first ? argv[first] : NULL, "llm",
			   !a.no_llm);
	if (a.provider)
		json_object_set_new(params, "provider", json_string(a.provider));
	if (a.model)
		json_object_set_new(params, "model", json_string(a.model));
	rc = cli_call(ctx, "review", params, &res);
	if (rc)
		return rc;
	if (a.json)
		cli_print_json(res);
	else
		render_review(res);
	json_decref(res);
	return 0;
}
