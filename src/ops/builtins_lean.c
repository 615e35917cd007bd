/*
 * builtins_lean.c -- what the lean binary's operations layer carries, chosen
 * at link time as store/backends_lean.c chooses its backends: the core
 * operation tables and no LLM review pass.  smriti-full links
 * ops/full/builtins_full.c instead.
 */
#include "ops/api.h"
#include "ops/auth.h"
#include "ops/prime.h"
#include "ops/review_ingest.h"
#include "ops/view.h"

const struct api_op *const api_tables[] = {
	api_core_ops, review_ingest_ops, view_ops, auth_ops, prime_ops, NULL,
};

const struct review_pass *const review_llm_builtin = NULL;
