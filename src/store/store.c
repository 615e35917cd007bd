/*
 * store.c -- picks the backend for a DSN.  The list of backends differs
 * between the lean binary (SQLite only) and the full one (with PostgreSQL);
 * see store_backends_*.c.
 */
#include "store/store.h"

enum smr_rc store_open(const char *dsn, struct store **out, struct smr_err *err)
{
	for (size_t i = 0; store_backends[i]; i++)
		if (store_backends[i]->accepts(dsn))
			return store_backends[i]->open(dsn, out, err);
	return smr_errf(err, SMR_EUSAGE, "no storage backend in this binary handles '%s'", dsn);
}

void store_close(struct store *st)
{
	if (st)
		st->ops->close(st);
}
