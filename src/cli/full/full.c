/*
 * full.c -- the commands only smriti-full carries (server, MCP, chat
 * runtime) and the hook that registers their operations.
 */
#include "cli/cli.h"
#include "ops/api.h"

const int cli_is_full = 1;

const struct cli_cmd cli_full_commands[] = {
	{ NULL, NULL, NULL, 0 },
};

void cli_init(void)
{
	/* runtime operation tables are registered here: api_register(...) */
}
