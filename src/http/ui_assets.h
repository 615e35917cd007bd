/*
 * ui_assets.h -- the web UI's files as embedded in the binary.  The table
 * itself is generated at build time by tools/embed.c from src/ui/ (see the
 * Makefile); src/http/ui.c serves it.
 */
#ifndef SMRITI_UI_ASSETS_H
#define SMRITI_UI_ASSETS_H

#include <stddef.h>

/* How many compressed forms an asset may have (see tools/embed.c). */
#define UI_FORMS 2

struct ui_asset {
	const char *name;               /* file name, served at /ui/NAME */
	const char *mime;               /* Content-Type */
	const char *etag;               /* quoted, changes with the bytes */
	const unsigned char *data;
	size_t len;
	/*
	 * The same bytes compressed at build time, in the order the server
	 * prefers them (brotli, then gzip); coding is NULL for a form that
	 * would be no smaller than the file.
	 */
	struct ui_form {
		const char *coding;     /* Content-Encoding: "br", "gzip" */
		const unsigned char *data;
		size_t len;
		const char *etag;       /* quoted, differs from the plain one */
	} forms[UI_FORMS];
};

/* Terminated by an entry whose name is NULL. */
extern const struct ui_asset ui_assets[];

#endif
