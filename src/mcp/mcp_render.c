/*
 * mcp_render.c -- a checkpoint document as Markdown, for the text/markdown
 * form of smriti:// resources.  It reads the same JSON the tools return, so
 * both forms of a resource always agree.  User text is written as given;
 * artifact content goes into a code fence longer than any run of backticks
 * inside it, so it cannot close the fence early.
 */
#include "mcp/mcp_int.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Adds s, indenting every line after the first by two spaces (list items). */
static void add_indented(struct buf *b, const char *s)
{
	for (; *s; s++) {
		buf_addch(b, *s);
		if (*s == '\n' && s[1])
			buf_adds(b, "  ");
	}
}

static void render_items(struct buf *b, const char *heading, const json_t *list, int tasks)
{
	size_t i;
	json_t *item;

	if (!json_array_size(list))
		return;
	buf_addf(b, "\n## %s\n\n", heading);
	json_array_foreach(list, i, item) {
		buf_adds(b, "- ");
		if (tasks)
			buf_adds(b, strcmp(str(item, "status"), "done") ? "[ ] " : "[x] ");
		add_indented(b, str(item, "text"));
		buf_addch(b, '\n');
	}
}

static void render_entities(struct buf *b, const json_t *list)
{
	size_t i;
	json_t *e;

	if (!json_array_size(list))
		return;
	buf_adds(b, "\n## Entities\n\n- ");
	json_array_foreach(list, i, e) {
		if (i)
			buf_adds(b, "- ");
		buf_adds(b, "**");
		add_indented(b, str(e, "name"));
		buf_adds(b, "**");
		if (*str(e, "kind"))
			buf_addf(b, " (%s)", str(e, "kind"));
		if (*str(e, "description")) {
			buf_adds(b, ": ");
			add_indented(b, str(e, "description"));
		}
		buf_addch(b, '\n');
	}
}

/* Longest run of backticks in s. */
static size_t longest_backticks(const char *s)
{
	size_t run = 0, best = 0;

	for (; *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

/* A fenced code block holding content, with a fence content cannot close. */
static void add_fenced(struct buf *b, const char *info, const char *content)
{
	size_t fence = longest_backticks(content) + 1;

	if (fence < 3)
		fence = 3;
	for (size_t k = 0; k < fence; k++)
		buf_addch(b, '`');
	buf_addf(b, "%s\n%s%s", info, content,
		 *content && content[strlen(content) - 1] == '\n' ? "" : "\n");
	for (size_t k = 0; k < fence; k++)
		buf_addch(b, '`');
	buf_addch(b, '\n');
}

static void render_artifacts(struct buf *b, const json_t *list)
{
	size_t i;
	json_t *a;

	json_array_foreach(list, i, a) {
		if (!i)
			buf_adds(b, "\n## Artifacts\n");
		buf_adds(b, "\n### ");
		add_indented(b, str(a, "name"));
		buf_addf(b, " (%s)\n\n", str(a, "kind"));
		add_fenced(b, "", str(a, "content"));
	}
}

void mcp_render_checkpoint(struct buf *b, const json_t *c)
{
	const char *parent = str(c, "parent_hash");

	buf_addf(b, "# %s\n\n", *str(c, "title") ? str(c, "title") : "(untitled)");
	buf_addf(b, "- Checkpoint: `%s`\n", str(c, "commit_hash"));
	buf_addf(b, "- Space: %s\n", str(c, "space"));
	if (*parent)
		buf_addf(b, "- Parent: `%s`\n", parent);
	else
		buf_adds(b, "- Parent: none (first checkpoint)\n");
	if (*str(c, "author"))
		buf_addf(b, "- Author: %s\n", str(c, "author"));
	buf_addf(b, "- Created: %s\n", str(c, "created_at"));
	if (*str(c, "summary"))
		buf_addf(b, "\n%s\n", str(c, "summary"));
	render_items(b, "Decisions", json_object_get(c, "decisions"), 0);
	render_items(b, "Assumptions", json_object_get(c, "assumptions"), 0);
	render_items(b, "Tasks", json_object_get(c, "tasks"), 1);
	render_items(b, "Open questions", json_object_get(c, "open_questions"), 0);
	render_entities(b, json_object_get(c, "entities"));
	render_artifacts(b, json_object_get(c, "artifacts"));
	if (json_object_size(json_object_get(c, "metadata"))) {
		char *meta = json_dumps(json_object_get(c, "metadata"), JSON_INDENT(2));

		buf_adds(b, "\n## Metadata\n\n");
		add_fenced(b, "json", meta ? meta : "{}");
		free(meta);
	}
}
