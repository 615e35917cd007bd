/*
 * prime.h -- the primer operation (ops_prime.c): an agent's first read of a
 * Space, as text and as a document (domain/prime.h has what it holds and
 * the order it is trimmed in).
 */
#ifndef SMRITI_OPS_PRIME_H
#define SMRITI_OPS_PRIME_H

#include "ops/api.h"

/*
 * The primer of space within budget tokens (0: the default), its loop
 * naming MCP tools when mcp, else commands.  *result (new reference) is
 * prime_build()'s document; its "text" is what an agent reads.
 * SMR_ENOTFOUND for an unknown Space.
 */
enum smr_rc ops_prime(struct ops_ctx *ctx, const char *space, long long budget, int mcp,
		      json_t **result, struct smr_err *err);

/* The "prime" operation: {space, budget?, tools?: "cli"|"mcp"}. */
extern const struct api_op prime_ops[];

#endif
