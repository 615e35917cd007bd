/*
 * temp_store.h -- a SQLite store in a fresh temporary file for unit tests
 * that exercise operations on a real store.
 */
#ifndef SMRITI_TEST_TEMP_STORE_H
#define SMRITI_TEST_TEMP_STORE_H

#include "ops/ops.h"

#define TEMP_STORE_PATH_MAX 64

/* Creates the file (path gets its name), opens *st on it and initialises ctx. */
void temp_store_open(char path[TEMP_STORE_PATH_MAX], struct store **st, struct ops_ctx *ctx);

/* Closes st and removes the file with its -wal and -shm companions. */
void temp_store_close(const char *path, struct store *st);

#endif
