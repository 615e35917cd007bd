/*
 * shape.h -- provider-specific shaping of the one context every provider
 * receives (domain/context.h): pure functions from messages to wire JSON.
 *
 * OpenAI-style servers take the system text as a first "system" message and
 * any sequence of roles.  Anthropic takes the system text at the top level
 * and requires user/assistant alternation starting with user, so
 * shape_alternate() merges consecutive same-role messages (joined by a blank
 * line) and, if the first would be the assistant's (its question was trimmed
 * away), puts a short user placeholder before it rather than drop the reply.
 */
#ifndef SMRITI_SHAPE_H
#define SMRITI_SHAPE_H

#include <jansson.h>

#include "provider/provider.h"
#include "util/buf.h"

/* Text a leading assistant message is given as its question. */
#define SHAPE_PLACEHOLDER "(earlier conversation omitted)"

/*
 * [{role:"system", content: system}?, {role, content}...] for Chat
 * Completions; empty messages are left out.  New reference.
 */
json_t *shape_openai_messages(const char *system, const struct provider_msg *msgs, size_t n);

/*
 * Strictly alternating [{role, content}...] beginning with "user" for
 * Anthropic: "system" messages are left out (see shape_system), empty ones
 * skipped, same-role runs merged.  New reference.
 */
json_t *shape_alternate(const struct provider_msg *msgs, size_t n);

/* The same two lists written as JSON text onto b (the fast path for requests). */
void shape_openai_messages_write(struct buf *b, const char *system,
				 const struct provider_msg *msgs, size_t n);
void shape_alternate_write(struct buf *b, const struct provider_msg *msgs, size_t n);

/* Appends s, well-formed UTF-8, as a JSON string literal (quotes included). */
void shape_json_str(struct buf *b, const char *s);

/*
 * The compact JSON text of object head with one more member key whose value
 * is the JSON text in value (appended last).  Caller free()s.
 */
char *shape_body(json_t *head, const char *key, const struct buf *value);

/* system plus the content of any "system" messages, blank-line separated; caller free()s. */
char *shape_system(const char *system, const struct provider_msg *msgs, size_t n);

#endif
