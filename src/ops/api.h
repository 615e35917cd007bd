/*
 * api.h -- every operation addressable by name with JSON in and JSON out.
 *
 * This is the uniform face of the ops layer that transports use when their
 * input is already JSON-shaped: the CLI (locally, or forwarded to a server
 * with --remote), MCP tool calls, and the server's /api/ops/{name} route.
 * Because the CLI renders from the same result document whether it ran the
 * operation itself or a server did, local and remote output are identical.
 */
#ifndef SMRITI_API_H
#define SMRITI_API_H

#include <jansson.h>

#include "ops/ops.h"

struct api_op {
	const char *name;         /* "space.create", "head", ... */
	enum smr_rc (*run)(struct ops_ctx *ctx, const json_t *params, json_t **result,
			   struct smr_err *err);
	int writes;               /* 1 when the operation changes state */
	int slow;                 /* 1 when it may wait on a provider (HTTP: on a worker) */
};

/* Looks up an operation by name; NULL if there is none. */
const struct api_op *api_find(const char *name);

/*
 * Runs operation name with params (a JSON object; NULL means {}).  On
 * success *result is a new reference the caller json_decref()s.  On failure
 * an operation may still set *result to details worth showing (chat.send
 * returns the stored user turn when the provider fails); callers must
 * initialise *result to NULL and json_decref() it either way.
 */
enum smr_rc api_call(struct ops_ctx *ctx, const char *name, const json_t *params,
		     json_t **result, struct smr_err *err);

/* Parameter helpers for operation handlers (also used by other api_*.c files). */
enum smr_rc api_str(const json_t *params, const char *key, int required, const char **out,
		    struct smr_err *err);
enum smr_rc api_int(const json_t *params, const char *key, long long min, long long max,
		    long long *out, struct smr_err *err);

/*
 * The checkpoint params name by "hash" (a hash or unique prefix only,
 * ops_resolve_hash) or else by "ref" (any REF, ops_resolve).  Caller
 * releases out.
 */
enum smr_rc api_checkpoint_param(struct ops_ctx *ctx, const json_t *params,
				 struct checkpoint *out, struct smr_err *err);

/* An array of checkpoint documents; new reference. */
json_t *api_checkpoints_json(const struct checkpoint *v, size_t n);

/* The operations of spaces and checkpoints (api.c). */
extern const struct api_op api_core_ops[];

/*
 * The operation tables of this binary, NULL-terminated, chosen at link time
 * like the store's backends: ops/builtins_lean.c lists the core ones,
 * ops/runtime/builtins_full.c adds chat and drafts.
 */
extern const struct api_op *const api_tables[];

#endif
