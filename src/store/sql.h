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
 *    by its address;
 *  - UPDATE ... FROM is portable (SQLite since 3.33; Debian 12 has 3.40);
 *  - a list of values is one parameter, a JSON array, whose rows each
 *    engine spells its own way (SQL_ASKS_SQLITE, SQL_ASKS_PG): such a
 *    statement is a backend's store_ops text (reach_into_sql).
 * What else SQLite and PostgreSQL spell apart (row locks, JSONB,
 * full-text search) stays in a backend's own methods.
 */
#ifndef SMRITI_STORE_SQL_H
#define SMRITI_STORE_SQL_H

#include "store/store_int.h"

#define SQL_MAX_ARGS 16

/*
 * The shared history (docs/storage.md): a checkpoint is one row of commits
 * whatever the number of Spaces that hold it; a Space is its ref and its
 * reflog.  Space S reaches checkpoint C when S wrote C (commits.repo_id,
 * its origin) or C is an ancestor-or-self of S's HEAD or of a checkpoint
 * S's reflog names.  Parents are inserted before their children, so row ids
 * are a topological numbering and serve as generation numbers: a walk
 * from the roots down to C never needs a row below C's id.
 *
 * The walk goes by chains (commits.chain, schema migration 15): a chain is
 * a path of first-parent links, its rows' ids growing from its first row
 * (whose id names it), so a row reaches every row of its own chain with a
 * smaller id, and leaves its chain only at the chain's first row (to that
 * row's parent) or at a merge (to the merge's second parent).  The walk
 * visits only those exits (commits_chain_exits), between C's id and the
 * row's: as many steps as forks and merges lie between, not checkpoints.
 *
 * A Space's roots (its ref and every hash its reflog names) are kept
 * folded by chain (schema migration 17): reach_tips holds, for each Space
 * and each chain its roots touch, the highest row id among them, since a
 * root reaches every row of its chain below it.  A walk starts from those
 * few rows, not from every entry of a reflog that grows with each write.
 * The refs' triggers keep them as a ref takes each value (a move's reflog
 * row names the ref's old value and its new one, both taken by then), and
 * an import's reflog rows, which name checkpoints no ref took here, add
 * theirs (rows_reach_named, SQL_REACH_NAMED); SQL_TIPS_FILL makes them
 * again from the refs and the reflog (rows_reach_rebuild: after the
 * migration, the chain backfill, and a gc that removed rows), and gives
 * the same rows (test_store_conformance.c).
 *
 * The other way down: chain_entries holds every place a walk enters a
 * chain from another (a chain's first row from its parent, a merge from
 * its second parent), keyed by where it leaves: the Spaces that hold a
 * checkpoint are found going down from its chain through those entries to
 * the tips, as many steps as forks and merges lie below it
 * (SQL_CHAIN_ENTRIES_FILL makes them again).
 *
 * SQL_REACH(S, H) is a scalar expression: the row id of the checkpoint of
 * hash H when Space S reaches it, else NULL.  S and H are the parameters
 * in the engine's spelling ("?1", "$1::text").  The origin test comes
 * first, so the walk runs only for a checkpoint another Space wrote.
 */
#define SQL_REACH_ROOTS(S) \
	"SELECT top_id FROM reach_tips WHERE repo_id = " S
#define SQL_REACH(S, H) \
	"(WITH RECURSIVE rch_t(id, repo, chain) AS (SELECT id, repo_id, chain FROM commits" \
	" WHERE commit_hash = " H ")," \
	" rch_root(id) AS (" SQL_REACH_ROOTS(S) ")," \
	" rch_anc(id, chain) AS (SELECT k.id, k.chain FROM rch_root r" \
	" JOIN commits k ON k.id = r.id JOIN rch_t ON k.id >= rch_t.id WHERE rch_t.repo <> " S \
	" UNION SELECT p.id, p.chain FROM rch_anc a JOIN rch_t ON a.chain <> rch_t.chain" \
	" JOIN commits m ON m.chain = a.chain AND m.id <= a.id AND m.id >= rch_t.id" \
	" AND (m.merge_parent_commit_id IS NOT NULL OR m.id = m.chain)" \
	" JOIN commits p ON p.id IN (m.merge_parent_commit_id," \
	" CASE WHEN m.id = m.chain THEN m.parent_commit_id END) AND p.id >= rch_t.id)" \
	" SELECT id FROM rch_t WHERE repo = " S " OR EXISTS (SELECT 1 FROM rch_anc a" \
	" WHERE a.chain = rch_t.chain AND a.id >= rch_t.id))"
#define SQL_TIPS_FILL "INSERT INTO reach_tips (chain, repo_id, top_id) " SQL_TIPS_SELECT
#define SQL_TIPS_SELECT \
	"SELECT k.chain, x.repo_id, MAX(k.id) FROM" \
	" (SELECT f.repo_id, f.commit_id AS id FROM refs f WHERE f.commit_id IS NOT NULL" \
	" UNION SELECT g.repo_id, c.id FROM reflog g JOIN commits c ON c.commit_hash = g.new_hash" \
	" UNION SELECT g.repo_id, c.id FROM reflog g JOIN commits c ON c.commit_hash = g.old_hash) x" \
	" JOIN commits k ON k.id = x.id WHERE k.chain IS NOT NULL GROUP BY k.chain, x.repo_id"
#define SQL_CHAIN_ENTRIES_FILL \
	"INSERT INTO chain_entries (from_chain, from_id, to_chain, to_id)" \
	" SELECT p.chain, p.id, k.chain, k.id FROM commits k JOIN commits p" \
	" ON p.id = k.parent_commit_id WHERE k.id = k.chain AND p.chain IS NOT NULL" \
	" UNION SELECT p.chain, p.id, k.chain, k.id FROM commits k JOIN commits p" \
	" ON p.id = k.merge_parent_commit_id WHERE k.chain IS NOT NULL AND p.chain IS NOT NULL"
#define SQL_REACH_REBUILD \
	"DELETE FROM reach_tips; " SQL_TIPS_FILL "; DELETE FROM chain_entries; " \
	SQL_CHAIN_ENTRIES_FILL ";"

/*
 * Space S reaches the checkpoint of hash H (none: nothing) from now on,
 * looked up by = so that the unique index serves it whatever a cached plan
 * thought of the table's size.  SQL_REFLOG_REACH_ONE: migration 19's
 * reflog trigger (dropped by 20) for one of the row's hashes.
 */
#define SQL_REACH_NAMED(S, H) \
	"INSERT INTO reach_tips (chain, repo_id, top_id) SELECT k.chain, " S ", k.id" \
	" FROM commits k WHERE k.commit_hash = " H " AND k.chain IS NOT NULL" \
	" ON CONFLICT (chain, repo_id) DO UPDATE" \
	" SET top_id = excluded.top_id WHERE excluded.top_id > reach_tips.top_id"
#define SQL_REFLOG_REACH_ONE(col) "  " SQL_REACH_NAMED("NEW.repo_id", "NEW." col) ";"

/*
 * The live Spaces holding rows of many chains, in one statement (a
 * search's candidates lie on hundreds of chains; one round trip each cost
 * PostgreSQL seconds).  ASKS is the engine's spelling of the rows (chain,
 * fr, origin) of parameter $1, a JSON array of [chain, from, origin]
 * triples; a chain's rows share one origin (commits.chain).  Each result
 * row: the chain asked, a Space id, its name, its kind (0: the chain's
 * origin, live; 1: a Space reaching the chain at row fr or above) and, for
 * kind 1, the highest row of the chain it reaches (where its walk left the
 * chain, or its tip when on it): it holds row r of the chain at or above
 * fr when that is >= r.  By chain, then kind, then name.  A chain that no
 * other Space reaches at fr or above (no other Space's tip on it there, no
 * chain branching from it there), as most of a search's are, is not walked:
 * it gets its origin's row alone, which is all that holds it.
 */
#define SQL_REACH_INTO(ASKS) \
	"WITH RECURSIVE q(chain, fr, origin) AS (" ASKS ")," \
	" d(start, chain, fr, x) AS (SELECT chain, chain, fr, CAST(NULL AS BIGINT) FROM q" \
	" WHERE EXISTS (SELECT 1 FROM chain_entries e" \
	"  WHERE e.from_chain = q.chain AND e.from_id >= q.fr)" \
	" OR EXISTS (SELECT 1 FROM reach_tips t" \
	"  WHERE t.chain = q.chain AND t.top_id >= q.fr AND t.repo_id <> q.origin)" \
	" UNION SELECT d.start, e.to_chain, e.to_id, COALESCE(d.x, e.from_id)" \
	" FROM d JOIN chain_entries e ON e.from_chain = d.chain AND e.from_id >= d.fr)" \
	" SELECT d.start, r.id, r.name, 1, MAX(COALESCE(d.x, t.top_id)) FROM d" \
	" JOIN reach_tips t ON t.chain = d.chain AND t.top_id >= d.fr" \
	" JOIN repos r ON r.id = t.repo_id WHERE r.deleted_at IS NULL" \
	" GROUP BY d.start, r.id, r.name" \
	" UNION ALL SELECT q.chain, r.id, r.name, 0, 0 FROM q JOIN repos r ON r.id = q.origin" \
	" WHERE r.deleted_at IS NULL ORDER BY 1, 4, 3"
/*
 * The live Spaces whose HEAD is one of the hashes HASHES spells (the rows
 * of parameter $1, a JSON array of hashes), by name: a history page's
 * HEAD labels, where listing every Space cost 40-80 ms at 10,000 of them.
 * The columns are rows.c's of a Space.
 */
#define SQL_HEADS_AT(HASHES) \
	"SELECT r.id, r.name, r.description, r.created_at, c.commit_hash, r.deleted_at" \
	" FROM commits c JOIN refs f ON f.commit_id = c.id AND f.name = 'main'" \
	" JOIN repos r ON r.id = f.repo_id" \
	" WHERE c.commit_hash IN (" HASHES ") AND r.deleted_at IS NULL ORDER BY r.name"
/*
 * How many of the Spaces IDS spells (the rows of parameter $1, a JSON
 * array of distinct ids) are live: a search's test that its candidates'
 * origins still hold them, once for all of them.
 */
#define SQL_LIVE_OF(IDS) "SELECT COUNT(*) FROM repos WHERE deleted_at IS NULL AND id IN (" IDS ")"
/* Whether any Space is deleted (repos_deleted): when none is, every Space is live. */
#define SQL_ANY_DELETED \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM repos WHERE deleted_at IS NOT NULL) THEN 1 ELSE 0 END"
#define SQL_HASHES_SQLITE "SELECT value FROM json_each($1)"
#define SQL_HASHES_PG "SELECT jsonb_array_elements_text($1::jsonb)"
/* SQLite's and PostgreSQL's spellings of SQL_REACH_INTO's ASKS */
#define SQL_ASKS_SQLITE \
	"SELECT CAST(json_extract(value, '$[0]') AS INTEGER)," \
	" CAST(json_extract(value, '$[1]') AS INTEGER), json_extract(value, '$[2]')" \
	" FROM json_each($1)"
#define SQL_ASKS_PG \
	"SELECT (a->>0)::bigint, (a->>1)::bigint, a->>2 FROM jsonb_array_elements($1::jsonb) a"
/*
 * Garbage collection of the Spaces deleted at or before $1 (NULL: all of
 * them).  SQL_GC_ADOPT: a checkpoint one of them wrote that a surviving
 * Space still reaches (from its ref, its reflog, or a checkpoint it
 * wrote) takes that Space as its origin; what is left with a pruned
 * origin then goes with its Space (ON DELETE CASCADE), and
 * SQL_GC_ORPHANS removes the search rows of what went.  The walk runs
 * only through checkpoints of pruned Spaces, from where the survivors
 * enter them.
 */
#define SQL_GC_GONE \
	"SELECT id FROM repos WHERE deleted_at IS NOT NULL" \
	" AND (CAST($1 AS TEXT) IS NULL OR deleted_at <= CAST($1 AS TEXT))"
#define SQL_GC_ENTRY(KEY) \
	" SELECT k.id, g.repo_id FROM reflog g JOIN commits k ON k.commit_hash = g." KEY \
	" WHERE g.repo_id NOT IN (SELECT id FROM gone) AND k.repo_id IN (SELECT id FROM gone)"
#define SQL_GC_ADOPT \
	"WITH RECURSIVE gone(id) AS (" SQL_GC_GONE ")," \
	" w(id, repo) AS (SELECT k.id, f.repo_id FROM refs f JOIN commits k ON k.id = f.commit_id" \
	" WHERE f.repo_id NOT IN (SELECT id FROM gone) AND k.repo_id IN (SELECT id FROM gone)" \
	" UNION" SQL_GC_ENTRY("new_hash") " UNION" SQL_GC_ENTRY("old_hash") \
	" UNION SELECT p.id, c.repo_id FROM commits c" \
	" JOIN commits p ON p.id IN (c.parent_commit_id, c.merge_parent_commit_id)" \
	" WHERE c.repo_id NOT IN (SELECT id FROM gone) AND p.repo_id IN (SELECT id FROM gone)" \
	" UNION SELECT p.id, w.repo FROM w JOIN commits c ON c.id = w.id" \
	" JOIN commits p ON p.id IN (c.parent_commit_id, c.merge_parent_commit_id)" \
	" WHERE p.repo_id IN (SELECT id FROM gone))" \
	" UPDATE commits SET repo_id = (SELECT MIN(w.repo) FROM w WHERE w.id = commits.id)" \
	" WHERE id IN (SELECT id FROM w)"
/*
 * Reflog expiry (git's gc.reflogExpire): an entry of reflog G written
 * before P expires, but never a Space's newest one (the move to its HEAD).
 * SQL_GC_UNREACHED($1: the prune date as SQL_GC_GONE, $2: the expiry
 * date) removes the checkpoints that only expiring entries reached: those
 * entries' checkpoints and their ancestors, but for what a surviving
 * Space still reaches from its ref, an entry that stays, a session's
 * mounted checkpoint or a hand-off note.  The origin rule does not hold a
 * checkpoint here: it stood for the reflog entry that named it.
 * SQL_GC_EXPIRE($1) then drops the entries.
 */
#define SQL_GC_EXPIRED(G, P) \
	" " G ".created_at < CAST(" P " AS TEXT) AND " G ".id <" \
	" (SELECT MAX(x.id) FROM reflog x WHERE x.repo_id = " G ".repo_id)"
#define SQL_GC_HASH_IDS(KEY, WHERE) \
	" SELECT k.id FROM reflog g JOIN commits k ON k.commit_hash = g." KEY " WHERE" WHERE
#define SQL_GC_LIVE_ENTRY \
	" g.repo_id IN (SELECT id FROM live) AND NOT (" SQL_GC_EXPIRED("g", "$2") ")"
#define SQL_GC_PARENTS(CTE) \
	" SELECT p.id FROM " CTE " a JOIN commits c ON c.id = a.id" \
	" JOIN commits p ON p.id IN (c.parent_commit_id, c.merge_parent_commit_id)"
#define SQL_GC_UNREACHED \
	"WITH RECURSIVE gone(id) AS (" SQL_GC_GONE ")," \
	" live(id) AS (SELECT id FROM repos WHERE id NOT IN (SELECT id FROM gone))," \
	" root(id) AS (SELECT commit_id FROM refs WHERE repo_id IN (SELECT id FROM live)" \
	" UNION" SQL_GC_HASH_IDS("new_hash", SQL_GC_LIVE_ENTRY) \
	" UNION" SQL_GC_HASH_IDS("old_hash", SQL_GC_LIVE_ENTRY) \
	" UNION SELECT k.id FROM sessions s JOIN commits k ON k.commit_hash = s.mounted_commit_hash" \
	" WHERE s.repo_id IN (SELECT id FROM live)" \
	" UNION SELECT k.id FROM handoffs h JOIN commits k ON k.commit_hash = h.commit_hash" \
	" WHERE h.repo_id IN (SELECT id FROM live))," \
	" keep(id) AS (SELECT id FROM root WHERE id IS NOT NULL UNION" SQL_GC_PARENTS("keep") ")," \
	" cand(id) AS (" SQL_GC_HASH_IDS("new_hash", SQL_GC_EXPIRED("g", "$2")) \
	" UNION" SQL_GC_HASH_IDS("old_hash", SQL_GC_EXPIRED("g", "$2")) \
	" UNION" SQL_GC_PARENTS("cand") " WHERE a.id NOT IN (SELECT id FROM keep))" \
	" DELETE FROM commits WHERE id IN (SELECT id FROM cand) AND id NOT IN (SELECT id FROM keep)"
#define SQL_GC_EXPIRE \
	"DELETE FROM reflog WHERE id IN (SELECT g.id FROM reflog g WHERE" \
	SQL_GC_EXPIRED("g", "$1") ")"
#define SQL_GC_ORPHANS \
	"DELETE FROM search_items WHERE (commit_id IS NULL AND turn_id IS NULL)" \
	" OR (commit_id IS NOT NULL AND NOT EXISTS" \
	" (SELECT 1 FROM commits c WHERE c.id = search_items.commit_id))" \
	" OR (turn_id IS NOT NULL AND NOT EXISTS" \
	" (SELECT 1 FROM turns t WHERE t.id = search_items.turn_id))"

/*
 * The CTE rch_all(id): every checkpoint Space S reaches (for a scan, in
 * whatever order; the statement that uses it orders by id).
 */
#define SQL_REACHED(S) \
	"WITH RECURSIVE rch_root(id) AS (" SQL_REACH_ROOTS(S) ")," \
	" rch_anc(id) AS (SELECT id FROM rch_root WHERE id IS NOT NULL" \
	" UNION SELECT p.id FROM rch_anc a JOIN commits c ON c.id = a.id" \
	" JOIN commits p ON p.id IN (c.parent_commit_id, c.merge_parent_commit_id))," \
	" rch_all(id) AS (SELECT id FROM rch_anc UNION SELECT id FROM commits" \
	" WHERE repo_id = " S ") "

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
