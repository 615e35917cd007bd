/*
 * contextpack.c -- rendering a conversation (and, when there is one, its
 * draft checkpoint) as a Markdown context pack; see contextpack.h.
 */
#include "domain/contextpack.h"
#include "domain/markdown.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <string.h>

#define OPENING_CHARS 160       /* how much of the first request the summary quotes */

/* s on one line: newlines and tabs become spaces. */
static void add_one_line(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_addch(b, s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i]);
}

static const char *role_heading(const char *role)
{
	if (!strcmp(role, "user"))
		return "User";
	if (!strcmp(role, "assistant"))
		return "Assistant";
	return role;
}

/* The first line of the first user turn, cut at OPENING_CHARS characters. */
static void add_opening(struct buf *b, const struct contextpack *p)
{
	const char *s = NULL;
	size_t n, cut;

	for (size_t i = 0; i < p->n && !s; i++)
		if (!strcmp(p->turns[i].role, "user"))
			s = p->turns[i].content;
	if (!s)
		return;
	n = strcspn(s, "\n");
	cut = utf8_prefix_bytes(s, n, OPENING_CHARS);
	buf_adds(b, " It opens with: \"");
	add_one_line(b, s, cut);
	buf_adds(b, cut < n ? "...\"" : "\"");
}

static void add_summary(struct buf *b, const struct contextpack *p)
{
	size_t users = 0;

	for (size_t i = 0; i < p->n; i++)
		users += !strcmp(p->turns[i].role, "user");
	buf_addf(b, "%zu turn%s from %s: %zu by the user, %zu by the assistant.", p->n,
		 p->n == 1 ? "" : "s", p->source ? p->source : "a transcript", users,
		 p->n - users);
	add_opening(b, p);
	buf_adds(b, "\n\n");
}

/* The draft's own Markdown (markdown.h), a level below the pack's sections. */
static void add_draft(struct buf *b, const json_t *draft)
{
	buf_adds(b, "## Draft checkpoint\n\n");
	checkpoint_markdown(b, draft, 3);
	buf_addch(b, '\n');
}

char *contextpack_render(const struct contextpack *p)
{
	struct buf b = BUF_INIT(0);
	const char *title = p->title && *p->title ? p->title : "Conversation";

	buf_adds(&b, "# Context pack: ");
	add_one_line(&b, title, strlen(title));
	buf_adds(&b, "\n\n");
	add_summary(&b, p);
	if (p->draft)
		add_draft(&b, p->draft);
	buf_adds(&b, "## Conversation\n");
	for (size_t i = 0; i < p->n; i++)
		buf_addf(&b, "\n### %s\n\n%s\n", role_heading(p->turns[i].role),
			 p->turns[i].content);
	return buf_detach(&b, NULL);
}
