/*
 * sql.c -- running one SQL text on either engine (sql.h): arguments as
 * text in, rows as text out, through the backend's sql_text.
 */
#include "store/sql.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void store_rows_release(struct store_rows *r)
{
	for (size_t i = 0; r->cells && i < r->rows * r->cols; i++)
		free(r->cells[i]);
	free(r->cells);
	memset(r, 0, sizeof(*r));
}

void sql_arg(struct sql_args *a, const char *v)
{
	if (a->n == SQL_MAX_ARGS)
		BUG("a statement with more than %d arguments: raise SQL_MAX_ARGS", SQL_MAX_ARGS);
	a->v[a->n++] = v;
}

void sql_arg_int(struct sql_args *a, int64_t v)
{
	if (a->n == SQL_MAX_ARGS)
		BUG("a statement with more than %d arguments: raise SQL_MAX_ARGS", SQL_MAX_ARGS);
	snprintf(a->num[a->n], sizeof(a->num[0]), "%" PRId64, v);
	sql_arg(a, a->num[a->n]);
}

void sql_arg_int_or_null(struct sql_args *a, int64_t v)
{
	if (v < 0)
		sql_arg(a, NULL);
	else
		sql_arg_int(a, v);
}

enum smr_rc sql_rows(struct store *st, enum sql_mode mode, const char *sql,
		     const struct sql_args *a, const char *what, struct store_rows *out,
		     struct smr_err *err)
{
	return st->ops->sql_text(st, mode, sql, a ? a->v : NULL, a ? a->n : 0, what, out, err);
}

enum smr_rc sql_exec(struct store *st, enum sql_mode mode, const char *sql,
		     const struct sql_args *a, const char *what, size_t *changes,
		     struct smr_err *err)
{
	struct store_rows r;
	enum smr_rc rc = sql_rows(st, mode, sql, a, what, &r, err);

	if (!rc && changes)
		*changes = r.changes;
	store_rows_release(&r);
	return rc;
}

const char *sql_auth_bump(const struct store *st)
{
	static const char sql[] = "UPDATE auth_state SET epoch = epoch + 1 WHERE id = 1";

	return st->ops->auth_bump_sql ? st->ops->auth_bump_sql : sql;
}

char *sql_take(struct store_rows *r, size_t row, size_t col)
{
	char *s = r->cells[row * r->cols + col];

	r->cells[row * r->cols + col] = NULL;
	return s;
}

int64_t sql_int(const struct store_rows *r, size_t row, size_t col)
{
	const char *s = r->cells[row * r->cols + col];

	return s ? strtoll(s, NULL, 10) : 0;
}

int64_t sql_int_or_neg(const struct store_rows *r, size_t row, size_t col)
{
	return r->cells[row * r->cols + col] ? sql_int(r, row, col) : -1;
}
