/*
 * cmd_mcp.c -- `smriti mcp`: serve the Model Context Protocol on stdin and
 * stdout for an agent host that starts Smriti as a subprocess.
 *
 * Tools run against the local store (--db, SMRITI_DB or the XDG default),
 * or, with --remote / SMRITI_URL, against a Smriti server through the same
 * remote call the CLI uses, so agents on several machines share one Space.
 * stdout carries protocol messages only; the one log line goes to stderr.
 * It lives in the lean binary; main.c hands it to smriti-full for remote
 * and PostgreSQL use, or when a provider is configured (the review tool's
 * LLM pass).
 */
#include "cli/cli.h"
#include "mcp/mcp.h"
#include "ops/api.h"
#include "ops/changes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: smriti [--db PATH|URL] [--remote URL] mcp\n\n"
	"Serves the Model Context Protocol (revision 2025-11-25; also 2025-06-18,\n"
	"2025-03-26, 2024-11-05) over stdio: newline-delimited JSON-RPC on stdin and\n"
	"stdout, logs on stderr, exit at end of input.  Register it with an MCP host as\n"
	"  {\"command\": \"smriti\", \"args\": [\"mcp\"], \"env\": {\"SMRITI_DB\": \"...\"}}\n"
	"Tools: list_spaces, create_space, read_head, show_checkpoint, log, diff,\n"
	"write_checkpoint, restore, fork, review.\n"
	"Resources: smriti://spaces/{name}/head, smriti://checkpoints/{hash}\n"
	"(Markdown; add .json for JSON).  See docs/mcp.md.\n";

static enum smr_rc remote_call(void *cls, const char *op, const json_t *params,
			       json_t **result, struct smr_err *err)
{
	return cli_remote_call(cls, op, params, result, err);
}

/* The watch on writes tells the stdio loop through a pipe (on the watch's thread). */
static void wake(void *ud)
{
	const int *fds = ud;
	ssize_t k;

	do
		k = write(fds[1], "", 1);
	while (k < 0 && errno == EINTR);    /* a full pipe already wakes the loop */
}

/*
 * A local store: the process's watch on writes, so that subscriptions hear
 * of a write at once; fds[0] is what the loop polls, -1 when there is none.
 */
static struct ops_changes *watch_writes(struct cli_ctx *ctx, int fds[2],
					struct ops_changes_sub *sub)
{
	struct ops_changes *c = NULL;

	fds[0] = fds[1] = -1;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK)) {
		fds[0] = fds[1] = -1;
		return NULL;
	}
	if (ops_changes_start(ctx->db, &c, NULL)) {
		close(fds[0]);
		close(fds[1]);
		fds[0] = fds[1] = -1;
		return NULL;
	}
	*sub = (struct ops_changes_sub){ .moved = wake, .ud = fds };
	ops_changes_subscribe(c, sub);
	return c;
}

int cmd_mcp(int argc, char **argv, struct cli_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_changes *changes = NULL;
	struct ops_changes_sub sub;
	struct mcp_session *s;
	int rc, fds[2] = { -1, -1 };

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 1)
		return cli_fail(SMR_EUSAGE, "mcp takes no arguments, got '%s' (see 'smriti mcp"
				" --help')", argv[1]);
	if (!ctx->remote) {
		if (cli_open(ctx, &err))
			return cli_fail(err.code, "%s", err.msg);
		s = mcp_session_new(mcp_call_local, ctx->ops, getenv("SMRITI_AUTHOR"));
		changes = watch_writes(ctx, fds, &sub);
	} else {
		s = mcp_session_new(remote_call, ctx, getenv("SMRITI_AUTHOR"));
	}
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "smriti mcp: serving MCP %s and %s on stdio (%s store)\n",
		MCP_MODERN_VERSION, MCP_LATEST_VERSION, ctx->remote ? "remote" : "local");
	rc = mcp_serve_stdio(s, STDIN_FILENO, STDOUT_FILENO, fds[0]);
	if (changes) {
		ops_changes_unsubscribe(changes, &sub);
		ops_changes_stop(changes);
		close(fds[0]);
		close(fds[1]);
	}
	mcp_session_free(s);
	return rc;
}
