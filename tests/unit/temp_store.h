/*
 * temp_store.h -- a SQLite store in a fresh temporary file for unit tests
 * that exercise operations on a real store.
 */
#ifndef SMRITI_TEST_TEMP_STORE_H
#define SMRITI_TEST_TEMP_STORE_H

#include "ops/context.h"

#define TEMP_STORE_PATH_MAX 64

/*
 * Creates the file (path gets its name) and opens *ctx on it with
 * ops_open(), as every transport does (the same caches); *st is the
 * context's store handle, for tests that look below the operations.
 */
void temp_store_open(char path[TEMP_STORE_PATH_MAX], struct store **st, struct ops_ctx **ctx);

/* Closes ctx (and its store) and removes the file with its -wal and -shm companions. */
void temp_store_close(const char *path, struct ops_ctx *ctx);

#endif
