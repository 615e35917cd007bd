/*
 * render.c -- the human-readable text of result documents: concise, with
 * short hashes as git prints them.  Renderers read the same JSON that
 * --json prints, so local and remote runs look alike.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#define SHORT 12

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

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
		const char *status = str(item, "status");
		const char *kind = str(item, "kind");

		printf("  %zu. ", i + 1);
		if (!strcmp(heading, "Tasks"))
			printf("[%c] %s\n", !strcmp(status, "done") ? 'x' : ' ', str(item, key));
		else if (*kind && !strcmp(heading, "Artifacts"))
			printf("%s (%s, %zu bytes)\n", str(item, key), kind,
			       strlen(str(item, "content")));
		else if (*kind)
			printf("%s (%s)\n", str(item, key), kind);
		else
			printf("%s\n", str(item, key));
	}
}

void render_checkpoint(const json_t *c)
{
	const char *parent = str(c, "parent_hash");
	const char *summary = str(c, "summary");

	printf("checkpoint %s\n", str(c, "commit_hash"));
	printf("Space:   %s\n", str(c, "space"));
	if (*parent && *str(c, "merge_parent_hash"))
		printf("Merge:   %.*s %.*s\n", SHORT, parent, SHORT, str(c, "merge_parent_hash"));
	else if (*parent)
		printf("Parent:  %.*s\n", SHORT, parent);
	if (*str(c, "author"))
		printf("Author:  %s\n", str(c, "author"));
	printf("Date:    %s\n", str(c, "created_at"));
	printf("\n    %s\n", *str(c, "title") ? str(c, "title") : "(untitled)");
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
		short_time(str(c, "created_at"), when);
		printf("%s%.*s %s  %s", str(c, "graph"), SHORT, str(c, "commit_hash"), when,
		       *str(c, "title") ? str(c, "title") : "(untitled)");
		if (*str(c, "author"))
			printf("  (%s)", str(c, "author"));
		if (*str(c, "merge_parent_hash"))
			printf("  (merge %.*s %.*s)", SHORT, str(c, "parent_hash"), SHORT,
			       str(c, "merge_parent_hash"));
		putchar('\n');
		if (*str(c, "graph_after"))
			printf("%s\n", str(c, "graph_after"));
	}
}

static void render_list_diff(const char *field, const json_t *d)
{
	const char *key = !strcmp(field, "entities") || !strcmp(field, "artifacts") ? "name" :
			  "text";
	size_t i;
	json_t *item;

	json_array_foreach(json_object_get(d, "added"), i, item)
		printf("+ %s: %s\n", field, str(item, key));
	json_array_foreach(json_object_get(d, "removed"), i, item)
		printf("- %s: %s\n", field, str(item, key));
	json_array_foreach(json_object_get(d, "changed"), i, item) {
		const json_t *from = json_object_get(item, "from");
		const json_t *to = json_object_get(item, "to");

		if (!strcmp(field, "tasks"))
			printf("~ %s: %s (%s -> %s)\n", field, str(to, key), str(from, "status"),
			       str(to, "status"));
		else
			printf("~ %s: %s\n", field, str(to, key));
	}
}

void render_diff(const json_t *d)
{
	const char *key;
	json_t *v;

	printf("diff %.*s..%.*s\n", SHORT, str(d, "from"), SHORT, str(d, "to"));
	if (json_is_true(json_object_get(d, "identical"))) {
		printf("(no differences)\n");
		return;
	}
	json_object_foreach((json_t *)d, key, v) {
		if (!strcmp(key, "title") || !strcmp(key, "summary"))
			printf("~ %s: \"%s\" -> \"%s\"\n", key, str(v, "from"), str(v, "to"));
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
		const char *head = str(sp, "head");

		printf("%-24s %-12.12s %s\n", str(sp, "name"), *head ? head : "(empty)",
		       str(sp, "description"));
	}
}

void render_fsck(const json_t *r)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(r, "problems"), i, p)
		printf("damaged: space '%s' checkpoint %.*s: %s\n", str(p, "space"), SHORT,
		       str(p, "commit_hash"), str(p, "problem"));
	printf("checked %lld checkpoints in %lld spaces: %s\n",
	       (long long)json_integer_value(json_object_get(r, "checkpoints")),
	       (long long)json_integer_value(json_object_get(r, "spaces")),
	       json_is_true(json_object_get(r, "ok")) ? "ok" : "DAMAGED");
}
