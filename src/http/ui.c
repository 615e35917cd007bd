/*
 * ui.c -- serving the web UI: "/" is index.html and "/ui/NAME" every other
 * file, from the table that tools/embed.c generates from src/ui/ at build
 * time, so the binary carries its UI and there is no directory to find.
 *
 * Each asset's two responses (200 with the bytes, 304 for a matching
 * If-None-Match) are built once, on first use, and shared by every thread
 * (MHD counts references).  Every one carries the security headers: a
 * Content-Security-Policy that allows scripts, styles and requests from this
 * origin only (no inline script, no third-party origin, no framing), nosniff
 * and no referrer.  Cache-Control: no-cache makes the browser revalidate, so
 * a new build is picked up at once and an unchanged asset costs a 304.
 */
#include "http/internal.h"
#include "http/ui_assets.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define UI_CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;" \
	       " connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';" \
	       " frame-ancestors 'none'"

struct ui_resp {
	struct MHD_Response *full, *not_modified;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct ui_resp *resps;
static size_t n_assets;

static void add_headers(struct MHD_Response *resp, const struct ui_asset *a)
{
	MHD_add_response_header(resp, "Content-Type", a->mime);
	MHD_add_response_header(resp, "ETag", a->etag);
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "Content-Security-Policy", UI_CSP);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
}

static void build(void)
{
	while (ui_assets[n_assets].name)
		n_assets++;
	resps = calloc(n_assets ? n_assets : 1, sizeof(*resps));
	if (!resps)
		abort();
	for (size_t i = 0; i < n_assets; i++) {
		const struct ui_asset *a = &ui_assets[i];

		resps[i].full = MHD_create_response_from_buffer(a->len, (void *)a->data,
								MHD_RESPMEM_PERSISTENT);
		resps[i].not_modified = MHD_create_response_from_buffer(0, NULL,
									MHD_RESPMEM_PERSISTENT);
		if (!resps[i].full || !resps[i].not_modified)
			abort();
		add_headers(resps[i].full, a);
		add_headers(resps[i].not_modified, a);
	}
}

void http_ui_release(void)
{
	for (size_t i = 0; resps && i < n_assets; i++) {
		MHD_destroy_response(resps[i].full);
		MHD_destroy_response(resps[i].not_modified);
	}
	free(resps);
	resps = NULL;
}

/* 1 if an If-None-Match list names etag (or is "*"). */
static int etag_matches(const char *inm, const char *etag)
{
	size_t n = strlen(etag);

	for (const char *p = inm; p && *p; p++) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!strncmp(p, "W/", 2))
			p += 2;
		if (*p == '*' || (!strncmp(p, etag, n) && (p[n] == '\0' || p[n] == ',' ||
							  p[n] == ' ')))
			return 1;
		p = strchr(p, ',');
		if (!p)
			break;
	}
	return 0;
}

static void serve(struct http_req *r, const char *name)
{
	const char *inm;

	pthread_once(&once, build);
	for (size_t i = 0; i < n_assets; i++) {
		if (strcmp(ui_assets[i].name, name))
			continue;
		inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "If-None-Match");
		r->status = inm && etag_matches(inm, ui_assets[i].etag) ? 304 : 200;
		r->fixed = r->status == 304 ? resps[i].not_modified : resps[i].full;
		return;
	}
	http_error(r, 404, "not_found", "no UI file '%s'", name);
}

void http_ui_index(struct http_req *r, struct ops_ctx *ctx)
{
	(void)ctx;
	serve(r, "index.html");
}

void http_ui_asset(struct http_req *r, struct ops_ctx *ctx)
{
	(void)ctx;
	serve(r, r->arg);
}
