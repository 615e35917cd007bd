/*
 * provider.c -- provider handles: defaults, settings from the environment,
 * and the whole-reply completion every backend shares.
 */
#include "provider/call.h"
#include "provider/loop.h"
#include "util/logline.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void provider_resp_release(struct provider_resp *r)
{
	free(r->text);
	json_decref(r->json);
	free(r->finish_reason);
	free(r->request_id);
	free(r->model);
	memset(r, 0, sizeof(*r));
}

void provider_cfg_defaults(struct provider_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_tokens = 1024;
	cfg->connect_timeout_ms = 10000;
	cfg->timeout_ms = 120000;
	cfg->first_byte_timeout_ms = 60000;
	cfg->idle_timeout_ms = 60000;
	cfg->max_retries = 2;
	cfg->backoff_ms = 500;
	cfg->backoff_max_ms = 8000;
	cfg->retry_after_max_ms = 60000;
	cfg->max_reply_bytes = 8u << 20;
}

static void cfg_release(struct provider_cfg *cfg)
{
	free(cfg->base_url);
	free(cfg->api_key);
	free(cfg->default_model);
	free(cfg->org_id);
	free(cfg->project_id);
	cfg->base_url = cfg->api_key = cfg->default_model = NULL;
	cfg->org_id = cfg->project_id = NULL;
}

void provider_global_init(void)
{
	static int done;

	if (!done) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		done = 1;
	}
}

const char *const provider_names[PROVIDER_KINDS] = { "openai", "anthropic", "local" };

int provider_kind(const char *name)
{
	for (int k = 0; name && k < PROVIDER_KINDS; k++)
		if (!strcmp(name, provider_names[k]))
			return k;
	return -1;
}

struct provider *provider_new(const char *name, struct provider_cfg *cfg)
{
	const struct provider_ops *ops = NULL;
	struct provider *p;
	size_t n;

	provider_global_init();
	if (!strcmp(name, "openai") || !strcmp(name, "local"))
		ops = &provider_openai_ops;
	else if (!strcmp(name, "anthropic"))
		ops = &provider_anthropic_ops;
	if (!ops) {
		cfg_release(cfg);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->ops = ops;
	p->name = xstrdup(name);
	p->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	n = p->cfg.base_url ? strlen(p->cfg.base_url) : 0;
	while (n && p->cfg.base_url[n - 1] == '/')
		p->cfg.base_url[--n] = '\0';
	pthread_mutex_init(&p->loop_lock, NULL);
	return p;
}

void provider_free(struct provider *p)
{
	if (!p)
		return;
	provider_loop_free(p->loop);
	pthread_mutex_destroy(&p->loop_lock);
	cfg_release(&p->cfg);
	free(p->name);
	free(p);
}

static char *env_str(const char *name, const char *def)
{
	const char *v = getenv(name);

	return xstrdup(v && *v ? v : def);
}

static char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? xstrdup(v) : NULL;
}

/* "max_tokens", "max_completion_tokens", else auto (an unknown value too, with a warning). */
static enum provider_token_param token_param_from_env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v || !strcmp(v, "auto"))
		return PROVIDER_TOKENS_AUTO;
	if (!strcmp(v, "max_tokens"))
		return PROVIDER_TOKENS_MAX_TOKENS;
	if (!strcmp(v, "max_completion_tokens"))
		return PROVIDER_TOKENS_MAX_COMPLETION_TOKENS;
	logline("warning", "%s='%s' is not auto, max_tokens or max_completion_tokens;"
		" using auto", name, v);
	return PROVIDER_TOKENS_AUTO;
}

/* Model families that refuse max_tokens (OpenAI's reasoning models and their successors). */
static int needs_completion_tokens(const char *model)
{
	static const char *const families[] = { "gpt-5", "gpt-4.1", "gpt-4.5", "codex" };
	const char *slash = strrchr(model, '/');

	if (slash)
		model = slash + 1;      /* a gateway's "openai/o3" */
	if (model[0] == 'o' && model[1] >= '1' && model[1] <= '9')
		return 1;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strncmp(model, families[i], strlen(families[i])))
			return 1;
	return 0;
}

const char *provider_token_param_name(enum provider_token_param mode, const char *base_url,
				      const char *model)
{
	int mct;

	if (mode == PROVIDER_TOKENS_MAX_TOKENS)
		mct = 0;
	else if (mode == PROVIDER_TOKENS_MAX_COMPLETION_TOKENS)
		mct = 1;
	else
		mct = (base_url && !strncmp(base_url, "https://api.openai.com", 22)) ||
		      (model && needs_completion_tokens(model));
	return mct ? "max_completion_tokens" : "max_tokens";
}

static void cfg_from_env(struct provider_cfg *cfg)
{
	provider_cfg_defaults(cfg);
	cfg->timeout_ms = sys_env_long("SMRITI_PROVIDER_TIMEOUT_MS", cfg->timeout_ms, 1, 3600000);
	cfg->connect_timeout_ms = sys_env_long("SMRITI_PROVIDER_CONNECT_TIMEOUT_MS",
					   cfg->connect_timeout_ms, 1, 600000);
	cfg->first_byte_timeout_ms = sys_env_long("SMRITI_PROVIDER_FIRST_BYTE_TIMEOUT_MS",
					      cfg->first_byte_timeout_ms, 1, 3600000);
	cfg->idle_timeout_ms = sys_env_long("SMRITI_PROVIDER_IDLE_TIMEOUT_MS", cfg->idle_timeout_ms,
					1, 3600000);
	cfg->max_retries = (int)sys_env_long("SMRITI_PROVIDER_RETRIES", cfg->max_retries, 0, 10);
	cfg->backoff_ms = sys_env_long("SMRITI_PROVIDER_BACKOFF_MS", cfg->backoff_ms, 0, 60000);
	cfg->retry_after_max_ms = sys_env_long("SMRITI_PROVIDER_RETRY_AFTER_MAX_MS",
					   cfg->retry_after_max_ms, 0, 3600000);
	cfg->max_tokens = (int)sys_env_long("SMRITI_PROVIDER_MAX_TOKENS", cfg->max_tokens, 1,
					1000000);
}

struct provider *provider_from_env(const char *name)
{
	struct provider_cfg cfg;

	cfg_from_env(&cfg);
	if (!strcmp(name, "openai")) {
		cfg.base_url = env_str("OPENAI_BASE_URL", "https://api.openai.com/v1");
		cfg.api_key = xstrdup(getenv("OPENAI_API_KEY"));
		cfg.default_model = env_str("SMRITI_OPENAI_MODEL", "gpt-4o-mini");
		cfg.token_param = token_param_from_env("SMRITI_OPENAI_TOKEN_PARAM");
		cfg.org_id = env_nonempty("OPENAI_ORG_ID");
		cfg.project_id = env_nonempty("OPENAI_PROJECT_ID");
	} else if (!strcmp(name, "anthropic")) {
		cfg.base_url = env_str("ANTHROPIC_BASE_URL", "https://api.anthropic.com");
		cfg.api_key = xstrdup(getenv("ANTHROPIC_API_KEY"));
		cfg.default_model = env_str("SMRITI_ANTHROPIC_MODEL", "claude-sonnet-4-5");
	} else if (!strcmp(name, "local")) {
		cfg.base_url = env_str("SMRITI_LOCAL_BASE_URL", "http://127.0.0.1:11434/v1");
		cfg.api_key = xstrdup(getenv("SMRITI_LOCAL_API_KEY"));
		cfg.default_model = env_str("SMRITI_LOCAL_MODEL", "llama3.2");
		cfg.token_param = token_param_from_env("SMRITI_LOCAL_TOKEN_PARAM");
	} else {
		return NULL;
	}
	if (cfg.api_key && !*cfg.api_key) {
		free(cfg.api_key);
		cfg.api_key = NULL;
	}
	return provider_new(name, &cfg);
}

const char *provider_unusable(const struct provider *p)
{
	if (p->cfg.api_key || !strcmp(p->name, "local"))
		return NULL;
	return !strcmp(p->name, "anthropic") ? "ANTHROPIC_API_KEY is not set" :
					       "OPENAI_API_KEY is not set";
}

enum smr_rc provider_complete(struct provider *p, const struct provider_req *req,
			      struct provider_resp *out, struct smr_err *err)
{
	int64_t t0 = sys_monotonic_us();
	long timeout = req->timeout_ms > 0 ? req->timeout_ms : p->cfg.timeout_ms;
	struct call_request rq;
	json_t *doc = NULL;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	p->ops->request(p, req, 0, &rq);
	rc = call_exchange(p, &rq, timeout, &doc, out, err);
	if (!rc)
		rc = p->ops->parse_reply(p, req, doc, out, err);
	json_decref(doc);
	call_request_release(&rq);
	if (rc)
		provider_resp_release(out);
	else
		out->latency_us = sys_monotonic_us() - t0;
	return rc;
}

const char *provider_name(const struct provider *p)
{
	return p->name;
}

const char *provider_default_model(const struct provider *p)
{
	return p->cfg.default_model;
}

int provider_max_tokens(const struct provider *p)
{
	return p->cfg.max_tokens;
}

long provider_timeout_ms(const struct provider *p)
{
	return p->cfg.timeout_ms;
}
