/*
 * full.c -- the commands only smriti-full carries (server, MCP, chat
 * runtime) and the hook that registers their operations.
 */
#include "cli/cli.h"
#include "ops/api.h"
#include "ops/runtime/runtime.h"

const int cli_is_full = 1;

int cmd_mcp(int argc, char **argv, struct cli_ctx *ctx);
int cmd_serve(int argc, char **argv, struct cli_ctx *ctx);

const struct cli_cmd cli_full_commands[] = {
	{ "mcp", "mcp  (serve MCP over stdio for agent hosts)", cmd_mcp, CLI_FULL },
	{ "serve", "serve [--listen HOST:PORT] [--workers N]  (the HTTP API)", cmd_serve,
	  CLI_FULL },
	{ NULL, NULL, NULL, 0 },
};

void cli_init(void)
{
	/* runtime operation tables are registered here: api_register(...) */
	api_register(chat_api_ops);
}
