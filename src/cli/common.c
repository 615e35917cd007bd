/*
 * common.c -- what every CLI command shares: running an operation locally
 * or remotely, error reporting with the documented exit codes, JSON output.
 */
#include "cli/cli.h"
#include "ops/api.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t pager_pid;

int cli_fail(enum smr_rc rc, const char *fmt, ...)
{
	va_list ap;

	fputs("smriti: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return smr_rc_exit_code(rc);
}

int cli_usage(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("smriti: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'smriti %s --help')\n", cmd->name);
	return smr_rc_exit_code(SMR_EUSAGE);
}

const char *cli_default_author(void)
{
	static char uid[24];
	const char *names[] = { "SMRITI_AUTHOR", "USER", "LOGNAME" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const char *v = getenv(names[i]);

		if (v && *v)
			return v;
	}
	/*
	 * No login environment (a service, env -i, a container's arbitrary
	 * uid): the number, as `id -u` prints it.  Not the password database:
	 * the lean binary is static, and a static glibc's getpwuid() loads NSS
	 * modules at run time, which crashed it for a uid without an entry.
	 */
	snprintf(uid, sizeof(uid), "%lu", (unsigned long)getuid());
	return uid;
}

int cli_emphasis(void)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	if (no_color && *no_color)
		return 0;
	if (!term || !*term || !strcmp(term, "dumb"))
		return 0;
	return pager_pid || isatty(STDOUT_FILENO);
}

/* The pager command, as git picks it; NULL for none. */
static const char *pager_command(void)
{
	const char *p = getenv("SMRITI_PAGER"), *term = getenv("TERM");

	if (!p)
		p = getenv("PAGER");
	if (!p && (!term || !strcmp(term, "dumb")))
		return NULL;
	if (!p)
		p = "less";
	return *p && strcmp(p, "cat") ? p : NULL;
}

void cli_pager_start(void)
{
	const char *cmd;
	int fds[2];
	pid_t pid;

	if (pager_pid || !isatty(STDOUT_FILENO) || !(cmd = pager_command()))
		return;
	if (pipe(fds))
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (!pid) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		/* git's defaults: quit if one screen, raw colours, keep the screen */
		setenv("LESS", "FRX", 0);
		setenv("LV", "-c", 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	close(fds[0]);
	close(fds[1]);
	pager_pid = pid;
}

void cli_pager_stop(void)
{
	int status;

	if (!pager_pid)
		return;
	fflush(stdout);
	close(STDOUT_FILENO);      /* the pager sees end of input */
	while (waitpid(pager_pid, &status, 0) < 0 && errno == EINTR)
		;
	pager_pid = 0;
}

void cli_print_json(const json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY);
	fputc('\n', stdout);
}

void cli_print_hash(const json_t *v)
{
	if (json_is_string(v))
		printf("%s\n", json_string_value(v));
}

int cli_options(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
		const struct option *longopts, const char *refused, cli_take_fn take, void *arg,
		int *operand)
{
	int c, rc = 0;

	optind = 0;
	opterr = 0;
	while (!rc) {
		c = getopt_long(argc, argv, shortopts, longopts, NULL);
		if (c == -1)
			break;
		rc = c == '?' ? CLI_OPT_REFUSED : take(c, optarg, arg);
		if (rc == CLI_OPT_REFUSED)
			rc = cli_usage(cmd, "%s '%s'", refused, argv[optind - 1]);
	}
	*operand = optind;
	return rc;
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

/* mkdir -p of the directory path is in, each new level 0700; errors show at the open. */
static void make_parent_dirs(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	if (slash && slash != dir) {
		*slash = '\0';
		for (char *p = dir + 1; *p; p++) {
			if (*p == '/') {
				*p = '\0';
				mkdir(dir, 0700);
				*p = '/';
			}
		}
		mkdir(dir, 0700);
	}
	free(dir);
}

enum smr_rc cli_db_prepare(struct cli_ctx *ctx, struct smr_err *err)
{
	if (!ctx->db)
		return smr_errf(err, SMR_EUSAGE, "%s", ctx->db_problem);
	if (ctx->db_is_default)
		make_parent_dirs(ctx->db);
	return SMR_OK;
}

/* 1 when dsn names a SQLite file that is not there. */
static int sqlite_file_missing(const char *dsn)
{
	struct stat st;

	if (!strncmp(dsn, "postgres://", 11) || !strncmp(dsn, "postgresql://", 13) ||
	    !strncmp(dsn, "file:", 5) || !strcmp(dsn, ":memory:"))
		return 0;
	if (!strncmp(dsn, "sqlite://", 9))
		dsn += 9;
	return stat(dsn, &st) && errno == ENOENT;
}

static enum smr_rc open_store(struct cli_ctx *ctx, const char *dsn, struct smr_err *err)
{
	/* who a write names when the command names nobody (ops/auth.h's ops_writer) */
	struct ops_opts opt = { .rt = ctx->rt, .actor = cli_default_author() };

	return ops_open(&ctx->ops, dsn, &opt, err);
}

enum smr_rc cli_open_for(struct cli_ctx *ctx, int writes, struct smr_err *err)
{
	enum smr_rc rc;

	if (ctx->ops && !(ctx->db_stand_in && writes))
		return SMR_OK;
	if (ctx->ops) {                 /* a read stood in; now the real one */
		ops_close(ctx->ops);
		ctx->ops = NULL;
		ctx->db_stand_in = 0;
	}
	if (!ctx->db)
		return smr_errf(err, SMR_EUSAGE, "%s", ctx->db_problem);
	if (!writes && sqlite_file_missing(ctx->db)) {
		rc = open_store(ctx, ":memory:", err);
		ctx->db_stand_in = !rc;
		return rc;
	}
	rc = cli_db_prepare(ctx, err);
	return rc ? rc : open_store(ctx, ctx->db, err);
}

enum smr_rc cli_open(struct cli_ctx *ctx, struct smr_err *err)
{
	return cli_open_for(ctx, 1, err);
}

/*
 * A command that was given no SPACE (or REF) puts null there; the project's
 * Space takes its place.  Only null is filled: a parameter a command left
 * out means what the operation says it means (fsck and search: every Space).
 */
enum smr_rc cli_fill_space(struct cli_ctx *ctx, json_t *params, struct smr_err *err)
{
	static const char *const keys[] = { "space", "ref" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		if (!json_is_null(json_object_get(params, keys[i])))
			continue;
		if (!ctx->project.space)
			return smr_errf(err, SMR_EUSAGE, "name a %s, or run 'smriti init SPACE' in"
					" the project to make it the default here",
					i ? "REF" : "SPACE");
		json_object_set_new(params, keys[i], json_string(ctx->project.space));
	}
	return SMR_OK;
}


enum smr_rc cli_call_keep(struct cli_ctx *ctx, const char *op, json_t *params,
			  json_t **result, struct smr_err *err)
{
	enum smr_rc rc;

	rc = cli_fill_space(ctx, params, err);
	if (rc)
		;
	else if (ctx->remote) {
		rc = cli_remote_call(ctx, op, params, result, err);
	} else {
		const struct api_op *o = api_find(op);

		rc = cli_open_for(ctx, !o || o->writes, err);
		if (!rc)
			rc = api_call(ctx->ops, op, params, result, err);
	}
	json_decref(params);
	return rc;
}

int cli_call(struct cli_ctx *ctx, const char *op, json_t *params, json_t **result)
{
	struct smr_err err = SMR_ERR_INIT;
	enum smr_rc rc = cli_call_keep(ctx, op, params, result, &err);

	if (rc) {
		json_decref(*result);
		*result = NULL;
		return cli_fail(rc, "%s", err.msg);
	}
	return 0;
}
