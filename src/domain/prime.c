/*
 * prime.c -- the agent's primer (see prime.h): the loop, HEAD, the note and
 * the open work, trimmed to a token budget in the stated order.
 */
#include "domain/prime.h"
#include "domain/context.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The lists in the order they are shown; trimming walks them backwards. */
enum { L_TASKS, L_QUESTIONS, L_DECISIONS, L_N };

static const char *const list_key[L_N] = { "open_tasks", "open_questions", "decisions" };
static const char *const list_heading[L_N] = { "Open tasks", "Open questions", "Decisions" };
static const char *const list_noun[L_N] = { "open tasks", "open questions", "decisions" };

struct shape {
	json_t *items[L_N];      /* all of each list */
	size_t keep[L_N];        /* how many of each are shown */
	size_t summary_chars;    /* characters of the summary shown; SIZE_MAX: all */
};

/* The loop naming commands: %1$s is the Space's name, %2$s the same quoted for a shell. */
static const char *const loop_cli =
	"This project keeps its reasoning state in Smriti, as Checkpoints on Space '%1$s'.\n"
	"The hand-off loop:\n"
	"1. Read HEAD first (`smriti head %2$s`, summarised below); its hash is the parent you"
	" write on.\n"
	"2. Do the work.\n"
	"3. At a point worth keeping, write a Checkpoint on the parent you read:"
	" `smriti checkpoint create %2$s --parent HASH --title T --decision D --task T`.\n"
	"4. A conflict (exit 4) means someone wrote since you read: read HEAD again, fold"
	" their work in (or `smriti merge`), write on the new HEAD. Never overwrite it.\n"
	"5. Before you stop, leave a note for the next agent: `smriti handoff %2$s -m NOTE`.\n";

static const char *const loop_mcp =
	"This project keeps its reasoning state in Smriti, as Checkpoints on Space '%1$s'.\n"
	"The hand-off loop:\n"
	"1. Read HEAD first (tool read_head, summarised below); its hash is the parent you"
	" write on.\n"
	"2. Do the work.\n"
	"3. At a point worth keeping, write a Checkpoint on the parent you read"
	" (update_checkpoint or write_checkpoint with that parent).\n"
	"4. A conflict means someone wrote since you read: read HEAD again, fold their work"
	" in (or merge), write on the new HEAD. Never overwrite it.\n"
	"5. Before you stop, leave a note for the next agent (tool hand_off).\n";

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Tasks not done, as new array of borrowed items. */
static json_t *open_tasks(const json_t *tasks)
{
	json_t *out = json_array(), *t;
	size_t i;

	json_array_foreach(tasks, i, t)
		if (strcmp(str(t, "status"), "done"))
			json_array_append(out, t);
	return out;
}

static void render_head(struct buf *b, const struct prime_in *in, const struct shape *s)
{
	const struct checkpoint *c = in->head;

	if (!c) {
		buf_addf(b, "\nHEAD: none yet: Space '%s' has no Checkpoint; the first one you"
			 " write has no parent.\n", in->space);
		return;
	}
	buf_addf(b, "\nHEAD: %.12s \"%s\" by %s, %s\n", c->hash, c->title ? c->title : "",
		 c->author && *c->author ? c->author : "?", c->created_at ? c->created_at : "");
	if (c->summary && *c->summary && s->summary_chars) {
		buf_adds(b, "Summary: ");
		context_add_capped(b, c->summary, s->summary_chars);
		buf_addch(b, '\n');
	}
}

static void render_note(struct buf *b, const json_t *h)
{
	if (!h)
		return;
	buf_addf(b, "\nLast hand-off note (%s, %s): %s\n", str(h, "author"), str(h, "created_at"),
		 str(h, "note"));
	if (!json_is_true(json_object_get(h, "on_head")))
		buf_addf(b, "(left on %.12s; HEAD has moved since: check it still applies)\n",
			 str(h, "checkpoint"));
}

/* The first keep items of list, as a new array of borrowed items. */
static json_t *head_of(const json_t *list, size_t keep)
{
	json_t *out = json_array();

	for (size_t i = 0; i < keep; i++)
		json_array_append(out, json_array_get(list, i));
	return out;
}

/*
 * One line for the items trimmed, so an agent knows the primer is not all
 * (a cut summary says so itself: context_add_capped).
 */
static void render_left_out(struct buf *b, const struct prime_in *in, const struct shape *s)
{
	int any = 0;

	for (int l = L_N - 1; l >= 0; l--) {
		size_t more = json_array_size(s->items[l]) - s->keep[l];

		if (!more)
			continue;
		buf_addf(b, "%s%zu %s", any ? ", " : "\n(Left out for length: ", more,
			 list_noun[l]);
		any = 1;
	}
	if (any)
		buf_addf(b, "; %s shows all.)\n", in->tools == PRIME_TOOLS_MCP ? "read_head" :
			 "`smriti head`");
}

/* name as one shell word: itself when plain, else in single quotes; caller frees. */
static char *shell_word(const char *name)
{
	struct buf b = BUF_INIT(0);

	if (*name && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._-") == strlen(name) && *name != '-')
		return xstrdup(name);
	buf_addch(&b, '\'');
	for (const char *p = name; *p; p++) {
		if (*p == '\'')
			buf_adds(&b, "'\\''");   /* close, an escaped quote, reopen */
		else
			buf_addch(&b, *p);
	}
	buf_addch(&b, '\'');
	return buf_detach(&b, NULL);
}

static char *render(const struct prime_in *in, const struct shape *s)
{
	struct buf b = BUF_INIT(0);
	char *quoted;

	buf_addf(&b, "# Smriti: Space '%s'\n\n", in->space);
	quoted = shell_word(in->space);
	if (in->tools == PRIME_TOOLS_MCP)
		buf_addf(&b, loop_mcp, in->space);
	else
		buf_addf(&b, loop_cli, in->space, quoted);
	free(quoted);
	render_head(&b, in, s);
	render_note(&b, in->handoff);
	for (int l = 0; l < L_N; l++) {
		json_t *shown = head_of(s->items[l], s->keep[l]);

		if (l == L_TASKS)
			context_render_tasks(&b, list_heading[l], shown);
		else
			context_render_items(&b, list_heading[l], shown);
		json_decref(shown);
	}
	render_left_out(&b, in, s);
	return buf_detach(&b, NULL);
}

static size_t tokens_of(const char *text)
{
	return (utf8_chars(text, strlen(text)) + 3) / 4;
}

/* One step of trimming in the stated order; 0 when nothing is left to trim. */
static int trim_step(struct shape *s, size_t summary_len)
{
	for (int l = L_N - 1; l >= 0; l--) {
		if (s->keep[l]) {
			s->keep[l]--;
			return 1;
		}
	}
	if (s->summary_chars == SIZE_MAX)
		s->summary_chars = summary_len;
	if (s->summary_chars <= 40) {
		if (!s->summary_chars)
			return 0;
		s->summary_chars = 0;
		return 1;
	}
	s->summary_chars -= s->summary_chars / 4 + 10;
	return 1;
}

static json_t *document(const struct prime_in *in, const struct shape *s, char *text,
			size_t budget, size_t summary_len)
{
	const struct checkpoint *c = in->head;
	json_t *doc = json_pack("{s:s, s:s, s:I, s:I}", "space", in->space, "text", text,
				"tokens", (json_int_t)tokens_of(text), "budget",
				(json_int_t)budget);
	json_t *omitted = json_object();

	json_object_set_new(doc, "head", c ? json_pack("{s:s, s:s, s:s, s:s}", "hash", c->hash,
						     "title", c->title ? c->title : "",
						     "author", c->author ? c->author : "",
						     "created_at", c->created_at ? c->created_at :
						     "") : json_null());
	json_object_set_new(doc, "handoff", in->handoff ? json_deep_copy(in->handoff) :
			    json_null());
	for (int l = 0; l < L_N; l++) {
		json_t *kept = head_of(s->items[l], s->keep[l]);

		json_object_set_new(doc, list_key[l], json_deep_copy(kept));
		json_decref(kept);
		json_object_set_new(omitted, list_key[l],
				    json_integer((json_int_t)(json_array_size(s->items[l]) -
							      s->keep[l])));
	}
	json_object_set_new(omitted, "summary_cut",
			    json_boolean(s->summary_chars != SIZE_MAX &&
					 s->summary_chars < summary_len));
	json_object_set_new(doc, "omitted", omitted);
	return doc;
}

json_t *prime_build(const struct prime_in *in)
{
	const struct checkpoint *c = in->head;
	size_t budget = in->budget ? in->budget : PRIME_DEFAULT_BUDGET;
	size_t summary_len = c && c->summary ? utf8_chars(c->summary, strlen(c->summary)) : 0;
	struct shape s = { .summary_chars = SIZE_MAX };
	char *text;
	json_t *doc;

	s.items[L_TASKS] = open_tasks(c ? c->tasks : NULL);
	s.items[L_QUESTIONS] = c && c->open_questions ? json_incref(c->open_questions) :
			       json_array();
	s.items[L_DECISIONS] = c && c->decisions ? json_incref(c->decisions) : json_array();
	for (int l = 0; l < L_N; l++)
		s.keep[l] = json_array_size(s.items[l]);
	text = render(in, &s);
	while (tokens_of(text) > budget && trim_step(&s, summary_len)) {
		free(text);
		text = render(in, &s);
	}
	doc = document(in, &s, text, budget, summary_len);
	free(text);
	for (int l = 0; l < L_N; l++)
		json_decref(s.items[l]);
	return doc;
}
