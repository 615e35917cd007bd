/*
 * store.h -- for the fuzz targets that run operations: a fresh in-memory
 * SQLite store per input (so a crash replays from its input alone) with a
 * fixed clock and counting ids, and the list of operations this build has.
 */
#ifndef SMRITI_FUZZ_STORE_H
#define SMRITI_FUZZ_STORE_H

#include "fuzz.h"

#include "ops/api.h"
#include "ops/ops.h"

static unsigned fuzz_ids;

static void fuzz_now(char out[32])
{
	snprintf(out, 32, "2026-01-02T03:04:%02u.000000Z", fuzz_ids % 60);
}

static void fuzz_new_id(char out[37])
{
	snprintf(out, 37, "00000000-0000-4000-8000-%012u", ++fuzz_ids);
}

/* Opens a fresh store into ctx; aborts when it cannot (that is a bug here). */
static inline void fuzz_store_open(struct ops_ctx *ctx)
{
	struct smr_err err = SMR_ERR_INIT;

	fuzz_ids = 0;
	if (ops_open(ctx, ":memory:", &err)) {
		fprintf(stderr, "cannot open an in-memory store: %s\n", err.msg);
		abort();
	}
	ctx->now = fuzz_now;
	ctx->new_id = fuzz_new_id;
}

/* The operations that call no provider (not slow), in table order; *n of them. */
static inline const struct api_op **fuzz_ops(size_t *n)
{
	static const struct api_op *ops[256];
	static size_t count;

	if (!count)
		for (size_t t = 0; api_tables[t]; t++)
			for (const struct api_op *op = api_tables[t]; op->name; op++)
				if (!op->slow && count < 256)
					ops[count++] = op;
	*n = count;
	return ops;
}

#endif
