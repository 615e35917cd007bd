/*
 * shape.c -- wire shapes of the message list per provider (see shape.h).
 *
 * The message list is most of a request's bytes, so besides the json_t
 * builders (used by tests and small callers) there are writers that append
 * the JSON text straight to a buffer: jansson's dump escapes code point by
 * code point, and for a long context that was most of a send's CPU time
 * (docs/http.md, "Memory under a burst", has the figures).
 */
#include "provider/shape.h"

#include <stdlib.h>
#include <string.h>

typedef void (*emit_fn)(const char *role, const char *content, void *ctx);

static int is_empty(const char *s)
{
	return !s || !*s;
}

void shape_json_str(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;
	unsigned char c;

	buf_addch(b, '"');
	for (; *s; s++) {
		c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_add(b, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			buf_addch(b, '\\');
			buf_addch(b, (char)c);
		} else if (c == '\n') {
			buf_adds(b, "\\n");
		} else if (c == '\t') {
			buf_adds(b, "\\t");
		} else if (c == '\r') {
			buf_adds(b, "\\r");
		} else {
			char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };

			buf_adds(b, u);
		}
	}
	buf_add(b, run, (size_t)(s - run));
	buf_addch(b, '"');
}

/* Calls emit for each OpenAI message: the system text first, then the non-empty ones. */
static void walk_openai(const char *system, const struct provider_msg *msgs, size_t n,
			emit_fn emit, void *ctx)
{
	if (!is_empty(system))
		emit("system", system, ctx);
	for (size_t i = 0; i < n; i++)
		if (msgs[i].role && !is_empty(msgs[i].content))
			emit(msgs[i].role, msgs[i].content, ctx);
}

static const char *chat_role(const char *role)
{
	if (role && !strcmp(role, "user"))
		return "user";
	if (role && !strcmp(role, "assistant"))
		return "assistant";
	return NULL;
}

/* Calls emit for each message of the strictly alternating list (see shape.h). */
static void walk_alternate(const struct provider_msg *msgs, size_t n, emit_fn emit, void *ctx)
{
	struct buf last = BUF_INIT(0);
	const char *last_role = NULL, *role;

	for (size_t i = 0; i < n; i++) {
		role = chat_role(msgs[i].role);
		if (!role || is_empty(msgs[i].content))
			continue;
		if (last_role && last_role == role) {
			buf_adds(&last, "\n\n");
			buf_adds(&last, msgs[i].content);
			continue;
		}
		if (last_role)
			emit(last_role, last.ptr, ctx);
		else if (role[0] == 'a')
			emit("user", SHAPE_PLACEHOLDER, ctx);
		buf_reset(&last);
		buf_adds(&last, msgs[i].content);
		last_role = role;
	}
	if (last_role)
		emit(last_role, last.ptr, ctx);
	buf_release(&last);
}

static void emit_json(const char *role, const char *content, void *ctx)
{
	json_array_append_new(ctx, json_pack("{s:s, s:s}", "role", role, "content", content));
}

struct text_ctx {
	struct buf *b;
	int first;
};

static void emit_text(const char *role, const char *content, void *ctx)
{
	struct text_ctx *t = ctx;

	buf_adds(t->b, t->first ? "{\"role\":" : ",{\"role\":");
	t->first = 0;
	shape_json_str(t->b, role);
	buf_adds(t->b, ",\"content\":");
	shape_json_str(t->b, content);
	buf_addch(t->b, '}');
}

json_t *shape_openai_messages(const char *system, const struct provider_msg *msgs, size_t n)
{
	json_t *a = json_array();

	walk_openai(system, msgs, n, emit_json, a);
	return a;
}

json_t *shape_alternate(const struct provider_msg *msgs, size_t n)
{
	json_t *a = json_array();

	walk_alternate(msgs, n, emit_json, a);
	return a;
}

void shape_openai_messages_write(struct buf *b, const char *system,
				 const struct provider_msg *msgs, size_t n)
{
	struct text_ctx t = { b, 1 };

	buf_addch(b, '[');
	walk_openai(system, msgs, n, emit_text, &t);
	buf_addch(b, ']');
}

void shape_alternate_write(struct buf *b, const struct provider_msg *msgs, size_t n)
{
	struct text_ctx t = { b, 1 };

	buf_addch(b, '[');
	walk_alternate(msgs, n, emit_text, &t);
	buf_addch(b, ']');
}

char *shape_system(const char *system, const struct provider_msg *msgs, size_t n)
{
	struct buf b = BUF_INIT(0);

	if (!is_empty(system))
		buf_adds(&b, system);
	for (size_t i = 0; i < n; i++) {
		if (!msgs[i].role || strcmp(msgs[i].role, "system") || is_empty(msgs[i].content))
			continue;
		if (b.len)
			buf_adds(&b, "\n\n");
		buf_adds(&b, msgs[i].content);
	}
	return buf_detach(&b, NULL);
}

char *shape_body(json_t *head, const char *key, const struct buf *value)
{
	char *h = json_dumps(head, JSON_COMPACT);
	struct buf b = BUF_INIT(0);
	size_t n = strlen(h);

	/* h is a non-empty object "{...}": reopen it and add the pre-rendered member */
	buf_add(&b, h, n - 1);
	if (n > 2)
		buf_addch(&b, ',');
	shape_json_str(&b, key);
	buf_addch(&b, ':');
	buf_add(&b, value->ptr, value->len);
	buf_addch(&b, '}');
	free(h);
	return buf_detach(&b, NULL);
}
