/*
 * shape.c -- wire shapes of the message list per provider (see shape.h).
 */
#include "provider/shape.h"
#include "util/buf.h"

#include <string.h>

static int is_empty(const char *s)
{
	return !s || !*s;
}

json_t *shape_openai_messages(const char *system, const struct provider_msg *msgs, size_t n)
{
	json_t *a = json_array();

	if (!is_empty(system))
		json_array_append_new(a, json_pack("{s:s, s:s}", "role", "system",
						   "content", system));
	for (size_t i = 0; i < n; i++) {
		if (is_empty(msgs[i].content))
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s}", "role", msgs[i].role,
						   "content", msgs[i].content));
	}
	return a;
}

/* Appends one message to the alternating list, merging it into the last if same role. */
static void push_alternating(json_t *a, struct buf *last, const char **last_role,
			     const char *role, const char *content)
{
	if (*last_role && !strcmp(*last_role, role)) {
		buf_adds(last, "\n\n");
		buf_adds(last, content);
		return;
	}
	if (*last_role)
		json_array_append_new(a, json_pack("{s:s, s:s}", "role", *last_role,
						   "content", last->ptr));
	buf_reset(last);
	buf_adds(last, content);
	*last_role = role;
}

json_t *shape_alternate(const struct provider_msg *msgs, size_t n)
{
	json_t *a = json_array();
	struct buf last = BUF_INIT(0);
	const char *last_role = NULL, *role;

	for (size_t i = 0; i < n; i++) {
		if (is_empty(msgs[i].content) || !msgs[i].role)
			continue;
		if (!strcmp(msgs[i].role, "user"))
			role = "user";
		else if (!strcmp(msgs[i].role, "assistant"))
			role = "assistant";
		else
			continue;
		if (!last_role && role[0] == 'a')
			push_alternating(a, &last, &last_role, "user", SHAPE_PLACEHOLDER);
		push_alternating(a, &last, &last_role, role, msgs[i].content);
	}
	if (last_role)
		json_array_append_new(a, json_pack("{s:s, s:s}", "role", last_role,
						   "content", last.ptr));
	buf_release(&last);
	return a;
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
