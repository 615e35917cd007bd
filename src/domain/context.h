/*
 * context.h -- what a model receives on one chat send, assembled from
 * Smriti's own records.
 *
 * Pure code: no store, no clock, no provider.  The same assembly feeds every
 * provider; provider-specific shaping (Anthropic's strict alternation, where
 * the system text goes) happens in the provider adapter (provider/shape.h).
 *
 * Order: the system text (preamble, then the mounted Checkpoint rendered as
 * structured text), then the turns with sequence_number > history_base_seq,
 * oldest first, then the new user message (and, to continue a reply that
 * was cut short, that reply).
 *
 * The budget is counted in characters (Unicode code points) of the system
 * text plus every message's content, a deliberately simple stand-in for
 * tokens (roughly 3 to 4 characters per token for English prose, fewer for
 * code and CJK).  Over budget the oldest turns go first, then any reply left
 * without its question at the front; the system text (with the Checkpoint)
 * and the new message always stay, even if they alone exceed the budget.
 */
#ifndef SMRITI_CONTEXT_H
#define SMRITI_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "domain/model.h"
#include "util/buf.h"

/* Characters of one artifact's content shown to the model. */
#define CONTEXT_ARTIFACT_MAX_CHARS 2000

struct context_msg {
	const char *role;       /* "user" | "assistant"; borrowed */
	const char *content;    /* borrowed from the input turns or message */
	int64_t seq;            /* sequence number; 0 for a message not stored */
};

struct context_in {
	const char *preamble;                   /* may be NULL */
	const struct checkpoint *checkpoint;    /* mounted Checkpoint or NULL */
	const struct turn *turns;               /* prior turns, oldest first */
	size_t n_turns;
	int64_t history_base_seq;               /* only turns with seq > this; -1: all */
	const char *message;                    /* the new user message */
	int64_t message_seq;                    /* its sequence number, 0 if not stored */
	/*
	 * A reply to the message that was cut short, sent last so that the model
	 * goes on from its end (Anthropic's prefill; OpenAI-compatible servers
	 * take a final assistant message the same way).  NULL: none.
	 */
	const char *prefill;
	int64_t prefill_seq;                    /* the last turn of that reply */
	size_t budget_chars;                    /* 0: unlimited */
};

struct context {
	char *system;                 /* preamble + Checkpoint text, "" when neither */
	struct context_msg *msgs;     /* turns kept, then the new message */
	size_t n_msgs;
	int64_t *included;            /* sequence numbers sent, the new message's last */
	size_t n_included;
	int64_t *dropped;             /* left out for the budget, oldest first */
	size_t n_dropped;
	int trimmed;                  /* 1 when anything was dropped for the budget */
	size_t chars;                 /* characters of system + all message contents */
};

/*
 * Assembles the context of in into out (overwritten).  Message contents are
 * borrowed from in, which must outlive out.  Release with context_release().
 */
void context_build(const struct context_in *in, struct context *out);
void context_release(struct context *c);

/* The Checkpoint as structured text for a system prompt; caller free()s. */
char *context_render_checkpoint(const struct checkpoint *c);

/*
 * Appends a checkpoint list as the Checkpoint text shows it: "\nHeading:\n"
 * and one "- text (extra: value)" line per item; tasks as "- [status] text".
 * Nothing for an empty list.  Shared with the agent's primer (prime.h).
 */
void context_render_items(struct buf *b, const char *heading, const json_t *list);
void context_render_tasks(struct buf *b, const char *heading, const json_t *list);

/*
 * Appends the first max_chars characters of well-formed UTF-8 s to b; if s
 * is longer, appends a newline and "[... truncated, N more characters]".
 * Returns N (0 when nothing was cut).
 */
size_t context_add_capped(struct buf *b, const char *s, size_t max_chars);

#endif
