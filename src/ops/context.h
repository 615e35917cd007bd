/*
 * context.h -- what an operations context holds; private to src/ops (and
 * to the unit tests and benchmarks, which look inside it).
 *
 * Outside src/ops a context is an opaque handle (ops.h): a transport opens
 * one with ops_open(), hands what it built at start-up in struct ops_opts,
 * names the caller with ops_set_caller(), and sets nothing else.  The
 * operations read the members below directly.  The caches a context keeps
 * between calls are below.
 */
#ifndef SMRITI_OPS_CONTEXT_H
#define SMRITI_OPS_CONTEXT_H

#include "ops/ops.h"
#include "store/store.h"

struct auth_cache;    /* what this context read of tokens and roles (ops/auth.c) */

/*
 * The last HEAD document a context read (see ops_head_doc).  The document
 * is a function of the checkpoint's hash, its Space's name and the Space's
 * newest hand-off note alone (the hash covers every other member), so a
 * read that finds the same three again hands out the same document,
 * rendered once.
 */
struct head_cache {
	char *space;                     /* as asked for last: id or name */
	uint64_t version;                /* store_data_version() read before that (0: none) */
	json_t *doc;
	char *hash, *name;               /* the checkpoint doc renders, and its Space's name */
	int64_t handoff;                 /* the hand-off note doc carries (0: none) */
	/*
	 * The data version this request's auth check read (ops/auth.c), reused
	 * instead of a second read; 0: none.  Cleared when a request ends and
	 * before any write (api_call), so a write is never followed by a HEAD
	 * read that would not see it.
	 */
	uint64_t seen;
};

/*
 * The Space the last checkpoint write named (see ops_checkpoint_create): a
 * write on a parent then skips looking the Space up, and the store checks
 * in the write's own transaction that the name still means that Space.
 */
struct space_memo {
	char *ref;                       /* as given: id or name */
	struct space sp;                 /* its id and name */
	int joined;                      /* counted among the shelf's users (ops_checkpoint.c) */
};

/* Frees ctx->space (ops_close calls it); the last one out empties the shared shelf. */
void ops_space_memo_release(struct ops_ctx *ctx);

struct ops_ctx {
	struct store *st;                /* owned unless opened with ops_open_on() */
	int owns_store;                  /* ops_close() closes st */
	struct head_cache head;          /* owned; released by ops_close() */
	struct space_memo space;         /* owned; released by ops_close() */
	struct auth_cache *auth_cache;   /* owned; NULL until a check */
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
	/*
	 * Who a write names when its caller names nobody (ops_writer in
	 * ops/auth.h); borrowed; NULL: none (OPS_UNNAMED is recorded).
	 */
	const char *actor;
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
