/*
 * ops_auth.c -- identities, tokens, roles and the operations that manage them
 * (see auth.h).  Tokens are "smr_" and 64 hex digits of getrandom(); only
 * their SHA-256 is stored.  A presented token is looked up by its hash (so
 * the lookup's timing depends on the hash, never on how much of a real
 * token the caller guessed) and the stored hash is then compared in
 * constant time.
 */
#include "ops/api.h"
#include "ops/auth.h"
#include "ops/auth_keeper.h"
#include "ops/context.h"
#include "util/sys.h"
#include "util/xalloc.h"
#include "util/hex.h"
#include "util/isotime.h"

#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_EXPIRY "90d"
#define CACHE_TOKENS 16
#define CACHE_ROLES 64
#define CACHE_SPACES 32
#define SPACE_KEY_MAX 128

/*
 * What one context (one thread) read of tokens and roles, kept while the
 * auth state stays as it was.  The first lookup of a request checks that
 * (cache_refresh): against the server's keeper when its watch is up (no
 * query: a change anywhere moves its gen when the change commits), else
 * by reading the store's auth epoch, which SQLite skips while its
 * data_version has not moved.  So a revocation, a disabled user or a
 * changed grant made through this server takes effect on the next request,
 * and one made elsewhere as soon as this server hears of it (auth.h).
 * Expiry is compared with the clock on every request.
 */
struct token_entry {
	uint64_t key;             /* the digest's first 8 bytes: where a lookup looks first */
	uint8_t digest[SHA256_DIGEST_SIZE];
	struct principal who;
	char expires_at[32];      /* "" when it never expires */
	int64_t expires_us;       /* the same in microseconds since the Unix epoch */
	int64_t touched_us;       /* coarse monotonic: when this context last recorded a use */
};

struct role_entry {
	char person[40];
	char space[40];
	enum role role;
};

/* A Space as a caller named it (name or id), with that caller's role on it. */
struct space_entry {
	char person[40];
	char key[SPACE_KEY_MAX];
	char name[SPACE_KEY_MAX];
	enum role role;
};

struct auth_cache {
	uint64_t serial;          /* names what tok[] holds: new at every clear (auth_memo) */
	int fresh;                /* checked for this request */
	int by_gen;               /* checked against the keeper's gen ... */
	uint64_t gen;
	int has_epoch;            /* ... or against the epoch, read at data_version */
	int64_t epoch;
	uint64_t version;
	struct space_entry space[CACHE_SPACES];
	size_t nspace, next_space;
	struct token_entry tok[CACHE_TOKENS];
	size_t ntok, next_tok;
	struct role_entry role[CACHE_ROLES];
	size_t nrole, next_role;
};

void ops_auth_cache_free(struct ops_ctx *ctx)
{
	free(ctx->auth_cache);
	ctx->auth_cache = NULL;
}

/* Serials of every cache of the process: a memo checked in one never matches another. */
static _Atomic uint64_t serials;

/* Forgets the tokens, roles and Spaces kept (the state they were read in is kept). */
static void cache_clear(struct ops_ctx *ctx)
{
	struct auth_cache *c = ctx->auth_cache;

	if (!c)
		return;
	c->nspace = c->next_space = c->ntok = c->next_tok = c->nrole = c->next_role = 0;
	c->serial = atomic_fetch_add(&serials, 1) + 1;
}

/* A change through this context: its cache, and every other one of this server, is stale. */
static void changed(struct ops_ctx *ctx)
{
	cache_clear(ctx);
	if (ctx->keeper)
		auth_keeper_bump(ctx->keeper);
}

/* The check against the epoch: skipped while SQLite's data_version stays; -1 unreadable. */
static int refresh_by_epoch(struct ops_ctx *ctx, struct auth_cache *c)
{
	uint64_t version = 0;
	int64_t epoch;

	if (store_data_version(ctx->st, &version, NULL))
		version = 0;
	ctx->head.seen = version;        /* this request's HEAD read need not read it again */
	if (version && c->has_epoch && c->version == version)
		return 0;
	if (store_auth_epoch(ctx->st, &epoch, NULL)) {
		cache_clear(ctx);
		c->has_epoch = 0;
		return -1;
	}
	if (!c->has_epoch || c->epoch != epoch)
		cache_clear(ctx);
	c->has_epoch = 1;
	c->epoch = epoch;
	c->version = version;
	return 0;
}

/* The cache, checked for this request; NULL when the state cannot be read. */
static struct auth_cache *cache_refresh(struct ops_ctx *ctx)
{
	struct auth_cache *c = ctx->auth_cache;
	uint64_t gen;

	if (!c) {
		c = ctx->auth_cache = xcalloc(1, sizeof(*c));
		cache_clear(ctx);
	}
	c->fresh = 0;
	if (ctx->keeper && auth_keeper_gen(ctx->keeper, &gen)) {
		if (!c->by_gen || c->gen != gen)
			cache_clear(ctx);
		c->by_gen = 1;
		c->gen = gen;
		c->has_epoch = 0;
	} else {
		if (c->by_gen)
			cache_clear(ctx);
		c->by_gen = 0;
		if (refresh_by_epoch(ctx, c))
			return NULL;
	}
	c->fresh = 1;
	return c;
}



static int token_shape_ok(const char *t)
{
	return t && strlen(t) == TOKEN_LEN && !strncmp(t, TOKEN_PREFIX, 4) &&
	       hex_span(t + 4) == TOKEN_SECRET_HEX;
}

static void set_field(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* Why a stored token no longer lets anyone in, or NULL. */
static const char *token_refusal(const struct token *t, const char *now)
{
	if (t->revoked_at)
		return "this token was revoked";
	if (t->expires_at && strcmp(t->expires_at, now) <= 0)
		return "this token has expired";
	if (t->disabled)
		return "the user of this token is disabled";
	return NULL;
}

/* Records a use of token id: by the server's keeper, off the request path, when there is one. */
static void touch_id(struct ops_ctx *ctx, const char *id, const char *now)
{
	if (ctx->keeper)
		auth_keeper_touch(ctx->keeper, id, now);
	else
		store_token_touch(ctx->st, id, now, NULL);
}

static void touch(struct ops_ctx *ctx, const struct token *t, const char *now)
{
	long long last = iso_seconds(t->last_used_at);

	if (last < 0 || iso_seconds(now) - last >= TOKEN_TOUCH_EVERY)
		touch_id(ctx, t->id, now);
}

/*
 * A use of a kept token (a cache entry's or a memo's): recorded when the
 * last one this holder recorded is a minute old.  A coarse clock is plenty
 * for a minute.
 */
static void touch_kept(struct ops_ctx *ctx, int64_t *touched_us, const char *token_id)
{
	int64_t now_us = sys_coarse_monotonic_us();
	char now[32];

	if (now_us - *touched_us < TOKEN_TOUCH_EVERY * 1000000LL)
		return;
	ctx->now(now);
	touch_id(ctx, token_id, now);
	*touched_us = now_us;
}

/* Microseconds since the Unix epoch of an ISO UTC time ("...T..:..:..[.ffffff]Z"); -1 if none. */
static int64_t iso_us(const char *iso)
{
	long long s = iso_seconds(iso);
	const char *dot = s >= 0 ? strchr(iso, '.') : NULL;
	long frac = dot ? strtol(dot + 1, NULL, 10) : 0;

	return s < 0 ? -1 : (int64_t)s * 1000000 + (frac >= 0 && frac < 1000000 ? frac : 0);
}

/* How far from its expiry a kept token must be for the coarse clock to decide (a tick is ms). */
#define COARSE_SLACK_US 1000000

/*
 * Whether a kept token (expires_at "" for never, expires_us the same in
 * microseconds) has expired.  The system clock is read as a number (no
 * formatting, and none of gmtime's time zone lock, which every worker
 * would share), and while the expiry is more than a second away the
 * coarse clock answers: it is never ahead of the precise one, so it cannot
 * let a token through late.  A clock a test swapped in is asked for its
 * time.
 */
static int expired(struct ops_ctx *ctx, const char *expires_at, int64_t expires_us)
{
	char now[32];

	if (!expires_at[0])
		return 0;
	if (ctx->now == sys_now_iso) {
		if (expires_us - COARSE_SLACK_US > sys_coarse_realtime_us())
			return 0;
		return expires_us <= sys_realtime_us();
	}
	ctx->now(now);
	return strcmp(expires_at, now) <= 0;
}

static void sha256_of(const char *s, uint8_t d[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx sha;

	sha256_init(&sha);
	sha256_update(&sha, strlen(s), (const uint8_t *)s);
	sha256_digest(&sha, SHA256_DIGEST_SIZE, d);
}

static uint64_t digest_key(const uint8_t *d)
{
	uint64_t key;

	memcpy(&key, d, sizeof(key));
	return key;
}

/*
 * A token this context checked before, still valid; 1 and *out (and *e)
 * set when found.  Entries are told apart by their digest's first 8 bytes,
 * then the whole digest is compared in constant time: what the lookup's
 * time depends on is the SHA-256 of what the caller sent, which says
 * nothing about a token the caller does not have (docs/security.md).
 */
static int cached_token(struct ops_ctx *ctx, struct auth_cache *c, const uint8_t *digest,
			struct principal *out, const struct token_entry **found)
{
	uint64_t key = digest_key(digest);

	for (size_t i = 0; c && i < c->ntok; i++) {
		struct token_entry *e = &c->tok[i];

		if (e->key != key || !memeql_sec(e->digest, digest, SHA256_DIGEST_SIZE))
			continue;
		if (expired(ctx, e->expires_at, e->expires_us))
			return 0;               /* expired since: the store says why */
		*out = e->who;
		*found = e;
		touch_kept(ctx, &e->touched_us, e->who.token_id);
		return 1;
	}
	return 0;
}

static void cache_token(struct auth_cache *c, const uint8_t *digest, const struct token *t,
			const struct principal *who)
{
	struct token_entry *e;

	if (!c)
		return;
	e = &c->tok[c->next_tok];
	c->next_tok = (c->next_tok + 1) % CACHE_TOKENS;
	if (c->ntok < CACHE_TOKENS)
		c->ntok++;
	memcpy(e->digest, digest, SHA256_DIGEST_SIZE);
	e->key = digest_key(digest);
	e->who = *who;
	set_field(e->expires_at, sizeof(e->expires_at), t->expires_at);
	e->expires_us = t->expires_at ? iso_us(t->expires_at) : 0;
	e->touched_us = sys_coarse_monotonic_us();     /* touch() just looked at its last use */
}

/*
 * 1 when the n bytes at a and b are equal, in a time that depends on n
 * only: a word at a time, every word, no early exit.
 */
static int same_bytes(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	uint64_t diff = 0, u, v;
	size_t i = 0;

	for (; i + sizeof(u) <= n; i += sizeof(u)) {
		memcpy(&u, x + i, sizeof(u));
		memcpy(&v, y + i, sizeof(v));
		diff |= u ^ v;
	}
	for (; i < n; i++)
		diff |= (uint64_t)(x[i] ^ y[i]);
	return diff == 0;
}

void ops_auth_memo_wipe(struct auth_memo *m)
{
	explicit_bzero(m, sizeof(*m));
}

int ops_auth_memo_take(struct ops_ctx *ctx, struct auth_memo *m, const char *token,
		       struct principal *out)
{
	struct auth_cache *c;

	if (!m->serial || strnlen(token, TOKEN_LEN + 1) != TOKEN_LEN ||
	    !same_bytes(m->token, token, TOKEN_LEN))
		return 0;
	c = cache_refresh(ctx);
	if (!c || c->serial != m->serial || expired(ctx, m->expires_at, m->expires_us))
		return 0;                       /* the full check says what it is now */
	*out = m->who;
	touch_kept(ctx, &m->touched_us, m->who.token_id);
	return 1;
}

/* Keeps token, just checked in the state c holds, in memo (NULL: none). */
static void memo_keep(struct auth_memo *m, const char *token, const struct auth_cache *c,
		      const struct token_entry *e)
{
	if (!m)
		return;
	if (!c || !e) {
		ops_auth_memo_wipe(m);
		return;
	}
	memcpy(m->token, token, TOKEN_LEN);
	m->serial = c->serial;
	memcpy(m->expires_at, e->expires_at, sizeof(m->expires_at));
	m->expires_us = e->expires_us;
	m->touched_us = e->touched_us;
	m->who = e->who;
}

enum smr_rc ops_auth_token_digest(struct ops_ctx *ctx, const char *token,
				  const uint8_t *digest, struct auth_memo *memo,
				  struct principal *out, struct smr_err *err)
{
	const struct token_entry *e = NULL;
	struct token t = { 0 };
	struct auth_cache *c;
	uint8_t d[SHA256_DIGEST_SIZE];
	char hash[65], now[32];
	const char *why;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	if (!token_shape_ok(token)) {
		if (memo)
			ops_auth_memo_wipe(memo);
		return smr_errf(err, SMR_EUNAUTH, "missing or wrong bearer token");
	}
	if (!digest) {
		sha256_of(token, d);
		digest = d;
	}
	c = cache_refresh(ctx);
	if (cached_token(ctx, c, digest, out, &e)) {
		memo_keep(memo, token, c, e);
		return SMR_OK;
	}
	hex_encode(digest, SHA256_DIGEST_SIZE, hash);
	ctx->now(now);
	rc = store_token_find(ctx->st, hash, &t, err);
	if (rc == SMR_ENOTFOUND || (!rc && (!t.hash || strlen(t.hash) != 64 ||
					    !memeql_sec(t.hash, hash, 64))))
		rc = smr_errf(err, SMR_EUNAUTH, "missing or wrong bearer token");
	why = rc ? NULL : token_refusal(&t, now);
	if (why)
		rc = smr_errf(err, SMR_EUNAUTH, "%s", why);
	if (!rc) {
		set_field(out->name, sizeof(out->name), t.user_name);
		set_field(out->user_id, sizeof(out->user_id), t.user_id);
		set_field(out->person_id, sizeof(out->person_id), t.person_id);
		set_field(out->token_id, sizeof(out->token_id), t.id);
		touch(ctx, &t, now);
		cache_token(c, digest, &t, out);
		/* the entry just written: c->tok[] holds it until the next clear */
		e = c ? &c->tok[(c->next_tok + CACHE_TOKENS - 1) % CACHE_TOKENS] : NULL;
	}
	memo_keep(memo, token, rc ? NULL : c, e);
	token_release(&t);
	return rc;
}

enum smr_rc ops_auth_token(struct ops_ctx *ctx, const char *token, struct principal *out,
			   struct smr_err *err)
{
	return ops_auth_token_digest(ctx, token, NULL, NULL, out, err);
}

/* Whether the token who came with still lets anyone in (read from the store, not a cache). */
static enum smr_rc token_still_good(struct ops_ctx *ctx, const struct principal *who,
				    struct smr_err *err)
{
	struct token t = { 0 };
	char now[32];
	const char *why;
	enum smr_rc rc = store_token_get(ctx->st, who->token_id, &t, err);

	if (rc == SMR_ENOTFOUND)
		rc = smr_errf(err, SMR_EUNAUTH, "missing or wrong bearer token");
	ctx->now(now);
	why = rc ? NULL : token_refusal(&t, now);
	if (why)
		rc = smr_errf(err, SMR_EUNAUTH, "%s", why);
	token_release(&t);
	return rc;
}

enum smr_rc ops_auth_recheck(struct ops_ctx *ctx, const struct principal *who,
			     const char *op, const json_t *params, struct smr_err *err)
{
	const struct principal *was = ctx->who;
	const struct api_op *o = api_find(op);
	enum smr_rc rc;

	if (!who || who->admin)
		return SMR_OK;
	if (!o)
		BUG("ops_auth_recheck of an unknown operation '%s'", op);
	ops_auth_stale(ctx);            /* what this check reads is read now */
	rc = token_still_good(ctx, who, err);
	ctx->who = who;
	if (!rc)
		rc = api_check_access(ctx, o, params, err);
	ctx->who = was;
	ops_auth_stale(ctx);
	return rc;
}

enum smr_rc ops_auth_users_exist(struct ops_ctx *ctx, int *yes, struct smr_err *err)
{
	return store_users_exist(ctx->st, yes, err);
}

int ops_restricted(const struct ops_ctx *ctx)
{
	return ctx->who && !ctx->who->admin;
}

/* The cache for this request, its epoch read once per request; NULL to go to the store. */
static struct auth_cache *fresh_cache(struct ops_ctx *ctx)
{
	if (ctx->auth_cache && ctx->auth_cache->fresh)
		return ctx->auth_cache;
	return cache_refresh(ctx);
}

void ops_auth_changed(struct ops_ctx *ctx)
{
	store_auth_changed(ctx->st, NULL);
	changed(ctx);
}

void ops_auth_stale(struct ops_ctx *ctx)
{
	ctx->head.seen = 0;
	if (ctx->auth_cache)
		ctx->auth_cache->fresh = 0;
}

enum smr_rc ops_role(struct ops_ctx *ctx, const char *space_id, enum role *out,
		     struct smr_err *err)
{
	struct auth_cache *c;
	const char *person;
	struct role_entry *e;
	enum smr_rc rc;

	if (!ops_restricted(ctx)) {
		*out = ROLE_OWNER;
		return SMR_OK;
	}
	c = fresh_cache(ctx);
	person = ctx->who->person_id;
	for (size_t i = 0; c && i < c->nrole; i++) {
		if (!strcmp(c->role[i].person, person) && !strcmp(c->role[i].space, space_id)) {
			*out = c->role[i].role;
			return SMR_OK;
		}
	}
	rc = store_grant_get(ctx->st, person, space_id, out, err);
	if (rc || !c || strlen(space_id) >= sizeof(e->space))
		return rc;
	e = &c->role[c->next_role];
	c->next_role = (c->next_role + 1) % CACHE_ROLES;
	if (c->nrole < CACHE_ROLES)
		c->nrole++;
	set_field(e->person, sizeof(e->person), person);
	set_field(e->space, sizeof(e->space), space_id);
	e->role = *out;
	return SMR_OK;
}

int ops_can_read(struct ops_ctx *ctx, const char *space_id)
{
	enum role r = ROLE_NONE;

	return !ops_role(ctx, space_id, &r, NULL) && r >= ROLE_READER;
}

const char *role_name(enum role r)
{
	static const char *const names[] = { "none", "reader", "writer", "owner" };

	return r <= ROLE_OWNER ? names[r] : "none";
}

enum smr_rc role_parse(const char *s, enum role *out, struct smr_err *err)
{
	for (int r = ROLE_READER; r <= ROLE_OWNER; r++) {
		if (s && !strcmp(s, role_name((enum role)r))) {
			*out = (enum role)r;
			return SMR_OK;
		}
	}
	*out = ROLE_NONE;
	return smr_errf(err, SMR_EINVAL, "'%s' is not a role (give reader, writer or owner)",
			s ? s : "");
}

/* The words of a role that is too low, naming what it would take. */
static enum smr_rc too_low(const struct space *sp, enum role have, enum role need,
			   struct smr_err *err)
{
	return smr_errf(err, SMR_EFORBIDDEN,
			"you are a %s of space '%s'; this needs %s (ask an owner: smriti grant)",
			role_name(have), sp->name, role_name(need));
}

/* The caller's role on the Space it named key, if this request's cache has it. */
static const struct space_entry *cached_space(struct ops_ctx *ctx, const char *key)
{
	struct auth_cache *c = ops_restricted(ctx) ? fresh_cache(ctx) : NULL;

	for (size_t i = 0; c && i < c->nspace; i++)
		if (!strcmp(c->space[i].person, ctx->who->person_id) && !strcmp(c->space[i].key, key))
			return &c->space[i];
	return NULL;
}

static void cache_space(struct ops_ctx *ctx, const char *key, const struct space *sp,
			enum role role)
{
	struct auth_cache *c = ops_restricted(ctx) ? ctx->auth_cache : NULL;
	struct space_entry *e;

	if (!c || !c->fresh || strlen(key) >= SPACE_KEY_MAX || strlen(sp->name) >= SPACE_KEY_MAX)
		return;
	e = &c->space[c->next_space];
	c->next_space = (c->next_space + 1) % CACHE_SPACES;
	if (c->nspace < CACHE_SPACES)
		c->nspace++;
	set_field(e->person, sizeof(e->person), ctx->who->person_id);
	set_field(e->key, sizeof(e->key), key);
	set_field(e->name, sizeof(e->name), sp->name);
	e->role = role;
}

/*
 * The check of a Space named by the caller.  With out NULL a name (or id)
 * this request's cache knows costs no lookup: the cache is dropped when
 * the auth epoch moves, which renaming or deleting a Space also moves.
 */
enum smr_rc ops_need_space(struct ops_ctx *ctx, const char *space, enum role need,
			   struct space *out, struct smr_err *err)
{
	struct space sp = { 0 };
	enum role have = ROLE_NONE;
	const struct space_entry *hit = out ? NULL : cached_space(ctx, space);
	enum smr_rc rc;

	if (hit) {
		struct space named = { .name = (char *)hit->name };

		if (hit->role < ROLE_READER)
			return smr_errf(err, SMR_ENOTFOUND, "no space '%s'", space);
		return hit->role < need ? too_low(&named, hit->role, need, err) : SMR_OK;
	}
	rc = store_space_get(ctx->st, space, &sp, err);
	if (!rc)
		rc = ops_role(ctx, sp.id, &have, err);
	if (!rc)
		cache_space(ctx, space, &sp, have);
	/* the same words as store_space_get's for a Space that is not there */
	if (!rc && have < ROLE_READER)
		rc = smr_errf(err, SMR_ENOTFOUND, "no space '%s'", space);
	else if (!rc && have < need)
		rc = too_low(&sp, have, need, err);
	if (!rc && out)
		*out = sp;
	else
		space_release(&sp);
	return rc;
}

enum smr_rc ops_need_space_any(struct ops_ctx *ctx, const char *space, enum role need,
			       struct smr_err *err)
{
	struct space sp = { 0 };
	enum role have = ROLE_NONE;
	enum smr_rc rc = store_space_find(ctx->st, space, &sp, err);

	if (!rc)
		rc = ops_role(ctx, sp.id, &have, err);
	if (!rc && have < ROLE_READER)
		rc = smr_errf(err, SMR_ENOTFOUND, "no space '%s', live or deleted", space);
	else if (!rc && have < need)
		rc = too_low(&sp, have, need, err);
	space_release(&sp);
	return rc;
}

enum smr_rc ops_find_readable(struct ops_ctx *ctx, const char *space, struct space *out,
			      struct smr_err *err)
{
	enum smr_rc rc = store_space_find(ctx->st, space, out, err);

	if (!rc && !ops_can_read(ctx, out->id)) {   /* as if there were no such Space */
		space_release(out);
		rc = smr_errf(err, SMR_ENOTFOUND, "no space '%s', live or deleted", space);
	}
	return rc;
}

/*
 * The one rule for who a write names, so that no path stores an empty
 * author: the signed-in identity, else what the caller claimed, else the
 * program's default (ctx->actor: the local user for the CLI, the server
 * process's own for a server), else OPS_UNNAMED.
 */
const char *ops_writer(const struct ops_ctx *ctx, const char *claimed)
{
	if (ops_restricted(ctx))
		return ctx->who->name;
	if (claimed && *claimed)
		return claimed;
	return ctx->actor && *ctx->actor ? ctx->actor : OPS_UNNAMED;
}

void ops_author(const struct ops_ctx *ctx, const char *claimed, const char **author,
		const char **tool)
{
	*tool = NULL;
	*author = ops_writer(ctx, claimed);
	if (ops_restricted(ctx) && claimed && *claimed && strcmp(claimed, ctx->who->name))
		*tool = claimed;
}

const char *ops_actor(const struct ops_ctx *ctx)
{
	return ops_writer(ctx, NULL);
}

void ops_add_role(struct ops_ctx *ctx, const struct space *sp, json_t *doc)
{
	enum role r = ROLE_NONE;

	if (ctx->who && !ops_role(ctx, sp->id, &r, NULL))
		json_object_set_new(doc, "role", json_string(role_name(r)));
}

const char *ops_new_space_owner(const struct ops_ctx *ctx)
{
	return ops_restricted(ctx) ? ctx->who->person_id : NULL;
}

void ops_new_space_owned(struct ops_ctx *ctx)
{
	if (ops_restricted(ctx))
		changed(ctx);
}

/* ---- operations ---- */

/* A user or agent name: 1..64 of [a-z0-9._-], starting with a letter or digit. */
static enum smr_rc check_name(const char *name, const char *what, struct smr_err *err)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != n ||
	    name[0] == '.' || name[0] == '-' || name[0] == '_')
		return smr_errf(err, SMR_EINVAL,
				"%s name '%.80s' must be 1 to 64 of a-z, 0-9, '.', '_' and '-',"
				" starting with a letter or digit", what, name);
	return SMR_OK;
}

static json_t *user_json(const struct user *u)
{
	return json_pack("{s:s, s:s, s:b, s:s}", "name", u->name, "kind",
			 u->owner_id ? "agent" : "person", "disabled", u->disabled,
			 "created_at", u->created_at);
}

/* user.add {name}: "alice" is a person, "alice/claude-code" an agent of alice. */
static enum smr_rc op_user_add(struct ops_ctx *ctx, const json_t *p, json_t **result,
			       struct smr_err *err)
{
	const char *name = api_text(p, "name"), *slash = strchr(name, '/');
	struct user owner = { 0 }, u = { 0 };
	char id[37], now[32];
	char *person = NULL;
	enum smr_rc rc;

	person = slash ? xstrndup(name, (size_t)(slash - name)) : xstrdup(name);
	rc = check_name(person, "user", err);
	if (!rc && slash)
		rc = check_name(slash + 1, "agent", err);
	if (!rc && slash)
		rc = store_user_get(ctx->st, person, &owner, err);
	if (!rc && owner.owner_id)
		rc = smr_errf(err, SMR_EINVAL, "'%s' is an agent; agents belong to people", person);
	if (!rc) {
		ctx->new_id(id);
		ctx->now(now);
		u = (struct user){ .id = id, .name = (char *)name, .owner_id = owner.id,
				   .created_at = now };
		rc = store_user_create(ctx->st, &u, err);
		changed(ctx);
	}
	if (!rc)
		*result = user_json(&u);
	user_release(&owner);
	free(person);
	return rc;
}

static enum smr_rc op_user_list(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	struct user *v = NULL;
	size_t n = 0;
	enum smr_rc rc = store_user_list(ctx->st, &v, &n, err);

	(void)p;
	if (!rc) {
		*result = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(*result, user_json(&v[i]));
	}
	users_free(v, n);
	return rc;
}

/* user.disable {name, enable?}: a disabled user's tokens (and its agents') stop working. */
static enum smr_rc op_user_disable(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	struct user u = { 0 };
	int disabled = !api_flag(p, "enable");
	enum smr_rc rc = store_user_get(ctx->st, api_text(p, "name"), &u, err);

	if (!rc)
		rc = store_user_set_disabled(ctx->st, u.id, disabled, err);
	changed(ctx);
	if (!rc) {
		u.disabled = disabled;
		*result = user_json(&u);
	}
	user_release(&u);
	return rc;
}

/* "90d", "12h", "30m", "2w" into seconds; "never" is 0. */
static enum smr_rc parse_duration(const char *s, long long *out, struct smr_err *err)
{
	char *end;
	long long v;

	if (!strcmp(s, "never")) {
		*out = 0;
		return SMR_OK;
	}
	v = strtoll(s, &end, 10);
	if (end == s || v <= 0 || v > 100000 || strlen(end) != 1 || !strchr("mhdw", *end))
		return smr_errf(err, SMR_EINVAL,
				"expiry '%.40s' must be a number with m, h, d or w (30d), or never", s);
	*out = v * (*end == 'm' ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400 : 604800);
	return SMR_OK;
}

static json_t *token_json(const struct token *t)
{
	return json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:b}", "id", t->id, "user",
			 t->user_name, "created_at", t->created_at, "expires_at", t->expires_at,
			 "last_used_at", t->last_used_at, "revoked_at", t->revoked_at,
			 "disabled", t->disabled);
}

/* token.create {name, expires?}: the secret is in the result once and never again. */
static enum smr_rc op_token_create(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	const char *name = api_text(p, "name"), *expires = api_text(p, "expires");
	struct user u = { 0 };
	struct token t = { 0 };
	uint8_t secret[TOKEN_SECRET_HEX / 2], digest[SHA256_DIGEST_SIZE], idb[6];
	char token[TOKEN_LEN + 1], hash[65], id[24], now[32], until[32];
	long long secs = 0;
	enum smr_rc rc = parse_duration(expires ? expires : DEFAULT_EXPIRY, &secs, err);

	if (!rc)
		rc = store_user_get(ctx->st, name, &u, err);
	if (rc)
		goto out;
	sys_random(secret, sizeof(secret));
	memcpy(token, TOKEN_PREFIX, 4);
	hex_encode(secret, sizeof(secret), token + 4);
	explicit_bzero(secret, sizeof(secret));
	sha256_of(token, digest);
	hex_encode(digest, sizeof(digest), hash);
	sys_random(idb, sizeof(idb));
	memcpy(id, "tok_", 4);
	hex_encode(idb, sizeof(idb), id + 4);
	ctx->now(now);
	if (secs)
		iso_format(iso_seconds(now) + secs, 0, until);
	t = (struct token){ .id = id, .user_id = u.id, .user_name = u.name, .created_at = now,
			    .expires_at = secs ? until : NULL };
	rc = store_token_create(ctx->st, &t, hash, err);
	changed(ctx);
	if (!rc) {
		*result = token_json(&t);
		json_object_set_new(*result, "token", json_string(token));
	}
	explicit_bzero(token, sizeof(token));
out:
	user_release(&u);
	return rc;
}

/* token.list {name?}: without name, every token (admin) or the caller's own. */
static enum smr_rc op_token_list(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	const char *name = api_text(p, "name");
	struct user u = { 0 };
	struct token *v = NULL;
	size_t n = 0;
	enum smr_rc rc = SMR_OK;

	if (!name && ops_restricted(ctx))
		name = ctx->who->name;
	if (!rc && name)
		rc = store_user_get(ctx->st, name, &u, err);
	if (!rc)
		rc = store_token_list(ctx->st, name ? u.id : NULL, &v, &n, err);
	if (!rc) {
		*result = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(*result, token_json(&v[i]));
	}
	tokens_free(v, n);
	user_release(&u);
	return rc;
}

static enum smr_rc op_token_revoke(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	const char *id = api_text(p, "id");
	struct token t = { 0 };
	char now[32];
	enum smr_rc rc;

	ctx->now(now);
	rc = store_token_revoke(ctx->st, id, now, err);
	changed(ctx);
	if (!rc)
		rc = store_token_get(ctx->st, id, &t, err);
	if (!rc)
		*result = token_json(&t);
	token_release(&t);
	return rc;
}

/* grant {user, space, role} and grant.revoke {user, space}: people only, not agents. */
static enum smr_rc set_grant(struct ops_ctx *ctx, const json_t *p, enum role role,
			     json_t **result, struct smr_err *err)
{
	const char *user = api_text(p, "user");
	struct user u = { 0 };
	struct space sp = { 0 };
	enum smr_rc rc = store_user_get(ctx->st, user, &u, err);

	if (!rc && u.owner_id)
		rc = smr_errf(err, SMR_EINVAL,
			      "'%s' is an agent; grant its person instead (agents act with their"
			      " person's roles)", user);
	if (!rc)
		rc = store_space_get(ctx->st, api_text(p, "space"), &sp, err);
	if (!rc)
		rc = store_grant_set(ctx->st, u.id, sp.id, role, err);
	changed(ctx);
	if (!rc)
		*result = json_pack("{s:s, s:s, s:s}", "user", u.name, "space", sp.name, "role",
				    role_name(role));
	space_release(&sp);
	user_release(&u);
	return rc;
}

static enum smr_rc op_grant(struct ops_ctx *ctx, const json_t *p, json_t **result,
			    struct smr_err *err)
{
	enum role role = ROLE_NONE;
	enum smr_rc rc = role_parse(api_text(p, "role"), &role, err);

	if (!rc)
		rc = set_grant(ctx, p, role, result, err);
	return rc;
}

static enum smr_rc op_grant_revoke(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	return set_grant(ctx, p, ROLE_NONE, result, err);
}

static enum smr_rc op_grant_list(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	struct space sp = { 0 };
	struct grant *v = NULL;
	size_t n = 0;
	enum smr_rc rc = store_space_get(ctx->st, api_text(p, "space"), &sp, err);

	if (!rc)
		rc = store_grant_list(ctx->st, NULL, sp.id, &v, &n, err);
	if (!rc) {
		*result = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(*result, json_pack("{s:s, s:s}", "user",
								 v[i].user_name, "role",
								 role_name(v[i].role)));
	}
	grants_free(v, n);
	space_release(&sp);
	return rc;
}

json_t *ops_identity_json(const struct principal *who)
{
	if (!who)
		return json_pack("{s:n, s:s, s:b}", "name", "kind", "local", "admin", 1);
	if (who->admin)
		return json_pack("{s:n, s:s, s:b}", "name", "kind", "admin", "admin", 1);
	return json_pack("{s:s, s:s, s:b}", "name", who->name, "kind",
			 strcmp(who->user_id, who->person_id) ? "agent" : "person", "admin", 0);
}

/* whoami: the caller's identity, and the token it came with. */
static enum smr_rc op_whoami(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	const struct principal *w = ctx->who;

	(void)p;
	(void)err;
	*result = ops_identity_json(w);
	if (w && !w->admin)
		json_object_set_new(*result, "token", json_string(w->token_id));
	return SMR_OK;
}

const struct api_op auth_ops[] = {
	{ "whoami", op_whoami, 0, 0 },
	{ "user.add", op_user_add, 1, 0 },
	{ "user.list", op_user_list, 0, 0 },
	{ "user.disable", op_user_disable, 1, 0 },
	{ "token.create", op_token_create, 1, 0 },
	{ "token.list", op_token_list, 0, 0 },
	{ "token.revoke", op_token_revoke, 1, 0 },
	{ "grant", op_grant, 1, 0 },
	{ "grant.revoke", op_grant_revoke, 1, 0 },
	{ "grant.list", op_grant_list, 0, 0 },
	{ NULL, NULL, 0, 0 },
};
