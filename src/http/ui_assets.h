/*
 * ui_assets.h -- the web UI's files as embedded in the binary.  The table
 * itself is generated at build time by tools/embed.c from src/ui/ (see the
 * Makefile); src/http/ui.c serves it.
 */
#ifndef SMRITI_UI_ASSETS_H
#define SMRITI_UI_ASSETS_H

#include <stddef.h>

struct ui_asset {
	const char *name;               /* file name, served at /ui/NAME */
	const char *mime;               /* Content-Type */
	const char *etag;               /* quoted, changes with the bytes */
	const unsigned char *data;
	size_t len;
	/* the same bytes gzipped at build time, or NULL if that is no smaller */
	const unsigned char *gz;
	size_t gz_len;
	const char *gz_etag;            /* quoted, differs from etag */
};

/* Terminated by an entry whose name is NULL. */
extern const struct ui_asset ui_assets[];

#endif
