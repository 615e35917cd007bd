/*
 * backends_full.c -- the storage backends of smriti-full: SQLite and
 * PostgreSQL.
 */
#include "store/store_int.h"

const struct store_ops *const store_backends[] = { &store_sqlite_ops, &store_postgres_ops, NULL };
