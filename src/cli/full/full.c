/*
 * full.c -- the commands only smriti-full carries (server, drafts) and the hook that registers their operations.
 */
#include "cli/cli.h"
#include "ops/api.h"
#include "ops/runtime/draft.h"
#include "ops/runtime/review_llm.h"
#include "ops/runtime/runtime.h"

const int cli_is_full = 1;

int cmd_draft(int argc, char **argv, struct cli_ctx *ctx);
int cmd_serve(int argc, char **argv, struct cli_ctx *ctx);

const struct cli_cmd cli_full_commands[] = {
	{ "draft", "draft SESSION [--provider P] [--model M] [--json]  (Draft with AI)",
	  cmd_draft, CLI_FULL },
	{ "serve", "serve [--listen HOST:PORT] [--workers N]  (the HTTP API)", cmd_serve,
	  CLI_FULL },
	{ NULL, NULL, NULL, 0 },
};

void cli_init(void)
{
	/* runtime operation tables are registered here: api_register(...) */
	api_register(chat_api_ops);
	api_register(draft_api_ops);
	api_register(chat_view_ops);
	ops_review_set_llm_pass(&review_llm_pass);
}
