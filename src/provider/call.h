/*
 * call.h -- what the provider backends and the loop share: the request a
 * backend builds, the reply headers Smriti reads, the retry policy and the
 * wording of provider errors.
 *
 * Retry policy (the official SDKs' rules): an attempt that ends in 408, 429
 * or any 5xx (Anthropic's 529 included), or whose connection could not be
 * made or dropped, is retried up to cfg.max_retries times.
 * `x-should-retry: true|false` overrides the status.  The wait is
 * `retry-after-ms`, else `retry-after` (seconds or an HTTP date), else
 * exponential backoff from cfg.backoff_ms doubling up to cfg.backoff_max_ms,
 * less up to 25% jitter.  A retry-after
 * longer than cfg.retry_after_max_ms means no retry.  Timeouts are not
 * retried: the user is already waiting for the whole timeout.  A streamed
 * call is never retried once text reached its caller: the text would come
 * twice.
 *
 * Internal to src/provider.
 */
#ifndef SMRITI_PROVIDER_CALL_H
#define SMRITI_PROVIDER_CALL_H

#include <curl/curl.h>

#include "provider/provider_int.h"
#include "util/buf.h"

struct call_reply {
	long status;                /* HTTP status of the last attempt */
	struct buf body;            /* its body, capped at cfg.max_reply_bytes */
	char *request_id;           /* x-request-id or request-id header, or NULL */
	long retry_after_ms;        /* from the headers; -1 when absent */
	int should_retry;           /* x-should-retry: -1 absent, 0 false, 1 true */
	int json_body;              /* Content-Type: application/json */
	int attempts;
	int64_t waited_ms;
	int64_t http_us;            /* time in attempts and waits: the provider's share */
	char *gave_up;              /* why a retryable failure was not retried, or NULL */
};

void call_reply_release(struct call_reply *r);

/* Forgets the last attempt's status, headers and body (for the next attempt). */
void call_reply_next_attempt(struct call_reply *r);

/* A backend's HTTP request; all owned, released with call_request_release. */
struct call_request {
	char *url;
	char *body;                 /* JSON */
	struct curl_slist *headers; /* the backend's own: key, version */
};

/* Frees r's parts, wiping the header lines first (they hold the key). */
void call_request_release(struct call_request *r);

/* h plus the header "<prefix><key>" (none when key is NULL), leaving no copy of the key behind. */
struct curl_slist *call_key_header(struct curl_slist *h, const char *prefix, const char *key);

/* h plus the headers every request carries (stream: it accepts server-sent events). */
struct curl_slist *call_headers(struct curl_slist *h, int stream);

/* CURLOPT_HEADERFUNCTION for a struct call_reply. */
size_t call_on_header(char *data, size_t size, size_t nmemb, void *reply);

/*
 * Wait before retrying an attempt that got this non-2xx reply (r->attempts
 * made so far), or -1 for no retry, with r->gave_up saying why when a
 * retry-after was too long.  seed feeds the jitter.
 */
long call_http_retry_delay(const struct provider *p, struct call_reply *r, unsigned *seed);

/* Wait before retrying an attempt that failed with cc, or -1 for no retry. */
long call_transport_retry_delay(const struct provider *p, CURLcode cc, int attempts,
				unsigned *seed);

/*
 * The error for an attempt that got no HTTP reply: SMR_ETIMEOUT for a
 * timeout, else SMR_EPROVIDER naming the URL and libcurl's reason.
 */
enum smr_rc call_transport_error(const struct provider *p, CURLcode cc, const char *url,
				 const char *errbuf, long timeout_ms,
				 const struct call_reply *r, struct smr_err *err);

/* The provider's code (error.code, else error.type) and message from an error document. */
void call_error_detail(const json_t *doc, const char **code, const char **msg);

/*
 * Formats a non-2xx reply as "<name>: <status> <code>: <message>" (the
 * provider's error.code or error.type and error.message), with the key
 * redacted and the text cut to a safe length.  Returns SMR_EPROVIDER.
 */
enum smr_rc call_http_error(struct provider *p, const struct call_reply *r,
			    struct smr_err *err);

/*
 * The whole exchange of a non-streamed call: the POST (loop_post, taking
 * rq's contents), then a non-2xx status as a provider error, then the body
 * parsed.  Fills out's attempts, waits, HTTP time and request id.  On
 * success *doc is the reply object (a new reference the caller
 * json_decref()s).
 */
enum smr_rc call_exchange(struct provider *p, struct call_request *rq, long timeout_ms,
			  json_t **doc, struct provider_resp *out, struct smr_err *err);

/* Parses the reply body; NULL with SMR_EPROVIDER in err when it is not a JSON object. */
json_t *call_parse_reply(struct provider *p, const struct call_reply *r, struct smr_err *err);

/*
 * Provider text made safe to show: at most max_bytes (cut at a character
 * boundary, "..." marks the cut), control characters as spaces, malformed
 * UTF-8 as '?', the key redacted.  Caller free()s.
 */
char *call_clean_text(const struct provider *p, const char *s, size_t max_bytes);

/* Sets a string member or leaves NULL; for parsing replies. */
char *call_json_strdup(const json_t *v);

#endif
