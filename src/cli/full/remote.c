/*
 * remote.c -- run a CLI operation on a Smriti server instead of the local
 * store: POST {params} to {SMRITI_URL}/api/ops/{op} and map the server's
 * {"error":{"code","message"}} back onto the same result codes, so exit
 * codes and messages match a local run.
 */
#include "cli/cli.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#define REMOTE_MAX_RESPONSE (64u << 20)

static size_t collect(char *data, size_t size, size_t n, void *ctx)
{
	struct buf *b = ctx;

	buf_add(b, data, size * n);
	return b->err ? 0 : size * n;
}

static enum smr_rc rc_from_name(const char *name)
{
	static const enum smr_rc all[] = {
		SMR_EINTERNAL, SMR_EUSAGE, SMR_EINVAL, SMR_EUNPROC, SMR_ENOTFOUND,
		SMR_ECONFLICT, SMR_ETOOBIG, SMR_EPROVIDER, SMR_ETIMEOUT, SMR_EUNAVAIL,
		SMR_EUNAUTH, SMR_EFORBIDDEN,
	};

	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(name, smr_rc_name(all[i])))
			return all[i];
	return SMR_EINTERNAL;
}

static enum smr_rc decode(long status, const struct buf *body, json_t **result,
			  struct smr_err *err)
{
	json_t *doc = json_loadb(body->ptr, body->len, JSON_DECODE_ANY, NULL);
	json_t *e = json_object_get(doc, "error");
	enum smr_rc rc;

	if (!doc)
		return smr_errf(err, SMR_EINTERNAL,
				"server answered HTTP %ld with a body that is not JSON", status);
	if (status >= 200 && status < 300 && !e) {
		*result = json_incref(json_object_get(doc, "result"));
		json_decref(doc);
		if (!*result)
			return smr_errf(err, SMR_EINTERNAL, "server answer has no 'result'");
		return SMR_OK;
	}
	rc = rc_from_name(json_string_value(json_object_get(e, "code")));
	smr_errf(err, rc, "%s", json_string_value(json_object_get(e, "message")) ?
		 json_string_value(json_object_get(e, "message")) : "server error");
	/* details beside the error (a merge's conflicts) come back as the result, as locally */
	if (json_is_object(doc) && json_object_size(doc) > 1) {
		json_object_del(doc, "error");
		*result = json_incref(doc);
	}
	json_decref(doc);
	return rc;
}

enum smr_rc cli_remote_call(struct cli_ctx *ctx, const char *op, const json_t *params,
			    json_t **result, struct smr_err *err)
{
	struct buf body = BUF_INIT(REMOTE_MAX_RESPONSE);
	struct curl_slist *hdrs = NULL;
	char *url, *payload, *auth = NULL;
	size_t base_len = strlen(ctx->remote);
	long status = 0;
	CURLcode cc;
	CURL *h;
	enum smr_rc rc;

	while (base_len && ctx->remote[base_len - 1] == '/')
		base_len--;
	url = xasprintf("%.*s/api/ops/%s", (int)base_len, ctx->remote, op);
	/* no params is {}: a NULL body would make libcurl read the body from stdin */
	payload = params ? json_dumps(params, JSON_COMPACT) : xstrdup("{}");
	if (!payload)
		BUG("cannot serialise the params of '%s'", op);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	if (ctx->token) {
		auth = xasprintf("Authorization: Bearer %s", ctx->token);
		hdrs = curl_slist_append(hdrs, auth);
	}
	h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 600L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (cc != CURLE_OK)
		rc = smr_errf(err, SMR_EUNAVAIL, "cannot reach server %s: %s", ctx->remote,
			      curl_easy_strerror(cc));
	else
		rc = decode(status, &body, result, err);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	free(auth);
	free(payload);
	free(url);
	buf_release(&body);
	return rc;
}
