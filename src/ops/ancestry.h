/*
 * ancestry.h -- how two checkpoints' histories relate, for the operations
 * that ask it (merge, merge-base, the forks' standing): ops_ancestry.c.
 */
#ifndef SMRITI_OPS_ANCESTRY_H
#define SMRITI_OPS_ANCESTRY_H

#include "ops/context.h"
#include "store/store.h"

/*
 * A checkpoint's history, to ask how it relates to another's
 * (ops_ancestry.c): read by its chains, or whole (set, {hash: created_at})
 * when a chain is not known yet.
 */
struct history {
	struct history_chains chains;
	json_t *set;
	char *space_id, *hash;
};
/* The history of hash, read in space_id (ENOTFOUND when it does not reach it); ops_history_release() it. */
enum smr_rc ops_history_read(struct ops_ctx *ctx, const char *space_id, const char *hash,
			     struct history *out, struct smr_err *err);
void ops_history_release(struct history *h);
/* *yes: h holds other's checkpoint (other's is h's, or in its ancestry). */
enum smr_rc ops_history_holds(struct ops_ctx *ctx, struct history *h, struct history *other,
			      int *yes, struct smr_err *err);
/* *n: how many checkpoints a holds that b lacks (a merge's ahead and behind). */
enum smr_rc ops_history_only_in(struct ops_ctx *ctx, struct history *a, struct history *b,
				json_int_t *n, struct smr_err *err);
/*
 * *base: where a and b parted, as a merge picks it (caller frees; NULL when
 * they share nothing): of the checkpoints both hold that are not an
 * ancestor of another on their chain, the newest (ties: the greater hash).
 */
enum smr_rc ops_history_base(struct ops_ctx *ctx, struct history *a, struct history *b,
			     char **base, struct smr_err *err);

#endif
