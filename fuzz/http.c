/*
 * http.c -- fuzz target: what the HTTP server reads from a request before
 * any operation runs (src/http): the router over every route's pattern,
 * the guards on Host, Origin, Authorization, Cookie and Content-Type, and
 * the strict reading of a request (issue 25): the one decoding of a path or
 * query text (http_unescape, http_target_clean) and the check of a header
 * line (http_header_problem).  The input is NUL-separated fields: method,
 * path, then one value per guard, then a header name and value.
 * Properties: a route found matches the method and its {x} segment fits
 * (NUL-terminated, shorter than HTTP_ARG_MAX); a miss is 404, 405 (with
 * Allow naming methods) or 414; no guard admits a wrong token or cookie,
 * or a Host that is not ours; a decoded text has no control byte and is
 * what a plain %XX decoder makes of it, a refused one is left as it came;
 * a header admitted has a token for a name and no control byte but a tab
 * in its value.
 */
#include "fuzz.h"

#include "http/http_int.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static struct http_guard guard;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	http_guard_init(&guard, "127.0.0.1", 7411, "smriti.test, other:9000", "s3cret-token");
	return 0;
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* The decoding properties of http_unescape on s (a copy is decoded). */
static void check_unescape(const char *s)
{
	char *d = strdup(s);
	int bad = 0;
	size_t n = http_unescape(d, &bad), j = 0;

	FUZZ_CHECK(n == strlen(d));
	if (bad) {
		FUZZ_CHECK(!strcmp(d, s));
		free(d);
		return;
	}
	for (size_t i = 0; s[i]; i++, j++) {
		int ch = (unsigned char)s[i];

		FUZZ_CHECK(ch >= 0x20 && ch != 0x7f);
		if (ch == '%') {
			FUZZ_CHECK(isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2]));
			ch = hexval(s[i + 1]) << 4 | hexval(s[i + 2]);
			i += 2;
		}
		FUZZ_CHECK((unsigned char)d[j] == ch && ch >= 0x20 && ch != 0x7f);
	}
	FUZZ_CHECK(j == n);
	free(d);
}

/* A header admitted by http_header_problem is a token name and a value without controls. */
static void check_header(const char *name, const char *value)
{
	if (http_header_problem(name, strlen(name), value, strlen(value)))
		return;
	FUZZ_CHECK(*name);
	for (const char *p = name; *p; p++)
		FUZZ_CHECK(isalnum((unsigned char)*p) || strchr("!#$%&'*+-.^_`|~", *p));
	for (const unsigned char *p = (const unsigned char *)value; *p; p++)
		FUZZ_CHECK(*p == '\t' || (*p >= 0x20 && *p != 0x7f));
	if (http_header_single(name) >= 0)
		FUZZ_CHECK(http_header_single(name) < HTTP_SINGLE_HEADERS);
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
	const char *hname = field(&p, end), *hvalue = field(&p, end);
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
	if (http_target_clean(path))
		for (const unsigned char *q = (const unsigned char *)path; *q; q++)
			FUZZ_CHECK(*q > 0x20 && *q != 0x7f);
	check_unescape(path);
	check_unescape(origin);
	check_header(hname, hvalue);
	free(text);
	return 0;
}
