/*
 * rows.c -- the plain rows of store.h, in one SQL text for both engines
 * (store/sql.h): each is one statement on its own, with no rule to keep
 * between rows (no compare-and-swap, no numbering), so nothing in it
 * differs between SQLite and PostgreSQL.  What does differ stays in the
 * backends' methods (store_int.h).  Also here, in the same portable SQL:
 * the migration that collapses per-Space copies into one shared history,
 * which each backend drives from its migrations, and the Spaces that hold
 * a checkpoint (docs/storage.md).
 */
#include "store/auth.h"
#include "store/sql.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
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
	return store_space_page(st, NULL, 0, out, n, err);
}

enum smr_rc store_space_page(struct store *st, const char *after, size_t limit,
			     struct space **out, size_t *n, struct smr_err *err)
{
	/* names are never empty, so "" is before the first; the name index walks a page */
	static const char all[] = SPACE_COLS " WHERE r.deleted_at IS NULL AND r.name > $1"
		" ORDER BY r.name";
	static const char page[] = SPACE_COLS " WHERE r.deleted_at IS NULL AND r.name > $1"
		" ORDER BY r.name LIMIT CAST($2 AS BIGINT)";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, after ? after : "");
	if (limit)
		sql_arg_int(&a, (int64_t)limit);
	rc = sql_rows(st, SQL_AUTO, limit ? page : all, &a, "listing spaces", &r, err);
	if (!rc)
		read_all(&r, sizeof(**out), read_space, (void **)out, n);
	store_rows_release(&r);
	return rc;
}

static void read_summary(struct store_rows *r, size_t i, void *elem)
{
	struct space_summary *v = elem;

	read_space(r, i, &v->sp);
	v->head_title = sql_take(r, i, 6);
	v->head_author = sql_take(r, i, 7);
	v->head_at = sql_take(r, i, 8);
	v->sessions = sql_int(r, i, 9);
	v->newest_session_at = sql_take(r, i, 10);
	v->newest_turn_at = sql_take(r, i, 11);
}

enum smr_rc store_space_summaries(struct store *st, struct space_summary **out, size_t *n,
				  struct smr_err *err)
{
	/* a session's last turn is its highest sequence number's, as the session's reads say */
	static const char sql[] =
		"SELECT r.id, r.name, r.description, r.created_at, c.commit_hash, r.deleted_at,"
		" c.title, c.author, c.created_at,"
		" (SELECT COUNT(*) FROM sessions s WHERE s.repo_id = r.id),"
		" (SELECT MAX(s.created_at) FROM sessions s WHERE s.repo_id = r.id),"
		" (SELECT MAX((SELECT t.created_at FROM turns t WHERE t.session_id = s.id"
		"   ORDER BY t.sequence_number DESC LIMIT 1)) FROM sessions s WHERE s.repo_id = r.id)"
		" FROM repos r"
		" LEFT JOIN refs f ON f.repo_id = r.id AND f.name = 'main'"
		" LEFT JOIN commits c ON c.id = f.commit_id"
		" WHERE r.deleted_at IS NULL";

	return list_by(st, sql, NULL, "summing up spaces", sizeof(**out), read_summary,
		       (void **)out, n, err);
}

void space_summaries_free(struct space_summary *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		space_release(&v[i].sp);
		free(v[i].head_title);
		free(v[i].head_author);
		free(v[i].head_at);
		free(v[i].newest_session_at);
		free(v[i].newest_turn_at);
	}
	free(v);
}

/*
 * Runs sql, a backend's statement whose one parameter is the JSON array v
 * (taken), named field in store_ops; *r as sql_rows gives it.
 */
static enum smr_rc json_param_rows(struct store *st, const char *sql, const char *field,
				   json_t *v, const char *what, struct store_rows *r,
				   struct smr_err *err)
{
	struct sql_args a = SQL_ARGS_INIT;
	char *text = json_dumps(v, JSON_COMPACT);
	enum smr_rc rc;

	json_decref(v);
	memset(r, 0, sizeof(*r));
	if (!sql)
		BUG("backend %s has no %s", st->ops->name, field);
	if (!text)
		return smr_errf(err, SMR_EINTERNAL, "out of memory %s", what);
	sql_arg(&a, text);
	rc = sql_rows(st, SQL_AUTO, sql, &a, what, r, err);
	free(text);
	return rc;
}

enum smr_rc store_space_heads_at(struct store *st, const char *const *hashes, size_t n,
				 struct space **out, size_t *nout, struct smr_err *err)
{
	json_t *v = json_array();
	struct store_rows r;
	enum smr_rc rc;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(v, json_string(hashes[i]));
	rc = json_param_rows(st, st->ops->heads_at_sql, "heads_at_sql", v, "listing spaces", &r,
			     err);
	if (!rc)
		read_all(&r, sizeof(**out), read_space, (void **)out, nout);
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_space_find(struct store *st, const char *id_or_name, struct space *out,
			     struct smr_err *err)
{
	/*
	 * By name (unique), else by id, else the Space last deleted under that
	 * name: each look-up only when those before it find nothing, for the
	 * last one scans the name's reflog (every write of a live Space).
	 */
	static const char sql[] = SPACE_COLS " WHERE r.id = COALESCE("
		"(SELECT id FROM repos WHERE name = $1), (SELECT id FROM repos WHERE id = $1),"
		" (SELECT repo_id FROM reflog WHERE space_name = $1"
		"  AND action = 'delete' ORDER BY id DESC LIMIT 1))";
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
		" reason, created_at) VALUES ($1, COALESCE($8, (SELECT name FROM repos"
		" WHERE id = $1)), $2, $3, $4, $5, $6, $7)";
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

enum smr_rc rows_reach_named(struct store *st, const char *space_id, const char *hash,
			     struct smr_err *err)
{
	static const char sql[] = SQL_REACH_NAMED("$1", "$2");
	struct sql_args a = SQL_ARGS_INIT;

	if (!hash)
		return SMR_OK;
	sql_arg(&a, space_id);
	sql_arg(&a, hash);
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
	" started_at, finished_at, owner_id FROM draft_jobs"

enum smr_rc store_job_create(struct store *st, const struct draft_job *j, struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO draft_jobs (id, session_id, status, provider, model, created_at,"
		" owner_id) VALUES ($1, $2, $3, $4, $5, $6, $7)";
	struct sql_args a = SQL_ARGS_INIT;
	enum smr_rc rc;

	sql_arg(&a, j->id);
	sql_arg(&a, j->session_id);
	sql_arg(&a, job_status_name(j->status));
	sql_arg(&a, j->provider);
	sql_arg(&a, j->model);
	sql_arg(&a, j->created_at);
	sql_arg(&a, j->owner);
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
	out->owner = sql_take(r, i, 10);
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
		" finished_at = COALESCE($5, finished_at) WHERE id = $6"
		" AND status IN ('queued', 'running')";
	struct sql_args a = SQL_ARGS_INIT;

	/* an ended job never changes again: a late result after a takeover is dropped */
	sql_arg(&a, job_status_name(j->status));
	sql_arg(&a, j->result);
	sql_arg(&a, j->error);
	sql_arg(&a, j->started_at);
	sql_arg(&a, j->finished_at);
	sql_arg(&a, j->id);
	return sql_exec(st, SQL_TXN, sql, &a, "updating a draft job", NULL, err);
}

enum smr_rc store_job_fail_owned(struct store *st, const char *owner, const char *reason,
				 const char *now, size_t *n, struct smr_err *err)
{
	/* owner NULL: jobs whose owner left no servers row (it stopped, or was taken over) */
	static const char sql[] =
		"UPDATE draft_jobs SET status = 'failed', error = $1, finished_at = $2"
		" WHERE status IN ('queued', 'running') AND owner_id IS NOT NULL"
		" AND (owner_id = $3 OR (CAST($3 AS TEXT) IS NULL"
		" AND owner_id NOT IN (SELECT id FROM servers)))";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, reason);
	sql_arg(&a, now);
	sql_arg(&a, owner);
	return sql_exec(st, SQL_TXN, sql, &a, "failing a stopped server's draft jobs", n, err);
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
	" error, created_at, finished_at, owner_id FROM generations"

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
	g->owner = sql_take(r, i, 10);
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
		" created_at, owner_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, g->id);
	sql_arg(&a, g->session_id);
	sql_arg(&a, g->status);
	sql_arg(&a, g->provider);
	sql_arg(&a, g->model);
	sql_arg_int_or_null(&a, g->user_seq);
	sql_arg(&a, g->created_at);
	sql_arg(&a, g->owner);
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

enum smr_rc store_generation_list_orphaned(struct store *st, const char *owner,
					   struct generation **out, size_t *n, struct smr_err *err)
{
	/* owner NULL: those whose owner is nobody (before leases) or left no servers row */
	static const char sql[] = GEN_COLS " WHERE status = 'running' AND (owner_id = $1"
		" OR (CAST($1 AS TEXT) IS NULL AND (owner_id IS NULL"
		" OR owner_id NOT IN (SELECT id FROM servers))))";

	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, owner);          /* NULL too: list_by would leave $1 out */
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading a stopped server's generations", &r, err);
	if (!rc)
		read_all(&r, sizeof(**out), read_generation, (void **)out, n);
	store_rows_release(&r);
	return rc;
}

enum smr_rc rows_generation_claim(struct store *st, const char *id, const char *status,
				  const char *error, const char *now, size_t *n,
				  struct smr_err *err)
{
	/* status NULL: lock the row while it runs (its end is written), changing nothing */
	static const char sql[] =
		"UPDATE generations SET status = COALESCE($2, status), error = COALESCE($3, error),"
		" finished_at = COALESCE($4, finished_at) WHERE id = $1 AND status = 'running'";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, id);
	sql_arg(&a, status);
	sql_arg(&a, error);
	sql_arg(&a, now);
	return sql_exec(st, SQL_AUTO, sql, &a, "claiming a generation", n, err);
}

enum smr_rc rows_turn_set_error_seq(struct store *st, const char *session_id, int64_t seq,
				    const char *error, struct smr_err *err)
{
	static const char sql[] =
		"UPDATE turns SET error = $3 WHERE session_id = $1 AND sequence_number = $2"
		" AND error IS NULL";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, session_id);
	sql_arg_int(&a, seq);
	sql_arg(&a, error);
	return sql_exec(st, SQL_AUTO, sql, &a, "recording why a reply ended", NULL, err);
}

/* ---- generation events (ops/full/relay.c) ---- */

void gen_events_free(struct gen_events *b, size_t n)
{
	for (size_t i = 0; b && i < n; i++) {
		free(b[i].generation_id);
		free(b[i].events);
		free(b[i].text);
	}
	free(b);
}

enum smr_rc rows_generation_events_put(struct store *st, const struct gen_events *b,
				       struct smr_err *err)
{
	static const char sql[] =
		"INSERT INTO generation_events (generation_id, first_seq, last_seq, events, text)"
		" VALUES ($1, $2, $3, $4, $5) ON CONFLICT (generation_id, first_seq) DO UPDATE"
		" SET last_seq = excluded.last_seq, events = excluded.events, text = excluded.text";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, b->generation_id);
	sql_arg_int(&a, b->first_seq);
	sql_arg_int(&a, b->last_seq);
	sql_arg(&a, b->events);
	sql_arg(&a, b->text);
	return sql_exec(st, SQL_ROW, sql, &a, "publishing a reply's events", NULL, err);
}

static void read_gen_events(struct store_rows *r, size_t i, void *elem)
{
	struct gen_events *b = elem;

	b->generation_id = sql_take(r, i, 0);
	b->first_seq = sql_int(r, i, 1);
	b->last_seq = sql_int(r, i, 2);
	b->events = sql_take(r, i, 3);
	b->text = sql_take(r, i, 4);
}

enum smr_rc store_generation_events(struct store *st, const char *id, int64_t after,
				    struct gen_events **out, size_t *n, struct smr_err *err)
{
	static const char sql[] =
		"SELECT generation_id, first_seq, last_seq, events, text FROM generation_events"
		" WHERE generation_id = $1 AND last_seq > CAST($2 AS BIGINT) ORDER BY first_seq";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg(&a, id);
	sql_arg_int(&a, after);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading a reply's events", &r, err);
	if (!rc)
		read_all(&r, sizeof(**out), read_gen_events, (void **)out, n);
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_generation_text(struct store *st, const char *id, char **out,
				  struct smr_err *err)
{
	static const char sql[] =
		"SELECT text FROM generation_events WHERE generation_id = $1 ORDER BY first_seq";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	struct buf b = BUF_INIT(0);
	enum smr_rc rc;

	sql_arg(&a, id);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading a reply's text", &r, err);
	for (size_t i = 0; !rc && i < r.rows; i++) {
		const char *t = r.cells[i * r.cols];

		if (t)
			buf_add(&b, t, strlen(t));
	}
	store_rows_release(&r);
	*out = rc ? NULL : xstrndup(b.ptr ? b.ptr : "", b.len);
	buf_release(&b);
	return rc;
}

enum smr_rc store_generation_events_prune(struct store *st, const char *before, size_t *n,
					  struct smr_err *err)
{
	static const char sql[] =
		"DELETE FROM generation_events WHERE generation_id NOT IN (SELECT id FROM generations"
		" WHERE status = 'running' OR finished_at IS NULL OR finished_at >= $1)";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, before);
	return sql_exec(st, SQL_AUTO, sql, &a, "dropping ended replies' events", n, err);
}

enum smr_rc store_generation_request_stop(struct store *st, const char *id, int *stopping,
					  struct smr_err *err)
{
	static const char sql[] =
		"UPDATE generations SET stop_requested = 1"
		" WHERE id = $1 AND status = 'running' AND stop_requested = 0";
	struct sql_args a = SQL_ARGS_INIT;
	size_t n = 0;
	enum smr_rc rc;

	sql_arg(&a, id);
	rc = sql_exec(st, SQL_AUTO, sql, &a, "asking for a reply to stop", &n, err);
	*stopping = !rc && n > 0;
	return rc;
}

/* Column col of every row of r, taken from it, and a NULL after them; caller frees each and the array. */
static char **take_column(struct store_rows *r, size_t col)
{
	char **v = xcalloc(r->rows + 1, sizeof(*v));

	for (size_t i = 0; i < r->rows; i++)
		v[i] = sql_take(r, i, col);
	return v;
}

enum smr_rc store_generation_stops(struct store *st, char ***out, size_t *n,
				   struct smr_err *err)
{
	static const char sql[] =
		"SELECT id FROM generations WHERE status = 'running' AND stop_requested = 1";
	struct store_rows r;
	enum smr_rc rc = sql_rows(st, SQL_AUTO, sql, NULL, "reading stops asked for", &r, err);

	*out = rc ? NULL : take_column(&r, 0);
	*n = rc ? 0 : r.rows;
	store_rows_release(&r);
	return rc;
}

/* ---- servers and their leases ---- */

enum smr_rc store_server_beat(struct store *st, const struct server_row *sv, int insert,
			      struct smr_err *err)
{
	static const char beat[] = "UPDATE servers SET heartbeat_at = $2 WHERE id = $1";
	static const char add[] =
		"INSERT INTO servers (id, name, started_at, heartbeat_at, lease_s)"
		" VALUES ($1, $3, $4, $2, $5) ON CONFLICT (id) DO UPDATE"
		" SET heartbeat_at = excluded.heartbeat_at";
	struct sql_args a = SQL_ARGS_INIT;
	size_t n = 0;
	enum smr_rc rc;

	sql_arg(&a, sv->id);
	sql_arg(&a, sv->heartbeat_at);
	if (!insert) {
		rc = sql_exec(st, SQL_AUTO, beat, &a, "moving the server's heartbeat", &n, err);
		if (rc || n)
			return rc;
	}
	/* new, or its row was removed by a server that took it for dead: it is back */
	sql_arg(&a, sv->name);
	sql_arg(&a, sv->started_at);
	sql_arg_int(&a, sv->lease_s);
	return sql_exec(st, SQL_AUTO, add, &a, "registering the server", NULL, err);
}

static void read_server(struct store_rows *r, size_t i, void *elem)
{
	struct server_row *sv = elem;

	sv->id = sql_take(r, i, 0);
	sv->name = sql_take(r, i, 1);
	sv->started_at = sql_take(r, i, 2);
	sv->heartbeat_at = sql_take(r, i, 3);
	sv->lease_s = sql_int(r, i, 4);
}

enum smr_rc store_server_list(struct store *st, struct server_row **out, size_t *n,
			      struct smr_err *err)
{
	static const char sql[] =
		"SELECT id, name, started_at, heartbeat_at, lease_s FROM servers ORDER BY id";

	return list_by(st, sql, NULL, "reading the servers", sizeof(**out), read_server,
		       (void **)out, n, err);
}

enum smr_rc store_server_remove(struct store *st, const char *id, const char *heartbeat_at,
				struct smr_err *err)
{
	/* heartbeat_at (not NULL): only while it has not moved since it was judged lapsed */
	static const char sql[] = "DELETE FROM servers WHERE id = $1"
		" AND (CAST($2 AS TEXT) IS NULL OR heartbeat_at = $2)";
	struct sql_args a = SQL_ARGS_INIT;

	sql_arg(&a, id);
	sql_arg(&a, heartbeat_at);
	return sql_exec(st, SQL_AUTO, sql, &a, "removing a server", NULL, err);
}

void server_rows_free(struct server_row *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].id);
		free(v[i].name);
		free(v[i].started_at);
		free(v[i].heartbeat_at);
	}
	free(v);
}

/* ---- the shared history: collapsing per-Space copies (migration, see sql.h) ---- */

/* Rows in ($1, $2] that copy a checkpoint an older row holds. */
#define COLLAPSE_DUPS \
	"SELECT d.id FROM commits d WHERE d.id > CAST($1 AS BIGINT)" \
	" AND d.id <= CAST($2 AS BIGINT) AND EXISTS (SELECT 1 FROM commits o" \
	" WHERE o.commit_hash = d.commit_hash AND o.id < d.id)"
/* The oldest row of the hash of row col: the one every copy becomes. */
#define COLLAPSE_TO(col) \
	"(SELECT MIN(o.id) FROM commits o WHERE o.commit_hash =" \
	" (SELECT x.commit_hash FROM commits x WHERE x.id = " col "))"

static const char *const collapse_setup[] = {
	"CREATE TABLE IF NOT EXISTS history_collapse (id INTEGER PRIMARY KEY,"
	" next_id BIGINT NOT NULL, from_version INTEGER NOT NULL)",
	"INSERT INTO history_collapse (id, next_id, from_version) SELECT 1, 0, CAST($1 AS INTEGER)"
	" WHERE NOT EXISTS (SELECT 1 FROM history_collapse)",
	/* what the repointing below looks rows up by (PostgreSQL has them since 1) */
	"CREATE INDEX IF NOT EXISTS commits_by_parent ON commits(parent_commit_id)",
	"CREATE INDEX IF NOT EXISTS commits_by_merge_parent ON commits(merge_parent_commit_id)",
	"CREATE INDEX IF NOT EXISTS refs_by_commit ON refs(commit_id)",
};

/* $1, $2: the batch's id range; children, refs and index rows first, then the copies go. */
static const char *const collapse_steps[] = {
	"UPDATE commits SET parent_commit_id = " COLLAPSE_TO("commits.parent_commit_id")
	" WHERE parent_commit_id IN (" COLLAPSE_DUPS ")",
	"UPDATE commits SET merge_parent_commit_id = "
	COLLAPSE_TO("commits.merge_parent_commit_id")
	" WHERE merge_parent_commit_id IN (" COLLAPSE_DUPS ")",
	"UPDATE refs SET commit_id = " COLLAPSE_TO("refs.commit_id")
	" WHERE commit_id IN (" COLLAPSE_DUPS ")",
	"UPDATE search_items SET commit_id = " COLLAPSE_TO("search_items.commit_id")
	" WHERE commit_id IN (" COLLAPSE_DUPS ")",
	"DELETE FROM commits WHERE id IN (" COLLAPSE_DUPS ")",
	"UPDATE history_collapse SET next_id = CAST($2 AS BIGINT) WHERE CAST($1 AS BIGINT) >= 0",
};

/* Runs sql[0..n), each with the arguments it names of a. */
static enum smr_rc collapse_exec_all(struct store *st, const char *const *sql, size_t n,
				     const struct sql_args *a, struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; !rc && i < n; i++) {
		struct sql_args b = *a;

		b.n = strstr(sql[i], "$2") ? a->n : strstr(sql[i], "$1") ? 1 : 0;
		rc = sql_exec(st, SQL_AUTO, sql[i], &b, "sharing the checkpoint history", NULL,
			      err);
	}
	return rc;
}

/*
 * One batch in one transaction: locks the cursor row (writers of the
 * same migration queue there), reads it and the last row id, and collapses
 * the next `batch` ids.  *next and *last get where it stands; *from, the
 * schema version the first batch started from (what the caller reports as
 * migrated_from, also when this run resumes another's).
 */
static enum smr_rc collapse_batch(struct store *st, int64_t batch, int64_t *next,
				  int64_t *last, int *from, struct smr_err *err)
{
	static const char lock[] = "UPDATE history_collapse SET next_id = next_id";
	static const char where[] =
		"SELECT next_id, (SELECT COALESCE(MAX(id), 0) FROM commits), from_version"
		" FROM history_collapse";
	struct sql_args a = SQL_ARGS_INIT, v = SQL_ARGS_INIT;
	struct store_rows r = { 0 };
	enum smr_rc rc = st->ops->txn_begin(st, err);

	sql_arg_int(&v, *from);
	if (!rc)
		rc = collapse_exec_all(st, collapse_setup,
				       sizeof(collapse_setup) / sizeof(*collapse_setup), &v, err);
	if (!rc)
		rc = sql_exec(st, SQL_AUTO, lock, NULL, "sharing the checkpoint history", NULL,
			      err);
	if (!rc)
		rc = sql_rows(st, SQL_AUTO, where, NULL, "sharing the checkpoint history", &r,
			      err);
	if (!rc) {
		*next = r.rows ? sql_int(&r, 0, 0) : 0;
		*last = r.rows ? sql_int(&r, 0, 1) : 0;
		*from = r.rows ? (int)sql_int(&r, 0, 2) : *from;
	}
	store_rows_release(&r);
	if (!rc && *next < *last) {
		sql_arg_int(&a, *next);
		sql_arg_int(&a, *next + batch);
		rc = collapse_exec_all(st, collapse_steps,
				       sizeof(collapse_steps) / sizeof(*collapse_steps), &a, err);
		*next += batch;
	}
	if (rc) {
		st->ops->txn_rollback(st);
		return rc;
	}
	return st->ops->txn_commit(st, err);
}

/*
 * SMRITI_TEST_COLLAPSE_BATCH sets the batch size, and
 * SMRITI_TEST_COLLAPSE_KILL=N makes the process kill itself (SIGKILL, as
 * kill -9 would) after N batches: how tests/js/history.test.mjs
 * interrupts the migration at a known point.
 */
static int64_t env_int(const char *name, int64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoll(v, NULL, 10) : dflt;
}

enum smr_rc rows_history_collapse(struct store *st, int *from, struct smr_err *err)
{
	int64_t batch = env_int("SMRITI_TEST_COLLAPSE_BATCH", 2000), kill_after =
		env_int("SMRITI_TEST_COLLAPSE_KILL", -1), next = 0, last = 0, done = 0;
	enum smr_rc rc;

	if (batch < 1)
		batch = 1;
	do {
		rc = collapse_batch(st, batch, &next, &last, from, err);
		if (!rc && last > 0)
			fprintf(stderr, "smriti: sharing checkpoint history: row %lld of %lld\n",
				(long long)(next < last ? next : last), (long long)last);
		if (!rc && ++done == kill_after)
			raise(SIGKILL);
	} while (!rc && next < last);
	return rc;
}

/* ---- which live Spaces hold a checkpoint (search) ---- */

/*
 * The Spaces that hold a checkpoint: its origin, and those whose tips
 * (store/sql.h) reach it, found going down from its chain through the
 * entries into other chains at or after it: each step (chain, fr) is a
 * chain from row fr up, and a tip on that chain at fr or above reaches
 * it.  The origin first, then by name.  LIVE is the condition on repos r
 * that keeps a Space.
 */
#define HOLDERS(LIVE) \
	"WITH RECURSIVE h(id, repo, chain) AS (SELECT id, repo_id, chain FROM commits" \
	" WHERE commit_hash = $1)," \
	" d(chain, fr) AS (SELECT chain, id FROM h UNION SELECT e.to_chain, e.to_id" \
	" FROM d JOIN chain_entries e ON e.from_chain = d.chain AND e.from_id >= d.fr)" \
	" SELECT r.id, r.name FROM repos r WHERE " LIVE \
	" AND (r.id IN (SELECT repo FROM h) OR r.id IN (SELECT t.repo_id FROM d" \
	" JOIN reach_tips t ON t.chain = d.chain AND t.top_id >= d.fr))" \
	" ORDER BY CASE WHEN r.id IN (SELECT repo FROM h) THEN 0 ELSE 1 END, r.name"

enum smr_rc rows_holders(struct store *st, const char *hash, int live, char ***ids,
			 char ***names, size_t *n, struct smr_err *err)
{
	static const char live_only[] = HOLDERS("r.deleted_at IS NULL");
	static const char all[] = HOLDERS("1 = 1");
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	*ids = NULL;
	if (names)
		*names = NULL;
	*n = 0;
	sql_arg(&a, hash);
	rc = sql_rows(st, SQL_AUTO, live ? live_only : all, &a,
		      "finding the spaces that hold a checkpoint", &r, err);
	if (!rc) {
		*ids = take_column(&r, 0);
		if (names)
			*names = take_column(&r, 1);
		*n = r.rows;
	}
	store_rows_release(&r);
	return rc;
}

enum smr_rc rows_reach_into(struct store *st, const struct reach_ask *asks, size_t n_asks,
			    struct reach_into **out, size_t *n, struct smr_err *err)
{
	json_t *v = json_array();
	struct store_rows r;
	enum smr_rc rc;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < n_asks; i++)
		json_array_append_new(v, json_pack("[IIs]", (json_int_t)asks[i].chain,
						   (json_int_t)asks[i].from, asks[i].origin));
	rc = json_param_rows(st, st->ops->reach_into_sql, "reach_into_sql", v,
			     "finding the spaces that hold a checkpoint", &r, err);
	if (!rc) {
		*out = xcalloc(r.rows + 1, sizeof(**out));
		for (size_t i = 0; i < r.rows; i++)
			(*out)[i] = (struct reach_into){ sql_int(&r, i, 0), sql_take(&r, i, 1),
							 sql_take(&r, i, 2), sql_int(&r, i, 3) == 0,
							 sql_int(&r, i, 4) };
		*n = r.rows;
	}
	store_rows_release(&r);
	return rc;
}

enum smr_rc rows_any_deleted(struct store *st, int *any, struct smr_err *err)
{
	struct sql_args none = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc = sql_rows(st, SQL_AUTO, SQL_ANY_DELETED, &none, "finding deleted spaces",
				  &r, err);

	*any = !rc && r.rows == 1 && sql_int(&r, 0, 0);
	store_rows_release(&r);
	return rc;
}

enum smr_rc rows_live_of(struct store *st, const char *const *ids, size_t n, size_t *n_live,
			 struct smr_err *err)
{
	json_t *v = json_array();
	struct store_rows r;
	enum smr_rc rc;

	*n_live = 0;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(v, json_string(ids[i]));
	rc = json_param_rows(st, st->ops->live_of_sql, "live_of_sql", v, "finding live spaces",
			     &r, err);
	if (!rc && r.rows == 1)
		*n_live = (size_t)sql_int(&r, 0, 0);
	store_rows_release(&r);
	return rc;
}

void reach_into_free(struct reach_into *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].name);
	}
	free(v);
}

/* ---- the history view's rows (ops_graph.c walks them a page at a time) ---- */

#define GRAPH_SELECT \
	"SELECT c.id, c.parent_commit_id, c.merge_parent_commit_id, c.commit_hash," \
	" p.commit_hash, m.commit_hash, c.title, c.author, c.created_at," \
	" CAST(c.metadata_ AS TEXT)"
#define GRAPH_PARENTS \
	" LEFT JOIN commits p ON p.id = c.parent_commit_id" \
	" LEFT JOIN commits m ON m.id = c.merge_parent_commit_id"
#define GRAPH_COLS GRAPH_SELECT " FROM commits c" GRAPH_PARENTS

static void read_graph_row(struct store_rows *r, size_t i, void *elem)
{
	struct graph_row *g = elem;
	char *meta = sql_take(r, i, 9);
	json_t *m = meta ? json_loads(meta, 0, NULL) : NULL;
	const char *rf = json_string_value(json_object_get(m, "restored_from"));

	g->id = sql_int(r, i, 0);
	g->parent_id = sql_int_or_neg(r, i, 1);
	g->merge_id = sql_int_or_neg(r, i, 2);
	g->hash = sql_take(r, i, 3);
	g->parent = sql_take(r, i, 4);
	g->merge_parent = sql_take(r, i, 5);
	g->title = sql_take(r, i, 6);
	g->author = sql_take(r, i, 7);
	g->created_at = sql_take(r, i, 8);
	g->restored_from = rf ? xstrdup(rf) : NULL;
	json_decref(m);
	free(meta);
}

enum smr_rc store_graph_row(struct store *st, int64_t id, const char *hash,
			    struct graph_row *out, struct smr_err *err)
{
	static const char by_id[] = GRAPH_COLS " WHERE c.id = $1";
	static const char by_hash[] = GRAPH_COLS " WHERE c.commit_hash = $1";
	char num[24];
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	snprintf(num, sizeof(num), "%lld", (long long)id);
	rc = one_by(st, hash ? by_hash : by_id, hash ? hash : num, "reading the history",
		    read_graph_row, out, err);
	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, rc, "no checkpoint %s", hash ? hash : num);
	return rc;
}

enum smr_rc store_graph_run(struct store *st, int64_t id, size_t limit,
			    struct graph_row **out, size_t *n, struct smr_err *err)
{
	/*
	 * The first-parent run from id down, as a walk of a line reads it;
	 * joined from the run, for PostgreSQL planned "IN (SELECT ...)" as a
	 * hash join over every row (100 ms at a million).
	 */
	static const char sql[] = "WITH RECURSIVE run(id, k) AS ("
		" SELECT CAST($1 AS BIGINT), 1"
		" UNION ALL SELECT c.parent_commit_id, run.k + 1 FROM run"
		" JOIN commits c ON c.id = run.id"
		" WHERE c.parent_commit_id IS NOT NULL AND run.k < CAST($2 AS BIGINT)) "
		GRAPH_SELECT " FROM run JOIN commits c ON c.id = run.id" GRAPH_PARENTS;
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg_int(&a, id);
	sql_arg_int(&a, (int64_t)(limit ? limit : 1));
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading the history", &r, err);
	if (!rc)
		read_all(&r, sizeof(**out), read_graph_row, (void **)out, n);
	store_rows_release(&r);
	return rc;
}

void graph_row_release(struct graph_row *g)
{
	free(g->hash);
	free(g->parent);
	free(g->merge_parent);
	free(g->title);
	free(g->author);
	free(g->created_at);
	free(g->restored_from);
	memset(g, 0, sizeof(*g));
}

enum smr_rc store_space_forks(struct store *st, char ***pairs, size_t *n, struct smr_err *err)
{
	/*
	 * A Space's first reflog entry is its fork's, when it was forked
	 * (store.c fork_rows): the forks' entries by their index (migration
	 * 18), each kept when it is its Space's first.
	 */
	static const char sql[] =
		"SELECT g.repo_id, k.repo_id FROM reflog g"
		" JOIN commits k ON k.commit_hash = g.new_hash WHERE g.action = 'fork'"
		" AND g.id = (SELECT MIN(f.id) FROM reflog f WHERE f.repo_id = g.repo_id)";
	struct store_rows r;
	enum smr_rc rc = sql_rows(st, SQL_AUTO, sql, NULL, "reading the forks", &r, err);

	*pairs = NULL;
	*n = 0;
	if (!rc) {
		*pairs = xcalloc(2 * r.rows + 1, sizeof(**pairs));
		for (size_t i = 0; i < r.rows; i++) {
			(*pairs)[2 * i] = sql_take(&r, i, 0);
			(*pairs)[2 * i + 1] = sql_take(&r, i, 1);
		}
		*n = r.rows;
	}
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_checkpoint_chains(struct store *st, const char *space_id, const char *hash,
				    struct history_chains *out, struct smr_err *err)
{
	/*
	 * From the checkpoint's row, each chain reached at a row: the chain's
	 * exits at or below it (its first row, to that row's parent; a merge,
	 * to its second parent: index commits_chain_exits) lead to the next.
	 * Row 0 of the answer is the checkpoint's own, then one a chain.
	 */
	static const char sql[] =
		"WITH RECURSIVE hc_start(chain, id) AS (SELECT chain, id FROM commits"
		"  WHERE id = " SQL_REACH("$1", "$2") "),"
		" hc(chain, top) AS (SELECT chain, id FROM hc_start"
		"  UNION SELECT p.chain, p.id FROM hc a JOIN commits m ON m.chain = a.chain"
		"  AND m.id <= a.top AND (m.merge_parent_commit_id IS NOT NULL OR m.id = m.chain)"
		"  JOIN commits p ON p.id IN (m.merge_parent_commit_id,"
		"  CASE WHEN m.id = m.chain THEN m.parent_commit_id END))"
		" SELECT 0, chain, id FROM hc_start"
		" UNION ALL SELECT 1, chain, MAX(top) FROM hc GROUP BY chain ORDER BY 1, 2";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	sql_arg(&a, space_id);
	sql_arg(&a, hash);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading a history's chains", &r, err);
	if (!rc && (!r.rows || sql_int(&r, 0, 0) != 0))
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	if (!rc) {
		out->chain = sql_int(&r, 0, 1);
		out->id = sql_int(&r, 0, 2);
		out->v = xcalloc(r.rows, sizeof(*out->v));
		for (size_t i = 1; i < r.rows; i++)
			out->v[out->n++] = (struct chain_top){ sql_int(&r, i, 1), sql_int(&r, i, 2) };
	}
	store_rows_release(&r);
	return rc;
}

void history_chains_release(struct history_chains *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

enum smr_rc store_chain_count(struct store *st, int64_t chain, int64_t lo, int64_t hi,
			      int64_t *n, struct smr_err *err)
{
	/* a chain's rows are ids from the chain's own up: the range read is that much, no more */
	static const char sql[] =
		"SELECT COUNT(*) FROM commits WHERE chain = CAST($1 AS BIGINT)"
		" AND id > CAST($2 AS BIGINT) AND id <= CAST($3 AS BIGINT)";
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	sql_arg_int(&a, chain);
	sql_arg_int(&a, lo > chain - 1 ? lo : chain - 1);
	sql_arg_int(&a, hi);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "counting a chain's rows", &r, err);
	*n = !rc && r.rows ? sql_int(&r, 0, 0) : 0;
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_row_hashes(struct store *st, const int64_t *ids, size_t n, char ***hashes,
			     char ***times, struct smr_err *err)
{
#define ROW_ARG(k) "CAST($" #k " AS BIGINT)"
	/* one text for any n: the arguments past n are NULL, which match no row */
	static const char sql[] =
		"SELECT id, commit_hash, created_at FROM commits WHERE id IN (" ROW_ARG(1) ","
		ROW_ARG(2) "," ROW_ARG(3) "," ROW_ARG(4) "," ROW_ARG(5) "," ROW_ARG(6) ","
		ROW_ARG(7) "," ROW_ARG(8) "," ROW_ARG(9) "," ROW_ARG(10) "," ROW_ARG(11) ","
		ROW_ARG(12) "," ROW_ARG(13) "," ROW_ARG(14) "," ROW_ARG(15) "," ROW_ARG(16) ")";
#undef ROW_ARG
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	if (n > STORE_ROWS_AT_ONCE)
		BUG("store_row_hashes of %zu rows: at most %d", n, STORE_ROWS_AT_ONCE);
	*hashes = xcalloc(n + 1, sizeof(**hashes));
	*times = xcalloc(n + 1, sizeof(**times));
	for (size_t i = 0; i < STORE_ROWS_AT_ONCE; i++)
		if (i < n)
			sql_arg_int(&a, ids[i]);
		else
			sql_arg(&a, NULL);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading checkpoints' hashes", &r, err);
	for (size_t k = 0; !rc && k < r.rows; k++)
		for (size_t i = 0; i < n; i++)
			if (ids[i] == sql_int(&r, k, 0) && !(*hashes)[i]) {
				(*hashes)[i] = sql_take(&r, k, 1);
				(*times)[i] = sql_take(&r, k, 2);
				break;
			}
	store_rows_release(&r);
	return rc;
}

enum smr_rc store_spaces_with_fork_entries(struct store *st, char ***ids, size_t *n,
					   struct smr_err *err)
{
	/*
	 * The forks' entries by their index (migration 18): a few among every
	 * write's.  Not DISTINCT: with it SQLite reads the whole reflog by
	 * another index.
	 */
	static const char sql[] = "SELECT repo_id FROM reflog WHERE action = 'fork'";
	struct store_rows r;
	enum smr_rc rc = sql_rows(st, SQL_AUTO, sql, NULL, "finding the forked spaces", &r, err);

	*ids = rc ? NULL : take_column(&r, 0);
	*n = rc ? 0 : r.rows;
	store_rows_release(&r);
	return rc;
}

/* ---- chains of the rows written before schema migration 15 (sql.h) ---- */

enum smr_rc rows_reach_rebuild(struct store *st, struct smr_err *err)
{
	static const char *const steps[] = {
		"DELETE FROM reach_tips", SQL_TIPS_FILL,
		"DELETE FROM chain_entries", SQL_CHAIN_ENTRIES_FILL,
	};
	enum smr_rc rc = SMR_OK;

	for (size_t i = 0; !rc && i < sizeof(steps) / sizeof(*steps); i++)
		rc = sql_exec(st, SQL_AUTO, steps[i], NULL, "folding what each Space reaches",
			      NULL, err);
	return rc;
}

/*
 * One batch, rows ($1, $2]: each row starts a chain (its own id) unless it
 * continues its first parent's, being that parent's first child of the
 * same origin, as the trigger decides for a new row.  Those that continue
 * a parent before the batch take its chain; the rest follow from the rows
 * that start one, child by child, in one walk.
 */
#define CHAIN_CONTINUES(C, P) \
	" NOT EXISTS (SELECT 1 FROM commits z WHERE z.parent_commit_id = " P ".id" \
	" AND z.repo_id = " P ".repo_id AND z.id < " C ".id)"
static const char chain_step[] =
	"WITH RECURSIVE w(id, repo, chain) AS ("
	" SELECT c.id, c.repo_id, CASE WHEN p.id IS NOT NULL AND p.repo_id = c.repo_id AND"
	CHAIN_CONTINUES("c", "p") " THEN COALESCE(p.chain, c.id) ELSE c.id END"
	" FROM commits c LEFT JOIN commits p ON p.id = c.parent_commit_id"
	" WHERE c.id > $1 AND c.id <= $2 AND (p.id IS NULL OR p.id <= $1"
	" OR p.repo_id <> c.repo_id OR NOT" CHAIN_CONTINUES("c", "p") ")"
	" UNION ALL SELECT y.id, y.repo_id, w.chain FROM w JOIN commits y"
	" ON y.parent_commit_id = w.id AND y.repo_id = w.repo"
	" WHERE y.id <= $2 AND NOT EXISTS (SELECT 1 FROM commits z"
	" WHERE z.parent_commit_id = w.id AND z.repo_id = w.repo AND z.id < y.id))"
	" UPDATE commits SET chain = w.chain FROM w"
	" WHERE w.id = commits.id AND commits.id > $1 AND commits.id <= $2"
	" AND commits.chain IS NULL";

/*
 * One batch in one transaction, which locks the cursor row first (another
 * process converting too queues there); *left 0 once none is left.
 */
static enum smr_rc chain_batch(struct store *st, int64_t batch, int64_t *next, int64_t *last,
			       int *left, struct smr_err *err)
{
	static const char lock[] = "UPDATE chain_migration SET next_id = next_id";
	static const char where[] = "SELECT next_id, last_id FROM chain_migration";
	static const char move[] = "UPDATE chain_migration SET next_id = $1";
	static const char done[] = "DELETE FROM chain_migration";
	struct sql_args a = SQL_ARGS_INIT, m = SQL_ARGS_INIT;
	struct store_rows r = { 0 };
	enum smr_rc rc = st->ops->txn_begin(st, err);
	int64_t to;

	if (!rc)
		rc = sql_exec(st, SQL_AUTO, lock, NULL, "finding chains", NULL, err);
	if (!rc)
		rc = sql_rows(st, SQL_AUTO, where, NULL, "finding chains", &r, err);
	*left = !rc && r.rows;
	if (*left) {
		*next = sql_int(&r, 0, 0);
		*last = sql_int(&r, 0, 1);
	}
	store_rows_release(&r);
	to = *left && *next + batch < *last ? *next + batch : *last;
	if (*left && *next < *last) {
		sql_arg_int(&a, *next);
		sql_arg_int(&a, to);
		sql_arg_int(&m, to);
		rc = sql_exec(st, SQL_AUTO, chain_step, &a, "finding chains", NULL, err);
		if (!rc)
			rc = sql_exec(st, SQL_AUTO, move, &m, "finding chains", NULL, err);
		*next = to;
	} else if (*left) {
		rc = sql_exec(st, SQL_AUTO, done, NULL, "finding chains", NULL, err);
		if (!rc)   /* the triggers skipped rows that had no chain yet */
			rc = rows_reach_rebuild(st, err);
		*left = 0;
	}
	if (rc) {
		st->ops->txn_rollback(st);
		return rc;
	}
	return st->ops->txn_commit(st, err);
}

/*
 * SMRITI_TEST_CHAIN_BATCH sets the batch size, and SMRITI_TEST_CHAIN_KILL=N
 * makes the process kill itself (SIGKILL, as kill -9 would) after N
 * batches: how a test interrupts the conversion at a known point.
 */
enum smr_rc rows_chain_backfill(struct store *st, struct smr_err *err)
{
	static const char any[] = "SELECT 1 FROM chain_migration";
	int64_t batch = env_int("SMRITI_TEST_CHAIN_BATCH", 5000), next = 0, last = 0,
		kill_after = env_int("SMRITI_TEST_CHAIN_KILL", -1), done = 0;
	struct store_rows r = { 0 };
	int left;
	enum smr_rc rc = sql_rows(st, SQL_AUTO, any, NULL, "finding chains", &r, err);

	left = !rc && r.rows;
	store_rows_release(&r);
	if (batch < 1)
		batch = 1;
	while (!rc && left) {
		rc = chain_batch(st, batch, &next, &last, &left, err);
		if (!rc && left)
			fprintf(stderr, "smriti: finding the chains of the history: row %lld of %lld\n",
				(long long)next, (long long)last);
		if (!rc && ++done == kill_after)
			raise(SIGKILL);
	}
	return rc;
}
