/*
 * guard.c -- what the server checks before it lets a request reach an
 * operation: the listening address (loopback unless a token is set), the
 * Host header (DNS-rebinding defence), the Origin of writes (CSRF), the
 * bearer token, and that a write's body is declared as JSON.
 *
 * A browser page on another site can make a request to 127.0.0.1, and with
 * DNS rebinding it can even make one that looks same-origin to the browser;
 * the Host header then still names the attacker's domain, which is why only
 * our own names pass.  Simple cross-site requests (forms, text/plain) are
 * stopped by the Origin and Content-Type checks.
 */
#include "http/http_int.h"
#include "util/xalloc.h"
#include "util/hex.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static enum smr_rc parse_port(const char *s, unsigned *out, struct smr_err *err)
{
	char *end;
	unsigned long v;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return smr_errf(err, SMR_EUSAGE, "bad port '%s' in --listen", s);
	v = strtoul(s, &end, 10);
	if (v > 65535)
		return smr_errf(err, SMR_EUSAGE, "port %lu is out of range", v);
	*out = (unsigned)v;
	return SMR_OK;
}

/* Splits "[v6]:port" or "host:port" into host (without brackets) and port text. */
static enum smr_rc split_hostport(const char *s, char host[64], const char **port,
				  struct smr_err *err)
{
	const char *colon;
	size_t n;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return smr_errf(err, SMR_EUSAGE, "--listen wants [ADDR]:PORT, got '%s'", s);
		n = (size_t)(close - s - 1);
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			return smr_errf(err, SMR_EUSAGE, "--listen wants HOST:PORT, got '%s'", s);
		n = (size_t)(colon - s);
	}
	if (n == 0 || n >= 64)
		return smr_errf(err, SMR_EUSAGE, "bad host in --listen '%s'", s);
	memcpy(host, s, n);
	host[n] = '\0';
	*port = colon + 1;
	return SMR_OK;
}

enum smr_rc http_parse_listen(const char *s, struct http_listen *out, struct smr_err *err)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)&out->addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&out->addr;
	const char *port = NULL;
	const char *numeric;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	rc = split_hostport(s, out->host, &port, err);
	if (!rc)
		rc = parse_port(port, &out->port, err);
	if (rc)
		return rc;
	numeric = strcmp(out->host, "localhost") ? out->host : "127.0.0.1";
	if (inet_pton(AF_INET, numeric, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)out->port);
		out->addrlen = sizeof(*v4);
		return SMR_OK;
	}
	if (inet_pton(AF_INET6, numeric, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)out->port);
		out->addrlen = sizeof(*v6);
		return SMR_OK;
	}
	return smr_errf(err, SMR_EUSAGE,
			"--listen wants a numeric address or 'localhost', got '%s'", out->host);
}

int http_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *v4 = (const struct sockaddr_in *)sa;

		return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_LOOPBACK(a))
			return 1;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return 0;
}

/* ---- client addresses behind a proxy ---- */

int http_addr_parse(const char *s, size_t len, unsigned char key[16])
{
	char text[INET6_ADDRSTRLEN + 2];
	struct in_addr v4;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	if (!len || len >= sizeof(text))
		return -1;
	memcpy(text, s, len);
	text[len] = '\0';
	memset(key, 0, 16);
	if (inet_pton(AF_INET, text, &v4) == 1) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, text, key) == 1 ? 0 : -1;
}

/* One entry, "ADDRESS" or "ADDRESS/BITS", into net; 0 on success. */
static int net_parse(const char *s, size_t len, struct http_net *net)
{
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	unsigned long bits = 128;
	char num[4];
	int v4;

	if (http_addr_parse(s, alen, net->addr))
		return -1;
	v4 = !memcmp(net->addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
	if (slash) {
		size_t nlen = len - alen - 1;

		if (!nlen || nlen >= sizeof(num) || strspn(slash + 1, "0123456789") < nlen)
			return -1;
		memcpy(num, slash + 1, nlen);
		num[nlen] = '\0';
		bits = strtoul(num, NULL, 10) + (v4 ? 96 : 0);
		if (bits > 128)
			return -1;
	}
	net->bits = (unsigned)bits;
	return 0;
}

enum smr_rc http_trusted_parse(const char *list, struct http_net **out, size_t *n,
			       struct smr_err *err)
{
	*out = NULL;
	*n = 0;
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		struct http_net net;

		if (strspn(p, " \t") < len && net_parse(p, len, &net)) {
			free(*out);
			*out = NULL;
			*n = 0;
			return smr_errf(err, SMR_EUSAGE, "SMRITI_TRUSTED_PROXIES: '%.*s' is not an"
					" address or ADDRESS/BITS", (int)(len > 64 ? 64 : len), p);
		}
		if (strspn(p, " \t") < len) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[(*n)++] = net;
		}
		p += len + (p[len] == ',');
	}
	return SMR_OK;
}

int http_net_has(const struct http_net *v, size_t n, const unsigned char key[16])
{
	for (size_t i = 0; i < n; i++) {
		unsigned full = v[i].bits / 8, rest = v[i].bits % 8;

		if (memcmp(v[i].addr, key, full))
			continue;
		if (!rest || !((v[i].addr[full] ^ key[full]) & (0xff00 >> rest)))
			return 1;
	}
	return 0;
}

int http_forwarded_client(const struct http_net *trusted, size_t n, const char *xff,
			  const char *xri, unsigned char key[16])
{
	unsigned char k[16];
	int named = 0;

	if (xff && *xff) {
		for (size_t end = strlen(xff); end > 0;) {
			size_t start = end;

			while (start > 0 && xff[start - 1] != ',')
				start--;
			if (http_addr_parse(xff + start, end - start, k))
				break;
			memcpy(key, k, 16);
			named = 1;
			if (!http_net_has(trusted, n, k))
				break;      /* the first address from the right that no proxy of ours sent */
			end = start ? start - 1 : 0;
		}
		return named;
	}
	if (xri && !http_addr_parse(xri, strlen(xri), k)) {
		memcpy(key, k, 16);
		return 1;
	}
	return 0;
}

static void add_host(struct http_guard *g, const char *name, unsigned port)
{
	char *h;
	int v6 = strchr(name, ':') && name[0] != '[';

	h = port ? xasprintf(v6 ? "[%s]:%u" : "%s:%u", name, port) : xstrdup(name);
	for (char *p = h; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	g->hosts = xrealloc(g->hosts, (g->n + 1) * sizeof(*g->hosts));
	g->hosts[g->n++] = h;
}

/* One SMRITI_ALLOWED_HOSTS entry: "name", "name:port", "[v6]" or "[v6]:port". */
static void add_allowed(struct http_guard *g, const char *s, size_t n, unsigned port)
{
	char *e;
	const char *close, *colon;

	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n)
		return;
	e = xstrndup(s, n);
	close = e[0] == '[' ? strchr(e, ']') : NULL;
	colon = strrchr(close ? close : e, ':');
	if (colon && (close || strchr(e, ':') == colon))
		add_host(g, e, 0);      /* has its own port */
	else
		add_host(g, e, port);
	free(e);
}

/*
 * The cookie the UI gets for a token: a hash of it, so that the browser's
 * cookie jar never holds the token itself, with a prefix of its own so that
 * it differs from token_sha.
 */
static void cookie_value(const char *token, char out[65])
{
	struct sha256_ctx sha;
	uint8_t d[32];

	sha256_init(&sha);
	sha256_update(&sha, 17, (const uint8_t *)"smriti-ui-cookie:");
	sha256_update(&sha, strlen(token), (const uint8_t *)token);
	sha256_digest(&sha, sizeof(d), d);
	hex_encode(d, sizeof(d), out);
}

void http_guard_init(struct http_guard *g, const char *bound_host, unsigned port,
		     const char *allowed, const char *token)
{
	static const char *const own[] = { "localhost", "127.0.0.1", "::1" };
	struct sha256_ctx sha;

	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		add_host(g, own[i], port);
	add_host(g, bound_host, port);
	if (port == 80) {
		add_host(g, "localhost", 0);
		add_host(g, "127.0.0.1", 0);
		add_host(g, "[::1]", 0);
	}
	g->n_own = g->n;
	for (const char *p = allowed; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		add_allowed(g, p, n, port);
		p += n + (comma ? 1 : 0);
	}
	if (token && *token) {
		g->has_token = 1;
		sha256_init(&sha);
		sha256_update(&sha, strlen(token), (const uint8_t *)token);
		sha256_digest(&sha, sizeof(g->token_sha), g->token_sha);
		cookie_value(token, g->cookie);
	}
}

void http_guard_release(struct http_guard *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->hosts[i]);
	free(g->hosts);
	memset(g, 0, sizeof(*g));
}

int http_guard_host(const struct http_guard *g, const char *host)
{
	if (!host)
		return 0;
	for (size_t i = 0; i < g->n; i++)
		if (!strcasecmp(g->hosts[i], host))
			return 1;
	return 0;
}

/*
 * Behind a TLS-terminating proxy the page's origin is https:// and one of
 * the names of SMRITI_ALLOWED_HOSTS; the server's own names speak http only.
 */
int http_guard_origin(const struct http_guard *g, const char *origin)
{
	if (origin && !strncasecmp(origin, "http://", 7))
		return http_guard_host(g, origin + 7);
	const char *name = origin ? origin + 8 : NULL;
	const char *close;
	char with_port[300];

	if (!origin || strncasecmp(origin, "https://", 8) || strlen(name) > 256)
		return 0;
	/* a browser leaves out https's default port: the entry names it (name:443) */
	close = name[0] == '[' ? strchr(name, ']') : NULL;
	snprintf(with_port, sizeof(with_port), "%s%s", name,
		 strchr(close ? close : name, ':') ? "" : ":443");
	for (size_t i = g->n_own; i < g->n; i++)
		if (!strcasecmp(g->hosts[i], with_port))
			return 1;
	return 0;
}

void http_token_digest(const char *t, uint8_t out[32])
{
	struct sha256_ctx sha;

	sha256_init(&sha);
	sha256_update(&sha, strlen(t), (const uint8_t *)t);
	sha256_digest(&sha, 32, out);
}

int http_guard_digest_is(const struct http_guard *g, const uint8_t digest[32])
{
	return g->has_token && memeql_sec(digest, g->token_sha, 32);
}

int http_guard_token_is(const struct http_guard *g, const char *t)
{
	uint8_t got[32];

	if (!g->has_token || !t)
		return 0;
	/* Hashing first makes the comparison independent of the token's length. */
	http_token_digest(t, got);
	return http_guard_digest_is(g, got);
}

const char *http_bearer(const char *authorization)
{
	const char *t;

	if (!authorization || strncasecmp(authorization, "Bearer ", 7))
		return NULL;
	t = authorization + 7;
	while (*t == ' ')
		t++;
	return t;
}

int http_guard_token(const struct http_guard *g, const char *authorization)
{
	const char *t = http_bearer(authorization);

	if (!g->has_token)
		return 1;
	return t && http_guard_token_is(g, t);
}

int http_guard_cookie(const struct http_guard *g, const char *h)
{
	const size_t klen = strlen(HTTP_AUTH_COOKIE);

	if (!g->has_token)
		return 0;
	for (const char *p = h; p && *p; p++) {
		while (*p == ' ' || *p == ';')
			p++;
		if (!strncmp(p, HTTP_AUTH_COOKIE, klen) && p[klen] == '=' &&
		    hex_span(p + klen + 1) == 64)
			return memeql_sec(p + klen + 1, g->cookie, 64);
		p = strchr(p, ';');
		if (!p)
			break;
	}
	return 0;
}

int http_json_type(const char *ct)
{
	size_t n;

	if (!ct)
		return 1;
	while (*ct == ' ')
		ct++;
	n = strcspn(ct, ";");
	while (n && ct[n - 1] == ' ')
		n--;
	if (n == 16 && !strncasecmp(ct, "application/json", 16))
		return 1;
	/* application/problem+json, application/merge-patch+json, ... */
	return n > 5 && !strncasecmp(ct + n - 5, "+json", 5) && memchr(ct, '/', n);
}

static int hex_value(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch |= 0x20;
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

static int is_control(unsigned char ch)
{
	return ch < 0x20 || ch == 0x7f;
}

/* 1 if every escape of s is %XX and nothing sent or decoded is a control byte. */
static int escapes_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int hi, lo;

		if (is_control(*p))
			return 0;
		if (*p != '%')
			continue;
		hi = hex_value(p[1]);
		lo = hi < 0 ? -1 : hex_value(p[2]);
		if (lo < 0 || is_control((unsigned char)(hi << 4 | lo)))
			return 0;
		p += 2;
	}
	return 1;
}

size_t http_unescape(char *s, int *bad)
{
	char *w = s;

	if (!escapes_clean(s)) {
		*bad = 1;
		return strlen(s);
	}
	for (const char *p = s; *p; p++) {
		if (*p == '%') {
			*w++ = (char)(hex_value(p[1]) << 4 | hex_value(p[2]));
			p += 2;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

const char *http_header_problem(const char *name, size_t name_len, const char *value,
				size_t value_len)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~";

	if (!name_len)
		return "has an empty name";
	for (size_t i = 0; i < name_len; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (!isalnum(ch) || ch > 0x7f)
			if (!ch || !strchr(tchar, ch))
				return ch == ' ' || ch == '\t' ?
				       "has whitespace in its name or before its colon" :
				       "has a character in its name that a header name may not have";
	}
	for (size_t i = 0; value && i < value_len; i++)
		if (is_control((unsigned char)value[i]) && value[i] != '\t')
			return "has a control character in its value";
	return NULL;
}

/* Headers the server reads as a single value: a second one is a 400 (RFC 9110 5.3). */
static const char *const single_headers[HTTP_SINGLE_HEADERS] = {
	"Host", "Origin", "Authorization", "Cookie", "Content-Type", "Content-Length",
	"Sec-Fetch-Site", "Last-Event-ID", "MCP-Protocol-Version", "Mcp-Session-Id", "Referer",
};

int http_header_single(const char *name)
{
	size_t n = strlen(name);

	/* every request's every header comes here: compare lengths first */
	for (int i = 0; i < HTTP_SINGLE_HEADERS; i++)
		if (strlen(single_headers[i]) == n && !strcasecmp(name, single_headers[i]))
			return i;
	return -1;
}

int http_target_clean(const char *t)
{
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return 0;
	return 1;
}
