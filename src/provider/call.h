/*
 * call.h -- what the provider backends share: one JSON POST over libcurl
 * with timeouts, a capped reply, and retries with backoff.
 *
 * Retry policy (the official SDKs' rules): an attempt that ends in 408, 429
 * or any 5xx (Anthropic's 529 included), or that could not connect, is
 * retried up to cfg.max_retries times.  `x-should-retry: true|false`
 * overrides the status.  The wait is `retry-after-ms`, else `retry-after`
 * (seconds or an HTTP date), else exponential backoff from cfg.backoff_ms
 * doubling up to cfg.backoff_max_ms, less up to 25% jitter.  A retry-after
 * longer than cfg.retry_after_max_ms means no retry.  Timeouts are not
 * retried: the user is already waiting for the whole timeout.
 *
 * Internal to src/provider.
 */
#ifndef SMRITI_PROVIDER_CALL_H
#define SMRITI_PROVIDER_CALL_H

#include <curl/curl.h>

#include "provider/provider.h"
#include "util/buf.h"

struct call_reply {
	long status;                /* HTTP status of the last attempt */
	struct buf body;            /* its body, capped at cfg.max_reply_bytes */
	char *request_id;           /* x-request-id or request-id header, or NULL */
	long retry_after_ms;        /* from the headers; -1 when absent */
	int should_retry;           /* x-should-retry: -1 absent, 0 false, 1 true */
	int attempts;
	int64_t waited_ms;
	int64_t http_us;            /* time in attempts and waits: the provider's share */
	char *gave_up;              /* why a retryable failure was not retried, or NULL */
};

void call_reply_release(struct call_reply *r);

/*
 * POSTs the JSON body to url with extra headers (Content-Type is added),
 * retrying as described above.  SMR_OK once an HTTP reply arrived, whatever
 * its status (the caller formats provider errors with call_http_error);
 * SMR_ETIMEOUT or SMR_EPROVIDER when no reply could be had.  out is
 * overwritten; release it either way.
 */
enum smr_rc call_post_json(struct provider *p, const char *url,
			   const struct curl_slist *headers, const char *body,
			   long timeout_ms, struct call_reply *out, struct smr_err *err);

/*
 * Formats a non-2xx reply as "<name>: <status> <code>: <message>" (the
 * provider's error.code or error.type and error.message), with the key
 * redacted and the text cut to a safe length.  Returns SMR_EPROVIDER.
 */
enum smr_rc call_http_error(struct provider *p, const struct call_reply *r,
			    struct smr_err *err);

/*
 * The whole exchange every backend makes: call_post_json, then a non-2xx
 * status as a provider error, then the body parsed.  Fills out's attempts,
 * waits, HTTP time and request id.  On success *doc is the reply object (a
 * new reference the caller json_decref()s).
 */
enum smr_rc call_exchange(struct provider *p, const char *url, const struct curl_slist *headers,
			  const char *body, long timeout_ms, json_t **doc,
			  struct provider_resp *out, struct smr_err *err);

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
