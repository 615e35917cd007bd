/*
 * context.h -- what an operations context holds; private to src/ops (and
 * to the unit tests and benchmarks, which look inside it).
 *
 * Outside src/ops a context is an opaque handle (ops.h): a transport opens
 * one with ops_open(), hands what it built at start-up in struct ops_opts,
 * names the caller with ops_set_caller(), and sets nothing else.  The
 * operations read the members below directly.  The caches a context keeps
 * between calls are ops/cache.h's; ops/cache.c says when each entry stops
 * counting.
 */
#ifndef SMRITI_OPS_CONTEXT_H
#define SMRITI_OPS_CONTEXT_H

#include "ops/cache.h"
#include "ops/ops.h"
#include "store/auth.h"
#include "store/store.h"

struct auth_cache;    /* what this context read of tokens and roles (ops/ops_auth.c) */

struct ops_ctx {
	struct store *st;                /* owned unless opened with ops_open_on() */
	int owns_store;                  /* ops_close() closes st */
	struct head_cache head;          /* owned (ops/cache.h) */
	struct space_memo space;         /* owned (ops/cache.h) */
	struct auth_cache *auth_cache;   /* owned (ops/cache.c's rule, ops/ops_auth.c's code); NULL
					    until a check */
	struct runtime *rt;              /* borrowed (ops_opts.rt); NULL in the lean binary */
	const struct review_pass *llm_review; /* this binary's LLM review pass, or NULL */
	void (*now)(char out[32]);       /* sys_now_iso unless ops_opts swaps it */
	void (*new_id)(char out[37]);    /* sys_uuid unless ops_opts swaps it */
	/*
	 * The caller a transport authenticated (ops_set_caller), borrowed for
	 * the calls it makes; NULL is the database's owner (local CLI, a
	 * loopback server without users): no checks.
	 */
	const struct principal *who;
	struct auth_keeper *keeper;      /* borrowed: a server's (ops/auth.h), or NULL */
	struct ops_changes *changes;     /* borrowed: told of this context's writes, or NULL */
	/*
	 * Who a write names when its caller names nobody (ops_writer in
	 * ops/auth.h); borrowed; NULL: none (OPS_UNNAMED is recorded).
	 */
	const char *actor;
	/* owned: the item texts of the checkpoint the last answer holds (ops/api.h), or NULL */
	struct item_texts *texts;
};

/*
 * ops_open() over a store the caller opened and keeps (ops_close() leaves
 * it open): the same context, caches and all, for the tests and benchmarks
 * that run one store handle on both backends.  Caller ops_close()s.
 */
enum smr_rc ops_open_on(struct ops_ctx **out, struct store *st, const struct ops_opts *opt,
			struct smr_err *err);

/* The context's store handle (borrowed), for tests and benchmarks that look below it. */
struct store *ops_store(struct ops_ctx *ctx);

#endif
