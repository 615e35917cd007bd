/*
 * backends_lean.c -- the storage backends of the lean binary: SQLite only.
 */
#include "store/store_int.h"

const struct store_ops *const store_backends[] = { &store_sqlite_ops, NULL };
