/*
 * http.c -- fuzz target: what the HTTP server reads from a request before
 * any operation runs (src/http): the router over every route's pattern,
 * and the guards on Host, Origin, Authorization, Cookie and Content-Type.
 * The input is NUL-separated fields: method, path, then one value per
 * guard.  Properties: a route found matches the method and its {x} segment
 * fits (NUL-terminated, shorter than HTTP_ARG_MAX); a miss is 404, 405
 * (with Allow naming methods) or 414; no guard admits a wrong token or
 * cookie, or a Host that is not ours.
 */
#include "fuzz.h"

#include "http/internal.h"

#include <strings.h>

static struct http_guard guard;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	http_guard_init(&guard, "127.0.0.1", 7411, "smriti.test, other:9000", "s3cret-token");
	return 0;
}

/* The next NUL-terminated field of the input, or "" past its end. */
static const char *field(char **p, const char *end)
{
	char *s = *p;

	if (s >= end)
		return "";
	*p = s + strlen(s) + 1;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *p = text, *end = text + size;
	const char *method = field(&p, end), *path = field(&p, end);
	const char *host = field(&p, end), *origin = field(&p, end);
	const char *auth = field(&p, end), *cookie = field(&p, end);
	const char *type = field(&p, end);
	char arg[HTTP_ARG_MAX], allow[64];
	int status = 0;
	const struct http_route *r;

	r = http_route_find(method, path, arg, &status, allow);
	if (r) {
		FUZZ_CHECK(!strcmp(r->method, method) ||
			   (!strcmp(method, "HEAD") && !strcmp(r->method, "GET")));
		FUZZ_CHECK(memchr(arg, '\0', sizeof(arg)));
	} else {
		FUZZ_CHECK(status == 404 || status == 405 || status == 414);
		FUZZ_CHECK(memchr(allow, '\0', sizeof(allow)));
		FUZZ_CHECK(status != 405 || allow[0]);
	}
	if (http_guard_host(&guard, host))
		FUZZ_CHECK(!strncasecmp(host, "localhost:", 10) || !strncasecmp(host, "127.0.0.1:", 10) ||
			   !strncasecmp(host, "[::1]:", 6) || !strncasecmp(host, "smriti.test:", 12) ||
			   !strcasecmp(host, "other:9000"));
	(void)http_guard_origin(&guard, origin);
	if (http_guard_token(&guard, auth))
		FUZZ_CHECK(strstr(auth, "s3cret-token"));
	if (http_guard_cookie(&guard, cookie))
		FUZZ_CHECK(strstr(cookie, "smriti_auth="));
	(void)http_json_type(*type ? type : NULL);
	free(text);
	return 0;
}
