/*
 * main.c -- entry point of the smriti command: global options, the command
 * table and dispatch.
 *
 * Smriti ships as two binaries built from the same sources, the way git
 * keeps libcurl out of git itself: `smriti` links only SQLite, jansson and
 * nettle so that an agent's `smriti head --json` costs little more than a
 * process spawn, and `smriti-full` adds the HTTP server, the provider
 * clients and PostgreSQL.  The lean binary hands any command it does not
 * carry (and any remote or PostgreSQL use) to smriti-full by exec, found
 * beside it (a build tree) or in ../libexec/smriti relative to it (make
 * install and the Debian package: /usr/bin/smriti and
 * /usr/libexec/smriti/smriti-full).
 */
#include "cli/cli.h"
#include "util/sys.h"
#include "util/xalloc.h"
#include "version.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where smriti-full is installed, relative to the directory of smriti. */
#define LIBEXEC_FROM_BINDIR "../libexec/smriti"

extern const int cli_is_full;
extern const struct cli_cmd cli_full_commands[];

static const struct cli_cmd core_commands[] = {
	{ "space", "space create|list|rename|delete ...", cmd_space, 0 },
	{ "checkpoint", "checkpoint create SPACE [--title T] [--decision D]... [--json | --quiet]",
	  cmd_checkpoint, 0 },
	{ "commit", "commit SPACE [options of checkpoint create]", cmd_commit, 0 },
	{ "head", "head SPACE [--json]", cmd_head, 0 },
	{ "show", "show REF [--json]", cmd_show, CLI_PAGER },
	{ "log", "log REF [--limit N] [--first-parent] [--graph] [--json]", cmd_log, CLI_PAGER },
	{ "diff", "diff REF REF [--json]", cmd_diff, CLI_PAGER },
	{ "restore", "restore SPACE REF [--author NAME] [--json | --quiet]", cmd_restore, 0 },
	{ "handoff", "handoff SPACE [REF] -m NOTE [--restore] [--author NAME] [--json | --quiet]",
	  cmd_handoff, 0 },
	{ "fork", "fork REF --into NEWSPACE [--json | --quiet]", cmd_fork, 0 },
	{ "merge", "merge SPACE REF [--ours|--theirs|--resolve FILE] [--json | --quiet]",
	  cmd_merge, 0 },
	{ "fsck", "fsck [SPACE] [--json]", cmd_fsck, 0 },
	{ "reflog", "reflog SPACE [--limit N] [--json]", cmd_reflog, 0 },
	{ "gc", "gc [--prune[=DATE] [--expire=DATE]] [--json]", cmd_gc, 0 },
	{ "blame", "blame REF [--json]", cmd_blame, 0 },
	{ "search", "search QUERY [--space S]... [--field F] [--author A] [--since DATE]"
	  " [--until DATE] [--turns] [--limit N] [--json]", cmd_search, 0 },
	{ "export", "export SPACE...|--all [-o FILE] | --git DIR SPACE [--branch NAME] [--force]"
	  " [--json]", cmd_export, 0 },
	{ "import", "import FILE|- [--json]", cmd_import, 0 },
	{ "review", "review REF [--provider P] [--model M] [--no-llm] [--json]", cmd_review,
	  CLI_FULL_FOR_LLM | CLI_RUNTIME },
	{ "ingest", "ingest FILE|- --space SPACE [--format F] [--title T] [--json]",
	  cmd_ingest, 0 },
	{ "user", "user add|list|disable|enable NAME  (people and their agents)", cmd_user, 0 },
	{ "token", "token create|list|revoke ...  (shown once, stored as a hash)", cmd_token, 0 },
	{ "grant", "grant USER SPACE reader|writer|owner [--json]", cmd_grant, 0 },
	{ "revoke", "revoke USER SPACE [--json]", cmd_revoke, 0 },
	{ "access", "access SPACE [--json]  (who holds which role)", cmd_access, 0 },
	{ "whoami", "whoami [--json]", cmd_whoami, 0 },
	/* with a provider configured, MCP's review tool wants the LLM pass */
	{ "mcp", "mcp  (serve MCP over stdio for agent hosts)", cmd_mcp,
	  CLI_FULL_FOR_LLM | CLI_RUNTIME },
	{ "init", "init [SPACE] [--force] [--json]  (make SPACE this project's default)",
	  cmd_init, 0 },
	{ "status", "status [--json]  (the project file, Space and store in force)", cmd_status,
	  0 },
	{ "prime", "prime [SPACE] [--budget TOKENS] [--hook HOST] [--json]  (context for an"
	  " agent)", cmd_prime, 0 },
	{ "setup", "setup HOST|agents-md [--user|--project] [--dry-run] [--remove]"
	  " [--url URL]", cmd_setup, 0 },
	{ NULL, NULL, NULL, 0 },
};

const struct cli_cmd *cli_find(const char *name)
{
	const struct cli_cmd *tables[2] = { core_commands, cli_full_commands };

	for (int t = 0; t < 2; t++)
		for (const struct cli_cmd *c = tables[t]; c->name; c++)
			if (!strcmp(c->name, name))
				return c;
	return NULL;
}

/*
 * Edit distance with adjacent transpositions (optimal string alignment),
 * so "lgo" is one edit from "log" as a typist sees it.  Names are short:
 * longer ones are "far".
 */
static size_t edit_distance(const char *a, const char *b)
{
	enum { MAXN = 32 };
	size_t d[MAXN + 1][MAXN + 1];
	size_t n = strlen(a), m = strlen(b);

	if (n > MAXN || m > MAXN)
		return SIZE_MAX;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[n][m];
}

/*
 * "'lgo' is not a smriti command; did you mean 'log'?": the commands within
 * two edits of it (one for names of three letters or fewer), as git names
 * them, but on the one line every error of smriti takes.
 */
static int unknown_command(const char *name)
{
	const struct cli_cmd *tables[2] = { core_commands, cli_full_commands };
	const char *extra[] = { "help", "version" };
	const char *hits[8];
	size_t nhits = 0, best = SIZE_MAX, limit = strlen(name) <= 3 ? 1 : 2;

	for (int pass = 0; pass < 2; pass++) {
		for (int t = 0; t < 3; t++) {
			size_t count = t < 2 ? SIZE_MAX : sizeof(extra) / sizeof(*extra);

			for (size_t i = 0; i < count; i++) {
				const char *cand = t < 2 ? tables[t][i].name : extra[i];
				size_t d;

				if (!cand)
					break;
				d = edit_distance(name, cand);
				if (!pass && d < best)
					best = d;
				else if (pass && d == best && nhits < 8)
					hits[nhits++] = cand;
			}
		}
		if (best > limit)
			break;
	}
	fprintf(stderr, "smriti: '%s' is not a smriti command", name);
	for (size_t i = 0; i < nhits; i++)
		fprintf(stderr, "%s'%s'", i ? (i + 1 < nhits ? ", " : " or ") : "; did you mean ",
			hits[i]);
	fprintf(stderr, nhits ? "? (see 'smriti help')\n" : "; see 'smriti help'\n");
	return smr_rc_exit_code(SMR_EUSAGE);
}

static void print_help(FILE *f)
{
	const struct cli_cmd *tables[2] = { core_commands, cli_full_commands };

	fprintf(f, "usage: smriti [--version] [--no-pager] [--db PATH|URL] [--remote URL] COMMAND"
		   " [ARGS]\n\n"
		   "Version control for reasoning state: Spaces hold chains of Checkpoints.\n\n"
		   "Commands:\n");
	for (int t = 0; t < 2; t++)
		for (const struct cli_cmd *c = tables[t]; c->name; c++)
			fprintf(f, "  smriti %s\n", c->usage);
	fprintf(f, "\nREF is a checkpoint hash, a unique prefix of 4+ characters, a SPACE"
		   " (its HEAD)\nor SPACE~N (N checkpoints before HEAD).\n"
		   "Run 'smriti COMMAND --help' for the options of one command.\n\n"
		   "Environment: SMRITI_DB (SQLite path or postgres:// URL), SMRITI_URL"
		   " (a server),\nSMRITI_TOKEN, SMRITI_AUTHOR, SMRITI_PAGER or PAGER, XDG_DATA_HOME.\n"
		   "A project file (.smriti.json, see 'smriti init') in this directory or above\n"
		   "names the default SPACE and, unless --db, --remote, SMRITI_DB or SMRITI_URL\n"
		   "is given, the store.\n"
		   "Exit codes: 0 ok, 1 internal error, 2 invalid usage or input, 3 not found,\n"
		   "4 conflict, 5 provider failure.\n");
}

static int is_version_request(const char *arg)
{
	return !strcmp(arg, "--version") || !strcmp(arg, "-V") || !strcmp(arg, "version");
}

/* smriti --version | -V | version [--json]: needs no store, so no database is created. */
static int print_version(int argc, char **argv)
{
	static const char usage[] = "usage: smriti version [--json]";
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("%s\n", usage);
			return 0;
		} else {
			return cli_fail(SMR_EUSAGE, "unknown argument '%s' (%s)", argv[i], usage);
		}
	}
	if (json) {
		json_t *doc = json_pack("{s:s, s:s}", "name", "smriti", "version", SMRITI_VERSION);

		cli_print_json(doc);
		json_decref(doc);
	} else {
		printf("smriti %s\n", SMRITI_VERSION);
	}
	return 0;
}

/*
 * Removes "--NAME VALUE" / "--NAME=VALUE" from argv (before any "--");
 * returns the value, or "" for a --NAME with nothing after it.
 */
static const char *take_global(int *argc, char **argv, const char *name)
{
	size_t n = strlen(name);
	const char *val = NULL;
	int i = 1, drop;

	while (i < *argc && strcmp(argv[i], "--")) {
		drop = 0;
		if (!strncmp(argv[i], name, n) && argv[i][n] == '=') {
			val = argv[i] + n + 1;
			drop = 1;
		} else if (!strcmp(argv[i], name)) {
			val = i + 1 < *argc ? argv[i + 1] : "";
			drop = i + 1 < *argc ? 2 : 1;
		}
		if (!drop) {
			i++;
			continue;
		}
		memmove(&argv[i], &argv[i + drop], (size_t)(*argc - i - drop + 1) * sizeof(*argv));
		*argc -= drop;
	}
	return val;
}

/* 1 if argv gives --remote with no value (an empty --remote= is the same as none). */
static int remote_given_empty(char **argv)
{
	for (int i = 1; argv[i] && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--remote") && !argv[i + 1])
			return 1;
	return 0;
}

/*
 * "smriti help CMD" is "smriti CMD --help", as git's help shows the
 * command's own page: argv is rewritten in place (argv has room: it had
 * three entries).
 */
static void help_for_command(int *argc, char **argv)
{
	static char flag[] = "--help";

	if (*argc != 3 || strcmp(argv[1], "help") || !cli_find(argv[2]))
		return;
	argv[1] = argv[2];
	argv[2] = flag;
}

/* Removes a global flag given before the command (as git's --no-pager); 1 if it was there. */
static int take_flag(int *argc, char **argv, const char *name)
{
	if (*argc < 2 || strcmp(argv[1], name))
		return 0;
	memmove(&argv[1], &argv[2], (size_t)(*argc - 1) * sizeof(*argv));
	(*argc)--;
	return 1;
}

/*
 * The default database by the XDG Base Directory rules:
 * $XDG_DATA_HOME/smriti/smriti.db when XDG_DATA_HOME is an absolute path (a
 * relative one is ignored, as the specification says), else
 * $HOME/.local/share/smriti/smriti.db when HOME is an existing directory.
 * Nothing is created here: a write makes the directory (cli_db_prepare), a
 * read on a missing database creates nothing.  Returns the path (caller
 * free()s) or NULL with *why set to a message naming --db and SMRITI_DB.
 */
static char *default_db(const char **why)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	struct stat st;

	if (xdg && xdg[0] == '/')
		return xasprintf("%s/smriti/smriti.db", xdg);
	if (!home || !*home) {
		*why = "no place for the database: neither XDG_DATA_HOME nor HOME is set;"
		       " name one with --db PATH or SMRITI_DB";
		return NULL;
	}
	/* a home that is not there is not made: a typo or a service account's /nonexistent */
	if (home[0] != '/' || stat(home, &st) || !S_ISDIR(st.st_mode)) {
		*why = "no place for the database: HOME is not an existing directory"
		       " (absolute path); name one with --db PATH or SMRITI_DB";
		return NULL;
	}
	return xasprintf("%s/.local/share/smriti/smriti.db", home);
}

static int is_postgres(const char *dsn)
{
	return !strncmp(dsn, "postgres://", 11) || !strncmp(dsn, "postgresql://", 13);
}

/*
 * 1 when cmd may call a provider here: a provider is configured (the
 * default one, SMRITI_PROVIDER or openai, has its key; local needs none)
 * or --provider is given, and --no-llm is not.
 */
static int wants_llm(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *p = getenv("SMRITI_PROVIDER"), *key;
	int asked = 0;

	if (!cmd || !(cmd->flags & CLI_FULL_FOR_LLM))
		return 0;
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--no-llm"))
			return 0;
		asked |= !strncmp(argv[i], "--provider", 10);
	}
	if (asked || (p && !strcmp(p, "local")))
		return 1;
	key = getenv(p && !strcmp(p, "anthropic") ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
	return key && *key;
}

/*
 * Replaces the lean process with smriti-full: the one beside this binary
 * if there is one, else the installed one under LIBEXEC_FROM_BINDIR.  The
 * path of this binary has its symlinks resolved, so a link to an installed
 * smriti (in ~/bin, say) still finds its smriti-full.
 */
static int exec_full(char **argv)
{
	char self[PATH_MAX], *dir, *beside, *installed;
	const char *tried;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return cli_fail(SMR_EINTERNAL, "cannot find my own binary: %s", strerror(errno));
	self[n] = '\0';
	dir = dirname(self);
	beside = xasprintf("%s/smriti-full", dir);
	installed = xasprintf("%s/" LIBEXEC_FROM_BINDIR "/smriti-full", dir);
	tried = beside;
	execv(beside, argv);
	if (errno == ENOENT) {
		tried = installed;
		execv(installed, argv);
	}
	if (errno == ENOENT)
		cli_fail(SMR_EINTERNAL, "this command needs smriti-full, which is neither at '%s'"
			 " nor at '%s'", beside, installed);
	else
		cli_fail(SMR_EINTERNAL, "this command needs '%s': %s", tried, strerror(errno));
	free(beside);
	free(installed);
	return 1;
}

/*
 * Reads the project file (project.h) into ctx: its Space always, its store
 * only when neither the command line nor the environment named one.  A
 * broken file stops every command but init (which rewrites it) with exit 2.
 */
static int take_project(struct cli_ctx *ctx, const char *command)
{
	struct smr_err err = SMR_ERR_INIT;
	int named = (ctx->db && *ctx->db) || (ctx->remote && *ctx->remote);

	if (project_find(NULL, &ctx->project, &err)) {
		if (command && !strcmp(command, "init"))
			return 0;
		return cli_fail(err.code, "%s", err.msg);
	}
	if (!ctx->project.path || named)
		return 0;
	if (ctx->project.url) {
		ctx->remote = ctx->project.url;
		ctx->remote_from = "project";
	} else if (ctx->project.db) {
		ctx->db = ctx->project.db;
		ctx->db_from = "project";
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_ctx ctx = { 0 };
	const struct cli_cmd *cmd;
	char **orig = xmalloc((size_t)(argc + 1) * sizeof(*argv));
	char *db_alloc = NULL;
	int rc, no_pager;

	memcpy(orig, argv, (size_t)(argc + 1) * sizeof(*argv));
	no_pager = take_flag(&argc, argv, "--no-pager");
	ctx.db = take_global(&argc, argv, "--db");
	ctx.remote = take_global(&argc, argv, "--remote");
	if (ctx.db && !*ctx.db) {
		free(orig);
		return cli_fail(SMR_EUSAGE, "--db needs a SQLite path or a postgres:// URL");
	}
	if (ctx.remote && !*ctx.remote && remote_given_empty(orig)) {
		free(orig);
		return cli_fail(SMR_EUSAGE, "--remote needs the URL of a smriti server");
	}
	help_for_command(&argc, argv);
	ctx.db_from = ctx.db ? "--db" : NULL;
	ctx.remote_from = ctx.remote ? "--remote" : NULL;
	/* an empty SMRITI_DB is unset, as for every variable of the environment */
	if (!ctx.db && (ctx.db = getenv("SMRITI_DB")) && *ctx.db)
		ctx.db_from = "SMRITI_DB";
	if (!ctx.remote && (ctx.remote = getenv("SMRITI_URL")) && *ctx.remote)
		ctx.remote_from = "SMRITI_URL";
	if (ctx.remote && !*ctx.remote)
		ctx.remote = NULL;
	ctx.token = getenv("SMRITI_TOKEN");
	rc = take_project(&ctx, argc > 1 ? argv[1] : NULL);
	if (rc) {
		free(orig);
		return rc;
	}
	if (argc > 1 && is_version_request(argv[1])) {
		project_release(&ctx.project);
		free(orig);
		return print_version(argc - 1, argv + 1);
	}
	cmd = argc > 1 ? cli_find(argv[1]) : NULL;
	if (!cli_is_full && (!cmd || (cmd->flags & CLI_FULL) || ctx.remote ||
			     (ctx.db && is_postgres(ctx.db)) || wants_llm(cmd, argc, argv))) {
		rc = exec_full(orig); /* returns only when no smriti-full could start */
		project_release(&ctx.project);
		free(orig);
		return rc;
	}
	if (argc < 2) {
		/* as git: a bare command is a usage error; the help goes to stderr */
		print_help(stderr);
		project_release(&ctx.project);
		free(orig);
		return smr_rc_exit_code(SMR_EUSAGE);
	}
	if (argc == 3 && !strcmp(argv[1], "help")) {
		project_release(&ctx.project);
		free(orig);
		return unknown_command(argv[2]);    /* help_for_command took every known one */
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_help(stdout);
		project_release(&ctx.project);
		free(orig);
		return 0;
	}
	if (!cmd) {
		project_release(&ctx.project);
		free(orig);
		return unknown_command(argv[1]);
	}
	if (!ctx.db || !*ctx.db) {
		ctx.db = db_alloc = default_db(&ctx.db_problem);
		ctx.db_is_default = 1;
		ctx.db_from = "default";
	}
	if (cmd->flags & CLI_RUNTIME)
		ctx.rt = cli_runtime_new();
	if ((cmd->flags & CLI_PAGER) && !no_pager)
		cli_pager_start();
	rc = cmd->run(argc - 1, argv + 1, &ctx);
	cli_pager_stop();
	ops_close(ctx.ops);
	cli_runtime_free(ctx.rt);
	project_release(&ctx.project);
	free(db_alloc);
	free(orig);
	return rc;
}
