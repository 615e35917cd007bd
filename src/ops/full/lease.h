/*
 * lease.h -- a server's identity and heartbeat in the database, and the
 * takeover of what a server whose lease lapsed left running (smriti-full).
 *
 * Each `smriti serve` is a servers row (store.h) whose heartbeat it moves
 * every fifth of its lease (SMRITI_LEASE_S, default LEASE_DEFAULT_S); the
 * generations and draft jobs it starts record it as their owner.  The same
 * thread watches the other rows: one whose heartbeat has not moved for its
 * lease_s, as this server's own monotonic clock measures it (so the
 * servers' clocks need not agree), belonged to a server that died.  Its
 * running generations become interrupted (keeping the text its server
 * stored so far) and its queued or running draft jobs failed; then its row
 * goes.  Generations with no owner (made before leases) and work whose
 * owner has no row are taken over at once.  There is no sweep at start-up:
 * a new server first watches a lease's length, like any other.
 *
 * A server that could not reach the database for a while starts its watch
 * over (the others could not beat either), and one whose own row was
 * removed puts it back; what was taken from it is fenced off in the store
 * (its late end is refused, a late job result dropped).
 */
#ifndef SMRITI_RUNTIME_LEASE_H
#define SMRITI_RUNTIME_LEASE_H

#include "util/err.h"

#define LEASE_DEFAULT_S 5
#define LEASE_MAX_S 3600

struct lease;

/*
 * Registers this process as a server of dsn's database and starts its
 * heartbeat thread (its own store handle).  Caller lease_stop()s *out.
 */
enum smr_rc lease_start(const char *dsn, struct lease **out, struct smr_err *err);

/* This server's id (the owner its work records); NULL for a NULL lease. */
const char *lease_id(const struct lease *l);

/* Stops the heartbeat and removes the row: after the last work ended.  NULL is a no-op. */
void lease_stop(struct lease *l);

#endif
