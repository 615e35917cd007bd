/*
 * test_auth.c -- identities, tokens and roles in the operations layer on a
 * real SQLite store (tests/js/teams.test.mjs runs them on both backends
 * through the server): a token's checks, the roles api_call() enforces,
 * hidden Spaces answering like missing ones, authors from the token, and
 * the keeper telling an open stream's hold that its caller's access ended.
 */
#include "harness.h"
#include "temp_store.h"

#include "ops/api.h"
#include "ops/auth.h"
#include "ops/decl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fixture {
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx;
};

static const char *clock_now = "2026-01-01T00:00:00.000000Z";

static void test_now(char out[32])
{
	snprintf(out, 32, "%s", clock_now);
}

/* Runs op as the context's caller; returns the code, *out the result (or NULL). */
static enum smr_rc call(struct fixture *f, const char *op, json_t *params, json_t **out)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;
	enum smr_rc rc = api_call(f->ctx, op, params, &res, &err);

	json_decref(params);
	if (out)
		*out = res;
	else
		json_decref(res);
	return rc;
}

/* A token for name, made by the database's owner; caller frees. */
static char *token_for(struct fixture *f, const char *name, const char *expires)
{
	json_t *res = NULL;
	char *t;

	ops_set_caller(f->ctx, NULL);
	if (call(f, "token.create", json_pack("{s:s, s:s?}", "name", name, "expires", expires), &res))
		return NULL;
	t = strdup(json_string_value(json_object_get(res, "token")));
	json_decref(res);
	return t;
}

static void setup(struct fixture *f)
{
	temp_store_open(f->path, &f->st, &f->ctx);
	f->ctx->now = test_now;
	clock_now = "2026-01-01T00:00:00.000000Z";
	call(f, "user.add", json_pack("{s:s}", "name", "ann"), NULL);
	call(f, "user.add", json_pack("{s:s}", "name", "ann/bot"), NULL);
	call(f, "user.add", json_pack("{s:s}", "name", "ben"), NULL);
	call(f, "space.create", json_pack("{s:s}", "name", "work"), NULL);
	call(f, "space.create", json_pack("{s:s}", "name", "private"), NULL);
	call(f, "checkpoint.create", json_pack("{s:s, s:{s:s}}", "space", "private", "checkpoint",
					       "title", "hidden"), NULL);
	call(f, "grant", json_pack("{s:s, s:s, s:s}", "user", "ann", "space", "work", "role",
				   "writer"), NULL);
}

static void teardown(struct fixture *f)
{
	ops_set_caller(f->ctx, NULL);
	ops_auth_cache_free(f->ctx);
	temp_store_close(f->path, f->ctx);
}

TEST(auth_token_checks)
{
	struct fixture f;
	struct principal p;
	struct smr_err err = SMR_ERR_INIT;
	char *t, *wrong;

	setup(&f);
	t = token_for(&f, "ann/bot", "1h");
	CHECK(t && strlen(t) == TOKEN_LEN && !strncmp(t, "smr_", 4));
	CHECK_INT(ops_auth_token(f.ctx, t, &p, &err), SMR_OK);
	CHECK_STR(p.name, "ann/bot");
	CHECK(strcmp(p.user_id, p.person_id) != 0);     /* an agent acts with its person's roles */
	wrong = strdup(t);
	wrong[TOKEN_LEN - 1] = wrong[TOKEN_LEN - 1] == '0' ? '1' : '0';
	CHECK_INT(ops_auth_token(f.ctx, wrong, &p, &err), SMR_EUNAUTH);
	CHECK_INT(ops_auth_token(f.ctx, "smr_short", &p, &err), SMR_EUNAUTH);
	CHECK_INT(ops_auth_token(f.ctx, "", &p, &err), SMR_EUNAUTH);
	/* an hour later it has expired */
	clock_now = "2026-01-01T01:00:00.000000Z";
	CHECK_INT(ops_auth_token(f.ctx, t, &p, &err), SMR_EUNAUTH);
	CHECK(strstr(err.msg, "expired") != NULL);
	free(wrong);
	free(t);
	teardown(&f);
}

TEST(auth_revoked_and_disabled)
{
	struct fixture f;
	struct principal p;
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;
	char *t, *a;

	setup(&f);
	t = token_for(&f, "ann", NULL);
	a = token_for(&f, "ann/bot", "never");
	CHECK_INT(call(&f, "user.disable", json_pack("{s:s}", "name", "ann"), NULL), SMR_OK);
	CHECK_INT(ops_auth_token(f.ctx, t, &p, &err), SMR_EUNAUTH);
	CHECK_INT(ops_auth_token(f.ctx, a, &p, &err), SMR_EUNAUTH);   /* its agent too */
	CHECK_INT(call(&f, "user.disable", json_pack("{s:s, s:b}", "name", "ann", "enable", 1), NULL),
		  SMR_OK);
	CHECK_INT(ops_auth_token(f.ctx, a, &p, &err), SMR_OK);
	CHECK_INT(call(&f, "token.list", json_pack("{s:s}", "name", "ann"), &res), SMR_OK);
	CHECK_INT((int)json_array_size(res), 2);
	CHECK_INT(call(&f, "token.revoke", json_pack("{s:s}", "id",
		  json_string_value(json_object_get(json_array_get(res, 0), "id"))), NULL), SMR_OK);
	json_decref(res);
	CHECK(ops_auth_token(f.ctx, t, &p, &err) == SMR_EUNAUTH ||
	      ops_auth_token(f.ctx, a, &p, &err) == SMR_EUNAUTH);
	free(t);
	free(a);
	teardown(&f);
}

/*
 * A Space and its owner's grant are one transaction: when the grant cannot
 * be written (here: a person the database does not have), nothing of the
 * Space is left, live or deleted; the same for a fork.
 */
TEST(auth_new_space_and_its_owner_are_one_write)
{
	struct fixture f;
	struct principal ghost = { 0 };
	struct space sp = { 0 }, from = { 0 }, *gone = NULL;
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint head = { 0 };
	size_t n = 9;

	setup(&f);
	snprintf(ghost.name, sizeof(ghost.name), "ghost");
	snprintf(ghost.user_id, sizeof(ghost.user_id), "no-such-user");
	snprintf(ghost.person_id, sizeof(ghost.person_id), "no-such-user");
	ops_set_caller(f.ctx, &ghost);
	CHECK(call(&f, "space.create", json_pack("{s:s}", "name", "orphan"), NULL) != SMR_OK);
	ops_set_caller(f.ctx, NULL);
	CHECK_INT(store_space_find(f.st, "orphan", &sp, &err), SMR_ENOTFOUND);
	CHECK_INT(store_space_list_deleted(f.st, &gone, &n, &err), SMR_OK);
	CHECK_INT((int)n, 0);
	free(gone);
	/* the store's fork, with an owner it cannot grant */
	CHECK_INT(store_head_get(f.st, "private", &head, &err), SMR_OK);
	CHECK_INT(store_space_get(f.st, "private", &from, &err), SMR_OK);
	sp = (struct space){ .id = "00000000-0000-4000-8000-00000000f0f0", .name = "orphan-fork",
			     .description = "", .created_at = "2026-01-01T00:00:00.000000Z" };
	CHECK(store_space_fork(f.st, &sp, from.id, head.hash,
			       &(struct ref_move){ "ghost", "fork", sp.created_at, "no-such-user" },
			       &err) != SMR_OK);
	memset(&sp, 0, sizeof(sp));
	CHECK_INT(store_space_find(f.st, "orphan-fork", &sp, &err), SMR_ENOTFOUND);
	/* and with one it can: the person owns it */
	sp = (struct space){ .id = "00000000-0000-4000-8000-00000000f0f1", .name = "ann-fork",
			     .description = "", .created_at = "2026-01-01T00:00:00.000000Z" };
	{
		struct user ann = { 0 };
		enum role role = ROLE_NONE;

		CHECK_INT(store_user_get(f.st, "ann", &ann, &err), SMR_OK);
		CHECK_INT(store_space_fork(f.st, &sp, from.id, head.hash,
					   &(struct ref_move){ "ann", "fork", sp.created_at, ann.id },
					   &err), SMR_OK);
		CHECK_INT(store_grant_get(f.st, ann.id, sp.id, &role, &err), SMR_OK);
		CHECK_INT((int)role, (int)ROLE_OWNER);
		user_release(&ann);
	}
	checkpoint_release(&head);
	space_release(&from);
	teardown(&f);
}

TEST(auth_roles_in_api_call)
{
	struct fixture f;
	struct principal ben = { 0 }, ann = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;
	char *tb, *ta;

	setup(&f);
	tb = token_for(&f, "ben", NULL);
	ta = token_for(&f, "ann", NULL);
	CHECK_INT(ops_auth_token(f.ctx, tb, &ben, &err), SMR_OK);
	CHECK_INT(ops_auth_token(f.ctx, ta, &ann, &err), SMR_OK);
	/* ben has no role: no Space is there for him (answers as a missing one) */
	ops_set_caller(f.ctx, &ben);
	CHECK_INT(call(&f, "head", json_pack("{s:s}", "space", "private"), NULL), SMR_ENOTFOUND);
	CHECK_INT(call(&f, "space.list", json_object(), &res), SMR_OK);
	CHECK_INT((int)json_array_size(res), 0);
	json_decref(res);
	CHECK_INT(call(&f, "user.list", json_object(), NULL), SMR_EFORBIDDEN);
	/* ann writes "work" but cannot delete it; her author is her name */
	ops_set_caller(f.ctx, &ann);
	CHECK_INT(call(&f, "checkpoint.create", json_pack("{s:s, s:s, s:{s:s}}", "space", "work",
							  "author", "ben", "checkpoint", "title", "t"),
		       &res), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(res, "author")), "ann");
	CHECK_STR(json_string_value(json_object_get(json_object_get(res, "metadata"),
						    "author_tool")), "ben");
	json_decref(res);
	CHECK_INT(call(&f, "space.delete", json_pack("{s:s}", "space", "work"), NULL),
		  SMR_EFORBIDDEN);
	CHECK_INT(call(&f, "grant", json_pack("{s:s, s:s, s:s}", "user", "ben", "space", "work",
					      "role", "owner"), NULL), SMR_EFORBIDDEN);
	/* a Space she creates is hers */
	CHECK_INT(call(&f, "space.create", json_pack("{s:s}", "name", "ann-own"), NULL), SMR_OK);
	CHECK_INT(call(&f, "space.delete", json_pack("{s:s}", "space", "ann-own"), NULL), SMR_OK);
	free(tb);
	free(ta);
	teardown(&f);
}

/*
 * A context keeps the tokens it checked: a revocation through another
 * handle (another thread or process) is seen at its next request, because
 * SQLite's data_version moved; a server's keeper writes the last use.
 */
/* A connection's memo: the same token again costs no lookup, anything else goes the full way. */
TEST(auth_memo_of_a_connection)
{
	struct fixture f;
	struct ops_ctx *other = NULL;
	struct auth_memo memo = { 0 };
	struct principal p;
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL, *params;
	char *t, *u;

	setup(&f);
	t = token_for(&f, "ann", NULL);
	u = token_for(&f, "ben", NULL);
	CHECK_INT(ops_open(&other, f.path, NULL, &err), SMR_OK);
	CHECK(!ops_auth_memo_take(f.ctx, &memo, t, &p));        /* empty */
	CHECK_INT(ops_auth_token_digest(f.ctx, t, NULL, &memo, &p, &err), SMR_OK);
	CHECK_STR(p.name, "ann");
	for (int i = 0; i < 3; i++) {
		ops_auth_stale(f.ctx);
		memset(&p, 0, sizeof(p));
		CHECK(ops_auth_memo_take(f.ctx, &memo, t, &p));
		CHECK_STR(p.name, "ann");
	}
	/* another token, a prefix of it, or a longer one is not the memo's */
	CHECK(!ops_auth_memo_take(f.ctx, &memo, u, &p));
	t[TOKEN_LEN - 1] ^= 1;
	CHECK(!ops_auth_memo_take(f.ctx, &memo, t, &p));
	t[TOKEN_LEN - 1] ^= 1;
	CHECK(!ops_auth_memo_take(f.ctx, &memo, "smr_", &p));
	/* revoked by another handle: the memo is no longer good, the full check says why */
	ops_auth_stale(f.ctx);
	CHECK_INT(ops_auth_token_digest(f.ctx, t, NULL, &memo, &p, &err), SMR_OK);
	params = json_pack("{s:s}", "id", p.token_id);
	CHECK_INT(api_call(other, "token.revoke", params, &res, &err), SMR_OK);
	json_decref(params);
	json_decref(res);
	ops_auth_stale(f.ctx);
	CHECK(!ops_auth_memo_take(f.ctx, &memo, t, &p));
	CHECK_INT(ops_auth_token_digest(f.ctx, t, NULL, &memo, &p, &err), SMR_EUNAUTH);
	CHECK(strstr(err.msg, "revoked") != NULL);
	CHECK(memo.serial == 0);                                  /* wiped */
	/* expiry is compared on every take (the test clock here) */
	free(t);
	t = token_for(&f, "ann", "1h");
	ops_auth_stale(f.ctx);
	CHECK_INT(ops_auth_token_digest(f.ctx, t, NULL, &memo, &p, &err), SMR_OK);
	ops_auth_stale(f.ctx);
	CHECK(ops_auth_memo_take(f.ctx, &memo, t, &p));
	clock_now = "2026-01-01T02:00:00.000000Z";
	ops_auth_stale(f.ctx);
	CHECK(!ops_auth_memo_take(f.ctx, &memo, t, &p));
	CHECK_INT(ops_auth_token_digest(f.ctx, t, NULL, &memo, &p, &err), SMR_EUNAUTH);
	CHECK(strstr(err.msg, "expired") != NULL);
	ops_auth_memo_wipe(&memo);
	ops_close(other);
	free(t);
	free(u);
	teardown(&f);
}

TEST(auth_kept_token_and_keeper)
{
	struct fixture f;
	struct ops_ctx *other = NULL;
	struct auth_keeper *k = NULL;
	struct principal p;
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL, *params;
	const char *used = NULL;
	char *t, *u;

	setup(&f);
	t = token_for(&f, "ann", NULL);
	u = token_for(&f, "ben", NULL);
	CHECK_INT(ops_open(&other, f.path, NULL, &err), SMR_OK);
	for (int i = 0; i < 3; i++) {
		ops_auth_stale(f.ctx);
		CHECK_INT(ops_auth_token(f.ctx, t, &p, &err), SMR_OK);
	}
	params = json_pack("{s:s}", "id", p.token_id);
	CHECK_INT(api_call(other, "token.revoke", params, &res, &err), SMR_OK);
	json_decref(params);
	json_decref(res);
	ops_auth_stale(f.ctx);
	CHECK_INT(ops_auth_token(f.ctx, t, &p, &err), SMR_EUNAUTH);
	CHECK(strstr(err.msg, "revoked") != NULL);

	/* the keeper records ben's use on its own thread */
	CHECK_INT(ops_auth_keeper_start(f.path, &k, &err), SMR_OK);
	f.ctx->keeper = k;
	ops_auth_stale(f.ctx);
	CHECK_INT(ops_auth_token(f.ctx, u, &p, &err), SMR_OK);
	for (int i = 0; i < 500 && !used; i++) {
		res = NULL;
		params = json_pack("{s:s}", "name", "ben");
		CHECK_INT(api_call(other, "token.list", params, &res, &err), SMR_OK);
		json_decref(params);
		used = json_string_value(json_object_get(json_array_get(res, 0), "last_used_at"));
		used = used ? "yes" : NULL;
		json_decref(res);
		if (!used)
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	CHECK(used != NULL);
	f.ctx->keeper = NULL;
	ops_auth_keeper_stop(k);
	ops_close(other);
	free(t);
	free(u);
	teardown(&f);
}

/* What a hold's lost() was told (on the keeper's thread). */
struct told {
	atomic_int n;
	enum smr_rc rc;
	char msg[256];
};

static void on_lost(void *ud, enum smr_rc rc, const char *msg)
{
	struct told *t = ud;

	t->rc = rc;
	snprintf(t->msg, sizeof(t->msg), "%s", msg);
	atomic_fetch_add(&t->n, 1);
}

/* Waits up to 5 s for t to be told (a bound for a loaded machine, not a speed). */
static int told_soon(struct told *t)
{
	for (int i = 0; i < 500 && !atomic_load(&t->n); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	return atomic_load(&t->n);
}

static void hold_for(struct auth_keeper *k, struct auth_hold *h, const struct principal *who,
		     struct told *t)
{
	*h = (struct auth_hold){ .who = *who, .op = "head",
				 .params = json_pack("{s:s}", "space", "work"), .lost = on_lost,
				 .ud = t, .gen = ops_auth_keeper_mark(k) };
	ops_auth_hold(k, h);
}

/*
 * A held stream's caller is checked again when another handle (another
 * process, for SQLite) changes the auth state: a removed role and a revoked
 * token are told once each, with the reason; a hold whose access stays is
 * not told.
 */
TEST(auth_hold_told_when_access_ends)
{
	struct fixture f;
	struct ops_ctx *other = NULL;
	struct auth_keeper *k = NULL;
	struct auth_hold ha, hb;
	struct told ta = { 0 }, tb = { 0 };
	struct principal pa, pb;
	struct smr_err err = SMR_ERR_INIT;
	json_t *params, *res = NULL;
	char *t, *u;

	setup(&f);
	call(&f, "grant", json_pack("{s:s, s:s, s:s}", "user", "ben", "space", "work", "role",
				    "reader"), NULL);
	/* the keeper reads the real clock: tokens made at the test's clock must not expire */
	t = token_for(&f, "ann", "never");
	u = token_for(&f, "ben", "never");
	CHECK_INT(ops_auth_token(f.ctx, t, &pa, &err), SMR_OK);
	CHECK_INT(ops_auth_token(f.ctx, u, &pb, &err), SMR_OK);
	CHECK_INT(ops_open(&other, f.path, NULL, &err), SMR_OK);
	CHECK_INT(ops_auth_keeper_start(f.path, &k, &err), SMR_OK);
	hold_for(k, &ha, &pa, &ta);
	hold_for(k, &hb, &pb, &tb);

	params = json_pack("{s:s, s:s}", "user", "ann", "space", "work");
	CHECK_INT(api_call(other, "grant.revoke", params, &res, &err), SMR_OK);
	json_decref(params);
	json_decref(res);
	CHECK(told_soon(&ta));
	CHECK_INT(ta.rc, SMR_ENOTFOUND);
	CHECK(strstr(ta.msg, "work") != NULL);

	res = NULL;
	params = json_pack("{s:s}", "id", pb.token_id);
	CHECK_INT(api_call(other, "token.revoke", params, &res, &err), SMR_OK);
	json_decref(params);
	json_decref(res);
	CHECK(told_soon(&tb));
	CHECK_INT(tb.rc, SMR_EUNAUTH);
	CHECK(strstr(tb.msg, "revoked") != NULL);
	CHECK_INT(atomic_load(&ta.n), 1);           /* told once: no longer held */

	ops_auth_unhold(k, &ha);
	ops_auth_unhold(k, &hb);
	ops_auth_keeper_stop(k);
	ops_close(other);
	free(t);
	free(u);
	teardown(&f);
}

/*
 * Who a write names (ops_writer, the one rule every write path inherits):
 * the token's identity, else the claim, else the program's default, and
 * never "" (a merge stored "" as its author, and a server's moves an empty
 * actor).
 */
TEST(auth_a_write_is_never_unnamed)
{
	struct ops_ctx *ctx = NULL;
	struct principal ann = { 0 }, admin = { .admin = 1 };
	const char *author, *tool;

	CHECK_INT(ops_open_on(&ctx, NULL, NULL, NULL), SMR_OK);
	CHECK_STR(ops_writer(ctx, NULL), OPS_UNNAMED);
	CHECK_STR(ops_writer(ctx, ""), OPS_UNNAMED);
	ctx->actor = "";
	CHECK_STR(ops_actor(ctx), OPS_UNNAMED);
	ctx->actor = "srv";
	CHECK_STR(ops_writer(ctx, NULL), "srv");
	CHECK_STR(ops_writer(ctx, ""), "srv");
	CHECK_STR(ops_writer(ctx, "bob"), "bob");
	CHECK_STR(ops_actor(ctx), "srv");
	/* the administrator has no identity: as without one */
	ops_set_caller(ctx, &admin);
	CHECK_STR(ops_writer(ctx, NULL), "srv");
	CHECK_STR(ops_writer(ctx, "bob"), "bob");
	/* a signed-in caller is its identity; a claim stays a label */
	snprintf(ann.name, sizeof(ann.name), "ann");
	ops_set_caller(ctx, &ann);
	CHECK_STR(ops_writer(ctx, "bob"), "ann");
	CHECK_STR(ops_actor(ctx), "ann");
	ops_author(ctx, "bob", &author, &tool);
	CHECK_STR(author, "ann");
	CHECK_STR(tool, "bob");
	ops_author(ctx, "", &author, &tool);
	CHECK(tool == NULL);
	ops_close(ctx);
}

/*
 * The rule an operation's declaration states ("access" in
 * src/ops/decl/) is the one api_call() enforces: the same caller and
 * call pass or fail as the declaration's role says, and an operation whose
 * declaration states none is refused.
 */
TEST(auth_the_declared_rule_is_enforced)
{
	struct fixture f;
	struct principal ann = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	json_t *params = json_pack("{s:s}", "space", "work");
	json_t *as_owner = json_deep_copy(json_object_get(decl_op("space.get"), "access"));
	json_t *as_writer = json_deep_copy(json_object_get(decl_op("space.delete"), "access"));
	struct api_access a;
	char *ta;

	setup(&f);
	ta = token_for(&f, "ann", NULL);
	CHECK_INT(ops_auth_token(f.ctx, ta, &ann, &err), SMR_OK);
	f.ctx->who = &ann;              /* ann is a writer of "work" */
	/* as declared: space.get needs a reader, space.delete an owner */
	CHECK_INT(api_check_access(f.ctx, api_find("space.get"), params, &err), SMR_OK);
	CHECK_INT(api_check_access(f.ctx, api_find("space.delete"), params, &err),
		  SMR_EFORBIDDEN);
	CHECK_INT(call(&f, "space.delete", json_incref(params), NULL), SMR_EFORBIDDEN);
	/* the same declarations with the roles changed decide the other way */
	json_object_set_new(as_owner, "role", json_string("owner"));
	api_access_parse(as_owner, &a);
	CHECK_INT(api_check_rule(f.ctx, "space.get", &a, params, &err), SMR_EFORBIDDEN);
	json_object_set_new(as_writer, "role", json_string("writer"));
	api_access_parse(as_writer, &a);
	CHECK_INT(api_check_rule(f.ctx, "space.delete", &a, params, &err), SMR_OK);
	/* no rule, or one api_call() does not understand: refused */
	api_access_parse(NULL, &a);
	CHECK_INT(api_check_rule(f.ctx, "space.get", &a, params, &err), SMR_EFORBIDDEN);
	CHECK_STR(err.msg, "operation 'space.get' declares no access rule");
	json_object_set_new(as_writer, "role", json_string("boss"));
	api_access_parse(as_writer, &a);
	CHECK_INT(a.need, NEED_UNDECLARED);
	json_decref(as_owner);
	json_decref(as_writer);
	json_decref(params);
	free(ta);
	teardown(&f);
}
