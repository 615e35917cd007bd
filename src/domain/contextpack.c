/*
 * contextpack.c -- rendering a conversation (and, when there is one, its
 * draft checkpoint) as a Markdown context pack; see contextpack.h.
 */
#include "domain/contextpack.h"
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

static const char *field(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void add_list(struct buf *b, const json_t *draft, const char *key, const char *heading)
{
	const json_t *list = json_object_get(draft, key), *item;
	size_t i;

	if (!json_array_size(list))
		return;
	buf_addf(b, "### %s\n\n", heading);
	json_array_foreach(list, i, item) {
		const char *text = json_is_string(item) ? json_string_value(item) :
							  field(item, "text");

		if (!strcmp(key, "tasks"))
			buf_addf(b, "- [%c] ", !strcmp(field(item, "status"), "done") ? 'x' : ' ');
		else
			buf_adds(b, "- ");
		add_one_line(b, text, strlen(text));
		buf_addch(b, '\n');
	}
	buf_addch(b, '\n');
}

static void add_entities(struct buf *b, const json_t *draft)
{
	const json_t *list = json_object_get(draft, "entities"), *e;
	size_t i;

	if (!json_array_size(list))
		return;
	buf_adds(b, "### Entities\n\n");
	json_array_foreach(list, i, e) {
		const char *name = json_is_string(e) ? json_string_value(e) : field(e, "name");

		buf_adds(b, "- ");
		add_one_line(b, name, strlen(name));
		if (*field(e, "kind"))
			buf_addf(b, " (%s)", field(e, "kind"));
		if (*field(e, "description")) {
			buf_adds(b, ": ");
			add_one_line(b, field(e, "description"), strlen(field(e, "description")));
		}
		buf_addch(b, '\n');
	}
	buf_addch(b, '\n');
}

/* A code fence longer than any run of backticks in content. */
static size_t fence_len(const char *content)
{
	size_t run = 0, longest = 0;

	for (; *content; content++) {
		run = *content == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	return longest < 3 ? 3 : longest + 1;
}

static void add_fence(struct buf *b, size_t n)
{
	while (n--)
		buf_addch(b, '`');
	buf_addch(b, '\n');
}

static void add_artifacts(struct buf *b, const json_t *draft)
{
	const json_t *list = json_object_get(draft, "artifacts"), *a;
	size_t i, fence;

	json_array_foreach(list, i, a) {
		fence = fence_len(field(a, "content"));
		buf_adds(b, i ? "" : "### Artifacts\n\n");
		buf_adds(b, "#### ");
		add_one_line(b, field(a, "name"), strlen(field(a, "name")));
		buf_addch(b, '\n');
		buf_addch(b, '\n');
		add_fence(b, fence);
		buf_addf(b, "%s\n", field(a, "content"));
		add_fence(b, fence);
		buf_addch(b, '\n');
	}
}

static void add_draft(struct buf *b, const json_t *draft)
{
	buf_adds(b, "## Draft checkpoint\n\n");
	if (*field(draft, "title")) {
		buf_adds(b, "**");
		add_one_line(b, field(draft, "title"), strlen(field(draft, "title")));
		buf_adds(b, "**\n\n");
	}
	if (*field(draft, "summary"))
		buf_addf(b, "%s\n\n", field(draft, "summary"));
	add_list(b, draft, "decisions", "Decisions");
	add_list(b, draft, "assumptions", "Assumptions");
	add_list(b, draft, "tasks", "Tasks");
	add_list(b, draft, "open_questions", "Open questions");
	add_entities(b, draft);
	add_artifacts(b, draft);
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
