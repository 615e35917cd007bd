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

/*
 * What an operation needs of a signed-in caller (ops/auth.h), as its
 * declaration states it ("access": {need, role?, param?}, ops/decl.h) and
 * api_call() checks it before the operation runs.  An operation that
 * declares nothing (NEED_UNDECLARED) is refused to every signed-in caller,
 * so a new operation cannot be open by omission; /openapi.json publishes
 * every declaration (x-smriti-access) and the role tests are generated
 * from it.  When param is absent from the call, the operation itself keeps
 * to what the caller may read (ops_resolve, lists).
 */
enum api_need {
	NEED_UNDECLARED = 0,
	NEED_NONE,       /* "none": any signed-in caller; results keep to what it may read */
	NEED_ADMIN,      /* "admin": the administrator (SMRITI_TOKEN) or the database's owner */
	NEED_SELF,       /* "self": admin, or a person naming itself or one of its agents in param */
	NEED_SPACE,      /* "space": role on the Space named by param */
	NEED_SESSION,    /* "session": role on the Space of the session param */
	NEED_JOB,        /* "job": role on the Space of the draft job param */
	NEED_REF,        /* "ref": role on the Space of the Checkpoint param ("hash" when absent) */
	NEED_TOKEN,      /* "token": admin, or the owner of the token param */
	NEED_GENERATION, /* "generation": role on the Space of the session of the generation param */
	NEED_SPACE_ANY,  /* "space-or-deleted": role on the Space named by param, live or deleted
			    (grants outlive a soft delete, so a deleted Space's reflog stays its
			    people's) */
};

struct api_access {
	enum api_need need;
	enum role role;           /* for NEED_SPACE, _SESSION, _JOB, _REF, _GENERATION, _SPACE_ANY */
	const char *param;        /* borrowed from the declaration */
};

struct api_op {
	const char *name;         /* "space.create", "head", ... */
	enum smr_rc (*run)(struct ops_ctx *ctx, const json_t *params, json_t **result,
			   struct smr_err *err);
	int writes;               /* 1 when the operation changes state */
	int slow;                 /* 1 when it may wait on a provider (HTTP: on a worker) */
};

/*
 * The rule a declaration's "access" member states ({need, role?, param?};
 * NULL or malformed: NEED_UNDECLARED, which refuses everyone but the
 * administrator).  out->param borrows from decl.
 */
void api_access_parse(const json_t *decl, struct api_access *out);

/*
 * What api_call() checks before running the operation name for ctx->who,
 * under rule a (api_access_parse of its declaration): SMR_OK, or
 * SMR_ENOTFOUND for what the caller cannot read, SMR_EFORBIDDEN for a role
 * too low.
 */
enum smr_rc api_check_rule(struct ops_ctx *ctx, const char *name, const struct api_access *a,
			   const json_t *params, struct smr_err *err);

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

/*
 * api_check_rule() with op's declared rule.  For entry points that do not
 * go through api_call() (a chat send that streams) and transports that
 * must decide before calling.
 */
enum smr_rc api_check_access(struct ops_ctx *ctx, const struct api_op *op,
			     const json_t *params, struct smr_err *err);

/*
 * Checks params against op's declared parameters (ops/decl.h), as
 * api_call() does before anything else: SMR_OK when they fit or op
 * declares none, else SMR_EUSAGE (a required one missing) or SMR_EINVAL
 * with a message naming the parameter.
 */
enum smr_rc api_check_params(const struct api_op *op, const json_t *params,
			     struct smr_err *err);

/*
 * An answer's checkpoint written out once already: an operation that
 * answers with a checkpoint it sealed (checkpoint.create, .update) keeps
 * its items' texts (domain/item_texts.h) in ctx until the transport takes
 * them with api_answer_texts (caller drops them with api_texts_drop, NULL
 * when none), and api_render writes the answer from them: what
 * json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY) writes, without
 * writing a 1,000-item state out again.  api_render: NULL when jansson
 * cannot write the answer; caller frees.
 */
struct item_texts;
struct item_texts *api_answer_texts(struct ops_ctx *ctx);
void api_texts_drop(struct item_texts *t);
char *api_render(const json_t *result, const struct item_texts *t, size_t *len);

/*
 * Readers of a declared operation's parameters, for its function: api_call()
 * checked them against the declaration first (type, required, enum, range),
 * so they only read.  A string (borrowed; NULL when absent or null), an
 * integer (dflt when absent or null), a boolean (0 when absent).
 */
const char *api_text(const json_t *params, const char *key);
long long api_number(const json_t *params, const char *key, long long dflt);
int api_flag(const json_t *params, const char *key);

/*
 * Parameter helpers that check as they read, for functions whose parameters
 * are not declared in full yet.
 */
enum smr_rc api_str(const json_t *params, const char *key, int required, const char **out,
		    struct smr_err *err);
enum smr_rc api_int(const json_t *params, const char *key, long long min, long long max,
		    long long *out, struct smr_err *err);
/* An optional boolean parameter; absent or null is 0. */
enum smr_rc api_bool(const json_t *params, const char *key, int *out, struct smr_err *err);

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
 * ops/full/builtins_full.c adds chat and drafts.
 */
extern const struct api_op *const api_tables[];

#endif
