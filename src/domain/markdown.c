/*
 * markdown.c -- a checkpoint document as Markdown (see markdown.h): the
 * text/markdown form of MCP's smriti:// resources and the draft section of
 * context packs.  It reads the same JSON the tools return, so both forms of
 * a resource always agree.  User text is written as given; artifact content
 * goes into a code fence longer than any run of backticks inside it, so it
 * cannot close the fence early.
 */
#include "domain/markdown.h"
#include "util/jfield.h"

#include <stdlib.h>
#include <string.h>

/* An item's text: items are {text, ...}; a draft may still hold bare strings. */
static const char *item_text(const json_t *item)
{
	return json_is_string(item) ? json_string_value(item) : jfield_str(item, "text");
}

static void add_heading(struct buf *b, int level, const char *text)
{
	for (int i = 0; i < level; i++)
		buf_addch(b, '#');
	buf_addf(b, " %s", text);
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

static void render_items(struct buf *b, int level, const char *heading, const json_t *list,
			 int tasks)
{
	size_t i;
	json_t *item;

	if (!json_array_size(list))
		return;
	buf_addch(b, '\n');
	add_heading(b, level, heading);
	buf_adds(b, "\n\n");
	json_array_foreach(list, i, item) {
		buf_adds(b, "- ");
		if (tasks)
			buf_adds(b, strcmp(jfield_str(item, "status"), "done") ? "[ ] " : "[x] ");
		add_indented(b, item_text(item));
		buf_addch(b, '\n');
	}
}

static void render_entities(struct buf *b, int level, const json_t *list)
{
	size_t i;
	json_t *e;

	if (!json_array_size(list))
		return;
	buf_addch(b, '\n');
	add_heading(b, level, "Entities");
	buf_adds(b, "\n\n- ");
	json_array_foreach(list, i, e) {
		if (i)
			buf_adds(b, "- ");
		buf_adds(b, "**");
		add_indented(b, json_is_string(e) ? json_string_value(e) : jfield_str(e, "name"));
		buf_adds(b, "**");
		if (*jfield_str(e, "kind"))
			buf_addf(b, " (%s)", jfield_str(e, "kind"));
		if (*jfield_str(e, "description")) {
			buf_adds(b, ": ");
			add_indented(b, jfield_str(e, "description"));
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

static void render_artifacts(struct buf *b, int level, const json_t *list)
{
	size_t i;
	json_t *a;

	json_array_foreach(list, i, a) {
		if (!i) {
			buf_addch(b, '\n');
			add_heading(b, level, "Artifacts\n");
		}
		buf_addch(b, '\n');
		add_heading(b, level + 1, "");
		add_indented(b, jfield_str(a, "name"));
		if (json_is_string(json_object_get(a, "kind")))
			buf_addf(b, " (%s)", jfield_str(a, "kind"));
		buf_adds(b, "\n\n");
		add_fenced(b, "", jfield_str(a, "content"));
	}
}

/* Where it is and where it came from; only a stored checkpoint has these. */
static void render_provenance(struct buf *b, const json_t *c)
{
	const char *parent = jfield_str(c, "parent_hash");

	buf_addf(b, "- Checkpoint: `%s`\n", jfield_str(c, "commit_hash"));
	buf_addf(b, "- Space: %s\n", jfield_str(c, "space"));
	if (*parent)
		buf_addf(b, "- Parent: `%s`\n", parent);
	else
		buf_adds(b, "- Parent: none (first checkpoint)\n");
	if (*jfield_str(c, "author"))
		buf_addf(b, "- Author: %s\n", jfield_str(c, "author"));
	buf_addf(b, "- Created: %s\n", jfield_str(c, "created_at"));
}

/* A HEAD document's hand-off note: what the next agent must read first. */
static void render_handoff(struct buf *b, int level, const json_t *h)
{
	buf_addch(b, '\n');
	add_heading(b, level, "Hand-off note\n\n");
	add_indented(b, jfield_str(h, "note"));
	buf_addf(b, "\n\n- Left by: %s\n- Left at: %s\n", *jfield_str(h, "author") ?
		 jfield_str(h, "author") : "(unknown)", jfield_str(h, "created_at"));
	if (!json_is_true(json_object_get(h, "on_head")))
		buf_addf(b, "- Left on checkpoint `%s`; HEAD has moved since: check it still "
			 "applies\n", jfield_str(h, "checkpoint"));
}

void checkpoint_markdown(struct buf *b, const json_t *c, int level)
{
	add_heading(b, level, *jfield_str(c, "title") ? jfield_str(c, "title") : "(untitled)");
	buf_addch(b, '\n');
	if (json_object_get(c, "commit_hash")) {
		buf_addch(b, '\n');
		render_provenance(b, c);
	}
	if (json_is_object(json_object_get(c, "handoff")))
		render_handoff(b, level + 1, json_object_get(c, "handoff"));
	if (*jfield_str(c, "summary"))
		buf_addf(b, "\n%s\n", jfield_str(c, "summary"));
	render_items(b, level + 1, "Decisions", json_object_get(c, "decisions"), 0);
	render_items(b, level + 1, "Assumptions", json_object_get(c, "assumptions"), 0);
	render_items(b, level + 1, "Tasks", json_object_get(c, "tasks"), 1);
	render_items(b, level + 1, "Open questions", json_object_get(c, "open_questions"), 0);
	render_entities(b, level + 1, json_object_get(c, "entities"));
	render_artifacts(b, level + 1, json_object_get(c, "artifacts"));
	if (json_object_size(json_object_get(c, "metadata"))) {
		char *meta = json_dumps(json_object_get(c, "metadata"), JSON_INDENT(2));

		buf_addch(b, '\n');
		add_heading(b, level + 1, "Metadata\n\n");
		add_fenced(b, "json", meta ? meta : "{}");
		free(meta);
	}
}
