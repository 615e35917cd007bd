/*
 * auth.h -- the storage port's rows of who may do what: people and agents
 * (users), their tokens (SHA-256 only, never the secret) and per-Space
 * grants.  Every function is one statement on its own, written once in
 * store/store_auth.c in SQL that every backend runs as is (store_ops.sql_text).
 * Policy (who may grant, what a role allows, token checks) is the
 * operations layer's (ops/ops_auth.c); this file only keeps rows.  Output
 * structs belong to the caller (the *_release functions below).
 */
#ifndef SMRITI_STORE_AUTH_H
#define SMRITI_STORE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* enum role (a role on a Space) is domain/model.h's. */

/* A person, or an agent (owner_id set: the person it works for, name "person/agent"). */
struct user {
	char *id;
	char *name;
	char *owner_id;      /* NULL for a person */
	int disabled;
	char *created_at;
};

/* A token's row, and the identity it stands for. */
struct token {
	char *id;            /* short public id: what `token revoke` takes */
	char *user_id;       /* the person or agent it belongs to */
	char *user_name;
	char *person_id;     /* user_id for a person, the owner for an agent */
	int disabled;        /* 1 when its user or that user's owner is disabled */
	char *created_at;
	char *expires_at;    /* NULL: never */
	char *last_used_at;  /* NULL: never used */
	char *revoked_at;    /* NULL: live */
	char *hash;          /* hex SHA-256 of the secret */
};

/* A person's role on a Space. */
struct grant {
	char *user_name;
	char *space_id;
	char *space_name;
	enum role role;
};

void user_release(struct user *u);
void users_free(struct user *v, size_t n);
void token_release(struct token *t);
void tokens_free(struct token *v, size_t n);
void grants_free(struct grant *v, size_t n);

/* SMR_ECONFLICT when the name is taken. */
enum smr_rc store_user_create(struct store *st, const struct user *u, struct smr_err *err);
/* By name; SMR_ENOTFOUND "no user 'NAME'". */
enum smr_rc store_user_get(struct store *st, const char *name, struct user *out,
			   struct smr_err *err);
/* Every person and agent, by name. */
enum smr_rc store_user_list(struct store *st, struct user **out, size_t *n,
			    struct smr_err *err);
enum smr_rc store_user_set_disabled(struct store *st, const char *id, int disabled,
				    struct smr_err *err);
/* *yes = 1 when at least one user exists (the server then wants a token on every request). */
enum smr_rc store_users_exist(struct store *st, int *yes, struct smr_err *err);

/* Stores t (id, user_id, created_at, expires_at) with hash. */
enum smr_rc store_token_create(struct store *st, const struct token *t, const char *hash,
			       struct smr_err *err);
/* The token whose hash is hash; SMR_ENOTFOUND (no message) when none. */
enum smr_rc store_token_find(struct store *st, const char *hash, struct token *out,
			     struct smr_err *err);
/* By id; SMR_ENOTFOUND "no token 'ID'". */
enum smr_rc store_token_get(struct store *st, const char *id, struct token *out,
			    struct smr_err *err);
/* The tokens of user_id and of its agents (NULL: all), newest first. */
enum smr_rc store_token_list(struct store *st, const char *user_id, struct token **out,
			     size_t *n, struct smr_err *err);
enum smr_rc store_token_revoke(struct store *st, const char *id, const char *now,
			       struct smr_err *err);
enum smr_rc store_token_touch(struct store *st, const char *id, const char *now,
			      struct smr_err *err);

/*
 * A number that grows with every change to users, tokens (but their last
 * use) and grants, so that a reader may keep what it read until it moves.
 */
enum smr_rc store_auth_epoch(struct store *st, int64_t *out, struct smr_err *err);

/*
 * The ids of the Spaces, live or deleted, that hold checkpoint hash (the
 * history is shared: its origin, and every Space that reaches it), the
 * origin first; caller frees each and *out.
 */
enum smr_rc store_hash_spaces(struct store *st, const char *hash, char ***out, size_t *n,
			      struct smr_err *err);

/* Moves the epoch: a Space was renamed or deleted, so names cached with roles are stale. */
enum smr_rc store_auth_changed(struct store *st, struct smr_err *err);

/*
 * Change notices of the auth epoch, for a server that keeps what it read
 * (ops/auth_keeper.c).  A watch is one connection of its own listening on
 * STORE_AUTH_CHANNEL (PostgreSQL's LISTEN): every move of the epoch, by any
 * process, sends a notice when it commits.
 */
#define STORE_AUTH_CHANNEL "smriti_auth"
struct store_watch;
/*
 * Opens a watch on dsn's database; *out NULL (and SMR_OK) when its backend
 * has no notices (SQLite: store_data_version tells a reader as cheaply).
 * A watch that cannot connect now is still returned: store_watch_wait
 * reports it down and tries again.  Caller store_watch_close()s.
 */
enum smr_rc store_watch_open(const char *dsn, struct store_watch **out, struct smr_err *err);
/*
 * store_watch_open on another channel: STORE_GEN_CHANNEL hears of replies'
 * events and stops (ops/full/relay.c).
 */
#define STORE_GEN_CHANNEL "smriti_gen"
/* STORE_DATA_CHANNEL hears of writes a page or a subscriber follows (ops/changes.c). */
#define STORE_DATA_CHANNEL "smriti_data"
enum smr_rc store_watch_open_on(const char *dsn, const char *channel, struct store_watch **out,
				struct smr_err *err);
/* What a notice says moved (store_watch_wait's bits). */
#define STORE_NOTICE_ANY 1      /* something (the auth epoch: all there is) */
#define STORE_NOTICE_EVENTS 2   /* a reply's events were written */
#define STORE_NOTICE_STOP 4     /* someone asked for a reply to stop */
#define STORE_NOTICE_DATA 8     /* Spaces, HEADs, sessions, turns or grants moved */
#define STORE_NOTICE_ALL 15
/*
 * Waits up to ms milliseconds: nonzero when something may have moved (the
 * STORE_NOTICE_ bits of the notices that came; all of them when the watch
 * just (re)connected and so may have missed some), 0 when nothing came, -1
 * with err set when the watch is down (the next call tries to connect
 * again).
 */
int store_watch_wait(struct store_watch *w, int ms, struct smr_err *err);
void store_watch_close(struct store_watch *w);

/* Sets user_id's role on space_id; ROLE_NONE removes the grant. */
enum smr_rc store_grant_set(struct store *st, const char *user_id, const char *space_id,
			    enum role role, struct smr_err *err);
/* ROLE_NONE when there is no grant. */
enum smr_rc store_grant_get(struct store *st, const char *user_id, const char *space_id,
			    enum role *out, struct smr_err *err);
/* The grants of one Space (space_id) or of one person (user_id); the other is NULL. */
enum smr_rc store_grant_list(struct store *st, const char *user_id, const char *space_id,
			     struct grant **out, size_t *n, struct smr_err *err);

#endif
