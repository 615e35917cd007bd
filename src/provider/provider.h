/*
 * provider.h -- the LLM provider port: one small ops table per wire format.
 *
 * Like curl's TLS backends, each backend (openai.c, anthropic.c) fills a
 * struct provider_ops.  A struct provider is a long-lived handle (name,
 * base URL, key, timeouts, retry policy, and the event loop its calls run
 * on) created once and used by any number of threads at a time; each call
 * takes a caller-owned struct provider_req (libuv's split between handles
 * and requests).
 *
 * Names: "openai" (Chat Completions at OPENAI_BASE_URL), "anthropic"
 * (Messages at ANTHROPIC_BASE_URL) and "local", any OpenAI-compatible
 * server (Ollama, llama.cpp, vLLM) at SMRITI_LOCAL_BASE_URL.
 *
 * Two ways to call: provider_stream_start() (loop.h) streams a reply through
 * callbacks, and provider_complete() below waits for a whole one (drafts
 * and the review pass, which want JSON).  Both run on the provider's loop.
 * The key is sent in a header and nowhere else: it is never logged, stored,
 * or put in an error message (a provider message that echoes it is
 * redacted).
 */
#ifndef SMRITI_PROVIDER_H
#define SMRITI_PROVIDER_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct provider_msg {
	const char *role;       /* "user" | "assistant" ("system" is moved to the system text) */
	const char *content;
};

struct provider_req {
	const char *model;                  /* required */
	const char *system;                 /* system text, NULL or "" for none */
	const struct provider_msg *msgs;    /* oldest first; the last should be the user's */
	size_t n_msgs;
	int max_tokens;                     /* <= 0: the provider's configured default */
	double temperature;                 /* < 0: not sent (the server's default) */
	long timeout_ms;                    /* per attempt; <= 0: the provider's default */
	/*
	 * Ask for JSON matching a schema (optional).  OpenAI and local servers
	 * get response_format {type: json_schema, json_schema: {name, schema,
	 * strict}}; Anthropic gets one tool with this input_schema and a
	 * tool_choice forcing it.  The reply then comes back in resp->json.
	 */
	const json_t *schema;               /* a JSON Schema object, or NULL */
	const char *schema_name;            /* [a-zA-Z0-9_-]{1,64}; NULL: "output" */
	const char *schema_description;     /* may be NULL */
	int schema_strict;                  /* OpenAI "strict": true */
};

struct provider_resp {
	char *text;                 /* reply text; with a schema, the JSON text */
	json_t *json;               /* with a schema: the parsed output (new reference) */
	char *finish_reason;        /* "stop", "end_turn", "length", "tool_use", ... or NULL */
	char *request_id;           /* x-request-id / request-id, or NULL */
	char *model;                /* the model that answered, as reported */
	int64_t prompt_tokens;      /* -1 when not reported */
	int64_t completion_tokens;  /* -1 when not reported */
	int64_t latency_us;         /* the whole call, retries and waits included */
	int64_t http_us;            /* of which in HTTP exchanges and waits between them */
	int attempts;               /* HTTP requests made (1 + retries) */
	int64_t waited_ms;          /* time spent waiting between attempts */
};

void provider_resp_release(struct provider_resp *r);

struct provider_usage {
	int64_t prompt_tokens;      /* -1 when not reported */
	int64_t completion_tokens;  /* -1 when not reported */
};

/* How a streamed reply ended. */
enum provider_end {
	PROVIDER_END_COMPLETE,      /* the model finished (stop, end_turn, ...) */
	PROVIDER_END_TRUNCATED,     /* cut by the token limit (length, max_tokens) */
	PROVIDER_END_STOPPED,       /* provider_stream_cancel(): Stop was pressed */
	PROVIDER_END_ERROR,         /* the call failed; the outcome's err says why */
	PROVIDER_END_INTERRUPTED,   /* the provider was freed while the call ran */
};

/*
 * Chat Completions' reply cap: "max_tokens" (deprecated by OpenAI, the only
 * name Ollama reads) or "max_completion_tokens" (what OpenAI's reasoning
 * models require).  AUTO: max_completion_tokens to api.openai.com, and
 * elsewhere (gateways, Azure, local servers) for the model families that
 * require it (o1, o3, o4..., gpt-5, gpt-4.1, gpt-4.5, codex), max_tokens for
 * the rest.
 */
enum provider_token_param {
	PROVIDER_TOKENS_AUTO,
	PROVIDER_TOKENS_MAX_TOKENS,
	PROVIDER_TOKENS_MAX_COMPLETION_TOKENS,
};

/* The name the reply cap goes out as for model on a provider at base_url (see above). */
const char *provider_token_param_name(enum provider_token_param mode, const char *base_url,
				      const char *model);

/* Connection, timeout and retry settings of one provider; strings owned. */
struct provider_cfg {
	char *base_url;             /* no trailing slash; OpenAI's includes /v1 */
	char *api_key;              /* NULL: none sent (allowed for "local") */
	char *default_model;
	int max_tokens;             /* default reply cap (1024) */
	long connect_timeout_ms;    /* 10 s */
	long timeout_ms;            /* per attempt, 120 s; SMRITI_PROVIDER_TIMEOUT_MS */
	long first_byte_timeout_ms; /* streams: request to first reply byte, 60 s */
	long idle_timeout_ms;       /* streams: longest silence between chunks, 60 s */
	int max_retries;            /* 2 */
	long backoff_ms;            /* first backoff (500 ms), doubling, with jitter */
	long backoff_max_ms;        /* 8 s */
	long retry_after_max_ms;    /* a longer retry-after means no retry (60 s) */
	size_t max_reply_bytes;     /* 8 MiB */
	/* which name the reply cap goes out as (openai.c); SMRITI_{OPENAI,LOCAL}_TOKEN_PARAM */
	enum provider_token_param token_param;
	char *org_id;               /* OPENAI_ORG_ID: OpenAI-Organization header, or NULL */
	char *project_id;           /* OPENAI_PROJECT_ID: OpenAI-Project header, or NULL */
};

struct provider;

/*
 * Initialises the HTTP client library once per process.  Not thread-safe:
 * call it (or provider_from_env, which calls it) before starting threads.
 */
void provider_global_init(void);

/* Defaults for every field of cfg (strings NULL). */
void provider_cfg_defaults(struct provider_cfg *cfg);

/* The kinds of provider Smriti speaks, by name: the one list the layers above read. */
#define PROVIDER_KINDS 3
extern const char *const provider_names[PROVIDER_KINDS];

/* The index of name in provider_names, or -1 for an unknown name. */
int provider_kind(const char *name);

/*
 * A provider handle for name ("openai", "anthropic", "local") taking
 * ownership of cfg's strings; NULL for an unknown name.  Caller
 * provider_free()s.  The first call must come before other threads start
 * (it initialises libcurl; see provider_global_init).
 */
struct provider *provider_new(const char *name, struct provider_cfg *cfg);

/*
 * Stops the provider's loop, ending any call still running with
 * PROVIDER_END_INTERRUPTED (its on_error runs first), and frees p.  Not from
 * a stream callback.
 */
void provider_free(struct provider *p);

/*
 * Settings for name from the environment: OPENAI_API_KEY / OPENAI_BASE_URL /
 * SMRITI_OPENAI_MODEL, ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL /
 * SMRITI_ANTHROPIC_MODEL, SMRITI_LOCAL_BASE_URL / SMRITI_LOCAL_API_KEY /
 * SMRITI_LOCAL_MODEL, OPENAI_ORG_ID / OPENAI_PROJECT_ID (openai only),
 * SMRITI_OPENAI_TOKEN_PARAM / SMRITI_LOCAL_TOKEN_PARAM ("auto",
 * "max_tokens", "max_completion_tokens"), and for all SMRITI_PROVIDER_TIMEOUT_MS,
 * SMRITI_PROVIDER_CONNECT_TIMEOUT_MS, SMRITI_PROVIDER_RETRIES,
 * SMRITI_PROVIDER_BACKOFF_MS, SMRITI_PROVIDER_MAX_TOKENS.  Returns NULL for
 * an unknown name.  Caller provider_free()s.
 */
struct provider *provider_from_env(const char *name);

/* The handle's name ("openai", "anthropic", "local"); borrowed, valid while p lives. */
const char *provider_name(const struct provider *p);
/* The model used when a request names none; borrowed. */
const char *provider_default_model(const struct provider *p);
/* The configured reply cap (SMRITI_PROVIDER_MAX_TOKENS) and per-attempt timeout. */
int provider_max_tokens(const struct provider *p);
long provider_timeout_ms(const struct provider *p);

/* Short reason the provider cannot be called (no key), or NULL when it can. */
const char *provider_unusable(const struct provider *p);

/*
 * One whole (non-streamed) completion, waiting for it on the caller's
 * thread.  On success fills out (caller releases it).  On failure returns
 * SMR_EPROVIDER (HTTP error, malformed reply, refused connection) or
 * SMR_ETIMEOUT, with the provider's own message in err, e.g.
 * "openai: 429 rate_limit_exceeded: Rate limit reached ...".
 */
enum smr_rc provider_complete(struct provider *p, const struct provider_req *req,
			      struct provider_resp *out, struct smr_err *err);

#endif
