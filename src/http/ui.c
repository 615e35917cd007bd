/*
 * ui.c -- serving the web UI: "/" is index.html and "/ui/NAME" every other
 * file, from the table that tools/embed.c generates from src/ui/ at build
 * time, so the binary carries its UI and there is no directory to find.
 *
 * Each asset's responses (200 with the bytes, 304 for a matching
 * If-None-Match) are built once, when the server starts (http_ui_build), and
 * shared by every thread (MHD counts references).  tools/embed.c also
 * compresses each file at build time with brotli and with gzip; a client
 * gets the first of those its Accept-Encoding takes (brotli is the smaller:
 * docs/http.md has the sizes), with its own ETag and
 * Content-Encoding, and every answer says Vary: Accept-Encoding so that a
 * cache keeps the forms apart.  Every one carries the security headers: a
 * Content-Security-Policy that allows scripts, styles and requests from this
 * origin only (no inline script, no third-party origin, no framing), nosniff
 * and no referrer.  Cache-Control: no-cache makes the browser revalidate, so
 * a new build is picked up at once and an unchanged asset costs a 304.
 */
#include "http/http_int.h"
#include "http/ui_assets.h"
#include "util/err.h"
#include "util/xalloc.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UI_CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;" \
	       " connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';" \
	       " frame-ancestors 'none'"

/* One way an asset is sent (plain or one of its forms): its 200 and its 304. */
struct encoded {
	struct MHD_Response *full, *not_modified;
	const char *etag;
};

/* An asset's ways: [0] plain, [1 + f] its form f (full NULL: it has none). */
struct sent_asset {
	struct encoded way[1 + UI_FORMS];
};

struct http_ui {
	struct sent_asset *assets;
	size_t n;
};

static void add_headers(struct MHD_Response *resp, const struct ui_asset *a, const char *etag)
{
	MHD_add_response_header(resp, "Content-Type", a->mime);
	MHD_add_response_header(resp, "ETag", etag);
	MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "Content-Security-Policy", UI_CSP);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
}

/* The 200 (bytes, len) or, with bytes NULL, the 304 of one encoding. */
static struct MHD_Response *asset_response(const struct ui_asset *a, const char *etag,
					   const char *coding, const void *bytes, size_t len)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(bytes ? len : 0, (void *)bytes,
					       MHD_RESPMEM_PERSISTENT);
	if (!resp)
		BUG("cannot build the response of UI file '%s'", a->name);
	add_headers(resp, a, etag);
	if (coding)
		MHD_add_response_header(resp, "Content-Encoding", coding);
	return resp;
}

static void build_way(struct encoded *e, const struct ui_asset *a, const char *etag,
		      const char *coding, const void *bytes, size_t len)
{
	e->etag = etag;
	e->full = asset_response(a, etag, coding, bytes, len);
	e->not_modified = asset_response(a, etag, coding, NULL, 0);
}

static void build_asset(struct http_ui *ui, size_t i)
{
	const struct ui_asset *a = &ui_assets[i];
	struct sent_asset *s = &ui->assets[i];

	build_way(&s->way[0], a, a->etag, NULL, a->data, a->len);
	for (size_t f = 0; f < UI_FORMS; f++) {
		const struct ui_form *form = &a->forms[f];

		if (form->coding)
			build_way(&s->way[1 + f], a, form->etag, form->coding, form->data,
				  form->len);
	}
}

struct http_ui *http_ui_build(void)
{
	struct http_ui *ui = xcalloc(1, sizeof(*ui));

	while (ui_assets[ui->n].name)
		ui->n++;
	ui->assets = xcalloc(ui->n + 1, sizeof(*ui->assets));
	for (size_t i = 0; i < ui->n; i++)
		build_asset(ui, i);
	return ui;
}

static void free_encoded(struct encoded *e)
{
	if (!e->full)
		return;
	MHD_destroy_response(e->full);
	MHD_destroy_response(e->not_modified);
}

void http_ui_free(struct http_ui *ui)
{
	if (!ui)
		return;
	for (size_t i = 0; i < ui->n; i++)
		for (size_t w = 0; w < 1 + UI_FORMS; w++)
			free_encoded(&ui->assets[i].way[w]);
	free(ui->assets);
	free(ui);
}

/* 1 if the n bytes at p name coding ("gzip" also goes by "x-gzip"). */
static int names_coding(const char *p, size_t n, const char *coding)
{
	if (n == strlen(coding) && !strncasecmp(p, coding, n))
		return 1;
	return !strcmp(coding, "gzip") && n == 6 && !strncasecmp(p, "x-gzip", 6);
}

/*
 * 1 if an Accept-Encoding list takes coding: the coding with a q above 0,
 * or else "*" with a q above 0 (RFC 9110, 12.5.3).
 */
static int accepts(const char *ae, const char *coding)
{
	int star = 0;

	for (const char *p = ae; p && *p;) {
		size_t n;
		const char *q, *end;
		int ok;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t;,");
		end = p + strcspn(p, ",");
		q = memchr(p, ';', (size_t)(end - p));
		ok = 1;
		if (q) {
			q += strspn(q + 1, " \t") + 1;
			if (!strncasecmp(q, "q=", 2))
				ok = strtod(q + 2, NULL) > 0;
		}
		if (names_coding(p, n, coding))
			return ok;
		if (n == 1 && *p == '*')
			star = ok;
		p = end;
	}
	return star;
}

/* The first way of asset s that a client sending Accept-Encoding ae takes. */
static const struct encoded *way_for(const struct sent_asset *s, size_t i, const char *ae)
{
	for (size_t f = 0; ae && f < UI_FORMS; f++)
		if (s->way[1 + f].full && accepts(ae, ui_assets[i].forms[f].coding))
			return &s->way[1 + f];
	return &s->way[0];
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
	const struct encoded *e;
	const char *inm, *ae;

	for (size_t i = 0; i < ui->n; i++) {
		if (strcmp(ui_assets[i].name, name))
			continue;
		ae = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Accept-Encoding");
		e = way_for(&ui->assets[i], i, ae);
		inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "If-None-Match");
		r->status = inm && etag_matches(inm, e->etag) ? 304 : 200;
		r->fixed = r->status == 304 ? e->not_modified : e->full;
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
