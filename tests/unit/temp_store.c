/*
 * temp_store.c -- temporary SQLite stores for unit tests (see temp_store.h).
 */
#include "harness.h"
#include "temp_store.h"

#include <stdlib.h>
#include <unistd.h>

void temp_store_open(char path[TEMP_STORE_PATH_MAX], struct store **st, struct ops_ctx **ctx)
{
	int fd;

	snprintf(path, TEMP_STORE_PATH_MAX, "/tmp/smriti-unit-XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	CHECK(fd >= 0);
	CHECK_INT(ops_open(ctx, path, NULL, NULL), SMR_OK);
	*st = *ctx ? ops_store(*ctx) : NULL;
}

void temp_store_close(const char *path, struct ops_ctx *ctx)
{
	char side[TEMP_STORE_PATH_MAX + 8];

	ops_close(ctx);
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}
