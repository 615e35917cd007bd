/*
 * ops_ancestry.c -- how two histories relate (ops/ancestry.h): does one
 * hold a checkpoint, how many checkpoints does one hold that the other
 * lacks (a fork's ahead and behind), where did they part (a merge's base).
 *
 * A history is read as its chains (store_checkpoint_chains): the chains it
 * reaches and the highest row on each.  What two histories share on a
 * chain is its rows up to the lower of their two tops, so the questions
 * cost the chains and the rows between two tops, not every checkpoint
 * held: against a Space of 100,000 checkpoints each question read two
 * sets of 100,000 hashes (0.4 s on SQLite, for each fork on the Spaces
 * page and each merge preview).  While the migration that names chains is
 * under way a history can hold rows without one: then both histories are
 * read whole, as sets of hashes, as before.
 */
#include "ops/ancestry.h"
#include "ops/ops.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Whether every row of h's is on a known chain (h with no hash: no history, so yes). */
static int complete(const struct history *h)
{
	if (!h->hash)
		return 1;
	if (!h->chains.chain)
		return 0;
	for (size_t i = 0; i < h->chains.n; i++)
		if (!h->chains.v[i].chain)
			return 0;
	return 1;
}

/* How many hashes of set a set b lacks. */
static json_int_t only_in_set(const json_t *a, const json_t *b)
{
	const char *hash;
	json_t *v;
	json_int_t n = 0;

	json_object_foreach((json_t *)a, hash, v)
		n += !json_object_get(b, hash);
	return n;
}

enum smr_rc ops_history_read(struct ops_ctx *ctx, const char *space_id, const char *hash,
			     struct history *out, struct smr_err *err)
{
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	out->space_id = xstrdup(space_id);
	out->hash = xstrdup(hash);
	rc = store_checkpoint_chains(ctx->st, space_id, hash, &out->chains, err);
	if (rc)
		ops_history_release(out);
	return rc;
}

void ops_history_release(struct history *h)
{
	history_chains_release(&h->chains);
	json_decref(h->set);
	free(h->space_id);
	free(h->hash);
	memset(h, 0, sizeof(*h));
}

/* Both histories as sets of hashes, when either lacks a chain; 0 when chains serve. */
static enum smr_rc as_sets(struct ops_ctx *ctx, struct history *a, struct history *b,
			   int *sets, struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;
	struct history *both[2] = { a, b };

	*sets = !complete(a) || !complete(b);
	for (int i = 0; *sets && !rc && i < 2; i++)
		if (!both[i]->set) {
			both[i]->set = json_object();
			if (both[i]->hash)
				rc = store_checkpoint_ancestry(ctx->st, both[i]->space_id,
							       both[i]->hash, both[i]->set, err);
		}
	return rc;
}

/* The top of chain in h, or 0 when h does not reach it. */
static int64_t top_on(const struct history_chains *h, int64_t chain)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->v[mid].chain == chain)
			return h->v[mid].top;
		if (h->v[mid].chain < chain)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

enum smr_rc ops_history_holds(struct ops_ctx *ctx, struct history *h, struct history *other,
			      int *yes, struct smr_err *err)
{
	int sets;
	enum smr_rc rc = as_sets(ctx, h, other, &sets, err);

	*yes = 0;
	if (!rc && other->hash && sets)
		*yes = json_object_get(h->set, other->hash) != NULL;
	else if (!rc && other->hash)
		*yes = top_on(&h->chains, other->chains.chain) >= other->chains.id;
	return rc;
}

enum smr_rc ops_history_only_in(struct ops_ctx *ctx, struct history *a, struct history *b,
				json_int_t *n, struct smr_err *err)
{
	int sets;
	enum smr_rc rc = as_sets(ctx, a, b, &sets, err);

	*n = 0;
	if (!rc && sets)
		*n = only_in_set(a->set, b->set);
	for (size_t i = 0; !rc && !sets && i < a->chains.n; i++) {
		const struct chain_top *t = &a->chains.v[i];
		int64_t theirs = top_on(&b->chains, t->chain), k = 0;

		if (t->top > theirs)
			rc = store_chain_count(ctx->st, t->chain, theirs, t->top, &k, err);
		*n += k;
	}
	return rc;
}

/* Whether (at, hash) is nearer than the best so far: the newer, then the greater hash. */
static int nearer(const char *at, const char *hash, const char *best_at, const char *best)
{
	int c;

	if (!best)
		return 1;
	c = strcmp(at, best_at);
	return c > 0 || (!c && strcmp(hash, best) > 0);
}

/*
 * The shared rows' candidates: on each chain both reach, the lower of the
 * two tops (every other shared row of that chain is its ancestor).
 */
static enum smr_rc base_by_chains(struct ops_ctx *ctx, const struct history *a,
				  const struct history *b, char **base, struct smr_err *err)
{
	int64_t ids[STORE_ROWS_AT_ONCE];
	char *best_at = NULL;
	size_t i = 0, k;
	enum smr_rc rc = SMR_OK;

	while (!rc && i < a->chains.n) {
		char **hashes = NULL, **times = NULL;

		for (k = 0; i < a->chains.n && k < STORE_ROWS_AT_ONCE; i++) {
			int64_t mine = a->chains.v[i].top, theirs = top_on(&b->chains, a->chains.v[i].chain);

			if (theirs)
				ids[k++] = mine < theirs ? mine : theirs;
		}
		if (!k)
			continue;
		rc = store_row_hashes(ctx->st, ids, k, &hashes, &times, err);
		for (size_t j = 0; j < k; j++) {
			if (!rc && hashes[j] && nearer(times[j], hashes[j], best_at, *base)) {
				free(*base);
				free(best_at);
				*base = hashes[j];
				best_at = times[j];
			} else {
				free(hashes[j]);
				free(times[j]);
			}
		}
		free(hashes);
		free(times);
	}
	free(best_at);
	if (rc) {
		free(*base);
		*base = NULL;
	}
	return rc;
}

/* The newest checkpoint in both sets (ties: the greater hash); borrowed, NULL if none. */
static const char *base_by_sets(const json_t *ours, const json_t *theirs)
{
	const char *hash, *best = NULL, *best_at = NULL;
	json_t *v;

	json_object_foreach((json_t *)ours, hash, v) {
		if (json_object_get(theirs, hash) && nearer(json_string_value(v), hash, best_at, best)) {
			best = hash;
			best_at = json_string_value(v);
		}
	}
	return best;
}

enum smr_rc ops_history_base(struct ops_ctx *ctx, struct history *a, struct history *b,
			     char **base, struct smr_err *err)
{
	int sets;
	enum smr_rc rc = as_sets(ctx, a, b, &sets, err);
	const char *found;

	*base = NULL;
	if (!rc && !sets)
		return base_by_chains(ctx, a, b, base, err);
	if (!rc && (found = base_by_sets(a->set, b->set)))
		*base = xstrdup(found);
	return rc;
}
