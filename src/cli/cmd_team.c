/*
 * cmd_team.c -- people, agents, tokens and roles on a shared server:
 * `smriti user add|list|disable|enable`, `smriti token create|list|revoke`,
 * `smriti grant`, `smriti revoke`, `smriti access` and `smriti whoami`.
 *
 * Run against the server's database (SMRITI_DB, as its operator) or against
 * the server itself (--remote with a token): the operations check who may
 * do what, so a person can make tokens for itself and its agents and an
 * owner can grant its Space, but only the administrator adds people.
 */
#include "cli/cli.h"
#include "util/jfield.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const struct cli_cmd user_cmd = {
	"user",
	"user add NAME|PERSON/AGENT [--json]\n"
	"       smriti user list [--json]\n"
	"       smriti user disable|enable NAME [--json]",
	cmd_user, 0,
};

static const struct cli_cmd token_cmd = {
	"token",
	"token create USER|USER/AGENT [--expires 90d|12h|30m|2w|never] [--json]\n"
	"       smriti token list [USER] [--json]\n"
	"       smriti token revoke ID [--json]",
	cmd_token, 0,
};

static const struct cli_cmd grant_cmd = {
	"grant", "grant USER SPACE reader|writer|owner [--json]", cmd_grant, 0,
};

static const struct cli_cmd revoke_cmd = {
	"revoke", "revoke USER SPACE [--json]", cmd_revoke, 0,
};

static const struct cli_cmd access_cmd = {
	"access", "access SPACE [--json]", cmd_access, 0,
};

static const struct cli_cmd whoami_cmd = {
	"whoami", "whoami [--json]", cmd_whoami, 0,
};

enum { OPT_JSON = 1, OPT_EXPIRES };

static const struct option team_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "expires", required_argument, NULL, OPT_EXPIRES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct team_args {
	int json;
	const char *expires;
	int npos;
	char **pos;
};

static int take(int c, const char *val, void *arg)
{
	struct team_args *a = arg;

	if (c == OPT_JSON)
		a->json = 1;
	else if (c == OPT_EXPIRES)
		a->expires = val;
	else
		return CLI_OPT_REFUSED;
	return 0;
}

/* Parses argv (from the word after the command); 0 or an exit code.  Help
 * never gets here: main answers --help before it runs a command. */
static int parse(const struct cli_cmd *cmd, int argc, char **argv, struct team_args *a)
{
	int rc, first;

	memset(a, 0, sizeof(*a));
	rc = cli_options(cmd, argc, argv, "h", team_opts, "unknown option", take, a, &first);
	a->npos = argc - first;
	a->pos = argv + first;
	return rc;
}

/* A member as shown in the tables: "-" when it is missing. */
static const char *shown(const json_t *o, const char *key)
{
	return jfield_str_or(o, key, "-");
}

/* Runs op and prints its result: JSON, or one line per object through line(). */
static int run(struct cli_ctx *ctx, const char *op, json_t *params, int json,
	       void (*line)(const json_t *o))
{
	json_t *res = NULL, *one;
	size_t i;
	int rc = cli_call(ctx, op, params, &res);

	if (rc)
		return rc;
	if (json)
		cli_print_json(res);
	else if (json_is_array(res))
		json_array_foreach(res, i, one)
			line(one);
	else
		line(res);
	json_decref(res);
	return 0;
}

static void user_line(const json_t *u)
{
	printf("%-32s %-6s %s%s\n", shown(u, "name"), shown(u, "kind"), shown(u, "created_at"),
	       json_is_true(json_object_get(u, "disabled")) ? "  disabled" : "");
}

static void token_line(const json_t *t)
{
	const char *state = json_string_value(json_object_get(t, "revoked_at")) ? "revoked" :
			    json_is_true(json_object_get(t, "disabled")) ? "user disabled" : "live";

	printf("%-16s %-32s expires %-27s last used %-27s %s\n", shown(t, "id"), shown(t, "user"),
	       shown(t, "expires_at"), shown(t, "last_used_at"), state);
}

/* The secret goes to stdout alone (for $(...)); what it is goes to stderr. */
static void new_token_line(const json_t *t)
{
	fprintf(stderr, "token %s for '%s', expires %s; it is shown once: keep it now\n",
		shown(t, "id"), shown(t, "user"), shown(t, "expires_at"));
	printf("%s\n", shown(t, "token"));
}

static void grant_line(const json_t *g)
{
	printf("%-32s %s\n", shown(g, "user"), shown(g, "role"));
}

static void granted_line(const json_t *g)
{
	if (!strcmp(shown(g, "role"), "none"))
		printf("'%s' has no role on space '%s' now\n", shown(g, "user"), shown(g, "space"));
	else
		printf("'%s' is %s of space '%s'\n", shown(g, "user"), shown(g, "role"),
		       shown(g, "space"));
}

static void whoami_line(const json_t *w)
{
	if (!strcmp(shown(w, "kind"), "local"))
		printf("the owner of this database (no sign-in: every right)\n");
	else if (!strcmp(shown(w, "kind"), "admin"))
		printf("administrator (SMRITI_TOKEN: every right, no identity)\n");
	else
		printf("%s (%s, token %s)\n", shown(w, "name"), shown(w, "kind"), shown(w, "token"));
}

/* Prints the usage of cmd; 0 when asked for, 2 when the command was bare. */
static int usage(const struct cli_cmd *cmd, int argc, char **argv)
{
	printf("usage: smriti %s\n", cmd->usage);
	return cli_wants_help(argc, argv) ? 0 : 2;
}

int cmd_user(int argc, char **argv, struct cli_ctx *ctx)
{
	struct team_args a;
	const char *sub = argc > 1 ? argv[1] : "";
	int rc;

	if (argc < 2 || cli_wants_help(argc, argv))
		return usage(&user_cmd, argc, argv);
	rc = parse(&user_cmd, argc - 1, argv + 1, &a);
	if (rc)
		return rc;
	if (!strcmp(sub, "list") || !strcmp(sub, "ls"))
		return a.npos ? cli_usage(&user_cmd, "user list takes no arguments") :
			run(ctx, "user.list", json_object(), a.json, user_line);
	if (a.npos != 1)
		return cli_usage(&user_cmd, "user %s takes one NAME", sub);
	if (!strcmp(sub, "add"))
		return run(ctx, "user.add", json_pack("{s:s}", "name", a.pos[0]), a.json, user_line);
	if (!strcmp(sub, "disable") || !strcmp(sub, "enable"))
		return run(ctx, "user.disable", json_pack("{s:s, s:b}", "name", a.pos[0], "enable",
							  !strcmp(sub, "enable")), a.json, user_line);
	return cli_usage(&user_cmd, "unknown subcommand 'user %s'", sub);
}

int cmd_token(int argc, char **argv, struct cli_ctx *ctx)
{
	struct team_args a;
	const char *sub = argc > 1 ? argv[1] : "";
	int rc;

	if (argc < 2 || cli_wants_help(argc, argv))
		return usage(&token_cmd, argc, argv);
	rc = parse(&token_cmd, argc - 1, argv + 1, &a);
	if (rc)
		return rc;
	if (!strcmp(sub, "list") || !strcmp(sub, "ls"))
		return a.npos > 1 ? cli_usage(&token_cmd, "token list takes at most one USER") :
			run(ctx, "token.list", json_pack("{s:s?}", "name", a.npos ? a.pos[0] : NULL),
			    a.json, token_line);
	if (a.npos != 1)
		return cli_usage(&token_cmd, "token %s takes one argument", sub);
	if (!strcmp(sub, "create"))
		return run(ctx, "token.create", json_pack("{s:s, s:s?}", "name", a.pos[0],
							  "expires", a.expires),
			   a.json, new_token_line);
	if (!strcmp(sub, "revoke"))
		return run(ctx, "token.revoke", json_pack("{s:s}", "id", a.pos[0]), a.json,
			   token_line);
	return cli_usage(&token_cmd, "unknown subcommand 'token %s'", sub);
}

int cmd_grant(int argc, char **argv, struct cli_ctx *ctx)
{
	struct team_args a;
	int rc;

	if (cli_wants_help(argc, argv))
		return usage(&grant_cmd, argc, argv);
	rc = parse(&grant_cmd, argc, argv, &a);
	if (rc)
		return rc;
	if (a.npos != 3)
		return cli_usage(&grant_cmd, "grant takes USER, SPACE and a role");
	return run(ctx, "grant", json_pack("{s:s, s:s, s:s}", "user", a.pos[0], "space",
					   a.pos[1], "role", a.pos[2]), a.json, granted_line);
}

int cmd_revoke(int argc, char **argv, struct cli_ctx *ctx)
{
	struct team_args a;
	int rc;

	if (cli_wants_help(argc, argv))
		return usage(&revoke_cmd, argc, argv);
	rc = parse(&revoke_cmd, argc, argv, &a);
	if (rc)
		return rc;
	if (a.npos != 2)
		return cli_usage(&revoke_cmd, "revoke takes USER and SPACE");
	return run(ctx, "grant.revoke", json_pack("{s:s, s:s}", "user", a.pos[0], "space",
						  a.pos[1]), a.json, granted_line);
}

int cmd_access(int argc, char **argv, struct cli_ctx *ctx)
{
	struct team_args a;
	int rc;

	if (cli_wants_help(argc, argv))
		return usage(&access_cmd, argc, argv);
	rc = parse(&access_cmd, argc, argv, &a);
	if (rc)
		return rc;
	if (a.npos != 1)
		return cli_usage(&access_cmd, "access takes one SPACE");
	return run(ctx, "grant.list", json_pack("{s:s}", "space", a.pos[0]), a.json, grant_line);
}

int cmd_whoami(int argc, char **argv, struct cli_ctx *ctx)
{
	struct team_args a;
	int rc;

	if (cli_wants_help(argc, argv))
		return usage(&whoami_cmd, argc, argv);
	rc = parse(&whoami_cmd, argc, argv, &a);
	if (rc)
		return rc;
	if (a.npos)
		return cli_usage(&whoami_cmd, "whoami takes no arguments");
	return run(ctx, "whoami", json_object(), a.json, whoami_line);
}
