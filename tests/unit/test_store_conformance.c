/*
 * test_store_conformance.c -- one store conformance suite, run unchanged
 * against every backend.
 *
 * Each CONFORMANCE(name) case becomes two tests: store_sqlite_NAME on a
 * fresh SQLite file, and store_pg_NAME in a fresh schema of the PostgreSQL
 * database named by SMRITI_TEST_PG (a postgres:// URL; the schema is dropped
 * afterwards).  Without SMRITI_TEST_PG the PostgreSQL cases say so once and
 * pass without running.  Every behaviour the operations rely on is asserted
 * here once; the pg_* tests at the end cover what only PostgreSQL has
 * (connection loss, concurrent migrations, JSONB columns).
 */
#include "harness.h"
#include "store/full/schema_postgres.h"
#include "domain/checkpoint.h"
#include "ops/context.h"
#include "store/store.h"
#include "store/sql.h"
#include "store/store_int.h"
#include "store/head_memo.h"
#include "util/buf.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct fixture {
	int pg;
	char *dsn;          /* opens more handles on the same database */
	char *dir;          /* SQLite: temp dir holding the file */
	char *schema;       /* PostgreSQL: the schema of this case */
	char *app;          /* PostgreSQL: application_name of this case's handles */
	struct store *st;
};

/* ---- fixtures ---- */


/* "1,2,...,N" for the N migrations of schema_postgres.h. */
static const char *all_migrations(void)
{
	static char list[256];
	size_t n = sizeof(postgres_migrations) / sizeof(postgres_migrations[0]), len = 0;

	for (size_t i = 1; i <= n && len < sizeof(list) - 8; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%zu", i > 1 ? "," : "", i);
	return list;
}

static const char *pg_base(void)
{
	static int told;
	const char *dsn = getenv("SMRITI_TEST_PG");

	if (dsn && *dsn)
		return dsn;
	if (!told++)
		fprintf(stderr, "note: SMRITI_TEST_PG is not set; store_pg_* and pg_* tests "
				"pass without running (scripts/pg-cluster.sh start gives a URL)\n");
	return NULL;
}

/* Runs sql on a connection of its own to the base database; 0 on success. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static int pg_admin(const char *sql)
{
	PGconn *c = PQconnectdb(pg_base());
	PGresult *r;

	PQsetNoticeProcessor(c, quiet, NULL);
	r = PQexec(c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		fprintf(stderr, "  pg_admin(%s): %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

static int fixture_open_pg(struct fixture *f)
{
	static int counter;
	const char *base = pg_base();
	char *sql;

	if (!base)
		return -1;
	f->schema = xasprintf("smriti_t%d_%d_%d", (int)getpid(), __sync_add_and_fetch(&counter, 1),
			      rand() % 100000);
	f->app = xasprintf("conf-%s", f->schema);
	sql = xasprintf("CREATE SCHEMA %s", f->schema);
	if (pg_admin(sql)) {
		free(sql);
		return -2;
	}
	free(sql);
	f->dsn = xasprintf("%s%coptions=-csearch_path%%3D%s&application_name=%s", base,
			   strchr(base, '?') ? '&' : '?', f->schema, f->app);
	return 0;
}

/* 0: ready; -1: backend not configured (skip); -2: set-up failed. */
static int fixture_open(struct fixture *f, int pg)
{
	struct smr_err err = SMR_ERR_INIT;
	char tmpl[] = "/tmp/smriti-conf-XXXXXX";
	int rc;

	memset(f, 0, sizeof(*f));
	f->pg = pg;
	if (pg) {
		rc = fixture_open_pg(f);
		if (rc)
			return rc;
	} else {
		f->dir = xstrdup(mkdtemp(tmpl));
		f->dsn = xasprintf("%s/store.db", f->dir);
	}
	if (store_open(f->dsn, &f->st, &err)) {
		fprintf(stderr, "  cannot open %s: %s\n", f->dsn, err.msg);
		return -2;
	}
	return 0;
}

static void fixture_close(struct fixture *f)
{
	char *cmd;

	store_close(f->st);
	if (f->pg && f->schema) {
		cmd = xasprintf("DROP SCHEMA %s CASCADE", f->schema);
		pg_admin(cmd);
		free(cmd);
	}
	if (f->dir) {
		cmd = xasprintf("rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "  cannot remove %s\n", f->dir);
		free(cmd);
	}
	free(f->dsn);
	free(f->dir);
	free(f->schema);
	free(f->app);
}

static void run_case(int pg, void (*fn)(struct fixture *))
{
	struct fixture f;
	int rc = fixture_open(&f, pg);

	if (rc == -2)
		CHECK(!"fixture set-up failed");
	if (!rc)
		fn(&f);
	fixture_close(&f);
}

#define CONFORMANCE(name)                                                   \
	static void conf_##name(struct fixture *f);                         \
	TEST(store_sqlite_##name) { run_case(0, conf_##name); }             \
	TEST(store_pg_##name) { run_case(1, conf_##name); }                 \
	static void conf_##name(struct fixture *f)


/* ---- builders ---- */

/* Creates Space name with a fixed created_at; its id goes into id[37]. */
static enum smr_rc make_space(struct fixture *f, const char *name, char id[37],
			      struct smr_err *err)
{
	struct space sp = { 0 };

	sys_uuid(id);
	sp.id = id;
	sp.name = (char *)name;
	sp.description = (char *)"a test space";
	sp.created_at = (char *)"2026-01-01T00:00:00.000000Z";
	return store_space_create(f->st, &sp, NULL, err);
}

/* A sealed checkpoint on top of parent (may be NULL), created at second sec. */
static void make_ckpt(struct checkpoint *c, const char *parent, const char *title, int sec)
{
	checkpoint_init(c);
	c->parent_hash = xstrdup(parent);
	c->title = xstrdup(title);
	c->summary = xstrdup("summary of ");
	c->author = xstrdup("tester");
	c->created_at = xasprintf("2026-01-01T00:%02d:%02d.000000Z", sec / 60 % 60, sec % 60);
	json_array_append_new(c->decisions, json_pack("{s:s}", "text", title));
	checkpoint_seal(c);
}

/* Puts a new checkpoint on top of *head (updated, caller frees); returns the result. */
static enum smr_rc put_next(struct fixture *f, const char *space_id, char **head,
			    const char *title, int sec)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;
	enum smr_rc rc;

	make_ckpt(&c, *head, title, sec);
	rc = store_checkpoint_put(f->st, space_id, &c, *head, &err);
	if (!rc) {
		free(*head);
		*head = xstrdup(c.hash);
	} else {
		fprintf(stderr, "  put_next(%s): %s\n", title, err.msg);
	}
	checkpoint_release(&c);
	return rc;
}

static char *space_head(struct fixture *f, const char *id)
{
	struct space sp = { 0 };
	char *head = NULL;

	if (!store_space_get(f->st, id, &sp, NULL))
		head = xstrdup(sp.head);
	space_release(&sp);
	return head;
}

static int count_cb(const struct checkpoint *c, int parent_missing, void *ctx)
{
	(void)c;
	(void)parent_missing;
	(*(int *)ctx)++;
	return 0;
}

static int count_checkpoints(struct fixture *f, const char *space_id)
{
	int n = 0;

	CHECK_INT(store_checkpoint_scan(f->st, space_id, count_cb, &n, NULL), SMR_OK);
	return n;
}

/* 1 when fsck finds no damage; with loud, the report of damage goes to stderr. */
static int fsck_clean(struct fixture *f, int loud)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	json_t *report = NULL;
	int ok;

	CHECK_INT(ops_open_on(&ctx, f->st, NULL, NULL), SMR_OK);
	if (ops_fsck(ctx, NULL, &report, &err)) {
		ops_close(ctx);
		return 0;
	}
	ok = json_is_true(json_object_get(report, "ok"));
	if (!ok && loud) {
		char *s = json_dumps(report, JSON_COMPACT);

		fprintf(stderr, "  fsck: %s\n", s);
		free(s);
	}
	json_decref(report);
	ops_close(ctx);
	return ok;
}

static int fsck_ok(struct fixture *f)
{
	return fsck_clean(f, 1);
}

/* ---- Spaces ---- */

CONFORMANCE(space_create_get_list)
{
	struct smr_err err = SMR_ERR_INIT;
	char a[37], b[37], other[37];
	struct space sp = { 0 }, *v = NULL;
	size_t n = 0;

	CHECK_INT(make_space(f, "beta", b, &err), SMR_OK);
	CHECK_INT(make_space(f, "alpha", a, &err), SMR_OK);
	CHECK_INT(store_space_get(f->st, "alpha", &sp, &err), SMR_OK);
	CHECK_STR(sp.id, a);
	CHECK_STR(sp.description, "a test space");
	CHECK_STR(sp.created_at, "2026-01-01T00:00:00.000000Z");
	CHECK(sp.head == NULL);
	space_release(&sp);
	CHECK_INT(store_space_get(f->st, b, &sp, &err), SMR_OK);
	CHECK_STR(sp.name, "beta");
	space_release(&sp);
	CHECK_INT(store_space_list(f->st, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0].name, "alpha");
		CHECK_STR(v[1].name, "beta");
	}
	spaces_free(v, n);
	CHECK_INT(make_space(f, "alpha", other, &err), SMR_ECONFLICT);
	CHECK_STR(err.msg, "a space named 'alpha' already exists");
	CHECK_INT(store_space_get(f->st, "nope", &sp, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no space 'nope'");
	CHECK_INT(store_space_list(f->st, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	spaces_free(v, n);
}

/* What store_checkpoints_each handed over: each entry's title (or "-"), joined by ",". */
struct each_seen {
	char got[256];
	size_t calls, stop_after;
	int took;
};

static int each_cb(size_t i, struct checkpoint *c, void *ctx)
{
	struct each_seen *e = ctx;
	size_t len = strlen(e->got);

	snprintf(e->got + len, sizeof(e->got) - len, "%s%zu:%s", len ? "," : "", i,
		 c ? c->title : "-");
	if (c && c->decisions && json_array_size(c->decisions) != 1)
		e->got[0] = '!';   /* the lists were not read */
	if (c && i == 0) {     /* taking it leaves nothing to release */
		struct checkpoint mine = *c;

		memset(c, 0, sizeof(*c));
		checkpoint_release(&mine);
		e->took = 1;
	}
	return ++e->calls == e->stop_after;
}

CONFORMANCE(checkpoints_each_in_order_with_repeats_and_the_missing)
{
	struct smr_err err = SMR_ERR_INIT;
	char id[37], *head = NULL, *first = NULL;
	const char *missing = "0000000000000000000000000000000000000000000000000000000000000000";
	struct each_seen e = { .stop_after = 0 };

	CHECK_INT(make_space(f, "each", id, &err), SMR_OK);
	CHECK_INT(put_next(f, id, &head, "one", 1), SMR_OK);
	first = xstrdup(head);
	CHECK_INT(put_next(f, id, &head, "two", 2), SMR_OK);
	{
		const char *hashes[] = { head, first, missing, head, first };

		CHECK_INT(store_checkpoints_each(f->st, hashes, 5, each_cb, &e, &err), SMR_OK);
		CHECK_STR(e.got, "0:two,1:one,2:-,3:two,4:one");
		CHECK(e.took);
		memset(&e, 0, sizeof(e));
		e.stop_after = 2;
		CHECK_INT(store_checkpoints_each(f->st, hashes, 5, each_cb, &e, &err), SMR_OK);
		CHECK_STR(e.got, "0:two,1:one");
		memset(&e, 0, sizeof(e));
		CHECK_INT(store_checkpoints_each(f->st, hashes, 0, each_cb, &e, &err), SMR_OK);
		CHECK_INT(e.calls, 0);
	}
	free(first);
	free(head);
}

CONFORMANCE(space_list_empty_and_name_wins_over_id)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 }, *v = NULL;
	struct checkpoint in_a, in_b, h = { 0 };
	char a[37], b[37];
	size_t n = 9;

	CHECK_INT(store_space_list(f->st, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	spaces_free(v, n);
	CHECK_INT(make_space(f, "first", a, &err), SMR_OK);
	/* A Space whose name is another Space's id: lookups by that string find it by name. */
	CHECK_INT(make_space(f, a, b, &err), SMR_OK);
	CHECK_INT(store_space_get(f->st, a, &sp, &err), SMR_OK);
	CHECK_STR(sp.id, b);
	space_release(&sp);
	/* and so do HEAD reads; an id no Space is named finds its Space */
	make_ckpt(&in_a, NULL, "in first", 1);
	make_ckpt(&in_b, NULL, "in second", 2);
	CHECK_INT(store_checkpoint_put(f->st, a, &in_a, NULL, &err), SMR_OK);
	CHECK_INT(store_checkpoint_put(f->st, b, &in_b, NULL, &err), SMR_OK);
	CHECK_INT(store_head_get(f->st, a, &h, &err), SMR_OK);
	CHECK_STR(h.hash, in_b.hash);
	CHECK_STR(h.space, a);
	checkpoint_release(&h);
	CHECK_INT(store_head_get(f->st, b, &h, &err), SMR_OK);
	CHECK_STR(h.hash, in_b.hash);
	checkpoint_release(&h);
	CHECK_INT(store_head_get(f->st, "first", &h, &err), SMR_OK);
	CHECK_STR(h.hash, in_a.hash);
	CHECK_STR(h.space, "first");
	checkpoint_release(&h);
	CHECK_INT(store_head_get(f->st, "nothing", &h, &err), SMR_ENOTFOUND);
	checkpoint_release(&in_a);
	checkpoint_release(&in_b);
}

CONFORMANCE(space_rename)
{
	struct smr_err err = SMR_ERR_INIT;
	char a[37], b[37];
	struct space sp = { 0 };

	CHECK_INT(make_space(f, "one", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "two", b, &err), SMR_OK);
	CHECK_INT(store_space_rename(f->st, a, "uno", NULL, &err), SMR_OK);
	CHECK_INT(store_space_get(f->st, "uno", &sp, &err), SMR_OK);
	CHECK_STR(sp.id, a);
	space_release(&sp);
	CHECK_INT(store_space_get(f->st, "one", &sp, &err), SMR_ENOTFOUND);
	CHECK_INT(store_space_rename(f->st, a, "two", NULL, &err), SMR_ECONFLICT);
	CHECK_STR(err.msg, "a space named 'two' already exists");
	CHECK_INT(store_space_get(f->st, a, &sp, &err), SMR_OK);
	CHECK_STR(sp.name, "uno");
	space_release(&sp);
	CHECK_INT(store_space_rename(f->st, "no-such-id", "three", NULL, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no space 'no-such-id'");
}

CONFORMANCE(space_delete_is_soft_until_gc_prune)
{
	struct smr_err err = SMR_ERR_INIT;
	struct session sn = { 0 }, got = { 0 };
	struct space sp = { 0 }, *gone = NULL;
	struct reflog_entry *log = NULL;
	struct checkpoint c;
	size_t n = 0;
	struct gc_counts gc;
	char a[37], b[37], sid[37], *head = NULL, *root, *want;

	CHECK_INT(make_space(f, "doomed", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "root", 1), SMR_OK);
	root = xstrdup(head);
	sys_uuid(sid);
	sn.id = sid;
	sn.repo_id = a;
	sn.created_at = (char *)"2026-01-01T00:00:05.000000Z";
	sn.history_base_seq = -1;
	CHECK_INT(store_session_create(f->st, &sn, &err), SMR_OK);
	CHECK_INT(store_space_delete(f->st, a,
				     &(struct ref_move){ "ann", "delete: doomed",
							 "2026-01-01T00:01:00.000000Z" }, &err),
		  SMR_OK);
	/* gone from every lookup, its name free again ... */
	CHECK_INT(store_space_get(f->st, a, &sp, &err), SMR_ENOTFOUND);
	CHECK_INT(store_space_get(f->st, "doomed", &sp, &err), SMR_ENOTFOUND);
	CHECK_INT(make_space(f, "doomed", b, &err), SMR_OK);
	/* ... but recoverable: by id, by its old name, through the reflog */
	CHECK_INT(store_space_find(f->st, a, &sp, &err), SMR_OK);
	CHECK_STR(sp.deleted_at, "2026-01-01T00:01:00.000000Z");
	want = xasprintf("doomed/%s", a);
	CHECK_STR(sp.name, want);
	free(want);
	space_release(&sp);
	CHECK_INT(store_space_find(f->st, "doomed", &sp, &err), SMR_OK);
	CHECK_STR(sp.id, b);   /* a live Space of that name wins */
	space_release(&sp);
	CHECK_INT(store_reflog_list(f->st, a, NULL, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(log[0].action, "delete");
		CHECK_STR(log[0].space_name, "doomed");
		CHECK_STR(log[0].old_hash, root);
		CHECK(!log[0].new_hash);
		CHECK_STR(log[0].actor, "ann");
		CHECK_STR(log[1].action, "commit");
		CHECK_STR(log[1].new_hash, root);
		CHECK_STR(log[1].reason, "commit (initial): root");
		CHECK_STR(log[2].action, "create");
	}
	reflog_entries_free(log, n);
	CHECK_INT(store_checkpoint_get(f->st, a, root, &c, &err), SMR_OK);
	checkpoint_release(&c);
	CHECK_INT(store_session_get(f->st, sid, &got, &err), SMR_OK);
	session_release(&got);
	CHECK_INT(store_space_list_deleted(f->st, &gone, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	spaces_free(gone, n);
	CHECK_INT(store_space_delete(f->st, a, NULL, &err), SMR_ENOTFOUND);
	/* a prune before the deletion keeps it; one after removes everything */
	CHECK_INT(store_gc_prune(f->st, "2026-01-01T00:00:59.000000Z", NULL, &gc, &err), SMR_OK);
	CHECK_INT(gc.spaces, 0);
	CHECK_INT(store_gc_prune(f->st, NULL, NULL, &gc, &err), SMR_OK);
	CHECK_INT(gc.spaces, 1);
	CHECK_INT(store_space_find(f->st, a, &sp, &err), SMR_ENOTFOUND);
	CHECK_INT(store_checkpoint_get(f->st, NULL, root, &c, &err), SMR_ENOTFOUND);
	CHECK_INT(store_session_get(f->st, sid, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(store_reflog_list(f->st, a, NULL, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	reflog_entries_free(log, n);
	CHECK_INT(store_space_delete(f->st, a, NULL, &err), SMR_ENOTFOUND);
	{
		char msg[64];

		snprintf(msg, sizeof(msg), "no space '%s'", a);
		CHECK_STR(err.msg, msg);
	}
	free(head);
	free(root);
}

/* Hand-off notes: newest first by name, none for a Space without, gone with a deleted Space. */
CONFORMANCE(handoff_notes_newest_by_name)
{
	struct smr_err err = SMR_ERR_INIT;
	struct handoff got = { 0 };
	char a[37], b[37], *head = NULL;

	CHECK_INT(make_space(f, "notes", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "quiet", b, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "one", 1), SMR_OK);
	CHECK_INT(store_handoff_latest(f->st, "notes", &got, &err), SMR_OK);
	CHECK_INT(got.id, 0);
	CHECK_INT(store_handoff_put(f->st, &(struct handoff){ 0, a, head, (char *)"keep the keys",
				    (char *)"ann", (char *)"2026-01-01T00:00:05.000000Z" }, &err),
		  SMR_OK);
	CHECK_INT(store_handoff_put(f->st, &(struct handoff){ 0, a, head, (char *)"newer",
				    (char *)"bo", (char *)"2026-01-01T00:00:06.000000Z" }, &err),
		  SMR_OK);
	CHECK_INT(store_handoff_latest(f->st, "notes", &got, &err), SMR_OK);
	CHECK(got.id > 0);
	CHECK_STR(got.note, "newer");
	CHECK_STR(got.author, "bo");
	CHECK_STR(got.hash, head);
	CHECK_STR(got.space_id, a);
	CHECK_STR(got.created_at, "2026-01-01T00:00:06.000000Z");
	handoff_release(&got);
	CHECK_INT(store_handoff_latest(f->st, "quiet", &got, &err), SMR_OK);
	CHECK_INT(got.id, 0);
	/* a deleted Space takes no note, and its name shows none */
	CHECK_INT(store_space_delete(f->st, a, NULL, &err), SMR_OK);
	CHECK_INT(store_handoff_put(f->st, &(struct handoff){ 0, a, head, (char *)"late",
				    (char *)"cy", (char *)"2026-01-01T00:00:07.000000Z" }, &err),
		  SMR_ENOTFOUND);
	CHECK_INT(store_handoff_latest(f->st, "notes", &got, &err), SMR_OK);
	CHECK_INT(got.id, 0);
	free(head);
}

CONFORMANCE(reflog_records_every_move_in_order)
{
	struct smr_err err = SMR_ERR_INIT;
	struct reflog_entry *log = NULL;
	struct space fork = { 0 };
	size_t n = 0;
	char a[37], b[37], *head = NULL, *first;

	CHECK_INT(make_space(f, "moves", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "one", 1), SMR_OK);
	first = xstrdup(head);
	CHECK_INT(put_next(f, a, &head, "two", 2), SMR_OK);
	CHECK_INT(store_space_rename(f->st, a, "moved",
				     &(struct ref_move){ "bo", "rename: moves -> moved",
							 "2026-01-01T00:00:03.000000Z" }, &err),
		  SMR_OK);
	sys_uuid(b);
	fork.id = b;
	fork.name = (char *)"branch";
	fork.created_at = (char *)"2026-01-01T00:00:04.000000Z";
	CHECK_INT(store_space_fork(f->st, &fork, a, first,
				   &(struct ref_move){ "cy", "fork", fork.created_at }, &err),
		  SMR_OK);
	CHECK_INT(store_reflog_list(f->st, a, NULL, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 4);
	if (n == 4) {
		CHECK_STR(log[0].action, "rename");
		CHECK_STR(log[0].space_name, "moved");
		CHECK_STR(log[0].old_hash, head);
		CHECK_STR(log[0].new_hash, head);
		CHECK_STR(log[1].action, "commit");
		CHECK_STR(log[1].old_hash, first);
		CHECK_STR(log[1].actor, "tester");
		CHECK_STR(log[1].created_at, "2026-01-01T00:00:02.000000Z");
		CHECK_STR(log[2].reason, "commit (initial): one");
		CHECK(!log[2].old_hash);
		CHECK(log[0].id > log[1].id && log[1].id > log[2].id);
	}
	reflog_entries_free(log, n);
	/* at or before a time, newest first, limited */
	CHECK_INT(store_reflog_list(f->st, a, "2026-01-01T00:00:01.500000Z", 1, &log, &n, &err),
		  SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(log[0].new_hash, first);
	reflog_entries_free(log, n);
	CHECK_INT(store_reflog_list(f->st, b, NULL, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(log[0].action, "fork");
		CHECK_STR(log[0].new_hash, first);
		CHECK_STR(log[0].actor, "cy");
	}
	reflog_entries_free(log, n);
	free(head);
	free(first);
}

/* ---- Checkpoints ---- */

CONFORMANCE(checkpoint_put_compare_and_swap)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c, stale, got;
	char a[37], *head = NULL, *root = NULL, want[256];

	CHECK_INT(make_space(f, "cas", a, &err), SMR_OK);
	/* A non-empty expectation on an empty Space is stale. */
	make_ckpt(&c, "0000000000000000000000000000000000000000000000000000000000000000",
		  "orphan", 1);
	CHECK_INT(store_checkpoint_put(f->st, a, &c, c.parent_hash, &err), SMR_ECONFLICT);
	CHECK_STR(err.msg, "parent is stale: the space has no checkpoints yet");
	checkpoint_release(&c);
	CHECK_INT(put_next(f, a, &head, "root", 2), SMR_OK);
	root = xstrdup(head);
	{
		char *h = space_head(f, a);

		CHECK_STR(h, root);
		free(h);
	}
	CHECK_INT(put_next(f, a, &head, "second", 3), SMR_OK);
	/* A writer that read root writes on a stale parent: conflict, nothing written. */
	make_ckpt(&stale, root, "lost update", 4);
	CHECK_INT(store_checkpoint_put(f->st, a, &stale, root, &err), SMR_ECONFLICT);
	snprintf(want, sizeof(want), "parent is stale: HEAD is now %.12s (%s)", head, head);
	CHECK_STR(err.msg, want);
	CHECK_INT(store_checkpoint_get(f->st, a, stale.hash, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(count_checkpoints(f, a), 2);
	{
		char *h = space_head(f, a);

		CHECK_STR(h, head);
		free(h);
	}
	/* Expecting an empty Space when it is not is stale too. */
	CHECK_INT(store_checkpoint_put(f->st, a, &stale, NULL, &err), SMR_ECONFLICT);
	checkpoint_release(&stale);
	/* An unknown Space. */
	make_ckpt(&c, NULL, "nowhere", 5);
	CHECK_INT(store_checkpoint_put(f->st, "no-such-space", &c, NULL, &err), SMR_ENOTFOUND);
	checkpoint_release(&c);
	CHECK(fsck_ok(f));
	free(head);
	free(root);
}

CONFORMANCE(checkpoint_get_in_space_and_any)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 };
	struct checkpoint got;
	char a[37], b[37], *head = NULL, *root;

	CHECK_INT(make_space(f, "src", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "elsewhere", b, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "root", 1), SMR_OK);
	root = xstrdup(head);
	CHECK_INT(put_next(f, a, &head, "child", 2), SMR_OK);
	CHECK_INT(store_checkpoint_get(f->st, a, head, &got, &err), SMR_OK);
	CHECK_STR(got.hash, head);
	CHECK_STR(got.parent_hash, root);
	CHECK(got.merge_parent_hash == NULL);
	CHECK_STR(got.space, "src");
	CHECK_STR(got.title, "child");
	CHECK_STR(got.author, "tester");
	checkpoint_release(&got);
	CHECK_INT(store_checkpoint_get(f->st, b, head, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(store_checkpoint_get(f->st, NULL, "feedface", &got, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no checkpoint feedface");
	/* Any Space: the oldest copy, even after a fork made a second one. */
	char nid[37];

	sys_uuid(nid);
	nsp.id = nid;
	nsp.name = (char *)"copy";
	nsp.created_at = (char *)"2026-01-02T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, root, NULL, &err), SMR_OK);
	CHECK_INT(store_checkpoint_get(f->st, NULL, root, &got, &err), SMR_OK);
	CHECK_STR(got.space, "src");
	CHECK(got.parent_hash == NULL);
	checkpoint_release(&got);
	CHECK_INT(store_checkpoint_get(f->st, nid, root, &got, &err), SMR_OK);
	CHECK_STR(got.space, "copy");
	checkpoint_release(&got);
	free(head);
	free(root);
}

/* The text of decision i of c, or "" (borrowed). */
static const char *decision_text(const struct checkpoint *c, size_t i)
{
	const char *t = json_string_value(json_object_get(json_array_get(c->decisions, i),
							  "text"));

	return t ? t : "";
}

/*
 * HEAD reads of one handle, between writes of another: each read sees the
 * last acknowledged write, whole.  What a read hands out is read-only
 * (PostgreSQL's handle keeps the fields of the HEAD it parsed last and
 * shares them): a caller that wants to change it copies it, and the next
 * read is as before.  A copy of that HEAD in another Space reads back with
 * its own Space's name.
 */
CONFORMANCE(head_read_after_writes_of_another_handle)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *other = NULL;
	struct checkpoint got, c1, c2;
	json_t *mine;
	char a[37], b[37];

	CHECK_INT(make_space(f, "read", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "copy", b, &err), SMR_OK);
	CHECK_INT(store_open(f->dsn, &other, &err), SMR_OK);
	make_ckpt(&c1, NULL, "one", 1);
	make_ckpt(&c2, c1.hash, "two", 2);
	CHECK_INT(store_checkpoint_put(other, a, &c1, NULL, &err), SMR_OK);
	for (int i = 0; i < 2; i++) {
		CHECK_INT(store_head_get(f->st, "read", &got, &err), SMR_OK);
		CHECK_STR(got.hash, c1.hash);
		CHECK_STR(got.title, "one");
		CHECK_INT(json_array_size(got.decisions), 1);
		CHECK_STR(decision_text(&got, 0), "one");
		mine = json_deep_copy(got.decisions);
		json_array_append_new(mine, json_pack("{s:s}", "text", "mine"));
		CHECK_INT(json_array_size(got.decisions), 1);
		json_decref(mine);
		checkpoint_release(&got);
	}
	CHECK_INT(store_checkpoint_put(other, a, &c2, c1.hash, &err), SMR_OK);
	for (int i = 0; i < 2; i++) {
		CHECK_INT(store_head_get(f->st, i ? a : "read", &got, &err), SMR_OK);
		CHECK_STR(got.hash, c2.hash);
		CHECK_STR(got.parent_hash, c1.hash);
		CHECK_STR(got.title, "two");
		CHECK_INT(json_array_size(got.decisions), 1);
		CHECK_STR(decision_text(&got, 0), "two");
		CHECK_INT(json_object_size(got.metadata), 0);
		checkpoint_release(&got);
	}
	CHECK_INT(store_checkpoint_put(other, b, &c1, NULL, &err), SMR_OK);
	CHECK_INT(store_checkpoint_put(other, b, &c2, c1.hash, &err), SMR_OK);
	CHECK_INT(store_head_get(f->st, "copy", &got, &err), SMR_OK);
	CHECK_STR(got.hash, c2.hash);
	CHECK_STR(got.space, "copy");
	CHECK_STR(decision_text(&got, 0), "two");
	checkpoint_release(&got);
	CHECK_INT(store_space_rename(other, b, "renamed", NULL, &err), SMR_OK);
	CHECK_INT(store_head_get(f->st, b, &got, &err), SMR_OK);
	CHECK_STR(got.space, "renamed");
	CHECK_STR(decision_text(&got, 0), "two");
	checkpoint_release(&got);
	checkpoint_release(&c1);
	checkpoint_release(&c2);
	store_close(other);
}

/*
 * Checks f's handle's read of Space ref's HEAD: want's checkpoint (hash,
 * parents, title, first decision) in Space want_space, or an empty Space
 * when want is NULL, or no such Space when want_space is NULL too.  The
 * caller's line shows in a failure.
 */
#define CHECK_HEAD(ref, want, want_space) check_head(f, (ref), (want), (want_space), __LINE__)

static const char *or_none(const char *s)
{
	return s ? s : "(none)";
}

static void check_head(struct fixture *f, const char *ref, const struct checkpoint *want,
		       const char *want_space, int line)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint got;
	enum smr_rc rc;

	memset(&got, 0, sizeof(got));
	rc = store_head_get(f->st, ref, &got, &err);
	if (!want_space) {
		if (rc != SMR_ENOTFOUND)
			test_fail(__FILE__, line, "HEAD of '%s' found (%d), want none", ref, rc);
	} else if (rc) {
		test_fail(__FILE__, line, "HEAD of '%s': %s", ref, err.msg);
	} else if (strcmp(or_none(got.space), want_space) ||
		   strcmp(or_none(got.hash), or_none(want ? want->hash : NULL)) ||
		   strcmp(or_none(got.parent_hash), or_none(want ? want->parent_hash : NULL)) ||
		   strcmp(or_none(got.merge_parent_hash), "(none)") ||
		   strcmp(or_none(got.title), or_none(want ? want->title : NULL)) ||
		   (want && strcmp(or_none(decision_text(&got, 0)), want->title))) {
		test_fail(__FILE__, line, "HEAD of '%s' is '%s' (%.12s, parent %.12s) in '%s',"
			  " want '%s' (%.12s, parent %.12s) in '%s'", ref, or_none(got.title),
			  or_none(got.hash), or_none(got.parent_hash), or_none(got.space),
			  want ? want->title : "(none)", want ? want->hash : "(none)",
			  want ? or_none(want->parent_hash) : "(none)", want_space);
	}
	checkpoint_release(&got);
}

/*
 * Repeated HEAD reads of one Space by one handle (PostgreSQL's handle then
 * asks the server only whether HEAD is still the checkpoint it read, by the
 * way it found the Space last time) follow what another handle does
 * between them: HEAD moved, the Space renamed, its name taken by another
 * Space (empty, then with a HEAD), a Space named like its id, the Space
 * deleted.  Each read, read twice, gives what a first read would.
 */
CONFORMANCE(head_rereads_follow_the_space)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *other = NULL;
	struct checkpoint c1, c2, c3;
	struct space sp = { 0 };
	char a[37], b[37], shadow[37];

	CHECK_INT(make_space(f, "alpha", a, &err), SMR_OK);
	CHECK_INT(store_open(f->dsn, &other, &err), SMR_OK);
	make_ckpt(&c1, NULL, "one", 1);
	make_ckpt(&c2, c1.hash, "two", 2);
	make_ckpt(&c3, NULL, "three", 3);
	CHECK_HEAD("alpha", NULL, "alpha");
	CHECK_INT(store_checkpoint_put(other, a, &c1, NULL, &err), SMR_OK);
	for (int i = 0; i < 3; i++)
		CHECK_HEAD("alpha", &c1, "alpha");
	CHECK_INT(store_checkpoint_put(other, a, &c2, c1.hash, &err), SMR_OK);
	for (int i = 0; i < 2; i++)
		CHECK_HEAD("alpha", &c2, "alpha");
	/* renamed: the old name finds nothing, then another Space takes it */
	CHECK_INT(store_space_rename(other, a, "beta", NULL, &err), SMR_OK);
	CHECK_HEAD("alpha", NULL, NULL);
	CHECK_HEAD("alpha", NULL, NULL);
	CHECK_HEAD("beta", &c2, "beta");
	CHECK_HEAD("beta", &c2, "beta");
	sys_uuid(b);
	sp.id = b;
	sp.name = (char *)"beta";
	sp.description = (char *)"";
	sp.created_at = (char *)"2026-01-01T00:00:00.000000Z";
	CHECK_INT(store_space_rename(other, a, "alpha", NULL, &err), SMR_OK);
	CHECK_INT(store_space_create(other, &sp, NULL, &err), SMR_OK);
	CHECK_HEAD("beta", NULL, "beta");
	CHECK_HEAD("beta", NULL, "beta");
	CHECK_INT(store_checkpoint_put(other, b, &c3, NULL, &err), SMR_OK);
	CHECK_HEAD("beta", &c3, "beta");
	CHECK_HEAD("alpha", &c2, "alpha");
	/* by id, until a Space is named like that id: a name match wins */
	for (int i = 0; i < 2; i++)
		CHECK_HEAD(a, &c2, "alpha");
	sys_uuid(shadow);
	sp.id = shadow;
	sp.name = a;
	CHECK_INT(store_space_create(other, &sp, NULL, &err), SMR_OK);
	CHECK_HEAD(a, NULL, a);
	CHECK_HEAD(a, NULL, a);
	CHECK_INT(store_space_delete(other, shadow, NULL, &err), SMR_OK);
	CHECK_HEAD(a, &c2, "alpha");
	CHECK_HEAD(a, &c2, "alpha");
	/* deleted: neither its name nor its id finds it */
	CHECK_INT(store_space_delete(other, a, NULL, &err), SMR_OK);
	CHECK_HEAD(a, NULL, NULL);
	CHECK_HEAD("alpha", NULL, NULL);
	CHECK_HEAD("beta", &c3, "beta");
	checkpoint_release(&c1);
	checkpoint_release(&c2);
	checkpoint_release(&c3);
	store_close(other);
}

/* The "space" member of a HEAD document, or "" (borrowed). */
static const char *doc_space(const json_t *doc)
{
	const char *v = json_string_value(json_object_get(doc, "space"));

	return v ? v : "";
}

/*
 * ops_head_doc on a context from ops_open: the same checkpoint under the
 * same name is the same document (one rendering), on either backend, even
 * when another Space was written in between; a rename or a new HEAD is a
 * new document at once.
 */
CONFORMANCE(head_doc_is_one_document_per_checkpoint_and_name)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	json_t *d[6] = { 0 };
	char a[37], b[37], *head = NULL, *other = NULL;

	CHECK_INT(make_space(f, "doc", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "elsewhere", b, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "one", 1), SMR_OK);
	CHECK_INT(ops_open(&ctx, f->dsn, NULL, &err), SMR_OK);
	CHECK_INT(ops_head_doc(ctx, "doc", &d[0], &err), SMR_OK);
	CHECK_INT(ops_head_doc(ctx, "doc", &d[1], &err), SMR_OK);
	CHECK(d[1] == d[0]);
	CHECK_INT(put_next(f, b, &other, "another Space", 2), SMR_OK);
	CHECK_INT(ops_head_doc(ctx, a, &d[2], &err), SMR_OK);
	CHECK(d[2] == d[0]);
	CHECK_STR(json_string_value(json_object_get(d[2], "commit_hash")), head);
	CHECK_INT(store_space_rename(f->st, a, "renamed", NULL, &err), SMR_OK);
	CHECK_INT(ops_head_doc(ctx, a, &d[3], &err), SMR_OK);
	CHECK(d[3] != d[0]);
	CHECK_STR(doc_space(d[3]), "renamed");
	CHECK_INT(put_next(f, a, &head, "two", 3), SMR_OK);
	CHECK_INT(ops_head_doc(ctx, "renamed", &d[4], &err), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(d[4], "commit_hash")), head);
	CHECK_STR(json_string_value(json_object_get(d[4], "title")), "two");
	CHECK_INT(ops_head_doc(ctx, "doc", &d[5], &err), SMR_ENOTFOUND);
	for (int i = 0; i < 6; i++)
		json_decref(d[i]);
	ops_close(ctx);
	free(head);
	free(other);
}

/* Puts a checkpoint whose hash is the given string (the store does not recompute it). */
static void put_fake(struct fixture *f, const char *space_id, char **head, const char *hash)
{
	struct checkpoint c;

	make_ckpt(&c, *head, hash, 1);
	free(c.hash);
	c.hash = xstrdup(hash);
	CHECK_INT(store_checkpoint_put(f->st, space_id, &c, *head, NULL), SMR_OK);
	free(*head);
	*head = xstrdup(hash);
	checkpoint_release(&c);
}

CONFORMANCE(checkpoint_find_prefix)
{
	static const char h1[] = "abcd0001aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char h2[] = "abcd0002aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char h3[] = "abce0003aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 };
	char a[37], nid[37], *head = NULL, **v = NULL;
	size_t n = 0;

	CHECK_INT(make_space(f, "prefixes", a, &err), SMR_OK);
	put_fake(f, a, &head, h2);
	put_fake(f, a, &head, h1);
	put_fake(f, a, &head, h3);
	/* A second copy of h1 in a fork must not make it ambiguous with itself. */
	sys_uuid(nid);
	nsp.id = nid;
	nsp.name = (char *)"fork";
	nsp.created_at = (char *)"2026-01-02T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, h3, NULL, &err), SMR_OK);
	CHECK_INT(store_checkpoint_find_prefix(f->st, "abcd0001", 2, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(v[0], h1);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	CHECK_INT(store_checkpoint_find_prefix(f->st, "abcd", 2, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);     /* ambiguous: the caller reports it */
	if (n == 2) {
		CHECK_STR(v[0], h1);
		CHECK_STR(v[1], h2);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	CHECK_INT(store_checkpoint_find_prefix(f->st, "abc", 2, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);     /* capped at limit */
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	CHECK_INT(store_checkpoint_find_prefix(f->st, "ffff", 2, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	free(v);
	free(head);
}

CONFORMANCE(checkpoint_log_order_and_limit)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint *v = NULL;
	char a[37], b[37], *head = NULL, *hashes[5];
	size_t n = 0;

	CHECK_INT(make_space(f, "chain", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "other", b, &err), SMR_OK);
	for (int i = 0; i < 5; i++) {
		char title[32];

		snprintf(title, sizeof(title), "step %d", i);
		CHECK_INT(put_next(f, a, &head, title, i), SMR_OK);
		hashes[i] = xstrdup(head);
	}
	CHECK_INT(store_checkpoint_log(f->st, a, head, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 5);
	for (size_t i = 0; i < n && n == 5; i++) {
		CHECK_STR(v[i].hash, hashes[4 - i]);
		if (i + 1 < n)
			CHECK_STR(v[i].parent_hash, hashes[3 - i]);
	}
	if (n == 5)
		CHECK(v[4].parent_hash == NULL);
	checkpoints_free(v, n);
	CHECK_INT(store_checkpoint_log(f->st, a, head, 2, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0].hash, hashes[4]);
		CHECK_STR(v[1].hash, hashes[3]);
	}
	checkpoints_free(v, n);
	CHECK_INT(store_checkpoint_log(f->st, a, hashes[1], 10, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0].title, "step 1");
		CHECK_STR(v[1].title, "step 0");
	}
	checkpoints_free(v, n);
	CHECK_INT(store_checkpoint_log(f->st, b, head, 0, &v, &n, &err), SMR_ENOTFOUND);
	CHECK_INT(store_checkpoint_log(f->st, a, "beef", 0, &v, &n, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no checkpoint beef in this space");
	for (int i = 0; i < 5; i++)
		free(hashes[i]);
	free(head);
}

struct scan_state {
	int rows, missing, stop_after;
	char titles[8][16];
};

static int scan_cb(const struct checkpoint *c, int parent_missing, void *ctx)
{
	struct scan_state *s = ctx;

	if (s->rows < 8)
		snprintf(s->titles[s->rows], sizeof(s->titles[0]), "%.15s", c->title);
	s->rows++;
	s->missing += parent_missing;
	return s->stop_after && s->rows >= s->stop_after;
}

/* Damages the store behind its back: deletes the root commit, leaving its child's link dangling. */
static void delete_root_row(struct fixture *f, const char *root)
{
	char *sql;

	if (f->pg) {
		sql = xasprintf("SET search_path = %s;"
				" ALTER TABLE commits DROP CONSTRAINT commits_parent_commit_id_fkey;"
				" DELETE FROM commits WHERE commit_hash = '%s'", f->schema, root);
		CHECK_INT(pg_admin(sql), 0);
	} else {
		sqlite3 *db = NULL;

		sql = xasprintf("DELETE FROM commits WHERE commit_hash = '%s'", root);
		CHECK_INT(sqlite3_open(f->dsn, &db), SQLITE_OK);
		CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	free(sql);
}

CONFORMANCE(checkpoint_scan_order_stop_and_parent_missing)
{
	struct smr_err err = SMR_ERR_INIT;
	struct scan_state s = { 0 };
	char a[37], *head = NULL, *root = NULL;

	CHECK_INT(make_space(f, "scanned", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "c0", 0), SMR_OK);
	root = xstrdup(head);
	CHECK_INT(put_next(f, a, &head, "c1", 1), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "c2", 2), SMR_OK);
	CHECK_INT(store_checkpoint_scan(f->st, a, scan_cb, &s, &err), SMR_OK);
	CHECK_INT(s.rows, 3);
	CHECK_INT(s.missing, 0);
	CHECK_STR(s.titles[0], "c0");
	CHECK_STR(s.titles[2], "c2");
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	CHECK_INT(store_checkpoint_scan(f->st, a, scan_cb, &s, &err), SMR_OK);
	CHECK_INT(s.rows, 2);
	CHECK(fsck_ok(f));
	delete_root_row(f, root);
	memset(&s, 0, sizeof(s));
	CHECK_INT(store_checkpoint_scan(f->st, a, scan_cb, &s, &err), SMR_OK);
	CHECK_INT(s.rows, 2);
	CHECK_INT(s.missing, 1);
	CHECK(!fsck_clean(f, 0));
	free(head);
	free(root);
}

struct order_state {
	int rows, in_order;
};

static int order_cb(const struct checkpoint *c, int parent_missing, void *ctx)
{
	struct order_state *s = ctx;
	char want[32];

	snprintf(want, sizeof(want), "n%d", s->rows++);
	s->in_order += !strcmp(c->title, want) && !parent_missing;
	return 0;
}

/* More checkpoints than a backend may fetch at once (PostgreSQL scans in batches of 256). */
CONFORMANCE(checkpoint_scan_and_log_of_a_long_history)
{
	struct smr_err err = SMR_ERR_INIT;
	struct order_state s = { 0 };
	struct checkpoint *v = NULL;
	char a[37], *head = NULL, title[32];
	size_t n = 0;

	CHECK_INT(make_space(f, "long", a, &err), SMR_OK);
	for (int i = 0; i < 300; i++) {
		snprintf(title, sizeof(title), "n%d", i);
		if (put_next(f, a, &head, title, i))
			break;
	}
	CHECK_INT(store_checkpoint_scan(f->st, a, order_cb, &s, &err), SMR_OK);
	CHECK_INT(s.rows, 300);
	CHECK_INT(s.in_order, 300);
	CHECK_INT(store_checkpoint_log(f->st, a, head, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 300);
	if (n == 300) {
		CHECK_STR(v[0].title, "n299");
		CHECK_STR(v[299].title, "n0");
	}
	checkpoints_free(v, n);
	free(head);
}

CONFORMANCE(space_fork_copies_ancestry)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 }, got = { 0 };
	struct checkpoint *src = NULL, *dst = NULL;
	char a[37], nid[37], *head = NULL, *mid = NULL;
	size_t ns = 0, nd = 0;

	CHECK_INT(make_space(f, "origin", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "one", 1), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "two", 2), SMR_OK);
	mid = xstrdup(head);
	CHECK_INT(put_next(f, a, &head, "three", 3), SMR_OK);
	sys_uuid(nid);
	nsp.id = nid;
	nsp.name = (char *)"branch";
	nsp.description = (char *)"forked";
	nsp.created_at = (char *)"2026-01-03T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, mid, NULL, &err), SMR_OK);
	CHECK_INT(store_space_get(f->st, "branch", &got, &err), SMR_OK);
	CHECK_STR(got.head, mid);
	CHECK_STR(got.description, "forked");
	space_release(&got);
	CHECK_INT(store_checkpoint_log(f->st, a, mid, 0, &src, &ns, &err), SMR_OK);
	CHECK_INT(store_checkpoint_log(f->st, nid, mid, 0, &dst, &nd, &err), SMR_OK);
	CHECK_INT(nd, 2);
	for (size_t i = 0; i < nd && nd == ns; i++) {
		char *x = checkpoint_canonical(&src[i]), *y = checkpoint_canonical(&dst[i]);

		CHECK_STR(dst[i].hash, src[i].hash);
		CHECK_STR(y, x);
		CHECK_STR(dst[i].space, "branch");
		free(x);
		free(y);
	}
	checkpoints_free(src, ns);
	checkpoints_free(dst, nd);
	CHECK_INT(count_checkpoints(f, nid), 2);
	/* The fork goes on independently. */
	free(head);
	head = xstrdup(mid);
	CHECK_INT(put_next(f, nid, &head, "branch work", 4), SMR_OK);
	CHECK(fsck_ok(f));
	/* A taken name or an unknown checkpoint: nothing created. */
	sys_uuid(nid);
	nsp.id = nid;
	CHECK_INT(store_space_fork(f->st, &nsp, a, mid, NULL, &err), SMR_ECONFLICT);
	CHECK_STR(err.msg, "a space named 'branch' already exists");
	nsp.name = (char *)"branch2";
	CHECK_INT(store_space_fork(f->st, &nsp, a, "cafe", NULL, &err), SMR_ENOTFOUND);
	CHECK_INT(store_space_get(f->st, "branch2", &got, &err), SMR_ENOTFOUND);
	free(head);
	free(mid);
}

/*
 * Rows of every table a fork could write (raw SQL, not the store's own
 * reads): the history is shared, so a fork adds its Space, its ref and
 * its reflog row, whatever the length of the history it forks.
 */
static long long count_rows(struct fixture *f)
{
	static const char q[] =
		"SELECT (SELECT count(*) FROM commits) + (SELECT count(*) FROM refs)"
		" + (SELECT count(*) FROM reflog) + (SELECT count(*) FROM repos)"
		" + (SELECT count(*) FROM search_items) + (SELECT count(*) FROM grants)"
		" + (SELECT count(*) FROM handoffs) + (SELECT count(*) FROM sessions)";
	long long n = -1;

	if (f->pg) {
		char *sql = xasprintf("SET search_path = %s; %s", f->schema, q);
		PGconn *c = PQconnectdb(pg_base());
		PGresult *r = PQexec(c, sql);

		if (PQresultStatus(r) == PGRES_TUPLES_OK)
			n = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
		PQfinish(c);
		free(sql);
	} else {
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		CHECK_INT(sqlite3_open(f->dsn, &db), SQLITE_OK);
		if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	return n;
}

CONFORMANCE(fork_writes_a_ref_and_a_reflog_row_only)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 };
	struct checkpoint *log = NULL;
	char a[37], nid[37], *head = NULL;
	long long before, after;
	size_t n = 0;

	CHECK_INT(make_space(f, "long", a, &err), SMR_OK);
	for (int i = 1; i <= 120; i++) {
		char title[32];

		snprintf(title, sizeof(title), "step %d", i);
		CHECK_INT(put_next(f, a, &head, title, i), SMR_OK);
	}
	before = count_rows(f);
	CHECK(before > 120);
	sys_uuid(nid);
	nsp.id = nid;
	nsp.name = (char *)"long-fork";
	nsp.created_at = (char *)"2026-01-03T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, head, NULL, &err), SMR_OK);
	after = count_rows(f);
	/* the Space, its ref, its reflog row: nothing that grows with the history */
	CHECK_INT(after - before, 3);
	/* and the fork holds the whole history through them */
	CHECK_INT(store_checkpoint_log(f->st, nid, head, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 120);
	CHECK_STR(log[0].space, "long-fork");
	checkpoints_free(log, n);
	CHECK_INT(count_checkpoints(f, nid), 120);
	CHECK(fsck_ok(f));
	free(head);
}

/*
 * gc --prune over the shared history: a pruned Space's checkpoints that a
 * surviving Space still reaches stay (also through its reflog alone, its
 * HEAD having moved elsewhere), the rest go, with their search rows.
 */
CONFORMANCE(gc_keeps_what_a_reflog_reaches_and_removes_the_rest)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 }, sp = { 0 };
	struct checkpoint got = { 0 };
	struct import_space in = { 0 };
	struct ref_move mv = { "cy", "reset", "2026-01-04T00:00:00.000000Z" };
	char a[37], b[37], *head = NULL, *h1 = NULL, *h3 = NULL;
	struct gc_counts gc;

	CHECK_INT(make_space(f, "gone", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "one", 1), SMR_OK);
	h1 = xstrdup(head);
	CHECK_INT(put_next(f, a, &head, "two", 2), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "three", 3), SMR_OK);
	h3 = xstrdup(head);
	CHECK_INT(put_next(f, a, &head, "four, nobody else's", 4), SMR_OK);
	sys_uuid(b);
	nsp.id = b;
	nsp.name = (char *)"kept";
	nsp.created_at = (char *)"2026-01-03T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, h3, NULL, &err), SMR_OK);
	/* "kept" moves its HEAD back to "one": "three" is now in its reflog only */
	in.space = &nsp;
	in.head = h1;
	in.move = &mv;
	CHECK_INT(store_import(f->st, &in, 1, &err), SMR_OK);
	CHECK_INT(store_space_get(f->st, b, &sp, &err), SMR_OK);
	CHECK_STR(sp.head, h1);
	space_release(&sp);
	CHECK_INT(store_space_delete(f->st, a, NULL, &err), SMR_OK);
	CHECK_INT(store_gc_prune(f->st, NULL, NULL, &gc, &err), SMR_OK);
	CHECK_INT(gc.spaces, 1);
	/* reached by the reflog: still readable through "kept", with its ancestors */
	CHECK_INT(store_checkpoint_get(f->st, b, h3, &got, &err), SMR_OK);
	CHECK_STR(got.space, "kept");
	checkpoint_release(&got);
	CHECK_INT(count_checkpoints(f, b), 3);
	/* reached by nothing: gone, and so is its search row */
	CHECK_INT(store_checkpoint_get(f->st, NULL, head, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(count_rows(f) > 0, 1);
	CHECK(fsck_ok(f));
	{
		struct search_word w = { "nobody", 0 };
		struct search_filter sf = { .words = &w, .n_words = 1, .limit = 10 };
		struct search_found fd = { .n = 9 };

		CHECK_INT(store_search(f->st, &sf, &fd, &err), SMR_OK);
		CHECK_INT(fd.n, 0);
		search_found_release(&fd);
	}
	free(head);
	free(h1);
	free(h3);
}

/* Runs sql on the fixture's database by hand (no store in between). */
static void raw_sql(struct fixture *f, const char *sql)
{
	if (f->pg) {
		char *all = xasprintf("SET search_path = %s; %s", f->schema, sql);

		CHECK_INT(pg_admin(all), 0);
		free(all);
	} else {
		sqlite3 *db = NULL;
		char *msg = NULL;

		CHECK_INT(sqlite3_open(f->dsn, &db), SQLITE_OK);
		if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
			fprintf(stderr, "  raw_sql: %s\n", msg ? msg : "?");
		sqlite3_free(msg);
		sqlite3_close(db);
	}
}

/* The hashes fsck reports a problem with, in its order, joined by ","; "!" when it failed. */
static char *fsck_damaged(struct fixture *f)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct buf b = BUF_INIT(0);
	json_t *report = NULL, *one;
	size_t i;

	CHECK_INT(ops_open_on(&ctx, f->st, NULL, NULL), SMR_OK);
	if (ops_fsck(ctx, NULL, &report, &err)) {
		ops_close(ctx);
		return xstrdup("!");
	}
	json_array_foreach(json_object_get(report, "problems"), i, one)
		buf_addf(&b, "%s%s", i ? "," : "",
			 json_string_value(json_object_get(one, "commit_hash")));
	json_decref(report);
	ops_close(ctx);
	return b.ptr ? buf_detach(&b, NULL) : xstrdup("");
}

/*
 * fsck reads every checkpoint's items as stored, a scan's batch of them
 * at once on PostgreSQL: a forged item is reported for the checkpoints
 * that hold it, a missing one too, and no other checkpoint of the batch.
 */
CONFORMANCE(fsck_reports_the_checkpoints_whose_items_are_forged_or_missing)
{
	struct smr_err err = SMR_ERR_INIT;
	char id[37], *head = NULL, *two = NULL, *three = NULL, *got;

	CHECK_INT(make_space(f, "damage", id, &err), SMR_OK);
	CHECK_INT(put_next(f, id, &head, "one", 1), SMR_OK);
	CHECK_INT(put_next(f, id, &head, "two", 2), SMR_OK);
	two = xstrdup(head);
	CHECK_INT(put_next(f, id, &head, "three", 3), SMR_OK);
	three = xstrdup(head);
	CHECK_INT(put_next(f, id, &head, "four", 4), SMR_OK);
	got = fsck_damaged(f);
	CHECK_STR(got, "");
	free(got);
	raw_sql(f, "UPDATE items SET body = '{\"text\":\"forged\"}' WHERE body LIKE '%\"two\"%'");
	got = fsck_damaged(f);
	CHECK_STR(got, two);
	free(got);
	raw_sql(f, "DELETE FROM items WHERE body LIKE '%\"three\"%'");
	got = fsck_damaged(f);
	CHECK(strstr(got, two) && strstr(got, three));
	for (char *at = strtok(got, ","); at; at = strtok(NULL, ","))
		CHECK(!strcmp(at, two) || !strcmp(at, three));   /* no other checkpoint */
	free(got);
	free(two);
	free(three);
	free(head);
}

/*
 * A database of the release before the shared history: a fork held a copy
 * of every row of its history (made here by hand, back at schema 7).
 * Opening it collapses the copies into one row per hash; every Space
 * still reads its history, and the hashes are the same.
 */
CONFORMANCE(migration_collapses_the_copies_of_a_fork)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 };
	struct checkpoint *log = NULL;
	char a[37], b[37], *head = NULL, *sql;
	const char *lists = f->pg ? "" : " decisions, assumptions, tasks, open_questions, entities,"
		" artifacts,";
	long long rows_before;
	size_t n = 0;
	int from = 7;

	CHECK_INT(make_space(f, "source", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "one", 1), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "two", 2), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "three", 3), SMR_OK);
	sys_uuid(b);
	nsp.id = b;
	nsp.name = (char *)"copier";
	nsp.created_at = (char *)"2026-01-03T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, head, NULL, &err), SMR_OK);
	store_close(f->st);
	f->st = NULL;
	/* the fork's rows copied as the release before made them */
	sql = xasprintf(
		"DROP INDEX commits_hash_unique;"
		" CREATE INDEX commits_by_hash ON commits(commit_hash);"
		" INSERT INTO commits (repo_id, commit_hash, parent_commit_id, title, summary,%s"
		" lists, metadata_,%s author, created_at) SELECT '%s', commit_hash, NULL, title,"
		" summary,%s lists, metadata_,%s author,"
		" created_at FROM commits WHERE repo_id = '%s' ORDER BY id;"
		" UPDATE commits SET parent_commit_id = (SELECT c2.id FROM commits c2"
		" JOIN commits p ON p.commit_hash = c2.commit_hash WHERE c2.repo_id = '%s'"
		" AND p.id = (SELECT o.parent_commit_id FROM commits o WHERE o.repo_id = '%s'"
		" AND o.commit_hash = commits.commit_hash)) WHERE repo_id = '%s';"
		" UPDATE refs SET commit_id = (SELECT MAX(id) FROM commits WHERE repo_id = '%s')"
		" WHERE repo_id = '%s';"
		" %s",
		lists, f->pg ? " fields_text," : "", b, lists, f->pg ? " fields_text," : "", a, b, a,
		b, b, b, "");
	raw_sql(f, sql);
	free(sql);
	rows_before = count_rows(f);
	/*
	 * The collapse that runs before migration 10, run here by hand: undoing
	 * migration 10 alone would also rerun migration 11, whose lists are
	 * there already (tests/js/fixture.test.mjs opens a real old database).
	 */
	CHECK_INT(store_open(f->dsn, &f->st, &err), SMR_OK);
	CHECK_INT(rows_history_collapse(f->st, &from, &err), SMR_OK);
	raw_sql(f, "CREATE UNIQUE INDEX commits_hash_unique ON commits(commit_hash);"
		" DROP INDEX commits_by_hash;");
	/* three copies went, nothing else */
	CHECK_INT(rows_before - count_rows(f), 3);
	CHECK_INT(store_checkpoint_log(f->st, b, head, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	CHECK_STR(log[2].title, "one");
	CHECK_STR(log[0].space, "copier");
	checkpoints_free(log, n);
	CHECK_INT(count_checkpoints(f, b), 3);
	CHECK_INT(count_checkpoints(f, a), 3);
	CHECK(fsck_ok(f));
	free(head);
}

/* ---- updates on HEAD, merges, fast-forwards ---- */

struct add_one {
	const char *text;
	int sec;
	int fail;            /* 1: the build refuses */
	int saw_head;        /* 1 when it was called with a HEAD */
};

/* store_build_fn: HEAD's decisions plus one. */
static enum smr_rc build_add(const struct checkpoint *head, struct checkpoint *out, void *arg,
			     struct smr_err *err)
{
	struct add_one *a = arg;

	if (a->fail)
		return smr_errf(err, SMR_EUNPROC, "refused by the build");
	a->saw_head = head != NULL;
	if (head)
		checkpoint_copy_content(out, head);
	json_array_append_new(out->decisions, json_pack("{s:s}", "text", a->text));
	free(out->parent_hash);
	free(out->created_at);
	out->parent_hash = xstrdup(head ? head->hash : NULL);
	out->created_at = xasprintf("2026-01-01T01:00:%02d.000000Z", a->sec % 60);
	checkpoint_seal(out);
	return SMR_OK;
}

static enum smr_rc update_add(struct store *st, const char *space_id, const char *text,
			      int sec, struct smr_err *err)
{
	struct add_one a = { text, sec, 0, 0 };
	struct checkpoint c;
	enum smr_rc rc;

	checkpoint_init(&c);
	rc = store_checkpoint_update(st, space_id, build_add, &a, &c, err);
	checkpoint_release(&c);
	return rc;
}

CONFORMANCE(checkpoint_update_builds_on_head)
{
	struct smr_err err = SMR_ERR_INIT;
	struct add_one refuse = { "never", 9, 1, 0 };
	struct checkpoint c, head = { 0 };
	char a[37], *h = NULL, *before = NULL;

	CHECK_INT(make_space(f, "upd", a, &err), SMR_OK);
	CHECK_INT(update_add(f->st, a, "first", 1, &err), SMR_OK);     /* on an empty Space */
	CHECK_INT(update_add(f->st, a, "second", 2, &err), SMR_OK);
	h = space_head(f, a);
	CHECK_INT(store_checkpoint_get(f->st, a, h, &head, &err), SMR_OK);
	CHECK_INT(json_array_size(head.decisions), 2);
	CHECK(head.parent_hash != NULL);
	checkpoint_release(&head);
	/* a build that fails writes nothing */
	before = space_head(f, a);
	checkpoint_init(&c);
	CHECK_INT(store_checkpoint_update(f->st, a, build_add, &refuse, &c, &err), SMR_EUNPROC);
	CHECK_STR(err.msg, "refused by the build");
	checkpoint_release(&c);
	free(h);
	h = space_head(f, a);
	CHECK_STR(h, before);
	CHECK_INT(count_checkpoints(f, a), 2);
	CHECK_INT(update_add(f->st, "no such space", "x", 3, &err), SMR_ENOTFOUND);
	CHECK(fsck_ok(f));
	free(h);
	free(before);
}

/* A build that adds values of every JSON kind, so a remembered HEAD must keep each as stored. */
static enum smr_rc build_rich(const struct checkpoint *head, struct checkpoint *out, void *arg,
			      struct smr_err *err)
{
	int *n = arg;

	(void)err;
	if (head)
		checkpoint_copy_content(out, head);
	json_array_append_new(out->decisions, json_pack("{s:s, s:f, s:I, s:b, s:n, s:[s]}",
		"text", "d\u00e9cision \xe2\x9c\x93 \"quoted\"", "weight", 0.1 * *n + 1e-7,
		"big", (json_int_t)12345678901234 * *n, "sure", *n % 2, "none", "tags", "t"));
	json_object_set_new(out->metadata, "round", json_integer(*n));
	json_object_set_new(out->metadata, "nested", json_pack("{s:{s:f}}", "a", "b", 2.5));
	free(out->parent_hash);
	free(out->created_at);
	out->parent_hash = xstrdup(head ? head->hash : NULL);
	out->created_at = xasprintf("2026-01-01T02:00:%02d.000000Z", *n % 60);
	checkpoint_seal(out);
	return SMR_OK;
}

/*
 * A patch remembers what it wrote (store/head_memo.c), and the next one
 * builds on that instead of reading HEAD back: what is remembered is what
 * the store reads, value for value (and SMRITI_TEST_HEAD_MEMO=check makes
 * each patch on a remembered HEAD read it too and stop on a difference).
 */
CONFORMANCE(a_patch_builds_on_the_head_the_last_one_wrote)
{
	struct smr_err err = SMR_ERR_INIT;
	char a[37], *h = NULL, *mine, *stored;
	struct checkpoint c, got = { 0 }, memo = { 0 };

	setenv("SMRITI_TEST_HEAD_MEMO", "check", 1);
	CHECK_INT(make_space(f, "memo", a, &err), SMR_OK);
	for (int n = 1; n <= 6; n++) {
		checkpoint_init(&c);
		CHECK_INT(store_checkpoint_update(f->st, a, build_rich, &n, &c, &err), SMR_OK);
		checkpoint_release(&c);
	}
	h = space_head(f, a);
	CHECK(head_memo_get(h, &memo));
	CHECK_INT(store_checkpoint_get(f->st, a, h, &got, &err), SMR_OK);
	mine = checkpoint_content_text(&memo);
	stored = checkpoint_content_text(&got);
	CHECK_STR(mine, stored);
	CHECK_INT(json_array_size(got.decisions), 6);
	CHECK(fsck_ok(f));
	free(mine);
	free(stored);
	checkpoint_release(&got);
	checkpoint_release(&memo);
	free(h);
	unsetenv("SMRITI_TEST_HEAD_MEMO");
}

#define UPDATERS 4
#define UPDATES 10

struct updater {
	const char *dsn, *space_id;
	int index, failed;
	char last_err[512];
};

static void *updater_main(void *arg)
{
	struct updater *u = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	char text[32];

	if (store_open(u->dsn, &st, &err)) {
		u->failed = UPDATES;
		return NULL;
	}
	for (int i = 0; i < UPDATES; i++) {
		snprintf(text, sizeof(text), "u%d-%d", u->index, i);
		if (update_add(st, u->space_id, text, i, &err)) {
			u->failed++;
			snprintf(u->last_err, sizeof(u->last_err), "%s", err.msg);
		}
	}
	store_close(st);
	return NULL;
}

/* Read-modify-write inside the transaction: concurrent updates all land. */
CONFORMANCE(concurrent_updates_lose_nothing)
{
	struct smr_err err = SMR_ERR_INIT;
	struct updater u[UPDATERS];
	pthread_t th[UPDATERS];
	struct checkpoint head = { 0 };
	char a[37], *h;

	CHECK_INT(make_space(f, "busy", a, &err), SMR_OK);
	for (int i = 0; i < UPDATERS; i++) {
		u[i] = (struct updater){ f->dsn, a, i, 0, "" };
		pthread_create(&th[i], NULL, updater_main, &u[i]);
	}
	for (int i = 0; i < UPDATERS; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(u[i].failed, 0);
		if (u[i].failed)
			fprintf(stderr, "  updater %d: %s\n", i, u[i].last_err);
	}
	h = space_head(f, a);
	CHECK_INT(store_checkpoint_get(f->st, a, h, &head, &err), SMR_OK);
	CHECK_INT(json_array_size(head.decisions), UPDATERS * UPDATES);
	CHECK_INT(count_checkpoints(f, a), UPDATERS * UPDATES);
	checkpoint_release(&head);
	free(h);
	CHECK(fsck_ok(f));
}

/* The merge of ours and theirs on head (content: a title), created at second sec. */
static void make_merge(struct checkpoint *c, const char *ours, const char *theirs, int sec)
{
	make_ckpt(c, ours, "merged", sec);
	c->merge_parent_hash = xstrdup(theirs);
	checkpoint_seal(c);
}

/* 1 if Space space_id reaches hash (store_checkpoint_get through it finds it). */
/* One place a search found an item: a Space holding the row's checkpoint (a turn: its Space). */
struct found_in {
	const char *space_id;
	const struct search_row *row;
};

/*
 * store_search into *fd and the holders of every row it found
 * (store_search_holders), checking that each checkpoint's item is one row
 * whose holders come by name, and listing every (Space, row) it names
 * into *in (caller frees *in, releases *fd).
 */
static enum smr_rc search_in(struct fixture *f, const struct search_filter *sf,
			     struct search_found *fd, struct found_in **in, size_t *n,
			     struct smr_err *err)
{
	enum smr_rc rc = store_search(f->st, sf, fd, err);
	size_t cap = 0, *all = xcalloc(fd->n + 1, sizeof(*all));

	for (size_t j = 0; j < fd->n; j++)
		all[j] = j;
	if (!rc)
		rc = store_search_holders(f->st, fd, all, fd->n, err);
	free(all);
	*in = NULL;
	*n = 0;
	for (size_t j = 0; !rc && j < fd->n; j++) {
		const struct search_row *r = &fd->rows[j];

		for (size_t k = 0; k < j; k++)
			if (r->commit_hash && fd->rows[k].commit_hash &&
			    !strcmp(r->commit_hash, fd->rows[k].commit_hash) &&
			    !strcmp(r->field, fd->rows[k].field) && r->ordinal == fd->rows[k].ordinal)
				CHECK(!"a checkpoint's item found twice");
		CHECK(!r->commit_hash || r->n_holders > 0);
		for (size_t k = 0; k < (r->commit_hash ? r->n_holders : 1); k++) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 16;
				*in = xrealloc(*in, cap * sizeof(**in));
			}
			(*in)[(*n)++] = (struct found_in){
				r->commit_hash ? fd->spaces[r->holders[k]].id : r->space_id, r };
			if (k > 0)
				CHECK(strcmp(fd->spaces[r->holders[k - 1]].name,
					     fd->spaces[r->holders[k]].name) < 0);
		}
	}
	return rc;
}

static int reaches(struct fixture *f, const char *space_id, const char *hash)
{
	struct checkpoint got = { 0 };
	enum smr_rc rc = store_checkpoint_get(f->st, space_id, hash, &got, NULL);

	checkpoint_release(&got);
	return rc == SMR_OK;
}

/* Forks Space src at hash into a new Space name; its id goes into id[37]. */
static enum smr_rc fork_at(struct fixture *f, const char *src, const char *hash, const char *name,
			   char id[37], struct smr_err *err)
{
	struct space sp = { 0 };

	sys_uuid(id);
	sp.id = id;
	sp.name = (char *)name;
	sp.created_at = (char *)"2026-01-02T00:00:00.000000Z";
	return store_space_fork(f->st, &sp, src, hash, NULL, err);
}

/*
 * Who reaches what across a fork, a fork of that fork, a fork at an older
 * checkpoint and a merge: the lines a Space's HEAD and reflog go down, and
 * never the checkpoints its origin (or its origin's origin) wrote after
 * the fork.  v[] by name: o1..o5 of "origin" (o4, o5 after the forks), f1,
 * f2 of "fork" (f2 after "fork2" was made from f1), g1 of "fork2", and the
 * merge of fork's line into origin.
 */
static void check_reach_table(struct fixture *f, const char *o, const char *f1, const char *f2,
			      const char *old, char **v, const char *merged)
{
	/* o1 o2 o3 o4 o5 f1 f2 g1 */
	static const int want[4][8] = {
		{ 1, 1, 1, 1, 1, 1, 1, 0 },      /* origin, after the merge */
		{ 1, 1, 1, 0, 0, 1, 1, 0 },      /* fork */
		{ 1, 1, 1, 0, 0, 1, 0, 1 },      /* fork2: a fork of the fork */
		{ 1, 1, 0, 0, 0, 0, 0, 0 },      /* old: forked at o2 */
	};
	const char *sp[4] = { o, f1, f2, old };

	for (int s = 0; s < 4; s++)
		for (int k = 0; k < 8; k++)
			if (reaches(f, sp[s], v[k]) != want[s][k]) {
				fprintf(stderr, "  space %d, checkpoint %d: want %d\n", s, k,
					want[s][k]);
				CHECK(!"reach");
			}
	/* the other way round: the Spaces holding each one are those that reach it */
	for (int k = 0; k < 8; k++) {
		char **ids = NULL;
		size_t n = 0, held = 0;
		struct smr_err err = SMR_ERR_INIT;

		CHECK_INT(store_hash_spaces(f->st, v[k], &ids, &n, &err), SMR_OK);
		for (int s = 0; s < 4; s++) {
			int in = 0;

			for (size_t j = 0; j < n; j++)
				in |= !strcmp(ids[j], sp[s]);
			held += (size_t)in;
			if (in != want[s][k]) {
				fprintf(stderr, "  checkpoint %d held by space %d: want %d\n", k, s,
					want[s][k]);
				CHECK(!"holders");
			}
		}
		CHECK_INT(n, held);
		for (size_t j = 0; j < n; j++)
			free(ids[j]);
		free(ids);
	}
	/* and search, which finds them a chain at a time: its title's row in each */
	for (int k = 0; k < 8; k++) {
		static const char *const titles[8] = { "o1", "o2", "o3", "o4", "o5", "f1", "f2", "g1" };
		struct search_word w = { titles[k], 0 };
		struct search_filter sf = { .words = &w, .n_words = 1, .field = "title",
					    .limit = 50 };
		struct search_found fd;
		struct found_in *at = NULL;
		size_t n = 0, held = 0;
		struct smr_err err = SMR_ERR_INIT;

		CHECK_INT(search_in(f, &sf, &fd, &at, &n, &err), SMR_OK);
		CHECK_INT(fd.n, 1);   /* one checkpoint, however many Spaces hold it */
		for (int s = 0; s < 4; s++) {
			int in = 0;

			for (size_t j = 0; j < n; j++)
				in |= !strcmp(at[j].space_id, sp[s]);
			held += (size_t)in;
			if (in != want[s][k]) {
				fprintf(stderr, "  '%s' found in space %d: want %d\n", titles[k], s,
					want[s][k]);
				CHECK(!"search");
			}
		}
		CHECK_INT(n, held);
		free(at);
		search_found_release(&fd);
	}
	CHECK(reaches(f, o, merged));
	CHECK(!reaches(f, f1, merged));
	CHECK(!reaches(f, f2, merged));
}

CONFORMANCE(reach_through_forks_of_forks_and_merges)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint m;
	char o[37], a[37], b[37], c[37], *ho = NULL, *ha = NULL, *hb = NULL, *v[8] = { 0 };

	CHECK_INT(make_space(f, "origin", o, &err), SMR_OK);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(put_next(f, o, &ho, i == 0 ? "o1" : i == 1 ? "o2" : "o3", 1 + i), SMR_OK);
		v[i] = xstrdup(ho);
	}
	CHECK_INT(fork_at(f, o, v[2], "fork", a, &err), SMR_OK);
	CHECK_INT(fork_at(f, o, v[1], "old", c, &err), SMR_OK);
	ha = xstrdup(v[2]);
	CHECK_INT(put_next(f, a, &ha, "f1", 10), SMR_OK);
	v[5] = xstrdup(ha);
	CHECK_INT(fork_at(f, a, v[5], "fork2", b, &err), SMR_OK);
	hb = xstrdup(v[5]);
	CHECK_INT(put_next(f, b, &hb, "g1", 20), SMR_OK);
	v[7] = xstrdup(hb);
	CHECK_INT(put_next(f, a, &ha, "f2", 11), SMR_OK);
	v[6] = xstrdup(ha);
	CHECK_INT(put_next(f, o, &ho, "o4", 4), SMR_OK);
	v[3] = xstrdup(ho);
	CHECK_INT(put_next(f, o, &ho, "o5", 5), SMR_OK);
	v[4] = xstrdup(ho);
	make_merge(&m, ho, ha, 30);
	CHECK_INT(store_checkpoint_merge(f->st, o, &m, a, &err), SMR_OK);
	check_reach_table(f, o, a, b, c, v, m.hash);
	/* the rows written before the chains get theirs on the next open, the same answers */
	raw_sql(f, "UPDATE commits SET chain = NULL;"
		   "INSERT INTO chain_migration (id, next_id, last_id) SELECT 1, 0, MAX(id) FROM commits");
	store_close(f->st);
	setenv("SMRITI_TEST_CHAIN_BATCH", "3", 1);
	CHECK_INT(store_open(f->dsn, &f->st, &err), SMR_OK);
	unsetenv("SMRITI_TEST_CHAIN_BATCH");
	if (f->st)
		check_reach_table(f, o, a, b, c, v, m.hash);
	checkpoint_release(&m);
	for (int i = 0; i < 8; i++)
		free(v[i]);
	free(ho);
	free(ha);
	free(hb);
}

/*
 * A search with more candidates than one statement reads the holders of
 * (store.c reads them a window at a time), on a line forked near its root
 * and near its top: every row of the line is listed in exactly the Spaces
 * that hold it, older rows of a chain already read included.
 */
CONFORMANCE(search_lists_the_holders_of_many_candidates)
{
	struct smr_err err = SMR_ERR_INIT;
	char line[37], early[37], late[37], *h = NULL, *hl = NULL, *v[40] = { 0 };
	char title[32];
	struct search_word w = { "step", 0 };
	struct search_filter sf = { .words = &w, .n_words = 1, .field = "title" };
	struct search_found fd;
	struct found_in *at = NULL;
	size_t n = 0;

	CHECK_INT(make_space(f, "line", line, &err), SMR_OK);
	for (int i = 0; i < 40; i++) {
		snprintf(title, sizeof(title), "step %d", i);
		CHECK_INT(put_next(f, line, &h, title, i), SMR_OK);
		v[i] = xstrdup(h);
	}
	CHECK_INT(fork_at(f, line, v[5], "early", early, &err), SMR_OK);
	CHECK_INT(fork_at(f, line, v[35], "late", late, &err), SMR_OK);
	hl = xstrdup(v[35]);
	for (int i = 0; i < 3; i++) {
		snprintf(title, sizeof(title), "late step %d", i);
		CHECK_INT(put_next(f, late, &hl, title, 100 + i), SMR_OK);
	}
	CHECK_INT(search_in(f, &sf, &fd, &at, &n, &err), SMR_OK);
	/* one row a checkpoint: line's 40 and late's 3; held 40 times by line, 6 by early, 39 by late */
	CHECK_INT(fd.n, 40 + 3);
	CHECK_INT(n, 40 + 6 + 39);
	for (size_t j = 0; j < n; j++) {
		int k = -1;

		for (int i = 0; i < 40; i++)
			if (!strcmp(at[j].row->commit_hash, v[i]))
				k = i;
		if (k < 0) {   /* late's own */
			CHECK_STR(at[j].space_id, late);
			continue;
		}
		if (!strcmp(at[j].space_id, early))
			CHECK(k <= 5);
		else if (!strcmp(at[j].space_id, late))
			CHECK(k <= 35);
		else
			CHECK_STR(at[j].space_id, line);
	}
	free(at);
	search_found_release(&fd);
	/* a limit counts checkpoints, each with every Space that holds it */
	sf.limit = 10;
	CHECK_INT(search_in(f, &sf, &fd, &at, &n, &err), SMR_OK);
	CHECK_INT(fd.n, 10);
	CHECK_INT(n, 3 + 4 + 3 * 2);   /* late's 3; steps 39..36 in line; 35..33 in line and late */
	free(at);
	search_found_release(&fd);
	for (int i = 0; i < 40; i++)
		free(v[i]);
	free(h);
	free(hl);
}

static const char *const search_titles[] = {
	"alpha latency budget", "bravo latencies measured", "charlie lat only",
	"delta budget latency tail", "echo nothing here",
};

/* Which of search_titles a search of words finds in titles (bit i: the i-th). */
static unsigned found_titles(struct fixture *f, struct search_word *w, size_t nw)
{
	struct smr_err err = SMR_ERR_INIT;
	struct search_filter sf = { .words = w, .n_words = nw, .field = "title" };
	struct search_found fd;
	unsigned bits = 0;

	CHECK_INT(store_search(f->st, &sf, &fd, &err), SMR_OK);
	for (size_t j = 0; j < fd.n; j++)
		for (int k = 0; k < 5; k++)
			if (!strcmp(fd.rows[j].words, search_titles[k]))
				bits |= 1u << k;
	search_found_release(&fd);
	return bits;
}

/*
 * Words, prefixes and several words find exactly the items that hold them
 * as words: a word inside another word is no match (PostgreSQL tests the
 * longest word's text first, then the tsquery), and neither is an item
 * that holds some of the words but not all.
 */
CONFORMANCE(search_matches_words_and_prefixes_exactly)
{
	struct smr_err err = SMR_ERR_INIT;
	struct search_word lat = { "lat", 0 }, latp = { "lat", 1 }, latency = { "latency", 0 };
	struct search_word two[] = { { "budget", 0 }, { "latency", 0 } };
	struct search_word tail[] = { { "tail", 0 }, { "latenc", 1 } };
	char line[37], *h = NULL;

	CHECK_INT(make_space(f, "words", line, &err), SMR_OK);
	for (int i = 0; i < 5; i++)
		CHECK_INT(put_next(f, line, &h, search_titles[i], i), SMR_OK);
	CHECK_INT(found_titles(f, &latency, 1), 1u << 0 | 1u << 3);
	CHECK_INT(found_titles(f, &lat, 1), 1u << 2);
	CHECK_INT(found_titles(f, &latp, 1), 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3);
	CHECK_INT(found_titles(f, two, 2), 1u << 0 | 1u << 3);
	CHECK_INT(found_titles(f, tail, 2), 1u << 3);
	free(h);
}

CONFORMANCE(merge_copies_the_other_line_and_records_both_parents)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space nsp = { 0 };
	struct checkpoint m, got = { 0 }, *log = NULL;
	char a[37], b[37], c3[37], *ha = NULL, *hb = NULL, *base = NULL, *h;
	size_t n = 0;

	CHECK_INT(make_space(f, "origin", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &ha, "one", 1), SMR_OK);
	base = xstrdup(ha);
	sys_uuid(b);
	nsp.id = b;
	nsp.name = (char *)"fork";
	nsp.created_at = (char *)"2026-01-02T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, base, NULL, &err), SMR_OK);
	hb = xstrdup(base);
	CHECK_INT(put_next(f, a, &ha, "ours", 2), SMR_OK);
	CHECK_INT(put_next(f, b, &hb, "theirs 1", 3), SMR_OK);
	CHECK_INT(put_next(f, b, &hb, "theirs 2", 4), SMR_OK);
	/* a stale HEAD is refused and copies nothing */
	make_merge(&m, base, hb, 5);
	CHECK_INT(store_checkpoint_merge(f->st, a, &m, b, &err), SMR_ECONFLICT);
	checkpoint_release(&m);
	CHECK_INT(count_checkpoints(f, a), 2);
	/* the merge copies the fork's two new checkpoints, then writes itself */
	make_merge(&m, ha, hb, 5);
	CHECK_INT(store_checkpoint_merge(f->st, a, &m, b, &err), SMR_OK);
	/* both backends store and hash the same merge (fixed inputs, fixed hash) */
	CHECK_STR(m.hash, "a0c5cab957cac8fa74b8b0ddff312402bb4481fa02314b03aea0186081829686");
	h = space_head(f, a);
	CHECK_STR(h, m.hash);
	CHECK_INT(count_checkpoints(f, a), 5);
	CHECK_INT(store_checkpoint_get(f->st, a, m.hash, &got, &err), SMR_OK);
	CHECK_STR(got.parent_hash, ha);
	CHECK_STR(got.merge_parent_hash, hb);
	checkpoint_release(&got);
	CHECK_INT(store_checkpoint_get(f->st, a, hb, &got, &err), SMR_OK);
	CHECK_STR(got.space, "origin");
	checkpoint_release(&got);
	CHECK_INT(store_checkpoint_log(f->st, a, h, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 3);                 /* first parents: merged, ours, one */
	checkpoints_free(log, n);
	/* the ancestry follows both parents: all five, each with its time */
	{
		json_t *anc = json_object();

		CHECK_INT(store_checkpoint_ancestry(f->st, a, h, anc, &err), SMR_OK);
		CHECK_INT(json_object_size(anc), 5);
		CHECK_STR(json_string_value(json_object_get(anc, hb)),
			  "2026-01-01T00:00:04.000000Z");
		CHECK_INT(store_checkpoint_ancestry(f->st, a, "beef", anc, &err), SMR_ENOTFOUND);
		json_decref(anc);
	}
	/* the fork fast-forwards to the merge, copying it and "ours" */
	CHECK_INT(store_head_fast_forward(f->st, b, base, a, m.hash, NULL, &err), SMR_ECONFLICT);
	CHECK_INT(store_head_fast_forward(f->st, b, hb, a, m.hash, "merger", &err), SMR_OK);
	free(h);
	h = space_head(f, b);
	CHECK_STR(h, m.hash);
	CHECK_INT(count_checkpoints(f, b), 5);
	{   /* the reflog names who fast-forwarded */
		struct reflog_entry *moves = NULL;
		size_t nmoves = 0;

		CHECK_INT(store_reflog_list(f->st, b, NULL, 1, &moves, &nmoves, &err), SMR_OK);
		CHECK_INT(nmoves, 1);
		CHECK_STR(moves[0].actor, "merger");
		CHECK_STR(moves[0].action, "merge");
		reflog_entries_free(moves, nmoves);
	}
	/* a fork of a history with a merge keeps both parents of every checkpoint */
	sys_uuid(c3);
	nsp.id = c3;
	nsp.name = (char *)"copy";
	CHECK_INT(store_space_fork(f->st, &nsp, a, m.hash, NULL, &err), SMR_OK);
	CHECK_INT(count_checkpoints(f, c3), 5);
	CHECK_INT(store_checkpoint_get(f->st, c3, m.hash, &got, &err), SMR_OK);
	CHECK_STR(got.merge_parent_hash, hb);
	checkpoint_release(&got);
	CHECK(fsck_ok(f));
	checkpoint_release(&m);
	free(h);
	free(ha);
	free(hb);
	free(base);
}

/* Deletes the row of hash in space_id behind the store's back (PostgreSQL: without the merge link's key). */
/* The one row of hash (the history is shared), and whatever pointed at it stays dangling. */
static void delete_merge_parent_row(struct fixture *f, const char *hash)
{
	char *sql;

	if (f->pg) {
		sql = xasprintf("SET search_path = %s;"
				" ALTER TABLE commits DROP CONSTRAINT commits_merge_parent_commit_id_fkey;"
				" ALTER TABLE refs DROP CONSTRAINT refs_commit_id_fkey;"
				" DELETE FROM commits WHERE commit_hash = '%s'",
				f->schema, hash);
		CHECK_INT(pg_admin(sql), 0);
	} else {
		sqlite3 *db = NULL;

		sql = xasprintf("DELETE FROM commits WHERE commit_hash = '%s'", hash);
		CHECK_INT(sqlite3_open(f->dsn, &db), SQLITE_OK);
		CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	free(sql);
}

/* fsck checks both links of a merge: a missing second parent is damage. */
CONFORMANCE(scan_reports_a_missing_second_parent)
{
	struct smr_err err = SMR_ERR_INIT;
	struct scan_state s = { 0 };
	struct space nsp = { 0 };
	struct checkpoint m;
	char a[37], b[37], *ha = NULL, *hb = NULL;

	CHECK_INT(make_space(f, "merged", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &ha, "base", 1), SMR_OK);
	sys_uuid(b);
	nsp.id = b;
	nsp.name = (char *)"side";
	nsp.created_at = (char *)"2026-01-02T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, ha, NULL, &err), SMR_OK);
	hb = xstrdup(ha);
	CHECK_INT(put_next(f, a, &ha, "ours", 2), SMR_OK);
	CHECK_INT(put_next(f, b, &hb, "theirs", 3), SMR_OK);
	make_merge(&m, ha, hb, 4);
	CHECK_INT(store_checkpoint_merge(f->st, a, &m, b, &err), SMR_OK);
	CHECK(fsck_ok(f));
	delete_merge_parent_row(f, hb);         /* "theirs": in a, only the merge points at it */
	CHECK_INT(store_checkpoint_scan(f->st, a, scan_cb, &s, &err), SMR_OK);
	CHECK_INT(s.rows, 3);
	CHECK_INT(s.missing, 1);
	CHECK(!fsck_clean(f, 0));
	checkpoint_release(&m);
	free(ha);
	free(hb);
}

/* ---- sessions and turns ---- */

static void make_session(struct fixture *f, const char *repo, char id[37], const char *created,
			 const char *mounted, const char *forked_from, int64_t base)
{
	struct session sn = { 0 };

	sys_uuid(id);
	sn.id = id;
	sn.repo_id = (char *)repo;
	sn.title = (char *)"talk";
	sn.mounted_hash = (char *)mounted;
	sn.forked_from = (char *)forked_from;
	sn.history_base_seq = base;
	sn.created_at = (char *)created;
	CHECK_INT(store_session_create(f->st, &sn, NULL), SMR_OK);
}

static enum smr_rc append(struct fixture *f, const char *sid, const char *role,
			  const char *content, const char *created, int64_t expected,
			  struct turn *out, struct smr_err *err)
{
	struct turn t = { 0 };
	enum smr_rc rc;

	t.session_id = (char *)sid;
	t.role = (char *)role;
	t.content = (char *)content;
	t.prompt_tokens = -1;
	t.completion_tokens = -1;
	t.latency_ms = -1;
	t.created_at = (char *)created;
	rc = store_turn_append(f->st, &t, expected, err);
	if (out) {
		out->id = t.id;
		out->seq = t.seq;
	}
	return rc;
}

CONFORMANCE(sessions)
{
	struct smr_err err = SMR_ERR_INIT;
	struct session got = { 0 }, *v = NULL;
	char a[37], b[37], s1[37], s2[37], s3[37], *head = NULL;
	size_t n = 0;

	CHECK_INT(make_space(f, "talks", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "quiet", b, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "mounted", 1), SMR_OK);
	make_session(f, a, s2, "2026-01-01T00:00:02.000000Z", NULL, NULL, -1);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", head, NULL, -1);
	make_session(f, a, s3, "2026-01-01T00:00:03.000000Z", head, s1, 7);
	CHECK_INT(store_session_get(f->st, s3, &got, &err), SMR_OK);
	CHECK_STR(got.id, s3);
	CHECK_STR(got.repo_id, a);
	CHECK_STR(got.title, "talk");
	CHECK_STR(got.mounted_hash, head);
	CHECK_STR(got.forked_from, s1);
	CHECK_INT(got.history_base_seq, 7);
	CHECK_STR(got.created_at, "2026-01-01T00:00:03.000000Z");
	CHECK_INT(got.last_seq, 0);
	session_release(&got);
	CHECK_INT(store_session_get(f->st, s2, &got, &err), SMR_OK);
	CHECK(got.mounted_hash == NULL);
	CHECK(got.forked_from == NULL);
	CHECK_INT(got.history_base_seq, -1);
	session_release(&got);
	CHECK_INT(append(f, s1, "user", "hi", "2026-01-01T00:00:04.000000Z", -1, NULL, &err),
		  SMR_OK);
	CHECK_INT(store_session_list(f->st, a, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(v[0].id, s1);
		CHECK_INT(v[0].last_seq, 1);
		CHECK_STR(v[1].id, s2);
		CHECK_STR(v[2].id, s3);
	}
	sessions_free(v, n);
	CHECK_INT(store_session_list(f->st, b, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	sessions_free(v, n);
	CHECK_INT(store_session_get(f->st, "no-such-session", &got, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no session 'no-such-session'");
	free(head);
}

CONFORMANCE(turn_append_sequence_and_expected_last)
{
	struct smr_err err = SMR_ERR_INIT;
	struct turn t = { 0 }, *v = NULL;
	char a[37], s1[37], s2[37];
	size_t n = 0;

	CHECK_INT(make_space(f, "turns", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	make_session(f, a, s2, "2026-01-01T00:00:02.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, s1, "user", "one", "2026-01-01T00:01:00.000000Z", -1, &t, &err),
		  SMR_OK);
	CHECK_INT(t.seq, 1);
	CHECK(t.id > 0);
	CHECK_INT(append(f, s1, "assistant", "two", "2026-01-01T00:01:01.000000Z", 1, &t, &err),
		  SMR_OK);
	CHECK_INT(t.seq, 2);
	CHECK_INT(append(f, s2, "user", "other", "2026-01-01T00:01:02.000000Z", 0, &t, &err),
		  SMR_OK);
	CHECK_INT(t.seq, 1);     /* per session */
	CHECK_INT(append(f, s1, "user", "three", "2026-01-01T00:01:03.000000Z", -1, &t, &err),
		  SMR_OK);
	CHECK_INT(t.seq, 3);
	/* A writer that saw turn 1 is too late: conflict, nothing written. */
	CHECK_INT(append(f, s1, "user", "late", "2026-01-01T00:01:04.000000Z", 1, &t, &err),
		  SMR_ECONFLICT);
	CHECK_STR(err.msg, "session has moved on: its last turn is now 3, not 1");
	CHECK_INT(append(f, "no-such-session", "user", "x", "2026-01-01T00:01:05.000000Z", -1,
			 &t, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no session 'no-such-session'");
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(v[i].seq, (int64_t)i + 1);
	if (n == 3) {
		CHECK_STR(v[0].content, "one");
		CHECK_STR(v[1].role, "assistant");
		CHECK_STR(v[2].content, "three");
		CHECK_INT(v[0].prompt_tokens, -1);
		CHECK(v[0].provider == NULL);
		CHECK(v[0].error == NULL);
	}
	turns_free(v, n);
}

/* A turn placed by parent (chat message actions): the parent kept when not the turn before. */
static enum smr_rc append_after(struct fixture *f, const char *sid, const char *role,
				const char *content, int64_t parent, struct turn *out,
				struct smr_err *err)
{
	struct turn t = { 0 };
	enum smr_rc rc;

	t.session_id = (char *)sid;
	t.role = (char *)role;
	t.content = (char *)content;
	t.prompt_tokens = t.completion_tokens = t.latency_ms = -1;
	t.created_at = (char *)"2026-01-01T00:02:00.000000Z";
	t.has_parent = 1;
	t.parent_seq = parent;
	rc = store_turn_append(f->st, &t, -1, err);
	out->seq = t.seq;
	return rc;
}

/*
 * The tree of a session's turns: a parent that is the turn before reads as
 * none stored; another is kept; the shown path's end (leaf_seq) is set,
 * cleared by a turn placed by parent, and 0 for the newest.
 */
CONFORMANCE(turn_tree_parents_and_leaf)
{
	struct smr_err err = SMR_ERR_INIT;
	struct turn t = { 0 }, *v = NULL;
	struct session got = { 0 };
	char a[37], s1[37];
	size_t n = 0;

	CHECK_INT(make_space(f, "tree", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, s1, "user", "q", "2026-01-01T00:01:00.000000Z", -1, &t, &err), SMR_OK);
	CHECK_INT(append_after(f, s1, "assistant", "a1", 1, &t, &err), SMR_OK);
	CHECK_INT(t.seq, 2);
	CHECK_INT(append_after(f, s1, "assistant", "a2", 1, &t, &err), SMR_OK);
	CHECK_INT(t.seq, 3);
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(v[0].has_parent, 0);
		CHECK_INT(v[0].parent_seq, 0);
		CHECK_INT(v[1].has_parent, 0);     /* the turn before: not stored */
		CHECK_INT(v[1].parent_seq, 1);
		CHECK_INT(v[2].has_parent, 1);
		CHECK_INT(v[2].parent_seq, 1);
	}
	turns_free(v, n);
	CHECK_INT(store_session_get(f->st, s1, &got, &err), SMR_OK);
	CHECK_INT(got.leaf_seq, 0);
	CHECK_INT(got.fork_seq, 0);
	session_release(&got);
	CHECK_INT(store_session_set_leaf(f->st, s1, 2, &err), SMR_OK);
	CHECK_INT(store_session_get(f->st, s1, &got, &err), SMR_OK);
	CHECK_INT(got.leaf_seq, 2);
	session_release(&got);
	/* a plain append leaves the choice alone; one placed by parent ends the path again */
	CHECK_INT(append_after(f, s1, "user", "next", 2, &t, &err), SMR_OK);
	CHECK_INT(store_session_get(f->st, s1, &got, &err), SMR_OK);
	CHECK_INT(got.leaf_seq, 0);
	CHECK_INT(got.last_seq, 4);
	session_release(&got);
	CHECK_INT(store_session_set_leaf(f->st, "no-such-session", 1, &err), SMR_ENOTFOUND);
}

/*
 * The conflict rules store.c runs over every backend's row methods: each
 * refused write names what it met, leaves nothing behind, and ends its
 * transaction, so the next write on the same handle goes through.
 */
CONFORMANCE(shared_conflict_policy)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;
	struct turn t = { 0 };
	char a[37], sid[37], *head = NULL, *head_now, want[160];

	CHECK_INT(make_space(f, "policy", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &head, "root", 1), SMR_OK);
	/* the same checkpoint again, on a current parent: the hash is taken */
	make_ckpt(&c, NULL, "root", 1);
	CHECK_STR(c.hash, head);
	CHECK_INT(store_checkpoint_put(f->st, a, &c, head, &err), SMR_ECONFLICT);
	snprintf(want, sizeof(want), "checkpoint %.12s already exists", head);
	CHECK_STR(err.msg, want);
	checkpoint_release(&c);
	CHECK_INT(count_checkpoints(f, a), 1);
	head_now = space_head(f, a);
	CHECK_STR(head_now, head);
	free(head_now);
	/* a stale parent, then the handle writes on */
	make_ckpt(&c, NULL, "lost", 2);
	CHECK_INT(store_checkpoint_put(f->st, a, &c, NULL, &err), SMR_ECONFLICT);
	snprintf(want, sizeof(want), "parent is stale: HEAD is now %.12s (%s)", head, head);
	CHECK_STR(err.msg, want);
	checkpoint_release(&c);
	CHECK_INT(put_next(f, a, &head, "next", 3), SMR_OK);
	CHECK_INT(count_checkpoints(f, a), 2);

	/* turns: a stale expected_last is refused; the next append numbers on */
	make_session(f, a, sid, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, sid, "user", "one", "2026-01-01T00:01:00.000000Z", 0, &t, &err),
		  SMR_OK);
	CHECK_INT(append(f, sid, "user", "late", "2026-01-01T00:01:01.000000Z", 0, &t, &err),
		  SMR_ECONFLICT);
	CHECK_STR(err.msg, "session has moved on: its last turn is now 1, not 0");
	CHECK_INT(append(f, sid, "user", "two", "2026-01-01T00:01:02.000000Z", 1, &t, &err),
		  SMR_OK);
	CHECK_INT(t.seq, 2);

	free(head);
}

/* The summary of Space id among v[0..n), or NULL. */
static const struct space_summary *summary_of(const struct space_summary *v, size_t n,
					      const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].sp.id, id))
			return &v[i];
	return NULL;
}

CONFORMANCE(space_summaries_read_heads_sessions_and_last_turns_in_one_statement)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space_summary *v = NULL;
	const struct space_summary *u;
	struct turn t = { 0 };
	char empty[37], busy[37], gone[37], s1[37], s2[37], *head = NULL;
	size_t n = 0;

	CHECK_INT(make_space(f, "empty", empty, &err), SMR_OK);
	CHECK_INT(make_space(f, "busy", busy, &err), SMR_OK);
	CHECK_INT(make_space(f, "gone", gone, &err), SMR_OK);
	CHECK_INT(put_next(f, busy, &head, "one", 1), SMR_OK);
	CHECK_INT(put_next(f, busy, &head, "two", 2), SMR_OK);
	make_session(f, busy, s1, "2026-01-01T00:00:05.000000Z", NULL, NULL, -1);
	/* the last turn is the last by number, not the latest by time */
	CHECK_INT(append(f, s1, "user", "a", "2026-01-01T00:01:00.000000Z", 0, &t, &err), SMR_OK);
	CHECK_INT(append(f, s1, "user", "b", "2026-01-01T00:00:30.000000Z", 1, &t, &err), SMR_OK);
	make_session(f, busy, s2, "2026-01-01T00:02:00.000000Z", NULL, NULL, -1);
	CHECK_INT(store_space_delete(f->st, gone, NULL, &err), SMR_OK);
	CHECK_INT(store_space_summaries(f->st, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	CHECK(summary_of(v, n, gone) == NULL);
	u = summary_of(v, n, empty);
	CHECK(u && !u->sp.head && !u->head_title && !u->head_at && u->sessions == 0 &&
	      !u->newest_session_at && !u->newest_turn_at);
	CHECK(u && !strcmp(u->sp.name, "empty") && u->sp.created_at && !u->sp.deleted_at);
	u = summary_of(v, n, busy);
	CHECK(u != NULL);
	if (u) {
		CHECK_STR(u->sp.head, head);
		CHECK_STR(u->sp.name, "busy");
		CHECK_STR(u->head_title, "two");
		CHECK_STR(u->head_author, "tester");
		CHECK_STR(u->head_at, "2026-01-01T00:00:02.000000Z");
		CHECK_INT(u->sessions, 2);
		CHECK_STR(u->newest_session_at, "2026-01-01T00:02:00.000000Z");
		CHECK_STR(u->newest_turn_at, "2026-01-01T00:00:30.000000Z");
	}
	space_summaries_free(v, n);
	free(head);
}

CONFORMANCE(session_import_is_all_or_nothing)
{
	struct smr_err err = SMR_ERR_INIT;
	struct session sn = { 0 }, got = { 0 };
	struct turn turns[3] = { { 0 } }, *v = NULL;
	const char *texts[3] = { "q", "a", "q2" };
	char a[37], id[37];
	size_t n = 0;

	CHECK_INT(make_space(f, "imports", a, &err), SMR_OK);
	sys_uuid(id);
	sn.id = id;
	sn.repo_id = a;
	sn.title = (char *)"imported";
	sn.history_base_seq = -1;
	sn.created_at = (char *)"2026-01-01T00:00:01.000000Z";
	for (int i = 0; i < 3; i++) {
		turns[i].session_id = id;
		turns[i].role = (char *)(i % 2 ? "assistant" : "user");
		turns[i].content = (char *)texts[i];
		turns[i].provider = (char *)"ingest";
		turns[i].prompt_tokens = turns[i].completion_tokens = turns[i].latency_ms = -1;
		turns[i].created_at = (char *)"2026-01-01T00:00:02.000000Z";
	}
	CHECK_INT(store_session_import(f->st, &sn, turns, 3, &err), SMR_OK);
	CHECK_INT(turns[2].seq, 3);
	CHECK(turns[0].id > 0);
	CHECK_INT(store_session_get(f->st, id, &got, &err), SMR_OK);
	CHECK_INT(got.last_seq, 3);
	session_release(&got);
	CHECK_INT(store_turn_list(f->st, id, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	if (n == 3)
		CHECK_STR(v[2].content, "q2");
	turns_free(v, n);
	/* the same session id again: the whole import fails and writes no turn */
	turns[1].content = (char *)"second try";
	CHECK(store_session_import(f->st, &sn, turns, 3, &err) != SMR_OK);
	CHECK_INT(store_turn_list(f->st, id, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 3);
	if (n == 3)
		CHECK_STR(v[1].content, "a");
	turns_free(v, n);
}

CONFORMANCE(turn_fields_set_error_and_list_after)
{
	struct smr_err err = SMR_ERR_INIT;
	struct turn t = { 0 }, *v = NULL;
	char a[37], s1[37];
	size_t n = 0;

	CHECK_INT(make_space(f, "turns", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	t.session_id = s1;
	t.role = (char *)"assistant";
	t.content = (char *)"answer";
	t.provider = (char *)"openai";
	t.model = (char *)"gpt-4o";
	t.prompt_tokens = 120;
	t.completion_tokens = 0;
	t.latency_ms = 850;
	t.created_at = (char *)"2026-01-01T00:02:00.000000Z";
	CHECK_INT(store_turn_append(f->st, &t, -1, &err), SMR_OK);
	for (int i = 0; i < 4; i++)
		CHECK_INT(append(f, s1, "user", "more", "2026-01-01T00:02:01.000000Z", -1, NULL,
				 &err), SMR_OK);
	CHECK_INT(store_turn_set_error(f->st, t.id, "provider said no", &err), SMR_OK);
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 5);
	if (n == 5) {
		CHECK_INT(v[0].id, t.id);
		CHECK_STR(v[0].provider, "openai");
		CHECK_STR(v[0].model, "gpt-4o");
		CHECK_INT(v[0].prompt_tokens, 120);
		CHECK_INT(v[0].completion_tokens, 0);
		CHECK_INT(v[0].latency_ms, 850);
		CHECK_STR(v[0].error, "provider said no");
		CHECK_STR(v[0].session_id, s1);
		CHECK_STR(v[0].created_at, "2026-01-01T00:02:00.000000Z");
	}
	turns_free(v, n);
	CHECK_INT(store_turn_list(f->st, s1, 3, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(v[0].seq, 4);
		CHECK_INT(v[1].seq, 5);
	}
	turns_free(v, n);
	CHECK_INT(store_turn_list(f->st, s1, 5, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	turns_free(v, n);
	CHECK_INT(store_turn_list(f->st, "no-such-session", 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	turns_free(v, n);
}

CONFORMANCE(turns_since_head)
{
	struct smr_err err = SMR_ERR_INIT;
	char a[37], b[37], s1[37], s2[37], *head = NULL;
	int64_t count = -1;

	CHECK_INT(make_space(f, "nudge", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "other", b, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	make_session(f, a, s2, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(store_turns_since_head(f->st, a, &count, &err), SMR_OK);
	CHECK_INT(count, 0);
	append(f, s1, "user", "a", "2026-01-01T00:00:10.000000Z", -1, NULL, &err);
	append(f, s2, "user", "b", "2026-01-01T00:00:20.000000Z", -1, NULL, &err);
	CHECK_INT(store_turns_since_head(f->st, a, &count, &err), SMR_OK);
	CHECK_INT(count, 2);     /* no HEAD yet: every turn */
	CHECK_INT(put_next(f, a, &head, "saved", 15), SMR_OK);     /* at 00:00:15 */
	CHECK_INT(store_turns_since_head(f->st, a, &count, &err), SMR_OK);
	CHECK_INT(count, 1);
	append(f, s1, "user", "c", "2026-01-01T00:00:30.000000Z", -1, NULL, &err);
	CHECK_INT(store_turns_since_head(f->st, a, &count, &err), SMR_OK);
	CHECK_INT(count, 2);
	CHECK_INT(store_turns_since_head(f->st, b, &count, &err), SMR_OK);
	CHECK_INT(count, 0);
	free(head);
}

/* ---- draft jobs ---- */

static void make_job(struct fixture *f, const char *sid, char id[37], enum job_status st,
		     const char *owner)
{
	struct draft_job j = { 0 };

	sys_uuid(id);
	j.id = id;
	j.session_id = (char *)sid;
	j.status = st;
	j.provider = (char *)"anthropic";
	j.model = (char *)"claude";
	j.created_at = (char *)"2026-01-01T00:03:00.000000Z";
	j.owner = (char *)owner;
	CHECK_INT(store_job_create(f->st, &j, NULL), SMR_OK);
}

/* A servers row for id (ops/full/lease.c's), beating at `at`. */
static void make_server(struct fixture *f, const char *id, const char *at)
{
	struct server_row sv = { .id = (char *)id, .name = (char *)"host pid 1",
				 .started_at = (char *)at, .heartbeat_at = (char *)at,
				 .lease_s = 5 };

	CHECK_INT(store_server_beat(f->st, &sv, 1, NULL), SMR_OK);
}

CONFORMANCE(draft_jobs)
{
	struct smr_err err = SMR_ERR_INIT;
	struct draft_job j = { 0 }, got = { 0 };
	char a[37], s1[37], j1[37], j2[37], j3[37], j4[37], j5[37];
	size_t n = 99;

	CHECK_INT(make_space(f, "drafts", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	make_server(f, "srv-a", "2026-01-01T00:00:00.000000Z");
	make_server(f, "srv-b", "2026-01-01T00:00:00.000000Z");
	make_job(f, s1, j1, JOB_QUEUED, "srv-a");
	make_job(f, s1, j2, JOB_QUEUED, "srv-a");
	make_job(f, s1, j3, JOB_QUEUED, "srv-b");       /* another server's */
	make_job(f, s1, j4, JOB_QUEUED, NULL);          /* a local CLI's: no lease */
	make_job(f, s1, j5, JOB_QUEUED, "srv-gone");    /* its server left no row */
	CHECK_INT(store_job_get(f->st, j1, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_QUEUED);
	CHECK_STR(got.session_id, s1);
	CHECK_STR(got.provider, "anthropic");
	CHECK_STR(got.model, "claude");
	CHECK_STR(got.created_at, "2026-01-01T00:03:00.000000Z");
	CHECK_STR(got.owner, "srv-a");
	CHECK(got.result == NULL && got.started_at == NULL && got.finished_at == NULL);
	draft_job_release(&got);
	j.id = j1;
	j.status = JOB_RUNNING;
	j.started_at = (char *)"2026-01-01T00:03:01.000000Z";
	CHECK_INT(store_job_update(f->st, &j, &err), SMR_OK);
	j.status = JOB_DONE;
	j.started_at = NULL;     /* NULL keeps what is stored */
	j.result = (char *)"{\"title\":\"Drafted — ड्राफ़्ट\"}";
	j.finished_at = (char *)"2026-01-01T00:03:09.000000Z";
	CHECK_INT(store_job_update(f->st, &j, &err), SMR_OK);
	CHECK_INT(store_job_get(f->st, j1, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_DONE);
	CHECK_STR(got.started_at, "2026-01-01T00:03:01.000000Z");
	CHECK_STR(got.finished_at, "2026-01-01T00:03:09.000000Z");
	CHECK_STR(got.result, "{\"title\":\"Drafted — ड्राफ़्ट\"}");
	CHECK(got.error == NULL);
	draft_job_release(&got);
	memset(&j, 0, sizeof(j));
	j.id = j2;
	j.status = JOB_RUNNING;
	CHECK_INT(store_job_update(f->st, &j, &err), SMR_OK);
	/* srv-a's lease lapsed: its unfinished jobs fail, nobody else's */
	CHECK_INT(store_job_fail_owned(f->st, "srv-a", "server gone",
				       "2026-01-01T00:04:00.000000Z", &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	CHECK_INT(store_job_get(f->st, j2, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_FAILED);
	CHECK_STR(got.error, "server gone");
	CHECK_STR(got.finished_at, "2026-01-01T00:04:00.000000Z");
	draft_job_release(&got);
	CHECK_INT(store_job_get(f->st, j1, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_DONE);     /* finished jobs are left alone */
	draft_job_release(&got);
	/* fenced: a late result of a job taken over changes nothing */
	j.id = j2;
	j.status = JOB_DONE;
	j.result = (char *)"{}";
	CHECK_INT(store_job_update(f->st, &j, &err), SMR_OK);
	CHECK_INT(store_job_get(f->st, j2, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_FAILED);
	CHECK(got.result == NULL);
	draft_job_release(&got);
	/* owner NULL: only jobs whose owner has no row; ownerless and live ones stay */
	CHECK_INT(store_job_fail_owned(f->st, NULL, "gone", "2026-01-01T00:05:00.000000Z", &n,
				       &err), SMR_OK);
	CHECK_INT(n, 1);
	CHECK_INT(store_job_get(f->st, j5, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_FAILED);
	draft_job_release(&got);
	CHECK_INT(store_job_get(f->st, j3, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_QUEUED);
	draft_job_release(&got);
	CHECK_INT(store_job_get(f->st, j4, &got, &err), SMR_OK);
	CHECK_INT(got.status, JOB_QUEUED);
	draft_job_release(&got);
	CHECK_INT(store_job_fail_owned(f->st, "srv-a", "again", "2026-01-01T00:05:00.000000Z", &n,
				       &err), SMR_OK);
	CHECK_INT(n, 0);
	CHECK_INT(store_job_get(f->st, "no-such-job", &got, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no draft job 'no-such-job'");
}

/* ---- data round trip ---- */

static const char *const round_trip_fields =
	"{\"title\": \"स्मृति — 記憶 🧠 \\\"quoted\\\" back\\\\slash\","
	" \"summary\": \"line one\\nline two\\ttab \\u0001 control, é, ß, 🚀\","
	" \"decisions\": [{\"text\": \"Use PostgreSQL — JSONB\", \"z\": 1, \"a\": 2,"
	"   \"why\": \"नमस्ते\"}, \"plain string\"],"
	" \"assumptions\": [\"budget ≤ €500\"],"
	" \"tasks\": [{\"text\": \"ship it\", \"status\": \"done\", \"weight\": 0.1}],"
	" \"open_questions\": [\"¿Qué?\"],"
	" \"entities\": [{\"name\": \"京都\", \"kind\": \"place\", \"description\": \"古都\"}],"
	" \"artifacts\": [{\"name\": \"notes.md\", \"kind\": \"markdown\","
	"   \"content\": \"# Title\\n\\n- 🙂 item\\n\\\\n literal\"}],"
	" \"metadata\": {\"zeta\": 3.141592653589793, \"alpha\": 1e-07, \"big\": 1.5e+300,"
	"   \"neg\": -0.0, \"int\": 9007199254740993, \"one\": 1.0, \"tiny\": 5e-324,"
	"   \"nested\": {\"b\": [1, 2.5, \"x\"], \"a\": null, \"t\": true},"
	"   \"source\": {\"session\": \"s\", \"turns\": [1, 9]}}}";

static char *dump(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

CONFORMANCE(data_round_trips_byte_exactly)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c, got;
	json_t *in = json_loads(round_trip_fields, 0, NULL);
	char a[37], hash[HASH_HEX_LEN + 1];
	struct turn t = { 0 }, *v = NULL;
	char s1[37];
	size_t n = 0;

	CHECK(in != NULL);
	CHECK_INT(make_space(f, "unicode ✓", a, &err), SMR_OK);
	checkpoint_init(&c);
	CHECK_INT(checkpoint_from_json(in, &c, &err), SMR_OK);
	c.author = xstrdup("agent 🤖");
	c.created_at = xstrdup("2026-01-01T00:00:00.123456Z");
	checkpoint_seal(&c);
	CHECK_INT(store_checkpoint_put(f->st, a, &c, NULL, &err), SMR_OK);
	CHECK_INT(store_checkpoint_get(f->st, a, c.hash, &got, &err), SMR_OK);
	checkpoint_compute_hash(&got, hash);
	CHECK_STR(hash, c.hash);
	CHECK_STR(got.title, c.title);
	CHECK_STR(got.summary, c.summary);
	CHECK_STR(got.author, c.author);
	CHECK_STR(got.created_at, c.created_at);
	CHECK_STR(got.space, "unicode ✓");
	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		char *x = dump(checkpoint_list(&c, checkpoint_list_fields[i]));
		char *y = dump(checkpoint_list(&got, checkpoint_list_fields[i]));

		CHECK_STR(y, x);     /* key order and number text preserved */
		free(x);
		free(y);
	}
	{
		char *x = dump(c.metadata), *y = dump(got.metadata);

		CHECK_STR(y, x);
		free(x);
		free(y);
	}
	checkpoint_release(&got);
	CHECK(fsck_ok(f));
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, s1, "user", c.title, "2026-01-01T00:00:02.000000Z", -1, &t, &err),
		  SMR_OK);
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(v[0].content, c.title);
	turns_free(v, n);
	checkpoint_release(&c);
	json_decref(in);
}

/* ---- concurrency ---- */

#define WRITERS 6
#define ROUNDS 15

struct writer {
	const char *dsn, *space_id, *session_id;
	int index;
	int turn_ok, turn_fail, put_fail_other, open_failed;
	int64_t seqs[ROUNDS];
	char *won[ROUNDS];       /* hashes this writer got acknowledged */
	int nwon, nconflict;
	char last_err[512];
};

static void writer_put(struct store *st, struct writer *w, int round)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	struct checkpoint c;
	char title[64];
	enum smr_rc rc;

	if (store_space_get(st, w->space_id, &sp, &err)) {
		w->put_fail_other++;
		return;
	}
	snprintf(title, sizeof(title), "writer %d round %d", w->index, round);
	make_ckpt(&c, sp.head, title, round);
	rc = store_checkpoint_put(st, w->space_id, &c, sp.head, &err);
	if (!rc)
		w->won[w->nwon++] = xstrdup(c.hash);
	else if (rc == SMR_ECONFLICT)
		w->nconflict++;
	else {
		w->put_fail_other++;
		snprintf(w->last_err, sizeof(w->last_err), "%s", err.msg);
	}
	checkpoint_release(&c);
	space_release(&sp);
}

static void writer_turn(struct store *st, struct writer *w)
{
	struct smr_err err = SMR_ERR_INIT;
	struct turn t = { 0 };

	t.session_id = (char *)w->session_id;
	t.role = (char *)"user";
	t.content = (char *)"concurrent";
	t.prompt_tokens = t.completion_tokens = t.latency_ms = -1;
	t.created_at = (char *)"2026-01-01T00:00:00.000000Z";
	if (store_turn_append(st, &t, -1, &err)) {
		w->turn_fail++;
		snprintf(w->last_err, sizeof(w->last_err), "%s", err.msg);
		return;
	}
	w->seqs[w->turn_ok++] = t.seq;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct store *st = NULL;

	if (store_open(w->dsn, &st, NULL)) {
		w->open_failed = 1;
		return NULL;
	}
	for (int r = 0; r < ROUNDS; r++) {
		writer_turn(st, w);
		writer_put(st, w, r);
	}
	store_close(st);
	return NULL;
}

/* Every acknowledged hash is in the first-parent history from HEAD, and nothing else is. */
static void check_history(struct fixture *f, const char *space_id, struct writer *w)
{
	struct checkpoint *v = NULL;
	char *head = space_head(f, space_id);
	size_t n = 0, won = 0, found = 0;

	for (int i = 0; i < WRITERS; i++)
		won += (size_t)w[i].nwon;
	CHECK(won > 0);
	if (head)
		CHECK_INT(store_checkpoint_log(f->st, space_id, head, 0, &v, &n, NULL), SMR_OK);
	CHECK_INT(n, won);
	for (int i = 0; i < WRITERS; i++)
		for (int k = 0; k < w[i].nwon; k++)
			for (size_t j = 0; j < n; j++)
				found += !strcmp(v[j].hash, w[i].won[k]);
	CHECK_INT(found, won);
	CHECK_INT(count_checkpoints(f, space_id), won);
	checkpoints_free(v, n);
	free(head);
}

CONFORMANCE(concurrent_writers_lose_nothing)
{
	struct smr_err err = SMR_ERR_INIT;
	struct writer w[WRITERS];
	pthread_t th[WRITERS];
	unsigned char seen[WRITERS * ROUNDS + 1] = { 0 };
	char a[37], s1[37];
	struct turn *v = NULL;
	size_t n = 0;

	CHECK_INT(make_space(f, "contended", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	memset(w, 0, sizeof(w));
	for (int i = 0; i < WRITERS; i++) {
		w[i].dsn = f->dsn;
		w[i].space_id = a;
		w[i].session_id = s1;
		w[i].index = i;
		pthread_create(&th[i], NULL, writer_main, &w[i]);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < WRITERS; i++) {
		CHECK_INT(w[i].open_failed, 0);
		CHECK_INT(w[i].turn_fail, 0);
		CHECK_INT(w[i].put_fail_other, 0);   /* every failed put was a conflict */
		if (w[i].turn_fail || w[i].put_fail_other)
			fprintf(stderr, "  writer %d: %s\n", i, w[i].last_err);
		CHECK_INT(w[i].nwon + w[i].nconflict, ROUNDS);
		for (int k = 0; k < w[i].turn_ok; k++) {
			int64_t s = w[i].seqs[k];

			CHECK(s >= 1 && s <= WRITERS * ROUNDS);
			if (s >= 1 && s <= WRITERS * ROUNDS)
				CHECK_INT(seen[s]++, 0);     /* no duplicates */
		}
	}
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, WRITERS * ROUNDS);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(v[i].seq, (int64_t)i + 1);     /* no gaps */
	turns_free(v, n);
	check_history(f, a, w);
	CHECK(fsck_ok(f));
	for (int i = 0; i < WRITERS; i++)
		for (int k = 0; k < w[i].nwon; k++)
			free(w[i].won[k]);
}

/* A put that checks its Space is still named as the caller remembers it. */
CONFORMANCE(checkpoint_put_checked_refuses_a_renamed_space)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	struct checkpoint c;
	char a[37], b[37], *h;

	CHECK_INT(make_space(f, "first", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "second", b, &err), SMR_OK);
	sp.id = a;
	sp.name = (char *)"first";
	make_ckpt(&c, NULL, "by name", 1);
	CHECK_INT(store_checkpoint_put_checked(f->st, &sp, "first", &c, NULL, &err), SMR_OK);
	checkpoint_release(&c);
	h = space_head(f, a);
	make_ckpt(&c, h, "by id", 2);
	CHECK_INT(store_checkpoint_put_checked(f->st, &sp, a, &c, h, &err), SMR_OK);
	checkpoint_release(&c);
	free(h);
	h = space_head(f, a);
	/* the reflog and the search index are written with the move, as for any put */
	{
		static const struct search_word w = { "id", 0 };
		struct search_filter sf = { .words = &w, .n_words = 1 };
		struct reflog_entry *log = NULL;
		struct search_found fd;
		size_t n = 0;

		CHECK_INT(store_reflog_list(f->st, a, NULL, 0, &log, &n, &err), SMR_OK);
		CHECK_INT(n, 3);
		if (n == 3) {
			CHECK_STR(log[0].action, "commit");
			CHECK_STR(log[0].new_hash, h);
			CHECK_STR(log[0].reason, "commit: by id");
			CHECK_STR(log[1].action, "commit");
		}
		reflog_entries_free(log, n);
		CHECK_INT(store_search(f->st, &sf, &fd, &err), SMR_OK);
		CHECK_INT(fd.n, 2);   /* the title and the decision "by id", not those of "by name" */
		for (size_t i = 0; i < fd.n; i++)
			CHECK_STR(fd.rows[i].commit_hash, h);
		search_found_release(&fd);
	}
	/* the name means another Space now, or the Space has another name: nothing written */
	make_ckpt(&c, h, "stale memory", 3);
	CHECK_INT(store_checkpoint_put_checked(f->st, &sp, "second", &c, h, &err), SMR_ENOTFOUND);
	CHECK_INT(store_space_rename(f->st, a, "renamed", NULL, &err), SMR_OK);
	CHECK_INT(store_checkpoint_put_checked(f->st, &sp, a, &c, h, &err), SMR_ENOTFOUND);
	CHECK(strstr(err.msg, "no longer names") != NULL);
	checkpoint_release(&c);
	CHECK_INT(count_checkpoints(f, a), 2);
	CHECK_INT(count_checkpoints(f, b), 0);
	free(h);
}

/*
 * A put whose search-index rows outnumber what PostgreSQL's pipeline holds
 * at once (it reads what is in flight and goes on): every row is written,
 * and the next put on the same handle is whole too.
 */
CONFORMANCE(put_with_more_index_rows_than_a_pipeline_holds)
{
	static const struct search_word w = { "bulk", 0 };
	struct search_filter sf = { .words = &w, .n_words = 1, .limit = 5000 };
	struct smr_err err = SMR_ERR_INIT;
	struct search_found fd;
	struct checkpoint c;
	char a[37], text[48], *head = NULL;

	CHECK_INT(make_space(f, "bulk", a, &err), SMR_OK);
	checkpoint_init(&c);
	c.title = xstrdup("many items");
	c.summary = xstrdup("");
	c.author = xstrdup("tester");
	c.created_at = xstrdup("2026-01-01T00:00:01.000000Z");
	for (int i = 0; i < 1100; i++) {
		snprintf(text, sizeof(text), "bulk item number %d", i);
		json_array_append_new(i < 700 ? c.decisions : c.assumptions,
				      json_pack("{s:s}", "text", text));
	}
	checkpoint_seal(&c);
	CHECK_INT(store_checkpoint_put(f->st, a, &c, NULL, &err), SMR_OK);
	head = xstrdup(c.hash);
	checkpoint_release(&c);
	CHECK_INT(store_search(f->st, &sf, &fd, &err), SMR_OK);
	CHECK_INT(fd.n, 1100);
	search_found_release(&fd);
	CHECK_INT(put_next(f, a, &head, "bulk after", 2), SMR_OK);
	CHECK_INT(store_search(f->st, &sf, &fd, &err), SMR_OK);
	CHECK_INT(fd.n, 1102);   /* the new title and decision */
	search_found_release(&fd);
	CHECK(fsck_ok(f));
	free(head);
}

/* The data version moves with every commit, this handle's or another's; PostgreSQL has none. */
CONFORMANCE(data_version_moves_with_every_commit)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *other = NULL;
	uint64_t v0 = 0, v1 = 0, v2 = 0, v3 = 0;
	char a[37], *head = NULL;

	CHECK_INT(make_space(f, "versioned", a, &err), SMR_OK);
	CHECK_INT(store_data_version(f->st, &v0, &err), SMR_OK);
	if (f->pg) {
		CHECK(v0 == 0);
		return;
	}
	CHECK(v0 != 0);
	CHECK_INT(store_data_version(f->st, &v1, &err), SMR_OK);
	CHECK(v1 == v0);                                  /* nothing happened */
	CHECK_INT(put_next(f, a, &head, "own write", 1), SMR_OK);
	CHECK_INT(store_data_version(f->st, &v2, &err), SMR_OK);
	CHECK(v2 != v1);
	CHECK_INT(store_open(f->dsn, &other, &err), SMR_OK);
	{
		struct checkpoint c;

		make_ckpt(&c, head, "another handle", 2);
		CHECK_INT(store_checkpoint_put(other, a, &c, head, &err), SMR_OK);
		checkpoint_release(&c);
	}
	CHECK_INT(store_data_version(f->st, &v3, &err), SMR_OK);
	CHECK(v3 != v2);
	store_close(other);
	free(head);
}

/*
 * A database left in a rollback-journal mode (by another tool) has no WAL
 * index: the data version still moves with a commit of another handle, and
 * reading it makes no -shm file.
 */
TEST(store_sqlite_data_version_without_wal)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture fx;
	struct store *other = NULL;
	sqlite3 *raw = NULL;
	uint64_t v0 = 0, v1 = 0, v2 = 0;
	char a[37], *head = NULL, *shm;

	CHECK_INT(fixture_open(&fx, 0), 0);
	CHECK_INT(make_space(&fx, "journal", a, &err), SMR_OK);
	store_close(fx.st);
	fx.st = NULL;
	CHECK_INT(sqlite3_open(fx.dsn, &raw), SQLITE_OK);
	CHECK_INT(sqlite3_exec(raw, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	shm = xasprintf("%s-shm", fx.dsn);
	unlink(shm);
	CHECK_INT(store_open(fx.dsn, &fx.st, &err), SMR_OK);
	CHECK_INT(store_open(fx.dsn, &other, &err), SMR_OK);
	CHECK_INT(store_data_version(fx.st, &v0, &err), SMR_OK);
	CHECK_INT(store_data_version(fx.st, &v1, &err), SMR_OK);
	CHECK(v1 == v0);
	{
		struct fixture of = fx;

		of.st = other;
		CHECK_INT(put_next(&of, a, &head, "by another handle", 1), SMR_OK);
	}
	CHECK_INT(store_data_version(fx.st, &v2, &err), SMR_OK);
	CHECK(v2 != v1);
	CHECK(access(shm, F_OK) != 0);
	store_close(other);
	free(shm);
	free(head);
	fixture_close(&fx);
}

/*
 * SQLite reads its data version from the WAL-index header: a checkpoint
 * that empties the WAL restarts it at frame 0, and the next commit still
 * gives a version this handle has not seen.
 */
TEST(store_sqlite_data_version_moves_across_wal_restarts)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture fx;
	sqlite3 *raw = NULL;
	uint64_t seen[12];
	char a[37], *head = NULL;
	int n = 0;

	CHECK_INT(fixture_open(&fx, 0), 0);
	CHECK_INT(make_space(&fx, "restarted", a, &err), SMR_OK);
	CHECK_INT(sqlite3_open(fx.dsn, &raw), SQLITE_OK);
	for (int i = 0; i < 6; i++) {
		CHECK_INT(store_data_version(fx.st, &seen[n++], &err), SMR_OK);
		CHECK_INT(put_next(&fx, a, &head, "step", i), SMR_OK);
		CHECK_INT(store_data_version(fx.st, &seen[n++], &err), SMR_OK);
		CHECK_INT(sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
			  SQLITE_OK);
		CHECK(seen[n - 1] != seen[n - 2]);
		for (int k = 0; k < n - 2; k++)
			CHECK(seen[n - 1] != seen[k]);
	}
	sqlite3_close(raw);
	free(head);
	fixture_close(&fx);
}

/*
 * Racers: every thread opens its own handle, waits at a barrier, then
 * writes on the same parent (a checkpoint, and a turn after the same last
 * number): exactly one of each wins, every other gets SMR_ECONFLICT.
 */
#define RACERS 8

struct racer {
	const char *dsn, *space_id, *session_id, *parent;
	pthread_barrier_t *start;
	int index;
	enum smr_rc put_rc, turn_rc;
	char hash[65], put_msg[512];
	int64_t seq;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	struct turn t = { 0 };
	struct checkpoint c;
	char title[32];

	r->put_rc = r->turn_rc = SMR_EINTERNAL;
	if (store_open(r->dsn, &st, NULL))
		st = NULL;
	snprintf(title, sizeof(title), "racer %d", r->index);
	make_ckpt(&c, r->parent, title, r->index);
	snprintf(r->hash, sizeof(r->hash), "%s", c.hash);
	t.session_id = (char *)r->session_id;
	t.role = (char *)"user";
	t.content = title;
	t.prompt_tokens = t.completion_tokens = t.latency_ms = -1;
	t.created_at = (char *)"2026-01-01T00:00:02.000000Z";
	pthread_barrier_wait(r->start);
	if (st) {
		r->put_rc = store_checkpoint_put(st, r->space_id, &c, r->parent, &err);
		snprintf(r->put_msg, sizeof(r->put_msg), "%s", err.msg);
	}
	pthread_barrier_wait(r->start);
	if (st) {
		r->turn_rc = store_turn_append(st, &t, 1, NULL);
		r->seq = t.seq;
	}
	checkpoint_release(&c);
	store_close(st);
	return NULL;
}

CONFORMANCE(racing_writers_on_one_parent_exactly_one_wins)
{
	struct smr_err err = SMR_ERR_INIT;
	struct racer r[RACERS];
	pthread_t th[RACERS];
	pthread_barrier_t start;
	char a[37], s1[37], *root = NULL, *head, want[128];
	struct turn *v = NULL;
	size_t n = 0;
	int won = -1, turn_won = -1, wins = 0, turn_wins = 0;

	CHECK_INT(make_space(f, "race", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &root, "root", 0), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, s1, "user", "first", "2026-01-01T00:00:01.000000Z", 0, NULL, &err),
		  SMR_OK);
	pthread_barrier_init(&start, NULL, RACERS);
	memset(r, 0, sizeof(r));
	for (int i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ .dsn = f->dsn, .space_id = a, .session_id = s1,
				       .parent = root, .start = &start, .index = i + 1 };
		pthread_create(&th[i], NULL, racer_main, &r[i]);
	}
	for (int i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < RACERS; i++) {
		CHECK(r[i].put_rc == SMR_OK || r[i].put_rc == SMR_ECONFLICT);
		CHECK(r[i].turn_rc == SMR_OK || r[i].turn_rc == SMR_ECONFLICT);
		if (r[i].put_rc == SMR_OK)
			won = i, wins++;
		if (r[i].turn_rc == SMR_OK)
			turn_won = i, turn_wins++;
	}
	CHECK_INT(wins, 1);
	CHECK_INT(turn_wins, 1);
	if (wins != 1 || turn_wins != 1)
		goto out;
	/* HEAD is the winner's; every loser was told so, and wrote nothing */
	head = space_head(f, a);
	CHECK_STR(head, r[won].hash);
	free(head);
	CHECK_INT(count_checkpoints(f, a), 2);
	snprintf(want, sizeof(want), "parent is stale: HEAD is now %.12s (%s)", r[won].hash,
		 r[won].hash);
	for (int i = 0; i < RACERS; i++)
		if (i != won)
			CHECK_STR(r[i].put_msg, want);
	CHECK_INT(r[turn_won].seq, 2);
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	turns_free(v, n);
	CHECK(fsck_ok(f));
out:
	free(root);
}

/* ---- PostgreSQL only ---- */

/* Opens a PostgreSQL fixture for a pg_* test; 0 when it should run. */
static int pg_fixture(struct fixture *f)
{
	int rc = fixture_open(f, 1);

	if (rc == -2)
		CHECK(!"fixture set-up failed");
	return rc;
}

/* One value of a query on the case's schema; caller free()s; NULL on error or no row. */
static char *pg_value(struct fixture *f, const char *sql)
{
	PGconn *c = PQconnectdb(f->dsn);
	PGresult *r = PQexec(c, sql);
	char *v = NULL;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = xstrdup(PQgetvalue(r, 0, 0));
	else if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "  %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return v;
}

TEST(pg_schema_has_jsonb_and_migration_rows)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture f;
	struct checkpoint c;
	char a[37], *v;

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	CHECK_INT(make_space(&f, "jsonb", a, &err), SMR_OK);
	make_ckpt(&c, NULL, "queryable decision", 1);
	json_object_set_new(c.metadata, "n", json_real(0.5));
	checkpoint_seal(&c);
	CHECK_INT(store_checkpoint_put(f.st, a, &c, NULL, &err), SMR_OK);
	/* each item once, its text JSON that operators can query (migration 8) */
	v = pg_value(&f, "SELECT body::jsonb->>'text' FROM items");
	CHECK_STR(v, "queryable decision");
	free(v);
	v = pg_value(&f, "SELECT jsonb_typeof(metadata_->'n') FROM commits");
	CHECK_STR(v, "number");
	free(v);
	v = pg_value(&f, "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations");
	CHECK_STR(v, all_migrations());
	free(v);
	checkpoint_release(&c);
	fixture_close(&f);
}

/* Runs sql (no rows) in f's schema on a connection of its own; 0 when it succeeded. */
static int pg_do(struct fixture *f, const char *sql)
{
	PGconn *c = PQconnectdb(f->dsn);
	PGresult *r;
	int ok;

	PQsetNoticeProcessor(c, quiet, NULL);
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "  %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

/*
 * Two items with one id (64 bits of SHA-256 alike) are never silent: an
 * item stored with other bytes than a write's item of that id (here made
 * by hand) fails the write, which then changes nothing, even when the
 * write's chunk is stored already and its items are not sent again.
 */
TEST(pg_item_with_other_bytes_fails_the_write)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture f;
	struct checkpoint c1, c2, got;
	char a[37], b[37], *v;

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	CHECK_INT(make_space(&f, "first", a, &err), SMR_OK);
	CHECK_INT(make_space(&f, "second", b, &err), SMR_OK);
	make_ckpt(&c1, NULL, "shared decision", 1);
	CHECK_INT(store_checkpoint_put(f.st, a, &c1, NULL, &err), SMR_OK);
	CHECK(pg_do(&f, "UPDATE items SET body = '{\"text\":\"forged\"}'") == 0);
	make_ckpt(&c2, NULL, "shared decision", 2);
	CHECK_INT(store_checkpoint_put(f.st, b, &c2, NULL, &err), SMR_EINTERNAL);
	v = pg_value(&f, "SELECT count(*) FROM commits");
	CHECK_STR(v, "1");
	free(v);
	memset(&got, 0, sizeof(got));
	CHECK_INT(store_head_get(f.st, b, &got, &err), SMR_OK);
	CHECK(got.hash == NULL);
	checkpoint_release(&got);
	checkpoint_release(&c1);
	checkpoint_release(&c2);
	fixture_close(&f);
}

/*
 * A handle's HEAD re-read asks whether HEAD is still the commit id it read
 * last: after the tables are emptied under it with their ids restarted
 * (what an operator's TRUNCATE ... RESTART IDENTITY does), the same id names
 * another checkpoint, and the read gives that one.
 */
TEST(pg_head_reread_after_ids_restart)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture f;
	struct checkpoint c1, c2, got;
	char a[37], b[37];

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	make_ckpt(&c1, NULL, "before", 1);
	make_ckpt(&c2, NULL, "after", 2);
	CHECK_INT(make_space(&f, "again", a, &err), SMR_OK);
	CHECK_INT(store_checkpoint_put(f.st, a, &c1, NULL, &err), SMR_OK);
	for (int i = 0; i < 2; i++) {
		CHECK_INT(store_head_get(f.st, "again", &got, &err), SMR_OK);
		CHECK_STR(got.title, "before");
		checkpoint_release(&got);
	}
	CHECK_INT(pg_do(&f, "TRUNCATE repos, commits RESTART IDENTITY CASCADE"), 0);
	CHECK_INT(make_space(&f, "again", b, &err), SMR_OK);
	CHECK_INT(store_checkpoint_put(f.st, b, &c2, NULL, &err), SMR_OK);
	CHECK_INT(store_head_get(f.st, "again", &got, &err), SMR_OK);
	CHECK_STR(got.hash, c2.hash);
	CHECK_STR(got.title, "after");
	checkpoint_release(&got);
	checkpoint_release(&c1);
	checkpoint_release(&c2);
	fixture_close(&f);
}

struct opener {
	const char *dsn;
	enum smr_rc rc;
	char msg[512];
};

static void *opener_main(void *arg)
{
	struct opener *o = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;

	o->rc = store_open(o->dsn, &st, &err);
	snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
	store_close(st);
	return NULL;
}

TEST(pg_concurrent_starters_migrate_once)
{
	struct opener o[6];
	pthread_t th[6];
	struct fixture f;
	char *sql, *dsn, *v;

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	/* A second, empty schema that six processes' worth of handles migrate at once. */
	sql = xasprintf("CREATE SCHEMA %s_m", f.schema);
	CHECK_INT(pg_admin(sql), 0);
	free(sql);
	dsn = xasprintf("%s%coptions=-csearch_path%%3D%s_m", pg_base(),
			strchr(pg_base(), '?') ? '&' : '?', f.schema);
	for (int i = 0; i < 6; i++) {
		o[i].dsn = dsn;
		pthread_create(&th[i], NULL, opener_main, &o[i]);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(o[i].rc, SMR_OK);
		if (o[i].rc)
			fprintf(stderr, "  opener %d: %s\n", i, o[i].msg);
	}
	sql = xasprintf("SELECT string_agg(version::text, ',' ORDER BY version)"
			" FROM %s_m.schema_migrations", f.schema);
	v = pg_value(&f, sql);
	CHECK_STR(v, all_migrations());
	free(v);
	free(sql);
	sql = xasprintf("DROP SCHEMA %s_m CASCADE", f.schema);
	pg_admin(sql);
	free(sql);
	free(dsn);
	fixture_close(&f);
}

TEST(pg_unreachable_server_is_unavailable)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;

	if (!pg_base())
		return;
	/* Port 1 on loopback: nothing listens there. */
	CHECK_INT(store_open("postgres://smriti@127.0.0.1:1/smriti?connect_timeout=2", &st, &err),
		  SMR_EUNAVAIL);
	CHECK(strstr(err.msg, "cannot connect to the database: ") == err.msg);
	CHECK(strchr(err.msg, '\n') == NULL);
	CHECK(st == NULL);
}

/* Terminates the backends of this fixture's handles; with wait, only one stuck on a lock. */
static int terminate_backends(struct fixture *f, int waiting_on_lock)
{
	char *sql, *v = NULL;
	int n;

	sql = xasprintf("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
			" WHERE application_name = '%s' AND pid <> pg_backend_pid()%s", f->app,
			waiting_on_lock ? " AND wait_event_type = 'Lock'" : "");
	for (int tries = 0; tries < 1000; tries++) {
		free(v);
		v = pg_value(f, sql);
		if (v && strcmp(v, "0"))
			break;
		usleep(10000);
	}
	free(sql);
	n = v ? atoi(v) : 0;
	free(v);
	return n;
}

TEST(pg_idle_connection_loss_is_invisible)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space *v = NULL;
	char a[37], *head = NULL;
	struct fixture f;
	size_t n = 0;

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	CHECK_INT(make_space(&f, "survivor", a, &err), SMR_OK);
	CHECK(terminate_backends(&f, 0) >= 1);
	/* Nothing was in flight: a read reconnects and succeeds... */
	CHECK_INT(store_space_list(f.st, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	spaces_free(v, n);
	/* ...and so does a write (its BEGIN met the dead connection, so nothing had happened). */
	CHECK(terminate_backends(&f, 0) >= 1);
	CHECK_INT(put_next(&f, a, &head, "after loss", 1), SMR_OK);
	free(head);
	fixture_close(&f);
}

struct blocked_put {
	struct fixture *f;
	const char *space_id;
	enum smr_rc rc;
	char msg[512];
};

static void *blocked_put_main(void *arg)
{
	struct blocked_put *b = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;

	make_ckpt(&c, NULL, "in flight", 1);
	b->rc = store_checkpoint_put(b->f->st, b->space_id, &c, NULL, &err);
	snprintf(b->msg, sizeof(b->msg), "%s", err.msg);
	checkpoint_release(&c);
	return NULL;
}

TEST(pg_connection_lost_in_flight_then_recovers)
{
	struct smr_err err = SMR_ERR_INIT;
	struct blocked_put b = { 0 };
	struct fixture f;
	pthread_t th;
	PGconn *locker;
	PGresult *r;
	char a[37], *sql, *head = NULL, *h;

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	CHECK_INT(make_space(&f, "flight", a, &err), SMR_OK);
	/* Another client holds the Space's HEAD row, so the put waits inside its transaction. */
	locker = PQconnectdb(f.dsn);
	sql = xasprintf("BEGIN; SELECT 1 FROM refs WHERE repo_id = '%s' FOR UPDATE", a);
	r = PQexec(locker, sql);
	CHECK_INT(PQresultStatus(r), PGRES_TUPLES_OK);
	PQclear(r);
	free(sql);
	b.f = &f;
	b.space_id = a;
	pthread_create(&th, NULL, blocked_put_main, &b);
	CHECK_INT(terminate_backends(&f, 1), 1);
	pthread_join(th, NULL);
	CHECK_INT(b.rc, SMR_EUNAVAIL);
	CHECK_STR(b.msg, "database connection lost; retry");
	r = PQexec(locker, "ROLLBACK");
	PQclear(r);
	PQfinish(locker);
	/* Nothing was written, and the same handle works again on the next call. */
	h = space_head(&f, a);
	CHECK(h == NULL);
	free(h);
	CHECK_INT(put_next(&f, a, &head, "retried", 2), SMR_OK);
	h = space_head(&f, a);
	CHECK_STR(h, head);
	free(h);
	free(head);
	fixture_close(&f);
}

struct blocked_read {
	struct fixture *f;
	const char *space_id;
	enum smr_rc rc;
	char *hash;             /* what the read said HEAD is */
	int64_t cpu_ns;         /* CPU time the reading thread used */
};

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *blocked_read_main(void *arg)
{
	struct blocked_read *b = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c = { 0 };
	int64_t t0 = thread_cpu_ns();

	b->rc = store_head_get(b->f->st, b->space_id, &c, &err);
	b->cpu_ns = thread_cpu_ns() - t0;
	b->hash = xstrdup(c.hash);
	checkpoint_release(&c);
	return NULL;
}

/* Whether a handle of this case waits on a lock in the server (polled until it does, up to 10 s). */
static int waits_on_lock(struct fixture *f)
{
	char *sql = xasprintf("SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s'"
			      " AND wait_event_type = 'Lock'", f->app);
	char *v = NULL;
	int n = 0;

	for (int tries = 0; tries < 1000 && n == 0; tries++) {
		free(v);
		v = pg_value(f, sql);
		n = v ? atoi(v) : 0;
		if (n == 0)
			usleep(10000);
	}
	free(v);
	free(sql);
	return n;
}

/*
 * A wait for a reply polls the socket briefly before it blocks
 * (postgres.c, await_reply).  After many quick HEAD reads, each answered
 * from the server with what another handle committed in between, a read
 * that the server holds for a long time (another client locks the refs
 * table) must block rather than spin: its thread uses a small part of the
 * CPU time a spin through the whole wait would.
 */
TEST(pg_a_slow_reply_is_waited_for_not_spun_on)
{
	struct smr_err err = SMR_ERR_INIT;
	struct blocked_read b = { 0 };
	struct store *other = NULL;
	struct fixture f;
	struct checkpoint c;
	char a[37], *head = NULL, *h;
	pthread_t th;
	PGconn *locker;
	PGresult *r;

	if (pg_fixture(&f)) {
		fixture_close(&f);
		return;
	}
	CHECK_INT(make_space(&f, "spin", a, &err), SMR_OK);
	CHECK_INT(store_open(f.dsn, &other, &err), SMR_OK);
	for (int i = 0; i < 200 && other; i++) {
		/* written through another handle: this handle's next read must see it */
		char *title = xasprintf("step %d", i);

		make_ckpt(&c, head, title, i + 1);
		CHECK_INT(store_checkpoint_put(other, a, &c, head, &err), SMR_OK);
		free(head);
		head = xstrdup(c.hash);
		checkpoint_release(&c);
		free(title);
		for (int k = 0; k < 5; k++) {
			memset(&c, 0, sizeof(c));
			CHECK_INT(store_head_get(f.st, a, &c, &err), SMR_OK);
			CHECK_STR(c.hash, head);
			checkpoint_release(&c);
		}
	}
	store_close(other);
	locker = PQconnectdb(f.dsn);
	r = PQexec(locker, "BEGIN; LOCK TABLE refs IN ACCESS EXCLUSIVE MODE");
	CHECK_INT(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	b.f = &f;
	b.space_id = a;
	pthread_create(&th, NULL, blocked_read_main, &b);
	CHECK_INT(waits_on_lock(&f), 1);
	usleep(300000);          /* the read stays blocked a while: a spin would fill it */
	r = PQexec(locker, "ROLLBACK");
	PQclear(r);
	PQfinish(locker);
	pthread_join(th, NULL);
	CHECK_INT(b.rc, SMR_OK);
	CHECK_STR(b.hash, head);
	/* at least 300 ms blocked; a spin is capped at 50 us, the rest is a read's own work */
	CHECK(b.cpu_ns < 50 * 1000000LL);
	free(b.hash);
	h = space_head(&f, a);
	CHECK_STR(h, head);
	free(h);
	free(head);
	fixture_close(&f);
}

/* ---- time travel through the operations: every @{...} form ---- */

static char conf_clock[32];

static void conf_now(char out[32]);
static const struct ops_opts conf_opts = { .now = conf_now };

static void conf_now(char out[32])
{
	snprintf(out, 32, "%s", conf_clock);
}

/* Writes a checkpoint titled title at time at through the operations. */
static void commit_at(struct ops_ctx *ctx, const char *space, const char *title,
		      const char *at, char hash[65])
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c = { 0 };
	json_t *fields = json_pack("{s:s, s:[s]}", "title", title, "decisions", title);

	snprintf(conf_clock, sizeof(conf_clock), "%s", at);
	CHECK_INT(ops_checkpoint_create(ctx, space, fields, NULL, "ann", &c, &err), SMR_OK);
	snprintf(hash, 65, "%s", c.hash ? c.hash : "");
	checkpoint_release(&c);
	json_decref(fields);
}

/* The title ref resolves to, or the error code as text. */
static char *title_of(struct ops_ctx *ctx, const char *ref, struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_resolve(ctx, ref, &c, err);
	char *t = rc ? xasprintf("error %d", (int)rc) : xstrdup(c.title);

	checkpoint_release(&c);
	return t;
}

#define CHECK_REF(ref, want)                                                \
	do {                                                                \
		char *t_ = title_of(ctx, ref, &err);                       \
		CHECK_STR(t_, want);                                        \
		free(t_);                                                   \
	} while (0)

CONFORMANCE(at_refs_walk_the_reflog)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	char one[65], two[65], three[65];

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "tt", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_at(ctx, "tt", "one", "2026-12-01T10:00:00.000000Z", one);
	commit_at(ctx, "tt", "two", "2026-12-01T12:00:00.000000Z", two);
	commit_at(ctx, "tt", "three", "2026-12-02T08:00:00.000000Z", three);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-03T12:00:00.000000Z");

	/* @{N}: git's meaning, N moves ago; ~N applies after it */
	CHECK_REF("tt@{0}", "three");
	CHECK_REF("tt@{1}", "two");
	CHECK_REF("tt@{2}", "one");
	CHECK_REF("tt@{1}~1", "one");
	CHECK_REF("tt@{3}", "error 5");      /* the creation: no checkpoint yet */
	CHECK(strstr(err.msg, "had no checkpoints yet"));
	CHECK_REF("tt@{4}", "error 5");      /* past the start of the reflog */
	CHECK(strstr(err.msg, "goes back past the start of the reflog of 'tt' (4 entries)"));

	/* @{DATE}: HEAD as it was then */
	CHECK_REF("tt@{2026-12-01 12:00}", "two");
	CHECK_REF("tt@{2026-12-01T11:59:59Z}", "one");
	CHECK_REF("tt@{2026-12-01 10:00:00}", "one");
	CHECK_REF("tt@{yesterday}", "three");        /* 2026-12-02 12:00 */
	CHECK_REF("tt@{2.days.ago}", "two");         /* 2026-12-01 12:00 */
	CHECK_REF("tt@{36 hours ago}", "two");       /* 2026-12-02 00:00 */
	CHECK_REF("tt@{now}", "three");
	/* after the last move: HEAD now; before the first: a clear error */
	CHECK_REF("tt@{2030-01-01}", "three");
	CHECK_REF("tt@{2026-12-01 09:30}", "error 5");
	CHECK(strstr(err.msg, "had no checkpoints yet then"));
	CHECK_REF("tt@{2026-11-30}", "error 5");
	CHECK(strstr(err.msg, "did not exist yet"));
	CHECK_REF("tt@{soon}", "error 2");
	CHECK_REF("tt@{}", "error 2");
	CHECK_REF("@{1}", "error 2");                /* no Space to read */

	/* restore with a bare @{N} means the Space restored into */
	CHECK_INT(ops_restore(ctx, "tt", "@{2}", "ann", &c, &err), SMR_OK);
	CHECK_STR(c.title, "one");
	checkpoint_release(&c);
	CHECK_REF("tt@{1}", "three");

	/* a deleted Space stays reachable through its reflog */
	CHECK_INT(ops_space_delete(ctx, "tt", &err), SMR_OK);
	CHECK_REF("tt", "error 5");
	CHECK_REF("tt@{0}", "error 5");
	CHECK(strstr(err.msg, "was deleted then"));
	CHECK_REF("tt@{1}", "one");
	CHECK_REF("tt@{2026-12-01 12:30}", "two");
	ops_close(ctx);
}

/* ---- search: the same answers on every backend ---- */

/* Commits fields (a JSON text) to space at time at through the operations. */
static void commit_json(struct ops_ctx *ctx, const char *space, const char *json,
			const char *author, const char *at)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c = { 0 };
	json_t *fields = json_loads(json, 0, NULL);

	CHECK(fields != NULL);
	snprintf(conf_clock, sizeof(conf_clock), "%s", at);
	if (ops_checkpoint_create(ctx, space, fields, NULL, author, &c, &err))
		test_fail(__FILE__, __LINE__, "commit_json: %s", err.msg);
	checkpoint_release(&c);
	json_decref(fields);
}

/* Runs query (with field, when given) and returns the result document. */
static json_t *search_for(struct ops_ctx *ctx, const char *query, const char *field,
			  enum smr_rc want)
{
	struct smr_err err = SMR_ERR_INIT;
	struct search_params p = { .query = query, .field = field };
	json_t *out = NULL;

	if (ops_search(ctx, &p, &out, &err) != want)
		test_fail(__FILE__, __LINE__, "search '%.40s': got '%s'", query, err.msg);
	if (want && !*err.msg)
		CHECK(!"an error without a message");
	return out;
}

static const char *hit_str(const json_t *res, size_t i, const char *key)
{
	const json_t *r = json_array_get(json_object_get(res, "results"), i);

	return json_string_value(json_object_get(r, key));
}

/* The Spaces holding the first result's checkpoint: [{space, in_head}]. */
static const json_t *hit_spaces(const json_t *res)
{
	return json_object_get(json_array_get(json_object_get(res, "results"), 0), "spaces");
}

static size_t hits(const json_t *res)
{
	return json_array_size(json_object_get(res, "results"));
}

CONFORMANCE(search_ranks_snippets_and_first_appearance)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	json_t *res;
	char *big;

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "infra", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "infra", "{\"title\":\"Event bus\",\"decisions\":"
		    "[\"Use Kafka for the event bus\"],\"artifacts\":[{\"name\":\"notes.md\","
		    "\"kind\":\"text\",\"content\":\"Long notes about queues, brokers, retention,"
		    " partitions and consumer groups; kafka appears once here among many other"
		    " words about operations and costs.\"}]}",
		    "ann", "2026-12-01T10:00:00.000000Z");
	commit_json(ctx, "infra", "{\"title\":\"Kafka is too heavy\",\"decisions\":"
		    "[\"Use Kafka for the event bus\", \"Drop Kafka; use Postgres LISTEN/NOTIFY\"]}",
		    "bo", "2026-12-02T10:00:00.000000Z");
	commit_json(ctx, "infra", "{\"title\":\"Simpler\",\"decisions\":"
		    "[\"Drop Kafka; use Postgres LISTEN/NOTIFY\"],\"open_questions\":"
		    "[\"Who operates the database?\"]}",
		    "cy", "2026-12-03T10:00:00.000000Z");

	/* ranking: a title beats a list item beats one mention in a long artifact */
	res = search_for(ctx, "kafka", NULL, SMR_OK);
	CHECK_INT(hits(res), 4);
	CHECK_STR(hit_str(res, 0, "field"), "title");
	CHECK_STR(hit_str(res, 0, "snippet"), "Kafka is too heavy");
	CHECK_STR(hit_str(res, hits(res) - 1, "field"), "artifacts");
	json_decref(res);

	/* an item is indexed once, where it appeared; HEAD may have dropped it */
	res = search_for(ctx, "event bus", "decisions", SMR_OK);
	CHECK_INT(hits(res), 1);
	{
		const json_t *r = json_array_get(json_object_get(res, "results"), 0);

		CHECK_STR(json_string_value(json_object_get(json_object_get(r, "first"),
							   "author")), "ann");
		CHECK(json_is_false(json_object_get(r, "in_head")));
		CHECK_STR(json_string_value(json_object_get(r, "snippet")),
			  "Use Kafka for the event bus");
		CHECK_INT(json_array_size(json_object_get(r, "highlights")), 2);
	}
	json_decref(res);
	res = search_for(ctx, "listen", NULL, SMR_OK);
	CHECK_INT(hits(res), 1);
	CHECK(json_is_true(json_object_get(json_array_get(json_object_get(res, "results"), 0),
					   "in_head")));
	CHECK_STR(hit_str(res, 0, "author"), "bo");
	json_decref(res);

	/* a phrase must be in order; a prefix matches longer words */
	res = search_for(ctx, "\"drop kafka\"", NULL, SMR_OK);
	CHECK_INT(hits(res), 1);
	json_decref(res);
	res = search_for(ctx, "\"kafka drop\"", NULL, SMR_OK);
	CHECK_INT(hits(res), 0);
	json_decref(res);
	res = search_for(ctx, "oper*", NULL, SMR_OK);
	CHECK_INT(hits(res), 2);   /* "operates", "operations" */
	json_decref(res);

	/* hostile queries: results or a clear error, never a database error */
	res = search_for(ctx, "kafka NEAR/2 bus", NULL, SMR_OK);
	CHECK_INT(hits(res), 0);   /* NEAR is a word like any other */
	json_decref(res);
	json_decref(search_for(ctx, "\"unclosed kafka", NULL, SMR_OK));
	json_decref(search_for(ctx, "title:kafka AND (bus OR ^x) -y * \"\" '", NULL, SMR_OK));
	json_decref(search_for(ctx, "'; DROP TABLE commits; --", NULL, SMR_OK));
	json_decref(search_for(ctx, "* ** \" ( ) :", NULL, SMR_EINVAL));
	json_decref(search_for(ctx, "", NULL, SMR_EINVAL));
	json_decref(search_for(ctx, "\xff\xfe", NULL, SMR_EINVAL));
	big = xcalloc(10 * 1024 + 1, 1);
	memset(big, 'k', 10 * 1024);
	json_decref(search_for(ctx, big, NULL, SMR_ETOOBIG));
	for (size_t i = 0; i < 10 * 1024; i += 2)
		big[i] = ' ';
	json_decref(search_for(ctx, big, NULL, SMR_ETOOBIG));
	free(big);
	{
		struct buf many = BUF_INIT(0);

		for (int i = 0; i < 40; i++)   /* forty different words: too many */
			buf_addf(&many, "w%d ", i);
		json_decref(search_for(ctx, many.ptr, NULL, SMR_EINVAL));
		buf_release(&many);
	}
	json_decref(search_for(ctx, "kafka", "nope", SMR_EINVAL));
	ops_close(ctx);
}

/* Searches "kafka" (turns too) between since and until; the number of results, or -1 for an error. */
static int between(struct ops_ctx *ctx, const char *since, const char *until,
		   struct smr_err *err)
{
	struct search_params p = { .query = "kafka", .since = since, .until = until, .turns = 1 };
	json_t *res = NULL;
	int n;

	if (ops_search(ctx, &p, &res, err))
		return -1;
	n = (int)hits(res);
	json_decref(res);
	return n;
}

CONFORMANCE(search_since_and_until_bound_the_dates)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	char s1[37];

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-11-30T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "dates", NULL, &sp, &err), SMR_OK);
	commit_json(ctx, "dates", "{\"title\":\"one\",\"decisions\":[\"kafka first\"]}",
		    "ann", "2026-12-01T10:00:00.000000Z");
	commit_json(ctx, "dates", "{\"title\":\"two\",\"decisions\":[\"kafka first\","
		    " \"kafka second\"]}", "bo", "2026-12-02T10:00:05.250000Z");
	make_session(f, sp.id, s1, "2026-12-03T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, s1, "user", "kafka in a turn", "2026-12-03T12:00:00.000000Z", -1,
			 NULL, &err), SMR_OK);
	space_release(&sp);

	CHECK_INT(between(ctx, NULL, NULL, &err), 3);
	/* a date alone is that day's first instant: --until 2026-12-02 is before the 2nd */
	CHECK_INT(between(ctx, NULL, "2026-12-02", &err), 1);
	CHECK_INT(between(ctx, NULL, "2026-12-02 23:59:59", &err), 2);
	/* a time names its whole second, microseconds included */
	CHECK_INT(between(ctx, NULL, "2026-12-02T10:00:05Z", &err), 2);
	CHECK_INT(between(ctx, NULL, "2026-12-02T10:00:04Z", &err), 1);
	CHECK_INT(between(ctx, "2026-12-02", "2026-12-02 23:59:59", &err), 1);
	CHECK_INT(between(ctx, "2026-12-02", NULL, &err), 2);
	CHECK_INT(between(ctx, "2026-12-02T10:00:05Z", "2026-12-02T10:00:05Z", &err), 1);
	/* relative dates are anchored on the operations' clock */
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-04T12:00:00.000000Z");
	CHECK_INT(between(ctx, NULL, "3 days ago", &err), 1);
	/* bad input: a clear error, not an empty answer */
	CHECK_INT(between(ctx, NULL, "soon", &err), -1);
	CHECK_INT(err.code, SMR_EUSAGE);
	err = (struct smr_err)SMR_ERR_INIT;
	CHECK_INT(between(ctx, "2026-12-03", "2026-12-02", &err), -1);
	CHECK_INT(err.code, SMR_EINVAL);
	CHECK(strstr(err.msg, "until") != NULL);
	ops_close(ctx);
}

CONFORMANCE(search_turns_with_the_turns_flag)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct search_params p = { .query = "postgres", .turns = 1 };
	json_t *res = NULL;
	char a[37], s1[37];

	CHECK_INT(ops_open_on(&ctx, f->st, NULL, NULL), SMR_OK);
	CHECK_INT(make_space(f, "chatty", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, s1, "user", "Should we move the queue to Postgres?",
			 "2026-01-01T00:00:02.000000Z", -1, NULL, &err), SMR_OK);
	CHECK_INT(append(f, s1, "assistant", "Yes: LISTEN/NOTIFY is enough here.",
			 "2026-01-01T00:00:03.000000Z", -1, NULL, &err), SMR_OK);
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(hits(res), 1);
	CHECK_STR(hit_str(res, 0, "kind"), "turn");
	CHECK_STR(hit_str(res, 0, "author"), "user");
	CHECK_STR(hit_str(res, 0, "session_id"), s1);
	CHECK_STR(hit_str(res, 0, "snippet"), "Should we move the queue to Postgres?");
	json_decref(res);
	p.turns = 0;   /* without the flag, only checkpoints */
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(hits(res), 0);
	json_decref(res);
	p.turns = 1;
	p.query = "notify";
	p.author = "assistant";
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(hits(res), 1);
	json_decref(res);
	/* a deleted Space's turns are out of reach */
	CHECK_INT(ops_space_delete(ctx, "chatty", &err), SMR_OK);
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(hits(res), 0);
	json_decref(res);
	ops_close(ctx);
}

/* ---- a write that names no parent goes on the HEAD of its moment ---- */

/* store_reseal_fn: c onto head, counted in *arg. */
static void reseal_counted(const char *head, struct checkpoint *c, void *arg)
{
	(*(int *)arg)++;
	free(c->parent_hash);
	c->parent_hash = xstrdup(head);
	checkpoint_seal(c);
}

/* Writes title (decisions: title, and also when given) sealed on parent, with store_checkpoint_put_on_head. */
static enum smr_rc put_onto(struct store *st, const char *space_id, const char *parent,
			    const char *title, const char *also, int sec, int *reseals,
			    char **hash, struct smr_err *err)
{
	struct checkpoint c;
	enum smr_rc rc;

	make_ckpt(&c, parent, title, sec);
	if (also) {
		json_array_append_new(c.decisions, json_pack("{s:s}", "text", also));
		checkpoint_seal(&c);
	}
	rc = store_checkpoint_put_on_head(st, space_id, &c, reseal_counted, reseals, err);
	if (!rc && hash)
		*hash = xstrdup(c.hash);
	checkpoint_release(&c);
	return rc;
}

/*
 * A write on HEAD that checks its Space is still named as the caller
 * remembers it: sealed on a HEAD that moved since, it goes on the HEAD of
 * its moment; a name that means another Space now, or a Space renamed,
 * writes nothing.
 */
CONFORMANCE(put_on_head_checked_refuses_a_renamed_space)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	struct checkpoint c;
	int reseals = 0;
	char a[37], b[37], *h1, *h2;

	CHECK_INT(make_space(f, "first", a, &err), SMR_OK);
	CHECK_INT(make_space(f, "second", b, &err), SMR_OK);
	sp.id = a;
	sp.name = (char *)"first";
	make_ckpt(&c, NULL, "one", 1);
	CHECK_INT(store_checkpoint_put_on_head_checked(f->st, &sp, "first", &c, reseal_counted,
						       &reseals, &err), SMR_OK);
	checkpoint_release(&c);
	h1 = space_head(f, a);
	/* sealed on no parent, as a stale memory would: sealed again on h1 */
	make_ckpt(&c, NULL, "two", 2);
	CHECK_INT(store_checkpoint_put_on_head_checked(f->st, &sp, a, &c, reseal_counted,
						       &reseals, &err), SMR_OK);
	CHECK_INT(reseals, 1);
	CHECK_STR(c.parent_hash, h1);
	checkpoint_release(&c);
	h2 = space_head(f, a);
	make_ckpt(&c, h2, "stale memory", 3);
	CHECK_INT(store_checkpoint_put_on_head_checked(f->st, &sp, "second", &c, reseal_counted,
						       &reseals, &err), SMR_ENOTFOUND);
	checkpoint_release(&c);
	CHECK_INT(store_space_rename(f->st, a, "renamed", NULL, &err), SMR_OK);
	make_ckpt(&c, h2, "stale memory", 3);
	CHECK_INT(store_checkpoint_put_on_head_checked(f->st, &sp, a, &c, reseal_counted,
						       &reseals, &err), SMR_ENOTFOUND);
	CHECK(strstr(err.msg, "no longer names") != NULL);
	checkpoint_release(&c);
	CHECK_INT(count_checkpoints(f, a), 2);
	CHECK_INT(count_checkpoints(f, b), 0);
	free(h1);
	free(h2);
}

CONFORMANCE(put_on_head_takes_the_head_of_its_moment)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint got = { 0 };
	struct ops_ctx *ctx = NULL;
	int reseals = 0;
	char a[37], *root = NULL, *c1 = NULL, *c2 = NULL, *c3 = NULL, *h;
	json_t *res;

	CHECK_INT(make_space(f, "moment", a, &err), SMR_OK);
	CHECK_INT(put_next(f, a, &root, "zebra", 1), SMR_OK);
	/* sealed on the empty Space it was read as: goes on the root, "zebra" not indexed again */
	CHECK_INT(put_onto(f->st, a, NULL, "quokka", "zebra", 2, &reseals, &c1, &err), SMR_OK);
	CHECK_INT(reseals, 1);
	CHECK_INT(store_checkpoint_get(f->st, a, c1, &got, &err), SMR_OK);
	CHECK_STR(got.parent_hash, root);
	checkpoint_release(&got);
	/* sealed on the root, two writes late */
	CHECK_INT(put_onto(f->st, a, root, "okapi", "zebra", 3, &reseals, &c2, &err), SMR_OK);
	CHECK_INT(reseals, 2);
	/* sealed on HEAD as it still is: written as sealed */
	CHECK_INT(put_onto(f->st, a, c2, "tapir", NULL, 4, &reseals, &c3, &err), SMR_OK);
	CHECK_INT(reseals, 2);
	h = space_head(f, a);
	CHECK_STR(h, c3);
	CHECK_INT(store_checkpoint_get(f->st, a, c2, &got, &err), SMR_OK);
	CHECK_STR(got.parent_hash, c1);
	checkpoint_release(&got);
	CHECK_INT(count_checkpoints(f, a), 4);
	/* each item indexed once, by the checkpoint that brought it */
	CHECK_INT(ops_open_on(&ctx, f->st, NULL, NULL), SMR_OK);
	res = search_for(ctx, "zebra", "decisions", SMR_OK);
	CHECK_INT(hits(res), 1);
	CHECK_STR(hit_str(res, 0, "commit_hash"), root);
	json_decref(res);
	res = search_for(ctx, "okapi", "decisions", SMR_OK);
	CHECK_INT(hits(res), 1);
	CHECK_STR(hit_str(res, 0, "commit_hash"), c2);
	json_decref(res);
	/* no Space: not found, nothing written */
	CHECK_INT(put_onto(f->st, "no such space", NULL, "x", NULL, 5, &reseals, NULL, &err),
		  SMR_ENOTFOUND);
	CHECK(fsck_ok(f));
	free(root);
	free(c1);
	free(c2);
	free(c3);
	free(h);
	ops_close(ctx);
}

#define ONTO_WRITERS 6
#define ONTO_WRITES 12

struct onto_writer {
	const char *dsn, *space_id;
	int index, failed, reseals;
	char last_err[512];
};

/* Writes ONTO_WRITES checkpoints, each sealed on the HEAD this handle read before it. */
static void *onto_main(void *arg)
{
	struct onto_writer *w = arg;
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	struct space sp = { 0 };
	char title[32];

	if (store_open(w->dsn, &st, &err)) {
		w->failed = ONTO_WRITES;
		return NULL;
	}
	for (int i = 0; i < ONTO_WRITES; i++) {
		snprintf(title, sizeof(title), "w%d-%d", w->index, i);
		space_release(&sp);
		memset(&sp, 0, sizeof(sp));
		if (store_space_get(st, w->space_id, &sp, &err) ||
		    put_onto(st, w->space_id, sp.head, title, NULL, i, &w->reseals, NULL, &err)) {
			w->failed++;
			snprintf(w->last_err, sizeof(w->last_err), "%s", err.msg);
		}
	}
	space_release(&sp);
	store_close(st);
	return NULL;
}

/* Racing writers without a parent: every write lands, each on the one before it. */
CONFORMANCE(racing_writers_without_a_parent_all_land_in_one_line)
{
	struct smr_err err = SMR_ERR_INIT;
	struct onto_writer w[ONTO_WRITERS];
	pthread_t th[ONTO_WRITERS];
	struct checkpoint *log = NULL;
	size_t n = 0;
	char a[37], *h;

	CHECK_INT(make_space(f, "line", a, &err), SMR_OK);
	for (int i = 0; i < ONTO_WRITERS; i++) {
		w[i] = (struct onto_writer){ f->dsn, a, i, 0, 0, "" };
		pthread_create(&th[i], NULL, onto_main, &w[i]);
	}
	for (int i = 0; i < ONTO_WRITERS; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(w[i].failed, 0);
		if (w[i].failed)
			fprintf(stderr, "  writer %d: %s\n", i, w[i].last_err);
	}
	h = space_head(f, a);
	CHECK_INT(store_checkpoint_log(f->st, a, h, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, ONTO_WRITERS * ONTO_WRITES);
	CHECK_INT(count_checkpoints(f, a), ONTO_WRITERS * ONTO_WRITES);
	checkpoints_free(log, n);
	free(h);
	CHECK(fsck_ok(f));
}

/* ---- a checkpoint stores its change (issue 32) ---- */

/* One integer a query gives on the case's database; -1 on error. */
static int64_t db_int(struct fixture *f, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	int64_t v = -1;
	char *t;

	if (f->pg) {
		t = pg_value(f, sql);
		v = t ? strtoll(t, NULL, 10) : -1;
		free(t);
		return v;
	}
	if (sqlite3_open(f->dsn, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	else
		fprintf(stderr, "  %s: %s\n", sql, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	sqlite3_close(db);
	return v;
}

/*
 * Rows on which reach_tips and a rebuild from the refs and the reflog
 * (store/sql.h's SQL_TIPS_SELECT) disagree: 0 when they are the same.
 */
static int64_t tips_unlike_rebuild(struct fixture *f)
{
	return db_int(f, "SELECT (SELECT count(*) FROM (SELECT chain, repo_id, top_id FROM reach_tips"
		      " EXCEPT " SQL_TIPS_SELECT ") a) + (SELECT count(*) FROM (" SQL_TIPS_SELECT
		      " EXCEPT SELECT chain, repo_id, top_id FROM reach_tips) b)");
}

/* Bytes of the whole database: pages of the file, or every relation of the case's schema. */
static int64_t db_bytes(struct fixture *f)
{
	if (f->pg)
		return db_int(f, "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c"
			      " JOIN pg_namespace n ON n.oid = c.relnamespace"
			      " WHERE n.nspname = current_schema() AND c.relkind = 'r'");
	return db_int(f, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size");
}

/* A state of n decisions of some length, on parent, with tasks "task 1" .. "task t" (of name). */
static void big_state(struct checkpoint *c, const char *name, const char *parent, int n, int t,
		      int sec)
{
	char text[160];

	make_ckpt(c, parent, "a large state", sec);
	json_array_clear(c->decisions);
	for (int i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "A decision about one part of the system, written"
			 " out at the length people write them: number %d of %s", i, name);
		json_array_append_new(c->decisions, json_pack("{s:s}", "text", text));
	}
	for (int i = 1; i <= t; i++) {
		snprintf(text, sizeof(text), "task %d of %s", i, name);
		json_array_append_new(c->tasks, json_pack("{s:s, s:s}", "text", text, "status",
							  "open"));
	}
	checkpoint_seal(c);
}

#define GROWTH_STEPS 100

/*
 * Bytes a checkpoint that adds one task to a state of n decisions adds to
 * the database, over GROWTH_STEPS of them in Space name; each read back
 * equal to what was written.
 */
static int64_t growth(struct fixture *f, const char *name, int n)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c, back;
	char a[37], *head = NULL;
	int64_t items, bytes;

	CHECK_INT(make_space(f, name, a, &err), SMR_OK);
	big_state(&c, name, NULL, n, 1, 1);
	CHECK_INT(store_checkpoint_put(f->st, a, &c, NULL, &err), SMR_OK);
	head = xstrdup(c.hash);
	checkpoint_release(&c);
	items = db_int(f, "SELECT count(*) FROM items");
	bytes = db_bytes(f);
	for (int i = 2; i <= GROWTH_STEPS + 1; i++) {
		big_state(&c, name, head, n, i, i);
		CHECK_INT(store_checkpoint_put(f->st, a, &c, head, &err), SMR_OK);
		free(head);
		head = xstrdup(c.hash);
		if (i <= GROWTH_STEPS)
			checkpoint_release(&c);
	}
	bytes = (db_bytes(f) - bytes) / GROWTH_STEPS;
	CHECK_INT(db_int(f, "SELECT count(*) FROM items"), items + GROWTH_STEPS);
	CHECK_INT(store_checkpoint_get(f->st, a, head, &back, &err), SMR_OK);
	CHECK(json_equal(back.decisions, c.decisions) && json_equal(back.tasks, c.tasks));
	checkpoint_release(&back);
	checkpoint_release(&c);
	free(head);
	fprintf(stderr, "  %s: %lld bytes a checkpoint on %d decisions\n",
		f->pg ? "postgres" : "sqlite", (long long)bytes, n);
	return bytes;
}

/*
 * A checkpoint stores its change: one that adds a task to a state of 300
 * decisions (about 40 KB as JSON) stores that task and a chunk or two, so
 * it costs about what it costs on a state of 5 (the fixed rows of a
 * checkpoint: its row, its reflog row, its search rows), and on SQLite at
 * most 2 KB; a copy of the state was 40 KB.
 */
CONFORMANCE(checkpoint_stores_its_change)
{
	int64_t small = growth(f, "small", 5), big = growth(f, "big", 300);

	CHECK(big <= small + 512);
	if (!f->pg)
		CHECK(big <= 2048);
	CHECK(fsck_ok(f));
}

/* ---- gc: reflog expiry and unused content (issue 32) ---- */

/* Puts title with decisions "shared by all" and also (NULL: none) on *head, at second sec. */
static void put_content(struct fixture *f, const char *space_id, char **head, const char *title,
			const char *also, int sec)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c;

	make_ckpt(&c, *head, title, sec);
	json_array_append_new(c.decisions, json_pack("{s:s}", "text", "shared by all"));
	if (also)
		json_array_append_new(c.decisions, json_pack("{s:s}", "text", also));
	checkpoint_seal(&c);
	CHECK_INT(store_checkpoint_put(f->st, space_id, &c, *head, &err), SMR_OK);
	free(*head);
	*head = xstrdup(c.hash);
	checkpoint_release(&c);
}

/* Moves the HEAD of Space id (name) to hash at `at`, as a restore does. */
static void move_head(struct fixture *f, const char *id, const char *name, const char *hash,
		      const char *at)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { .id = (char *)id, .name = (char *)name };
	struct ref_move mv = { "cy", "reset", at };
	struct import_space in = { .space = &sp, .head = hash, .move = &mv };

	CHECK_INT(store_import(f->st, &in, 1, &err), SMR_OK);
}

static int64_t items_like(struct fixture *f, const char *text)
{
	char *sql = xasprintf("SELECT count(*) FROM items WHERE body LIKE '%%%s%%'", text);
	int64_t n = db_int(f, sql);

	free(sql);
	return n;
}

/*
 * A Space whose HEAD went back from "two" to "one" and on to "three":
 * "two" is in its reflog only (the commit that made it, the move off it
 * on 2026-01-04; the other entries are of 2026-01-01).
 * *h2 gets its hash, *head the HEAD's.
 */
static void abandoned_line(struct fixture *f, char a[37], char **h2, char **head)
{
	struct smr_err err = SMR_ERR_INIT;
	char *h1;

	CHECK_INT(make_space(f, "line", a, &err), SMR_OK);
	*head = NULL;
	put_content(f, a, head, "one", NULL, 1);
	h1 = xstrdup(*head);
	put_content(f, a, head, "two", "only two says this", 2);
	*h2 = xstrdup(*head);
	move_head(f, a, "line", h1, "2026-01-04T00:00:00.000000Z");
	free(*head);
	*head = h1;
	put_content(f, a, head, "three", NULL, 3);
	/* the entries written without a move's time are dated now: date them as the test's */
	raw_sql(f, "UPDATE reflog SET created_at = '2026-01-01T00:00:00.000000Z'"
		" WHERE created_at > '2026-01-04T00:00:00.000000Z'");
}

/*
 * What a Space reaches is kept as its HEAD moves (the refs' triggers) and
 * as an import appends reflog rows, and is what a rebuild from the refs
 * and the reflog makes: puts, a move back that leaves a line in the reflog
 * only, a fork from that line, a fast-forward merge, and a bundle's
 * history naming a checkpoint no ref of the Space ever took (without its
 * own reach, that one would be missing).
 */
CONFORMANCE(reach_tips_are_what_the_refs_and_the_reflog_name)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space side = { .name = (char *)"side", .created_at = (char *)"2026-01-05T00:00:00.000000Z" };
	struct reflog_entry e = { 0, NULL, (char *)"side", NULL, NULL, (char *)"commit",
				  (char *)"cy", (char *)"", (char *)"2026-01-06T00:00:00.000000Z" };
	const struct reflog_entry *ev[] = { &e };
	struct import_space in = { .space = &side, .reflog = ev, .n_reflog = 1 };
	struct space late = { .name = (char *)"late", .created_at = side.created_at };
	struct checkpoint *log = NULL;
	char a[37], b[37], c[37], *h2 = NULL, *head = NULL, *sh = NULL;
	size_t n = 0;

	abandoned_line(f, a, &h2, &head);
	CHECK_INT(tips_unlike_rebuild(f), 0);
	sys_uuid(b);
	side.id = b;
	CHECK_INT(store_space_fork(f->st, &side, a, h2, NULL, &err), SMR_OK);
	sh = xstrdup(h2);
	put_content(f, b, &sh, "side one", NULL, 5);
	CHECK_INT(tips_unlike_rebuild(f), 0);
	/* "late" forks line's root and fast-forwards to line's HEAD */
	CHECK_INT(store_checkpoint_log(f->st, a, head, 0, &log, &n, &err), SMR_OK);
	sys_uuid(c);
	late.id = c;
	CHECK_INT(store_space_fork(f->st, &late, a, log[n - 1].hash, NULL, &err), SMR_OK);
	CHECK_INT(store_head_fast_forward(f->st, c, log[n - 1].hash, a, head, "cy", &err), SMR_OK);
	checkpoints_free(log, n);
	CHECK_INT(tips_unlike_rebuild(f), 0);
	/* the bundle says "side" once had line's HEAD, on a chain it never reached */
	e.space_id = b;
	e.old_hash = sh;
	e.new_hash = head;
	CHECK_INT(store_import(f->st, &in, 1, &err), SMR_OK);
	CHECK_INT(tips_unlike_rebuild(f), 0);
	CHECK_INT(db_int(f, "SELECT count(*) FROM reach_tips") > 2, 1);
	free(h2);
	free(head);
	free(sh);
}

/*
 * gc --prune expires the reflog entries older than its date, never a
 * Space's newest, and removes the checkpoints only they reached, with the
 * items and chunks no other checkpoint names; what a ref or a remaining
 * entry reaches stays, and shared items with it.
 */
CONFORMANCE(gc_expires_the_reflog_and_removes_what_only_it_reached)
{
	struct smr_err err = SMR_ERR_INIT;
	struct gc_counts gc;
	struct checkpoint got = { 0 };
	struct reflog_entry *log = NULL;
	char a[37], *h2 = NULL, *head = NULL;
	int64_t chunks;
	size_t n = 0;

	abandoned_line(f, a, &h2, &head);
	chunks = db_int(f, "SELECT count(*) FROM chunks");
	/* no expiry: everything stays */
	CHECK_INT(store_gc_prune(f->st, NULL, NULL, &gc, &err), SMR_OK);
	CHECK_INT(gc.reflog + gc.unreached + gc.chunks + gc.items, 0);
	/* the move off "two" (2026-01-04) still names it: kept */
	CHECK_INT(store_gc_prune(f->st, NULL, "2026-01-02T00:00:00.000000Z", &gc, &err), SMR_OK);
	CHECK_INT(gc.reflog, 3);
	CHECK_INT(gc.unreached, 0);
	CHECK_INT(store_checkpoint_get(f->st, a, h2, &got, &err), SMR_OK);
	checkpoint_release(&got);
	/* every entry but the newest expires: "two" goes, its own item and chunk too */
	CHECK_INT(store_gc_prune(f->st, NULL, "2026-02-01T00:00:00.000000Z", &gc, &err), SMR_OK);
	CHECK_INT(gc.reflog, 1);
	CHECK_INT(gc.unreached, 1);
	CHECK_INT(store_checkpoint_get(f->st, NULL, h2, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(store_reflog_list(f->st, a, NULL, 0, &log, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	CHECK_STR(log[0].new_hash, head);
	reflog_entries_free(log, n);
	CHECK_INT(count_checkpoints(f, a), 2);
	CHECK_INT(items_like(f, "only two says this"), 0);
	CHECK_INT(items_like(f, "shared by all"), 1);
	CHECK(gc.items >= 2 && gc.chunks >= 1);
	CHECK_INT(db_int(f, "SELECT count(*) FROM chunks"), chunks - (int64_t)gc.chunks);
	CHECK_INT(store_checkpoint_get(f->st, a, head, &got, &err), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(json_array_get(got.decisions, 1), "text")),
		  "shared by all");
	checkpoint_release(&got);
	CHECK(fsck_ok(f));
	/* once more: nothing left to do */
	CHECK_INT(store_gc_prune(f->st, NULL, "2026-02-01T00:00:00.000000Z", &gc, &err), SMR_OK);
	CHECK_INT(gc.reflog + gc.unreached + gc.chunks + gc.items, 0);
	free(h2);
	free(head);
}

/* A checkpoint a session is mounted on is kept when the reflog entries that named it expire. */
CONFORMANCE(gc_expiry_keeps_what_a_session_mounts)
{
	struct smr_err err = SMR_ERR_INIT;
	struct gc_counts gc;
	struct checkpoint got = { 0 };
	struct session sn = { 0 };
	char a[37], sid[37], *h2 = NULL, *head = NULL;

	abandoned_line(f, a, &h2, &head);
	sys_uuid(sid);
	sn.id = sid;
	sn.repo_id = a;
	sn.title = (char *)"on two";
	sn.mounted_hash = h2;
	sn.created_at = (char *)"2026-01-05T00:00:00.000000Z";
	sn.history_base_seq = -1;
	CHECK_INT(store_session_create(f->st, &sn, &err), SMR_OK);
	CHECK_INT(store_gc_prune(f->st, NULL, "2026-02-01T00:00:00.000000Z", &gc, &err), SMR_OK);
	CHECK_INT(gc.reflog, 4);
	CHECK_INT(gc.unreached, 0);
	CHECK_INT(store_checkpoint_get(f->st, NULL, h2, &got, &err), SMR_OK);
	checkpoint_release(&got);
	CHECK_INT(items_like(f, "only two says this"), 1);
	CHECK(fsck_ok(f));
	free(h2);
	free(head);
}

/*
 * gc --prune of a deleted Space removes the items and chunks only its
 * checkpoints named; those a surviving Space's checkpoints share stay.
 */
CONFORMANCE(gc_prune_removes_unused_items_and_chunks)
{
	struct smr_err err = SMR_ERR_INIT;
	struct gc_counts gc;
	struct space nsp = { 0 };
	struct checkpoint got = { 0 };
	char a[37], b[37], *head = NULL, *h1;

	CHECK_INT(make_space(f, "gone", a, &err), SMR_OK);
	put_content(f, a, &head, "one", NULL, 1);
	h1 = xstrdup(head);
	put_content(f, a, &head, "two", "only the deleted space says this", 2);
	sys_uuid(b);
	nsp.id = b;
	nsp.name = (char *)"kept";
	nsp.created_at = (char *)"2026-01-03T00:00:00.000000Z";
	CHECK_INT(store_space_fork(f->st, &nsp, a, h1, NULL, &err), SMR_OK);
	put_content(f, b, &h1, "kept's own", NULL, 4);
	CHECK_INT(store_space_delete(f->st, a, NULL, &err), SMR_OK);
	CHECK_INT(items_like(f, "only the deleted space says this"), 1);
	CHECK_INT(store_gc_prune(f->st, NULL, NULL, &gc, &err), SMR_OK);
	CHECK_INT(gc.spaces, 1);
	CHECK(gc.items >= 2 && gc.chunks >= 1);
	CHECK_INT(store_checkpoint_get(f->st, NULL, head, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(items_like(f, "only the deleted space says this"), 0);
	CHECK_INT(items_like(f, "shared by all"), 1);
	CHECK_INT(count_checkpoints(f, b), 2);
	CHECK_INT(store_checkpoint_get(f->st, b, h1, &got, &err), SMR_OK);
	checkpoint_release(&got);
	CHECK(fsck_ok(f));
	free(head);
	free(h1);
}

#include "store/schema_sqlite.h"

/* A store written before the search index existed gets it filled when it is opened. */
TEST(sqlite_search_index_is_backfilled_on_upgrade)
{
	struct smr_err err = SMR_ERR_INIT;
	char tmpl[] = "/tmp/smriti-upgrade-XXXXXX", *dir = mkdtemp(tmpl), *a, *b, *sql;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct search_params p = { .query = "kafka" };
	sqlite3 *db = NULL;
	json_t *res = NULL;

	a = xasprintf("%s/new.db", dir);
	b = xasprintf("%s/old.db", dir);
	CHECK_INT(ops_open(&ctx, a, NULL, &err), SMR_OK);
	CHECK_INT(ops_space_create(ctx, "old", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "old", "{\"title\":\"one\",\"decisions\":[\"use kafka\"]}", "ann",
		    "2026-01-01T00:00:01.000000Z");
	commit_json(ctx, "old", "{\"title\":\"two\",\"decisions\":[\"use kafka\", \"drop kafka\"]}",
		    "bo", "2026-01-01T00:00:02.000000Z");
	ops_close(ctx);
	/* the same rows in a database at schema version 2 */
	CHECK_INT(sqlite3_open(b, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, sqlite_migrations[0], NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, sqlite_migrations[1], NULL, NULL, NULL), SQLITE_OK);
	sql = xasprintf("PRAGMA user_version=2; ATTACH '%s' AS a;"
			"INSERT INTO repos SELECT id, name, description, created_at FROM a.repos;"
			"INSERT INTO commits SELECT id, repo_id, commit_hash, parent_commit_id,"
			" merge_parent_commit_id, title, summary, '[]', '[]', '[]', '[]', '[]', '[]',"
			" metadata_, author, created_at FROM a.commits;"
			/* the lists as rows kept them before migration 8 */
			"UPDATE commits SET decisions = CASE title WHEN 'one'"
			" THEN '[{\"text\":\"use kafka\"}]'"
			" ELSE '[{\"text\":\"use kafka\"},{\"text\":\"drop kafka\"}]' END;"
			"INSERT INTO refs SELECT * FROM a.refs;", a);
	CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	sqlite3_close(db);
	CHECK_INT(ops_open(&ctx, b, NULL, &err), SMR_OK);
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(res, "total")), 2);
	CHECK_STR(hit_str(res, 0, "snippet"), "drop kafka");
	json_decref(res);
	ops_close(ctx);
	sql = xasprintf("rm -rf '%s'", dir);
	CHECK_INT(system(sql), 0);
	free(sql);
	free(a);
	free(b);
}

/* ---- a bulk load (bench/scale.sh) writes what commits write ---- */

#define CHAIN_STEPS 40

/* Step i of a chain on parent: six decisions, one replaced a step, a task every third. */
static void chain_step(struct checkpoint *c, const struct checkpoint *parent, int i)
{
	char text[96];

	checkpoint_init(c);
	if (parent) {
		checkpoint_copy_content(c, parent);
		c->parent_hash = xstrdup(parent->hash);
	}
	while (json_array_size(c->decisions) < 6) {
		snprintf(text, sizeof(text), "decision %zu, kept from the start",
			 json_array_size(c->decisions));
		json_array_append_new(c->decisions, json_pack("{s:s}", "text", text));
	}
	snprintf(text, sizeof(text), "decision of step %d about latency", i);
	json_array_set_new(c->decisions, (size_t)i % 6, json_pack("{s:s}", "text", text));
	if (i % 3 == 0) {
		snprintf(text, sizeof(text), "task of step %d", i);
		json_array_append_new(c->tasks, json_pack("{s:s, s:s}", "text", text, "status",
							  "open"));
	}
	free(c->title);
	free(c->author);
	free(c->created_at);
	c->title = xasprintf("step %d", i);
	c->author = xstrdup("tester");
	c->created_at = xasprintf("2026-01-01T00:%02d:%02d.000000Z", i / 60, i % 60);
	checkpoint_seal(c);
}

/* Imports v[from, to) into Space sp (created with the first), as bench-scale build does. */
static enum smr_rc chain_import(struct fixture *f, const struct space *sp, struct checkpoint *v,
				int from, int to, struct smr_err *err)
{
	const struct checkpoint *commits[CHAIN_STEPS], *parents[CHAIN_STEPS];
	struct ref_move created = { "tester", "create", sp->created_at };
	struct import_space in = { .space = sp, .create = from == 0, .commits = commits,
				   .parents = parents, .n_commits = (size_t)(to - from),
				   .head = v[to - 1].hash, .created = &created,
				   .record_commits = 1 };

	for (int i = from; i < to; i++) {
		commits[i - from] = &v[i];
		parents[i - from] = i ? &v[i - 1] : NULL;
	}
	return store_import(f->st, &in, 1, err);
}

/* "SELECT count(*) FROM table" on f. */
static int64_t rows_in(struct fixture *f, const char *table)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	return db_int(f, sql);
}

/*
 * A chain imported with record_commits (bench/scale.sh's build, in
 * batches, the PostgreSQL store's reserved rows) leaves the rows that
 * committing it one checkpoint at a time leaves: checkpoints, items and
 * chunks, search rows, reflog; fsck finds nothing; search and reads answer
 * the same.  A batch holding a checkpoint another Space has already, or
 * one the Space holds, is placed or refused as before.
 */
CONFORMANCE(bulk_import_writes_the_rows_commits_write)
{
	static const char *const tables[] = { "commits", "items", "chunks", "search_items",
					       "reflog", "refs", "repos", "reach_tips" };
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint v[CHAIN_STEPS], got = { 0 };
	struct fixture put;
	struct space sp = { .id = (char *)"5ca1e000-0000-4000-8000-000000000001",
			    .name = (char *)"chain", .description = (char *)"a test space",
			    .created_at = (char *)"2026-01-01T00:00:00.000000Z" };
	struct ref_move created = { "tester", "create", sp.created_at };

	for (int i = 0; i < CHAIN_STEPS; i++)
		chain_step(&v[i], i ? &v[i - 1] : NULL, i);
	CHECK_INT(fixture_open(&put, f->pg), 0);
	CHECK_INT(store_space_create(put.st, &sp, &created, &err), SMR_OK);
	for (int i = 0; i < CHAIN_STEPS; i++)
		CHECK_INT(store_checkpoint_put(put.st, sp.id, &v[i], i ? v[i - 1].hash : NULL, &err),
			  SMR_OK);
	CHECK_INT(chain_import(f, &sp, v, 0, 25, &err), SMR_OK);
	CHECK_INT(chain_import(f, &sp, v, 25, CHAIN_STEPS, &err), SMR_OK);
	for (size_t t = 0; t < sizeof(tables) / sizeof(*tables); t++) {
		int64_t want = rows_in(&put, tables[t]);

		if (rows_in(f, tables[t]) != want || want <= 0)
			test_fail(__FILE__, __LINE__, "%s: %lld rows imported, %lld committed",
				  tables[t], (long long)rows_in(f, tables[t]), (long long)want);
	}
	CHECK_INT(db_int(f, "SELECT count(*) FROM reflog WHERE action = 'commit'"), CHAIN_STEPS);
	CHECK_INT(tips_unlike_rebuild(f), 0);
	CHECK(fsck_ok(f));
	fixture_close(&put);
	CHECK_INT(store_checkpoint_get(f->st, sp.id, v[30].hash, &got, &err), SMR_OK);
	CHECK(json_equal(got.decisions, v[30].decisions) && json_equal(got.tasks, v[30].tasks));
	checkpoint_release(&got);
	{
		struct search_word w = { "latency", 0 };
		struct search_filter sf = { .words = &w, .n_words = 1, .limit = 100 };
		struct search_found fd;

		CHECK_INT(store_search(f->st, &sf, &fd, &err), SMR_OK);
		CHECK_INT(fd.n, CHAIN_STEPS);
		search_found_release(&fd);
	}
	/* a Space of its own on the chain's steps 0 to 9: those rows are taken on, 10' is new */
	{
		struct space other = { .id = (char *)"5ca1e000-0000-4000-8000-000000000002",
				       .name = (char *)"other", .created_at = sp.created_at };
		struct checkpoint next;
		const struct checkpoint *commits[11], *parents[11];
		struct import_space in = { .space = &other, .create = 1, .commits = commits,
					   .parents = parents, .n_commits = 11, .head = NULL };

		chain_step(&next, &v[9], 100);
		for (int i = 0; i < 10; i++) {
			commits[i] = &v[i];
			parents[i] = i ? &v[i - 1] : NULL;
		}
		commits[10] = &next;
		parents[10] = &v[9];
		in.head = next.hash;
		CHECK_INT(store_import(f->st, &in, 1, &err), SMR_OK);
		CHECK_INT(count_checkpoints(f, other.id), 11);
		/* the chain holds step 9 already: refused whole */
		in.space = &sp;
		in.create = 0;
		CHECK_INT(store_import(f->st, &in, 1, &err), SMR_ECONFLICT);
		CHECK_INT(count_checkpoints(f, sp.id), CHAIN_STEPS);
		checkpoint_release(&next);
	}
	CHECK(fsck_ok(f));
	for (int i = 0; i < CHAIN_STEPS; i++)
		checkpoint_release(&v[i]);
}

/* ---- export and import ---- */

/* A Space with a history worth moving: commits, a restore, a rename, a session with turns. */
static void fill_for_export(struct fixture *f, struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	char sid[37];

	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "moving", "to the team server", &sp, &err), SMR_OK);
	commit_json(ctx, "moving", "{\"title\":\"one\",\"decisions\":[\"use kafka\"],"
		    "\"metadata\":{\"ratio\":0.1,\"n\":3}}", "ann", "2026-12-01T10:00:00.000000Z");
	commit_json(ctx, "moving", "{\"title\":\"two\",\"decisions\":[\"drop kafka\"],"
		    "\"artifacts\":[{\"name\":\"plan.md\",\"kind\":\"plan\",\"content\":\"é ü 日本\"}]}",
		    "bo", "2026-12-01T11:00:00.000000Z");
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T12:00:00.000000Z");
	CHECK_INT(ops_restore(ctx, "moving", "moving~1", "cy", &c, &err), SMR_OK);
	checkpoint_release(&c);
	space_release(&sp);
	CHECK_INT(ops_space_rename(ctx, "moving", "moved", &sp, &err), SMR_OK);
	make_session(f, sp.id, sid, "2026-12-01T12:30:00.000000Z", NULL, NULL, -1);
	CHECK_INT(append(f, sid, "user", "where do events go?", "2026-12-01T12:31:00.000000Z",
			 -1, NULL, &err), SMR_OK);
	CHECK_INT(append(f, sid, "assistant", "into Postgres", "2026-12-01T12:32:00.000000Z", -1,
			 NULL, &err), SMR_OK);
	space_release(&sp);
}

static char *export_text(struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *doc = NULL;
	char *text = NULL;

	CHECK_INT(ops_export(ctx, NULL, 0, &doc, &err), SMR_OK);
	if (doc)
		text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text ? text : xstrdup("");
}

static enum smr_rc import_text(struct ops_ctx *ctx, const char *text, json_t **report,
			       struct smr_err *err)
{
	json_t *doc = json_loads(text, 0, NULL);
	enum smr_rc rc;

	*report = NULL;
	if (!doc)
		return smr_errf(err, SMR_EINVAL, "not JSON");
	rc = ops_import(ctx, doc, report, err);
	json_decref(doc);
	return rc;
}

TEST(bundle_round_trip_sqlite_postgres_sqlite)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture a, b, c;
	struct ops_ctx *ca = NULL, *cb = NULL, *cc = NULL;
	char *one, *two, *three;
	json_t *rep = NULL;
	int have_pg;

	CHECK_INT(fixture_open(&a, 0), 0);
	have_pg = fixture_open(&b, 1) == 0;
	if (!have_pg) {   /* without PostgreSQL: SQLite -> SQLite -> SQLite */
		fixture_close(&b);
		CHECK_INT(fixture_open(&b, 0), 0);
	}
	CHECK_INT(fixture_open(&c, 0), 0);
	CHECK_INT(ops_open_on(&ca, a.st, &conf_opts, NULL), SMR_OK);
	CHECK_INT(ops_open_on(&cb, b.st, &conf_opts, NULL), SMR_OK);
	CHECK_INT(ops_open_on(&cc, c.st, &conf_opts, NULL), SMR_OK);
	fill_for_export(&a, ca);
	one = export_text(ca);
	CHECK_INT(import_text(cb, one, &rep, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(rep, "checkpoints")), 3);
	json_decref(rep);
	two = export_text(cb);
	CHECK_STR(two, one);   /* hashes, turns and reflog identical, byte for byte */
	CHECK_INT(import_text(cc, two, &rep, &err), SMR_OK);
	json_decref(rep);
	three = export_text(cc);
	CHECK_STR(three, one);
	CHECK(fsck_ok(&b) && fsck_ok(&c));
	/* what was imported is searchable and time-travels like the original */
	{
		struct search_params p = { .query = "kafka" };
		json_t *res = NULL;
		char *t;

		CHECK_INT(ops_search(cb, &p, &res, &err), SMR_OK);
		CHECK_INT(json_integer_value(json_object_get(res, "total")), 2);
		json_decref(res);
		t = title_of(cb, "moved@{2}", &err);
		CHECK_STR(t, "two");
		free(t);
	}
	free(one);
	free(two);
	free(three);
	fixture_close(&a);
	fixture_close(&b);
	fixture_close(&c);
	ops_close(ca);
	ops_close(cb);
	ops_close(cc);
}

CONFORMANCE(import_is_checked_whole_idempotent_and_all_or_nothing)
{
	struct smr_err err = SMR_ERR_INIT;
	struct fixture src;
	struct ops_ctx *cs = NULL, *ctx = NULL;
	struct space *v = NULL;
	size_t n = 0;
	json_t *rep = NULL;
	char *bundle, *bad, *p, *later;

	CHECK_INT(fixture_open(&src, 0), 0);
	CHECK_INT(ops_open_on(&cs, src.st, &conf_opts, NULL), SMR_OK);
	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	fill_for_export(&src, cs);
	bundle = export_text(cs);

	/* one byte changed anywhere: refused, nothing written */
	bad = xstrdup(bundle);
	p = strstr(bad, "into Postgres");
	CHECK(p != NULL);
	if (p)
		p[0] = 'I';
	CHECK_INT(import_text(ctx, bad, &rep, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "does not match its sha256"));
	free(bad);
	bad = xstrdup(bundle);
	p = strstr(bad, "drop kafka");
	if (p)
		p[0] = 'D';
	CHECK_INT(import_text(ctx, bad, &rep, &err), SMR_EUNPROC);
	free(bad);
	CHECK_INT(import_text(ctx, "{\"format\":\"zip\"}", &rep, &err), SMR_EINVAL);
	CHECK_INT(store_space_list(f->st, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	spaces_free(v, n);

	/* imported once, then again: the second adds nothing */
	CHECK_INT(import_text(ctx, bundle, &rep, &err), SMR_OK);
	json_decref(rep);
	CHECK_INT(import_text(ctx, bundle, &rep, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(rep, "checkpoints")), 0);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(
		json_object_get(rep, "spaces"), 0), "turns")), 0);
	json_decref(rep);

	/* a later export of the same Space moves HEAD forward, with a reflog row */
	commit_json(cs, "moved", "{\"title\":\"three\"}", "ann", "2026-12-02T10:00:00.000000Z");
	later = export_text(cs);
	CHECK_INT(import_text(ctx, later, &rep, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(rep, "checkpoints")), 1);
	json_decref(rep);
	{
		char *t = title_of(ctx, "moved", &err);

		CHECK_STR(t, "three");
		free(t);
	}
	/* the old bundle again: the store is ahead, nothing changes */
	CHECK_INT(import_text(ctx, bundle, &rep, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(rep, "checkpoints")), 0);
	json_decref(rep);
	/* a history that went another way is a conflict */
	commit_json(ctx, "moved", "{\"title\":\"here only\"}", "bo", "2026-12-03T10:00:00.000000Z");
	commit_json(cs, "moved", "{\"title\":\"there only\"}", "cy", "2026-12-03T11:00:00.000000Z");
	free(later);
	later = export_text(cs);
	CHECK_INT(import_text(ctx, later, &rep, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "has gone another way"));
	free(later);
	free(bundle);
	fixture_close(&src);
	CHECK(fsck_ok(f));
	ops_close(cs);
	ops_close(ctx);
}

/* ---- blame ---- */

/* The introducer's author of the item of field whose text is text, or "?". */
static const char *blamed(const json_t *res, const char *field, const char *text)
{
	size_t i;
	json_t *it;

	json_array_foreach(json_object_get(res, "items"), i, it)
		if (!strcmp(json_string_value(json_object_get(it, "field")), field) &&
		    !strcmp(json_string_value(json_object_get(it, "text")), text))
			return json_string_value(json_object_get(json_object_get(it, "introduced"),
								 "author"));
	return "?";
}

CONFORMANCE(blame_follows_parents_and_restores)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	json_t *res = NULL;

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "b", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "b", "{\"title\":\"start\",\"decisions\":[\"use kafka\",\"use go\"]}",
		    "ann", "2026-12-01T10:00:00.000000Z");
	commit_json(ctx, "b", "{\"title\":\"start\",\"decisions\":[\"use go\",\"drop kafka\"],"
		    "\"tasks\":[\"write adr\"],\"metadata\":{\"draft\":{\"session_id\":\"s-1\","
		    "\"turn_range\":{\"first_seq\":3,\"last_seq\":9}}}}",
		    "bo", "2026-12-01T11:00:00.000000Z");
	commit_json(ctx, "b", "{\"title\":\"reset\",\"decisions\":[\"use rust\"]}",
		    "cy", "2026-12-01T12:00:00.000000Z");
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T13:00:00.000000Z");
	/* bring back the second state: its items belong to whoever wrote them */
	CHECK_INT(ops_restore(ctx, "b", "b~1", "dee", &c, &err), SMR_OK);
	checkpoint_release(&c);
	commit_json(ctx, "b", "{\"title\":\"start\",\"decisions\":[\"use go\",\"drop kafka\","
		    "\"ship friday\"],\"tasks\":[\"write adr\"]}", "eve", "2026-12-01T14:00:00.000000Z");
	CHECK_INT(ops_blame(ctx, "b", &res, &err), SMR_OK);
	CHECK_STR(blamed(res, "title", "start"), "ann");
	CHECK_STR(blamed(res, "decisions", "use go"), "ann");
	CHECK_STR(blamed(res, "decisions", "drop kafka"), "bo");
	CHECK_STR(blamed(res, "tasks", "write adr"), "bo");
	CHECK_STR(blamed(res, "decisions", "ship friday"), "eve");
	CHECK_INT(json_array_size(json_object_get(res, "items")), 5);
	json_decref(res);
	/* a drafted checkpoint names its session and turns */
	CHECK_INT(ops_blame(ctx, "b~3", &res, &err), SMR_OK);
	{
		size_t i;
		json_t *it;

		json_array_foreach(json_object_get(res, "items"), i, it) {
			const json_t *src = json_object_get(json_object_get(it, "introduced"),
							    "source");

			if (strcmp(json_string_value(json_object_get(it, "text")), "drop kafka"))
				continue;
			CHECK_STR(json_string_value(json_object_get(src, "session_id")), "s-1");
			CHECK_INT(json_integer_value(json_object_get(src, "first_seq")), 3);
			CHECK_INT(json_integer_value(json_object_get(src, "last_seq")), 9);
			CHECK(json_is_true(json_object_get(it, "here")));
		}
	}
	json_decref(res);
	/* time travel and blame together: what HEAD was before the restore */
	CHECK_INT(ops_blame(ctx, "b@{2}", &res, &err), SMR_OK);
	CHECK_STR(blamed(res, "decisions", "use rust"), "cy");
	json_decref(res);
	CHECK_INT(ops_blame(ctx, "nope", &res, &err), SMR_ENOTFOUND);
	ops_close(ctx);
}

/*
 * A restore given the HEAD it expects (the UI's Undo of a restore) writes
 * only while HEAD is still there: after another writer moved it the restore
 * is refused as a conflict naming HEAD, and nothing is written.
 */
CONFORMANCE(restore_on_an_expected_head_refuses_when_head_moved)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct checkpoint r = { 0 }, u = { 0 }, head = { 0 };
	char *before = NULL;

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "u", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "u", "{\"title\":\"one\",\"decisions\":[\"a\"]}", "ann",
		    "2026-12-01T10:00:00.000000Z");
	commit_json(ctx, "u", "{\"title\":\"two\",\"decisions\":[\"b\"]}", "bo",
		    "2026-12-01T11:00:00.000000Z");
	CHECK_INT(ops_resolve(ctx, "u", &head, &err), SMR_OK);
	before = xstrdup(head.hash);
	checkpoint_release(&head);
	/* restore "one", then undo it: bring back what HEAD was, on the restore */
	CHECK_INT(ops_restore_on(ctx, "u", "u~1", before, "cy", &r, &err), SMR_OK);
	CHECK_STR(r.parent_hash, before);
	CHECK_INT(ops_restore_on(ctx, "u", before, r.hash, "cy", &u, &err), SMR_OK);
	CHECK_STR(u.parent_hash, r.hash);
	CHECK_STR(u.title, "two");
	CHECK_STR(json_string_value(json_object_get(u.metadata, "restored_from")), before);
	checkpoint_release(&u);
	/* a writer moves HEAD; undoing the (now old) restore again is refused */
	commit_json(ctx, "u", "{\"title\":\"three\",\"decisions\":[\"c\"]}", "dee",
		    "2026-12-01T12:00:00.000000Z");
	err = (struct smr_err)SMR_ERR_INIT;
	CHECK_INT(ops_restore_on(ctx, "u", before, r.hash, "cy", &u, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "HEAD") != NULL);
	CHECK_INT(ops_resolve(ctx, "u", &head, &err), SMR_OK);
	CHECK_STR(head.title, "three");
	checkpoint_release(&head);
	checkpoint_release(&r);
	free(before);
	ops_close(ctx);
}

/* A merge's second parent is followed too: an item from the other line is blamed there. */
CONFORMANCE(blame_follows_a_merge_into_the_other_line)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	json_t *res = NULL;

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "main", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "main", "{\"title\":\"base\",\"decisions\":[\"a\"]}", "ann",
		    "2026-12-01T10:00:00.000000Z");
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T10:30:00.000000Z");
	CHECK_INT(ops_fork(ctx, "main", "side", &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "side", "{\"title\":\"base\",\"decisions\":[\"a\",\"from side\"]}",
		    "bo", "2026-12-01T11:00:00.000000Z");
	commit_json(ctx, "main", "{\"title\":\"base\",\"decisions\":[\"a\",\"from main\"]}",
		    "cy", "2026-12-01T11:30:00.000000Z");
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T12:00:00.000000Z");
	CHECK_INT(ops_merge(ctx, &(struct merge_req){ .space = "main", .ref = "side",
						       .author = "dee" }, &res, &err), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(res, "status")), "merged");
	json_decref(res);
	CHECK_INT(ops_blame(ctx, "main", &res, &err), SMR_OK);
	CHECK_STR(blamed(res, "decisions", "from side"), "bo");
	CHECK_STR(blamed(res, "decisions", "from main"), "cy");
	CHECK_STR(blamed(res, "decisions", "a"), "ann");
	json_decref(res);
	/* the merge is in the reflog of the Space it moved */
	{
		struct reflog_entry *log = NULL;
		size_t n = 0;
		struct space m = { 0 };

		CHECK_INT(store_space_get(f->st, "main", &m, &err), SMR_OK);
		CHECK_INT(store_reflog_list(f->st, m.id, NULL, 1, &log, &n, &err), SMR_OK);
		CHECK_INT(n, 1);
		if (n)
			CHECK_STR(log[0].action, "merge");
		reflog_entries_free(log, n);
		space_release(&m);
	}
	ops_close(ctx);
}

CONFORMANCE(search_finds_every_copy_and_survives_gc)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct search_params p = { .query = "zeppelin" };
	json_t *res = NULL;
	struct gc_counts gc;

	CHECK_INT(ops_open_on(&ctx, f->st, &conf_opts, NULL), SMR_OK);
	snprintf(conf_clock, sizeof(conf_clock), "2026-12-01T09:00:00.000000Z");
	CHECK_INT(ops_space_create(ctx, "orig", NULL, &sp, &err), SMR_OK);
	space_release(&sp);
	commit_json(ctx, "orig", "{\"title\":\"ride the zeppelin\"}", "ann",
		    "2026-12-01T10:00:00.000000Z");
	CHECK_INT(ops_fork(ctx, "orig", "copy", &sp, &err), SMR_OK);
	space_release(&sp);
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	/* one checkpoint in two Spaces: one result naming both, by name */
	CHECK_INT(json_integer_value(json_object_get(res, "total")), 1);
	CHECK_INT(json_array_size(hit_spaces(res)), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(hit_spaces(res), 0), "space")),
		  "copy");
	CHECK_STR(json_string_value(json_object_get(json_array_get(hit_spaces(res), 1), "space")),
		  "orig");
	json_decref(res);
	/* the original goes, for good: the fork's copy still answers */
	CHECK_INT(ops_space_delete(ctx, "orig", &err), SMR_OK);
	CHECK_INT(store_gc_prune(f->st, NULL, NULL, &gc, &err), SMR_OK);
	CHECK_INT(gc.spaces, 1);
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(res, "total")), 1);
	CHECK_STR(hit_str(res, 0, "space"), "copy");
	json_decref(res);
	/* a checkpoint written after the fork is indexed in the fork */
	commit_json(ctx, "copy", "{\"title\":\"zeppelin landed\"}", "bo",
		    "2026-12-02T10:00:00.000000Z");
	CHECK_INT(ops_search(ctx, &p, &res, &err), SMR_OK);
	CHECK_INT(json_integer_value(json_object_get(res, "total")), 2);
	json_decref(res);
	ops_close(ctx);
}

/*
 * Generations (issue 10): one running per session (the second is a 409
 * naming the first, with nothing written), the user turn stored with the
 * row, the reply and the end in one write, and the start-up sweep that
 * turns what a killed server left running into interrupted, recording why
 * on the user turn.
 */
static struct generation gen_row(const char *id, const char *session)
{
	return (struct generation){ .id = (char *)id, .session_id = (char *)session,
				    .status = (char *)"running", .provider = (char *)"openai",
				    .model = (char *)"m", .user_seq = -1, .assistant_seq = -1,
				    .created_at = (char *)"2026-01-01T00:02:00.000000Z" };
}

static struct turn new_turn(const char *session, const char *role, const char *content,
			    const char *status)
{
	return (struct turn){ .session_id = (char *)session, .role = (char *)role,
			      .content = (char *)content, .prompt_tokens = -1,
			      .completion_tokens = -1, .latency_ms = -1, .status = (char *)status,
			      .created_at = (char *)"2026-01-01T00:02:01.000000Z" };
}

CONFORMANCE(generations)
{
	struct smr_err err = SMR_ERR_INIT;
	struct generation g1 = gen_row("gen-1", NULL), g2, got = { 0 };
	struct turn u = { 0 }, r = { 0 }, *v = NULL;
	char a[37], s1[37], s2[37];
	size_t n = 0;

	CHECK_INT(make_space(f, "gens", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	make_session(f, a, s2, "2026-01-01T00:00:02.000000Z", NULL, NULL, -1);
	g1.session_id = s1;
	u = new_turn(s1, "user", "hello?", NULL);
	CHECK_INT(store_generation_begin(f->st, &g1, &u, 0, &err), SMR_OK);
	CHECK_INT(u.seq, 1);
	CHECK_INT(g1.user_seq, 1);
	CHECK_INT(store_generation_running(f->st, s1, &got, &err), SMR_OK);
	CHECK_STR(got.id, "gen-1");
	CHECK_INT(got.user_seq, 1);
	generation_release(&got);
	/* a second one in the same session: 409 naming the first, nothing written */
	g2 = gen_row("gen-2", s1);
	u = new_turn(s1, "user", "again?", NULL);
	CHECK_INT(store_generation_begin(f->st, &g2, &u, 1, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "already generating a reply (generation gen-1)") != NULL);
	CHECK_INT(store_generation_get(f->st, "gen-2", &got, &err), SMR_ENOTFOUND);
	CHECK_STR(err.msg, "no generation 'gen-2'");
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	turns_free(v, n);
	/* another session is free; a stale expected_last is a conflict of its own */
	g2.session_id = s2;
	u = new_turn(s2, "user", "other", NULL);
	CHECK_INT(store_generation_begin(f->st, &g2, &u, 5, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "got a new turn while this message was being sent") != NULL);
	CHECK_INT(store_generation_get(f->st, "gen-2", &got, &err), SMR_ENOTFOUND);
	CHECK_INT(store_generation_begin(f->st, &g2, &u, 0, &err), SMR_OK);
	/* the reply and the end together */
	r = new_turn(s1, "assistant", "partial", "stopped");
	g1.status = (char *)"stopped";
	g1.finished_at = (char *)"2026-01-01T00:02:05.000000Z";
	CHECK_INT(store_generation_end(f->st, &g1, &r, &err), SMR_OK);
	CHECK_INT(r.seq, 2);
	CHECK_INT(g1.assistant_seq, 2);
	CHECK_INT(store_generation_get(f->st, "gen-1", &got, &err), SMR_OK);
	CHECK_STR(got.status, "stopped");
	CHECK_INT(got.assistant_seq, 2);
	CHECK_STR(got.finished_at, "2026-01-01T00:02:05.000000Z");
	generation_release(&got);
	CHECK_INT(store_generation_running(f->st, s1, &got, &err), SMR_ENOTFOUND);
	CHECK_INT(store_turn_list(f->st, s1, 1, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(v[0].status, "stopped");
	turns_free(v, n);
	/* gen-2 belongs to nobody (before leases): listed among the orphans, taken over */
	{
		struct generation *o = NULL;
		int taken = 0;

		CHECK_INT(store_generation_list_orphaned(f->st, NULL, &o, &n, &err), SMR_OK);
		CHECK_INT(n, 1);
		if (n == 1)
			CHECK_STR(o[0].id, "gen-2");
		for (size_t i = 0; i < n; i++)
			generation_release(&o[i]);
		free(o);
		g2 = gen_row("gen-2", s2);
		g2.user_seq = 1;
		CHECK_INT(store_generation_take_over(f->st, &g2, NULL, "server stopped",
						     "2026-01-01T00:03:00.000000Z", &taken, &err),
			  SMR_OK);
		CHECK_INT(taken, 1);
		/* a second server's takeover finds it ended */
		CHECK_INT(store_generation_take_over(f->st, &g2, "late", "again",
						     "2026-01-01T00:03:01.000000Z", &taken, &err),
			  SMR_OK);
		CHECK_INT(taken, 0);
	}
	CHECK_INT(store_generation_get(f->st, "gen-2", &got, &err), SMR_OK);
	CHECK_STR(got.status, "interrupted");
	CHECK_STR(got.error, "server stopped");
	generation_release(&got);
	CHECK_INT(store_turn_list(f->st, s2, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(v[0].error, "server stopped");
		CHECK(v[0].status == NULL);
	}
	turns_free(v, n);
	/* the owner's late end is fenced off: nothing stored, the takeover stands */
	r = new_turn(s2, "assistant", "too late", NULL);
	g2.status = (char *)"complete";
	CHECK_INT(store_generation_end(f->st, &g2, &r, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "taken over by another server") != NULL);
	CHECK_INT(store_turn_list(f->st, s2, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	turns_free(v, n);
	CHECK_INT(store_generation_get(f->st, "gen-1", &got, &err), SMR_OK);
	CHECK_STR(got.status, "stopped");   /* ended ones are left alone */
	generation_release(&got);
}

/*
 * A reply's events for other servers (issue 29): batches read back after
 * any event, a retried batch replacing the one at its first event (no event
 * twice, none lost), the text joined, a stop asked for once and only while
 * running, and the events of ended replies dropped.
 */
CONFORMANCE(generation_events)
{
	struct smr_err err = SMR_ERR_INIT;
	struct generation g = gen_row("gen-ev", NULL), got = { 0 };
	struct turn u = { 0 };
	struct gen_events b[2] = {
		{ (char *)"gen-ev", 1, 2, (char *)"id: 1\n\nid: 2\n\n", (char *)"ab" },
		{ (char *)"gen-ev", 3, 3, (char *)"id: 3\n\n", (char *)"c" },
	}, retry = { (char *)"gen-ev", 3, 4, (char *)"id: 3\n\nid: 4\n\n", (char *)"cd" };
	struct gen_events *out = NULL;
	char a[37], s1[37], *text = NULL, **ids = NULL;
	size_t n = 0;
	int stopping = -1;

	CHECK_INT(make_space(f, "events", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	g.session_id = s1;
	u = new_turn(s1, "user", "go", NULL);
	CHECK_INT(store_generation_begin(f->st, &g, &u, 0, &err), SMR_OK);
	CHECK_INT(store_generation_text(f->st, "gen-ev", &text, &err), SMR_OK);
	CHECK_STR(text, "");
	free(text);
	CHECK_INT(store_generation_publish(f->st, b, 2, &err), SMR_OK);
	CHECK_INT(store_generation_publish(f->st, &retry, 1, &err), SMR_OK);
	CHECK_INT(store_generation_events(f->st, "gen-ev", 0, &out, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(out[0].first_seq, 1);
		CHECK_INT(out[1].last_seq, 4);
		CHECK_STR(out[1].events, "id: 3\n\nid: 4\n\n");
	}
	gen_events_free(out, n);
	CHECK_INT(store_generation_events(f->st, "gen-ev", 2, &out, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	gen_events_free(out, n);
	CHECK_INT(store_generation_events(f->st, "gen-ev", 4, &out, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	gen_events_free(out, n);
	CHECK_INT(store_generation_text(f->st, "gen-ev", &text, &err), SMR_OK);
	CHECK_STR(text, "abcd");
	free(text);
	/* a stop: asked once, seen by the running server until it ends */
	CHECK_INT(store_generation_stops(f->st, &ids, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	free(ids);
	CHECK_INT(store_generation_request_stop(f->st, "gen-ev", &stopping, &err), SMR_OK);
	CHECK_INT(stopping, 1);
	CHECK_INT(store_generation_request_stop(f->st, "gen-ev", &stopping, &err), SMR_OK);
	CHECK_INT(stopping, 0);
	CHECK_INT(store_generation_stops(f->st, &ids, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(ids[0], "gen-ev");
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	/* ended: no stop to ask for; its events go once it ended before the cut-off */
	g.status = (char *)"stopped";
	g.finished_at = (char *)"2026-01-01T00:05:00.000000Z";
	CHECK_INT(store_generation_end(f->st, &g, NULL, &err), SMR_OK);
	CHECK_INT(store_generation_request_stop(f->st, "gen-ev", &stopping, &err), SMR_OK);
	CHECK_INT(stopping, 0);
	CHECK_INT(store_generation_stops(f->st, &ids, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	free(ids);
	CHECK_INT(store_generation_events_prune(f->st, "2026-01-01T00:04:00.000000Z", &n, &err),
		  SMR_OK);
	CHECK_INT(n, 0);
	CHECK_INT(store_generation_events_prune(f->st, "2026-01-01T00:06:00.000000Z", &n, &err),
		  SMR_OK);
	CHECK_INT(n, 2);
	CHECK_INT(store_generation_get(f->st, "gen-ev", &got, &err), SMR_OK);
	CHECK_STR(got.status, "stopped");
	generation_release(&got);
}

/*
 * Leases (ops/full/lease.c): a server's row beats and goes; a reply of a
 * server whose lease lapsed is taken over with the text its server stored,
 * as an interrupted assistant turn, once; a live server's work is not listed.
 */
CONFORMANCE(generation_takeover)
{
	struct smr_err err = SMR_ERR_INIT;
	struct generation g = gen_row("gen-x", NULL), g2, got = { 0 }, *o = NULL;
	struct server_row *rows = NULL;
	struct turn u, *v = NULL;
	char a[37], s1[37], s2[37];
	size_t n = 0;
	int taken = 0;

	CHECK_INT(make_space(f, "lease", a, &err), SMR_OK);
	make_session(f, a, s1, "2026-01-01T00:00:01.000000Z", NULL, NULL, -1);
	make_session(f, a, s2, "2026-01-01T00:00:02.000000Z", NULL, NULL, -1);
	make_server(f, "srv-x", "2026-01-01T00:00:00.000000Z");
	make_server(f, "srv-y", "2026-01-01T00:00:00.000000Z");
	/* a beat moves the heartbeat; a removed row comes back with the next beat */
	{
		struct server_row sv = { .id = (char *)"srv-y", .name = (char *)"h",
					 .started_at = (char *)"2026-01-01T00:00:00.000000Z",
					 .heartbeat_at = (char *)"2026-01-01T00:00:09.000000Z",
					 .lease_s = 5 };

		CHECK_INT(store_server_beat(f->st, &sv, 0, &err), SMR_OK);
		/* removal only while the heartbeat still reads as judged */
		CHECK_INT(store_server_remove(f->st, "srv-y", "2026-01-01T00:00:00.000000Z", &err),
			  SMR_OK);
		CHECK_INT(store_server_list(f->st, &rows, &n, &err), SMR_OK);
		CHECK_INT(n, 2);
		if (n == 2)
			CHECK_STR(rows[1].heartbeat_at, "2026-01-01T00:00:09.000000Z");
		server_rows_free(rows, n);
		CHECK_INT(store_server_remove(f->st, "srv-y", NULL, &err), SMR_OK);
		CHECK_INT(store_server_beat(f->st, &sv, 0, &err), SMR_OK);
		CHECK_INT(store_server_list(f->st, &rows, &n, &err), SMR_OK);
		CHECK_INT(n, 2);
		if (n == 2) {
			CHECK_STR(rows[0].id, "srv-x");
			CHECK_INT(rows[0].lease_s, 5);
		}
		server_rows_free(rows, n);
	}
	g.session_id = s1;
	g.owner = (char *)"srv-x";
	u = new_turn(s1, "user", "tell me", NULL);
	CHECK_INT(store_generation_begin(f->st, &g, &u, 0, &err), SMR_OK);
	g2 = gen_row("gen-y", s2);
	g2.owner = (char *)"srv-y";
	u = new_turn(s2, "user", "and me", NULL);
	CHECK_INT(store_generation_begin(f->st, &g2, &u, 0, &err), SMR_OK);
	/* nothing is an orphan while its servers have rows */
	CHECK_INT(store_generation_list_orphaned(f->st, NULL, &o, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	free(o);
	CHECK_INT(store_generation_list_orphaned(f->st, "srv-x", &o, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(o[0].id, "gen-x");
		CHECK_STR(o[0].owner, "srv-x");
		CHECK_INT(o[0].user_seq, 1);
		CHECK_INT(store_generation_take_over(f->st, &o[0], "the text so — far", "lapsed",
						     "2026-01-01T00:05:00.000000Z", &taken, &err),
			  SMR_OK);
		CHECK_INT(taken, 1);
	}
	for (size_t i = 0; i < n; i++)
		generation_release(&o[i]);
	free(o);
	CHECK_INT(store_generation_get(f->st, "gen-x", &got, &err), SMR_OK);
	CHECK_STR(got.status, "interrupted");
	CHECK_STR(got.error, "lapsed");
	CHECK_INT(got.assistant_seq, 2);
	CHECK_STR(got.finished_at, "2026-01-01T00:05:00.000000Z");
	generation_release(&got);
	CHECK_INT(store_turn_list(f->st, s1, 0, &v, &n, &err), SMR_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK(v[0].error == NULL);          /* answered: the next send is a new question */
		CHECK_STR(v[1].role, "assistant");
		CHECK_STR(v[1].content, "the text so — far");
		CHECK_STR(v[1].status, "interrupted");
		CHECK_STR(v[1].error, "lapsed");
		CHECK_INT(v[1].parent_seq, 1);
	}
	turns_free(v, n);
	/* the session takes a new reply at once */
	g = gen_row("gen-x2", s1);
	g.owner = (char *)"srv-x";
	u = new_turn(s1, "user", "again", NULL);
	CHECK_INT(store_generation_begin(f->st, &g, &u, 2, &err), SMR_OK);
	/* srv-y's row goes: its reply is an orphan now */
	CHECK_INT(store_server_remove(f->st, "srv-y", NULL, &err), SMR_OK);
	CHECK_INT(store_generation_list_orphaned(f->st, NULL, &o, &n, &err), SMR_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(o[0].id, "gen-y");
	for (size_t i = 0; i < n; i++)
		generation_release(&o[i]);
	free(o);
}

static int plan_row(void *arg, int n, char **vals, char **names)
{
	struct buf *plan = arg;

	(void)names;
	if (n >= 4 && vals[3])
		buf_addf(plan, "%s\n", vals[3]);
	return 0;
}

/*
 * Every checkpoint write asks whether its checkpoint is in the search index
 * already (search_has): that read finds the rows by the checkpoint's id
 * through an index, not by reading the whole table, whose size grows with
 * every write (issue 30: a quarter of a write's CPU at a few thousand
 * checkpoints).
 */
TEST(store_sqlite_search_rows_found_by_checkpoint_through_an_index)
{
	struct smr_err err = SMR_ERR_INIT;
	struct buf plan = BUF_INIT(0);
	struct fixture fx;
	sqlite3 *raw = NULL;
	char a[37];

	CHECK_INT(fixture_open(&fx, 0), 0);
	CHECK_INT(make_space(&fx, "indexed", a, &err), SMR_OK);
	CHECK_INT(sqlite3_open(fx.dsn, &raw), SQLITE_OK);
	CHECK_INT(sqlite3_exec(raw, "EXPLAIN QUERY PLAN SELECT 1 FROM search_items"
			       " WHERE commit_id = 7", plan_row, &plan, NULL), SQLITE_OK);
	sqlite3_close(raw);
	CHECK(strstr(plan.ptr, "SEARCH search_items USING") != NULL);
	CHECK(strstr(plan.ptr, "SCAN search_items") == NULL);
	buf_release(&plan);
	fixture_close(&fx);
}
