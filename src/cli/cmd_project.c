/*
 * cmd_project.c -- `smriti init` and `smriti status`: a project directory
 * that knows its Space (cli/project.h), as a git work tree knows its
 * repository.  init writes the project file and makes the Space if it is
 * not there; status says which file, Space and store are in force.
 */
#include "cli/cli.h"
#include "cli/files.h"
#include "util/jfield.h"
#include "util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_JSON = 1, OPT_FORCE };

static const struct option project_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct project_args {
	int json, force, allow_force;
};

static int take(int c, const char *val, void *arg)
{
	struct project_args *a = arg;

	(void)val;
	if (c == OPT_JSON)
		a->json = 1;
	else if (c == OPT_FORCE && a->allow_force)
		a->force = 1;
	else
		return CLI_OPT_REFUSED;
	return 0;
}

/* The Space exists afterwards; *created says whether this call made it. */
static int ensure_space(struct cli_ctx *ctx, const char *name, int *created)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;
	enum smr_rc rc = cli_call_keep(ctx, "space.get", json_pack("{s:s}", "space", name), &res,
				       &err);

	json_decref(res);
	res = NULL;
	*created = 0;
	if (rc == SMR_ENOTFOUND) {
		*created = 1;
		return cli_call(ctx, "space.create", json_pack("{s:s}", "name", name), &res) ||
		       (json_decref(res), 0);
	}
	return rc ? cli_fail(rc, "%s", err.msg) : 0;
}

/* What the file says of the store: only what --db, --remote or their variables named. */
static void named_store(const struct cli_ctx *ctx, const char **db, const char **url)
{
	*db = *url = NULL;
	if (ctx->remote && strcmp(ctx->remote_from, "project"))
		*url = ctx->remote;
	else if (!ctx->remote && ctx->db_from && (!strcmp(ctx->db_from, "--db") ||
						  !strcmp(ctx->db_from, "SMRITI_DB")))
		*db = ctx->db;
}

static int init_write(struct cli_ctx *ctx, const char *space, int force, int json)
{
	struct project here = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	const char *db, *url;
	char *text, cwd[PATH_MAX];
	int rc, created, same;

	if (!getcwd(cwd, sizeof(cwd)))
		return cli_fail(SMR_EINTERNAL, "cannot read the current directory: %s",
				strerror(errno));
	named_store(ctx, &db, &url);
	text = project_text(space, db, url);
	/* only a file in this directory counts: a parent's is left as it is */
	if (ctx->project.path && !strncmp(ctx->project.path, cwd, strlen(cwd)) &&
	    !strchr(ctx->project.path + strlen(cwd) + 1, '/'))
		here = ctx->project, memset(&ctx->project, 0, sizeof(ctx->project));
	same = here.path && !strcmp(here.space, space);
	if (here.path && !same && !force) {
		rc = cli_fail(SMR_ECONFLICT, "%s already names Space '%s': give --force to make it"
			      " '%s'", here.path, here.space, space);
		goto out;
	}
	rc = ensure_space(ctx, space, &created);
	if (!rc && (rc = cli_write_file(PROJECT_FILE, text, 0644, &err)))
		rc = cli_fail(rc, "%s", err.msg);
	if (rc)
		goto out;
	if (json) {
		json_t *doc = json_pack("{s:s, s:s+, s:b}", "space", space, "file", cwd,
					"/" PROJECT_FILE, "created_space", created);

		cli_print_json(doc);
		json_decref(doc);
	} else {
		printf("%s Space '%s' in %s/%s%s\n", same ? "Kept" : "Set", space, cwd,
		       PROJECT_FILE, created ? " (Space created)" : "");
	}
out:
	project_release(&here);
	free(text);
	return rc;
}

int cmd_init(int argc, char **argv, struct cli_ctx *ctx)
{
	struct project_args a = { .allow_force = 1 };
	char cwd[PATH_MAX], *base;
	int rc, first;

	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", cli_find("init")->usage);
		return 0;
	}
	rc = cli_options(cli_find("init"), argc, argv, "h", project_opts, "unknown option", take,
			 &a, &first);
	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc - first > 1)
		return cli_usage(cli_find("init"), "give at most one SPACE");
	if (argc - first == 1)
		return init_write(ctx, argv[first], a.force, a.json);
	/* no name: the directory's, as git names a clone after its repository */
	if (!getcwd(cwd, sizeof(cwd)))
		return cli_fail(SMR_EINTERNAL, "cannot read the current directory: %s",
				strerror(errno));
	base = strrchr(cwd, '/');
	return init_write(ctx, base && base[1] ? base + 1 : "default", a.force, a.json);
}

/* HEAD of the project's Space, or NULL with *why saying why there is none. */
static json_t *status_head(struct cli_ctx *ctx, const char *space, char *why, size_t n)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;

	if (!space) {
		snprintf(why, n, "no Space: run 'smriti init SPACE' here");
		return NULL;
	}
	if (!cli_call_keep(ctx, "head", json_pack("{s:s}", "space", space), &res, &err))
		return res;
	json_decref(res);
	snprintf(why, n, "%s", err.msg);
	return NULL;
}

int cmd_status(int argc, char **argv, struct cli_ctx *ctx)
{
	struct project_args a = { 0 };
	const char *space = ctx->project.space, *store = ctx->remote ? ctx->remote : ctx->db;
	const char *from = ctx->remote ? ctx->remote_from : ctx->db_from;
	char why[sizeof(((struct smr_err *)0)->msg)] = "";
	json_t *head;
	int rc, first;

	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti %s\n", cli_find("status")->usage);
		return 0;
	}
	rc = cli_options(cli_find("status"), argc, argv, "h", project_opts, "unknown option",
			 take, &a, &first);
	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc > first)
		return cli_usage(cli_find("status"), "status takes no arguments");
	head = status_head(ctx, space, why, sizeof(why));
	if (a.json) {
		json_t *doc = json_pack("{s:s?, s:s?, s:{s:s, s:s?, s:s?}, s:O?, s:s?}",
					"project_file", ctx->project.path, "space", space,
					"store", "kind", ctx->remote ? "server" : "database",
					"name", store, "from", from, "head", head, "problem",
					head ? NULL : why);

		cli_print_json(doc);
		json_decref(doc);
	} else {
		printf("project file: %s\n", ctx->project.path ? ctx->project.path :
		       "none (run 'smriti init SPACE' to make one)");
		printf("Space:        %s\n", space ? space : "none");
		printf("%s:     %s (from %s)\n", ctx->remote ? "server  " : "database",
		       store ? store : ctx->db_problem, from ? from : "nothing");
		if (head)
			printf("HEAD:         %.12s %s\n", jfield_str(head, "commit_hash"),
			       jfield_str(head, "title"));
		else
			printf("HEAD:         none (%s)\n", why);
	}
	json_decref(head);
	return 0;
}
