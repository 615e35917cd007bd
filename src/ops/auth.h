/*
 * auth.h -- who is calling and what they may do: the identity a transport
 * established (struct principal, in ctx->who), the role it has on a Space,
 * and the checks the operations layer makes with them.
 *
 * The rule is applied once, here and in api_call() (api.h), so the CLI
 * against a server, HTTP, MCP over HTTP and the web UI all get the same
 * answer.  A Space the caller cannot read does not exist for it: lookups
 * answer SMR_ENOTFOUND with the same words as for a Space that really is
 * not there, and lists leave it out.  A Space it can read but not change
 * answers SMR_EFORBIDDEN.
 *
 * ctx->who == NULL is the owner of the database itself (the local CLI, a
 * loopback server without users): every right, as before teams existed.
 */
#ifndef SMRITI_OPS_AUTH_H
#define SMRITI_OPS_AUTH_H

#include "ops/api.h"
#include "ops/ops.h"

#define TOKEN_PREFIX "smr_"
#define TOKEN_SECRET_HEX 64          /* 32 random bytes */
#define TOKEN_LEN (4 + TOKEN_SECRET_HEX)
/* last_used_at is written at most this often per token (seconds): not a write per request */
#define TOKEN_TOUCH_EVERY 60

/* The caller, as a transport authenticated it; plain data, copied freely. */
struct principal {
	int admin;                 /* SMRITI_TOKEN: every right, no identity of its own */
	char name[208];            /* "alice" or "alice/claude-code"; "" for admin */
	char user_id[40];          /* the token's user (person or agent) */
	char person_id[40];        /* whose grants apply: the person, or the agent's owner */
	char token_id[24];
};

/*
 * Checks a bearer token against the stored hashes: format, then a lookup by
 * its SHA-256, then a constant-time comparison of the hashes, then
 * revocation, expiry and a disabled user or owner.  SMR_EUNAUTH with the
 * reason on failure.  Records last use at most every TOKEN_TOUCH_EVERY
 * seconds.
 */
enum smr_rc ops_auth_token(struct ops_ctx *ctx, const char *token, struct principal *out,
			   struct smr_err *err);

/*
 * ops_auth_token() for a caller that already has the token's SHA-256
 * (digest, 32 bytes; NULL: computed here) and keeps a memo for the
 * connection it came on (NULL: none).  On success the memo holds this
 * token; on failure it is wiped.
 */
struct auth_memo;
enum smr_rc ops_auth_token_digest(struct ops_ctx *ctx, const char *token,
				  const uint8_t *digest, struct auth_memo *memo,
				  struct principal *out, struct smr_err *err);

/*
 * What a transport keeps of the token last accepted on one connection (an
 * HTTP keep-alive connection), so that the connection's next requests with
 * the same token cost a comparison instead of a SHA-256 and a lookup.  A
 * memo is good while its context's cache holds what it held when the token
 * was checked (the serial of its tokens): any change of the auth state (a
 * revocation, a disabled user, a new epoch) that the context notices drops
 * it, exactly when the context's own cache of tokens is dropped, and the
 * expiry is compared on every request.  It holds the token itself: a
 * transport wipes it (ops_auth_memo_wipe) when the connection closes.
 * Zeroed: empty.
 */
struct auth_memo {
	char token[TOKEN_LEN];     /* not NUL-terminated */
	uint64_t serial;           /* of the cache it was checked in; 0: empty */
	char expires_at[32];       /* "" when it never expires */
	int64_t expires_us;
	int64_t touched_us;        /* coarse monotonic: when its last use was recorded */
	struct principal who;
};

/*
 * 1 and *out set when token is the one memo holds (compared in constant
 * time) and the memo is still good for ctx (checks the auth state as
 * ops_auth_token() does: one of them per request); else 0, and the caller
 * goes on with ops_auth_token_digest(..., memo, ...).
 */
int ops_auth_memo_take(struct ops_ctx *ctx, struct auth_memo *memo, const char *token,
		       struct principal *out);

/* Empties a memo, overwriting the token it held. */
void ops_auth_memo_wipe(struct auth_memo *memo);

/*
 * A context keeps what it read of tokens and roles while the auth state
 * stays as it was.  ops_auth_token() (or the first role lookup) of a
 * request checks that once: with a keeper whose watch is up, against the
 * keeper's gen (no query); else, when the store's data_version has moved
 * (SQLite: no query while nothing was committed), by reading the auth
 * epoch.  A transport calls ops_auth_stale() when a request ends, so the
 * next one checks again.
 */
void ops_auth_stale(struct ops_ctx *ctx);

/*
 * A server's auth keeper (auth_keeper.c): one thread that tells its
 * contexts when the auth state may have changed (on PostgreSQL it LISTENs
 * for the epoch's notices), so that a context checks a token it has seen
 * without a query, and that writes tokens' last use off the request path.
 * A server starts one and sets every context's ctx->keeper to it (borrowed;
 * stop it after the last request).  Caller ops_auth_keeper_stop()s.
 */
struct auth_keeper;
enum smr_rc ops_auth_keeper_start(const char *dsn, struct auth_keeper **out,
				  struct smr_err *err);
void ops_auth_keeper_stop(struct auth_keeper *k);
/*
 * From now on k tells c's subscribers (ops/changes.h) each time the auth
 * state moved: a grant or a revocation changes what a waiting page or
 * subscriber may read, and it must look again.  c must outlive k.
 */
struct ops_changes;
void ops_auth_keeper_tell(struct auth_keeper *k, struct ops_changes *c);

/*
 * An open stream's hold on its caller's access (an SSE stream of a reply).
 * A request is checked when it starts; a stream outlives that check, so
 * while a hold is registered the server's keeper checks it again each time
 * the auth state moves (a token revoked, a user disabled, a grant changed
 * or a Space renamed or deleted, by this process or another, heard within
 * a tick of the keeper: well under a second), and calls lost() once when
 * the caller may no longer run op with params.  The transport then ends
 * the stream; nothing else stops (a reply goes on and is stored).
 *
 * The transport fills who, op, params (a reference the hold keeps until
 * ops_auth_unhold), lost, ud and gen: ops_auth_keeper_mark() read before
 * the request's token was checked, so that a change committed between that
 * check and the hold still reaches it.  lost() runs on the keeper's thread
 * with the keeper's lock of holds held: it must be quick and must not call
 * ops_auth_hold/unhold; after ops_auth_unhold returns it no longer runs.
 */
struct auth_hold {
	struct principal who;
	const char *op;                   /* static: the operation the stream reads as */
	json_t *params;
	void (*lost)(void *ud, enum smr_rc rc, const char *msg);
	void *ud;
	uint64_t gen;                     /* the keeper's gen it was last checked at */
	/* the keeper's */
	uint64_t serial;
	struct auth_hold *next;
};

/* The keeper's gen now (0 without a keeper): read before a request is checked. */
uint64_t ops_auth_keeper_mark(struct auth_keeper *k);
/* Registers h (k NULL: nothing to watch, nothing done); the keeper checks it from now on. */
void ops_auth_hold(struct auth_keeper *k, struct auth_hold *h);
/* Forgets h and drops its params; a no-op for a hold never registered. */
void ops_auth_unhold(struct auth_keeper *k, struct auth_hold *h);

/*
 * The check a hold gets again: who's token is still good (not revoked, not
 * expired, its user and that user's person not disabled; the administrator
 * always is) and who may still run op with params.  SMR_EUNAUTH,
 * SMR_ENOTFOUND or SMR_EFORBIDDEN with the reason when not; another code
 * when the store could not say.
 */
enum smr_rc ops_auth_recheck(struct ops_ctx *ctx, const struct principal *who,
			     const char *op, const json_t *params, struct smr_err *err);

/* A Space was renamed or deleted: every context's cached names and roles are stale. */
void ops_auth_changed(struct ops_ctx *ctx);

/* Frees what ctx cached of tokens and roles (ops_close() does it too). */
void ops_auth_cache_free(struct ops_ctx *ctx);

/* *yes = 1 when the database has users (a server then wants a token on every request). */
enum smr_rc ops_auth_users_exist(struct ops_ctx *ctx, int *yes, struct smr_err *err);

/* The caller's role on a Space (by id): owner for the database owner and the admin. */
enum smr_rc ops_role(struct ops_ctx *ctx, const char *space_id, enum role *out,
		     struct smr_err *err);

/* 1 when the caller may read the Space with this id (errors count as no). */
int ops_can_read(struct ops_ctx *ctx, const char *space_id);

/*
 * Looks up a Space (name or id) the caller holds at least need on; out may
 * be NULL.  Unreadable answers exactly what a missing Space answers.
 */
enum smr_rc ops_need_space(struct ops_ctx *ctx, const char *space, enum role need,
			   struct space *out, struct smr_err *err);

/*
 * ops_need_space() for a Space live or deleted (store_space_find): a role
 * given on a Space outlives its soft delete, so what stays of it (its
 * reflog) stays its people's.  Unreadable: "no space '...', live or deleted".
 */
enum smr_rc ops_need_space_any(struct ops_ctx *ctx, const char *space, enum role need,
			       struct smr_err *err);

/*
 * store_space_find() (a Space live or deleted) for a caller who may read it
 * (ops_can_read); unreadable: "no space '...', live or deleted", as missing.
 */
enum smr_rc ops_find_readable(struct ops_ctx *ctx, const char *space, struct space *out,
			      struct smr_err *err);

/* 1 when the caller may read some Space holding a copy of hash (errors count as no). */
int ops_hash_readable(struct ops_ctx *ctx, const char *hash);

/*
 * {name, kind, admin} of an identity: who (a person or an agent), an
 * administrator (who->admin), or the local caller of a server without
 * sign-in (who NULL).  New reference; the caller owns it.
 */
json_t *ops_identity_json(const struct principal *who);

/* 1 when the caller is restricted (a signed-in person or agent, not admin or local). */
int ops_restricted(const struct ops_ctx *ctx);

/* What a write is recorded as when nothing names who made it (no program default). */
#define OPS_UNNAMED "unknown"

/*
 * Who a write records, never empty: the signed-in person or agent when
 * there is one (a restricted caller), else claimed (what the caller said,
 * NULL or "" for nothing), else ctx->actor (the program's default, set
 * where it starts), else OPS_UNNAMED.  Borrowed.
 */
const char *ops_writer(const struct ops_ctx *ctx, const char *claimed);

/*
 * The author a write records, as ops_writer() says; for a restricted caller
 * a claimed author that is not its identity is returned in *tool, to be
 * kept as a label.  Borrowed strings.
 */
void ops_author(const struct ops_ctx *ctx, const char *claimed, const char **author,
		const char **tool);

/* Who the reflog names for a move without an author of its own: ops_writer(ctx, NULL). */
const char *ops_actor(const struct ops_ctx *ctx);

/*
 * Adds "role" (the caller's, by name) to a Space's document when a transport
 * authenticated the caller, so that a client can hide what it may not do.
 */
void ops_add_role(struct ops_ctx *ctx, const struct space *sp, json_t *doc);

/*
 * Sets c->author as ops_author() says (c->author holds the claimed one),
 * keeping a claimed author that is not the caller as metadata.author_tool.
 * Every write of a checkpoint calls it before sealing.
 */
void ops_set_author(struct ops_ctx *ctx, struct checkpoint *c);

/*
 * The person (user id) a Space the caller creates or forks is granted to as
 * its owner, in the transaction that makes it (struct ref_move's owner): a
 * person, or an agent's person.  NULL when the caller is not restricted
 * (the database's owner, the administrator).  Borrowed.
 */
const char *ops_new_space_owner(const struct ops_ctx *ctx);

/* After a Space was made for an owner: this server's kept roles are stale at once. */
void ops_new_space_owned(struct ops_ctx *ctx);

/* "reader", "writer", "owner" (or "none"); static storage. */
const char *role_name(enum role r);
/* Parses a role name; ROLE_NONE and SMR_EINVAL on anything else. */
enum smr_rc role_parse(const char *s, enum role *out, struct smr_err *err);

/* The operations on users, tokens and grants (ops_auth.c). */
extern const struct api_op auth_ops[];

#endif
