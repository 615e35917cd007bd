/*
 * review_ingest.h -- operations of checkpoint review (V5), transcript
 * ingestion and context packs (V1), and the seam where smriti-full plugs
 * the LLM review pass in (at link time: review_llm_builtin).
 *
 * Operations by name (api.h), JSON shapes in docs/review.md:
 *   review        {ref | hash, llm?}                -> {commit_hash, space, findings, passes}
 *   ingest        {space, transcript, format?, title?} -> {session, turns, format}
 *   context_pack  {session_id} | {transcript, format?, title?} -> {markdown, turns, title, source}
 */
#ifndef SMRITI_REVIEW_INGEST_H
#define SMRITI_REVIEW_INGEST_H

#include "ops/api.h"
#include "ops/ops.h"

/*
 * A second source of review findings (the LLM pass of smriti-full).  run()
 * appends raw findings to raw -- objects {type, message, items: [{field,
 * index}]} -- which review checks with review_finding_import() and tags
 * with source; malformed ones are dropped and counted.  When the pass
 * cannot run (no provider configured) it sets *skip_reason (a static
 * string) and returns SMR_OK.  An error return does not fail the review:
 * the pass is reported as not run, with the error's message.  params are
 * the review operation's parameters (provider, model, ...).
 */
struct review_pass {
	const char *source;     /* "llm" */
	enum smr_rc (*run)(struct ops_ctx *ctx, const struct checkpoint *c,
			   const json_t *params, json_t *raw, const char **skip_reason,
			   struct smr_err *err);
};

/*
 * This binary's second pass, chosen at link time: NULL in the lean binary
 * (ops/builtins_lean.c), the LLM pass in smriti-full
 * (ops/full/builtins_full.c).  ops_open() puts it in ctx->llm_review.
 */
extern const struct review_pass *const review_llm_builtin;

/*
 * Reviews checkpoint c; never writes.  params may be NULL; {"llm": false}
 * skips the second pass (ctx->llm_review).  *out is a new reference.
 */
enum smr_rc ops_review(struct ops_ctx *ctx, const struct checkpoint *c, const json_t *params,
		       json_t **out, struct smr_err *err);

/*
 * Creates a session in space holding the turns of transcript[0..len)
 * (format NULL or "auto" detects it; title NULL takes the export's or the
 * first request's).  Nothing is written when the transcript is rejected.
 * *out is a new reference {session, turns, format}.
 */
enum smr_rc ops_ingest(struct ops_ctx *ctx, const char *space, const char *transcript,
		       size_t len, const char *format, const char *title, json_t **out,
		       struct smr_err *err);

/* Context pack of a stored session, or of a transcript that is not stored. */
enum smr_rc ops_context_pack_session(struct ops_ctx *ctx, const char *session_id,
				     json_t **out, struct smr_err *err);
enum smr_rc ops_context_pack_transcript(const char *transcript, size_t len, const char *format,
					const char *title, json_t **out, struct smr_err *err);

/* JSON handlers of ingest and context_pack (ops_ingest.c), listed in review_ingest_ops. */
enum smr_rc ops_api_ingest(struct ops_ctx *ctx, const json_t *params, json_t **result,
			   struct smr_err *err);
enum smr_rc ops_api_context_pack(struct ops_ctx *ctx, const json_t *params, json_t **result,
				 struct smr_err *err);

/* The operation table of this file set; api.c lists it beside its own. */
extern const struct api_op review_ingest_ops[];

#endif
