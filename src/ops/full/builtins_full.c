/*
 * builtins_full.c -- what smriti-full's operations layer carries, chosen at
 * link time (see ops/builtins_lean.c for the lean binary): the core
 * operation tables plus chat and drafts, and the LLM review pass.
 */
#include "ops/api.h"
#include "ops/auth.h"
#include "ops/prime.h"
#include "ops/review_ingest.h"
#include "ops/full/draft.h"
#include "ops/full/review_llm.h"
#include "ops/full/runtime.h"
#include "ops/view.h"

const struct api_op *const api_tables[] = {
	api_core_ops, review_ingest_ops, view_ops, chat_api_ops, chat_view_ops, draft_api_ops, auth_ops,
	prime_ops,
	NULL,
};

const struct review_pass *const review_llm_builtin = &review_llm_pass;
