/*
 * render.c -- the human-readable text of result documents: concise, with
 * short hashes as git prints them.  Renderers read the same JSON that
 * --json prints, so local and remote runs look alike.
 */
#include "cli/cli.h"
#include "util/jfield.h"
#include "util/utf8.h"

#include <stdio.h>
#include <string.h>

#define SHORT 12
#define NAME_COLS 24               /* the name column of `space list` */

/* "2026-12-02T11:40:00.123456Z" -> "2026-12-02 11:40:00" */
static void short_time(const char *iso, char out[20])
{
	snprintf(out, 20, "%.10s %.8s", iso, strlen(iso) > 11 ? iso + 11 : "");
}

/* Items numbered from 1, the positions --drop, --done and --reopen take. */
static void render_items(const char *heading, const json_t *list, const char *key)
{
	size_t i;
	json_t *item;

	if (!json_array_size(list))
		return;
	printf("\n%s:\n", heading);
	json_array_foreach(list, i, item) {
		const char *status = jfield_str(item, "status");
		const char *kind = jfield_str(item, "kind");

		printf("  %zu. ", i + 1);
		if (!strcmp(heading, "Tasks"))
			printf("[%c] %s\n", !strcmp(status, "done") ? 'x' : ' ', jfield_str(item, key));
		else if (*kind && !strcmp(heading, "Artifacts"))
			printf("%s (%s, %zu bytes)\n", jfield_str(item, key), kind,
			       strlen(jfield_str(item, "content")));
		else if (*kind)
			printf("%s (%s)\n", jfield_str(item, key), kind);
		else
			printf("%s\n", jfield_str(item, key));
	}
}

void render_checkpoint(const json_t *c)
{
	const char *parent = jfield_str(c, "parent_hash");
	const char *summary = jfield_str(c, "summary");

	printf("checkpoint %s\n", jfield_str(c, "commit_hash"));
	printf("Space:   %s\n", jfield_str(c, "space"));
	if (*parent && *jfield_str(c, "merge_parent_hash"))
		printf("Merge:   %.*s %.*s\n", SHORT, parent, SHORT, jfield_str(c, "merge_parent_hash"));
	else if (*parent)
		printf("Parent:  %.*s\n", SHORT, parent);
	if (*jfield_str(c, "author"))
		printf("Author:  %s\n", jfield_str(c, "author"));
	printf("Date:    %s\n", jfield_str(c, "created_at"));
	printf("\n    %s\n", *jfield_str(c, "title") ? jfield_str(c, "title") : "(untitled)");
	if (*summary)
		printf("\n    %s\n", summary);
	render_items("Decisions", json_object_get(c, "decisions"), "text");
	render_items("Assumptions", json_object_get(c, "assumptions"), "text");
	render_items("Tasks", json_object_get(c, "tasks"), "text");
	render_items("Open questions", json_object_get(c, "open_questions"), "text");
	render_items("Entities", json_object_get(c, "entities"), "name");
	render_items("Artifacts", json_object_get(c, "artifacts"), "name");
}

void render_log(const json_t *list)
{
	size_t i;
	json_t *c;
	char when[20];

	json_array_foreach(list, i, c) {
		short_time(jfield_str(c, "created_at"), when);
		printf("%s%.*s %s  %s", jfield_str(c, "graph"), SHORT, jfield_str(c, "commit_hash"), when,
		       *jfield_str(c, "title") ? jfield_str(c, "title") : "(untitled)");
		if (*jfield_str(c, "author"))
			printf("  (%s)", jfield_str(c, "author"));
		if (*jfield_str(c, "merge_parent_hash"))
			printf("  (merge %.*s %.*s)", SHORT, jfield_str(c, "parent_hash"), SHORT,
			       jfield_str(c, "merge_parent_hash"));
		putchar('\n');
		if (*jfield_str(c, "graph_after"))
			printf("%s\n", jfield_str(c, "graph_after"));
	}
}

static void render_list_diff(const char *field, const json_t *d)
{
	const char *key = !strcmp(field, "entities") || !strcmp(field, "artifacts") ? "name" :
			  "text";
	size_t i;
	json_t *item;

	json_array_foreach(json_object_get(d, "added"), i, item)
		printf("+ %s: %s\n", field, jfield_str(item, key));
	json_array_foreach(json_object_get(d, "removed"), i, item)
		printf("- %s: %s\n", field, jfield_str(item, key));
	json_array_foreach(json_object_get(d, "changed"), i, item) {
		const json_t *from = json_object_get(item, "from");
		const json_t *to = json_object_get(item, "to");

		if (!strcmp(field, "tasks"))
			printf("~ %s: %s (%s -> %s)\n", field, jfield_str(to, key), jfield_str(from, "status"),
			       jfield_str(to, "status"));
		else
			printf("~ %s: %s\n", field, jfield_str(to, key));
	}
}

void render_diff(const json_t *d)
{
	const char *key;
	json_t *v;

	printf("diff %.*s..%.*s\n", SHORT, jfield_str(d, "from"), SHORT, jfield_str(d, "to"));
	if (json_is_true(json_object_get(d, "identical"))) {
		printf("(no differences)\n");
		return;
	}
	json_object_foreach((json_t *)d, key, v) {
		if (!strcmp(key, "title") || !strcmp(key, "summary"))
			printf("~ %s: \"%s\" -> \"%s\"\n", key, jfield_str(v, "from"), jfield_str(v, "to"));
		else if (!strcmp(key, "metadata"))
			printf("~ metadata changed\n");
		else if (json_is_object(v))
			render_list_diff(key, v);
	}
}

void render_spaces(const json_t *list)
{
	size_t i;
	json_t *sp;

	if (!json_array_size(list)) {
		printf("no spaces yet; create one with 'smriti space create NAME'\n");
		return;
	}
	json_array_foreach(list, i, sp) {
		const char *head = jfield_str(sp, "head");

		const char *name = jfield_str(sp, "name");
		size_t cols = utf8_width(name, strlen(name));

		/* padded by columns, not bytes, so "démo" lines up with "demo" */
		printf("%s%*s %-12.12s %s\n", name, cols < NAME_COLS ? (int)(NAME_COLS - cols) : 0,
		       "", *head ? head : "(empty)", jfield_str(sp, "description"));
	}
}

void render_fsck(const json_t *r)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(r, "problems"), i, p)
		printf("damaged: space '%s' checkpoint %.*s: %s\n", jfield_str(p, "space"), SHORT,
		       jfield_str(p, "commit_hash"), jfield_str(p, "problem"));
	printf("checked %lld checkpoints in %lld spaces: %s\n",
	       (long long)json_integer_value(json_object_get(r, "checkpoints")),
	       (long long)json_integer_value(json_object_get(r, "spaces")),
	       json_is_true(json_object_get(r, "ok")) ? "ok" : "DAMAGED");
}
