/*
 * auth_keeper.h -- what ops/ops_auth.c asks of a server's auth keeper
 * (auth_keeper.c; started with ops_auth_keeper_start, auth.h).  Private to
 * src/ops.
 */
#ifndef SMRITI_OPS_AUTH_KEEPER_H
#define SMRITI_OPS_AUTH_KEEPER_H

#include <stdint.h>

struct auth_keeper;

/*
 * 1 and *gen set while the keeper hears every change (its watch is up):
 * what a context read while gen stays the same is still true.  0: read the
 * epoch (the watch is down, or the backend has none).
 */
int auth_keeper_gen(struct auth_keeper *k, uint64_t *gen);
/* A change made through this process: every context's cache is stale now. */
void auth_keeper_bump(struct auth_keeper *k);
/* Records a token's last use off the request path (at most once a minute per token). */
void auth_keeper_touch(struct auth_keeper *k, const char *token_id, const char *now);

#endif
