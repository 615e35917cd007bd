/*
 * review_llm.h -- the LLM pass of checkpoint review (smriti-full), plugged
 * into the seam of ops/review_ingest.h at link time (builtins_full.c).  It
 * runs on ctx->rt; a context without a runtime has no provider to ask.
 *
 * It asks a provider for findings of the four review types (contradiction,
 * hidden_assumption, resolved_question, disconnected_entity) as JSON of a
 * schema; review checks each against the checkpoint and tags it "llm".
 * Review parameters it reads: provider? (default SMRITI_PROVIDER, else
 * openai) and model? (default the provider's).  With no provider given
 * and the default one lacking its key, the pass does not run and says
 * "no provider configured".  See docs/draft.md.
 */
#ifndef SMRITI_REVIEW_LLM_H
#define SMRITI_REVIEW_LLM_H

#include "ops/review_ingest.h"

/* Findings kept from one reply; the rest are ignored. */
#define REVIEW_LLM_MAX_FINDINGS 100

extern const struct review_pass review_llm_pass;

#endif
