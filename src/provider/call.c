/*
 * call.c -- the pieces of a provider call that do not depend on how it is
 * driven: request and header handling, the retry policy (call.h), the
 * blocking exchange used for whole replies, and the wording of provider
 * errors.  The transfers themselves run on the provider's loop (loop.c).
 */
#include "provider/call.h"
#include "provider/loop.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ERROR_TEXT_MAX_BYTES 320

void call_reply_release(struct call_reply *r)
{
	buf_release(&r->body);
	free(r->request_id);
	free(r->gave_up);
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	r->should_retry = -1;
}

void call_reply_next_attempt(struct call_reply *r)
{
	buf_reset(&r->body);
	r->status = 0;
	r->retry_after_ms = -1;
	r->should_retry = -1;
	r->json_body = 0;
	free(r->request_id);
	r->request_id = NULL;
}

void call_request_release(struct call_request *r)
{
	for (struct curl_slist *h = r->headers; h; h = h->next)
		memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(r->headers);
	free(r->url);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

char *call_json_strdup(const json_t *v)
{
	return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

/* "retry-after": seconds (possibly fractional) or an HTTP date. */
static long parse_retry_after(const char *v, int is_ms)
{
	char *end;
	double d = strtod(v, &end);
	time_t when;

	if (end != v && (*end == '\0' || *end == ' '))
		return d < 0 ? 0 : (long)(is_ms ? d : d * 1000.0);
	if (is_ms)
		return -1;
	when = curl_getdate(v, NULL);
	if (when < 0)
		return -1;
	when -= time(NULL);
	return when < 0 ? 0 : (long)when * 1000;
}

static void take_header(struct call_reply *r, const char *name, const char *val)
{
	long ms;

	if (!strcasecmp(name, "retry-after-ms")) {
		ms = parse_retry_after(val, 1);
		if (ms >= 0)
			r->retry_after_ms = ms;
	} else if (!strcasecmp(name, "retry-after") && r->retry_after_ms < 0) {
		r->retry_after_ms = parse_retry_after(val, 0);
	} else if (!strcasecmp(name, "x-should-retry")) {
		r->should_retry = !strcasecmp(val, "true") ? 1 :
				  !strcasecmp(val, "false") ? 0 : -1;
	} else if (!strcasecmp(name, "x-request-id") || !strcasecmp(name, "request-id")) {
		free(r->request_id);
		r->request_id = xstrdup(val);
	} else if (!strcasecmp(name, "content-type")) {
		r->json_body = !strncasecmp(val, "application/json", 16);
	}
}

size_t call_on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	size_t n = size * nmemb, k;
	char line[512], *colon, *val, *end;

	if (n >= sizeof(line))
		return n;       /* no header we read is that long */
	memcpy(line, data, n);
	line[n] = '\0';
	if (!strncmp(line, "HTTP/", 5)) {
		/* a new response (after 100 Continue or a redirect): forget the last one's */
		struct call_reply *r = ctx;

		r->retry_after_ms = -1;
		r->should_retry = -1;
		r->json_body = 0;
		return n;
	}
	colon = strchr(line, ':');
	if (!colon)
		return n;
	*colon = '\0';
	val = colon + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	end = val + strlen(val);
	while (end > val && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	k = strlen(line);
	if (k)
		take_header(ctx, line, val);
	return n;
}

static int retryable_status(long status)
{
	return status == 408 || status == 429 || status >= 500;
}

/* The connection could not be made, or dropped (before any reply text, see call.h). */
static int retryable_transport(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_GOT_NOTHING ||
	       cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR || cc == CURLE_PARTIAL_FILE;
}

/* Backoff before retry number n (1-based), with up to 25% jitter taken off. */
static long backoff_ms(const struct provider_cfg *cfg, int n, unsigned *seed)
{
	double d = (double)cfg->backoff_ms;

	for (int i = 1; i < n && d < (double)cfg->backoff_max_ms; i++)
		d *= 2;
	if (d > (double)cfg->backoff_max_ms)
		d = (double)cfg->backoff_max_ms;
	return (long)(d * (1.0 - 0.25 * ((double)rand_r(seed) / RAND_MAX)));
}

long call_http_retry_delay(const struct provider *p, struct call_reply *r, unsigned *seed)
{
	int want = r->should_retry >= 0 ? r->should_retry : retryable_status(r->status);

	if (!want || r->attempts > p->cfg.max_retries)
		return -1;
	if (r->retry_after_ms < 0)
		return backoff_ms(&p->cfg, r->attempts, seed);
	if (r->retry_after_ms > p->cfg.retry_after_max_ms) {
		r->gave_up = xasprintf("not retried: retry-after of %ld ms is over the %ld ms limit",
				       r->retry_after_ms, p->cfg.retry_after_max_ms);
		return -1;
	}
	return r->retry_after_ms;
}

long call_transport_retry_delay(const struct provider *p, CURLcode cc, int attempts,
				unsigned *seed)
{
	if (!retryable_transport(cc) || attempts > p->cfg.max_retries)
		return -1;
	return backoff_ms(&p->cfg, attempts, seed);
}

enum smr_rc call_transport_error(const struct provider *p, CURLcode cc, const char *url,
				 const char *errbuf, long timeout_ms,
				 const struct call_reply *r, struct smr_err *err)
{
	if (cc == CURLE_OPERATION_TIMEDOUT)
		return smr_errf(err, SMR_ETIMEOUT, "%s: no reply within %ld ms", p->name,
				timeout_ms);
	if (cc == CURLE_WRITE_ERROR && r->body.err)
		return smr_errf(err, SMR_EPROVIDER, "%s: reply is larger than %zu bytes",
				p->name, p->cfg.max_reply_bytes);
	return smr_errf(err, SMR_EPROVIDER, "%s: cannot reach %s: %s%s", p->name, url,
			*errbuf ? errbuf : curl_easy_strerror(cc),
			r->attempts > 1 ? " (gave up after retries)" : "");
}

struct curl_slist *call_key_header(struct curl_slist *h, const char *prefix, const char *key)
{
	char *line;

	if (!key)
		return h;
	line = xasprintf("%s%s", prefix, key);
	h = curl_slist_append(h, line);
	memset(line, 0, strlen(line));
	free(line);
	return h;
}

struct curl_slist *call_headers(struct curl_slist *h, int stream)
{
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, stream ? "Accept: text/event-stream" : "Accept: application/json");
	return curl_slist_append(h, "Expect:");
}

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 if malformed. */
static size_t char_len(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];
	size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

	if (k > n || !utf8_valid(s, k))
		return 0;
	return k;
}

char *call_clean_text(const struct provider *p, const char *s, size_t max_bytes)
{
	struct buf b = BUF_INIT(0);
	const char *key = p->cfg.api_key;
	size_t n = strlen(s), keylen = key ? strlen(key) : 0, k;

	for (size_t i = 0; i < n;) {
		if (keylen >= 4 && !strncmp(s + i, key, keylen)) {
			buf_adds(&b, "[redacted]");
			i += keylen;
			continue;
		}
		k = char_len(s + i, n - i);
		if (b.len + (k ? k : 1) > max_bytes) {
			buf_adds(&b, "...");
			break;
		}
		if (!k)
			buf_addch(&b, '?');
		else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			buf_addch(&b, ' ');
		else
			buf_add(&b, s + i, k);
		i += k ? k : 1;
	}
	return buf_detach(&b, NULL);
}

void call_error_detail(const json_t *doc, const char **code, const char **msg)
{
	const json_t *e = json_object_get(doc, "error");

	*code = NULL;
	*msg = NULL;
	if (json_is_object(e)) {
		*code = json_string_value(json_object_get(e, "code"));
		if (!*code)
			*code = json_string_value(json_object_get(e, "type"));
		*msg = json_string_value(json_object_get(e, "message"));
	} else if (json_is_string(e)) {
		*msg = json_string_value(e);
	} else {
		*code = json_string_value(json_object_get(doc, "type"));
		*msg = json_string_value(json_object_get(doc, "message"));
	}
}

enum smr_rc call_http_error(struct provider *p, const struct call_reply *r,
			    struct smr_err *err)
{
	json_t *doc = json_loadb(r->body.ptr, r->body.len, 0, NULL);
	const char *code = NULL, *msg = NULL;
	char *clean, *code_clean;
	char tries[48] = "";

	if (doc)
		call_error_detail(doc, &code, &msg);
	if (!msg)
		msg = r->body.len ? r->body.ptr : "(empty body)";
	clean = call_clean_text(p, msg, ERROR_TEXT_MAX_BYTES);
	code_clean = call_clean_text(p, code ? code : "", 64);
	if (r->attempts > 1)
		snprintf(tries, sizeof(tries), " (after %d attempts)", r->attempts);
	smr_errf(err, SMR_EPROVIDER, "%s: %ld%s%s: %s%s%s%s", p->name, r->status,
		 *code_clean ? " " : "", code_clean, clean, tries,
		 r->gave_up ? "; " : "", r->gave_up ? r->gave_up : "");
	free(clean);
	free(code_clean);
	json_decref(doc);
	return SMR_EPROVIDER;
}

json_t *call_parse_reply(struct provider *p, const struct call_reply *r, struct smr_err *err)
{
	json_error_t jerr;
	json_t *doc = json_loadb(r->body.ptr, r->body.len, 0, &jerr);
	char *why;

	if (json_is_object(doc))
		return doc;
	why = call_clean_text(p, doc ? "not a JSON object" : jerr.text, 120);
	smr_errf(err, SMR_EPROVIDER, "%s: malformed reply (HTTP %ld): %s", p->name, r->status,
		 why);
	free(why);
	json_decref(doc);
	return NULL;
}

enum smr_rc call_exchange(struct provider *p, struct call_request *rq, long timeout_ms,
			  json_t **doc, struct provider_resp *out, struct smr_err *err)
{
	struct call_reply r;
	enum smr_rc rc;

	*doc = NULL;
	rc = loop_post(p, rq, timeout_ms, &r, err);
	out->attempts = r.attempts;
	out->waited_ms = r.waited_ms;
	out->http_us = r.http_us;
	if (!rc && (r.status < 200 || r.status > 299))
		rc = call_http_error(p, &r, err);
	if (!rc)
		*doc = call_parse_reply(p, &r, err);
	if (!rc && !*doc)
		rc = SMR_EPROVIDER;
	if (!rc)
		out->request_id = xstrdup(r.request_id);
	call_reply_release(&r);
	return rc;
}
