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
static inline void fuzz_store_open(struct ops_ctx **ctx)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ops_opts opt = { .now = fuzz_now, .new_id = fuzz_new_id };

	fuzz_ids = 0;
	if (ops_open(ctx, ":memory:", &opt, &err)) {
		fprintf(stderr, "cannot open an in-memory store: %s\n", err.msg);
		abort();
	}
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

/* fsck of the store in ctx must say ok; else report it (when: "after the import") and abort. */
static inline void fuzz_check_fsck(struct ops_ctx *ctx, const char *when)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *params = json_object(), *report = NULL;
	enum smr_rc rc = api_call(ctx, "fsck", params, &report, &err);

	if (rc != SMR_OK || !json_is_true(json_object_get(report, "ok"))) {
		char *text = report ? json_dumps(report, 0) : NULL;

		fprintf(stderr, "fsck %s: %s %s\n", when, err.msg, text ? text : "");
		free(text);
		abort();
	}
	json_decref(report);
	json_decref(params);
}

#endif
