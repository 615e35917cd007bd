/*
 * rows.c -- the plain rows of store.h, in one SQL text for both engines
 * (store/sql.h): each is one statement on its own, with no rule to keep
 * between rows (no compare-and-swap, no numbering), so nothing in it
 * differs between SQLite and PostgreSQL.  What does differ stays in the
 * backends' methods (store_int.h).
 */
#include "store/auth.h"
#include "store/sql.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Reads every row of r into a new array of r->rows elements of size bytes
 * with read; *out gets it (the caller frees it as its type says).
 */
static void read_all(struct store_rows *r, size_t size,
		     void (*read)(struct store_rows *r, size_t i, void *elem), void **out,
		     size_t *n)
{
	char *v = xcalloc(r->rows ? r->rows : 1, size);

	for (size_t i = 0; i < r->rows; i++)
		read(r, i, v + i * size);
	*out = v;
	*n = r->rows;
}

/* Runs sql, whose one argument is key, and reads its rows as read_all does. */
static enum smr_rc list_by(struct store *st, const char *sql, const char *key,
			   const char *what, size_t size,
			   void (*read)(struct store_rows *r, size_t i, void *elem), void **out,
			   size_t *n, struct smr_err *err)
{
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	if (key)
		sql_arg(&a, key);
	rc = sql_rows(st, SQL_AUTO, sql, &a, what, &r, err);
	if (!rc)
		read_all(&r, size, read, out, n);
	store_rows_release(&r);
	return rc;
}

/*
 * Runs sql, whose one argument is key, and reads its first row with read;
 * SMR_ENOTFOUND with no message when there is none (the caller names what).
 */
static enum smr_rc one_by(struct store *st, const char *sql, const char *key, const char *what,
			  void (*read)(struct store_rows *r, size_t i, void *elem), void *out,
			  struct smr_err *err)
{
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, key);
	rc = sql_rows(st, SQL_AUTO, sql, &a, what, &r, err);
	if (!rc && r.rows == 0)
		rc = SMR_ENOTFOUND;
	if (!rc)
		read(&r, 0, out);
	store_rows_release(&r);
	return rc;
}

/* ---- Spaces ---- */

#define SPACE_COLS \
	"SELECT r.id, r.name, r.description, r.created_at, c.commit_hash, r.deleted_at" \
	" FROM repos r" \
	" LEFT JOIN refs f ON f.repo_id = r.id AND f.name = 'main'" \
	" LEFT JOIN commits c ON c.id = f.commit_id"

static void read_space(struct store_rows *r, size_t i, void *elem)
{
	struct space *sp = elem;

	sp->id = sql_take(r, i, 0);
	sp->name = sql_take(r, i, 1);
	sp->description = sql_take(r, i, 2);
	sp->created_at = sql_take(r, i, 3);
	sp->head = sql_take(r, i, 4);
	sp->deleted_at = sql_take(r, i, 5);
}

enum smr_rc store_space_get(struct store *st, const char *id_or_name, struct space *out,
			    struct smr_err *err)
{
	/*
	 * A live Space by name, else by id (a name wins over another Space's
	 * id): two index look-ups, the second only when the first finds
	 * nothing, where an OR of the two columns scanned every Space.
	 */
	static const char sql[] = SPACE_COLS " WHERE r.id = COALESCE("
		"(SELECT id FROM repos WHERE name = $1 AND deleted_at IS NULL),"
		" (SELECT id FROM repos WHERE id = $1 AND deleted_at IS NULL))";
	enum smr_rc rc = one_by(st, sql, id_or_name, "reading a space", read_space, out, err);

	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no space '%s'", id_or_name);
	return rc;
}

enum smr_rc store_space_list(struct store *st, struct space **out, size_t *n,
			     struct smr_err *err)
{
	static const char sql[] = SPACE_COLS " WHERE r.deleted_at IS NULL ORDER BY r.name";

	return list_by(st, sql, NULL, "listing spaces", sizeof(**out), read_space, (void **)out,
		       n, err);
}

enum smr_rc store_space_find(struct store *st, const char *id_or_name, struct space *out,
			     struct smr_err *err)
{
	static const char sql[] = SPACE_COLS " WHERE r.id = $1 OR r.name = $1"
		" OR r.id = (SELECT repo_id FROM reflog WHERE space_name = $1"
		"  AND action = 'delete' ORDER BY id DESC LIMIT 1)"
		" ORDER BY (r.deleted_at IS NULL AND r.name = $1) DESC, r.name = $1 DESC,"
		" r.id = $1 DESC LIMIT 1";
	enum smr_rc rc = one_by(st, sql, id_or_name, "reading a space", read_space, out, err);

	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no space '%s', live or deleted", id_or_name);
	return rc;
}

enum smr_rc store_space_list_deleted(struct store *st, struct space **out, size_t *n,
				     struct smr_err *err)
{
	static const char sql[] = SPACE_COLS " WHERE r.deleted_at IS NOT NULL"
		" ORDER BY r.deleted_at, r.id";

	return list_by(st, sql, NULL, "listing deleted spaces", sizeof(**out), read_space,
		       (void **)out, n, err);
}

/* ---- Checkpoints by hash ---- */

enum smr_rc store_checkpoint_find_prefix(struct store *st, const char *prefix, size_t limit,
					 char ***out, size_t *n, struct smr_err *err)
{
	static const char sql[] =
		"SELECT DISTINCT commit_hash FROM commits WHERE commit_hash >= CAST($1 AS TEXT)"
		" AND commit_hash < CAST($1 AS TEXT) || 'g' ORDER BY commit_hash"
		" LIMIT CAST($2 AS BIGINT)";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, prefix);
	sql_arg_int(&a, (int64_t)limit);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "looking up a hash", &r, err);
	if (!rc) {
		*n = r.rows < limit ? r.rows : limit;
		*out = xcalloc(limit + 1, sizeof(**out));
		for (size_t i = 0; i < *n; i++)
			(*out)[i] = sql_take(&r, i, 0);
	}
	store_rows_release(&r);
	return rc;
}

/* ---- the reflog and hand-off notes ---- */

enum smr_rc rows_reflog_insert(struct store *st, const char *space_id, const char *space_name,
			       const char *old_hash, const char *new_hash, const char *action,
			       const struct ref_move *mv, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO reflog (repo_id, space_name, old_hash, new_hash, action, actor,"
		" reason, created_at) SELECT id, COALESCE($8, name), $2, $3, $4, $5, $6, $7"
		" FROM repos WHERE id = $1";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, space_id);
	sql_arg(&a, old_hash);
	sql_arg(&a, new_hash);
	sql_arg(&a, action);
	sql_arg(&a, mv->actor ? mv->actor : "");
	sql_arg(&a, mv->reason ? mv->reason : "");
	sql_arg(&a, mv->at);
	sql_arg(&a, space_name);
	return sql_exec(st, SQL_ROW, sql, &a, "writing the reflog", NULL, err);
}

static void read_reflog(struct store_rows *r, size_t i, void *elem)
{
	struct reflog_entry *e = elem;

	e->id = sql_int(r, i, 0);
	e->space_id = sql_take(r, i, 1);
	e->space_name = sql_take(r, i, 2);
	e->old_hash = sql_take(r, i, 3);
	e->new_hash = sql_take(r, i, 4);
	e->action = sql_take(r, i, 5);
	e->actor = sql_take(r, i, 6);
	e->reason = sql_take(r, i, 7);
	e->created_at = sql_take(r, i, 8);
}

enum smr_rc store_reflog_list(struct store *st, const char *space_id, const char *before,
			      size_t limit, struct reflog_entry **out, size_t *n,
			      struct smr_err *err)
{
	static const char sql[] =
		"SELECT id, repo_id, space_name, old_hash, new_hash, action, actor, reason,"
		" created_at FROM reflog WHERE repo_id = $1"
		" AND (CAST($2 AS TEXT) IS NULL OR created_at <= $2)"
		" ORDER BY id DESC LIMIT CAST($3 AS BIGINT)";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	*out = NULL;
	*n = 0;
	sql_arg(&a, space_id);
	sql_arg(&a, before);
	sql_arg_int(&a, limit && limit < INT64_MAX ? (int64_t)limit : INT64_MAX);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading the reflog", &r, err);
	if (!rc)
		read_all(&r, sizeof(**out), read_reflog, (void **)out, n);
	store_rows_release(&r);
	return rc;
}

static void read_handoff(struct store_rows *r, size_t i, void *elem)
{
	struct handoff *out = elem;

	out->id = sql_int(r, i, 0);
	out->space_id = sql_take(r, i, 1);
	out->hash = sql_take(r, i, 2);
	out->note = sql_take(r, i, 3);
	out->author = sql_take(r, i, 4);
	out->created_at = sql_take(r, i, 5);
}

enum smr_rc store_handoff_latest(struct store *st, const char *space, struct handoff *out,
				 struct smr_err *err)
{
	static const char sql[] =
		"SELECT id, repo_id, commit_hash, note, author, created_at FROM handoffs"
		" WHERE repo_id = (SELECT id FROM repos WHERE name = $1 AND deleted_at IS NULL)"
		" ORDER BY id DESC LIMIT 1";
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	rc = one_by(st, sql, space, "reading the hand-off note", read_handoff, out, err);
	return rc == SMR_ENOTFOUND ? SMR_OK : rc;
}

/* ---- draft jobs ---- */

#define JOB_COLS \
	"SELECT id, session_id, status, provider, model, result, error, created_at," \
	" started_at, finished_at FROM draft_jobs"

enum smr_rc store_job_create(struct store *st, const struct draft_job *j, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO draft_jobs (id, session_id, status, provider, model, created_at)"
		" VALUES ($1, $2, $3, $4, $5, $6)";
	struct sql_args a = SQL_ARGS_INIT;
	enum smr_rc rc;

	sql_arg(&a, j->id);
	sql_arg(&a, j->session_id);
	sql_arg(&a, job_status_name(j->status));
	sql_arg(&a, j->provider);
	sql_arg(&a, j->model);
	sql_arg(&a, j->created_at);
	rc = sql_exec(st, SQL_TXN, sql, &a, "creating a draft job", NULL, err);
	if (rc == SMR_ECONFLICT)
		return smr_errf(err, rc, "a draft job '%s' exists already", j->id);
	return rc;
}

static void read_job(struct store_rows *r, size_t i, void *elem)
{
	struct draft_job *out = elem;
	const char *status = r->cells[i * r->cols + 2];

	if (!status || job_status_parse(status, &out->status))
		out->status = JOB_FAILED;
	out->id = sql_take(r, i, 0);
	out->session_id = sql_take(r, i, 1);
	out->provider = sql_take(r, i, 3);
	out->model = sql_take(r, i, 4);
	out->result = sql_take(r, i, 5);
	out->error = sql_take(r, i, 6);
	out->created_at = sql_take(r, i, 7);
	out->started_at = sql_take(r, i, 8);
	out->finished_at = sql_take(r, i, 9);
}

enum smr_rc store_job_get(struct store *st, const char *id, struct draft_job *out,
			  struct smr_err *err)
{
	static const char sql[] = JOB_COLS " WHERE id = $1";
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	rc = one_by(st, sql, id, "reading a draft job", read_job, out, err);
	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no draft job '%s'", id);
	return rc;
}

enum smr_rc store_job_update(struct store *st, const struct draft_job *j, struct smr_err *err)
{
	static const char sql[] =
		"UPDATE draft_jobs SET status = $1, result = COALESCE($2, result),"
		" error = COALESCE($3, error), started_at = COALESCE($4, started_at),"
		" finished_at = COALESCE($5, finished_at) WHERE id = $6";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, job_status_name(j->status));
	sql_arg(&a, j->result);
	sql_arg(&a, j->error);
	sql_arg(&a, j->started_at);
	sql_arg(&a, j->finished_at);
	sql_arg(&a, j->id);
	return sql_exec(st, SQL_TXN, sql, &a, "updating a draft job", NULL, err);
}

enum smr_rc store_job_fail_unfinished(struct store *st, const char *reason, const char *now,
				      size_t *n, struct smr_err *err)
{
	static const char sql[] =
		"UPDATE draft_jobs SET status = 'failed', error = $1, finished_at = $2"
		" WHERE status IN ('queued', 'running')";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, reason);
	sql_arg(&a, now);
	return sql_exec(st, SQL_TXN, sql, &a, "failing unfinished draft jobs", n, err);
}

/* ---- sessions and turns ---- */

#define SESSION_COLS \
	"SELECT s.id, s.repo_id, s.title, s.mounted_commit_hash, s.forked_from_session_id," \
	" s.history_base_seq, s.created_at," \
	" (SELECT COALESCE(MAX(sequence_number), 0) FROM turns t WHERE t.session_id = s.id)," \
	" s.leaf_seq, s.fork_seq FROM sessions s"

static void read_session(struct store_rows *r, size_t i, void *elem)
{
	struct session *out = elem;

	out->id = sql_take(r, i, 0);
	out->repo_id = sql_take(r, i, 1);
	out->title = sql_take(r, i, 2);
	out->mounted_hash = sql_take(r, i, 3);
	out->forked_from = sql_take(r, i, 4);
	out->history_base_seq = sql_int_or_neg(r, i, 5);
	out->created_at = sql_take(r, i, 6);
	out->last_seq = sql_int(r, i, 7);
	out->leaf_seq = sql_int(r, i, 8);        /* NULL reads as 0: the newest turn */
	out->fork_seq = sql_int(r, i, 9);
}

enum smr_rc store_session_get(struct store *st, const char *id, struct session *out,
			      struct smr_err *err)
{
	static const char sql[] = SESSION_COLS " WHERE s.id = $1";
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	rc = one_by(st, sql, id, "reading a session", read_session, out, err);
	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no session '%s'", id);
	return rc;
}

enum smr_rc store_session_list(struct store *st, const char *repo_id, struct session **out,
			       size_t *n, struct smr_err *err)
{
	static const char sql[] = SESSION_COLS " WHERE s.repo_id = $1 ORDER BY s.created_at, s.id";

	return list_by(st, sql, repo_id, "listing sessions", sizeof(**out), read_session,
		       (void **)out, n, err);
}

enum smr_rc store_turn_set_error(struct store *st, int64_t turn_id, const char *error,
				 struct smr_err *err)
{
	static const char sql[] = "UPDATE turns SET error = $1 WHERE id = $2";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, error);
	sql_arg_int(&a, turn_id);
	return sql_exec(st, SQL_TXN, sql, &a, "recording a turn error", NULL, err);
}

static void read_turn(struct store_rows *r, size_t i, void *elem)
{
	struct turn *t = elem;

	t->id = sql_int(r, i, 0);
	t->session_id = sql_take(r, i, 1);
	t->seq = sql_int(r, i, 2);
	t->role = sql_take(r, i, 3);
	t->content = sql_take(r, i, 4);
	t->provider = sql_take(r, i, 5);
	t->model = sql_take(r, i, 6);
	t->prompt_tokens = sql_int_or_neg(r, i, 7);
	t->completion_tokens = sql_int_or_neg(r, i, 8);
	t->latency_ms = sql_int_or_neg(r, i, 9);
	t->error = sql_take(r, i, 10);
	t->created_at = sql_take(r, i, 11);
	t->status = sql_take(r, i, 12);
	t->author = sql_take(r, i, 13);
	/* NULL: the turn before it, as every turn of a linear session */
	t->parent_seq = sql_int_or_neg(r, i, 14);
	t->has_parent = t->parent_seq >= 0;
	if (!t->has_parent)
		t->parent_seq = t->seq - 1;
}

enum smr_rc store_turn_list(struct store *st, const char *session_id, int64_t after_seq,
			    struct turn **out, size_t *n, struct smr_err *err)
{
	static const char sql[] =
		"SELECT id, session_id, sequence_number, role, content, provider, model,"
		" prompt_tokens, completion_tokens, latency_ms, error, created_at, status, author,"
		" parent_seq FROM turns WHERE session_id = $1 AND sequence_number > $2"
		" ORDER BY sequence_number";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, session_id);
	sql_arg_int(&a, after_seq);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading turns", &r, err);
	if (!rc)
		read_all(&r, sizeof(**out), read_turn, (void **)out, n);
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_turns_since_head(struct store *st, const char *repo_id, int64_t *count,
				   struct smr_err *err)
{
	static const char sql[] =
		"SELECT COUNT(*) FROM turns t JOIN sessions s ON s.id = t.session_id"
		" WHERE s.repo_id = $1 AND t.created_at > COALESCE((SELECT c.created_at"
		" FROM refs f JOIN commits c ON c.id = f.commit_id"
		" WHERE f.repo_id = $1 AND f.name = 'main'), '')";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, repo_id);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "counting turns", &r, err);
	if (!rc)
		*count = r.rows ? sql_int(&r, 0, 0) : 0;
	store_rows_release(&r);
	return rc;
}

/* ---- rows of store.c's transactions ---- */

/*
 * Runs a one-row write of the current transaction at once; SMR_ENOTFOUND
 * naming the Space id when it touched nothing.
 */
static enum smr_rc space_row(struct store *st, const char *sql, const struct sql_args *a,
			     const char *id, const char *what, struct smr_err *err)
{
	size_t changed = 0;
	enum smr_rc rc = sql_exec(st, SQL_AUTO, sql, a, what, &changed, err);

	if (!rc && changed == 0)
		return smr_errf(err, SMR_ENOTFOUND, "no space '%s'", id);
	return rc;
}

enum smr_rc rows_space_rename(struct store *st, const char *id, const char *new_name,
			      struct smr_err *err)
{
	static const char sql[] = "UPDATE repos SET name = $1 WHERE id = $2 AND deleted_at IS NULL";
	struct sql_args a = SQL_ARGS_INIT;
	enum smr_rc rc;

	sql_arg(&a, new_name);
	sql_arg(&a, id);
	rc = space_row(st, sql, &a, id, "renaming a space", err);
	if (rc == SMR_ECONFLICT)
		return smr_errf(err, rc, "a space named '%s' already exists", new_name);
	return rc;
}

/*
 * A deleted Space gives its name back: it becomes "NAME/ID", which no live
 * Space can have ('/' is not allowed in names), so lookups by id and the
 * reflog still find it.
 */
enum smr_rc rows_space_delete(struct store *st, const char *id, const char *at,
			      struct smr_err *err)
{
	static const char sql[] = "UPDATE repos SET deleted_at = $1, name = name || '/' || id"
		" WHERE id = $2 AND deleted_at IS NULL";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, at);
	sql_arg(&a, id);
	return space_row(st, sql, &a, id, "deleting a space", err);
}

enum smr_rc rows_handoff_insert(struct store *st, const struct handoff *h, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO handoffs (repo_id, commit_hash, note, author, created_at)"
		" SELECT id, $2, $3, $4, $5 FROM repos WHERE id = $1 AND deleted_at IS NULL";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, h->space_id);
	sql_arg(&a, h->hash);
	sql_arg(&a, h->note);
	sql_arg(&a, h->author ? h->author : "");
	sql_arg(&a, h->created_at);
	return space_row(st, sql, &a, h->space_id, "writing a hand-off note", err);
}

enum smr_rc rows_space_owner(struct store *st, const char *space_id, const char *user_id,
			     struct smr_err *err)
{
	static const char sql[] = "INSERT INTO grants (user_id, repo_id, role) VALUES ($1, $2, $3)"
		" ON CONFLICT (user_id, repo_id) DO UPDATE SET role = excluded.role";
	struct sql_args a = SQL_ARGS_INIT;
	enum smr_rc rc;

	sql_arg(&a, user_id);
	sql_arg(&a, space_id);
	sql_arg_int(&a, ROLE_OWNER);
	rc = sql_exec(st, SQL_ROW, sql, &a, "making you the new space's owner", NULL, err);
	if (!rc)
		rc = sql_exec(st, SQL_ROW, sql_auth_bump(st), NULL, "moving the auth epoch", NULL,
			      err);
	return rc;
}

enum smr_rc rows_session_set_leaf(struct store *st, const char *session_id, int64_t leaf,
				  struct smr_err *err)
{
	static const char sql[] = "UPDATE sessions SET leaf_seq = CAST($2 AS BIGINT) WHERE id = $1";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, session_id);
	sql_arg_int_or_null(&a, leaf > 0 ? leaf : -1);
	return sql_exec(st, SQL_ROW, sql, &a, "choosing a session's path", NULL, err);
}

enum smr_rc rows_session_insert(struct store *st, const struct session *sn,
				struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO sessions (id, repo_id, title, mounted_commit_hash,"
		" forked_from_session_id, history_base_seq, created_at, fork_seq)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, CAST($8 AS BIGINT))";
	struct sql_args a = SQL_ARGS_INIT;
	enum smr_rc rc;

	sql_arg(&a, sn->id);
	sql_arg(&a, sn->repo_id);
	sql_arg(&a, sn->title ? sn->title : "");
	sql_arg(&a, sn->mounted_hash);
	sql_arg(&a, sn->forked_from);
	sql_arg_int_or_null(&a, sn->history_base_seq);
	sql_arg(&a, sn->created_at);
	sql_arg_int_or_null(&a, sn->fork_seq > 0 ? sn->fork_seq : -1);
	rc = sql_exec(st, SQL_ROW, sql, &a, "creating a session", NULL, err);
	if (rc == SMR_ECONFLICT)
		return smr_errf(err, rc, "a session '%s' exists already", sn->id);
	return rc;
}

/* ---- generations ---- */

#define GEN_COLS \
	"SELECT id, session_id, status, provider, model, user_turn_seq, assistant_turn_seq," \
	" error, created_at, finished_at FROM generations"

static void read_generation(struct store_rows *r, size_t i, void *elem)
{
	struct generation *g = elem;

	g->id = sql_take(r, i, 0);
	g->session_id = sql_take(r, i, 1);
	g->status = sql_take(r, i, 2);
	g->provider = sql_take(r, i, 3);
	g->model = sql_take(r, i, 4);
	g->user_seq = sql_int_or_neg(r, i, 5);
	g->assistant_seq = sql_int_or_neg(r, i, 6);
	g->error = sql_take(r, i, 7);
	g->created_at = sql_take(r, i, 8);
	g->finished_at = sql_take(r, i, 9);
}

enum smr_rc store_generation_get(struct store *st, const char *id, struct generation *out,
				 struct smr_err *err)
{
	static const char sql[] = GEN_COLS " WHERE id = $1";
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	rc = one_by(st, sql, id, "reading a generation", read_generation, out, err);
	if (rc == SMR_ENOTFOUND)
		smr_errf(err, rc, "no generation '%s'", id);
	return rc;
}

enum smr_rc store_generation_running(struct store *st, const char *session_id,
				     struct generation *out, struct smr_err *err)
{
	static const char sql[] = GEN_COLS " WHERE session_id = $1 AND status = 'running'";
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	rc = one_by(st, sql, session_id, "reading a generation", read_generation, out, err);
	if (rc == SMR_ENOTFOUND)
		smr_errf(err, rc, "session '%s' has no reply being generated", session_id);
	return rc;
}

enum smr_rc rows_generation_insert(struct store *st, const struct generation *g,
				   struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO generations (id, session_id, status, provider, model, user_turn_seq,"
		" created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, g->id);
	sql_arg(&a, g->session_id);
	sql_arg(&a, g->status);
	sql_arg(&a, g->provider);
	sql_arg(&a, g->model);
	sql_arg_int_or_null(&a, g->user_seq);
	sql_arg(&a, g->created_at);
	return sql_exec(st, SQL_AUTO, sql, &a, "starting a generation", NULL, err);
}

enum smr_rc rows_generation_update(struct store *st, const struct generation *g,
				   struct smr_err *err)
{
	static const char sql[] =
		"UPDATE generations SET status = $1, user_turn_seq = $2, assistant_turn_seq = $3,"
		" error = COALESCE($4, error), finished_at = COALESCE($5, finished_at) WHERE id = $6";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, g->status);
	sql_arg_int_or_null(&a, g->user_seq);
	sql_arg_int_or_null(&a, g->assistant_seq);
	sql_arg(&a, g->error);
	sql_arg(&a, g->finished_at);
	sql_arg(&a, g->id);
	return sql_exec(st, SQL_AUTO, sql, &a, "updating a generation", NULL, err);
}

enum smr_rc rows_generation_interrupt(struct store *st, const char *reason, const char *now,
				      const char *before, size_t *n, struct smr_err *err)
{
	static const char turns[] =
		"UPDATE turns SET error = $1 WHERE error IS NULL AND id IN (SELECT t.id FROM turns t"
		" JOIN generations g ON g.session_id = t.session_id"
		" AND t.sequence_number = g.user_turn_seq WHERE g.status = 'running'"
		" AND (CAST($2 AS TEXT) IS NULL OR g.created_at < $2))";
	static const char gens[] =
		"UPDATE generations SET status = 'interrupted', error = $1, finished_at = $2"
		" WHERE status = 'running' AND (CAST($3 AS TEXT) IS NULL OR created_at < $3)";
	struct sql_args a = SQL_ARGS_INIT, b = SQL_ARGS_INIT;
	enum smr_rc rc;

	sql_arg(&a, reason);
	sql_arg(&a, before);
	rc = sql_exec(st, SQL_AUTO, turns, &a, "interrupting generations", NULL, err);
	sql_arg(&b, reason);
	sql_arg(&b, now);
	sql_arg(&b, before);
	if (!rc)
		rc = sql_exec(st, SQL_AUTO, gens, &b, "interrupting generations", n, err);
	return rc;
}
