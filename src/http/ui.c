/*
 * ui.c -- serving the web UI: "/" is index.html and "/ui/NAME" every other
 * file, from the table that tools/embed.c generates from src/ui/ at build
 * time, so the binary carries its UI and there is no directory to find.
 *
 * Each asset's two responses (200 with the bytes, 304 for a matching
 * If-None-Match) are built once, when the server starts (http_ui_build), and
 * shared by every thread (MHD counts references).  Every one carries the security headers: a
 * Content-Security-Policy that allows scripts, styles and requests from this
 * origin only (no inline script, no third-party origin, no framing), nosniff
 * and no referrer.  Cache-Control: no-cache makes the browser revalidate, so
 * a new build is picked up at once and an unchanged asset costs a 304.
 */
#include "http/internal.h"
#include "http/ui_assets.h"
#include "util/err.h"
#include "util/xalloc.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#define UI_CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;" \
	       " connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';" \
	       " frame-ancestors 'none'"

struct http_ui {
	struct MHD_Response **full, **not_modified;
	size_t n;
};

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

static struct MHD_Response *asset_response(const struct ui_asset *a, int with_body)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(with_body ? a->len : 0,
					       with_body ? (void *)a->data : NULL,
					       MHD_RESPMEM_PERSISTENT);
	if (!resp)
		BUG("cannot build the response of UI file '%s'", a->name);
	add_headers(resp, a);
	return resp;
}

struct http_ui *http_ui_build(void)
{
	struct http_ui *ui = xcalloc(1, sizeof(*ui));

	while (ui_assets[ui->n].name)
		ui->n++;
	ui->full = xcalloc(ui->n + 1, sizeof(*ui->full));
	ui->not_modified = xcalloc(ui->n + 1, sizeof(*ui->not_modified));
	for (size_t i = 0; i < ui->n; i++) {
		ui->full[i] = asset_response(&ui_assets[i], 1);
		ui->not_modified[i] = asset_response(&ui_assets[i], 0);
	}
	return ui;
}

void http_ui_free(struct http_ui *ui)
{
	if (!ui)
		return;
	for (size_t i = 0; i < ui->n; i++) {
		MHD_destroy_response(ui->full[i]);
		MHD_destroy_response(ui->not_modified[i]);
	}
	free(ui->full);
	free(ui->not_modified);
	free(ui);
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
	const struct http_ui *ui = r->srv->ui;
	const char *inm;

	for (size_t i = 0; i < ui->n; i++) {
		if (strcmp(ui_assets[i].name, name))
			continue;
		inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "If-None-Match");
		r->status = inm && etag_matches(inm, ui_assets[i].etag) ? 304 : 200;
		r->fixed = r->status == 304 ? ui->not_modified[i] : ui->full[i];
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
