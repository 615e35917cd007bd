/*
 * test_powerloss.c -- power loss, not just kill -9: the SQLite store under a
 * test VFS that loses every write not yet made durable.
 *
 * The VFS ("powerloss") is a shim over the default one, the way SQLite tests
 * itself: every call goes to the real file, and for each open file it keeps
 * the image the file had at its last xSync (or when it was opened).  At a
 * chosen sync point -- the Nth xSync of a run -- the power goes: that sync
 * does not happen, every open file is put back to its last synced image
 * (the unsynced writes are thrown away), and from then on all I/O fails, as
 * in a machine that has stopped.  The process then closes its handles, the
 * test reopens the file with the ordinary VFS and checks:
 *
 *   - every write the store acknowledged (returned SMR_OK for) is there;
 *   - the write in flight is there whole or not at all;
 *   - fsck finds every hash and parent link sound, and SQLite's
 *     integrity_check says ok.
 *
 * Each scenario (a checkpoint commit, turn appends, an ingestion, a
 * migration) runs once to count its sync points, then once per sync point
 * with the power going there, and once more with it going after the last
 * acknowledgement.  powerloss_crash_points counts them all.
 */
#include "harness.h"

#include "domain/model.h"
#include "ops/api.h"
#include "ops/context.h"
#include "store/schema_sqlite.h"
#include "store/store.h"
#include "util/xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the VFS ---- */

#define PL_FILES 16

struct pl_file {
	sqlite3_file base;
	sqlite3_file *real;          /* the default VFS's file, right after this struct */
	int slot;                    /* in pl.open[], -1 when not tracked */
};

/* A file's contents at its last sync: what survives the power going. */
struct pl_image {
	struct pl_file *f;
	unsigned char *data;
	sqlite3_int64 size;
};

static struct {
	sqlite3_vfs vfs;
	sqlite3_vfs *real;
	sqlite3_io_methods methods;
	struct pl_image open[PL_FILES];
	int syncs;                   /* xSync calls in this run */
	int crash_at;                /* the sync at which the power goes; 0: never */
	int crashed;                 /* the power went: all I/O fails */
	int keep;                    /* bit i: file slot i keeps its unsynced writes */
	int total_points;            /* crash points exercised, every scenario */
} pl;

/* Reads the whole real file into img (the synced image). */
static void pl_snapshot(struct pl_image *img)
{
	sqlite3_file *r = img->f->real;
	sqlite3_int64 size = 0;

	free(img->data);
	img->data = NULL;
	r->pMethods->xFileSize(r, &size);
	img->size = size;
	if (size > 0) {
		img->data = xmalloc((size_t)size);
		if (r->pMethods->xRead(r, img->data, (int)size, 0) != SQLITE_OK)
			test_fail(__FILE__, __LINE__, "cannot read a file back for its image");
	}
}

/* The power goes: every open file back to its last synced image. */
static void pl_power_off(void)
{
	for (int i = 0; i < PL_FILES; i++) {
		struct pl_image *img = &pl.open[i];
		sqlite3_file *r;

		if (!img->f || (pl.keep & (1 << i)))
			continue;
		r = img->f->real;
		r->pMethods->xTruncate(r, img->size);
		if (img->size > 0)
			r->pMethods->xWrite(r, img->data, (int)img->size, 0);
		r->pMethods->xSync(r, SQLITE_SYNC_NORMAL);
	}
	pl.crashed = 1;
}

static int pl_close(sqlite3_file *file)
{
	struct pl_file *f = (struct pl_file *)file;
	int rc = f->real->pMethods->xClose(f->real);

	if (f->slot >= 0) {
		free(pl.open[f->slot].data);
		memset(&pl.open[f->slot], 0, sizeof(pl.open[f->slot]));
	}
	return rc;
}

static int pl_read(sqlite3_file *file, void *buf, int n, sqlite3_int64 off)
{
	struct pl_file *f = (struct pl_file *)file;

	if (pl.crashed)
		return SQLITE_IOERR_READ;
	return f->real->pMethods->xRead(f->real, buf, n, off);
}

static int pl_write(sqlite3_file *file, const void *buf, int n, sqlite3_int64 off)
{
	struct pl_file *f = (struct pl_file *)file;

	if (pl.crashed)
		return SQLITE_IOERR_WRITE;
	return f->real->pMethods->xWrite(f->real, buf, n, off);
}

static int pl_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	struct pl_file *f = (struct pl_file *)file;

	if (pl.crashed)
		return SQLITE_IOERR_TRUNCATE;
	return f->real->pMethods->xTruncate(f->real, size);
}

static int pl_sync(sqlite3_file *file, int flags)
{
	struct pl_file *f = (struct pl_file *)file;
	int rc;

	if (pl.crashed)
		return SQLITE_IOERR_FSYNC;
	if (++pl.syncs == pl.crash_at) {
		pl_power_off();
		return SQLITE_IOERR_FSYNC;
	}
	rc = f->real->pMethods->xSync(f->real, flags);
	if (rc == SQLITE_OK && f->slot >= 0)
		pl_snapshot(&pl.open[f->slot]);
	return rc;
}

static int pl_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	struct pl_file *f = (struct pl_file *)file;

	if (pl.crashed)
		return SQLITE_IOERR_FSTAT;
	return f->real->pMethods->xFileSize(f->real, size);
}

/* The rest go straight through. */
#define PL_PASS(name, args, call)                                        \
	static int pl_##name args                                        \
	{                                                                \
		struct pl_file *f = (struct pl_file *)file;              \
		return f->real->pMethods->x##call;                       \
	}
PL_PASS(lock, (sqlite3_file *file, int lock), Lock(f->real, lock))
PL_PASS(unlock, (sqlite3_file *file, int lock), Unlock(f->real, lock))
PL_PASS(check_lock, (sqlite3_file *file, int *out), CheckReservedLock(f->real, out))
PL_PASS(control, (sqlite3_file *file, int op, void *arg), FileControl(f->real, op, arg))
PL_PASS(sector, (sqlite3_file *file), SectorSize(f->real))
PL_PASS(device, (sqlite3_file *file), DeviceCharacteristics(f->real))
PL_PASS(shm_map, (sqlite3_file *file, int pg, int sz, int ext, void volatile **p),
	ShmMap(f->real, pg, sz, ext, p))
PL_PASS(shm_lock, (sqlite3_file *file, int off, int n, int flags), ShmLock(f->real, off, n, flags))
PL_PASS(shm_unmap, (sqlite3_file *file, int del), ShmUnmap(f->real, del))

static void pl_shm_barrier(sqlite3_file *file)
{
	struct pl_file *f = (struct pl_file *)file;

	f->real->pMethods->xShmBarrier(f->real);
}

static int pl_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
		   int *out_flags)
{
	struct pl_file *f = (struct pl_file *)file;
	int rc;

	(void)vfs;
	f->real = (sqlite3_file *)(f + 1);
	f->slot = -1;
	rc = pl.real->xOpen(pl.real, name, f->real, flags, out_flags);
	if (rc != SQLITE_OK) {
		f->base.pMethods = NULL;
		return rc;
	}
	f->base.pMethods = &pl.methods;
	for (int i = 0; i < PL_FILES && name; i++) {
		if (!pl.open[i].f) {
			pl.open[i].f = f;
			f->slot = i;
			pl_snapshot(&pl.open[i]);
			break;
		}
	}
	return SQLITE_OK;
}

/* A machine without power deletes nothing (the WAL must stay for recovery). */
static int pl_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	if (pl.crashed)
		return SQLITE_IOERR_DELETE;
	return pl.real->xDelete(pl.real, name, sync_dir);
}

#define PL_VFS_PASS(name, args, call)                                    \
	static int pl_##name args                                        \
	{                                                                \
		(void)vfs;                                               \
		return pl.real->x##call;                                 \
	}
PL_VFS_PASS(access, (sqlite3_vfs *vfs, const char *name, int flags, int *out),
	    Access(pl.real, name, flags, out))
PL_VFS_PASS(full_path, (sqlite3_vfs *vfs, const char *name, int n, char *out),
	    FullPathname(pl.real, name, n, out))
PL_VFS_PASS(randomness, (sqlite3_vfs *vfs, int n, char *out), Randomness(pl.real, n, out))
PL_VFS_PASS(sleep, (sqlite3_vfs *vfs, int us), Sleep(pl.real, us))
PL_VFS_PASS(current_time, (sqlite3_vfs *vfs, double *out), CurrentTime(pl.real, out))
PL_VFS_PASS(last_error, (sqlite3_vfs *vfs, int n, char *out), GetLastError(pl.real, n, out))
PL_VFS_PASS(current_time64, (sqlite3_vfs *vfs, sqlite3_int64 *out),
	    CurrentTimeInt64(pl.real, out))

/* Makes the shim the default VFS, so the store opens through it unchanged. */
static void pl_install(void)
{
	if (pl.real)
		return;
	pl.real = sqlite3_vfs_find(NULL);
	pl.methods = (sqlite3_io_methods){
		.iVersion = 2,
		.xClose = pl_close, .xRead = pl_read, .xWrite = pl_write,
		.xTruncate = pl_truncate, .xSync = pl_sync, .xFileSize = pl_file_size,
		.xLock = pl_lock, .xUnlock = pl_unlock, .xCheckReservedLock = pl_check_lock,
		.xFileControl = pl_control, .xSectorSize = pl_sector,
		.xDeviceCharacteristics = pl_device, .xShmMap = pl_shm_map,
		.xShmLock = pl_shm_lock, .xShmBarrier = pl_shm_barrier,
		.xShmUnmap = pl_shm_unmap,
	};
	pl.vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)sizeof(struct pl_file) + pl.real->szOsFile,
		.mxPathname = pl.real->mxPathname,
		.zName = "powerloss",
		.xOpen = pl_open, .xDelete = pl_delete, .xAccess = pl_access,
		.xFullPathname = pl_full_path, .xRandomness = pl_randomness,
		.xSleep = pl_sleep, .xCurrentTime = pl_current_time,
		.xGetLastError = pl_last_error, .xCurrentTimeInt64 = pl_current_time64,
	};
	sqlite3_vfs_register(&pl.vfs, 1);
}

/* Puts the default VFS back (the other tests run on it). */
static void pl_uninstall(void)
{
	sqlite3_vfs_unregister(&pl.vfs);
	sqlite3_vfs_register(pl.real, 1);
	pl.real = NULL;
}

static void pl_arm(int crash_at)
{
	pl.syncs = 0;
	pl.crash_at = crash_at;
	pl.crashed = 0;
}

/* ---- scenarios ---- */

struct scene {
	char path[64];
	char dir[32];
	int acked;                   /* writes acknowledged in this run */
	char acked_hash[8][65];      /* commit: what was acknowledged, in order */
	char session[64];            /* turns, ingestion: the session written to */
	int base_version;            /* migration: what to start from (0: an empty file) */
};

static void scene_files_remove(struct scene *sc)
{
	char side[96];

	unlink(sc->path);
	snprintf(side, sizeof(side), "%s-wal", sc->path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", sc->path);
	unlink(side);
}

static enum smr_rc call(struct ops_ctx *ctx, const char *op, json_t *params, json_t **result)
{
	struct smr_err err = SMR_ERR_INIT;
	enum smr_rc rc;

	*result = NULL;
	rc = api_call(ctx, op, params, result, &err);
	json_decref(params);
	return rc;
}

/* fsck and SQLite's own check on the reopened store. */
static void check_sound(struct ops_ctx *ctx, const char *path, const char *where, int point)
{
	json_t *report = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	CHECK_INT(ops_fsck(ctx, NULL, &report, NULL), SMR_OK);
	if (!json_is_true(json_object_get(report, "ok")))
		test_fail(__FILE__, __LINE__, "%s, crash at sync %d: fsck is not clean", where,
			  point);
	json_decref(report);
	CHECK_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	if (strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
		test_fail(__FILE__, __LINE__, "%s, crash at sync %d: integrity_check: %s", where,
			  point, sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/*
 * A scenario: setup builds the state before the writes (power on, not
 * counted); run makes the writes, recording what was acknowledged, and
 * stops at the first failure; verify checks the reopened store.
 */
struct scenario {
	const char *name;
	void (*setup)(struct scene *sc);
	void (*run)(struct scene *sc);
	void (*verify)(struct scene *sc, struct ops_ctx *ctx, int point);
	int opens_under_test;        /* run opens the store itself (migrations) */
};

static struct ops_ctx *run_ctx = NULL;
static int run_ctx_open;

static void open_store(struct scene *sc, struct ops_ctx **ctx)
{
	struct smr_err err = SMR_ERR_INIT;

	if (ops_open(ctx, sc->path, NULL, &err))
		test_fail(__FILE__, __LINE__, "cannot open %s: %s", sc->path, err.msg);
}

static void space_demo(struct scene *sc)
{
	struct ops_ctx *ctx = NULL;
	json_t *r = NULL;

	open_store(sc, &ctx);
	CHECK_INT(call(ctx, "space.create", json_pack("{s:s}", "name", "demo"), &r), SMR_OK);
	json_decref(r);
	CHECK_INT(call(ctx, "checkpoint.create",
		       json_pack("{s:s, s:{s:s, s:[s]}}", "space", "demo", "checkpoint",
				 "title", "base", "decisions", "before the power goes"), &r),
		  SMR_OK);
	json_decref(r);
	ops_close(ctx);
}

/* -- a checkpoint commit (three in a row) -- */

static void commit_run(struct scene *sc)
{
	for (int i = 0; i < 3; i++) {
		json_t *r = NULL;
		enum smr_rc rc = call(run_ctx, "checkpoint.create",
				      json_pack("{s:s, s:{s:s, s:[s]}}", "space", "demo",
						"checkpoint", "title", "after", "tasks", "one more"),
				      &r);

		if (rc == SMR_OK)
			snprintf(sc->acked_hash[sc->acked++], 65, "%s",
				 json_string_value(json_object_get(r, "commit_hash")));
		json_decref(r);
		if (rc)
			return;
	}
}

static void commit_verify(struct scene *sc, struct ops_ctx *ctx, int point)
{
	struct checkpoint head = { 0 };
	struct smr_err err = SMR_ERR_INIT;

	for (int i = 0; i < sc->acked; i++) {
		json_t *r = NULL;

		if (call(ctx, "show", json_pack("{s:s}", "ref", sc->acked_hash[i]), &r))
			test_fail(__FILE__, __LINE__,
				  "commit, crash at sync %d: acknowledged checkpoint %d of %d lost",
				  point, i + 1, sc->acked);
		json_decref(r);
	}
	CHECK_INT(ops_head(ctx, "demo", &head, &err), SMR_OK);
	/* HEAD is the last acknowledged one, or the one in flight on top of it, whole */
	if (sc->acked && strcmp(head.hash, sc->acked_hash[sc->acked - 1]) &&
	    strcmp(head.parent_hash ? head.parent_hash : "", sc->acked_hash[sc->acked - 1]))
		test_fail(__FILE__, __LINE__, "commit, crash at sync %d: HEAD %s is neither the"
			  " last acknowledged checkpoint nor on top of it", point, head.hash);
	checkpoint_release(&head);
}

/* -- turn appends (three in a row) -- */

static void turns_setup(struct scene *sc)
{
	struct ops_ctx *ctx = NULL;
	json_t *r = NULL;

	space_demo(sc);
	open_store(sc, &ctx);
	CHECK_INT(call(ctx, "session.create", json_pack("{s:s}", "space", "demo"), &r),
		  SMR_OK);
	snprintf(sc->session, sizeof(sc->session), "%s",
		 json_string_value(json_object_get(r, "id")));
	json_decref(r);
	ops_close(ctx);
}

static void turns_run(struct scene *sc)
{
	for (int i = 0; i < 3; i++) {
		struct smr_err err = SMR_ERR_INIT;
		char content[32];
		struct turn t = { 0 };
		enum smr_rc rc;

		snprintf(content, sizeof(content), "turn %d", i + 1);
		t.session_id = xstrdup(sc->session);
		t.role = xstrdup(i % 2 ? "assistant" : "user");
		t.content = xstrdup(content);
		t.prompt_tokens = t.completion_tokens = t.latency_ms = -1;
		t.created_at = xstrdup("2026-01-02T03:04:05.000000Z");
		rc = store_turn_append(ops_store(run_ctx), &t, -1, &err);
		turn_release(&t);
		if (rc)
			return;
		sc->acked++;
	}
}

static void turns_verify(struct scene *sc, struct ops_ctx *ctx, int point)
{
	struct turn *v = NULL;
	size_t n = 0;

	CHECK_INT(store_turn_list(ops_store(ctx), sc->session, 0, &v, &n, NULL), SMR_OK);
	if ((int)n < sc->acked || (int)n > sc->acked + 1)
		test_fail(__FILE__, __LINE__, "turns, crash at sync %d: %zu turns, %d acknowledged",
			  point, n, sc->acked);
	for (size_t i = 0; i < n; i++) {
		char want[32];

		snprintf(want, sizeof(want), "turn %zu", i + 1);
		CHECK_INT(v[i].seq, (int64_t)i + 1);
		CHECK_STR(v[i].content, want);
	}
	turns_free(v, n);
}

/* -- an ingestion: one session and all its turns, in one transaction -- */

#define INGEST_TURNS 4

static void ingest_run(struct scene *sc)
{
	json_t *r = NULL;
	enum smr_rc rc = call(run_ctx, "ingest",
			      json_pack("{s:s, s:s}", "space", "demo", "transcript",
					"User: one\nAssistant: two\nUser: three\n"
					"Assistant: four\n"), &r);

	if (rc == SMR_OK) {
		sc->acked = 1;
		snprintf(sc->session, sizeof(sc->session), "%s",
			 json_string_value(json_object_get(json_object_get(r, "session"), "id")));
	}
	json_decref(r);
}

static void ingest_verify(struct scene *sc, struct ops_ctx *ctx, int point)
{
	struct session *ss = NULL;
	struct space sp = { 0 };
	size_t n = 0, found = 0;

	CHECK_INT(store_space_get(ops_store(ctx), "demo", &sp, NULL), SMR_OK);
	CHECK_INT(store_session_list(ops_store(ctx), sp.id, &ss, &n, NULL), SMR_OK);
	for (size_t i = 0; i < n; i++) {
		struct turn *v = NULL;
		size_t nt = 0;

		CHECK_INT(store_turn_list(ops_store(ctx), ss[i].id, 0, &v, &nt, NULL), SMR_OK);
		if (nt != INGEST_TURNS)
			test_fail(__FILE__, __LINE__, "ingest, crash at sync %d: a session with %zu"
				  " of %d turns", point, nt, INGEST_TURNS);
		found += sc->acked && !strcmp(ss[i].id, sc->session);
		turns_free(v, nt);
	}
	if (sc->acked && !found)
		test_fail(__FILE__, __LINE__, "ingest, crash at sync %d: the acknowledged"
			  " session is lost", point);
	for (size_t i = 0; i < n; i++)
		session_release(&ss[i]);
	free(ss);
	space_release(&sp);
}

/* -- a migration: from an empty file, and from schema version 1 with data -- */

static void migrate_setup(struct scene *sc)
{
	sqlite3 *db = NULL;

	if (!sc->base_version)
		return;             /* an empty file: every migration runs */
	CHECK_INT(sqlite3_open(sc->path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, sqlite_migrations[0], NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "INSERT INTO repos VALUES ('r1', 'demo', 'kept', "
			       "'2026-01-02T03:04:05.000000Z'); "
			       "INSERT INTO refs VALUES ('r1', 'main', NULL); "
			       "PRAGMA user_version=1", NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_close(db), SQLITE_OK);
}

static void migrate_run(struct scene *sc)
{
	struct smr_err err = SMR_ERR_INIT;

	if (ops_open(&run_ctx, sc->path, NULL, &err) == SMR_OK) {
		run_ctx_open = 1;
		sc->acked = 1;      /* the migrated store opened */
	}
}

static void migrate_verify(struct scene *sc, struct ops_ctx *ctx, int point)
{
	struct space sp = { 0 };
	json_t *r = NULL;
	enum smr_rc rc;

	/* the reopen above migrated whatever the power cut short; the store works */
	if (sc->base_version) {
		rc = store_space_get(ops_store(ctx), "demo", &sp, NULL);
		if (rc)
			test_fail(__FILE__, __LINE__, "migration, crash at sync %d: the Space"
				  " from before the migration is lost", point);
		else
			CHECK_STR(sp.description, "kept");
		space_release(&sp);
	} else {
		CHECK_INT(call(ctx, "space.create", json_pack("{s:s}", "name", "demo"), &r),
			  SMR_OK);
		json_decref(r);
	}
	CHECK_INT(call(ctx, "checkpoint.create",
		       json_pack("{s:s, s:{s:s}}", "space", "demo", "checkpoint", "title", "works"),
		       &r), SMR_OK);
	json_decref(r);
}

/* -- the driver -- */

static void scene_fresh(struct scene *sc, const struct scenario *s)
{
	int base = sc->base_version;

	memset(sc, 0, sizeof(*sc));
	sc->base_version = base;
	snprintf(sc->dir, sizeof(sc->dir), "/tmp/smriti-pl-XXXXXX");
	if (!mkdtemp(sc->dir))
		test_fail(__FILE__, __LINE__, "cannot make a temporary directory");
	snprintf(sc->path, sizeof(sc->path), "%s/db", sc->dir);
	if (s->setup)
		s->setup(sc);
}

/*
 * One run with the power going at sync crash_at, counting the close too
 * (the last connection's close copies the WAL into the database: more
 * sync points); crash_at 0 means right after the last acknowledgement,
 * before the close, and -1 never (the run that counts the sync points).
 * keep says which files (in the order they were opened: the database, then
 * its WAL) keep their unsynced writes, as when the disk wrote some out on
 * its own before it stopped.
 */
static int run_once(struct scene *sc, const struct scenario *s, int crash_at, int keep)
{
	int syncs;

	scene_fresh(sc, s);
	pl_arm(crash_at > 0 ? crash_at : 0);
	pl.keep = keep;
	run_ctx_open = 0;
	if (!s->opens_under_test) {
		open_store(sc, &run_ctx);
		run_ctx_open = 1;
	}
	s->run(sc);
	if (crash_at == 0 && !pl.crashed)
		pl_power_off();
	if (run_ctx_open)
		ops_close(run_ctx);
	syncs = pl.syncs;
	pl_arm(0);
	pl.keep = 0;
	return syncs;
}

static void verify_once(struct scene *sc, const struct scenario *s, int point)
{
	struct ops_ctx *ctx = NULL;

	open_store(sc, &ctx);
	s->verify(sc, ctx, point);
	check_sound(ctx, sc->path, s->name, point);
	ops_close(ctx);
	scene_files_remove(sc);
	rmdir(sc->dir);
	if (point >= 0)
		pl.total_points++;
}

static void run_scenario(const struct scenario *s, int base_version)
{
	struct scene sc = { .base_version = base_version };
	int syncs, points = pl.total_points;

	pl_install();
	/* the sync points of this scenario, close included: a run where the power stays */
	syncs = run_once(&sc, s, -1, 0);
	verify_once(&sc, s, -1);
	CHECK(syncs > 0);
	/*
	 * Every sync point, and right after the last acknowledgement (0), with
	 * each file losing or keeping its unsynced writes.
	 */
	for (int keep = 0; keep < 4; keep++) {
		for (int k = 0; k <= syncs; k++) {
			sc.base_version = base_version;
			run_once(&sc, s, k, keep);
			verify_once(&sc, s, k);
		}
	}
	printf("powerloss: %s%s: %d sync points, %d crash points\n", s->name,
	       base_version ? " (from version 1)" : "", syncs, pl.total_points - points);
	pl_uninstall();
}

static const struct scenario commit_sc = { "commit", space_demo, commit_run, commit_verify, 0 };
static const struct scenario turns_sc = { "turns", turns_setup, turns_run, turns_verify, 0 };
static const struct scenario ingest_sc = { "ingest", space_demo, ingest_run, ingest_verify, 0 };
static const struct scenario migrate_sc = {
	"migration", migrate_setup, migrate_run, migrate_verify, 1,
};

TEST(powerloss_commit_keeps_every_acknowledged_checkpoint)
{
	run_scenario(&commit_sc, 0);
}

TEST(powerloss_turn_appends_keep_every_acknowledged_turn)
{
	run_scenario(&turns_sc, 0);
}

TEST(powerloss_ingestion_is_whole_or_absent)
{
	run_scenario(&ingest_sc, 0);
}

TEST(powerloss_migration_from_empty_and_from_version_1)
{
	run_scenario(&migrate_sc, 0);
	run_scenario(&migrate_sc, 1);
}

/* The total, for docs/testing.md (tests run in registration order: this one last). */
TEST(powerloss_crash_points)
{
	printf("powerloss: %d crash points exercised\n", pl.total_points);
}
