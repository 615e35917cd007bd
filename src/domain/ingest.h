/*
 * ingest.h -- V1 transcript ingestion: a pasted or exported conversation
 * read into an ordered list of user and assistant turns.
 *
 * Formats (docs/review.md, "Transcript ingestion"):
 *   text      "User: ..." / "Assistant: ..." speaker labels (also Human, You,
 *             Me, Claude, ChatGPT, GPT, AI; "You said:" works too; System
 *             blocks are dropped); a message runs until the next label
 *   markdown  "## User" / "### Assistant" headings or "**User:**" labels
 *   chatgpt   ChatGPT's conversations.json: one conversation object (or a
 *             list holding exactly one) with a "mapping" message tree
 *   claude    Claude's export: one conversation object (or a list holding
 *             exactly one) with "chat_messages"
 * Pure code: no I/O.  The input must be UTF-8 without NUL bytes and is
 * capped at INGEST_MAX_BYTES and INGEST_MAX_TURNS.
 */
#ifndef SMRITI_INGEST_H
#define SMRITI_INGEST_H

#include <stddef.h>

#include "util/err.h"

#define INGEST_MAX_BYTES (5u << 20)
#define INGEST_MAX_TURNS 10000

enum ingest_format {
	INGEST_AUTO,
	INGEST_TEXT,
	INGEST_MARKDOWN,
	INGEST_CHATGPT,
	INGEST_CLAUDE,
};

struct ingest_turn {
	const char *role;       /* "user" or "assistant" (static strings) */
	char *content;
};

struct transcript {
	enum ingest_format format;   /* as detected (or as given) */
	char *title;                 /* from the export or a "# Title" line; NULL if none */
	struct ingest_turn *turns;
	size_t n, cap;
};

/* "auto", "text", "markdown", "chatgpt", "claude" (NULL means auto). */
enum smr_rc ingest_format_parse(const char *name, enum ingest_format *out, struct smr_err *err);
const char *ingest_format_name(enum ingest_format f);

/*
 * Reads text[0..len) in format (INGEST_AUTO detects it) into out, which the
 * caller transcript_release()s whatever the result.  Errors: SMR_EINVAL for
 * bad UTF-8, NUL bytes or JSON that does not parse; SMR_ETOOBIG past the
 * caps; SMR_EUNPROC for an unrecognised format, a JSON export of an
 * unexpected shape, or a transcript with no turns.
 */
enum smr_rc ingest_parse(const char *text, size_t len, enum ingest_format format,
			 struct transcript *out, struct smr_err *err);

void transcript_release(struct transcript *t);

#endif
