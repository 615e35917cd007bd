/*
 * test_http.c -- unit tests of the HTTP server's pure parts: listen address
 * parsing, the Host/Origin/token/Content-Type guards and the router.
 */
#include "harness.h"
#include "http/http_int.h"

#include <netinet/in.h>

TEST(http_parse_listen_forms)
{
	struct http_listen l;
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(http_parse_listen("127.0.0.1:7411", &l, &err), SMR_OK);
	CHECK_STR(l.host, "127.0.0.1");
	CHECK_INT(l.port, 7411);
	CHECK(http_is_loopback((struct sockaddr *)&l.addr));
	CHECK_INT(http_parse_listen("[::1]:0", &l, &err), SMR_OK);
	CHECK_STR(l.host, "::1");
	CHECK(http_is_loopback((struct sockaddr *)&l.addr));
	CHECK_INT(http_parse_listen("localhost:80", &l, &err), SMR_OK);
	CHECK(http_is_loopback((struct sockaddr *)&l.addr));
	CHECK_INT(http_parse_listen("127.9.9.9:1", &l, &err), SMR_OK);
	CHECK(http_is_loopback((struct sockaddr *)&l.addr));
	CHECK_INT(http_parse_listen("0.0.0.0:7411", &l, &err), SMR_OK);
	CHECK(!http_is_loopback((struct sockaddr *)&l.addr));
	CHECK_INT(http_parse_listen("[::]:7411", &l, &err), SMR_OK);
	CHECK(!http_is_loopback((struct sockaddr *)&l.addr));
	CHECK_INT(http_parse_listen("7411", &l, &err), SMR_EUSAGE);
	CHECK_INT(http_parse_listen("127.0.0.1:65536", &l, &err), SMR_EUSAGE);
	CHECK_INT(http_parse_listen("127.0.0.1:", &l, &err), SMR_EUSAGE);
	CHECK_INT(http_parse_listen("127.0.0.1:8x", &l, &err), SMR_EUSAGE);
	CHECK_INT(http_parse_listen("example.com:80", &l, &err), SMR_EUSAGE);
	CHECK_INT(http_parse_listen("::1:80", &l, &err), SMR_EUSAGE);
}

TEST(http_guard_host_names)
{
	struct http_guard g;

	http_guard_init(&g, "127.0.0.1", 7411, " smriti.test , other:9000,[fe80::1]", NULL);
	CHECK(http_guard_host(&g, "localhost:7411"));
	CHECK(http_guard_host(&g, "LOCALHOST:7411"));
	CHECK(http_guard_host(&g, "127.0.0.1:7411"));
	CHECK(http_guard_host(&g, "[::1]:7411"));
	CHECK(http_guard_host(&g, "smriti.test:7411"));
	CHECK(http_guard_host(&g, "other:9000"));
	CHECK(http_guard_host(&g, "[fe80::1]:7411"));
	CHECK(!http_guard_host(&g, "other:7411"));
	CHECK(!http_guard_host(&g, "localhost:7412"));
	CHECK(!http_guard_host(&g, "localhost"));
	CHECK(!http_guard_host(&g, "evil.example:7411"));
	CHECK(!http_guard_host(&g, "localhost:7411.evil.example"));
	CHECK(!http_guard_host(&g, NULL));
	CHECK(http_guard_origin(&g, "http://localhost:7411"));
	CHECK(!http_guard_origin(&g, "https://localhost:7411"));
	CHECK(http_guard_origin(&g, "https://smriti.test:7411"));   /* a TLS proxy's name */
	CHECK(!http_guard_origin(&g, "https://smriti.test"));
	CHECK(!http_guard_origin(&g, "https://evil.example:7411"));
	CHECK(!http_guard_origin(&g, "http://evil.example:7411"));
	CHECK(!http_guard_origin(&g, "null"));
	CHECK(http_guard_token(&g, NULL));   /* no token configured */
	http_guard_release(&g);

	http_guard_init(&g, "10.0.0.5", 80, NULL, NULL);
	CHECK(http_guard_host(&g, "localhost"));
	CHECK(http_guard_host(&g, "10.0.0.5:80"));
	http_guard_release(&g);

	http_guard_init(&g, "127.0.0.1", 7411, "smriti.example.com:443", NULL);
	CHECK(http_guard_origin(&g, "https://smriti.example.com"));
	CHECK(http_guard_origin(&g, "https://SMRITI.example.com:443"));
	CHECK(!http_guard_origin(&g, "http://smriti.example.com"));
	CHECK(!http_guard_origin(&g, "https://127.0.0.1:7411"));
	http_guard_release(&g);
}

/* The client a trusted proxy names, and only a trusted one (SMRITI_TRUSTED_PROXIES). */
TEST(http_forwarded_client_from_trusted_proxies)
{
	struct smr_err err = SMR_ERR_INIT;
	struct http_net *t = NULL;
	unsigned char proxy[16], key[16], want[16];
	size_t n = 0;

	CHECK_INT(http_trusted_parse("127.0.0.1, 10.0.0.0/8,::1,fd00::/8", &t, &n, &err), SMR_OK);
	CHECK_INT(n, 4);
	CHECK_INT(http_addr_parse("10.9.8.7", 8, key), 0);
	CHECK(http_net_has(t, n, key));
	CHECK_INT(http_addr_parse("11.0.0.1", 8, key), 0);
	CHECK(!http_net_has(t, n, key));
	CHECK_INT(http_addr_parse("[fd00::5]", 9, key), 0);
	CHECK(http_net_has(t, n, key));
	CHECK_INT(http_addr_parse("127.0.0.1", 9, proxy), 0);
	/* from the right: the first address no proxy of ours sent; forged ones to its left lose */
	memcpy(key, proxy, 16);
	CHECK(http_forwarded_client(t, n, "6.6.6.6, 203.0.113.9, 10.1.1.1", NULL, key));
	CHECK_INT(http_addr_parse("203.0.113.9", 11, want), 0);
	CHECK(!memcmp(key, want, 16));
	/* only proxies in the chain: the leftmost */
	memcpy(key, proxy, 16);
	CHECK(http_forwarded_client(t, n, "10.0.0.2,127.0.0.1", NULL, key));
	CHECK_INT(http_addr_parse("10.0.0.2", 8, want), 0);
	CHECK(!memcmp(key, want, 16));
	/* X-Real-IP when there is no X-Forwarded-For; garbage names nobody */
	memcpy(key, proxy, 16);
	CHECK(http_forwarded_client(t, n, NULL, " 2001:db8::1 ", key));
	CHECK_INT(http_addr_parse("2001:db8::1", 11, want), 0);
	CHECK(!memcmp(key, want, 16));
	memcpy(key, proxy, 16);
	CHECK(!http_forwarded_client(t, n, "not an address", "neither", key));
	CHECK(!memcmp(key, proxy, 16));
	free(t);
	CHECK_INT(http_trusted_parse("127.0.0.1,example.com", &t, &n, &err), SMR_EUSAGE);
	CHECK(strstr(err.msg, "'example.com' is not an address") != NULL);
	CHECK_INT(http_trusted_parse("10.0.0.0/33", &t, &n, &err), SMR_EUSAGE);
	CHECK_INT(http_trusted_parse("", &t, &n, &err), SMR_OK);
	CHECK_INT(n, 0);
	free(t);
}

TEST(http_guard_token_compare)
{
	struct http_guard g;

	http_guard_init(&g, "127.0.0.1", 1, NULL, "s3cret");
	CHECK(http_guard_token(&g, "Bearer s3cret"));
	CHECK(http_guard_token(&g, "bearer s3cret"));
	CHECK(!http_guard_token(&g, "Bearer s3cre"));
	CHECK(!http_guard_token(&g, "Bearer s3cret2"));
	CHECK(!http_guard_token(&g, "Basic czNjcmV0"));
	CHECK(!http_guard_token(&g, "s3cret"));
	CHECK(!http_guard_token(&g, NULL));
	http_guard_release(&g);
	http_guard_init(&g, "127.0.0.1", 1, NULL, "");
	CHECK(!g.has_token);
	http_guard_release(&g);
}

TEST(http_json_content_types)
{
	CHECK(http_json_type(NULL));
	CHECK(http_json_type("application/json"));
	CHECK(http_json_type("Application/JSON; charset=utf-8"));
	CHECK(http_json_type("application/merge-patch+json"));
	CHECK(!http_json_type("text/plain"));
	CHECK(!http_json_type("text/plain;charset=UTF-8"));
	CHECK(!http_json_type("application/x-www-form-urlencoded"));
	CHECK(!http_json_type("multipart/form-data; boundary=x"));
	CHECK(!http_json_type("+json"));
}

TEST(http_strict_decoding)
{
	char a[] = "/v4/repos/vict%69m/commits", b[] = "/v4/repos/victim%00/commits",
	     c[] = "1%0a", d[] = "50%", e[] = "%7F", f[] = "caf%C3%A9";
	int bad = 0;

	CHECK_INT((long)http_unescape(a, &bad), 24);
	CHECK_STR(a, "/v4/repos/victim/commits");
	CHECK(!bad);
	CHECK_INT((long)http_unescape(f, &bad), 5);
	CHECK(!bad);
	/* refused texts are left as they came, so the log shows what was sent */
	http_unescape(b, &bad);
	CHECK(bad);
	CHECK_STR(b, "/v4/repos/victim%00/commits");
	bad = 0;
	http_unescape(c, &bad);
	CHECK(bad);
	bad = 0;
	http_unescape(d, &bad);
	CHECK(bad);
	bad = 0;
	http_unescape(e, &bad);
	CHECK(bad);
	CHECK(http_target_clean("/v4/repos?limit=1"));
	CHECK(!http_target_clean("/heal th"));
	CHECK(!http_target_clean("/a\x01"));
}

TEST(http_strict_headers)
{
	CHECK(!http_header_problem("Content-Length", 14, "17", 2));
	CHECK(!http_header_problem("X-Note", 6, "a\tb", 3));
	CHECK(http_header_problem("Content-Length ", 15, "17", 2));
	CHECK(http_header_problem("X(Note)", 7, "a", 1));
	CHECK(http_header_problem("", 0, "a", 1));
	CHECK(http_header_problem("Host", 4, "a\x01", 2));
	CHECK(http_header_problem("Host", 4, "a\rb", 3));
	CHECK(http_header_problem("Host", 4, "a\0b", 3));
	CHECK(http_header_single("host") >= 0);
	CHECK(http_header_single("ORIGIN") >= 0);
	CHECK(http_header_single("Accept") < 0);
}

TEST(http_router)
{
	char arg[HTTP_ARG_MAX], allow[64], big[HTTP_ARG_MAX + 20];
	const struct http_route *r;
	int status = 0;

	r = http_route_find("GET", "/v4/repos", arg, &status, allow);
	CHECK(r && !strcmp(r->pattern, "/v4/repos"));
	r = http_route_find("GET", "/v4/repos/my space/commits", arg, &status, allow);
	CHECK(r && !strcmp(r->pattern, "/v4/repos/{id}/commits"));
	CHECK_STR(arg, "my space");
	r = http_route_find("HEAD", "/repos/x/head", arg, &status, allow);
	CHECK(r && !strcmp(r->method, "GET"));
	r = http_route_find("POST", "/api/ops/space.create", arg, &status, allow);
	CHECK(r && (r->flags & ROUTE_BY_OP));
	CHECK_STR(arg, "space.create");
	CHECK(!http_route_find("GET", "/v4/repos/", arg, &status, allow));
	CHECK_INT(status, 404);
	CHECK(!http_route_find("GET", "/v4/repos/a/b", arg, &status, allow));
	CHECK_INT(status, 404);
	CHECK(!http_route_find("PUT", "/v4/repos/a", arg, &status, allow));
	CHECK_INT(status, 405);
	CHECK_STR(allow, "GET, PATCH, DELETE");
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "/commits/", 9);
	big[sizeof(big) - 1] = '\0';
	CHECK(!http_route_find("GET", big, arg, &status, allow));
	CHECK_INT(status, 414);
}

TEST(http_openapi_lists_every_route)
{
	json_t *doc = http_openapi();
	json_t *paths = json_object_get(doc, "paths");

	CHECK_STR(json_string_value(json_object_get(doc, "openapi")), "3.1.0");
	for (const struct http_route *r = http_routes; r->method; r++) {
		char m[8];
		size_t i;

		for (i = 0; r->method[i]; i++)
			m[i] = (char)(r->method[i] - 'A' + 'a');
		m[i] = '\0';
		CHECK(json_object_get(json_object_get(paths, r->pattern), m) != NULL);
	}
	json_decref(doc);
}
