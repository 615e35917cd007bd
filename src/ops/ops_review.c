/*
 * ops_review.c -- the review operation: resolve a REF, run the
 * deterministic pass, then the context's LLM pass when it has one (in
 * smriti-full), and report which pass produced which finding.  Review only
 * reads.
 */
#include "domain/review.h"
#include "ops/context.h"
#include "ops/review_ingest.h"

#include <string.h>

static json_t *pass_skipped(const char *source, const char *reason)
{
	return json_pack("{s:s, s:b, s:s}", "source", source, "ran", 0, "reason", reason);
}

/* Imports raw findings of the second pass into findings; returns how many were dropped. */
static size_t import_findings(const json_t *raw, const struct checkpoint *c, const char *source,
			      json_t *findings)
{
	size_t i, dropped = 0;
	json_t *f, *item;

	json_array_foreach(raw, i, item) {
		if (review_finding_import(item, c, source, &f, NULL))
			dropped++;
		else
			json_array_append_new(findings, f);
	}
	return dropped;
}

/* Runs the second pass; returns its entry of "passes". */
static json_t *run_second_pass(struct ops_ctx *ctx, const struct checkpoint *c,
			       const json_t *params, json_t *findings)
{
	const struct review_pass *llm_pass = ctx->llm_review;
	const char *reason = NULL;
	struct smr_err err = SMR_ERR_INIT;
	json_t *raw, *entry;
	size_t before = json_array_size(findings), dropped;
	enum smr_rc rc;

	if (json_is_false(json_object_get(params, "llm")))
		return pass_skipped("llm", "not requested");
	if (!llm_pass)
		return pass_skipped("llm", "no provider configured");
	raw = json_array();
	rc = llm_pass->run(ctx, c, params, raw, &reason, &err);
	if (rc)
		entry = json_pack("{s:s, s:b, s:s, s:s}", "source", llm_pass->source, "ran", 0,
				  "reason", err.msg, "error", smr_rc_name(rc));
	else if (reason)
		entry = pass_skipped(llm_pass->source, reason);
	else {
		dropped = import_findings(raw, c, llm_pass->source, findings);
		entry = json_pack("{s:s, s:b, s:I, s:I}", "source", llm_pass->source, "ran", 1,
				  "findings", (json_int_t)(json_array_size(findings) - before),
				  "dropped", (json_int_t)dropped);
	}
	json_decref(raw);
	return entry;
}

enum smr_rc ops_review(struct ops_ctx *ctx, const struct checkpoint *c, const json_t *params,
		       json_t **out, struct smr_err *err)
{
	json_t *findings, *passes;
	int partial = 0;

	(void)err;      /* a failing second pass is reported in "passes", not as an error */
	findings = review_deterministic(c, &partial);
	passes = json_pack("[{s:s, s:b, s:I}]", "source", REVIEW_SOURCE_DETERMINISTIC, "ran", 1,
			   "findings", (json_int_t)json_array_size(findings));
	if (partial)
		json_object_set_new(json_array_get(passes, 0), "partial", json_string(
			"the checkpoint is too large to review whole: only the first items of"
			" long lists and part of its text were checked"));
	json_array_append_new(passes, run_second_pass(ctx, c, params, findings));
	*out = json_pack("{s:s, s:s, s:o, s:o}", "commit_hash", c->hash, "space",
			 c->space ? c->space : "", "findings", findings, "passes", passes);
	return SMR_OK;
}

static enum smr_rc op_review(struct ops_ctx *ctx, const json_t *p, json_t **result,
			     struct smr_err *err)
{
	const char *ref;
	const json_t *llm = json_object_get(p, "llm");
	struct checkpoint c = { 0 };
	enum smr_rc rc = SMR_OK;

	if (!json_object_get(p, "hash"))
		rc = api_str(p, "ref", 1, &ref, err);
	if (!rc && llm && !json_is_boolean(llm))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'llm' must be a boolean");
	if (!rc)
		rc = api_checkpoint_param(ctx, p, &c, err);
	if (!rc)
		rc = ops_review(ctx, &c, p, result, err);
	checkpoint_release(&c);
	return rc;
}

const struct api_op review_ingest_ops[] = {
	{ "review", op_review, 0, 1 },
	{ "ingest", ops_api_ingest, 1, 0 },
	{ "context_pack", ops_api_context_pack, 0, 0 },
	{ NULL, NULL, 0, 0 },
};
