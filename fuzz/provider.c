/*
 * provider.c -- fuzz target: whole (non-streamed) provider replies and
 * error replies, OpenAI and Anthropic wire formats (provider/openai.c,
 * anthropic.c, call.c).  The first byte picks the wire format, whether a
 * JSON schema was asked for, and the HTTP status class; the rest is the
 * body.  Properties: a failure is SMR_EPROVIDER with a message that is
 * valid UTF-8, has no control characters and never shows the API key; a
 * success with a schema has its JSON.
 */
#include "fuzz.h"

#include "provider/call.h"
#include "util/utf8.h"

#include <jansson.h>

#define KEY "sk-fuzz-secret-key-0123456789"

static struct provider *providers[2];
static json_t *schema;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[] = { "openai", "anthropic" };

	(void)argc;
	(void)argv;
	provider_global_init();
	for (int i = 0; i < 2; i++) {
		struct provider_cfg cfg;

		provider_cfg_defaults(&cfg);
		cfg.api_key = strdup(KEY);
		providers[i] = provider_new(names[i], &cfg);
		FUZZ_CHECK(providers[i]);
	}
	schema = json_pack("{s:s, s:{s:{s:s}}}", "type", "object", "properties", "title",
			   "type", "string");
	return 0;
}

static void check_message(const struct smr_err *err)
{
	FUZZ_CHECK(err->msg[0]);
	FUZZ_CHECK(utf8_valid(err->msg, strlen(err->msg)));
	FUZZ_CHECK(!strstr(err->msg, KEY));
	for (const char *p = err->msg; *p; p++)
		FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long statuses[] = { 200, 200, 400, 401, 404, 429, 500, 529 };
	struct smr_err err = SMR_ERR_INIT;
	struct provider_msg msg = { "user", "hi" };
	struct provider_req req = { 0 };
	struct provider_resp resp = { 0 };
	struct call_reply r = { 0 };
	struct provider *p;
	json_t *doc;
	enum smr_rc rc;

	if (!size)
		return 0;
	p = providers[data[0] & 1];
	req.msgs = &msg;
	req.n_msgs = 1;
	req.temperature = -1;
	req.schema = data[0] & 2 ? schema : NULL;
	r.status = statuses[(data[0] >> 2) & 7];
	r.body = (struct buf)BUF_INIT(0);
	buf_add(&r.body, data + 1, size - 1);
	r.retry_after_ms = -1;
	r.should_retry = -1;
	resp.prompt_tokens = resp.completion_tokens = -1;
	if (r.status != 200) {
		FUZZ_CHECK(call_http_error(p, &r, &err) == SMR_EPROVIDER);
		check_message(&err);
		goto out;
	}
	doc = call_parse_reply(p, &r, &err);
	if (!doc) {
		FUZZ_CHECK(err.code == SMR_EPROVIDER);
		check_message(&err);
		goto out;
	}
	rc = p->ops->parse_reply(p, &req, doc, &resp, &err);
	if (rc) {
		FUZZ_CHECK(rc == SMR_EPROVIDER || rc == SMR_EUNPROC);
		check_message(&err);
	} else {
		FUZZ_CHECK(resp.text);
		FUZZ_CHECK(!req.schema || resp.json);
	}
	json_decref(doc);
out:
	provider_resp_release(&resp);
	call_reply_release(&r);
	return 0;
}
