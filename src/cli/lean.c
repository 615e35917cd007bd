/*
 * lean.c -- what the lean `smriti` binary lacks: it carries no network or
 * PostgreSQL code, so it has no extra commands and never calls a server
 * itself (main.c execs smriti-full for those).
 */
#include "cli/cli.h"

const int cli_is_full = 0;

const struct cli_cmd cli_full_commands[] = {
	{ NULL, NULL, NULL, 0 },
};

enum smr_rc cli_remote_call(struct cli_ctx *ctx, const char *op, const json_t *params,
			    json_t **result, struct smr_err *err)
{
	(void)ctx;
	(void)params;
	(void)result;
	return smr_errf(err, SMR_EINTERNAL, "'%s' against a server needs smriti-full", op);
}

struct runtime *cli_runtime_new(void)
{
	return NULL;
}

void cli_runtime_free(struct runtime *rt)
{
	(void)rt;
}
