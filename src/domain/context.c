/*
 * context.c -- assembly of the model's context for one send (see context.h):
 * Checkpoint rendering, the history boundary and budget trimming.
 */
#include "domain/context.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

size_t context_add_capped(struct buf *b, const char *s, size_t max_chars)
{
	size_t n = strlen(s);
	size_t keep = utf8_prefix_bytes(s, n, max_chars);
	size_t cut;

	buf_add(b, s, keep);
	if (keep == n)
		return 0;
	cut = utf8_chars(s + keep, n - keep);
	buf_addf(b, "\n[... truncated, %zu more characters]", cut);
	return cut;
}

static const char *item_str(const json_t *item, const char *key)
{
	const char *s = json_string_value(json_object_get(item, key));

	return s ? s : "";
}

/* Extra fields of an item beyond those already shown, as " (key: value; ...)". */
static void add_extras(struct buf *b, const json_t *item, const char *const *shown)
{
	const char *key;
	json_t *v;
	int first = 1;
	char *dump;

	json_object_foreach((json_t *)item, key, v) {
		size_t i;

		for (i = 0; shown[i] && strcmp(shown[i], key); i++)
			;
		if (shown[i] || json_is_null(v))
			continue;
		buf_adds(b, first ? " (" : "; ");
		first = 0;
		if (json_is_string(v)) {
			buf_addf(b, "%s: %s", key, json_string_value(v));
			continue;
		}
		dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		buf_addf(b, "%s: %s", key, dump ? dump : "?");
		free(dump);
	}
	if (!first)
		buf_addch(b, ')');
}

void context_render_items(struct buf *b, const char *heading, const json_t *list)
{
	static const char *const shown[] = { "text", NULL };
	size_t i;
	json_t *item;

	if (!json_array_size(list))
		return;
	buf_addf(b, "\n%s:\n", heading);
	json_array_foreach(list, i, item) {
		buf_addf(b, "- %s", item_str(item, "text"));
		add_extras(b, item, shown);
		buf_addch(b, '\n');
	}
}

void context_render_tasks(struct buf *b, const char *heading, const json_t *list)
{
	static const char *const shown[] = { "text", "status", NULL };
	size_t i;
	json_t *item;

	if (!json_array_size(list))
		return;
	buf_addf(b, "\n%s:\n", heading);
	json_array_foreach(list, i, item) {
		buf_addf(b, "- [%s] %s", item_str(item, "status"), item_str(item, "text"));
		add_extras(b, item, shown);
		buf_addch(b, '\n');
	}
}

static void render_entities(struct buf *b, const json_t *list)
{
	static const char *const shown[] = { "name", "kind", "description", NULL };
	size_t i;
	json_t *item;
	const char *kind, *desc;

	if (!json_array_size(list))
		return;
	buf_adds(b, "\nEntities:\n");
	json_array_foreach(list, i, item) {
		kind = item_str(item, "kind");
		desc = item_str(item, "description");
		buf_addf(b, "- %s", item_str(item, "name"));
		if (*kind)
			buf_addf(b, " [%s]", kind);
		if (*desc)
			buf_addf(b, ": %s", desc);
		add_extras(b, item, shown);
		buf_addch(b, '\n');
	}
}

static void render_artifacts(struct buf *b, const json_t *list)
{
	size_t i;
	json_t *item;

	if (!json_array_size(list))
		return;
	buf_addf(b, "\nArtifacts (each shown up to %d characters):\n",
		 CONTEXT_ARTIFACT_MAX_CHARS);
	json_array_foreach(list, i, item) {
		buf_addf(b, "--- artifact: %s (%s) ---\n", item_str(item, "name"),
			 item_str(item, "kind"));
		context_add_capped(b, item_str(item, "content"), CONTEXT_ARTIFACT_MAX_CHARS);
		buf_adds(b, "\n--- end of artifact ---\n");
	}
}

char *context_render_checkpoint(const struct checkpoint *c)
{
	struct buf b = BUF_INIT(0);

	buf_adds(&b, "The conversation continues from a saved Checkpoint: the state of the work"
		     " the user chose to keep. Treat it as established context.\n");
	if (c->hash)
		buf_addf(&b, "Checkpoint: %s\n", c->hash);
	if (c->title && *c->title)
		buf_addf(&b, "Title: %s\n", c->title);
	if (c->summary && *c->summary)
		buf_addf(&b, "\nSummary:\n%s\n", c->summary);
	context_render_items(&b, "Decisions", c->decisions);
	context_render_items(&b, "Assumptions", c->assumptions);
	context_render_tasks(&b, "Tasks", c->tasks);
	context_render_items(&b, "Open questions", c->open_questions);
	render_entities(&b, c->entities);
	render_artifacts(&b, c->artifacts);
	return buf_detach(&b, NULL);
}

static char *build_system(const struct context_in *in)
{
	struct buf b = BUF_INIT(0);
	char *ck;

	if (in->preamble && *in->preamble)
		buf_adds(&b, in->preamble);
	if (in->checkpoint) {
		ck = context_render_checkpoint(in->checkpoint);
		if (b.len)
			buf_adds(&b, "\n\n");
		buf_adds(&b, ck);
		free(ck);
	}
	return buf_detach(&b, NULL);
}

static size_t chars_of(const char *s)
{
	return s ? utf8_chars(s, strlen(s)) : 0;
}

static int is_chat_role(const char *role)
{
	return role && (!strcmp(role, "user") || !strcmp(role, "assistant"));
}

/*
 * Index of the first turn to keep, after dropping the oldest ones until the
 * total fits; a reply left first without its question goes too.  Turns
 * before the boundary are already excluded by the caller (keep[] == 0).
 */
static size_t trim_start(const struct context_in *in, const size_t *chars,
			 const int *keep, size_t total)
{
	size_t start = 0;

	while (in->budget_chars && total > in->budget_chars && start < in->n_turns) {
		if (keep[start])
			total -= chars[start];
		start++;
	}
	if (start == 0)
		return 0;
	while (start < in->n_turns &&
	       (!keep[start] || !strcmp(in->turns[start].role, "assistant")))
		start++;
	return start;
}

void context_build(const struct context_in *in, struct context *out)
{
	size_t *chars = xcalloc(in->n_turns + 1, sizeof(*chars));
	int *keep = xcalloc(in->n_turns + 1, sizeof(*keep));
	size_t total, start, i;

	memset(out, 0, sizeof(*out));
	out->system = build_system(in);
	total = chars_of(out->system) + chars_of(in->message) + chars_of(in->prefill);
	for (i = 0; i < in->n_turns; i++) {
		const struct turn *t = &in->turns[i];

		keep[i] = t->seq > in->history_base_seq && is_chat_role(t->role) && t->content;
		if (keep[i]) {
			chars[i] = chars_of(t->content);
			total += chars[i];
		}
	}
	start = trim_start(in, chars, keep, total);
	out->msgs = xcalloc(in->n_turns + 2, sizeof(*out->msgs));
	out->included = xcalloc(in->n_turns + 2, sizeof(*out->included));
	out->dropped = xcalloc(in->n_turns + 1, sizeof(*out->dropped));
	for (i = 0; i < in->n_turns; i++) {
		const struct turn *t = &in->turns[i];

		if (!keep[i])
			continue;
		if (i < start) {
			out->dropped[out->n_dropped++] = t->seq;
			continue;
		}
		out->msgs[out->n_msgs++] = (struct context_msg){ t->role, t->content, t->seq };
		out->included[out->n_included++] = t->seq;
		out->chars += chars[i];
	}
	out->msgs[out->n_msgs++] = (struct context_msg){ "user", in->message, in->message_seq };
	if (in->message_seq > 0)
		out->included[out->n_included++] = in->message_seq;
	out->chars += chars_of(out->system) + chars_of(in->message);
	if (in->prefill) {
		out->msgs[out->n_msgs++] = (struct context_msg){ "assistant", in->prefill,
								 in->prefill_seq };
		out->included[out->n_included++] = in->prefill_seq;
		out->chars += chars_of(in->prefill);
	}
	out->trimmed = out->n_dropped > 0;
	free(chars);
	free(keep);
}

void context_release(struct context *c)
{
	free(c->system);
	free(c->msgs);
	free(c->included);
	free(c->dropped);
	memset(c, 0, sizeof(*c));
}
