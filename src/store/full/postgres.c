/*
 * postgres.c -- the PostgreSQL backend of the store port, over libpq.
 *
 * One handle is one connection; the server opens one handle per worker
 * thread, so its workers' handles are its connection pool.  Every method is
 * one transaction, or a step of one that store.c runs, with the guarantees
 * of sqlite.c:
 *  - store.c's writes are pipelined (libpq pipeline mode): BEGIN, the row
 *    statements and COMMIT go out together and their results come back
 *    together, one round trip per write;
 *  - HEAD moves by compare-and-swap: head_lock locks the Space's ref row
 *    (SELECT ... FOR NO KEY UPDATE), then reads it and checks it against
 *    the expected HEAD in new statements; a failed check (FAIL_UNLESS)
 *    aborts the rest of the transaction in the server, so nothing is
 *    inserted or moved, and store.c words the conflict;
 *  - last_seq_lock locks the session row before the MAX + 1 of turn_insert,
 *    so sequence numbers are unique and gap-free under concurrent writers
 *    (in READ COMMITTED each statement after the lock sees every turn
 *    committed before it);
 *  - a method returns SMR_OK only after COMMIT succeeded with
 *    synchronous_commit on (forced back on if the server has it off).
 *
 * Statements are prepared once per connection (lazily, on first use) and run
 * by name with their values as parameters; values never enter SQL text.  A
 * wait for a reply polls briefly before it blocks (await_reply).
 *
 * Connection loss: a call that fails because the connection died returns
 * SMR_EUNAVAIL ("database connection lost; retry") and the handle reconnects
 * (PQreset, statements prepared again) at the start of the next call, so a
 * restart or failover of PostgreSQL needs no restart of Smriti.  A call
 * first reads what the server sent while the handle was idle
 * (PQconsumeInput, no round trip), so a hang-up is usually noticed before
 * anything is sent.  Work that cannot have happened yet is retried once on
 * a fresh connection: a read-only statement, and a write whose BEGIN the
 * server refused because it was going away (store.c retries it, see
 * txn_not_started).  A write whose COMMIT got no answer is reported as
 * possibly applied.
 */
#include "store/auth.h"
#include "domain/checkpoint.h"
#include "store/content.h"
#include "store/store_int.h"
#include "store/full/schema_postgres.h"
#include "store/sql.h"
#include "util/metrics.h"
#include "util/buf.h"
#include "util/strmap.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIGRATION_LOCK 0x736d72697469LL   /* pg_advisory_xact_lock key: "smriti" */
#define SCAN_BATCH 256                   /* rows per query of checkpoint_scan */
#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_PARAMS 16
#define GENERIC_MAX 96                   /* distinct sql_text statements (store/sql.h) */

/* ---- statements ---- */

enum stmt {
	Q_SPACE_INSERT,
	Q_SPACE_CHECK, Q_HEAD_LOCK, Q_HASH_BY_ID, Q_HEAD_READ, Q_HEAD_CHECK, Q_COMMIT_INSERT,
	Q_COMMIT_INSERT_ON_HEAD, Q_HEAD_MOVE, Q_HEAD_MOVE_TO, Q_HEAD_GET, Q_HEAD_BY_NAME,
	Q_HEAD_BY_ID,
	Q_COMMIT_NEW, Q_COMMIT_BY_HASH, Q_COMMIT_RESERVE, Q_COMMIT_INSERT_AS,
	Q_CKPT_IN_SPACE, Q_CKPT_ANY, Q_CKPT_ANY_MANY, Q_LOG, Q_SCAN_IDS, Q_SCAN, Q_SCAN_ALL_IDS,
	Q_SCAN_ALL,
	Q_COMMIT_ID,
	Q_COMMIT_LINKS, Q_COMMIT_ANCESTRY,
	Q_SESSION_LOCK, Q_LAST_SEQ, Q_SEQ_CHECK,
	Q_TURN_INSERT,
	Q_GC_REPOINT, Q_GC_SPACES, Q_GC_ORPHANS, Q_GC_UNREACHED, Q_GC_EXPIRE, Q_GC_LOCK,
	Q_GC_CHUNKS, Q_GC_ITEMS, Q_GC_TIPS_CLEAR, Q_GC_TIPS_FILL, Q_GC_ENTRIES_CLEAR,
	Q_GC_ENTRIES_FILL,
	Q_SEARCH_HAS, Q_SEARCH_INSERT, Q_SEARCH_INSERT_AT, Q_SEARCH_INSERT_AT_MANY,
	Q_SEARCH_INSERT_TURN, Q_SEARCH, Q_SEARCH_TURNS,
	Q_CHUNKS_INSERT, Q_ITEMS_CHECK, Q_CHUNKS_READ,
	Q_CONVERT_CURSOR, Q_CONVERT_IDS, Q_CONVERT_ROW, Q_CONVERT_SET, Q_CONVERT_MOVE,
	Q_CONVERT_COUNT,
	Q_COUNT
};

/* The auth epoch's move, with its notice to every server's watch (pg_watch.c). */
#define PG_AUTH_BUMP \
	"UPDATE auth_state SET epoch = epoch + 1 WHERE id = 1" \
	" RETURNING pg_notify('" STORE_AUTH_CHANNEL "', current_schema())"

/* A checkpoint's columns, read through Space S (its name is c->space). */
#define CKPT_COLS_AT(S) \
	"SELECT c.commit_hash, p.commit_hash, m.commit_hash, r.name, c.title, c.summary," \
	" c.fields_text, c.author, c.created_at, c.parent_commit_id, c.id," \
	" c.merge_parent_commit_id, c.lists FROM commits c" \
	" JOIN repos r ON r.id = " S \
	" LEFT JOIN commits p ON p.id = c.parent_commit_id" \
	" LEFT JOIN commits m ON m.id = c.merge_parent_commit_id"

/* ... or through the Space that wrote it. */
#define CKPT_COLS CKPT_COLS_AT("c.repo_id")

/* Column numbers of CKPT_COLS; HEAD_COLS adds HEAD_FILE. */
enum { CK_HASH, CK_PARENT, CK_MERGE, CK_SPACE, CK_TITLE, CK_SUMMARY, CK_FIELDS, CK_AUTHOR,
       CK_CREATED, CK_PARENT_ID, CK_ID, CK_MERGE_ID, CK_LISTS, HC_FILE };

/* ($1 space, $2 hash)'s row when the Space reaches it (store/sql.h), as a one-row table. */
#define REACHED_ROW \
	"(SELECT id FROM (SELECT " SQL_REACH("$1::text", "$2::text") " AS id) x" \
	" WHERE id IS NOT NULL)"
/* First-parent chain from ($1 space, $2 hash); depth 1 is the start; $3 caps depth (0: all). */
#define ANCESTRY_CTE \
	"WITH RECURSIVE anc(id, depth) AS (" \
	"  SELECT id, 1::bigint FROM " REACHED_ROW " y" \
	"  UNION ALL SELECT c.parent_commit_id, anc.depth + 1 FROM commits c" \
	"  JOIN anc ON c.id = anc.id WHERE c.parent_commit_id IS NOT NULL" \
	"  AND ($3::bigint = 0 OR anc.depth < $3::bigint)) "

/*
 * Search ($1 tsquery, $2 Space ids as JSON, $3 field code, $4 author, $5
 * since, $6 until, $7 limit, $8 the query's longest word): a checkpoint's
 * item once, with its origin (store.c finds the Spaces that hold it and
 * keeps those $2 allows; $2 filters turns here); the expression is the GIN
 * index's (schema_postgres.h).
 *
 * A common word is found newest first by walking search_items backwards,
 * and the tsvector built for each row walked was most of the search
 * (docs/storage.md, "Search at scale"): strpos($8) is true of
 * every row the tsquery matches (a word or a prefix of the row's words is
 * in its text), costs a fraction of the tsvector, and goes first, so the
 * tsvector is built only for rows holding the word.  A rare word's plan is
 * still the GIN index's.
 */
#define PG_SEARCH_CKPT \
	"SELECT c0.repo_id, NULL::text, c0.commit_hash, NULL::text, 0::bigint, i.field," \
	" i.ordinal, i.terms, c0.author, c0.created_at, NULL::text, i.id, c0.id, c0.chain" \
	" FROM search_items i JOIN commits c0 ON c0.id = i.commit_id" \
	" WHERE array_to_tsvector(string_to_array(i.terms, ' ')) @@ $1::tsquery" \
	" AND strpos(i.terms, $8::text) > 0" \
	" AND ($2::text IS NULL OR $2::text IS NOT NULL)" \
	" AND ($3::int IS NULL OR i.field = $3::int) AND ($4::text IS NULL OR c0.author = $4::text)" \
	" AND ($5::text IS NULL OR c0.created_at >= $5::text)" \
	" AND ($6::text IS NULL OR c0.created_at <= $6::text)"
#define PG_SEARCH_TURN \
	" UNION ALL SELECT r.id, r.name, NULL, s.id, t.sequence_number, i.field, i.ordinal," \
	" i.terms, t.role, t.created_at, t.content, i.id, NULL::bigint, NULL::bigint" \
	" FROM search_items i JOIN turns t ON t.id = i.turn_id" \
	" JOIN sessions s ON s.id = t.session_id JOIN repos r ON r.id = s.repo_id" \
	" WHERE array_to_tsvector(string_to_array(i.terms, ' ')) @@ $1::tsquery" \
	" AND strpos(i.terms, $8::text) > 0 AND r.deleted_at IS NULL" \
	" AND ($2::text IS NULL OR r.id IN (SELECT jsonb_array_elements_text($2::jsonb)))" \
	" AND ($3::int IS NULL OR i.field = $3::int) AND ($4::text IS NULL OR t.role = $4::text)" \
	" AND ($5::text IS NULL OR t.created_at >= $5::text)" \
	" AND ($6::text IS NULL OR t.created_at <= $6::text)"
/* The hash of the Space $1's HEAD (NULL: empty), read by a statement of its own. */
#define HEAD_HASH \
	"(SELECT c.commit_hash FROM refs f JOIN commits c ON c.id = f.commit_id" \
	" WHERE f.repo_id = $1::text AND f.name = 'main')"

/*
 * Ends the subquery that parses a checkpoint's fields as JSONB once: without
 * it the planner pulls the subquery up and puts the cast in each of the
 * seven j->'...' that use it, so the server parsed the whole document seven
 * times per insert, most of the insert's time (OFFSET 0 keeps a subquery
 * from being pulled up; the measurement is in docs/storage.md).
 */
#define PARSE_ONCE "OFFSET 0"

/*
 * A check that fails its statement (SQLSTATE 22P02) unless ok, and with it
 * the pipelined transaction it belongs to, so that nothing after it is
 * written.  The cast applies to a value only known at run time, so the
 * planner cannot fold it.
 */
#define FAIL_UNLESS(ok, why) \
	"SELECT CAST(CASE WHEN " ok " THEN '0' ELSE '" why "' END AS integer)"
#define CHECK_FAILED "22P02"

/*
 * The row (id, name) of the live Space $1 names, a name match winning over
 * an id match, for the hottest read: the id match is guarded by NOT EXISTS
 * so at most one branch gives a row, whatever order they run in, and LIMIT
 * stops after the name's branch when it found one.  One index look-up for a
 * name where store_space_get's (rows.c) takes two and a third to join repos
 * on the id.
 */
#define SPACE_ROW_BY_REF \
	"(SELECT id, name FROM repos WHERE name = $1::text AND deleted_at IS NULL" \
	" UNION ALL SELECT id, name FROM repos WHERE id = $1::text AND deleted_at IS NULL" \
	" AND NOT EXISTS (SELECT 1 FROM repos WHERE name = $1::text AND deleted_at IS NULL)" \
	" LIMIT 1)"

/*
 * HEAD of a Space named by id or name, with the checkpoint's columns
 * (CKPT_COLS' order), except that when HEAD is checkpoint $2, whose content
 * the handle has read already (fields_memo), the parents' hashes and the
 * fields come back NULL and the parents' rows are not even looked up (a
 * subquery under a CASE runs only when its branch is taken); then HEAD_FILE
 * (see HEAD_QUICK).
 */
#define HEAD_COLS \
	"SELECT c.commit_hash, CASE WHEN c.commit_hash = $2::text THEN NULL ELSE" \
	" (SELECT commit_hash FROM commits WHERE id = c.parent_commit_id) END," \
	" CASE WHEN c.commit_hash = $2::text THEN NULL ELSE" \
	" (SELECT commit_hash FROM commits WHERE id = c.merge_parent_commit_id) END," \
	" r.name, c.title, c.summary," \
	" CASE WHEN c.commit_hash = $2::text THEN NULL ELSE c.fields_text END," \
	" c.author, c.created_at, c.parent_commit_id, c.id, c.merge_parent_commit_id," \
	" CASE WHEN c.commit_hash = $2::text THEN NULL ELSE c.lists END," \
	" " HEAD_FILE " FROM " SPACE_ROW_BY_REF " r" \
	" LEFT JOIN refs f ON f.repo_id = r.id AND f.name = 'main'" \
	" LEFT JOIN commits c ON c.id = f.commit_id"

/*
 * Whether the HEAD of a Space is still the checkpoint a handle holds (see
 * pg_head_get), with the least work in the server: the Space by name
 * (HEAD_BY_NAME) or by id (HEAD_BY_ID, guarded as in SPACE_ROW_BY_REF), its
 * name and its ref's commit id (NULL: no checkpoint), which the handle
 * compares with the id of the checkpoint it holds.  The server opens every
 * relation and index a plan names before it runs any of it, whether or not
 * a branch runs, and each costs server time, so these name two relations
 * where HEAD_COLS names seven, and return three columns (what that saves:
 * docs/storage.md).
 *
 * A commit id names one row for good: rows of commits are never updated,
 * and Smriti never gives an id itself, so the table's identity never
 * reissues one.  What could reissue them through Smriti's own tools (the
 * table dropped and created again, or truncated, under a live connection)
 * gives the table a new file, and HEAD_FILE, the file's number, is
 * compared too.  Rows inserted by hand with ids of their own, or the
 * identity restarted by hand, are outside what this can see.
 */
#define HEAD_FILE "pg_relation_filenode('commits')"
#define HEAD_QUICK \
	"SELECT f.commit_id, r.name, " HEAD_FILE " FROM repos r" \
	" LEFT JOIN refs f ON f.repo_id = r.id AND f.name = 'main'" \
	" WHERE r.deleted_at IS NULL AND "
#define HEAD_BY_NAME HEAD_QUICK "r.name = $1::text"
#define HEAD_BY_ID HEAD_QUICK "r.id = $1::text AND NOT EXISTS" \
	" (SELECT 1 FROM repos WHERE name = $1::text AND deleted_at IS NULL)"
/* Column numbers of HEAD_QUICK. */
enum { HQ_ID, HQ_SPACE, HQ_FILE };

static const char *const stmt_sql[Q_COUNT] = {
	[Q_SPACE_INSERT] =
		"WITH r AS (INSERT INTO repos (id, name, description, created_at)"
		" VALUES ($1, $2, $3, $4) RETURNING id)"
		" INSERT INTO refs (repo_id, name, commit_id) SELECT id, 'main', NULL FROM r",
	[Q_HEAD_LOCK] = "SELECT commit_id FROM refs WHERE repo_id = $1 AND name = 'main'"
		" FOR NO KEY UPDATE",
	[Q_SPACE_CHECK] = FAIL_UNLESS("EXISTS (SELECT 1 FROM repos WHERE id = $1::text"
		" AND name = $3::text AND (name = $2::text OR id = $2::text)) AND NOT EXISTS"
		" (SELECT 1 FROM repos WHERE name = $2::text AND id <> $1::text)",
		"the space has another name"),
	[Q_HASH_BY_ID] = "SELECT commit_hash FROM commits WHERE id = $1",
	[Q_HEAD_READ] = "SELECT " HEAD_HASH,
	[Q_HEAD_CHECK] = FAIL_UNLESS("EXISTS (SELECT 1 FROM refs WHERE repo_id = $1::text"
		" AND name = 'main') AND " HEAD_HASH " IS NOT DISTINCT FROM $2::text",
		"HEAD is not the expected parent"),
	/* on top of the HEAD that Q_HEAD_LOCK locked */
	[Q_COMMIT_INSERT] =
		"INSERT INTO commits (repo_id, commit_hash, parent_commit_id, title, summary,"
		" metadata_, fields_text, author, created_at, merge_parent_commit_id, lists)"
		" SELECT $1::text, $2::text, $3::bigint, $4::text, $5::text,"
		" j->'metadata', $6::text, $7::text, $8::text, $9::bigint, $10::bigint[]"
		" FROM (SELECT $6::text::jsonb AS j " PARSE_ONCE ") x"
		" ON CONFLICT (commit_hash) DO NOTHING RETURNING id",
	/* fails (CHECK_FAILED) when the Space $1 holds the checkpoint $2 already */
	[Q_COMMIT_NEW] = FAIL_UNLESS(SQL_REACH("$1::text", "$2::text") " IS NULL",
		"the checkpoint exists already"),
	[Q_COMMIT_BY_HASH] = "SELECT id FROM commits WHERE commit_hash = $1",
	/* a fresh row id for each hash of $1 that no row holds, in $1's order */
	[Q_COMMIT_RESERVE] =
		"SELECT CASE WHEN c.id IS NULL THEN"
		" nextval(pg_get_serial_sequence('commits', 'id')) END"
		" FROM unnest($1::text[]) WITH ORDINALITY AS u(hash, n)"
		" LEFT JOIN commits c ON c.commit_hash = u.hash ORDER BY u.n",
	/* Q_COMMIT_INSERT as row $11 (reserved by Q_COMMIT_RESERVE): no answer to wait for */
	[Q_COMMIT_INSERT_AS] =
		"INSERT INTO commits (repo_id, commit_hash, parent_commit_id, title, summary,"
		" metadata_, fields_text, author, created_at, merge_parent_commit_id, lists, id)"
		" SELECT $1::text, $2::text, $3::bigint, $4::text, $5::text,"
		" j->'metadata', $6::text, $7::text, $8::text, $9::bigint, $10::bigint[], $11::bigint"
		" FROM (SELECT $6::text::jsonb AS j " PARSE_ONCE ") x",
	/* on top of the HEAD that Q_HEAD_LOCK locked (store.c's pipelined put) */
	[Q_COMMIT_INSERT_ON_HEAD] =
		"INSERT INTO commits (repo_id, commit_hash, parent_commit_id, title, summary,"
		" metadata_, fields_text, author, created_at, lists)"
		" SELECT $1::text, $2::text, (SELECT commit_id FROM refs WHERE repo_id = $1::text"
		" AND name = 'main'), $3::text, $4::text,"
		" j->'metadata', $5::text, $6::text, $7::text, $8::bigint[]"
		" FROM (SELECT $5::text::jsonb AS j " PARSE_ONCE ") x"
		" ON CONFLICT (commit_hash) DO NOTHING",
	[Q_HEAD_MOVE] = "UPDATE refs SET commit_id = $1 WHERE repo_id = $2 AND name = 'main'",
	[Q_HEAD_MOVE_TO] = "UPDATE refs SET commit_id = (SELECT id FROM commits"
		" WHERE commit_hash = $2::text)"
		" WHERE repo_id = $1::text AND name = 'main'",
	/* A name match wins over an id match, as in store_space_get (rows.c). */
	[Q_HEAD_GET] = HEAD_COLS,
	[Q_HEAD_BY_NAME] = HEAD_BY_NAME,
	[Q_HEAD_BY_ID] = HEAD_BY_ID,
	[Q_CKPT_IN_SPACE] = CKPT_COLS_AT("$1::text") " WHERE c.id IN " REACHED_ROW,
	[Q_CKPT_ANY] = CKPT_COLS " WHERE c.commit_hash = $1",
	[Q_CKPT_ANY_MANY] = CKPT_COLS " WHERE c.commit_hash = ANY($1::text[])",
	[Q_LOG] = ANCESTRY_CTE CKPT_COLS_AT("$1::text") " JOIN anc ON anc.id = c.id"
		" ORDER BY anc.depth",
	/* every checkpoint the Space reaches, then their rows in batches by id */
	[Q_SCAN_IDS] = SQL_REACHED("$1::text") "SELECT id FROM rch_all ORDER BY id",
	[Q_SCAN] = CKPT_COLS_AT("$1::text") " WHERE c.id = ANY($2::bigint[]) ORDER BY c.id",
	[Q_SCAN_ALL_IDS] = "SELECT id FROM commits ORDER BY id",
	[Q_SCAN_ALL] = CKPT_COLS " WHERE c.id = ANY($1::bigint[]) ORDER BY c.id",
	[Q_COMMIT_ID] = "SELECT " SQL_REACH("$1::text", "$2::text"),
	[Q_COMMIT_LINKS] =
		"SELECT p.commit_hash, m.commit_hash, c.created_at FROM commits c"
		" LEFT JOIN commits p ON p.id = c.parent_commit_id"
		" LEFT JOIN commits m ON m.id = c.merge_parent_commit_id"
		" WHERE c.id IN " REACHED_ROW,
	/* one recursive term may name anc once: both parents come from one LATERAL list */
	[Q_COMMIT_ANCESTRY] =
		"WITH RECURSIVE anc(id) AS ("
		" SELECT id FROM " REACHED_ROW " y"
		" UNION SELECT p.id FROM commits c JOIN anc ON c.id = anc.id"
		" CROSS JOIN LATERAL (VALUES (c.parent_commit_id), (c.merge_parent_commit_id)) AS p(id)"
		" WHERE p.id IS NOT NULL)"
		" SELECT c.commit_hash, c.created_at FROM anc JOIN commits c ON c.id = anc.id",
	[Q_SESSION_LOCK] = "SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE",
	[Q_LAST_SEQ] = "SELECT COALESCE(MAX(sequence_number), 0) FROM turns WHERE session_id = $1",
	[Q_SEQ_CHECK] = FAIL_UNLESS("$2::bigint < 0 OR (SELECT COALESCE(MAX(sequence_number), 0)"
		" FROM turns WHERE session_id = $1::text) = $2::bigint",
		"the session has moved on"),
	/* the session's next number: its row is locked (Q_SESSION_LOCK) or new */
	[Q_TURN_INSERT] =
		"INSERT INTO turns (session_id, sequence_number, role, content, provider, model,"
		" prompt_tokens, completion_tokens, latency_ms, error, created_at, status, author,"
		" parent_seq)"
		" VALUES ($1::text, (SELECT COALESCE(MAX(sequence_number), 0) + 1 FROM turns"
		" WHERE session_id = $1::text), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
		/* a parent that is the turn before stays implicit, as in a linear session */
		" NULLIF($13::bigint, (SELECT COALESCE(MAX(sequence_number), 0) FROM turns"
		" WHERE session_id = $1::text)))"
		" RETURNING id, sequence_number",
	[Q_GC_REPOINT] = SQL_GC_ADOPT,
	[Q_GC_SPACES] = "DELETE FROM repos WHERE deleted_at IS NOT NULL"
		" AND ($1::text IS NULL OR deleted_at <= $1::text)",
	[Q_GC_ORPHANS] = SQL_GC_ORPHANS,
	[Q_GC_UNREACHED] = SQL_GC_UNREACHED,
	[Q_GC_EXPIRE] = SQL_GC_EXPIRE,
	/*
	 * A write upserts its chunks, then its items (ROW EXCLUSIVE): it waits
	 * for the sweep, or the sweep for it, so a chunk a write finds there
	 * is never swept before that write's row names it.  Same order.
	 */
	[Q_GC_LOCK] = "LOCK TABLE chunks, items IN SHARE ROW EXCLUSIVE MODE",
	[Q_GC_CHUNKS] = "DELETE FROM chunks WHERE id IN (SELECT id FROM chunks"
		" EXCEPT SELECT unnest(lists[7:]) FROM commits WHERE lists IS NOT NULL)",
	[Q_GC_TIPS_CLEAR] = "DELETE FROM reach_tips",
	[Q_GC_TIPS_FILL] = SQL_TIPS_FILL,
	[Q_GC_ENTRIES_CLEAR] = "DELETE FROM chain_entries",
	[Q_GC_ENTRIES_FILL] = SQL_CHAIN_ENTRIES_FILL,
	[Q_GC_ITEMS] = "DELETE FROM items WHERE id IN (SELECT id FROM items"
		" EXCEPT SELECT unnest(ids) FROM chunks)",
	/* a checkpoint written again (on another Space) was indexed when first written */
	[Q_SEARCH_HAS] = "SELECT 1 FROM search_items WHERE commit_id ="
		" (SELECT id FROM commits WHERE commit_hash = $1) LIMIT 1",
	[Q_SEARCH_INSERT] =
		"INSERT INTO search_items (commit_id, turn_id, field, ordinal, terms)"
		" VALUES ($1, $2, $3, $4, $5)",
	/*
	 * By name, for a pipelined put (the Space $1 is the writer's): the row
	 * of hash $2, unless it has this item indexed already (it was written
	 * before, on another Space: as Q_SEARCH_HAS tells the id-based writes).
	 * One row a statement for a few rows: its generic plan is cached.
	 */
	[Q_SEARCH_INSERT_AT] =
		"INSERT INTO search_items (commit_id, turn_id, field, ordinal, terms)"
		" SELECT c.id, NULL::bigint, $3::int, $4::bigint, $5::text FROM commits c"
		" WHERE c.commit_hash = $2::text AND $1::text IS NOT NULL AND NOT EXISTS"
		" (SELECT 1 FROM search_items o WHERE o.commit_id = c.id AND o.field = $3::int"
		" AND o.ordinal = $4::bigint)",
	/*
	 * The same for many rows at once ($3 fields, $4 ordinals, $5 terms).
	 * PostgreSQL plans it anew on each call (~150 us): a plan that knows
	 * the arrays' lengths always looks cheaper than the cached one, which
	 * guesses them.  Worth it only where it saves many statements.
	 */
	[Q_SEARCH_INSERT_AT_MANY] =
		"INSERT INTO search_items (commit_id, turn_id, field, ordinal, terms)"
		" SELECT c.id, NULL::bigint, u.field, u.ordinal, u.terms FROM commits c"
		" CROSS JOIN unnest($3::int[], $4::bigint[], $5::text[]) AS u(field, ordinal, terms)"
		" WHERE c.commit_hash = $2::text AND $1::text IS NOT NULL AND NOT EXISTS"
		" (SELECT 1 FROM search_items o WHERE o.commit_id = c.id AND o.field = u.field"
		" AND o.ordinal = u.ordinal)",
	/* the session $1's last turn (the one this transaction appended, under its lock) */
	[Q_SEARCH_INSERT_TURN] =
		"INSERT INTO search_items (commit_id, turn_id, field, ordinal, terms)"
		" SELECT NULL::bigint, t.id, $2::int, t.sequence_number, $3::text FROM turns t"
		" WHERE t.session_id = $1::text ORDER BY t.sequence_number DESC LIMIT 1",
	/* the expression is the index's (schema_postgres.h), so GIN serves it */
	[Q_SEARCH] = PG_SEARCH_CKPT " ORDER BY 12 DESC LIMIT NULLIF($7::bigint, 0)",
	[Q_SEARCH_TURNS] = PG_SEARCH_CKPT PG_SEARCH_TURN
		" ORDER BY 12 DESC LIMIT NULLIF($7::bigint, 0)",
	/*
	 * A checkpoint's fresh chunks ($1 ids, $2 their item ids), each unless
	 * it is there, and the items ($3 ids, $4 bodies) of those it inserted,
	 * each unless it is there, in one statement, in the order of their ids
	 * (writers that share rows wait for each other in one order, never in a
	 * circle): a chunk's items are written
	 * in the transaction that writes the chunk, so a chunk there has its
	 * items (as on SQLite).  DO NOTHING takes no row lock: an upsert that
	 * compared the bodies (DO UPDATE ... WHERE) locked every item it met
	 * until COMMIT, so writers of the same items waited for each other's
	 * fsync, and each lock cost a WAL record.  Q_ITEMS_CHECK compares.
	 */
	[Q_CHUNKS_INSERT] =
		"WITH fresh AS (INSERT INTO chunks (id, ids) SELECT id, ids::bigint[]"
		" FROM unnest($1::bigint[], $2::text[]) AS t(id, ids) ORDER BY id"
		" ON CONFLICT (id) DO NOTHING RETURNING ids)"
		" INSERT INTO items (id, body) SELECT u.id, u.body"
		" FROM unnest($3::bigint[], $4::text[]) AS u(id, body)"
		" WHERE u.id IN (SELECT unnest(ids) FROM fresh) ORDER BY u.id"
		" ON CONFLICT (id) DO NOTHING",
	/*
	 * Two different items with one id (64 bits of SHA-256 alike) fail the
	 * write: each item sent ($1 ids, $2 bodies) has its bytes in the table.
	 * A statement of its own, after Q_CHUNKS_INSERT: it sees the items of a
	 * writer that Q_CHUNKS_INSERT waited for (a chunk or item inserted at
	 * once), which that statement's snapshot does not.
	 */
	[Q_ITEMS_CHECK] = FAIL_UNLESS("NOT EXISTS (SELECT 1 FROM unnest($1::bigint[], $2::text[])"
		" AS u(id, body) JOIN items i ON i.id = u.id WHERE i.body <> u.body)",
		"an item stored has other bytes"),
	/* the items of chunks $1, each chunk's in order (a body NULL: a missing item) */
	[Q_CHUNKS_READ] =
		"SELECT c.id, i.body FROM chunks c"
		" CROSS JOIN LATERAL unnest(c.ids) WITH ORDINALITY AS e(item, o)"
		" LEFT JOIN items i ON i.id = e.item WHERE c.id = ANY ($1::bigint[])"
		" ORDER BY c.id, e.o",
	/* the conversion of rows written before migration 11 (convert_content) */
	[Q_CONVERT_CURSOR] = "SELECT last_commit FROM content_migration WHERE id = 1 FOR UPDATE",
	[Q_CONVERT_IDS] = "SELECT id FROM commits WHERE id > $1 ORDER BY id LIMIT $2",
	[Q_CONVERT_ROW] =
		"SELECT c.commit_hash, p.commit_hash, c.fields_text FROM commits c"
		" LEFT JOIN commits p ON p.id = c.parent_commit_id"
		" WHERE c.id = $1 AND c.lists IS NULL",
	[Q_CONVERT_SET] = "UPDATE commits SET lists = $1::bigint[], fields_text = $2 WHERE id = $3",
	[Q_CONVERT_MOVE] = "UPDATE content_migration SET last_commit = $1 WHERE id = 1",
	[Q_CONVERT_COUNT] = "SELECT count(*) FROM commits WHERE id > $1",
};

/* ---- the handle ---- */

/*
 * One statement sent in pipeline mode, whose result is read later, in
 * order.  take reads its rows when it succeeded (NULL: none wanted).
 */
struct pg_store;
struct pipe_entry;
typedef enum smr_rc (*take_fn)(struct pg_store *s, PGresult *r, struct pipe_entry *e,
			       struct smr_err *err);

enum pipe_kind { PE_QUERY, PE_PREPARE, PE_SYNC };

struct pipe_entry {
	enum pipe_kind kind;
	enum stmt q;              /* PE_PREPARE: the statement prepared */
	int generic;              /* PE_PREPARE of a sql_text statement: its slot + 1 */
	take_fn take;
	void *out;                /* where take puts what it read */
	const char *what;         /* for error messages: "writing a checkpoint" */
	const char *conflict;     /* the SQLSTATE that means a conflict, or NULL */
	enum smr_rc conflict_rc;  /* what that conflict is: SMR_ECONFLICT unless set */
	int begin, commit;        /* it is the BEGIN, the COMMIT */
	char arg[80];             /* the name a not-found message names */
};

/*
 * Entries a pipeline holds before its results are read (one more round
 * trip): enough for a checkpoint's search-index rows in all but the largest
 * writes.  The list grows to it as needed.  The statements' results are a
 * few bytes each, so a full pipeline's results fit in the socket's buffers and the
 * server never blocks on a client that is still sending.
 */
#define PIPE_MAX 1024

/*
 * The content of the last checkpoint a HEAD read parsed.  A checkpoint is
 * immutable and named by the hash of its content (parents included), so a
 * HEAD read that finds that hash again (the server still says which
 * checkpoint HEAD is, every time) has the server leave out the JSON and the
 * parents' hashes (and skip looking them up) and uses these instead:
 * parsing the JSON was most of a read's CPU time, and copying it (a deep
 * copy per read) most of what was left, so the read's checkpoint shares
 * these JSON values, read-only (store_head_get says so).
 */
struct fields_memo {
	char hash[HASH_HEX_LEN + 1];       /* "" while empty */
	char *parent, *merge_parent;       /* owned; NULL: none */
	char *title, *summary, *author, *created_at;   /* owned */
	json_t *fields;                    /* owned: the parsed fields_text; NULL: empty */
	int64_t id, file;                  /* its commit id, and HEAD_FILE when read */
};

/*
 * How long waits for one kind of reply spin before they block (see
 * await_reply): window_us, 0 while such replies come too slowly to be worth
 * it.
 */
struct spin {
	int64_t window_us;
};

/* Whether the machine has a CPU to spare for spinning (see cpus_spare). */
struct spare {
	long cpus;                         /* online */
	int yes;
	int64_t checked_us;                /* when yes was last decided */
};

/*
 * The chunks of one batch of checkpoint_scan's rows, read fresh in one
 * statement: text[i] and count[i] of chunk ids[i], ids sorted.
 */
struct batch_chunks {
	int64_t *ids;
	struct buf *text;
	size_t *count, n;
};

struct pg_store {
	struct store base;
	PGconn *conn;
	char *dsn;                         /* to connect afresh */
	int64_t content_db;                /* content_db_key(dsn): the chunk memories' key */
	unsigned char prepared[Q_COUNT];   /* on this connection */
	const char *generic[GENERIC_MAX];  /* sql_text statements prepared on it, by address */
	int lost;                          /* the last failure was a dead connection */
	int ending;                        /* the server said it is ending this connection */
	int not_started;                   /* the last write's BEGIN met a dead connection */
	/*
	 * The first failure of a read of chunks since the last read_failed(),
	 * but a missing chunk or item (damage, which reads as null lists): a
	 * lost connection must fail the read, and the write it is part of.
	 */
	enum smr_rc read_rc;
	struct smr_err read_err;
	int in_txn;                        /* between store.c's txn_begin and its end */
	char sqlstate[6];                  /* of the last failure, "" if none */
	struct pipe_entry *pipe;           /* owned: sent, results not read yet */
	int pipe_cap;                      /* entries pipe has room for */
	int npipe, pipe_read;              /* entries sent; entries whose results are read */
	PGresult *kept;                    /* a result run() asked for inside a pipeline */
	struct fields_memo memo;           /* of the last HEAD read */
	const struct batch_chunks *batch;  /* a scan batch's chunks, read fresh (scan_batch) */
	char *head_ref;                    /* owned: the Space the last HEAD read named; NULL: none */
	int head_by_name;                  /* ... found by its name (else by its id) */
	int quick_off;                     /* the last HEAD read found it moved (see pg_head_get) */
	struct spin spin_read;             /* replies to one statement */
	struct spin spin_commit;           /* replies to a pipeline with a COMMIT (fsync-bound) */
	struct spare spare;
};

static struct pg_store *P(struct store *st)
{
	return (struct pg_store *)st;
}

/* ---- waiting for a reply ----
 *
 * A HEAD read is one round trip to a server that answers in about ten
 * microseconds; what it costs beyond that is mostly waking up: a client
 * that blocks in poll() puts its CPU to sleep, and on a virtual machine
 * whose idle vCPUs halt (cpuidle haltpoll without guest polling) waking it
 * costs tens of microseconds more than the answer took.  So, as Linux's
 * haltpoll does for an idle vCPU, a wait first polls the socket without
 * blocking (PQconsumeInput), yielding the CPU between looks so that a
 * server on the same CPU gets to run, and blocks in libpq only after that.
 *
 * Only while it pays, and haltpoll's way: each kind of reply keeps a spin
 * window, which a reply that came while the wait was blocked, but within
 * SPIN_MAX_US of the request, doubles (a longer spin would have caught
 * it), and a slower one halves, down to none.  Waits for slow replies (a
 * commit's fsync, a lock held by another writer) so stop spinning after a
 * few, and start again only after a blocked wait found the server quick
 * again: that costs no spin.  Nothing spins unless a statement was sent and
 * its reply is awaited, so an idle handle, and an idle server, use no CPU.
 *
 * And only while the machine has a CPU to spare: spinning helps when the
 * CPUs would otherwise sit idle (and halt), and hurts when they are busy,
 * where a spinning or yielding client takes turns from the server it waits
 * for (docs/storage.md has the measurement).  So no
 * wait spins while more tasks are running than there are CPUs (the kernel's
 * count of runnable tasks, /proc/loadavg, read at most every
 * SPARE_CHECK_US; the 1-minute average lags by a minute and kept the spin
 * off when it would have helped).
 *
 * This changes when a reply is read, never which: every read still asks
 * the server.
 */
#define SPIN_MAX_US 200
#define SPIN_MIN_US 20
#define SPARE_CHECK_US 20000     /* how often the runnable tasks are counted */

/* The number of runnable tasks now (this one included), or -1 if unknown. */
static long tasks_running(void)
{
	char buf[128];
	FILE *f = fopen("/proc/loadavg", "re");   /* "0.52 0.80 0.91 2/158 4242" */
	long n = -1;

	if (f && fgets(buf, sizeof(buf), f) && sscanf(buf, "%*s %*s %*s %ld/", &n) != 1)
		n = -1;
	if (f)
		fclose(f);
	return n;
}

/* 1 when no more tasks run than there are CPUs; counted at most every SPARE_CHECK_US. */
static int cpus_spare(struct spare *sp, int64_t now)
{
	long running;

	if (!sp->checked_us || now - sp->checked_us >= SPARE_CHECK_US) {
		sp->checked_us = now;
		if (!sp->cpus)
			sp->cpus = sysconf(_SC_NPROCESSORS_ONLN);
		running = tasks_running();
		sp->yes = running > 0 && running <= sp->cpus;
	}
	return sp->yes;
}

/*
 * Spins for the reply to what was sent, up to sp's window.  Returns when it
 * started waiting (us) if the reply is still not complete, so that the
 * caller, once libpq's blocking wait ends, tells replied(); 0 when it is.
 */
static int64_t await_reply(struct pg_store *s, struct spin *sp)
{
	int64_t t0, now;

	if (!PQisBusy(s->conn))
		return 0;
	now = t0 = sys_monotonic_us();
	while (now - t0 < sp->window_us && cpus_spare(&s->spare, now)) {
		if (!PQconsumeInput(s->conn))
			return 0;         /* PQgetResult reports the failure */
		if (!PQisBusy(s->conn))
			return 0;
		sched_yield();
		now = sys_monotonic_us();
	}
	return t0;
}

/* Adapts sp's window to a reply that came after a blocked wait begun at t0. */
static void replied(struct spin *sp, int64_t t0)
{
	int64_t took;

	if (!t0)
		return;
	took = sys_monotonic_us() - t0;
	if (took <= SPIN_MAX_US) {
		sp->window_us = sp->window_us ? 2 * sp->window_us : SPIN_MIN_US;
		if (sp->window_us < took)
			sp->window_us = took;
		if (sp->window_us > SPIN_MAX_US)
			sp->window_us = SPIN_MAX_US;
	} else {
		sp->window_us /= 2;
		if (sp->window_us < SPIN_MIN_US)
			sp->window_us = 0;
	}
}

/* PQgetResult, spinning first (await_reply) when the reply is still to come. */
static PGresult *get_result(struct pg_store *s, struct spin *sp)
{
	int64_t t0 = await_reply(s, sp);
	PGresult *r = PQgetResult(s->conn);

	replied(sp, t0);
	return r;
}

/*
 * PQexecPrepared, waiting through get_result: the result of the one
 * statement (caller PQclear()s), or NULL when it could not be sent.
 */
static PGresult *exec_prepared(struct pg_store *s, const char *name, int n,
			       const char *const *values)
{
	PGresult *r, *last = NULL;

	if (!PQsendQueryPrepared(s->conn, name, n, values, NULL, NULL, 0))
		return NULL;
	while ((r = get_result(s, &s->spin_read)) != NULL) {
		PQclear(last);    /* one statement gives one result; keep the last, as PQexec */
		last = r;
	}
	return last;
}

/* Parameters of one statement, all in text format; NULL is SQL NULL. */
struct params {
	const char *v[MAX_PARAMS];
	char num[MAX_PARAMS][24];
	int n;
};

static void p_text(struct params *p, const char *s)
{
	if (p->n == MAX_PARAMS)
		BUG("a statement with more than %d parameters: raise MAX_PARAMS", MAX_PARAMS);
	p->v[p->n++] = s;
}

static void p_int(struct params *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof(p->num[0]), "%" PRId64, v);
	p_text(p, p->num[p->n]);
}

/* Negative values are SQL NULL (unknown token counts, no parent). */
static void p_int_or_null(struct params *p, int64_t v)
{
	if (v < 0)
		p_text(p, NULL);
	else
		p_int(p, v);
}

static char *col_text(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : xstrdup(PQgetvalue(r, row, col));
}

static int64_t col_int(const PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static int64_t col_int_or_neg(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? -1 : col_int(r, row, col);
}

/* ---- errors ---- */

/* libpq's last connection message on one line, into buf. */
static const char *conn_message(struct pg_store *s, char *buf, size_t size)
{
	const char *m = s->conn ? PQerrorMessage(s->conn) : "out of memory";
	size_t j = 0;

	for (size_t i = 0; m[i] && j + 1 < size; i++) {
		char ch = m[i] == '\n' || m[i] == '\t' ? ' ' : m[i];

		if (ch == ' ' && (j == 0 || buf[j - 1] == ' '))
			continue;
		buf[j++] = ch;
	}
	while (j && buf[j - 1] == ' ')
		j--;
	buf[j] = '\0';
	return buf;
}

static int state_is(const struct pg_store *s, const char *code)
{
	return !strncmp(s->sqlstate, code, strlen(code));
}

static int connection_gone(struct pg_store *s)
{
	return PQstatus(s->conn) != CONNECTION_OK || state_is(s, "08") ||
	       state_is(s, "57P01") || state_is(s, "57P02") || state_is(s, "57P03");
}

/* Classifies a failed result r (may be NULL) of doing what. */
static enum smr_rc pg_classify(struct pg_store *s, const PGresult *r, const char *what,
			   struct smr_err *err)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char buf[256];

	snprintf(s->sqlstate, sizeof(s->sqlstate), "%s", state ? state : "");
	s->lost = connection_gone(s);
	if (s->lost)
		return smr_errf(err, SMR_EUNAVAIL, "database connection lost; retry");
	if (!msg)
		msg = conn_message(s, buf, sizeof(buf));
	if (state_is(s, "40") || state_is(s, "55P03") || state_is(s, "53"))
		return smr_errf(err, SMR_EUNAVAIL, "database is busy (%s); try again", msg);
	if (state_is(s, "25006"))
		return smr_errf(err, SMR_EUNAVAIL,
				"database is read-only (a standby after failover?); retry");
	if (state_is(s, "57014"))
		return smr_errf(err, SMR_EUNAVAIL, "database statement timed out while %s", what);
	if (state_is(s, "22"))
		return smr_errf(err, SMR_EINVAL, "invalid data while %s: %s", what, msg);
	return smr_errf(err, SMR_EINTERNAL, "database error while %s: %s", what, msg);
}

/* pg_classify, counting the failures that are the database's own for GET /metrics. */
static enum smr_rc pg_fail(struct pg_store *s, const PGresult *r, const char *what,
			   struct smr_err *err)
{
	enum smr_rc rc = pg_classify(s, r, what, err);

	if (rc == SMR_EUNAVAIL || rc == SMR_EINTERNAL)
		metrics_store_error("postgres", rc == SMR_EUNAVAIL);
	return rc;
}

/* ---- connections ---- */

/*
 * What the server says outside a query, which is never shown.  A server
 * that ends an idle connection says so before it hangs up: FATAL
 * "terminating connection due to administrator command"
 * (pg_terminate_backend), a WARNING with SQLSTATE 57P01 for an immediate
 * shutdown, 57P02 when another backend crashed.  libpq keeps the status OK
 * until it reads the hang-up itself, so without this the next write went
 * out on a dead connection and failed in its COMMIT ("may or may not have
 * been saved") although the database was back.
 */
static void server_notice(void *arg, const PGresult *r)
{
	struct pg_store *s = arg;
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	const char *severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);

	if ((state && !strncmp(state, "57P", 3)) ||
	    (severity && (!strcmp(severity, "FATAL") || !strcmp(severity, "PANIC"))))
		s->ending = 1;
}

/*
 * The open's first statement (setup_connection with current) also asks
 * whether the schema is this smriti's with nothing left to convert, so that
 * the usual open is one round trip and one statement; a table missing
 * (42P01: a new database, or one from before the conversions) sends it
 * the longer way, migrate() and the conversions, which look for themselves.
 */
#define OPEN_CHECKS ", (SELECT COALESCE(MAX(version), 0) FROM schema_migrations)," \
		    " EXISTS (SELECT 1 FROM content_migration)," \
		    " EXISTS (SELECT 1 FROM chain_migration)"

static int schema_current(const PGresult *r);

/*
 * Per-connection set-up: refuse a non-UTF-8 database, and make sure a commit
 * is flushed before it is acknowledged even if the server has
 * synchronous_commit off (local, remote_write, on and remote_apply are kept).
 * With current (opening), *current gets 1 when the schema needs no
 * migration or conversion (see OPEN_CHECKS), else 0.
 */
static enum smr_rc setup_connection(struct pg_store *s, int *current, struct smr_err *err)
{
	const char *enc = PQparameterStatus(s->conn, "server_encoding");
	PGresult *r;
	enum smr_rc rc = SMR_OK;

	memset(s->prepared, 0, sizeof(s->prepared));
	memset(s->generic, 0, sizeof(s->generic));
	s->lost = 0;
	s->ending = 0;
	PQsetNoticeReceiver(s->conn, server_notice, s);
	if (enc && strcmp(enc, "UTF8"))
		return smr_errf(err, SMR_EINTERNAL,
				"database encoding is %s; smriti needs a UTF8 database", enc);
	/*
	 * No JIT: its threshold is an estimated cost, which grows with the
	 * tables, so on a large history short queries were compiled on every
	 * call (docs/storage.md).  Every statement here is a short one.
	 */
#define SETTINGS "SELECT set_config('jit', 'off', false)," \
		 " CASE WHEN current_setting('synchronous_commit') = 'off'" \
		 " THEN set_config('synchronous_commit', 'on', false) END"
	if (current) {
		const char *state;
		int ran;

		r = PQexec(s->conn, SETTINGS OPEN_CHECKS);
		state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		ran = PQresultStatus(r) == PGRES_TUPLES_OK;
		*current = ran && schema_current(r);
		if (!ran && !(state && !strcmp(state, "42P01")))
			rc = pg_fail(s, r, "setting up the connection", err);
		PQclear(r);
		if (ran || rc)
			return rc;
		/* a table is missing: the failed statement's settings did not take */
	}
	r = PQexec(s->conn, SETTINGS);
#undef SETTINGS
	rc = PQresultStatus(r) == PGRES_TUPLES_OK ? SMR_OK
						  : pg_fail(s, r, "setting up the connection", err);
	PQclear(r);
	return rc;
}

static PGconn *connect_dsn(const char *dsn);

/*
 * A fresh connection: PQreset, or a new connection when a pipeline died
 * half-read (nothing of its state is worth keeping).
 */
static enum smr_rc reconnect(struct pg_store *s, struct smr_err *err)
{
	char buf[256];

	s->npipe = s->pipe_read = 0;
	if (PQpipelineStatus(s->conn) == PQ_PIPELINE_OFF) {
		PQreset(s->conn);
	} else {
		PQfinish(s->conn);
		s->conn = connect_dsn(s->dsn);
	}
	if (!s->conn || PQstatus(s->conn) != CONNECTION_OK) {
		s->lost = 1;
		return smr_errf(err, SMR_EUNAVAIL, "cannot reach the database: %s",
				conn_message(s, buf, sizeof(buf)));
	}
	return setup_connection(s, NULL, err);
}

/*
 * At the start of every call: a live connection outside any transaction.
 * PQconsumeInput reads what the server sent while we were idle without a
 * round trip, and PQisBusy parses it, so a server that hung up (restart,
 * failover, terminated backend) or said it is about to (server_notice) is
 * noticed before anything is sent.
 */
static enum smr_rc ready(struct pg_store *s, struct smr_err *err)
{
	PGresult *r;

	s->sqlstate[0] = '\0';
	s->not_started = 0;
	s->lost = 0;
	if (PQstatus(s->conn) == CONNECTION_OK && PQpipelineStatus(s->conn) == PQ_PIPELINE_OFF) {
		PQconsumeInput(s->conn);
		PQisBusy(s->conn);
	}
	if (s->ending || PQstatus(s->conn) != CONNECTION_OK ||
	    PQpipelineStatus(s->conn) != PQ_PIPELINE_OFF)
		return reconnect(s, err);
	if (PQtransactionStatus(s->conn) != PQTRANS_IDLE) {
		r = PQexec(s->conn, "ROLLBACK");
		PQclear(r);
	}
	return SMR_OK;
}

/* A statement without parameters whose rows are not needed (BEGIN, COMMIT, DDL). */
static enum smr_rc simple(struct pg_store *s, const char *sql, const char *what,
			  struct smr_err *err)
{
	PGresult *r = PQexec(s->conn, sql);
	ExecStatusType st = PQresultStatus(r);
	enum smr_rc rc = SMR_OK;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		rc = pg_fail(s, r, what, err);
	PQclear(r);
	return rc;
}

/* ---- pipelined transactions ----
 *
 * store.c's writes (txn_begin, the row methods, txn_commit) go out in
 * pipeline mode: BEGIN, the statements and COMMIT are sent together and
 * their results read back in order at txn_commit, one round trip in all.
 * A check that fails aborts what follows it in the server (FAIL_UNLESS), so
 * nothing after it is written.  A row method that needs a result before
 * the commit (run() inside a pipeline) costs one more round trip: it asks
 * the server to flush and reads up to its own result.
 */

static int in_pipeline(const struct pg_store *s)
{
	return PQpipelineStatus(s->conn) != PQ_PIPELINE_OFF;
}

/*
 * Maps the failed result r of entry e.  A dead connection after a COMMIT
 * was sent leaves the write's fate unknown, unless the server itself said
 * it stopped at a statement before the COMMIT; a BEGIN the server refused
 * because it was going away means nothing of the write happened.
 */
static enum smr_rc pipe_fail(struct pg_store *s, const struct pipe_entry *e, const PGresult *r,
			     int commit_sent, struct smr_err *err)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	enum smr_rc rc;

	if (e->conflict && state && !strcmp(state, e->conflict)) {
		snprintf(s->sqlstate, sizeof(s->sqlstate), "%s", state);
		return smr_errf(err, e->conflict_rc ? e->conflict_rc : SMR_ECONFLICT,
				"conflict while %s", e->what);
	}
	rc = pg_fail(s, r, e->what, err);
	if (!s->lost)
		return rc;
	if (e->begin && state)
		s->not_started = 1;
	else if (commit_sent && (!state || e->commit))
		rc = smr_errf(err, SMR_EUNAVAIL, "database connection lost while committing;"
			      " the write may or may not have been saved");
	return rc;
}

/* Handles the result r of entry e (and frees it unless e keeps it). */
static enum smr_rc pipe_result(struct pg_store *s, struct pipe_entry *e, PGresult *r,
			       int commit_sent, struct smr_err *err)
{
	ExecStatusType st = PQresultStatus(r);
	enum smr_rc rc = SMR_OK;
	int keep = 0;

	if (e->kind == PE_SYNC) {
		if (st != PGRES_PIPELINE_SYNC)
			rc = pg_fail(s, r, e->what, err);
	} else if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (e->take)
			rc = e->take(s, r, e, err);
		keep = e->out == &s->kept;
	} else if (st == PGRES_PIPELINE_ABORTED) {
		rc = smr_errf(err, SMR_EINTERNAL, "skipped after a failure while %s", e->what);
	} else {
		rc = pipe_fail(s, e, r, commit_sent, err);
	}
	if (e->kind == PE_PREPARE && st != PGRES_COMMAND_OK && e->generic)
		s->generic[e->generic - 1] = NULL;
	else if (e->kind == PE_PREPARE && st != PGRES_COMMAND_OK)
		s->prepared[e->q] = 0;
	if (!keep)
		PQclear(r);
	return rc;
}

/*
 * Reads the results of every entry sent so far, in order; returns the
 * first failure (err describes that one).  A dead connection stops it.
 */
static enum smr_rc pipe_drain(struct pg_store *s, struct smr_err *err)
{
	enum smr_rc rc = SMR_OK, one;
	int commit_sent = 0;
	PGresult *r;

	for (int i = 0; i < s->npipe; i++)
		commit_sent |= s->pipe[i].commit;
	while (s->pipe_read < s->npipe && !s->lost) {
		struct pipe_entry *e = &s->pipe[s->pipe_read++];

		r = get_result(s, commit_sent ? &s->spin_commit : &s->spin_read);
		if (!r) {
			one = pipe_fail(s, e, NULL, commit_sent, rc ? NULL : err);
			rc = rc ? rc : one;
			s->lost = 1;
			break;
		}
		one = pipe_result(s, e, r, commit_sent, rc ? NULL : err);
		rc = rc ? rc : one;
		if (e->kind != PE_SYNC && (r = PQgetResult(s->conn)) != NULL) {
			PQclear(r);   /* out of step with the server: start afresh */
			s->lost = 1;
		}
	}
	if (s->pipe_read == s->npipe)
		s->npipe = s->pipe_read = 0;
	return rc;
}

static enum smr_rc pipe_send_failed(struct pg_store *s, const char *what, struct smr_err *err)
{
	enum smr_rc rc = pg_fail(s, NULL, what, err);

	s->lost = 1;   /* whatever went out, the pipeline is not worth reading */
	return rc;
}

/* Room for n more entries: the list grows up to PIPE_MAX, then what is in flight is read. */
static enum smr_rc pipe_room(struct pg_store *s, int n, struct smr_err *err)
{
	if (s->npipe + n <= s->pipe_cap)
		return SMR_OK;
	if (s->npipe + n <= PIPE_MAX) {
		while (s->pipe_cap < s->npipe + n)
			s->pipe_cap = s->pipe_cap ? 2 * s->pipe_cap : 32;
		if (s->pipe_cap > PIPE_MAX)
			s->pipe_cap = PIPE_MAX;
		s->pipe = xrealloc(s->pipe, (size_t)s->pipe_cap * sizeof(*s->pipe));
		return SMR_OK;
	}
	if (!PQsendFlushRequest(s->conn) || PQflush(s->conn))
		return pipe_send_failed(s, "sending statements", err);
	return pipe_drain(s, err);
}

/* Sends a statement without parameters (BEGIN, COMMIT, ROLLBACK) in the pipeline. */
static enum smr_rc pipe_plain(struct pg_store *s, const char *sql, const struct pipe_entry *e,
			      struct smr_err *err)
{
	enum smr_rc rc = pipe_room(s, 1, err);

	if (rc)
		return rc;
	if (!PQsendQueryParams(s->conn, sql, 0, NULL, NULL, NULL, NULL, 0))
		return pipe_send_failed(s, e->what, err);
	s->pipe[s->npipe] = *e;
	s->pipe[s->npipe++].kind = PE_QUERY;
	return SMR_OK;
}

static char stmt_names[Q_COUNT][24];

static void name_statements(void)
{
	for (int q = 0; q < Q_COUNT; q++)
		snprintf(stmt_names[q], sizeof(stmt_names[q]), "smriti_%d", q);
}

/* The name statement q is prepared under on every connection (formatted once per process). */
static const char *stmt_name(enum stmt q)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, name_statements);
	return stmt_names[q];
}

/* Sends prepared statement q in the pipeline, preparing it first on this connection. */
static enum smr_rc pipe_send(struct pg_store *s, enum stmt q, const struct params *p,
			     const struct pipe_entry *e, struct smr_err *err)
{
	const char *name = stmt_name(q);
	enum smr_rc rc = pipe_room(s, 2, err);

	if (rc)
		return rc;
	if (!s->prepared[q]) {
		if (!PQsendPrepare(s->conn, name, stmt_sql[q], 0, NULL))
			return pipe_send_failed(s, e->what, err);
		s->pipe[s->npipe++] = (struct pipe_entry){ .kind = PE_PREPARE, .q = q,
							   .what = e->what };
		s->prepared[q] = 1;
	}
	if (!PQsendQueryPrepared(s->conn, name, p ? p->n : 0, p ? p->v : NULL, NULL, NULL, 0))
		return pipe_send_failed(s, e->what, err);
	s->pipe[s->npipe] = *e;
	s->pipe[s->npipe].kind = PE_QUERY;
	s->pipe[s->npipe++].q = q;
	return SMR_OK;
}

static enum smr_rc pipe_sync(struct pg_store *s, struct smr_err *err)
{
	enum smr_rc rc = pipe_room(s, 1, err);

	if (rc)
		return rc;
	if (!PQpipelineSync(s->conn))
		return pipe_send_failed(s, "sending statements", err);
	s->pipe[s->npipe++] = (struct pipe_entry){ .kind = PE_SYNC, .what = "ending a pipeline" };
	return SMR_OK;
}

/*
 * Leaves pipeline mode once every result is read; a pipeline that could
 * not be read to the end leaves a connection that the next call replaces.
 */
static void pipe_end(struct pg_store *s)
{
	if (s->pipe_read != s->npipe || !PQexitPipelineMode(s->conn))
		s->lost = 1;
	s->npipe = s->pipe_read = 0;
}

static enum smr_rc take_keep(struct pg_store *s, PGresult *r, struct pipe_entry *e,
			     struct smr_err *err)
{
	(void)e;
	(void)err;
	s->kept = r;
	return SMR_OK;
}

/* Hands the result take_keep kept to *out (caller PQclear()s), or drops it when rc failed. */
static enum smr_rc hand_kept(struct pg_store *s, enum smr_rc rc, PGresult **out)
{
	if (rc) {
		PQclear(s->kept);
		s->kept = NULL;
		return rc;
	}
	*out = s->kept;
	s->kept = NULL;
	return SMR_OK;
}

/* Has the server flush, and reads up to the result of the last entry sent (take_keep's). */
static enum smr_rc pipe_read_kept(struct pg_store *s, const char *what, PGresult **out,
				  struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;

	if (!PQsendFlushRequest(s->conn) || PQflush(s->conn))
		rc = pipe_send_failed(s, what, err);
	if (!rc)
		rc = pipe_drain(s, err);
	return hand_kept(s, rc, out);
}

/* run() inside a pipeline: sends q, has the server flush, and reads up to its result. */
static enum smr_rc pipe_run(struct pg_store *s, enum stmt q, const struct params *p,
			    PGresult **out, const char *what, struct smr_err *err)
{
	struct pipe_entry e = { .take = take_keep, .out = &s->kept, .what = what };
	enum smr_rc rc = pipe_send(s, q, p, &e, err);

	return rc ? rc : pipe_read_kept(s, what, out, err);
}

/*
 * A statement's first run on a connection, outside a transaction's
 * pipeline: its Parse goes out with its Bind and Execute and a Sync, one
 * round trip where PQprepare and PQexecPrepared took two.  A CLI command
 * on PostgreSQL is a new connection whose statements are nearly all
 * first runs.  fresh_begin enters pipeline mode; the caller sends the
 * statement with take_keep; fresh_end (given what sending returned) reads
 * every result, leaves pipeline mode and hands over the statement's.
 */
static enum smr_rc fresh_begin(struct pg_store *s, const char *what, struct smr_err *err)
{
	if (!PQenterPipelineMode(s->conn))
		return pg_fail(s, NULL, what, err);
	return SMR_OK;
}

static enum smr_rc fresh_end(struct pg_store *s, enum smr_rc rc, PGresult **out,
			     struct smr_err *err)
{
	if (!rc)
		rc = pipe_sync(s, err);
	if (!rc)
		rc = pipe_drain(s, err);
	pipe_end(s);
	if (!rc && !s->kept)
		rc = smr_errf(err, SMR_EUNAVAIL, "database connection lost; retry");
	return hand_kept(s, rc, out);
}

/*
 * Runs prepared statement q (preparing it first on this connection); *out
 * gets the rows (caller PQclear()s), or NULL on failure.
 */
static enum smr_rc run(struct pg_store *s, enum stmt q, const struct params *p,
		       PGresult **out, const char *what, struct smr_err *err)
{
	struct pipe_entry e = { .take = take_keep, .out = &s->kept, .what = what };
	PGresult *r;
	ExecStatusType st;
	enum smr_rc rc;

	*out = NULL;
	if (in_pipeline(s))
		return pipe_run(s, q, p, out, what, err);
	if (!s->prepared[q]) {
		rc = fresh_begin(s, what, err);
		if (!rc)
			rc = pipe_send(s, q, p, &e, err);
		return fresh_end(s, rc, out, err);
	}
	r = exec_prepared(s, stmt_name(q), p ? p->n : 0, p ? p->v : NULL);
	st = PQresultStatus(r);
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		*out = r;
		return SMR_OK;
	}
	rc = pg_fail(s, r, what, err);
	PQclear(r);
	return rc;
}

/* A read on its own (autocommit): retried once on a fresh connection if the old one died. */
static enum smr_rc read1(struct pg_store *s, enum stmt q, const struct params *p,
			 PGresult **out, const char *what, struct smr_err *err)
{
	struct smr_err first = SMR_ERR_INIT;
	enum smr_rc rc = ready(s, err);

	if (rc)
		return rc;
	rc = run(s, q, p, out, what, &first);
	if (rc && s->lost) {
		rc = reconnect(s, err);
		if (!rc)
			rc = run(s, q, p, out, what, err);
		return rc;
	}
	if (rc && err)
		*err = first;
	return rc;
}

/* A write that returns no rows. */
static enum smr_rc run_done(struct pg_store *s, enum stmt q, const struct params *p,
			    const char *what, struct smr_err *err)
{
	PGresult *r = NULL;
	enum smr_rc rc = run(s, q, p, &r, what, err);

	PQclear(r);
	return rc;
}

/* BEGIN, reconnecting first if needed; a BEGIN that met a dead connection is retried once. */
static enum smr_rc begin_isolation(struct pg_store *s, const char *sql, struct smr_err *err)
{
	struct smr_err first = SMR_ERR_INIT;
	enum smr_rc rc = ready(s, err);

	if (rc)
		return rc;
	rc = simple(s, sql, "starting a transaction", &first);
	if (rc && s->lost) {
		rc = reconnect(s, err);
		if (!rc)
			rc = simple(s, sql, "starting a transaction", err);
		return rc;
	}
	if (rc && err)
		*err = first;
	return rc;
}

static enum smr_rc begin(struct pg_store *s, struct smr_err *err)
{
	return begin_isolation(s, "BEGIN", err);
}

/* Rolls back (if the connection still lives) and passes rc through. */
static enum smr_rc rollback(struct pg_store *s, enum smr_rc rc)
{
	PGresult *r;

	if (PQstatus(s->conn) == CONNECTION_OK &&
	    PQtransactionStatus(s->conn) != PQTRANS_IDLE) {
		r = PQexec(s->conn, "ROLLBACK");
		PQclear(r);
	}
	return rc;
}

static enum smr_rc commit(struct pg_store *s, struct smr_err *err)
{
	enum smr_rc rc = simple(s, "COMMIT", "committing", err);

	if (rc && s->lost)
		return smr_errf(err, SMR_EUNAVAIL, "database connection lost while committing;"
				" the write may or may not have been saved");
	if (rc)
		return rollback(s, rc);
	return SMR_OK;
}

static enum smr_rc pg_txn_begin(struct store *st, struct smr_err *err)
{
	struct pg_store *s = P(st);
	enum smr_rc rc = ready(s, err);

	if (rc)
		return rc;
	if (!PQenterPipelineMode(s->conn))
		return pg_fail(s, NULL, "starting a transaction", err);
	rc = pipe_plain(s, "BEGIN",
			&(struct pipe_entry){ .what = "starting a transaction", .begin = 1 }, err);
	s->in_txn = !rc;
	return rc;
}

/*
 * COMMIT and a sync point, sent with the rest; the results are read in one
 * go.  When a statement failed, the server skipped the rest (COMMIT too)
 * and left the transaction aborted: only then does a ROLLBACK follow, one
 * more round trip on a failed write rather than a statement on every
 * write (a ROLLBACK sent with every write cost the server as much as the
 * HEAD update, a warning "no transaction in progress" included).
 */
static enum smr_rc pg_txn_commit(struct store *st, struct smr_err *err)
{
	struct pg_store *s = P(st);
	enum smr_rc rc;

	s->in_txn = 0;
	if (!in_pipeline(s))
		return commit(s, err);
	rc = pipe_plain(s, "COMMIT", &(struct pipe_entry){ .what = "committing", .commit = 1 },
			err);
	if (!rc)
		rc = pipe_sync(s, err);
	if (!rc || !s->lost) {
		enum smr_rc drained = pipe_drain(s, err);

		rc = rc ? rc : drained;
	}
	pipe_end(s);
	return rc && !s->lost ? rollback(s, rc) : rc;
}

static void pg_txn_rollback(struct store *st)
{
	struct pg_store *s = P(st);

	s->in_txn = 0;
	if (!in_pipeline(s)) {
		rollback(s, SMR_OK);
		return;
	}
	if (!s->lost && !pipe_sync(s, NULL) &&
	    !pipe_plain(s, "ROLLBACK", &(struct pipe_entry){ .what = "rolling back" }, NULL) &&
	    !pipe_sync(s, NULL))
		pipe_drain(s, NULL);
	pipe_end(s);
}

/* Has the server flush what it has done so far and reads it (txn_flush). */
static enum smr_rc pg_txn_flush(struct store *st, struct smr_err *err)
{
	struct pg_store *s = P(st);

	if (!in_pipeline(s) || s->pipe_read == s->npipe)
		return SMR_OK;
	if (!PQsendFlushRequest(s->conn) || PQflush(s->conn))
		return pipe_send_failed(s, "sending statements", err);
	return pipe_drain(s, err);
}

static int pg_txn_not_started(struct store *st)
{
	return P(st)->not_started;
}

/* ---- opening and migrations ---- */

static int pg_accepts(const char *dsn)
{
	return !strncmp(dsn, "postgres://", 11) || !strncmp(dsn, "postgresql://", 13);
}

/* The schema version recorded in schema_migrations (0 when there is none yet). */
static enum smr_rc schema_version(struct pg_store *s, int *version, struct smr_err *err)
{
	PGresult *r = PQexec(s->conn, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	enum smr_rc rc = SMR_OK;

	*version = 0;
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		*version = (int)col_int(r, 0, 0);
	else if (!state || strcmp(state, "42P01"))      /* 42P01: no such table yet */
		rc = pg_fail(s, r, "reading the schema version", err);
	PQclear(r);
	return rc;
}

static enum smr_rc apply_migration(struct pg_store *s, int version, struct smr_err *err)
{
	char num[16];
	const char *v[1] = { num };
	PGresult *r;
	enum smr_rc rc;

	rc = simple(s, postgres_migrations[version - 1], "migrating the schema", err);
	if (rc)
		return rc;
	snprintf(num, sizeof(num), "%d", version);
	r = PQexecParams(s->conn, "INSERT INTO schema_migrations (version) VALUES ($1::integer)",
			 1, NULL, v, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = pg_fail(s, r, "recording a migration", err);
	PQclear(r);
	return rc;
}

static enum smr_rc too_new(int version, int n, struct smr_err *err)
{
	return smr_errf(err, SMR_EINTERNAL,
			"database schema version %d is newer than this smriti (%d); upgrade smriti",
			version, n);
}

/*
 * Brings the schema up to date.  The common case (up to date) costs one
 * query; otherwise the migrations run in one transaction that holds an
 * advisory lock, so concurrent starters wait for each other instead of
 * racing, and the version is read again under the lock.
 */
/*
 * Before the migration that makes a checkpoint's hash unique: commits the
 * migrations so far, collapses the per-Space copies in transactions of
 * their own (rows_history_collapse, each batch locking its cursor row),
 * then takes the migration lock again and reads the version anew.
 */
static enum smr_rc collapse_history(struct pg_store *s, const char *lock, int *from,
				    int *version, struct smr_err *err)
{
	char held[64], free_it[64];
	enum smr_rc rc;

	/* the session's own hold keeps other starters waiting until the end */
	snprintf(held, sizeof(held), "SELECT pg_advisory_lock(%lld)", MIGRATION_LOCK);
	snprintf(free_it, sizeof(free_it), "SELECT pg_advisory_unlock(%lld)", MIGRATION_LOCK);
	rc = simple(s, held, "migrating the schema", err);
	if (!rc)
		rc = commit(s, err);
	if (!rc)
		rc = rows_history_collapse(&s->base, from, err);
	if (!rc)
		rc = simple(s, "BEGIN", "migrating the schema", err);
	if (!rc)
		rc = simple(s, lock, "migrating the schema", err);
	if (!rc)
		rc = simple(s, free_it, "migrating the schema", err);
	if (!rc)
		rc = schema_version(s, version, err);
	return rc;
}

#define MIGRATIONS ((int)(sizeof(postgres_migrations) / sizeof(postgres_migrations[0])))

/* Whether r, the open's first row (OPEN_CHECKS), finds nothing to migrate or convert. */
static int schema_current(const PGresult *r)
{
	return PQntuples(r) == 1 && col_int(r, 0, 2) == MIGRATIONS &&
	       !strcmp(PQgetvalue(r, 0, 3), "f") && !strcmp(PQgetvalue(r, 0, 4), "f");
}

static enum smr_rc migrate(struct pg_store *s, struct smr_err *err)
{
	int n = MIGRATIONS;
	int version, from;
	char lock[64];
	enum smr_rc rc = schema_version(s, &version, err);

	if (rc || version == n)
		return rc;
	if (version > n)
		return too_new(version, n, err);
	snprintf(lock, sizeof(lock), "SELECT pg_advisory_xact_lock(%lld)", MIGRATION_LOCK);
	rc = simple(s, "BEGIN", "migrating the schema", err);
	if (!rc)
		rc = simple(s, lock, "migrating the schema", err);
	if (!rc)
		rc = simple(s, "CREATE TABLE IF NOT EXISTS schema_migrations ("
			    " version INTEGER PRIMARY KEY,"
			    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
			    "migrating the schema", err);
	if (!rc)
		rc = schema_version(s, &version, err);
	if (!rc && version > n)
		rc = too_new(version, n, err);
	if (!rc)
		s->base.migrated_from = version < n ? version : 0;
	from = version;
	while (!rc && version < n) {
		/* a new database has no copies to collapse */
		if (from > 0 && strstr(postgres_migrations[version], HISTORY_MIGRATION_MARK)) {
			rc = collapse_history(s, lock, &from, &version, err);
			s->base.migrated_from = from;
			if (rc || version >= n ||
			    !strstr(postgres_migrations[version], HISTORY_MIGRATION_MARK))
				continue;
		}
		rc = apply_migration(s, version + 1, err);
		version++;
	}
	if (rc)
		return rollback(s, rc);
	return commit(s, err);
}

static void memo_clear(struct fields_memo *m)
{
	json_decref(m->fields);
	free(m->parent);
	free(m->merge_parent);
	free(m->title);
	free(m->summary);
	free(m->author);
	free(m->created_at);
	memset(m, 0, sizeof(*m));
}

static void pg_close(struct store *st)
{
	struct pg_store *s = P(st);

	if (!s)
		return;
	PQfinish(s->conn);
	memo_clear(&s->memo);
	free(s->head_ref);
	free(s->pipe);
	free(s->dsn);
	free(s);
}

/*
 * Connects.  The DSN may set any libpq parameter (sslmode,
 * target_session_attrs, connect_timeout, application_name ...); those before
 * "dbname" below are defaults it overrides, client_encoding is forced.
 */
static PGconn *connect_dsn(const char *dsn)
{
	static const char *const keys[] = {
		"connect_timeout", "application_name", "dbname", "client_encoding", NULL,
	};
	const char *values[] = { "10", "smriti", dsn, "UTF8", NULL };

	return PQconnectdbParams(keys, values, 1);
}

static enum smr_rc convert_content(struct pg_store *s, struct smr_err *err);

static enum smr_rc pg_open(const char *dsn, struct store **out, struct smr_err *err)
{
	struct pg_store *s = xcalloc(1, sizeof(*s));
	enum smr_rc rc;
	int current;
	char buf[256];

	s->base.ops = &store_postgres_ops;
	s->dsn = xstrdup(dsn);
	s->content_db = content_db_key(dsn);
	s->spin_read.window_us = SPIN_MIN_US;    /* a read is usually quick: spin from the first */
	s->conn = connect_dsn(dsn);
	if (!s->conn || PQstatus(s->conn) != CONNECTION_OK) {
		rc = smr_errf(err, SMR_EUNAVAIL, "cannot connect to the database: %s",
			      conn_message(s, buf, sizeof(buf)));
		pg_close(&s->base);
		return rc;
	}
	rc = setup_connection(s, &current, err);
	if (!rc && !current)
		rc = migrate(s, err);
	if (!rc && !current)
		rc = convert_content(s, err);
	if (!rc && !current)
		rc = rows_chain_backfill(&s->base, err);
	if (rc) {
		pg_close(&s->base);
		return rc;
	}
	*out = &s->base;
	return SMR_OK;
}

/* ---- Spaces ---- */

static enum smr_rc insert_space(struct pg_store *s, const struct space *sp,
				struct smr_err *err)
{
	struct params p = { .n = 0 };
	enum smr_rc rc;

	p_text(&p, sp->id);
	p_text(&p, sp->name);
	p_text(&p, sp->description ? sp->description : "");
	p_text(&p, sp->created_at);
	rc = run_done(s, Q_SPACE_INSERT, &p, "creating a space", err);
	if (rc && state_is(s, "23505"))
		return smr_errf(err, SMR_ECONFLICT, "a space named '%s' already exists", sp->name);
	return rc;
}

static enum smr_rc pg_space_create(struct store *st, const struct space *sp,
				   struct smr_err *err)
{
	return insert_space(P(st), sp, err);
}

/* Runs statement q with p; *n (NULL: not wanted) gets how many rows it touched. */
static enum smr_rc gc_run(struct pg_store *s, enum stmt q, const struct params *p, const char *what,
			  size_t *n, struct smr_err *err)
{
	PGresult *r = NULL;
	enum smr_rc rc = run(s, q, p, &r, what, err);

	if (!rc && n)
		*n = (size_t)strtoull(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return rc;
}

/* Reflog expiry when expire is set: what only expiring entries reached, then the entries. */
static enum smr_rc pg_gc_expire(struct pg_store *s, const char *before, const char *expire,
				struct gc_counts *n, struct smr_err *err)
{
	struct params p = { .n = 0 }, e = { .n = 0 };
	enum smr_rc rc;

	if (!expire)
		return SMR_OK;
	p_text(&p, before);
	p_text(&p, expire);
	p_text(&e, expire);
	rc = gc_run(s, Q_GC_UNREACHED, &p, "expiring the reflog", &n->unreached, err);
	return rc ? rc : gc_run(s, Q_GC_EXPIRE, &e, "expiring the reflog", &n->reflog, err);
}

static enum smr_rc pg_gc_prune(struct store *st, const char *before, const char *expire,
			       struct gc_counts *n, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	enum smr_rc rc = begin(s, err);

	if (rc)
		return rc;
	p_text(&p, before);
	rc = gc_run(s, Q_GC_LOCK, NULL, "locking the content tables", NULL, err);
	if (!rc)
		rc = pg_gc_expire(s, before, expire, n, err);
	if (!rc)
		rc = gc_run(s, Q_GC_REPOINT, &p, "pruning deleted spaces", NULL, err);
	if (!rc)
		rc = gc_run(s, Q_GC_SPACES, &p, "pruning deleted spaces", &n->spaces, err);
	if (!rc)
		rc = gc_run(s, Q_GC_ORPHANS, NULL, "pruning the search index", NULL, err);
	if (!rc)
		rc = gc_run(s, Q_GC_CHUNKS, NULL, "removing unused chunks", &n->chunks, err);
	if (!rc)
		rc = gc_run(s, Q_GC_ITEMS, NULL, "removing unused items", &n->items, err);
	/* what each Space reaches, folded again (store/sql.h): rows_reach_rebuild's statements */
	for (int q = Q_GC_TIPS_CLEAR; !rc && (n->unreached || n->reflog || n->spaces) &&
	     q <= Q_GC_ENTRIES_FILL; q++)
		rc = gc_run(s, (enum stmt)q, NULL, "folding what each Space reaches", NULL, err);
	if (rc)
		return rollback(s, rc);
	return commit(s, err);
}

/* ---- the search index ---- */

static enum smr_rc pg_search_has(struct store *st, const char *hash, int *yes,
				 struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	p_text(&p, hash);
	rc = run(P(st), Q_SEARCH_HAS, &p, &r, "reading the search index", err);
	if (!rc)
		*yes = PQntuples(r) > 0;
	PQclear(r);
	return rc;
}

/*
 * A statement without a result: inside store.c's pipelined transaction it
 * joins the pipeline (no round trip of its own; a failure arrives at
 * commit), else it runs now.
 */
static enum smr_rc write_stmt(struct pg_store *s, enum stmt q, const struct params *p,
			      const char *what, struct smr_err *err)
{
	if (in_pipeline(s))
		return pipe_send(s, q, p, &(struct pipe_entry){ .what = what }, err);
	return run_done(s, q, p, what, err);
}

static void text_element(struct buf *b, const char *p, size_t n);

/* The int[], bigint[] and text[] literals of v's fields, ordinals and words into b; caller releases b. */
static void search_literals(const struct search_put *v, size_t n, struct buf b[3])
{
	for (int k = 0; k < 3; k++)
		buf_addch(&b[k], '{');
	for (size_t i = 0; i < n; i++) {
		buf_addf(&b[0], "%s%d", i ? "," : "", v[i].field);
		buf_addf(&b[1], "%s%" PRId64, i ? "," : "", v[i].ordinal);
		if (i)
			buf_addch(&b[2], ',');
		text_element(&b[2], v[i].words, strlen(v[i].words));
	}
	for (int k = 0; k < 3; k++)
		buf_addch(&b[k], '}');
}

/*
 * Up to this many rows go one statement each (pipelined, on a cached plan);
 * more go in one Q_SEARCH_INSERT_AT_MANY, whose planning then costs less
 * than the statements it saves.
 */
#define SEARCH_ROWS_ONE_BY_ONE 8

static enum smr_rc pg_search_insert_at(struct store *st, const char *space_id,
				       const char *hash, const struct search_put *v, size_t n,
				       struct smr_err *err)
{
	struct buf b[3] = { BUF_INIT(0), BUF_INIT(0), BUF_INIT(0) };
	struct params p = { .n = 0 };
	enum smr_rc rc = SMR_OK;

	if (n <= SEARCH_ROWS_ONE_BY_ONE) {
		for (size_t i = 0; !rc && i < n; i++) {
			p.n = 0;
			p_text(&p, space_id);
			p_text(&p, hash);
			p_int(&p, v[i].field);
			p_int(&p, v[i].ordinal);
			p_text(&p, v[i].words);
			rc = write_stmt(P(st), Q_SEARCH_INSERT_AT, &p, "indexing for search", err);
		}
		return rc;
	}
	search_literals(v, n, b);
	p_text(&p, space_id);
	p_text(&p, hash);
	for (int k = 0; k < 3; k++)
		p_text(&p, b[k].ptr);
	rc = write_stmt(P(st), Q_SEARCH_INSERT_AT_MANY, &p, "indexing for search", err);
	for (int k = 0; k < 3; k++)
		buf_release(&b[k]);
	return rc;
}

static enum smr_rc pg_search_insert_turn(struct store *st, const char *session_id, int field,
					 const char *words, struct smr_err *err)
{
	struct params p = { .n = 0 };

	p_text(&p, session_id);
	p_int(&p, field);
	p_text(&p, words);
	return write_stmt(P(st), Q_SEARCH_INSERT_TURN, &p, "indexing for search", err);
}

static enum smr_rc pg_search_insert(struct store *st, int64_t commit_id, int64_t turn_id,
				    int field, int64_t ordinal, const char *words,
				    struct smr_err *err)
{
	struct params p = { .n = 0 };

	p_int_or_null(&p, commit_id);
	p_int_or_null(&p, turn_id);
	p_int(&p, field);
	p_int(&p, ordinal);
	p_text(&p, words);
	return write_stmt(P(st), Q_SEARCH_INSERT, &p, "indexing for search", err);
}

/*
 * The tsquery of f's words: each one a quoted lexeme (words have no quotes
 * or backslashes: see util/terms.h), ':*' after a prefix, joined by '&'.
 * No text of the user's reaches the tsquery syntax.  Caller frees.
 */
static char *ts_query(const struct search_filter *f)
{
	struct buf b = BUF_INIT(0);

	for (size_t i = 0; i < f->n_words; i++)
		buf_addf(&b, "%s'%s'%s", i ? " & " : "", f->words[i].word,
			 f->words[i].prefix ? ":*" : "");
	return buf_detach(&b, NULL);
}

/* The longest of f's words (the fewest rows hold it), "" when it has none; borrowed. */
static const char *longest_word(const struct search_filter *f)
{
	const char *w = "";

	for (size_t i = 0; i < f->n_words; i++)
		if (strlen(f->words[i].word) > strlen(w))
			w = f->words[i].word;
	return w;
}

static enum smr_rc pg_search(struct store *st, const struct search_filter *f,
			     const char *spaces_json, struct search_row **out, size_t *n,
			     struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	char *query = ts_query(f);
	PGresult *r = NULL;
	struct search_row *v;
	int rows;
	enum smr_rc rc;

	p_text(&p, query);
	p_text(&p, spaces_json);
	if (f->field)
		p_int(&p, store_field_code(f->field));
	else
		p_text(&p, NULL);
	p_text(&p, f->author);
	p_text(&p, f->since);
	p_text(&p, f->until);
	p_int(&p, (int64_t)f->limit);
	p_text(&p, longest_word(f));
	rc = read1(s, f->turns ? Q_SEARCH_TURNS : Q_SEARCH, &p, &r, "searching", err);
	free(query);
	if (rc)
		return rc;
	rows = PQntuples(r);
	v = xcalloc(rows ? (size_t)rows : 1, sizeof(*v));
	for (int i = 0; i < rows; i++) {
		static const int cols[SEARCH_TEXTS] = { 0, 1, 2, 3, 7, 8, 9, 10 };
		const char *text[SEARCH_TEXTS];
		size_t len[SEARCH_TEXTS];

		for (int k = 0; k < SEARCH_TEXTS; k++) {
			text[k] = PQgetisnull(r, i, cols[k]) ? NULL : PQgetvalue(r, i, cols[k]);
			len[k] = (size_t)PQgetlength(r, i, cols[k]);
		}
		search_row_texts(&v[i], text, len);
		v[i].seq = PQgetisnull(r, i, 4) ? 0 : col_int(r, i, 4);
		v[i].field = store_field_name((int)col_int(r, i, 5));
		v[i].ordinal = col_int(r, i, 6);
		v[i].commit_id = PQgetisnull(r, i, 12) ? 0 : col_int(r, i, 12);
		v[i].chain = PQgetisnull(r, i, 13) ? 0 : col_int(r, i, 13);
	}
	PQclear(r);
	*out = v;
	*n = (size_t)rows;
	return SMR_OK;
}

/* ---- the reflog ---- */

/* ---- hand-off notes ---- */

/* ---- a checkpoint's lists as items and chunks (store/content.h) ---- */

/* v as a bigint[] literal, "{1,-2,3}"; appended to b. */
static void ids_literal(struct buf *b, const int64_t *v, size_t n)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < n; i++)
		buf_addf(b, "%s%" PRId64, i ? "," : "", v[i]);
	buf_addch(b, '}');
}

/* One element of a text[] literal: quoted, its quotes and backslashes escaped. */
static void text_element(struct buf *b, const char *p, size_t n)
{
	buf_addch(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '"' || p[i] == '\\')
			buf_addch(b, '\\');
		buf_addch(b, p[i]);
	}
	buf_addch(b, '"');
}

/* v as a text[] literal, each element quoted; appended to b. */
static void texts_literal(struct buf *b, const char *const *v, size_t n)
{
	buf_addch(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addch(b, ',');
		text_element(b, v[i], strlen(v[i]));
	}
	buf_addch(b, '}');
}

/* A bigint[] as the server writes it ("{1,-2}"); NULL when it is not one. */
static int64_t *parse_ids(const char *t, size_t *n)
{
	size_t cap = 16, len = 0;
	int64_t *v;
	char *end;

	*n = 0;
	if (*t++ != '{')
		return NULL;
	v = xmalloc(cap * sizeof(*v));
	while (*t && *t != '}') {
		if (len == cap)
			v = xrealloc(v, (cap *= 2) * sizeof(*v));
		v[len++] = strtoll(t, &end, 10);
		if (end == t || (*end != ',' && *end != '}'))
			break;
		t = *end == ',' ? end + 1 : end;
	}
	if (*t != '}') {
		free(v);
		return NULL;
	}
	*n = len;
	return v;
}

/* Appends the text of body to every requested chunk cid is (ids may name one twice). */
static void add_body(const int64_t *ids, size_t n, int64_t cid, const char *body,
		     struct buf *out, size_t *counts)
{
	for (size_t j = 0; j < n; j++)
		if (ids[j] == cid) {
			if (counts[j]++)
				buf_addch(&out[j], ',');
			buf_adds(&out[j], body);
		}
}

/* Chunks ids[0..n) into out and counts from b when it holds every one of them; 1: it did. */
static int batch_serve(const struct batch_chunks *b, const int64_t *ids, size_t n,
		       struct buf *out, size_t *counts)
{
	size_t *at = xmalloc((n ? n : 1) * sizeof(*at));
	size_t j;

	for (j = 0; j < n; j++)
		if ((at[j] = content_ids_find(b->ids, b->n, ids[j])) == SIZE_MAX)
			break;
	for (size_t k = 0; j == n && k < n; k++) {
		buf_add(&out[k], b->text[at[k]].ptr, b->text[at[k]].len);
		counts[k] = b->count[at[k]];
	}
	free(at);
	return j == n;
}

/* content_fetch_fn: the chunks ids, with their items, in one statement. */
static enum smr_rc pg_fetch_chunks(void *arg, const int64_t *ids, size_t n, struct buf *out,
				   size_t *counts, struct smr_err *err)
{
	struct pg_store *s = arg;
	struct buf lit = BUF_INIT(0);
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	if (s->batch && batch_serve(s->batch, ids, n, out, counts))
		return SMR_OK;

	ids_literal(&lit, ids, n);
	p_text(&p, lit.ptr);
	rc = run(s, Q_CHUNKS_READ, &p, &r, "reading a checkpoint's items", err);
	buf_release(&lit);
	for (size_t j = 0; j < n; j++)
		counts[j] = 0;
	for (int i = 0; !rc && i < PQntuples(r); i++) {
		if (PQgetisnull(r, i, 1))
			rc = smr_errf(err, SMR_ENOTFOUND, "an item of a chunk is missing");
		else
			add_body(ids, n, col_int(r, i, 0), PQgetvalue(r, i, 1), out, counts);
	}
	PQclear(r);
	for (size_t j = 0; !rc && j < n; j++)
		if (!counts[j])
			rc = smr_errf(err, SMR_ENOTFOUND, "chunk %" PRId64 " is missing", ids[j]);
	return rc;
}

/* The chunk ids of the lists of rows [0, rows) of r, repeats and all (*n of them); caller frees. */
static int64_t *rows_chunk_ids(const PGresult *r, int rows, size_t *n)
{
	int64_t *ids = NULL, *row;
	size_t cap = 0, k;

	*n = 0;
	for (int i = 0; i < rows; i++) {
		if (PQgetisnull(r, i, CK_FIELDS) || PQgetisnull(r, i, CK_LISTS))
			continue;
		row = parse_ids(PQgetvalue(r, i, CK_LISTS), &k);
		if (row && content_row_valid(row, k)) {
			if (*n + k > cap)
				ids = xrealloc(ids, (cap = 2 * (*n + k)) * sizeof(*ids));
			memcpy(ids + *n, row + CONTENT_LISTS, (k - CONTENT_LISTS) * sizeof(*ids));
			*n += k - CONTENT_LISTS;
		}
		free(row);
	}
	return ids ? ids : xmalloc(sizeof(*ids));
}

/*
 * Has the chunks of rows [0, rows) of r that the chunk cache lacks fetched
 * in one statement, before read_whole reads the rows one by one: a log of
 * 20 checkpoints read from a new connection took 20 round trips for them.
 */
static enum smr_rc prefetch_lists(struct pg_store *s, const PGresult *r, int rows,
				  struct smr_err *err)
{
	size_t n = 0;
	int64_t *ids = rows_chunk_ids(r, rows, &n);
	enum smr_rc rc = n ? content_prefetch(ids, n, s->content_db, pg_fetch_chunks, s, err)
			   : SMR_OK;

	free(ids);
	return rc;
}

/*
 * Reads the chunks of rows [0, rows) of r fresh, in one statement, into b
 * (batch_release() after); 0 when that read failed or found one missing:
 * each row then reads its own, and meets the damage or the failure as it
 * did before.
 */
static int batch_read(struct pg_store *s, const PGresult *r, int rows, struct batch_chunks *b)
{
	struct smr_err e = SMR_ERR_INIT;
	size_t n = 0, m;

	memset(b, 0, sizeof(*b));
	b->ids = rows_chunk_ids(r, rows, &n);
	b->n = m = content_ids_unique(b->ids, n);
	b->text = xcalloc(m ? m : 1, sizeof(*b->text));
	b->count = xcalloc(m ? m : 1, sizeof(*b->count));
	for (size_t i = 0; i < m; i++)
		b->text[i] = (struct buf)BUF_INIT(0);
	return !m || pg_fetch_chunks(s, b->ids, m, b->text, b->count, &e) == SMR_OK;
}

static void batch_release(struct batch_chunks *b)
{
	for (size_t i = 0; i < b->n; i++)
		buf_release(&b->text[i]);
	free(b->text);
	free(b->count);
	free(b->ids);
}

/*
 * Sets the six lists of o (a row's parsed fields_text) from the row's
 * chunks (lists, as the server writes a bigint[]): null each when they
 * cannot be read (damage that fsck reports as a hash mismatch; any other
 * failure is kept for read_failed).
 */
static void add_lists(struct pg_store *s, json_t *o, const char *lists, const char *hash,
		      int fresh)
{
	size_t n = 0, len[CONTENT_LISTS];
	int64_t *row = parse_ids(lists, &n);
	char *text[CONTENT_LISTS] = { NULL };
	struct smr_err err = SMR_ERR_INIT;
	enum smr_rc rc = SMR_ENOTFOUND;
	json_t *v;

	if (row && content_row_valid(row, n))
		rc = content_read(row, n, s->content_db, fresh, pg_fetch_chunks, s, text, len, &err);
	if (rc && rc != SMR_ENOTFOUND && !s->read_rc) {
		s->read_rc = rc;
		s->read_err = err;
	}
	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		v = rc ? NULL : json_loadb(text[k], len[k], 0, NULL);
		json_object_set_new(o, checkpoint_list_fields[k], v ? v : json_null());
		free(text[k]);
	}
	if (!rc)
		content_remember(s->content_db, hash, row, n);
	free(row);
}

/* The text[] literals of ct's fresh chunks and of their items, each id once. */
static void fresh_literals(const struct content *ct, struct buf *chunk_ids, struct buf *chunk_lits,
			   struct buf *item_ids, struct buf *item_bodies)
{
	struct buf one = BUF_INIT(0);
	const struct content_chunk *ch;
	const struct content_item *it;
	struct strmap seen = STRMAP_INIT;
	char key[24];

	for (size_t i = 0; i < ct->n_chunks; i++) {
		ch = &ct->chunks[i];
		snprintf(key, sizeof(key), "c%" PRId64, ch->id);
		if (!ch->fresh || strmap_get(&seen, key, NULL))
			continue;
		strmap_put(&seen, key, 1);
		buf_addf(chunk_ids, "%s%" PRId64, chunk_ids->len > 1 ? "," : "", ch->id);
		buf_reset(&one);
		buf_addch(&one, '{');
		for (size_t j = 0; j < ch->n; j++) {
			it = &ct->items[ch->first + j];
			buf_addf(&one, "%s%" PRId64, j ? "," : "", it->id);
			snprintf(key, sizeof(key), "i%" PRId64, it->id);
			if (strmap_get(&seen, key, NULL))
				continue;
			strmap_put(&seen, key, 1);
			buf_addf(item_ids, "%s%" PRId64, item_ids->len > 1 ? "," : "", it->id);
			if (item_bodies->len > 1)
				buf_addch(item_bodies, ',');
			text_element(item_bodies, it->body, it->len);
		}
		buf_addch(&one, '}');
		if (chunk_lits->len > 1)
			buf_addch(chunk_lits, ',');
		text_element(chunk_lits, one.ptr, one.len);
	}
	strmap_release(&seen);
	buf_release(&one);
}

/*
 * Checks that the items sent (ids, bodies: text[] literals) are stored
 * with these bytes (Q_ITEMS_CHECK); a failure fails the write's
 * transaction in the server, pipelined or not.
 */
static enum smr_rc check_items(struct pg_store *s, const char *ids, const char *bodies,
			       struct smr_err *err)
{
	static const char what[] = "writing a checkpoint: an item stored with its id has other"
				   " bytes (two items share 64 bits of SHA-256; report this)";
	struct params p = { .n = 0 };
	enum smr_rc rc;

	p_text(&p, ids);
	p_text(&p, bodies);
	if (in_pipeline(s))
		return pipe_send(s, Q_ITEMS_CHECK, &p, &(struct pipe_entry){ .conflict = CHECK_FAILED,
				 .conflict_rc = SMR_EINTERNAL, .what = what }, err);
	rc = run_done(s, Q_ITEMS_CHECK, &p, what, err);
	if (rc && state_is(s, CHECK_FAILED))
		rc = smr_errf(err, SMR_EINTERNAL, "conflict while %s", what);
	return rc;
}

/* Writes ct's fresh chunks and the items of those not there yet, then checks the items. */
static enum smr_rc send_fresh(struct pg_store *s, const struct content *ct, struct smr_err *err)
{
	struct buf b[4] = { BUF_INIT(0), BUF_INIT(0), BUF_INIT(0), BUF_INIT(0) };
	struct params p = { .n = 0 };
	enum smr_rc rc = SMR_OK;

	for (int i = 0; i < 4; i++)
		buf_addch(&b[i], '{');
	fresh_literals(ct, &b[0], &b[1], &b[2], &b[3]);
	for (int i = 0; i < 4; i++)
		buf_addch(&b[i], '}');
	if (b[0].len > 2) {
		for (int i = 0; i < 4; i++)
			p_text(&p, b[i].ptr);
		rc = write_stmt(s, Q_CHUNKS_INSERT, &p, "writing a checkpoint's items", err);
		if (!rc)
			rc = check_items(s, b[2].ptr, b[3].ptr, err);
	}
	for (int i = 0; i < 4; i++)
		buf_release(&b[i]);
	return rc;
}

/*
 * c's lists cut into items and chunks and checked against c, what is not
 * stored yet sent, and *lists the row's bigint[] literal (caller frees).
 */
static enum smr_rc write_content(struct pg_store *s, const struct checkpoint *c,
				 const struct checkpoint_text *t, char **lists,
				 struct smr_err *err)
{
	struct buf b = BUF_INIT(0);
	struct content ct;
	enum smr_rc rc;

	*lists = NULL;
	content_of(&ct, c, t);
	content_mark_fresh(&ct, s->content_db, c->parent_hash);
	rc = content_verify(&ct, c, err);
	if (!rc)
		rc = send_fresh(s, &ct, err);
	if (!rc) {
		ids_literal(&b, ct.row, ct.n_row);
		*lists = buf_detach(&b, NULL);
		content_remember(s->content_db, c->hash, ct.row, ct.n_row);
	}
	content_release(&ct);
	return rc;
}

/* A new row's fields_text: its metadata alone (its lists are in its chunks); caller frees. */
static char *meta_text(const struct checkpoint *c, const struct checkpoint_text *t)
{
	struct buf b = BUF_INIT(0);
	char *m = NULL;

	buf_adds(&b, "{\"metadata\":");
	if (t && t->json[CONTENT_LISTS]) {
		buf_add(&b, t->json[CONTENT_LISTS], t->len[CONTENT_LISTS]);
	} else {
		m = c->metadata ? json_dumps(c->metadata, JSON_COMPACT | JSON_ENCODE_ANY |
					     JSON_REAL_PRECISION(17)) : NULL;
		buf_adds(&b, m ? m : "{}");
	}
	buf_addch(&b, '}');
	free(m);
	return buf_detach(&b, NULL);
}

/* ---- Checkpoints ---- */
/*
 * ---- converting the rows written before migration 11 ----
 *
 * As sqlite.c does: batch by batch, each one transaction that moves the
 * cursor (content_migration, locked FOR UPDATE, so two processes opening
 * at once take turns) with the rows it converted; a kill -9 loses at most
 * the batch under way.  A row's lists come from its fields_text, written
 * compact again item by item (what reads parse is the same either way),
 * and its fields_text keeps its metadata alone.  A row whose fields_text
 * does not parse stays as it is, for fsck to report.
 */
#define CONVERT_BATCH 1000

/* The lists of a parsed fields_text as compact text, for content_split; own[k] freed by the caller. */
static int convert_texts(json_t *o, char *own[CONTENT_LISTS], size_t len[CONTENT_LISTS])
{
	const json_t *list;

	for (size_t k = 0; k < CONTENT_LISTS; k++) {
		list = json_object_get(o, checkpoint_list_fields[k]);
		own[k] = json_is_array(list) ? json_dumps(list, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		len[k] = own[k] ? strlen(own[k]) : 0;
		if (!own[k])
			return -1;
	}
	return 0;
}

/* Converts row id of a Q_CONVERT_ROW result r (one row). */
static enum smr_rc convert_one(struct pg_store *s, const PGresult *r, int64_t id,
			       struct smr_err *err)
{
	json_t *o = json_loads(PQgetvalue(r, 0, 2), 0, NULL);
	struct checkpoint meta = { .metadata = json_object_get(o, "metadata") };
	char *own[CONTENT_LISTS] = { NULL }, *text = NULL;
	const char *texts[CONTENT_LISTS];
	size_t len[CONTENT_LISTS];
	struct buf lists = BUF_INIT(0);
	struct params p = { .n = 0 };
	struct content ct = { .n_row = 0 };
	enum smr_rc rc = SMR_OK;
	int ok = o && json_is_object(meta.metadata) && !convert_texts(o, own, len);

	for (size_t k = 0; k < CONTENT_LISTS; k++)
		texts[k] = own[k];
	if (ok && !content_split(&ct, texts, len)) {
		content_mark_fresh(&ct, s->content_db,
				   PQgetisnull(r, 0, 1) ? NULL : PQgetvalue(r, 0, 1));
		rc = send_fresh(s, &ct, err);
		ids_literal(&lists, ct.row, ct.n_row);
		text = meta_text(&meta, NULL);
		p_text(&p, lists.ptr);
		p_text(&p, text);
		p_int(&p, id);
		if (!rc)
			rc = run_done(s, Q_CONVERT_SET, &p, "converting a checkpoint", err);
		if (!rc)
			content_remember(s->content_db, PQgetvalue(r, 0, 0), ct.row, ct.n_row);
		content_release(&ct);
	}
	for (size_t k = 0; k < CONTENT_LISTS; k++)
		free(own[k]);
	free(text);
	buf_release(&lists);
	json_decref(o);
	return rc;
}

static enum smr_rc convert_row(struct pg_store *s, int64_t id, struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	p_int(&p, id);
	rc = run(s, Q_CONVERT_ROW, &p, &r, "converting a checkpoint", err);
	if (!rc && PQntuples(r) == 1 && !PQgetisnull(r, 0, 2))
		rc = convert_one(s, r, id, err);
	PQclear(r);
	return rc;
}

/* One batch in one transaction; *left 0 when the conversion is done. */
static enum smr_rc convert_batch(struct pg_store *s, int64_t *cursor, size_t *done, int *left,
				 struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL, *ids = NULL;
	int n = 0;
	enum smr_rc rc = begin(s, err);

	if (!rc)
		rc = run(s, Q_CONVERT_CURSOR, NULL, &r, "converting checkpoints", err);
	*left = !rc && PQntuples(r) == 1;
	if (*left) {
		*cursor = col_int(r, 0, 0);
		p_int(&p, *cursor);
		p_int(&p, CONVERT_BATCH);
		rc = run(s, Q_CONVERT_IDS, &p, &ids, "converting checkpoints", err);
		n = rc ? 0 : PQntuples(ids);
	}
	PQclear(r);
	for (int i = 0; !rc && i < n; i++)
		rc = convert_row(s, col_int(ids, i, 0), err);
	if (!rc && n) {
		*cursor = col_int(ids, n - 1, 0);
		p.n = 0;
		p_int(&p, *cursor);
		rc = run_done(s, Q_CONVERT_MOVE, &p, "converting checkpoints", err);
	} else if (!rc && *left) {
		rc = simple(s, "DELETE FROM content_migration", "converting checkpoints", err);
		*left = 0;
	}
	PQclear(ids);
	if (rc)
		return rollback(s, rc);
	*done += (size_t)n;
	return commit(s, err);
}

/* Converts what is left to convert, with a progress line on stderr per batch. */
static enum smr_rc convert_content(struct pg_store *s, struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	int64_t cursor = 0, total = 0;
	size_t done = 0, before;
	/* the common case, nothing left to convert, costs this one statement */
	enum smr_rc rc = run(s, Q_CONVERT_CURSOR, NULL, &r, "converting checkpoints", err);
	int left = !rc && PQntuples(r) == 1;

	if (left) {
		p_int(&p, col_int(r, 0, 0));
		PQclear(r);
		r = NULL;
		rc = run(s, Q_CONVERT_COUNT, &p, &r, "converting checkpoints", err);
		total = rc ? 0 : col_int(r, 0, 0);
	}
	PQclear(r);
	while (!rc && left) {
		before = done;
		rc = convert_batch(s, &cursor, &done, &left, err);
		if (!rc && done > before)
			fprintf(stderr, "smriti: storing each item once: %zu of %" PRId64
				" checkpoints converted\n", done, total);
	}
	return rc;
}


/*
 * One field of the parsed fields_text, a new reference (shared with o); a
 * damaged row gives null, which fsck reports.
 */
static json_t *field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v ? json_incref(v) : json_null();
}

/* Fills c's seven JSON fields from o, the parsed fields_text (NULL: damaged). */
static void fill_fields(struct checkpoint *c, json_t *o)
{
	c->decisions = field(o, "decisions");
	c->assumptions = field(o, "assumptions");
	c->tasks = field(o, "tasks");
	c->open_questions = field(o, "open_questions");
	c->entities = field(o, "entities");
	c->artifacts = field(o, "artifacts");
	c->metadata = field(o, "metadata");
}

/*
 * Fills c (not init'ed) from row but for its JSON fields; returns 1 when it
 * names a parent (or second parent) that does not exist.
 */
static int read_checkpoint_row(const PGresult *r, int row, struct checkpoint *c)
{
	memset(c, 0, sizeof(*c));
	c->hash = col_text(r, row, CK_HASH);
	c->parent_hash = col_text(r, row, CK_PARENT);
	c->merge_parent_hash = col_text(r, row, CK_MERGE);
	c->space = col_text(r, row, CK_SPACE);
	c->title = col_text(r, row, CK_TITLE);
	c->summary = col_text(r, row, CK_SUMMARY);
	c->author = col_text(r, row, CK_AUTHOR);
	c->created_at = col_text(r, row, CK_CREATED);
	return (!PQgetisnull(r, row, CK_PARENT_ID) && !c->parent_hash) ||
	       (!PQgetisnull(r, row, CK_MERGE_ID) && !c->merge_parent_hash);
}

/* The failure a read of chunks met since the last call (see pg_store.read_rc), cleared. */
static enum smr_rc read_failed(struct pg_store *s, struct smr_err *err)
{
	enum smr_rc rc = s->read_rc;

	if (rc && err)
		*err = s->read_err;
	s->read_rc = SMR_OK;
	return rc;
}

/*
 * The row's fields_text parsed, with its lists from its chunks when it has
 * them (fresh: none from the cache); a new reference, or NULL when it is
 * NULL or damaged.
 */
static json_t *row_fields(struct pg_store *s, const PGresult *r, int row, int fresh)
{
	json_t *o;

	if (PQgetisnull(r, row, CK_FIELDS))
		return NULL;
	o = json_loads(PQgetvalue(r, row, CK_FIELDS), 0, NULL);
	if (o && !PQgetisnull(r, row, CK_LISTS))
		add_lists(s, o, PQgetvalue(r, row, CK_LISTS), PQgetvalue(r, row, CK_HASH), fresh);
	return o;
}

/* Fills c (not init'ed) from row; returns 1 when it names a parent (or second parent) that does not exist. */
static int read_checkpoint(struct pg_store *s, const PGresult *r, int row, struct checkpoint *c,
			   int fresh)
{
	json_t *o = row_fields(s, r, row, fresh);
	int missing = read_checkpoint_row(r, row, c);

	fill_fields(c, o);
	json_decref(o);
	return missing;
}

/*
 * read_checkpoint, failing (c released) when a chunk could not be read for
 * another reason than damage (a lost connection: the read, and a write it
 * is part of, must fail, not go on with lists it did not read).
 */
static enum smr_rc read_whole(struct pg_store *s, const PGresult *r, int row,
			      struct checkpoint *c, int fresh, struct smr_err *err)
{
	enum smr_rc rc;

	read_failed(s, NULL);
	read_checkpoint(s, r, row, c, fresh);
	rc = read_failed(s, err);
	if (rc) {
		checkpoint_release(c);
		memset(c, 0, sizeof(*c));
	}
	return rc;
}

/* ---- the rows of store.c's writes, sent in its pipelined transaction ---- */

static enum smr_rc take_found(const PGresult *r, const struct pipe_entry *e, const char *kind,
			      struct smr_err *err)
{
	if (PQntuples(r) == 0)
		return smr_errf(err, SMR_ENOTFOUND, "no %s '%s'", kind, e->arg);
	return SMR_OK;
}

static enum smr_rc take_space_found(struct pg_store *s, PGresult *r, struct pipe_entry *e,
				    struct smr_err *err)
{
	(void)s;
	return take_found(r, e, "space", err);
}

static enum smr_rc take_session_found(struct pg_store *s, PGresult *r, struct pipe_entry *e,
				      struct smr_err *err)
{
	(void)s;
	return take_found(r, e, "session", err);
}

static enum smr_rc take_text(struct pg_store *s, PGresult *r, struct pipe_entry *e,
			     struct smr_err *err)
{
	(void)s;
	(void)err;
	*(char **)e->out = PQntuples(r) ? col_text(r, 0, 0) : NULL;
	return SMR_OK;
}

static enum smr_rc take_int(struct pg_store *s, PGresult *r, struct pipe_entry *e,
			    struct smr_err *err)
{
	(void)s;
	(void)err;
	if (PQntuples(r))
		*(int64_t *)e->out = col_int(r, 0, 0);
	return SMR_OK;
}

static enum smr_rc take_turn(struct pg_store *s, PGresult *r, struct pipe_entry *e,
			     struct smr_err *err)
{
	struct turn *t = e->out;

	(void)s;
	(void)err;
	t->id = col_int(r, 0, 0);
	t->seq = col_int(r, 0, 1);
	return SMR_OK;
}

/* A row statement of store.c's transaction: pipelined, or on its own outside one. */
static enum smr_rc row(struct pg_store *s, enum stmt q, const struct params *p,
		       const struct pipe_entry *e, struct smr_err *err)
{
	if (!in_pipeline(s))
		BUG("a row method of store.c outside its pipelined transaction");
	return pipe_send(s, q, p, e, err);
}

static enum smr_rc check_space(struct store *st, const char *space_id, const char *ref,
			       const char *name, struct smr_err *err)
{
	struct params p = { .n = 0 };

	p_text(&p, space_id);
	p_text(&p, ref);
	p_text(&p, name);
	return row(P(st), Q_SPACE_CHECK, &p, &(struct pipe_entry){ .conflict = CHECK_FAILED,
		   .conflict_rc = SMR_ENOTFOUND, .what = "checking a space" }, err);
}

/*
 * Locks the Space's HEAD ref (FOR NO KEY UPDATE), then, in new statements
 * that see what writers we waited for committed, reads HEAD into *hash and
 * checks it is expected: unless it is, the check fails and with it the
 * rest of the transaction.
 */
static enum smr_rc check_head(struct store *st, const char *space_id, const char *expected,
			      char **hash, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	struct pipe_entry e = { .take = take_space_found, .what = "reading HEAD" };
	enum smr_rc rc;

	snprintf(e.arg, sizeof(e.arg), "%s", space_id);
	p_text(&p, space_id);
	rc = row(s, Q_HEAD_LOCK, &p, &e, err);
	if (!rc)
		rc = row(s, Q_HEAD_READ, &p, &(struct pipe_entry){ .take = take_text, .out = hash,
								 .what = "reading HEAD" }, err);
	p_text(&p, expected);
	if (!rc)
		rc = row(s, Q_HEAD_CHECK, &p, &(struct pipe_entry){ .conflict = CHECK_FAILED,
								  .what = "checking HEAD" }, err);
	return rc;
}

/* Locks the Space's HEAD ref for this transaction and reads it (*id -1, *hash NULL: empty). */
static enum smr_rc lock_head(struct store *st, const char *space_id, int64_t *id,
			     char **hash, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	p_text(&p, space_id);
	rc = run(s, Q_HEAD_LOCK, &p, &r, "reading HEAD", err);
	if (!rc && PQntuples(r) == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no space '%s'", space_id);
	if (!rc)
		*id = col_int_or_neg(r, 0, 0);
	PQclear(r);
	if (rc || *id < 0)
		return rc;
	/* A new statement: it sees a HEAD committed while we waited for the lock. */
	p.n = 0;
	p_int(&p, *id);
	rc = run(s, Q_HASH_BY_ID, &p, &r, "reading HEAD", err);
	if (!rc && PQntuples(r) == 1)
		*hash = col_text(r, 0, 0);
	PQclear(r);
	return rc;
}

/* Inserts c on top of the HEAD check_head locked (pipelined). */
static enum smr_rc insert_on_head(struct store *st, const char *space_id,
				  const struct checkpoint *c, const struct checkpoint_text *ct,
				  struct smr_err *err)
{
	struct params p = { .n = 0 };
	char *text = meta_text(c, ct), *lists = NULL;
	enum smr_rc rc = write_content(P(st), c, ct, &lists, err);

	p_text(&p, space_id);
	p_text(&p, c->hash);
	p_text(&p, c->title ? c->title : "");
	p_text(&p, c->summary ? c->summary : "");
	p_text(&p, text);
	p_text(&p, c->author ? c->author : "");
	p_text(&p, c->created_at);
	p_text(&p, lists);
	if (!rc)
		rc = row(P(st), Q_COMMIT_NEW, &(struct params){ .n = 2, .v = { space_id, c->hash } },
			 &(struct pipe_entry){ .conflict = CHECK_FAILED, .what = "writing a checkpoint" },
			 err);
	if (!rc)
		rc = row(P(st), Q_COMMIT_INSERT_ON_HEAD, &p, &(struct pipe_entry){
			 .conflict = "23505", .what = "writing a checkpoint" }, err);
	free(text);
	free(lists);
	return rc;
}

static enum smr_rc commit_id(struct store *st, const char *space_id, const char *hash,
			    int64_t *id, struct smr_err *err);

/*
 * An insert that found its hash written already (the history is shared):
 * SMR_ECONFLICT when space_id holds it, else *id gets its row, which the
 * Space now takes on (the same checkpoint, written in another Space).
 */
static enum smr_rc written_before(struct store *st, const char *space_id, const char *hash,
				  int64_t *id, struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc = commit_id(st, space_id, hash, id, err);

	if (rc || *id >= 0)
		return rc ? rc : SMR_ECONFLICT;
	p_text(&p, hash);
	rc = run(P(st), Q_COMMIT_BY_HASH, &p, &r, "writing a checkpoint", err);
	if (!rc && PQntuples(r))
		*id = col_int(r, 0, 0);
	else if (!rc)
		rc = smr_errf(err, SMR_EINTERNAL, "checkpoint %.12s vanished while written", hash);
	PQclear(r);
	return rc;
}

/* The parameters $1..$10 of Q_COMMIT_INSERT and Q_COMMIT_INSERT_AS (text and lists borrowed). */
static void commit_params(struct params *p, const char *space_id, const struct checkpoint *c,
			  const char *text, const char *lists, int64_t parent_id,
			  int64_t merge_id)
{
	p_text(p, space_id);
	p_text(p, c->hash);
	p_int_or_null(p, parent_id);
	p_text(p, c->title ? c->title : "");
	p_text(p, c->summary ? c->summary : "");
	p_text(p, text);
	p_text(p, c->author ? c->author : "");
	p_text(p, c->created_at);
	p_int_or_null(p, merge_id);
	p_text(p, lists);
}

static enum smr_rc insert_commit(struct store *st, const char *space_id,
				 const struct checkpoint *c, const struct checkpoint_text *ct,
				 int64_t parent_id, int64_t merge_id, int64_t *new_id,
				 struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	char *text = meta_text(c, ct), *lists = NULL;
	PGresult *r = NULL;
	enum smr_rc rc = write_content(s, c, ct, &lists, err);

	if (rc) {
		free(text);
		return rc;
	}
	commit_params(&p, space_id, c, text, lists, parent_id, merge_id);
	rc = run(s, Q_COMMIT_INSERT, &p, &r, "writing a checkpoint", err);
	if (rc && state_is(s, "23505"))
		rc = SMR_ECONFLICT;
	if (!rc && PQntuples(r))
		*new_id = col_int(r, 0, 0);
	else if (!rc)
		rc = written_before(st, space_id, c->hash, new_id, err);
	PQclear(r);
	free(text);
	free(lists);
	return rc;
}

/* One round trip for an import's batch: see store_ops.commit_reserve. */
static enum smr_rc reserve_commits(struct store *st, const char *const *hashes, size_t n,
				   int64_t *ids, struct smr_err *err)
{
	struct buf b = BUF_INIT(0);
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	texts_literal(&b, hashes, n);
	p_text(&p, b.ptr);
	rc = run(P(st), Q_COMMIT_RESERVE, &p, &r, "writing checkpoints", err);
	if (!rc && (size_t)PQntuples(r) != n)
		rc = smr_errf(err, SMR_EINTERNAL, "reserving rows for %zu checkpoints gave %d",
			      n, PQntuples(r));
	for (size_t i = 0; !rc && i < n; i++)
		ids[i] = col_int_or_neg(r, (int)i, 0);
	PQclear(r);
	buf_release(&b);
	return rc;
}

/* insert_commit as row id, which reserve_commits gave (pipelined: nothing to read back). */
static enum smr_rc insert_commit_as(struct store *st, const char *space_id,
				    const struct checkpoint *c, const struct checkpoint_text *ct,
				    int64_t id, int64_t parent_id, int64_t merge_id,
				    struct smr_err *err)
{
	struct params p = { .n = 0 };
	char *text = meta_text(c, ct), *lists = NULL;
	enum smr_rc rc = write_content(P(st), c, ct, &lists, err);

	commit_params(&p, space_id, c, text, lists, parent_id, merge_id);
	p_int(&p, id);
	if (!rc)
		rc = row(P(st), Q_COMMIT_INSERT_AS, &p, &(struct pipe_entry){
			 .conflict = "23505", .what = "writing a checkpoint" }, err);
	free(text);
	free(lists);
	return rc;
}

static enum smr_rc move_head_to(struct store *st, const char *space_id, const char *hash,
				struct smr_err *err)
{
	struct params p = { .n = 0 };

	p_text(&p, space_id);
	p_text(&p, hash);
	return row(P(st), Q_HEAD_MOVE_TO, &p, &(struct pipe_entry){ .what = "moving HEAD" }, err);
}

static enum smr_rc move_head(struct store *st, const char *space_id, int64_t commit_id,
			     struct smr_err *err)
{
	struct params p = { .n = 0 };

	p_int(&p, commit_id);
	p_text(&p, space_id);
	return write_stmt(P(st), Q_HEAD_MOVE, &p, "moving HEAD", err);
}

/*
 * Fills what c lacks from a Q_HEAD_GET row (read_checkpoint_row filled the
 * rest): from the memo when the row is its checkpoint (the server left
 * those columns out), else from the row, which then becomes the memo.
 */
static void head_fields(struct pg_store *s, const PGresult *r, struct checkpoint *c)
{
	struct fields_memo *m = &s->memo;
	json_t *o;

	/* an empty Space, or a hash too long for the memo: read from the row, not memoised */
	if (!c->hash || strlen(c->hash) >= sizeof(m->hash)) {
		o = row_fields(s, r, 0, 0);
		fill_fields(c, o);
		json_decref(o);
		return;
	}
	if (!m->fields || strcmp(m->hash, c->hash) || !PQgetisnull(r, 0, CK_FIELDS)) {
		memo_clear(m);
		m->fields = row_fields(s, r, 0, 0);
		if (s->read_rc) {   /* not read (pg_head_get fails): not memoised */
			json_decref(m->fields);
			m->fields = NULL;
			fill_fields(c, NULL);
			return;
		}
		if (!m->fields)
			m->fields = json_object();     /* damaged: every field null */
		strcpy(m->hash, c->hash);
		m->parent = xstrdup(c->parent_hash);
		m->merge_parent = xstrdup(c->merge_parent_hash);
		m->title = xstrdup(c->title);
		m->summary = xstrdup(c->summary);
		m->author = xstrdup(c->author);
		m->created_at = xstrdup(c->created_at);
	} else {
		c->parent_hash = xstrdup(m->parent);
		c->merge_parent_hash = xstrdup(m->merge_parent);
	}
	/* the row's: a copy in another Space has the same content under another id */
	m->id = col_int(r, 0, CK_ID);
	m->file = col_int(r, 0, HC_FILE);
	fill_fields(c, m->fields);   /* shared with the memo: read-only (store_head_get) */
}

/*
 * The statement that asks whether the HEAD of Space ref is still the memo's
 * checkpoint (HEAD_QUICK), by name or by id as the last read found it, when
 * the last HEAD read named that Space and memoised a checkpoint; else
 * Q_COUNT.
 */
static enum stmt quick_stmt(const struct pg_store *s, const char *ref)
{
	if (!s->memo.fields || !s->head_ref || strcmp(s->head_ref, ref))
		return Q_COUNT;
	return s->head_by_name ? Q_HEAD_BY_NAME : Q_HEAD_BY_ID;
}

/*
 * Fills c (not init'ed) from a HEAD_QUICK row when it answers the read: a
 * Space whose HEAD is the memo's checkpoint (shared fields, as head_fields)
 * or that has none.  Returns 0 when it did, -1 when HEAD_COLS must read
 * HEAD (no such Space found that way, or HEAD moved).
 */
static int quick_head(struct pg_store *s, const PGresult *r, struct checkpoint *c)
{
	struct fields_memo *m = &s->memo;
	int empty;

	if (PQntuples(r) != 1)
		return -1;
	empty = PQgetisnull(r, 0, HQ_ID);
	if (!empty && (col_int(r, 0, HQ_ID) != m->id || col_int(r, 0, HQ_FILE) != m->file))
		return -1;
	memset(c, 0, sizeof(*c));
	c->space = col_text(r, 0, HQ_SPACE);
	if (empty) {
		fill_fields(c, NULL);
		return 0;
	}
	c->hash = xstrdup(m->hash);
	c->parent_hash = xstrdup(m->parent);
	c->merge_parent_hash = xstrdup(m->merge_parent);
	c->title = xstrdup(m->title);
	c->summary = xstrdup(m->summary);
	c->author = xstrdup(m->author);
	c->created_at = xstrdup(m->created_at);
	fill_fields(c, m->fields);   /* shared with the memo: read-only (store_head_get) */
	return 0;
}

/* Remembers that ref named c's Space, and how it was found (a name match wins). */
static void head_remember(struct pg_store *s, const char *ref, const struct checkpoint *c)
{
	if (!s->head_ref || strcmp(s->head_ref, ref)) {
		free(s->head_ref);
		s->head_ref = xstrdup(ref);
	}
	s->head_by_name = c->space && !strcmp(c->space, ref);
}

/*
 * One round trip, and in the server the least work when HEAD is the
 * checkpoint this handle's last read of the Space found (or has none):
 * HEAD_QUICK asks whether it still is, HEAD_COLS reads HEAD whole.  When
 * the quick statement finds HEAD moved, HEAD_COLS reads it in a second
 * round trip; so that a Space whose HEAD moves between most reads (a
 * writer reading back what it wrote) does not pay two each time, a read
 * that found HEAD moved is followed by a whole read, and the quick
 * statement comes back once a whole read finds HEAD where it was.  Every
 * read asks the server, in a statement sent after the call began.
 */
static enum smr_rc pg_head_get(struct store *st, const char *space, struct checkpoint *out,
			       struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	enum stmt q = quick_stmt(s, space);
	PGresult *r = NULL;
	enum smr_rc rc;

	p_text(&p, space);
	if (q != Q_COUNT && !s->quick_off) {
		rc = read1(s, q, &p, &r, "reading HEAD", err);
		if (!rc && !quick_head(s, r, out)) {
			PQclear(r);
			return SMR_OK;   /* same Space, same way: head_remember holds */
		}
		PQclear(r);
		r = NULL;
		if (rc)
			return rc;
	}
	p_text(&p, s->memo.fields ? s->memo.hash : NULL);
	rc = read1(s, Q_HEAD_GET, &p, &r, "reading HEAD", err);
	if (!rc && PQntuples(r) == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no space '%s'", space);
	if (!rc) {
		/* HEAD moved since this Space's last read: not where the memo's checkpoint is */
		s->quick_off = q != Q_COUNT && !PQgetisnull(r, 0, CK_HASH) &&
			       !PQgetisnull(r, 0, CK_FIELDS);
		read_checkpoint_row(r, 0, out);
		read_failed(s, NULL);
		head_fields(s, r, out);
		rc = read_failed(s, err);
		if (rc)
			checkpoint_release(out);
		else
			head_remember(s, space, out);
	}
	PQclear(r);
	return rc;
}

static enum smr_rc pg_checkpoint_get(struct store *st, const char *space_id, const char *hash,
				     struct checkpoint *out, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	if (space_id)
		p_text(&p, space_id);
	p_text(&p, hash);
	rc = read1(s, space_id ? Q_CKPT_IN_SPACE : Q_CKPT_ANY, &p, &r, "reading a checkpoint",
		   err);
	if (!rc && PQntuples(r) == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s", hash);
	if (!rc)
		rc = read_whole(s, r, 0, out, 0, err);
	PQclear(r);
	return rc;
}

/*
 * store_checkpoints_each: every row in one statement and their chunks in
 * one more (prefetch_lists), then one checkpoint parsed at a time.  The
 * history's page with its changes read 400 checkpoints and their parents
 * a statement and a chunk read each: 800 round trips.
 */
static enum smr_rc pg_checkpoints_each(struct store *st, const char *const *hashes, size_t n,
				       store_each_fn fn, void *ctx, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct buf lit = BUF_INIT(0);
	struct params p = { .n = 0 };
	struct strmap row_of = STRMAP_INIT;
	struct checkpoint c;
	PGresult *r = NULL;
	size_t row;
	enum smr_rc rc;
	int stop = 0;

	if (!n)
		return SMR_OK;
	texts_literal(&lit, hashes, n);
	p_text(&p, lit.ptr);
	rc = read1(s, Q_CKPT_ANY_MANY, &p, &r, "reading checkpoints", err);
	buf_release(&lit);
	if (!rc)
		rc = prefetch_lists(s, r, PQntuples(r), err);
	for (int i = 0; !rc && i < PQntuples(r); i++)
		strmap_put(&row_of, PQgetvalue(r, i, CK_HASH), (size_t)i);
	for (size_t i = 0; !rc && !stop && i < n; i++) {
		memset(&c, 0, sizeof(c));
		if (!strmap_get(&row_of, hashes[i], &row)) {
			stop = fn(i, NULL, ctx);
			continue;
		}
		rc = read_whole(s, r, (int)row, &c, 0, err);
		if (!rc)
			stop = fn(i, &c, ctx);
		checkpoint_release(&c);
	}
	strmap_release(&row_of);
	PQclear(r);
	return rc;
}

static enum smr_rc pg_checkpoint_log(struct store *st, const char *space_id, const char *hash,
				     size_t limit, struct checkpoint **out, size_t *n,
				     struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	struct checkpoint *v;
	int rows;
	enum smr_rc rc;

	p_text(&p, space_id);
	p_text(&p, hash);
	p_int(&p, (int64_t)limit);
	rc = read1(s, Q_LOG, &p, &r, "reading the log", err);
	if (rc)
		return rc;
	rows = PQntuples(r);
	if (!rows) {
		PQclear(r);
		return smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	}
	rc = prefetch_lists(s, r, rows, err);
	v = xcalloc((size_t)rows, sizeof(*v));
	for (int i = 0; !rc && i < rows; i++)
		rc = read_whole(s, r, i, &v[i], 0, err);
	PQclear(r);
	if (rc) {
		checkpoints_free(v, (size_t)rows);
		return rc;
	}
	*out = v;
	*n = (size_t)rows;
	return SMR_OK;
}

/* Calls fn on each row of one batch; *last gets the last row id, *stop fn's verdict. */
static int scan_batch(struct pg_store *s, const PGresult *r, store_scan_fn fn, void *ctx,
		      int64_t *last)
{
	/* a chunk not read for another reason than damage ends the scan: see pg_checkpoint_scan */
	struct checkpoint c;
	struct batch_chunks b;
	int missing, stop = 0;

	/* the batch's chunks in one statement, not one a row (fsck: 159 us a checkpoint) */
	if (batch_read(s, r, PQntuples(r), &b))
		s->batch = &b;
	for (int i = 0; i < PQntuples(r) && !stop; i++) {
		missing = read_checkpoint(s, r, i, &c, 1);   /* fresh: fsck reads what is stored */
		*last = col_int(r, i, CK_ID);
		stop = s->read_rc ? 1 : fn(&c, missing, ctx);
		checkpoint_release(&c);
	}
	s->batch = NULL;
	batch_release(&b);
	return stop;
}

/* The next (up to) batch ids of column 0 of r from *at on, as a PostgreSQL array literal. */
static char *id_array(const PGresult *r, int *at, int batch)
{
	struct buf b = BUF_INIT(0);
	int n = PQntuples(r);

	buf_addch(&b, '{');
	for (int i = 0; i < batch && *at < n; i++, (*at)++)
		buf_addf(&b, "%s%s", i ? "," : "", PQgetvalue(r, *at, 0));
	buf_addch(&b, '}');
	return buf_detach(&b, NULL);
}

/* The ids first, then their rows in batches, inside one read-only snapshot. */
static enum smr_rc pg_checkpoint_scan(struct store *st, const char *space_id,
				      store_scan_fn fn, void *ctx, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p;
	PGresult *r = NULL, *ids = NULL;
	int64_t last = 0;
	int stop = 0, n_ids = 0, at = 0;
	char *list;
	enum smr_rc rc;

	rc = begin_isolation(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err);
	read_failed(s, NULL);
	p.n = 0;
	if (space_id)
		p_text(&p, space_id);
	if (!rc)
		rc = run(s, space_id ? Q_SCAN_IDS : Q_SCAN_ALL_IDS, &p, &ids, "scanning checkpoints",
			 err);
	n_ids = rc ? 0 : PQntuples(ids);
	while (!rc && !stop && at < n_ids) {
		list = id_array(ids, &at, SCAN_BATCH);
		p.n = 0;
		if (space_id)
			p_text(&p, space_id);
		p_text(&p, list);
		rc = run(s, space_id ? Q_SCAN : Q_SCAN_ALL, &p, &r, "scanning checkpoints", err);
		free(list);
		if (rc)
			break;
		stop = scan_batch(s, r, fn, ctx, &last);
		PQclear(r);
		rc = read_failed(s, err);
	}
	PQclear(ids);
	if (rc)
		return rollback(s, rc);
	return commit(s, err);
}

static enum smr_rc commit_id(struct store *st, const char *space_id, const char *hash,
			    int64_t *id, struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	p_text(&p, space_id);
	p_text(&p, hash);
	rc = run(P(st), Q_COMMIT_ID, &p, &r, "looking up a checkpoint", err);
	if (!rc)
		*id = PQntuples(r) && !PQgetisnull(r, 0, 0) ? col_int(r, 0, 0) : -1;
	PQclear(r);
	return rc;
}

/* pg_checkpoint_get inside a transaction: a lost connection is an error, not a retry. */
static enum smr_rc commit_read(struct store *st, const char *space_id, const char *hash,
			       struct checkpoint *out, struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	p_text(&p, space_id);
	p_text(&p, hash);
	rc = run(P(st), Q_CKPT_IN_SPACE, &p, &r, "reading a checkpoint", err);
	if (!rc && PQntuples(r) == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s", hash);
	if (!rc)
		rc = read_whole(P(st), r, 0, out, 0, err);
	PQclear(r);
	return rc;
}

static enum smr_rc space_insert(struct store *st, const struct space *sp, struct smr_err *err)
{
	return insert_space(P(st), sp, err);
}

static enum smr_rc commit_links(struct store *st, const char *space_id, const char *hash,
				char **parent, char **merge_parent, char **created_at,
				struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;

	*parent = *merge_parent = *created_at = NULL;
	p_text(&p, space_id);
	p_text(&p, hash);
	rc = run(s, Q_COMMIT_LINKS, &p, &r, "reading a checkpoint's parents", err);
	if (!rc && PQntuples(r) == 0)
		rc = smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	if (!rc) {
		*parent = col_text(r, 0, 0);
		*merge_parent = col_text(r, 0, 1);
		*created_at = col_text(r, 0, 2);
	}
	PQclear(r);
	return rc;
}

static enum smr_rc commit_ancestry(struct store *st, const char *space_id, const char *hash,
				   json_t *into, struct smr_err *err)
{
	struct params p = { .n = 0 };
	PGresult *r = NULL;
	enum smr_rc rc;
	int rows;

	p_text(&p, space_id);
	p_text(&p, hash);
	rc = read1(P(st), Q_COMMIT_ANCESTRY, &p, &r, "reading a checkpoint's ancestry", err);
	if (rc)
		return rc;
	rows = PQntuples(r);
	for (int i = 0; i < rows; i++)
		json_object_set_new(into, PQgetvalue(r, i, 0), json_string(PQgetvalue(r, i, 1)));
	PQclear(r);
	if (!rows)
		return smr_errf(err, SMR_ENOTFOUND, "no checkpoint %s in this space", hash);
	return SMR_OK;
}

/* ---- sessions and turns ---- */

/*
 * Locks the session row, then reads its last sequence number and checks it
 * in new statements, which see every turn committed by writers we waited
 * for.
 */
static enum smr_rc lock_last_seq(struct store *st, const char *session_id,
				 int64_t expected_last, int64_t *last, struct smr_err *err)
{
	struct pg_store *s = P(st);
	struct params p = { .n = 0 };
	struct pipe_entry e = { .take = take_session_found, .what = "reading a session" };
	enum smr_rc rc;

	snprintf(e.arg, sizeof(e.arg), "%s", session_id);
	p_text(&p, session_id);
	rc = row(s, Q_SESSION_LOCK, &p, &e, err);
	if (!rc)
		rc = row(s, Q_LAST_SEQ, &p, &(struct pipe_entry){ .take = take_int, .out = last,
								.what = "reading a session" }, err);
	p_int(&p, expected_last < 0 ? -1 : expected_last);
	if (!rc)
		rc = row(s, Q_SEQ_CHECK, &p, &(struct pipe_entry){ .conflict = CHECK_FAILED,
								 .what = "checking a session" }, err);
	return rc;
}

static enum smr_rc insert_turn(struct store *st, struct turn *t, struct smr_err *err)
{
	struct params p = { .n = 0 };

	p_text(&p, t->session_id);
	p_text(&p, t->role);
	p_text(&p, t->content);
	p_text(&p, t->provider);
	p_text(&p, t->model);
	p_int_or_null(&p, t->prompt_tokens);
	p_int_or_null(&p, t->completion_tokens);
	p_int_or_null(&p, t->latency_ms);
	p_text(&p, t->error);
	p_text(&p, t->created_at);
	p_text(&p, t->status);
	p_text(&p, t->author);
	p_int_or_null(&p, t->has_parent ? t->parent_seq : -1);
	return row(P(st), Q_TURN_INSERT, &p, &(struct pipe_entry){ .take = take_turn, .out = t,
		   .what = "writing a turn" }, err);
}

/* ---- generations ---- */

/* ---- portable SQL (store/sql.h) ---- */

/* The slot of sql on this connection (its prepared name into name); 1 when it is prepared there. */
static int generic_find(struct pg_store *s, const char *sql, char name[24], int *slot)
{
	int i;

	for (i = 0; i < GENERIC_MAX && s->generic[i] && s->generic[i] != sql; i++)
		;
	if (i == GENERIC_MAX)
		BUG("more than %d sql_text statements: raise GENERIC_MAX", GENERIC_MAX);
	snprintf(name, 24, "smriti_g%d", i);
	*slot = i;
	return s->generic[i] != NULL;
}

/* Sends sql in the pipeline as entry e, preparing it first on this connection. */
static enum smr_rc generic_send(struct pg_store *s, const char *sql, const char *const *params,
				int n, const struct pipe_entry *e, struct smr_err *err)
{
	char name[24];
	int slot;
	enum smr_rc rc = pipe_room(s, 2, err);

	if (rc)
		return rc;
	if (!generic_find(s, sql, name, &slot)) {
		if (!PQsendPrepare(s->conn, name, sql, 0, NULL))
			return pipe_send_failed(s, e->what, err);
		s->pipe[s->npipe++] = (struct pipe_entry){ .kind = PE_PREPARE, .generic = slot + 1,
							   .what = e->what };
		s->generic[slot] = sql;
	}
	if (!PQsendQueryPrepared(s->conn, name, n, params, NULL, NULL, 0))
		return pipe_send_failed(s, e->what, err);
	s->pipe[s->npipe++] = *e;
	return SMR_OK;
}

/*
 * sql_text inside store.c's pipelined transaction: sends sql (preparing it
 * first on this connection) as a row of it.  SQL_ROW: with the rest, its
 * failure reported at txn_commit (*out stays NULL); else read at once, one
 * round trip, as run() does.
 */
static enum smr_rc generic_row(struct pg_store *s, enum sql_mode mode, const char *sql,
			       const char *const *params, int n, const char *what,
			       PGresult **out, struct smr_err *err)
{
	struct pipe_entry e = { .kind = PE_QUERY, .what = what, .conflict = "23505" };
	enum smr_rc rc;

	if (mode != SQL_ROW) {
		e.take = take_keep;
		e.out = &s->kept;
	}
	rc = generic_send(s, sql, params, n, &e, err);
	if (rc || mode == SQL_ROW)
		return rc;
	rc = pipe_read_kept(s, what, out, err);
	if (!rc && !*out)     /* the connection died before: nothing was read */
		rc = smr_errf(err, SMR_EUNAVAIL, "database connection lost; retry");
	return rc;
}

static enum smr_rc generic_run(struct pg_store *s, const char *sql, const char *const *params,
			       int n, const char *what, PGresult **out, struct smr_err *err)
{
	struct pipe_entry e = { .kind = PE_QUERY, .take = take_keep, .out = &s->kept,
				.what = what };
	char name[24];
	PGresult *r;
	ExecStatusType st;
	enum smr_rc rc;
	int slot;

	if (!generic_find(s, sql, name, &slot)) {
		rc = fresh_begin(s, what, err);
		if (!rc)
			rc = generic_send(s, sql, params, n, &e, err);
		rc = fresh_end(s, rc, out, err);
		return rc && state_is(s, "23505") ? SMR_ECONFLICT : rc;
	}
	r = exec_prepared(s, name, n, params);
	st = PQresultStatus(r);
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		*out = r;
		return SMR_OK;
	}
	rc = pg_fail(s, r, what, err);
	PQclear(r);
	if (state_is(s, "23505"))
		return SMR_ECONFLICT;
	return rc;
}

/* SQL_AUTO: autocommit, once more on a fresh connection when the old one had died. */
static enum smr_rc generic_auto(struct pg_store *s, const char *sql, const char *const *params,
				int n, const char *what, PGresult **out, struct smr_err *err)
{
	struct smr_err first = SMR_ERR_INIT;
	enum smr_rc rc = ready(s, err);

	if (rc)
		return rc;
	rc = generic_run(s, sql, params, n, what, out, &first);
	if (rc && s->lost) {
		rc = reconnect(s, err);
		if (!rc)
			rc = generic_run(s, sql, params, n, what, out, err);
	} else if (rc && err && rc != SMR_ECONFLICT) {
		*err = first;
	}
	return rc;
}

/* SQL_TXN: BEGIN (retried on a dead connection), the statement, COMMIT; never sent twice. */
static enum smr_rc generic_txn(struct pg_store *s, const char *sql, const char *const *params,
			       int n, const char *what, PGresult **out, struct smr_err *err)
{
	enum smr_rc rc = begin(s, err);

	if (rc)
		return rc;
	rc = generic_run(s, sql, params, n, what, out, err);
	if (rc)
		return rollback(s, rc);
	rc = commit(s, err);
	if (rc) {
		PQclear(*out);
		*out = NULL;
	}
	return rc;
}

static enum smr_rc pg_sql_text(struct store *st, enum sql_mode mode, const char *sql,
			       const char *const *params, int n, const char *what,
			       struct store_rows *out, struct smr_err *err)
{
	struct pg_store *s = P(st);
	PGresult *r = NULL;
	enum smr_rc rc;
	size_t rows, cols;

	memset(out, 0, sizeof(*out));
	if (s->in_txn)
		rc = generic_row(s, mode, sql, params, n, what, &r, err);
	else if (mode == SQL_ROW)
		BUG("sql_text(SQL_ROW) outside store.c's transaction");
	else
		rc = (mode == SQL_TXN ? generic_txn : generic_auto)(s, sql, params, n, what, &r,
								 err);
	if (rc || !r)
		return rc;
	rows = (size_t)PQntuples(r);
	cols = (size_t)PQnfields(r);
	out->rows = rows;
	out->cols = cols;
	out->cells = xcalloc(rows * cols > 0 ? rows * cols : 1, sizeof(char *));
	for (size_t i = 0; i < rows; i++)
		for (size_t c = 0; c < cols; c++)
			out->cells[i * cols + c] = col_text(r, (int)i, (int)c);
	out->changes = strtoul(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return SMR_OK;
}

const struct store_ops store_postgres_ops = {
	.shared = 1,
	.name = "postgres",
	.accepts = pg_accepts,
	.open = pg_open,
	.close = pg_close,
	.txn_begin = pg_txn_begin,
	.txn_commit = pg_txn_commit,
	.txn_rollback = pg_txn_rollback,
	.space_check = check_space,
	.head_lock = lock_head,
	.head_check = check_head,
	.commit_insert_on_head = insert_on_head,
	.head_move_to = move_head_to,
	.commit_insert = insert_commit,
	.commit_reserve = reserve_commits,
	.commit_insert_as = insert_commit_as,
	.commit_id = commit_id,
	.commit_read = commit_read,
	.commit_links = commit_links,
	.commit_ancestry = commit_ancestry,
	.space_insert = space_insert,
	.head_move = move_head,
	.last_seq_lock = lock_last_seq,
	.turn_insert = insert_turn,
	.head_get = pg_head_get,
	.txn_not_started = pg_txn_not_started,
	.txn_flush = pg_txn_flush,
	.space_create = pg_space_create,
	.gc_prune = pg_gc_prune,
	.search_has = pg_search_has,
	.search_insert = pg_search_insert,
	.search_insert_at = pg_search_insert_at,
	.search_insert_turn = pg_search_insert_turn,
	.search = pg_search,
	.checkpoint_get = pg_checkpoint_get,
	.checkpoints_each = pg_checkpoints_each,
	.checkpoint_log = pg_checkpoint_log,
	.checkpoint_scan = pg_checkpoint_scan,
	.sql_text = pg_sql_text,
	.reach_into_sql = SQL_REACH_INTO(SQL_ASKS_PG),
	.heads_at_sql = SQL_HEADS_AT(SQL_HASHES_PG),
	.live_of_sql = SQL_LIVE_OF(SQL_HASHES_PG),
	/* the notice is sent when this statement's transaction commits (pg_watch.c) */
	.auth_bump_sql = PG_AUTH_BUMP,
	.watch_open = pg_watch_open,
};
