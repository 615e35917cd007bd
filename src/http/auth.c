/*
 * auth.c -- the web UI's way through SMRITI_TOKEN.  A page cannot set an
 * Authorization header on its own navigation, and a token kept where
 * script can read it is one injection away from leaking, so the UI asks
 * for the token once and POSTs it here; the server answers with an
 * HttpOnly, SameSite=Strict cookie holding a hash of the token (guard.c),
 * which then stands in for the bearer token.  Writes authenticated by that
 * cookie must also carry this server's Origin (server.c).
 *
 *   GET    /v4/auth   {token_required, authenticated}, never 401
 *   POST   /v4/auth   {token}: sets the cookie, or 401 and nothing set
 *   DELETE /v4/auth   clears the cookie
 */
#include "http/internal.h"
#include "util/xalloc.h"

#include <microhttpd.h>

#define COOKIE_ATTRS "; Path=/; HttpOnly; SameSite=Strict"
#define COOKIE_MAX_AGE 2592000        /* 30 days */

static const char *header(struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

static json_t *state(int required, int authenticated)
{
	return json_pack("{s:b, s:b}", "token_required", required, "authenticated",
			 authenticated);
}

void http_auth_get(struct http_req *r, struct ops_ctx *ctx)
{
	const struct http_guard *g = &r->srv->guard;
	int ok = !g->has_token || http_guard_token(g, header(r, "Authorization")) ||
		 http_guard_cookie(g, header(r, "Cookie"));

	(void)ctx;
	http_reply(r, 200, state(g->has_token, ok));
}

void http_auth_post(struct http_req *r, struct ops_ctx *ctx)
{
	const struct http_guard *g = &r->srv->guard;
	const char *token = json_string_value(json_object_get(r->in, "token"));

	(void)ctx;
	if (!g->has_token) {
		http_reply(r, 200, state(0, 1));
		return;
	}
	if (!token) {
		http_error(r, 400, "invalid_input", "give the server's token as {\"token\": \"...\"}");
		return;
	}
	if (!http_guard_token_is(g, token)) {
		http_error(r, 401, "unauthorized", "that is not this server's token");
		return;
	}
	r->set_cookie = xasprintf(HTTP_AUTH_COOKIE "=%s" COOKIE_ATTRS "; Max-Age=%d", g->cookie,
				  COOKIE_MAX_AGE);
	http_reply(r, 200, state(1, 1));
}

void http_auth_delete(struct http_req *r, struct ops_ctx *ctx)
{
	(void)ctx;
	r->set_cookie = xasprintf(HTTP_AUTH_COOKIE "=" COOKIE_ATTRS "; Max-Age=0");
	http_reply(r, 200, state(r->srv->guard.has_token, !r->srv->guard.has_token));
}
