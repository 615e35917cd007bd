/*
 * rows.c -- the plain rows of store.h, in one SQL text for both engines
 * (store/sql.h): each is one statement on its own, with no rule to keep
 * between rows (no compare-and-swap, no numbering), so nothing in it
 * differs between SQLite and PostgreSQL.  What does differ stays in the
 * backends' methods (internal.h).
 */
#include "store/sql.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	struct sql_args a = SQL_ARGS_INIT;
	struct store_rows r;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	sql_arg(&a, id);
	rc = sql_rows(st, SQL_AUTO, sql, &a, "reading a draft job", &r, err);
	if (!rc && r.rows == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no draft job '%s'", id);
	if (!rc)
		read_job(&r, 0, out);
	store_rows_release(&r);
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
