/*
 * store_auth.c -- the rows of users, tokens and grants (store/auth.h), in SQL
 * that SQLite and PostgreSQL both run as written (store/sql.h's rules),
 * through the backends' one generic method (sql_text).  These rows are plain (no compare-and-swap, no
 * numbering), so unlike Checkpoints they need no per-backend SQL.
 */
#include "store/auth.h"
#include "store/sql.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void user_release(struct user *u)
{
	free(u->id);
	free(u->name);
	free(u->owner_id);
	free(u->created_at);
	memset(u, 0, sizeof(*u));
}

void users_free(struct user *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		user_release(&v[i]);
	free(v);
}

void token_release(struct token *t)
{
	free(t->id);
	free(t->user_id);
	free(t->user_name);
	free(t->person_id);
	free(t->created_at);
	free(t->expires_at);
	free(t->last_used_at);
	free(t->revoked_at);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

void tokens_free(struct token *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		token_release(&v[i]);
	free(v);
}

void grants_free(struct grant *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].user_name);
		free(v[i].space_id);
		free(v[i].space_name);
	}
	free(v);
}

/*
 * A statement on its own: these rows' writes may run twice (an insert then
 * says its row exists), so every statement is SQL_AUTO.
 */
static enum smr_rc q(struct store *st, const char *sql, const char *const *params, int n,
		     struct store_rows *out, struct smr_err *err)
{
	return st->ops->sql_text(st, SQL_AUTO, sql, params, n, "reading or writing access rows",
				 out, err);
}

/* Runs a statement whose rows are not wanted. */
static enum smr_rc q_done(struct store *st, const char *sql, const char *const *params, int n,
			  struct smr_err *err)
{
	struct store_rows r;
	enum smr_rc rc = q(st, sql, params, n, &r, err);

	store_rows_release(&r);
	return rc;
}

/* After a change to users, tokens or grants: readers' caches are stale (store_auth_epoch). */
static enum smr_rc bump(struct store *st, enum smr_rc rc, struct smr_err *err)
{
	return rc ? rc : q_done(st, sql_auth_bump(st), NULL, 0, err);
}

enum smr_rc store_watch_open_on(const char *dsn, const char *channel, struct store_watch **out,
				struct smr_err *err)
{
	*out = NULL;
	for (size_t i = 0; store_backends[i]; i++)
		if (store_backends[i]->accepts(dsn))
			return store_backends[i]->watch_open ?
			       store_backends[i]->watch_open(dsn, channel, out, err) : SMR_OK;
	return smr_errf(err, SMR_EUSAGE, "no storage backend in this binary handles '%s'", dsn);
}

enum smr_rc store_watch_open(const char *dsn, struct store_watch **out, struct smr_err *err)
{
	return store_watch_open_on(dsn, STORE_AUTH_CHANNEL, out, err);
}

int store_watch_wait(struct store_watch *w, int ms, struct smr_err *err)
{
	return w->wait(w, ms, err);
}

void store_watch_close(struct store_watch *w)
{
	if (w)
		w->close(w);
}

enum smr_rc store_hash_spaces(struct store *st, const char *hash, char ***out, size_t *n,
			      struct smr_err *err)
{
	return rows_holders(st, hash, 0, out, NULL, n, err);
}

enum smr_rc store_auth_changed(struct store *st, struct smr_err *err)
{
	return bump(st, SMR_OK, err);
}

enum smr_rc store_auth_epoch(struct store *st, int64_t *out, struct smr_err *err)
{
	static const char sql[] = "SELECT epoch FROM auth_state WHERE id = 1";
	struct store_rows r;
	enum smr_rc rc = q(st, sql, NULL, 0, &r, err);

	if (!rc)
		*out = r.rows && r.cells[0] ? strtoll(r.cells[0], NULL, 10) : 0;
	store_rows_release(&r);
	return rc;
}

/* ---- users ---- */

#define USER_COLS "SELECT id, name, owner_id, disabled, created_at FROM users"

static void read_user(struct store_rows *r, size_t i, struct user *u)
{
	u->id = sql_take(r, i, 0);
	u->name = sql_take(r, i, 1);
	u->owner_id = sql_take(r, i, 2);
	u->disabled = (int)sql_int(r, i, 3);
	u->created_at = sql_take(r, i, 4);
}

enum smr_rc store_user_create(struct store *st, const struct user *u, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO users (id, name, owner_id, disabled, created_at)"
		" VALUES ($1, $2, $3, 0, $4)";
	const char *p[] = { u->id, u->name, u->owner_id, u->created_at };
	enum smr_rc rc = q_done(st, sql, p, 4, err);

	if (rc == SMR_ECONFLICT)
		return smr_errf(err, rc, "a user or agent named '%s' already exists", u->name);
	return bump(st, rc, err);
}

enum smr_rc store_user_get(struct store *st, const char *name, struct user *out,
			   struct smr_err *err)
{
	static const char sql[] = USER_COLS " WHERE name = $1";
	const char *p[] = { name };
	struct store_rows r;
	enum smr_rc rc = q(st, sql, p, 1, &r, err);

	memset(out, 0, sizeof(*out));
	if (!rc && r.rows == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no user '%s'", name);
	if (!rc)
		read_user(&r, 0, out);
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_user_list(struct store *st, struct user **out, size_t *n,
			    struct smr_err *err)
{
	static const char sql[] = USER_COLS " ORDER BY name";
	struct store_rows r;
	enum smr_rc rc = q(st, sql, NULL, 0, &r, err);

	if (rc)
		return rc;
	*out = xcalloc(r.rows ? r.rows : 1, sizeof(**out));
	*n = r.rows;
	for (size_t i = 0; i < r.rows; i++)
		read_user(&r, i, &(*out)[i]);
	store_rows_release(&r);
	return SMR_OK;
}

enum smr_rc store_user_set_disabled(struct store *st, const char *id, int disabled,
				    struct smr_err *err)
{
	static const char sql[] = "UPDATE users SET disabled = $1 WHERE id = $2";
	const char *p[] = { disabled ? "1" : "0", id };

	return bump(st, q_done(st, sql, p, 2, err), err);
}

enum smr_rc store_users_exist(struct store *st, int *yes, struct smr_err *err)
{
	static const char sql[] = "SELECT 1 FROM users LIMIT 1";
	struct store_rows r;
	enum smr_rc rc = q(st, sql, NULL, 0, &r, err);

	if (!rc)
		*yes = r.rows > 0;
	store_rows_release(&r);
	return rc;
}

/* ---- tokens ---- */

/* A token with its user, and whether that user or its person is disabled. */
#define TOKEN_COLS \
	"SELECT t.id, t.user_id, u.name, COALESCE(u.owner_id, u.id)," \
	" CASE WHEN u.disabled <> 0 OR COALESCE(o.disabled, 0) <> 0 THEN 1 ELSE 0 END," \
	" t.created_at, t.expires_at, t.last_used_at, t.revoked_at, t.token_hash" \
	" FROM tokens t JOIN users u ON u.id = t.user_id LEFT JOIN users o ON o.id = u.owner_id"

static void read_token(struct store_rows *r, size_t i, struct token *t)
{
	t->id = sql_take(r, i, 0);
	t->user_id = sql_take(r, i, 1);
	t->user_name = sql_take(r, i, 2);
	t->person_id = sql_take(r, i, 3);
	t->disabled = (int)sql_int(r, i, 4);
	t->created_at = sql_take(r, i, 5);
	t->expires_at = sql_take(r, i, 6);
	t->last_used_at = sql_take(r, i, 7);
	t->revoked_at = sql_take(r, i, 8);
	t->hash = sql_take(r, i, 9);
}

enum smr_rc store_token_create(struct store *st, const struct token *t, const char *hash,
			       struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO tokens (id, token_hash, user_id, created_at, expires_at)"
		" VALUES ($1, $2, $3, $4, $5)";
	const char *p[] = { t->id, hash, t->user_id, t->created_at, t->expires_at };
	enum smr_rc rc = q_done(st, sql, p, 5, err);

	if (rc == SMR_ECONFLICT)
		return smr_errf(err, rc, "token id '%s' is taken; try again", t->id);
	return bump(st, rc, err);
}

static enum smr_rc token_one(struct store *st, const char *sql, const char *key,
			     struct token *out, struct smr_err *err)
{
	const char *p[] = { key };
	struct store_rows r;
	enum smr_rc rc = q(st, sql, p, 1, &r, err);

	memset(out, 0, sizeof(*out));
	if (!rc && r.rows == 0)
		rc = SMR_ENOTFOUND;
	if (!rc)
		read_token(&r, 0, out);
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_token_find(struct store *st, const char *hash, struct token *out,
			     struct smr_err *err)
{
	static const char sql[] = TOKEN_COLS " WHERE t.token_hash = $1";

	return token_one(st, sql, hash, out, err);
}

enum smr_rc store_token_get(struct store *st, const char *id, struct token *out,
			    struct smr_err *err)
{
	static const char sql[] = TOKEN_COLS " WHERE t.id = $1";
	enum smr_rc rc = token_one(st, sql, id, out, err);

	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no token '%s'", id);
	return rc;
}

enum smr_rc store_token_list(struct store *st, const char *user_id, struct token **out,
			     size_t *n, struct smr_err *err)
{
	static const char all[] = TOKEN_COLS " ORDER BY t.created_at DESC, t.id";
	static const char one[] = TOKEN_COLS
		" WHERE t.user_id = $1 OR u.owner_id = $1 ORDER BY t.created_at DESC, t.id";
	const char *p[] = { user_id };
	struct store_rows r;
	enum smr_rc rc = q(st, user_id ? one : all, p, user_id ? 1 : 0, &r, err);

	if (rc)
		return rc;
	*out = xcalloc(r.rows ? r.rows : 1, sizeof(**out));
	*n = r.rows;
	for (size_t i = 0; i < r.rows; i++)
		read_token(&r, i, &(*out)[i]);
	store_rows_release(&r);
	return SMR_OK;
}

enum smr_rc store_token_revoke(struct store *st, const char *id, const char *now,
			       struct smr_err *err)
{
	static const char sql[] =
		"UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2";
	const char *p[] = { now, id };

	return bump(st, q_done(st, sql, p, 2, err), err);
}

enum smr_rc store_token_touch(struct store *st, const char *id, const char *now,
			      struct smr_err *err)
{
	static const char sql[] = "UPDATE tokens SET last_used_at = $1 WHERE id = $2";
	const char *p[] = { now, id };

	return q_done(st, sql, p, 2, err);
}

/* ---- grants ---- */

enum smr_rc store_grant_set(struct store *st, const char *user_id, const char *space_id,
			    enum role role, struct smr_err *err)
{
	static const char upsert[] =
		"INSERT INTO grants (user_id, repo_id, role) VALUES ($1, $2, $3)"
		" ON CONFLICT (user_id, repo_id) DO UPDATE SET role = excluded.role";
	static const char del[] = "DELETE FROM grants WHERE user_id = $1 AND repo_id = $2";
	char num[4];
	const char *p[] = { user_id, space_id, num };

	snprintf(num, sizeof(num), "%d", (int)role);
	return bump(st, q_done(st, role == ROLE_NONE ? del : upsert, p, role == ROLE_NONE ? 2 : 3,
			       err), err);
}

enum smr_rc store_grant_get(struct store *st, const char *user_id, const char *space_id,
			    enum role *out, struct smr_err *err)
{
	static const char sql[] = "SELECT role FROM grants WHERE user_id = $1 AND repo_id = $2";
	const char *p[] = { user_id, space_id };
	struct store_rows r;
	enum smr_rc rc = q(st, sql, p, 2, &r, err);

	if (!rc)
		*out = r.rows ? (enum role)sql_int(&r, 0, 0) : ROLE_NONE;
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_grant_list(struct store *st, const char *user_id, const char *space_id,
			     struct grant **out, size_t *n, struct smr_err *err)
{
	static const char by_user[] =
		"SELECT u.name, g.repo_id, r.name, g.role FROM grants g"
		" JOIN users u ON u.id = g.user_id JOIN repos r ON r.id = g.repo_id"
		" WHERE g.user_id = $1 ORDER BY r.name";
	static const char by_space[] =
		"SELECT u.name, g.repo_id, r.name, g.role FROM grants g"
		" JOIN users u ON u.id = g.user_id JOIN repos r ON r.id = g.repo_id"
		" WHERE g.repo_id = $1 ORDER BY u.name";
	const char *p[] = { user_id ? user_id : space_id };
	struct store_rows r;
	enum smr_rc rc = q(st, user_id ? by_user : by_space, p, 1, &r, err);

	if (rc)
		return rc;
	*out = xcalloc(r.rows ? r.rows : 1, sizeof(**out));
	*n = r.rows;
	for (size_t i = 0; i < r.rows; i++) {
		(*out)[i].user_name = sql_take(&r, i, 0);
		(*out)[i].space_id = sql_take(&r, i, 1);
		(*out)[i].space_name = sql_take(&r, i, 2);
		(*out)[i].role = (enum role)sql_int(&r, i, 3);
	}
	store_rows_release(&r);
	return SMR_OK;
}
