/*
 * ops_prime.c -- the "prime" operation: the primer an agent reads when a
 * session starts (domain/prime.h), from HEAD and the last hand-off note.
 * Every transport reaches it by name: the CLI's `smriti prime` and its
 * hooks, /api/ops/prime, and an MCP prompt (whose text is the result's
 * "text": ops_prime() with tools "mcp").
 */
#include "domain/prime.h"
#include "ops/api.h"
#include "ops/ops.h"
#include "ops/prime.h"

#include <string.h>

enum smr_rc ops_prime(struct ops_ctx *ctx, const char *space, long long budget, int mcp,
		      json_t **result, struct smr_err *err)
{
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	struct handoff note = { 0 };
	json_t *handoff = NULL;
	enum smr_rc rc = ops_space_get(ctx, space, &sp, err);

	if (!rc && sp.head)
		rc = ops_head(ctx, sp.name, &c, err);
	if (!rc && sp.head)
		rc = ops_handoff_latest(ctx, sp.name, &note, err);
	if (!rc && note.id)
		handoff = ops_handoff_json(&note, c.hash);
	if (!rc) {
		struct prime_in in = { sp.name, sp.head ? &c : NULL, handoff, (size_t)budget,
				       mcp ? PRIME_TOOLS_MCP : PRIME_TOOLS_CLI };

		*result = prime_build(&in);
	}
	json_decref(handoff);
	handoff_release(&note);
	checkpoint_release(&c);
	space_release(&sp);
	return rc;
}

static enum smr_rc op_prime(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	const char *space, *tools;
	long long budget = 0;
	enum smr_rc rc = api_str(p, "space", 1, &space, err);

	if (!rc)
		rc = api_int(p, "budget", PRIME_MIN_BUDGET, PRIME_MAX_BUDGET, &budget, err);
	if (!rc)
		rc = api_str(p, "tools", 0, &tools, err);
	if (!rc && tools && strcmp(tools, "cli") && strcmp(tools, "mcp"))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'tools' must be \"cli\" or \"mcp\"");
	if (!rc)
		rc = ops_prime(ctx, space, budget, tools && !strcmp(tools, "mcp"), result, err);
	return rc;
}

const struct api_op prime_ops[] = {
	{ "prime", op_prime, 0, 0 },
	{ NULL, NULL, 0, 0 },
};
