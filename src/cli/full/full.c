/*
 * full.c -- what only smriti-full's CLI carries: the server and draft
 * commands, and the chat runtime that main builds for CLI_RUNTIME commands.
 */
#include "cli/cli.h"
#include "ops/full/runtime.h"

const int cli_is_full = 1;

int cmd_draft(int argc, char **argv, struct cli_ctx *ctx);
int cmd_serve(int argc, char **argv, struct cli_ctx *ctx);
int cmd_openapi(int argc, char **argv, struct cli_ctx *ctx);
int cmd_session(int argc, char **argv, struct cli_ctx *ctx);

const struct cli_cmd cli_full_commands[] = {
	{ "draft", "draft SESSION|--job JOB [--provider P] [--model M] [--save [--replace]] [--json]"
	  "  (Draft with AI)",
	  cmd_draft, CLI_FULL | CLI_RUNTIME },
	{ "session", "session list SPACE | show SESSION | switch SESSION SEQ | fork SESSION SEQ [--json]  (chat turns and their status, versions, a new session from a turn)",
	  cmd_session, CLI_FULL | CLI_PAGER },
	{ "serve", "serve [--listen HOST:PORT] [--workers N]  (the HTTP API)", cmd_serve,
	  CLI_FULL },
	{ "openapi", "openapi  (print the HTTP API's OpenAPI document)", cmd_openapi, CLI_FULL },
	{ NULL, NULL, NULL, 0 },
};

struct runtime *cli_runtime_new(void)
{
	return runtime_new_from_env();
}

void cli_runtime_free(struct runtime *rt)
{
	runtime_free(rt);
}
