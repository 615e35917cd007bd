/*
 * cli.h -- shared parts of the command-line transport.
 *
 * Each subcommand lives in its own cmd_*.c, parses its arguments into the
 * JSON parameters of one operation (ops/api.h), calls cli_call(), and
 * renders the result document as text or, with --json, prints it.  The
 * result is the same document whether the operation ran on the local store
 * or on a server (--remote / SMRITI_URL), so both give identical output.
 */
#ifndef SMRITI_CLI_H
#define SMRITI_CLI_H

#include <getopt.h>
#include <jansson.h>

#include "cli/project.h"
#include "ops/ops.h"

struct cli_ctx {
	const char *db;          /* DSN of the store, resolved from --db / SMRITI_DB / XDG;
				    NULL when no default could be named (db_problem says why) */
	const char *db_problem;  /* static message for db == NULL: names --db and SMRITI_DB */
	const char *remote;      /* server URL from --remote / SMRITI_URL, or NULL */
	const char *token;       /* SMRITI_TOKEN for the remote server, or NULL */
	int db_is_default;       /* 1 when db is the XDG default path */
	int db_stand_in;         /* 1 while ops holds an empty in-memory store standing in
				    for a database that does not exist (reads create none) */
	const char *db_from;     /* where db came from: "--db", "SMRITI_DB", the project file
				    ("project"), or "default" */
	const char *remote_from; /* "--remote", "SMRITI_URL" or "project" when remote is set */
	struct project project;  /* the project file in force (project.h); path NULL if none */
	struct runtime *rt;      /* built by main for CLI_RUNTIME commands (smriti-full) */
	struct ops_ctx *ops;     /* opened lazily by cli_open; main closes it */
};

struct cli_cmd {
	const char *name;
	const char *usage;       /* one line, shown by `smriti help` */
	int (*run)(int argc, char **argv, struct cli_ctx *ctx);
	unsigned flags;
};

#define CLI_FULL 1u          /* needs the full binary (network, providers) */
#define CLI_FULL_FOR_LLM 2u  /* runs in the full binary when a provider is configured */
#define CLI_RUNTIME 4u       /* main builds the chat runtime for it (smriti-full) */
#define CLI_PAGER 8u         /* long output: paged on a terminal (cli_pager_start) */

/*
 * Opens ctx->ops on the local store (once), with ctx->rt in it, creating the
 * database if it does not exist (for a command that writes, or serves).
 */
enum smr_rc cli_open(struct cli_ctx *ctx, struct smr_err *err);

/*
 * cli_open() for an operation: one that only reads (api_op.writes == 0)
 * creates no database; when the SQLite file is missing it runs on an empty
 * in-memory store instead, so a list is empty and a named thing is not
 * found (exit 3).  A write later in the same command opens the real one.
 */
enum smr_rc cli_open_for(struct cli_ctx *ctx, int writes, struct smr_err *err);

/*
 * Makes ctx->db ready to be created: SMR_EUSAGE with db_problem when no
 * database could be named, else, for the default path, its directory
 * (mode 0700, parents included, as the XDG rules ask of a writer).
 */
enum smr_rc cli_db_prepare(struct cli_ctx *ctx, struct smr_err *err);

/*
 * Runs an operation locally or remotely.  On success *result is a new
 * reference.  On failure prints the error and returns the exit code.
 */
int cli_call(struct cli_ctx *ctx, const char *op, json_t *params, json_t **result);

/*
 * cli_call() that prints nothing: returns the result code with err filled,
 * and *result as the operation left it (details of a failure, e.g. merge
 * conflicts; NULL remotely).  Caller json_decref()s *result either way.
 */
enum smr_rc cli_call_keep(struct cli_ctx *ctx, const char *op, json_t *params,
			  json_t **result, struct smr_err *err);

/*
 * The one place a command's missing SPACE is filled: a command given no
 * SPACE (or REF) puts null under "space" (or "ref") in the operation's
 * parameters, and cli_call() sets it to the project's Space (ctx->project),
 * or fails with SMR_EUSAGE naming 'smriti init' when there is no project.
 */
enum smr_rc cli_fill_space(struct cli_ctx *ctx, json_t *params, struct smr_err *err);

/* Prints an error line ("smriti: ...") and returns the exit code for rc. */
int cli_fail(enum smr_rc rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Usage error for a command: one line pointing at its --help; returns 2. */
int cli_usage(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Takes one option of a command: c is what getopt_long returned for it and
 * val its value (NULL when it has none).  Returns 0 to go on,
 * CLI_OPT_REFUSED when c is not an option of the command, CLI_OPT_DONE to
 * stop with success (help was printed), or an exit code to stop with.
 */
typedef int (*cli_take_fn)(int c, const char *val, void *arg);
#define CLI_OPT_REFUSED (-1)
#define CLI_OPT_DONE (-2)

/*
 * The option loop of every command: getopt_long over argv from a fresh
 * start, without getopt's own messages, handing each option to take.  An
 * option refused by getopt or by take is a usage error: "<refused> '--x'"
 * (refused is "unknown option", or "unknown option or missing value").
 * Returns 0 with *operand set to the index of argv's first operand,
 * CLI_OPT_DONE, or an exit code.
 */
int cli_options(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
		const struct option *longopts, const char *refused, cli_take_fn take, void *arg,
		int *operand);

/*
 * The author of a write from the command line, as git takes its identity
 * from the environment: SMRITI_AUTHOR, else the login name (USER, then
 * LOGNAME), else the numeric uid ("12345").  Never NULL; never a lookup in
 * the password database (no NSS in the static binary).  The result is the
 * environment's string or static storage: do not free it.
 */
const char *cli_default_author(void);

/*
 * Long output goes through a pager when stdout is a terminal, as git's
 * log does: SMRITI_PAGER, else PAGER, else less (none on a dumb terminal;
 * "" or "cat" turn it off), run by sh with LESS=FRX and LV=-c unless they
 * are set.  Never when stdout is a pipe or a file.  Stop waits for it.
 */
void cli_pager_start(void);

/*
 * 1 when stdout reaches a person's terminal (directly, or through the
 * pager cli_pager_start gave it) that takes emphasis: NO_COLOR is unset or
 * empty (no-color.org) and TERM is set and not "dumb".  Output to a file
 * or a pipe is data, and carries no markup at all.
 */
int cli_emphasis(void);
void cli_pager_stop(void);

/* Prints a JSON document on stdout, indented, with a final newline. */
void cli_print_json(const json_t *doc);

/*
 * What a write command prints under --quiet: the full hash HEAD is at
 * after the write (v, a string), alone on its line, so that an agent in a
 * loop can take it as the next --parent; nothing when v is not a string.
 */
void cli_print_hash(const json_t *v);

/* 1 if argv has --help or -h before any "--". */
int cli_wants_help(int argc, char **argv);

/* Looks up the command table entry by name (also used for per-command help). */
const struct cli_cmd *cli_find(const char *name);

/*
 * Forwards an operation to the server at ctx->remote (remote.c, full binary
 * only).  Same contract as api_call.
 */
enum smr_rc cli_remote_call(struct cli_ctx *ctx, const char *op, const json_t *params,
			    json_t **result, struct smr_err *err);

/*
 * The chat runtime for a CLI_RUNTIME command: built from the environment in
 * smriti-full (full.c), NULL in the lean binary (lean.c).  Caller
 * cli_runtime_free()s.
 */
struct runtime *cli_runtime_new(void);
void cli_runtime_free(struct runtime *rt);

/* Commands (cmd_*.c). */
int cmd_space(int argc, char **argv, struct cli_ctx *ctx);
int cmd_checkpoint(int argc, char **argv, struct cli_ctx *ctx);
int cmd_commit(int argc, char **argv, struct cli_ctx *ctx);
int cmd_head(int argc, char **argv, struct cli_ctx *ctx);
int cmd_show(int argc, char **argv, struct cli_ctx *ctx);
int cmd_log(int argc, char **argv, struct cli_ctx *ctx);
int cmd_diff(int argc, char **argv, struct cli_ctx *ctx);
int cmd_restore(int argc, char **argv, struct cli_ctx *ctx);
int cmd_handoff(int argc, char **argv, struct cli_ctx *ctx);
int cmd_fork(int argc, char **argv, struct cli_ctx *ctx);
int cmd_merge(int argc, char **argv, struct cli_ctx *ctx);
int cmd_fsck(int argc, char **argv, struct cli_ctx *ctx);
int cmd_mcp(int argc, char **argv, struct cli_ctx *ctx);
int cmd_review(int argc, char **argv, struct cli_ctx *ctx);
int cmd_ingest(int argc, char **argv, struct cli_ctx *ctx);
int cmd_user(int argc, char **argv, struct cli_ctx *ctx);
int cmd_token(int argc, char **argv, struct cli_ctx *ctx);
int cmd_grant(int argc, char **argv, struct cli_ctx *ctx);
int cmd_revoke(int argc, char **argv, struct cli_ctx *ctx);
int cmd_access(int argc, char **argv, struct cli_ctx *ctx);
int cmd_whoami(int argc, char **argv, struct cli_ctx *ctx);
int cmd_reflog(int argc, char **argv, struct cli_ctx *ctx);
int cmd_gc(int argc, char **argv, struct cli_ctx *ctx);
int cmd_blame(int argc, char **argv, struct cli_ctx *ctx);
int cmd_search(int argc, char **argv, struct cli_ctx *ctx);
int cmd_export(int argc, char **argv, struct cli_ctx *ctx);
int cmd_import(int argc, char **argv, struct cli_ctx *ctx);
int cmd_init(int argc, char **argv, struct cli_ctx *ctx);
int cmd_status(int argc, char **argv, struct cli_ctx *ctx);
int cmd_prime(int argc, char **argv, struct cli_ctx *ctx);
int cmd_setup(int argc, char **argv, struct cli_ctx *ctx);

/* Human renderings of result documents (render.c). */
void render_checkpoint(const json_t *c);
void render_log(const json_t *list);
void render_diff(const json_t *d);
void render_spaces(const json_t *list);
void render_fsck(const json_t *report);

#endif
