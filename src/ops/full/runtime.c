/*
 * runtime.c -- the chat runtime's configuration: providers from the
 * environment, the system preamble, context budgets per model and the nudge
 * threshold (see runtime.h).
 */
#include "ops/context.h"
#include "ops/full/generation.h"
#include "ops/full/runtime.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET_DEFAULT_CHARS 90000


static const char default_preamble[] =
	"You are a helpful assistant in Smriti, a workspace where a person reasons with a "
	"language model and saves the state of the work as Checkpoints (decisions, "
	"assumptions, tasks, open questions, entities, artifacts). Answer the user's latest "
	"message. When a Checkpoint is given below, treat it as the agreed state of the work; "
	"say so if the user's message contradicts it.";

/* Budgets in characters, about 3 characters per token, leaving room for the reply. */
static const struct {
	const char *prefix;
	size_t chars;
} builtin_budgets[] = {
	{ "gpt-4.1", 2400000 },
	{ "gpt-5", 1000000 },
	{ "gpt-4o", 350000 },
	{ "gpt-4-turbo", 350000 },
	{ "o1", 350000 },
	{ "o3", 550000 },
	{ "o4", 550000 },
	{ "claude", 550000 },
};

static void add_budget(struct runtime *rt, const char *prefix, size_t len, size_t chars)
{
	rt->budgets = xrealloc(rt->budgets, (rt->n_budgets + 1) * sizeof(*rt->budgets));
	rt->budgets[rt->n_budgets].model_prefix = xstrndup(prefix, len);
	rt->budgets[rt->n_budgets++].chars = chars;
}

/* SMRITI_CONTEXT_BUDGETS="gpt-4o=300000,llama3=20000"; malformed entries are skipped. */
static void parse_budgets(struct runtime *rt, const char *spec)
{
	const char *p = spec, *eq, *end;
	char *num_end;
	unsigned long long n;

	while (p && *p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq && eq > p) {
			n = strtoull(eq + 1, &num_end, 10);
			if (num_end == end && n)
				add_budget(rt, p, (size_t)(eq - p), (size_t)n);
		}
		p = *end ? end + 1 : end;
	}
}

struct runtime *runtime_new_from_env(void)
{
	struct runtime *rt = xcalloc(1, sizeof(*rt));
	const char *v;

	for (int i = 0; i < RT_PROVIDERS; i++)
		rt->providers[i] = provider_from_env(provider_names[i]);
	v = getenv("SMRITI_PROVIDER");
	rt->default_provider = xstrdup(v && *v ? v : "openai");
	v = getenv("SMRITI_SYSTEM_PREAMBLE");
	rt->preamble = xstrdup(v ? v : default_preamble);
	rt->budget_default = (size_t)sys_env_long("SMRITI_CONTEXT_BUDGET_CHARS",
						  BUDGET_DEFAULT_CHARS, 1, LONG_MAX);
	parse_budgets(rt, getenv("SMRITI_CONTEXT_BUDGETS"));
	for (size_t i = 0; i < sizeof(builtin_budgets) / sizeof(builtin_budgets[0]); i++)
		add_budget(rt, builtin_budgets[i].prefix, strlen(builtin_budgets[i].prefix),
			   builtin_budgets[i].chars);
	rt->nudge_threshold = sys_env_long("SMRITI_NUDGE_TURNS", 10, 1, LONG_MAX);
	rt->gens = chat_gens_new();
	return rt;
}

void runtime_free(struct runtime *rt)
{
	if (!rt)
		return;
	chat_generations_stop(rt);
	/* the loops end calls still running (INTERRUPTED) before the generations go */
	for (int i = 0; i < RT_PROVIDERS; i++)
		provider_free(rt->providers[i]);
	chat_gens_free(rt->gens);
	for (size_t i = 0; i < rt->n_budgets; i++)
		free(rt->budgets[i].model_prefix);
	free(rt->budgets);
	free(rt->default_provider);
	free(rt->preamble);
	free(rt);
}

enum smr_rc runtime_required(const struct ops_ctx *ctx, struct smr_err *err)
{
	if (ctx->rt)
		return SMR_OK;
	return smr_errf(err, SMR_EINTERNAL, "the chat runtime was not started in this program");
}

struct provider *runtime_provider(const struct runtime *rt, const char *name)
{
	for (int i = 0; i < RT_PROVIDERS; i++)
		if (rt->providers[i] && !strcmp(provider_name(rt->providers[i]), name))
			return rt->providers[i];
	return NULL;
}

size_t runtime_budget_for(const struct runtime *rt, const char *model)
{
	size_t best_len = 0, chars = rt->budget_default, len;

	/* environment entries come first in the list and win ties with built-ins */
	for (size_t i = 0; i < rt->n_budgets; i++) {
		len = strlen(rt->budgets[i].model_prefix);
		if (len > best_len && !strncmp(model, rt->budgets[i].model_prefix, len)) {
			best_len = len;
			chars = rt->budgets[i].chars;
		}
	}
	return chars;
}
