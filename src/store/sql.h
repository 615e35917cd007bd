/*
 * sql.h -- one SQL text for both engines, private to src/store: a plain
 * row (a draft job, a session read, a Space look-up, a user) is written
 * once, in SQL that SQLite and PostgreSQL both run as written, and goes
 * through the backends' one generic method (store_ops.sql_text).  A
 * backend keeps only what truly differs (transactions and pipelining,
 * group commit, search, the data version, bulk copy).
 *
 * Portable SQL, the one place its rules are written:
 *  - parameters are $1..$n (SQLite binds them by name, so their order in
 *    the text does not matter), passed as text; NULL is SQL NULL, and a
 *    number is its decimal text (sql_arg_int), which both engines convert
 *    where it meets an integer column;
 *  - where nothing says a parameter's type (`$2 IS NULL`, a LIMIT), the
 *    statement says it in standard SQL: CAST($2 AS TEXT), CAST($3 AS
 *    BIGINT), never PostgreSQL's $2::text;
 *  - every column comes back as text (sql_take, sql_int); a truth value is
 *    selected as CASE WHEN ... THEN 1 ELSE 0 END (PostgreSQL would say t/f);
 *  - a statement is a string constant: the backends keep its prepared form
 *    by its address.
 * What SQLite and PostgreSQL spell apart (UPDATE ... FROM, row locks,
 * JSONB, full-text search) stays in a backend's own methods.
 */
#ifndef SMRITI_STORE_SQL_H
#define SMRITI_STORE_SQL_H

#include "store/store_int.h"

#define SQL_MAX_ARGS 16

/* The arguments of one statement, $1 first; NULL is SQL NULL. */
struct sql_args {
	const char *v[SQL_MAX_ARGS];
	char num[SQL_MAX_ARGS][24];
	int n;
};

#define SQL_ARGS_INIT { .n = 0 }

void sql_arg(struct sql_args *a, const char *v);
void sql_arg_int(struct sql_args *a, int64_t v);
/* Negative values are SQL NULL (unknown token counts, no sequence number). */
void sql_arg_int_or_null(struct sql_args *a, int64_t v);

/*
 * Runs sql (a, NULL: no arguments) as mode says; *out gets its rows
 * (caller store_rows_release()s, also on failure).  what names the work in
 * error messages ("reading a session").  A unique-constraint violation is
 * SMR_ECONFLICT with no message: the caller names what exists.
 */
enum smr_rc sql_rows(struct store *st, enum sql_mode mode, const char *sql,
		     const struct sql_args *a, const char *what, struct store_rows *out,
		     struct smr_err *err);
/* sql_rows for a statement whose rows are not wanted; *changes (NULL: not wanted) gets how many it touched. */
enum smr_rc sql_exec(struct store *st, enum sql_mode mode, const char *sql,
		     const struct sql_args *a, const char *what, size_t *changes,
		     struct smr_err *err);

/*
 * The statement that moves the auth epoch (readers' caches of users,
 * tokens and grants are stale): the backend's own when it has one
 * (auth_bump_sql: PostgreSQL's also notifies), else the portable UPDATE.
 */
const char *sql_auth_bump(const struct store *st);

/* Takes cell (row, col) out of r: the caller frees it; NULL for SQL NULL. */
char *sql_take(struct store_rows *r, size_t row, size_t col);
/* Cell (row, col) as a number: 0 for SQL NULL (sql_int), or -1 (sql_int_or_neg). */
int64_t sql_int(const struct store_rows *r, size_t row, size_t col);
int64_t sql_int_or_neg(const struct store_rows *r, size_t row, size_t col);

#endif
