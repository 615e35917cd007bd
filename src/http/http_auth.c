/*
 * http_auth.c -- who a request is, and the web UI's way to sign in.
 *
 * A request carries a bearer token (Authorization: Bearer ...) or the UI's
 * cookie.  The token is either the server's SMRITI_TOKEN (the
 * administrator: every right, no identity of its own) or a person's or
 * agent's token from the store, checked by ops_auth_token().  Without
 * either, a request is let in only while the server has no SMRITI_TOKEN
 * and no users (a loopback server as before teams existed).
 *
 * A page cannot set an Authorization header on its own navigation, and a
 * token kept where script can read it is one injection away from leaking,
 * so the UI POSTs the token here once and gets an HttpOnly,
 * SameSite=Strict cookie: for SMRITI_TOKEN a hash of it (guard.c), for a
 * user's token the token itself (only the store's hash can check it).
 * Writes authenticated by the cookie must also carry this server's Origin
 * (server.c).
 *
 *   GET    /v4/auth   {token_required, authenticated, user}, never 401
 *   POST   /v4/auth   {token}: sets the cookie, or 401 and nothing set
 *   DELETE /v4/auth   clears the cookie
 */
#include "http/http_int.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COOKIE_ATTRS "; Path=/; HttpOnly; SameSite=Strict"
#define COOKIE_MAX_AGE 2592000        /* 30 days */
#define USERS_RECHECK_US 1000000      /* while there are no users, look again at most every 1 s */

static const char *header(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* Copies the smriti_auth cookie's value into out (empty when absent). */
static void cookie_of(const char *h, char out[TOKEN_LEN + 1])
{
	const size_t klen = strlen(HTTP_AUTH_COOKIE);

	out[0] = '\0';
	for (const char *p = h; p && *p; p++) {
		while (*p == ' ' || *p == ';')
			p++;
		if (!strncmp(p, HTTP_AUTH_COOKIE, klen) && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, "; ");

			if (n <= TOKEN_LEN)
				snprintf(out, TOKEN_LEN + 1, "%.*s", (int)n, p + klen + 1);
			return;
		}
		p = strchr(p, ';');
		if (!p)
			break;
	}
}

/*
 * 1 when the database has users (once seen, for the server's lifetime:
 * users are never deleted), 0 when it has none, -1 with err set when the
 * store cannot tell (then nobody is let in: the request gets the store's
 * error, 503 for an outage).
 */
static int users_exist_err(struct http_server *srv, struct smr_err *err)
{
	struct ops_ctx *ctx;
	int64_t now = sys_monotonic_us();
	int yes = 0;

	if (atomic_load(&srv->users_seen))
		return 1;
	if (now - atomic_load(&srv->users_checked_us) < USERS_RECHECK_US)
		return 0;
	ctx = http_thread_ops(srv, 0, err);
	if (!ctx || ops_auth_users_exist(ctx, &yes, err)) {
		if (err && !err->code)
			smr_errf(err, SMR_EUNAVAIL, "the store is unreachable; try again");
		return -1;
	}
	atomic_store(&srv->users_checked_us, now);
	if (yes)
		atomic_store(&srv->users_seen, 1);
	return yes;
}

/* users_exist_err() where an error counts as "yes": ask for a token. */
static int users_exist(struct http_server *srv)
{
	return users_exist_err(srv, NULL) != 0;
}

/*
 * The memo of r's connection (conn.c), or NULL: what the connection's last
 * accepted person's or agent's token was.
 */
static struct auth_memo *conn_memo(struct http_req *r)
{
	return r->c ? r->c->memo : NULL;
}

static void users_now_seen(struct http_server *srv)
{
	if (!atomic_load(&srv->users_seen))   /* no write to a line every worker reads */
		atomic_store(&srv->users_seen, 1);
}

/* Checks a user's token (its SHA-256 digest when known, else NULL); 0 and r->who set, or -1. */
static int user_token(struct http_req *r, const char *token, const uint8_t *digest,
		      struct auth_memo *memo, struct smr_err *err)
{
	struct ops_ctx *ctx = http_thread_ops(r->srv, 0, err);

	if (!ctx)
		return -1;
	if (ops_auth_token_digest(ctx, token, digest, memo, &r->who, err))
		return -1;
	r->has_who = 1;
	users_now_seen(r->srv);
	return 0;
}

/* 1 and r->who set when t is the token memo (NULL: none) holds, still good. */
static int kept(struct http_req *r, const char *t, struct auth_memo *memo)
{
	struct ops_ctx *ctx = memo ? http_thread_ops(r->srv, 0, NULL) : NULL;

	if (!ctx || !ops_auth_memo_take(ctx, memo, t, &r->who))
		return 0;
	r->has_who = 1;
	users_now_seen(r->srv);
	return 1;
}

/*
 * A token on r's connection: the one its memo holds (no hashing), else the
 * SMRITI_TOKEN or a user's, from one SHA-256 for both checks.  0 and
 * r->who set, or -1 with err set.
 */
static int bearer(struct http_req *r, const char *t, struct smr_err *err)
{
	struct auth_memo *memo = conn_memo(r);
	uint8_t digest[32];

	if (kept(r, t, memo))
		return 0;
	http_token_digest(t, digest);
	if (http_guard_digest_is(&r->srv->guard, digest)) {
		r->who.admin = 1;
		r->has_who = 1;
		return 0;
	}
	return user_token(r, t, digest, memo, err);
}

/* Who r is, from its headers: 1 someone, 0 nobody, -1 refused (err set). */
static int identify(struct http_req *r, struct smr_err *err)
{
	const struct http_guard *g = &r->srv->guard;
	const char *t = http_bearer(header(r, "Authorization"));
	struct auth_memo *memo;
	char cookie[TOKEN_LEN + 1];

	if (t)
		return bearer(r, t, err) ? -1 : 1;
	cookie_of(header(r, "Cookie"), cookie);
	if (!cookie[0])
		return 0;
	if (http_guard_cookie(g, header(r, "Cookie"))) {
		r->by_cookie = 1;
		r->who.admin = 1;
		r->has_who = 1;
		return 1;
	}
	if (strncmp(cookie, TOKEN_PREFIX, strlen(TOKEN_PREFIX)))
		return 0;                   /* a stale cookie of another token: as if none */
	r->by_cookie = 1;
	memo = conn_memo(r);
	if (kept(r, cookie, memo))
		return 1;
	return user_token(r, cookie, NULL, memo, err) ? -1 : 1;
}

int http_authenticate(struct http_req *r)
{
	struct smr_err err = SMR_ERR_INIT;
	struct http_ctx *tc = http_thread_ctx();
	int got;

	if (tc)
		ops_auth_stale(tc->ops);    /* nothing of an earlier request on this thread counts */
	r->auth_gen = ops_auth_keeper_mark(r->srv->keeper);   /* before: a stream's hold */
	got = identify(r, &err);

	if (got > 0)
		return 0;
	if (got < 0) {
		http_fail(r, err.code ? err.code : SMR_EUNAUTH, &err, NULL);
		return 1;
	}
	r->by_cookie = 0;
	if (r->srv->guard.has_token)
		got = 1;
	else
		got = users_exist_err(r->srv, &err);
	if (got == 0)
		return 0;
	if (got < 0)
		http_fail(r, err.code, &err, NULL);
	else
		http_error(r, 401, "unauthorized", "missing or wrong bearer token");
	return 1;
}

static int https_page(struct http_req *r)
{
	const char *origin = header(r, "Origin");

	return origin && !strncasecmp(origin, "https://", 8);
}

/* {token_required, authenticated, user}: user is whoami's document, or null. */
static json_t *state(struct http_req *r, int authenticated)
{
	int required = r->srv->guard.has_token || users_exist(r->srv);
	json_t *user = authenticated ? ops_identity_json(r->has_who ? &r->who : NULL) : json_null();

	return json_pack("{s:b, s:b, s:o}", "token_required", required, "authenticated",
			 authenticated, "user", user);
}

void http_auth_get(struct http_req *r, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	int got = identify(r, &err);

	(void)ctx;
	if (got == 0 && (r->srv->guard.has_token || users_exist(r->srv)))
		got = -1;
	http_reply(r, 200, state(r, got >= 0));
}

void http_auth_post(struct http_req *r, struct ops_ctx *ctx)
{
	const struct http_guard *g = &r->srv->guard;
	const char *token = json_string_value(json_object_get(r->in, "token"));
	struct smr_err err = SMR_ERR_INIT;
	char *value;

	(void)ctx;
	if (!g->has_token && !users_exist(r->srv)) {
		http_reply(r, 200, state(r, 1));
		return;
	}
	if (!token) {
		http_error(r, 400, "invalid_input", "give your token as {\"token\": \"...\"}");
		return;
	}
	if (http_guard_token_is(g, token)) {
		r->who.admin = 1;
		r->has_who = 1;
		value = xstrdup(g->cookie);
	} else if (!user_token(r, token, NULL, NULL, &err)) {
		value = xstrdup(token);
	} else {
		http_error(r, 401, "unauthorized", "%s", err.msg[0] ? err.msg :
			   "that is not a token of this server");
		return;
	}
	/* a page served over https (a TLS-terminating proxy) gets a Secure cookie */
	r->set_cookie = xasprintf(HTTP_AUTH_COOKIE "=%s" COOKIE_ATTRS "; Max-Age=%d%s", value,
				  COOKIE_MAX_AGE, https_page(r) ? "; Secure" : "");
	free(value);
	http_reply(r, 200, state(r, 1));
}

void http_auth_delete(struct http_req *r, struct ops_ctx *ctx)
{
	(void)ctx;
	r->set_cookie = xasprintf(HTTP_AUTH_COOKIE "=" COOKIE_ATTRS "; Max-Age=0");
	r->has_who = 0;
	http_reply(r, 200, state(r, !(r->srv->guard.has_token || users_exist(r->srv))));
}
