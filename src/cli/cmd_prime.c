/*
 * cmd_prime.c -- `smriti prime`: the primer of a Space for an agent's
 * context (the "prime" operation), as text, as JSON, or wrapped for a
 * host's session-start hook; and, with --stop-hook, the host's reply that
 * reminds the agent to checkpoint before it stops (a nudge: nothing is
 * written).
 */
#include "cli/cli.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 1, OPT_BUDGET, OPT_HOOK, OPT_STOP_HOOK, OPT_MCP };

static const struct option prime_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "hook", required_argument, NULL, OPT_HOOK },
	{ "stop-hook", required_argument, NULL, OPT_STOP_HOOK },
	{ "mcp", no_argument, NULL, OPT_MCP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The hosts whose hook replies differ; the others read plain text. */
static const char *const hook_hosts[] = { "claude", "codex", "gemini", "vscode", "cursor",
					  NULL };

struct prime_args {
	int json, mcp;
	long budget;
	const char *hook, *stop_hook;
};

static int known_host(const char *h)
{
	for (int i = 0; hook_hosts[i]; i++)
		if (!strcmp(h, hook_hosts[i]))
			return 1;
	return 0;
}

static int take(int c, const char *val, void *arg)
{
	struct prime_args *a = arg;
	char *end;

	if (c == OPT_JSON)
		a->json = 1;
	else if (c == OPT_MCP)
		a->mcp = 1;
	else if (c == OPT_HOOK || c == OPT_STOP_HOOK) {
		if (!known_host(val))
			return cli_usage(cli_find("prime"), "--hook and --stop-hook take claude, "
					 "codex, gemini, vscode or cursor, not '%s'", val);
		*(c == OPT_HOOK ? &a->hook : &a->stop_hook) = val;
	} else if (c == OPT_BUDGET) {
		a->budget = strtol(val, &end, 10);
		if (*end || !*val || a->budget < 1)
			return cli_usage(cli_find("prime"), "--budget wants a number of tokens, got "
					 "'%s'", val);
	} else {
		return CLI_OPT_REFUSED;
	}
	return 0;
}

/* Prints doc compactly on one line (what a hook's reader parses). */
static void print_line(json_t *doc)
{
	json_dumpf(doc, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(doc);
}

/* The session-start reply of host carrying text for the model's context. */
static void print_hook(const char *host, const char *text)
{
	if (!strcmp(host, "cursor"))
		print_line(json_pack("{s:s}", "additional_context", text));
	else
		print_line(json_pack("{s:{s:s, s:s}}", "hookSpecificOutput", "hookEventName",
				     "SessionStart", "additionalContext", text));
}

static const char stop_reason[] =
	"Before you stop: if this session reached a point worth keeping, write a Checkpoint on"
	" the HEAD you read (smriti checkpoint create --parent HASH ...) and leave a hand-off"
	" note for the next agent (smriti handoff -m NOTE). If nothing is worth keeping, just"
	" stop.";

/*
 * The stop hook: reminds the agent once.  The host's loop guard (Claude,
 * Codex, Gemini and VS Code send stop_hook_active, Cursor loop_count) says
 * the agent already went on once because of it: then nothing.
 */
static int stop_hook(const char *host)
{
	json_error_t jerr;
	json_t *in = json_loadf(stdin, JSON_DISABLE_EOF_CHECK, &jerr);
	int again = json_is_true(json_object_get(in, "stop_hook_active")) ||
		    json_integer_value(json_object_get(in, "loop_count")) > 0;

	json_decref(in);
	if (again)
		return 0;
	if (!strcmp(host, "cursor"))
		print_line(json_pack("{s:s}", "followup_message", stop_reason));
	else if (!strcmp(host, "vscode"))
		print_line(json_pack("{s:{s:s, s:s, s:s}}", "hookSpecificOutput", "hookEventName",
				     "Stop", "decision", "block", "reason", stop_reason));
	else
		print_line(json_pack("{s:s, s:s}", "decision",
				     !strcmp(host, "gemini") ? "deny" : "block", "reason",
				     stop_reason));
	return 0;
}

int cmd_prime(int argc, char **argv, struct cli_ctx *ctx)
{
	struct prime_args a = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL, *params;
	const char *space;
	int rc, first;

	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n       smriti prime --stop-hook HOST\n",
		       cli_find("prime")->usage);
		return 0;
	}
	rc = cli_options(cli_find("prime"), argc, argv, "h", prime_opts, "unknown option", take,
			 &a, &first);
	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc - first > 1)
		return cli_usage(cli_find("prime"), "give at most one SPACE");
	if (a.stop_hook)
		return stop_hook(a.stop_hook);
	space = argc > first ? argv[first] : ctx->project.space;
	params = json_pack("{s:s?, s:s}", "space", space, "tools", a.mcp ? "mcp" : "cli");
	if (a.budget)
		json_object_set_new(params, "budget", json_integer(a.budget));
	if (space) {
		rc = cli_call_keep(ctx, "prime", params, &res, &err);
	} else {
		json_decref(params);
		rc = smr_errf(&err, SMR_EUSAGE, "no Space: name one, or run 'smriti init SPACE' in"
			      " the project");
	}
	if (rc && a.hook) {
		/* a hook that fails would stop the session starting: say why instead */
		char *why = xasprintf("Smriti: %s (run 'smriti status' in the project)", err.msg);

		print_hook(a.hook, why);
		free(why);
		rc = 0;
	} else if (rc) {
		rc = cli_fail(rc, "%s", err.msg);
	} else if (a.hook) {
		print_hook(a.hook, json_string_value(json_object_get(res, "text")));
	} else if (a.json) {
		cli_print_json(res);
	} else {
		fputs(json_string_value(json_object_get(res, "text")), stdout);
	}
	json_decref(res);
	return rc;
}
