/*
 * call.c -- one JSON POST to a provider with timeouts, a capped reply and
 * retries (see call.h for the policy), and the formatting of provider
 * errors into Smriti's messages.
 */
#include "provider/call.h"
#include "util/sys.h"
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

char *call_json_strdup(const json_t *v)
{
	return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct buf *b = ctx;

	buf_add(b, data, size * nmemb);
	return b->err ? 0 : size * nmemb;
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
	}
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
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

static CURLcode attempt(struct provider *p, const char *url, const struct curl_slist *hdrs,
			const char *body, long timeout_ms, struct call_reply *r, char *errbuf)
{
	CURL *c = curl_easy_init();
	CURLcode cc;

	if (!c)
		return CURLE_FAILED_INIT;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SHARE, (CURLSH *)p->share);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, p->cfg.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "smriti/0.1");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	errbuf[0] = '\0';
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(c);
	return cc;
}

static int retryable_status(long status)
{
	return status == 408 || status == 429 || status >= 500;
}

static int retryable_transport(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_GOT_NOTHING ||
	       cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR;
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

/* Wait before retrying this HTTP reply, or -1 for no retry (r->gave_up may say why). */
static long http_retry_delay(const struct provider *p, struct call_reply *r, unsigned *seed)
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

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void start_attempt(struct call_reply *r)
{
	buf_reset(&r->body);
	r->status = 0;
	r->retry_after_ms = -1;
	r->should_retry = -1;
	free(r->request_id);
	r->request_id = NULL;
	r->attempts++;
}

static enum smr_rc transport_error(struct provider *p, CURLcode cc, const char *url,
				   const char *errbuf, long timeout_ms, struct call_reply *r,
				   struct smr_err *err)
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

static struct curl_slist *all_headers(const struct curl_slist *extra)
{
	struct curl_slist *h = NULL;

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	h = curl_slist_append(h, "Expect:");
	for (; extra; extra = extra->next)
		h = curl_slist_append(h, extra->data);
	return h;
}

enum smr_rc call_post_json(struct provider *p, const char *url,
			   const struct curl_slist *headers, const char *body,
			   long timeout_ms, struct call_reply *out, struct smr_err *err)
{
	struct curl_slist *h = all_headers(headers);
	unsigned seed = (unsigned)sys_monotonic_us() ^ (unsigned)(uintptr_t)out;
	char errbuf[CURL_ERROR_SIZE];
	CURLcode cc;
	enum smr_rc rc = SMR_OK;
	int64_t t0;
	long delay;

	memset(out, 0, sizeof(*out));
	out->body = (struct buf)BUF_INIT(p->cfg.max_reply_bytes);
	for (;;) {
		start_attempt(out);
		t0 = sys_monotonic_us();
		cc = attempt(p, url, h, body, timeout_ms, out, errbuf);
		out->http_us += sys_monotonic_us() - t0;
		if (cc == CURLE_OK)
			delay = out->status >= 200 && out->status < 300 ? -1 :
				http_retry_delay(p, out, &seed);
		else if (retryable_transport(cc) && out->attempts <= p->cfg.max_retries)
			delay = backoff_ms(&p->cfg, out->attempts, &seed);
		else
			delay = -1;
		if (delay < 0) {
			if (cc != CURLE_OK)
				rc = transport_error(p, cc, url, errbuf, timeout_ms, out, err);
			break;
		}
		sleep_ms(delay);
		out->waited_ms += delay;
		out->http_us += delay * 1000;
	}
	curl_slist_free_all(h);
	return rc;
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

/* The provider's code (error.code, else error.type) and message from an error body. */
static void error_detail(const json_t *doc, const char **code, const char **msg)
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
		error_detail(doc, &code, &msg);
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

enum smr_rc call_exchange(struct provider *p, const char *url, const struct curl_slist *headers,
			  const char *body, long timeout_ms, json_t **doc,
			  struct provider_resp *out, struct smr_err *err)
{
	struct call_reply r;
	enum smr_rc rc;

	*doc = NULL;
	rc = call_post_json(p, url, headers, body, timeout_ms, &r, err);
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
