/*
 * context.c -- opens and closes an operations context, the one handle a
 * transport holds (ops.h; its members are ops/context.h's).
 *
 * Every context is built here the same way, whoever opens it (a
 * transport, a test, a benchmark): the clock, the ids and the passes this
 * binary was linked with, what the program handed over in struct
 * ops_opts, and the caches every context keeps.  So a test exercises the
 * configuration users run.
 */
#include "domain/item_texts.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/review_ingest.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum smr_rc ops_open_on(struct ops_ctx **out, struct store *st, const struct ops_opts *opt,
			struct smr_err *err)
{
	static const struct ops_opts none;
	struct ops_ctx *ctx = xcalloc(1, sizeof(*ctx));

	(void)err;
	if (!opt)
		opt = &none;
	ctx->st = st;
	if (opt->background)
		store_set_background(st, 1);
	ctx->llm_review = review_llm_builtin;
	ctx->rt = opt->rt;
	ctx->keeper = opt->keeper;
	ctx->changes = opt->changes;
	ctx->actor = opt->actor;
	ctx->now = opt->now ? opt->now : sys_now_iso;
	ctx->new_id = opt->new_id ? opt->new_id : sys_uuid;
	*out = ctx;
	return SMR_OK;
}

enum smr_rc ops_open(struct ops_ctx **out, const char *dsn, const struct ops_opts *opt,
		     struct smr_err *err)
{
	struct store *st = NULL;
	enum smr_rc rc;

	*out = NULL;
	rc = store_open(dsn, &st, err);
	if (!rc)
		rc = ops_open_on(out, st, opt, err);
	if (rc) {
		store_close(st);
		return rc;
	}
	(*out)->owns_store = 1;
	return SMR_OK;
}

void ops_close(struct ops_ctx *ctx)
{
	if (!ctx)
		return;
	head_cache_release(&ctx->head);
	space_memo_release(&ctx->space);
	ops_auth_cache_free(ctx);
	item_texts_unref(ctx->texts);
	if (ctx->owns_store)
		store_close(ctx->st);
	free(ctx);
}

void ops_set_caller(struct ops_ctx *ctx, const struct principal *who)
{
	ctx->who = who;
}

const char *ops_store_name(const struct ops_ctx *ctx)
{
	return store_name(ctx->st);
}

enum smr_rc ops_data_version(struct ops_ctx *ctx, uint64_t *out, struct smr_err *err)
{
	*out = 0;
	return store_data_version(ctx->st, out, err);
}

struct store *ops_store(struct ops_ctx *ctx)
{
	return ctx->st;
}
