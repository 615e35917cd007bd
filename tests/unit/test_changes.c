/*
 * test_changes.c -- a process's watch on writes (ops/changes.h) on SQLite:
 * a write through a context that names the watch tells its subscribers
 * before api_call returns; a write through another handle (as another
 * process would) is heard from the data version; a write that fails, a
 * read, and a removed subscriber are told nothing.
 */
#include "harness.h"
#include "temp_store.h"
#include "ops/api.h"
#include "ops/changes.h"
#include "ops/ops.h"

#include <stdatomic.h>
#include <time.h>

static void count(void *ud)
{
	atomic_fetch_add((atomic_int *)ud, 1);
}

static enum smr_rc call(struct ops_ctx *ctx, const char *op, json_t *params)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *res = NULL;
	enum smr_rc rc = api_call(ctx, op, params, &res, &err);

	json_decref(res);
	json_decref(params);
	return rc;
}

/* Waits up to 10 s for *n to pass was; 1 when it did. */
static int moved_past(atomic_int *n, int was)
{
	for (int i = 0; i < 1000; i++) {
		if (atomic_load(n) > was)
			return 1;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	return 0;
}

/* Waits until *n has not moved for 300 ms: the watch has read the data version since. */
static void settle(atomic_int *n)
{
	int last = -1;

	while (atomic_load(n) != last) {
		last = atomic_load(n);
		nanosleep(&(struct timespec){ .tv_nsec = 300000000 }, NULL);
	}
}

TEST(changes_tell_writes_on_sqlite)
{
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx, *told = NULL, *other = NULL;
	struct ops_changes *c = NULL;
	struct smr_err err = SMR_ERR_INIT;
	atomic_int n = 0;
	struct ops_changes_sub sub = { .moved = count, .ud = &n };
	int was;

	temp_store_open(path, &st, &ctx);
	CHECK_INT(ops_changes_start(path, &c, &err), SMR_OK);
	ops_changes_subscribe(c, &sub);
	CHECK_INT(ops_open(&told, path, &(struct ops_opts){ .changes = c }, &err), SMR_OK);
	CHECK_INT(ops_open(&other, path, NULL, &err), SMR_OK);

	/* this process's write: told before api_call returns */
	was = atomic_load(&n);
	CHECK_INT(call(told, "space.create", json_pack("{s:s}", "name", "here")), SMR_OK);
	CHECK(atomic_load(&n) > was);

	/* a refused write and a read tell nothing */
	settle(&n);
	was = atomic_load(&n);
	CHECK_INT(call(told, "space.create", json_pack("{s:s}", "name", "here")), SMR_ECONFLICT);
	CHECK_INT(call(told, "space.list", NULL), SMR_OK);
	settle(&n);
	CHECK_INT(atomic_load(&n), was);

	/* another handle's write (another process's, as far as the watch knows) */
	was = atomic_load(&n);
	CHECK_INT(call(other, "space.create", json_pack("{s:s}", "name", "there")), SMR_OK);
	CHECK(moved_past(&n, was));

	/* once unsubscribed, nothing */
	ops_changes_unsubscribe(c, &sub);
	was = atomic_load(&n);
	CHECK_INT(call(told, "space.create", json_pack("{s:s}", "name", "after")), SMR_OK);
	CHECK_INT(atomic_load(&n), was);

	ops_close(told);
	ops_close(other);
	ops_changes_stop(c);
	temp_store_close(path, ctx);
}
