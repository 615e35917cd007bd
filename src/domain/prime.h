/*
 * prime.h -- the primer: what an agent starting a session on a Space should
 * read first, in a few hundred tokens (`smriti prime`, a session-start hook,
 * an MCP prompt).  Pure code: the caller reads HEAD and the hand-off note.
 *
 * The text has, in order: the hand-off loop (read HEAD, work, write on the
 * parent you read, what a conflict means, leave a note; its commands name
 * the Space, quoted for a shell where it is not one word), HEAD's line and
 * summary, the last hand-off note, open tasks, open questions, decisions.
 *
 * Tokens are estimated as characters / 4, rounded up (context.h's stand-in
 * for tokens).  Over the budget, whole items go in this stated order:
 * decisions, then open questions, then open tasks, each list from its end
 * (lists keep their authored order, first most important), one closing
 * line saying how many of each were left out; then the summary is cut from
 * its end (marked as cut).
 * The loop, HEAD's line and the hand-off note always stay, so a tiny budget
 * gives them alone.
 */
#ifndef SMRITI_DOMAIN_PRIME_H
#define SMRITI_DOMAIN_PRIME_H

#include <jansson.h>
#include <stddef.h>

#include "domain/model.h"

#define PRIME_DEFAULT_BUDGET 600
#define PRIME_MIN_BUDGET 50
#define PRIME_MAX_BUDGET 100000

enum prime_tools { PRIME_TOOLS_CLI, PRIME_TOOLS_MCP };

struct prime_in {
	const char *space;
	const struct checkpoint *head;   /* NULL when the Space has no Checkpoint yet */
	const json_t *handoff;           /* the HEAD document's "handoff", or NULL */
	size_t budget;                   /* tokens; 0: PRIME_DEFAULT_BUDGET */
	enum prime_tools tools;          /* the loop names commands or MCP tools */
};

/*
 * The primer as a document: {"space", "text", "tokens", "budget", "head"
 * (hash, title, author, created_at) or null, "handoff" or null,
 * "open_tasks", "open_questions", "decisions" (the items kept), "omitted"
 * ({decisions, open_questions, open_tasks: counts left out},
 * "summary_cut": bool)}.  New reference.
 */
json_t *prime_build(const struct prime_in *in);

#endif
