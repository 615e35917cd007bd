/*
 * temp_store.c -- temporary SQLite stores for unit tests (see temp_store.h).
 */
#include "harness.h"
#include "temp_store.h"

#include <stdlib.h>
#include <unistd.h>

void temp_store_open(char path[TEMP_STORE_PATH_MAX], struct store **st, struct ops_ctx *ctx)
{
	int fd;

	snprintf(path, TEMP_STORE_PATH_MAX, "/tmp/smriti-unit-XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	CHECK(fd >= 0);
	CHECK_INT(store_open(path, st, NULL), SMR_OK);
	ops_ctx_init(ctx, *st);
}

void temp_store_close(const char *path, struct store *st)
{
	char side[TEMP_STORE_PATH_MAX + 8];

	store_close(st);
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}
