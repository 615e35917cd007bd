/*
 * preview.c -- what a person needs to see of the chat runtime without
 * sending anything: providers.list (which providers are configured and
 * their default models, never a key or a URL) and context.preview ("what
 * the model sees": the context the next send of a session would assemble,
 * built by the same context_build as chat.send, without calling a provider
 * or writing anything).
 */
#include "ops/context.h"
#include "ops/full/runtime.h"
#include "domain/context.h"
#include "domain/thread.h"

#include <stdlib.h>
#include <string.h>

static enum smr_rc op_providers(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	struct runtime *rt = ctx->rt;
	json_t *list = json_array();

	(void)p;
	(void)err;
	for (int i = 0; rt && i < RT_PROVIDERS; i++) {
		const struct provider *pv = rt->providers[i];
		const char *why;

		if (!pv)
			continue;
		why = provider_unusable(pv);
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s?}", "name", provider_name(pv),
			"default_model", provider_default_model(pv) ? provider_default_model(pv) : "",
			"configured", !why, "reason", why));
	}
	*result = json_pack("{s:s?, s:o}", "default", rt ? rt->default_provider : NULL,
			    "providers", list);
	return SMR_OK;
}

struct preview {
	struct session sn;
	struct checkpoint ck;
	struct turn *turns;
	size_t n;
	struct thread_view path;
	struct context cx;
};

static json_t *seqs(const int64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *preview_json(const struct preview *pv, int64_t base, const char *provider,
			    const char *model, size_t budget)
{
	json_t *msgs = json_array();

	for (size_t i = 0; i < pv->cx.n_msgs; i++)
		json_array_append_new(msgs, json_pack("{s:s, s:s, s:I}", "role", pv->cx.msgs[i].role,
			"content", pv->cx.msgs[i].content, "seq", (json_int_t)pv->cx.msgs[i].seq));
	return json_pack("{s:s, s:s, s:s, s:o, s:s?, s:I, s:s, s:o, s:o, s:b, s:I, s:I}",
			 "session_id", pv->sn.id, "provider", provider, "model", model,
			 "messages", msgs, "commit_hash", pv->sn.mounted_hash,
			 "history_base_seq", (json_int_t)base, "system", pv->cx.system,
			 "turns_included", seqs(pv->cx.included, pv->cx.n_included),
			 "turns_dropped", seqs(pv->cx.dropped, pv->cx.n_dropped),
			 "trimmed", pv->cx.trimmed, "budget_chars", (json_int_t)budget,
			 "chars", (json_int_t)pv->cx.chars);
}

/*
 * The structural boundary, as chat.send uses it: a session forked by a
 * mount holds only turns after the mount; another keeps its recorded one.
 */
static enum smr_rc build(struct ops_ctx *ctx, struct preview *pv, const char *message,
			 size_t budget, int64_t *base, struct smr_err *err)
{
	struct context_in in = { 0 };
	enum smr_rc rc = SMR_OK;

	*base = pv->sn.forked_from || pv->sn.history_base_seq < 0 ? 0 : pv->sn.history_base_seq;
	if (pv->sn.mounted_hash)
		rc = store_checkpoint_get(ctx->st, pv->sn.repo_id, pv->sn.mounted_hash,
						  &pv->ck, err);
	if (!rc)
		rc = store_turn_list(ctx->st, pv->sn.id, *base, &pv->turns, &pv->n, err);
	if (rc)
		return rc;
	in.preamble = ctx->rt->preamble;
	in.checkpoint = pv->sn.mounted_hash ? &pv->ck : NULL;
	/* the path shown, as the next send follows it */
	thread_view_build(pv->turns, pv->n, pv->sn.leaf_seq > 0 ? pv->sn.leaf_seq : pv->sn.last_seq,
			  *base, &pv->path);
	in.turns = pv->path.turns;
	in.n_turns = pv->path.n;
	in.history_base_seq = *base;
	in.message = message;
	in.message_seq = 0;
	in.budget_chars = budget;
	context_build(&in, &pv->cx);
	return SMR_OK;
}

static enum smr_rc op_preview(struct ops_ctx *ctx, const json_t *p, json_t **result,
			      struct smr_err *err)
{
	const char *id, *name, *model, *message;
	struct preview pv = { 0 };
	struct provider *prov;
	int64_t base = 0;
	size_t budget;
	enum smr_rc rc;

	rc = api_str(p, "session_id", 1, &id, err);
	if (!rc)
		rc = api_str(p, "provider", 0, &name, err);
	if (!rc)
		rc = api_str(p, "model", 0, &model, err);
	if (!rc)
		rc = api_str(p, "message", 0, &message, err);
	if (!rc && !ctx->rt)
		rc = smr_errf(err, SMR_EUNAVAIL, "this process has no chat runtime");
	if (rc)
		return rc;
	name = name ? name : ctx->rt->default_provider;
	prov = runtime_provider(ctx->rt, name);
	if (!prov)
		return smr_errf(err, SMR_EUNPROC,
				"unknown provider '%s' (expected openai, anthropic or local)", name);
	model = model ? model : provider_default_model(prov);
	budget = runtime_budget_for(ctx->rt, model);
	rc = store_session_get(ctx->st, id, &pv.sn, err);
	if (!rc)
		rc = build(ctx, &pv, message ? message : "", budget, &base, err);
	if (!rc)
		*result = preview_json(&pv, base, name, model, budget);
	context_release(&pv.cx);
	thread_view_release(&pv.path);
	turns_free(pv.turns, pv.n);
	checkpoint_release(&pv.ck);
	session_release(&pv.sn);
	return rc;
}

const struct api_op chat_view_ops[] = {
	{ "providers.list", op_providers, 0, 0 },
	{ "context.preview", op_preview, 0, 0 },
	{ NULL, NULL, 0, 0 },
};
