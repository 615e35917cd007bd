/*
 * router.c -- matching a request's method and path against http_routes[].
 *
 * Patterns are literal segments and {name} placeholders, each of which
 * matches exactly one non-empty segment; a route has at most one
 * placeholder.  The table is small, so a linear scan is all it needs.
 */
#include "http/http_int.h"

#include <string.h>

/*
 * 1 if path matches pattern; the placeholder's text goes to arg.  *toolong
 * is set when it matched but the segment does not fit.
 */
static int match(const char *pattern, const char *path, char arg[HTTP_ARG_MAX], int *toolong)
{
	const char *p = pattern, *s = path;

	while (*p && *s) {
		if (*p == '{') {
			size_t n = strcspn(s, "/");

			if (!n)
				return 0;
			if (n >= HTTP_ARG_MAX) {
				*toolong = 1;
			} else {
				memcpy(arg, s, n);
				arg[n] = '\0';
			}
			s += n;
			p = strchr(p, '}') + 1;
			continue;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	return !*p && !*s;
}

/* HEAD is answered by the GET route (MHD sends no body for it). */
static int same_method(const char *route, const char *method)
{
	if (!strcmp(route, method))
		return 1;
	return !strcmp(method, "HEAD") && !strcmp(route, "GET");
}

static void add_allow(char allow[64], const char *method)
{
	size_t n = strlen(allow);

	if (strstr(allow, method))
		return;
	if (n + strlen(method) + 3 >= 64)
		return;
	if (n) {
		allow[n++] = ',';
		allow[n++] = ' ';
	}
	memcpy(allow + n, method, strlen(method) + 1);
}

const struct http_route *http_route_find(const char *method, const char *path,
					 char arg[HTTP_ARG_MAX], int *status, char allow[64])
{
	int toolong = 0, path_seen = 0;

	allow[0] = '\0';
	for (const struct http_route *r = http_routes; r->method; r++) {
		if (!match(r->pattern, path, arg, &toolong))
			continue;
		if (toolong) {
			*status = 414;
			return NULL;
		}
		if (same_method(r->method, method))
			return r;
		path_seen = 1;
		add_allow(allow, r->method);
	}
	*status = path_seen ? 405 : 404;
	return NULL;
}
