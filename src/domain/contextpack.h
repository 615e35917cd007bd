/*
 * contextpack.h -- the V1 "context pack": a conversation rendered as
 * Markdown to paste into another tool.
 *
 * A pack has a heading, a summary line (turn counts, where the turns came
 * from and the opening request) and the turns under "### User" /
 * "### Assistant" headings, so the pack itself reads back in as a Markdown
 * transcript.  When a draft (a proposed checkpoint, see Draft with AI) is
 * given, its fields are rendered before the conversation.  Pure code.
 */
#ifndef SMRITI_CONTEXTPACK_H
#define SMRITI_CONTEXTPACK_H

#include <jansson.h>
#include <stddef.h>

#include "domain/ingest.h"

struct contextpack {
	const char *title;                  /* NULL or "": "Conversation" */
	const char *source;                 /* "a ChatGPT export", "session 1f0c..." */
	const struct ingest_turn *turns;
	size_t n;
	const json_t *draft;                /* checkpoint fields to render, or NULL */
};

/* The Markdown text of the pack; caller frees. */
char *contextpack_render(const struct contextpack *p);

#endif
