/*
 * test_provider_shape.c -- provider-specific shaping of the context:
 * Anthropic's strict user/assistant alternation and system placement, and
 * OpenAI's leading system message.
 */
#include "harness.h"
#include "provider/shape.h"

#include <stdlib.h>

static const char *role_at(const json_t *a, size_t i)
{
	return json_string_value(json_object_get(json_array_get(a, i), "role"));
}

static const char *content_at(const json_t *a, size_t i)
{
	return json_string_value(json_object_get(json_array_get(a, i), "content"));
}

TEST(shape_alternate_merges_same_role_runs)
{
	const struct provider_msg m[] = {
		{ "user", "a" }, { "user", "b" }, { "assistant", "c" }, { "assistant", "d" },
		{ "user", "e" },
	};
	json_t *a = shape_alternate(m, 5);

	CHECK_INT(json_array_size(a), 3);
	CHECK_STR(role_at(a, 0), "user");
	CHECK_STR(content_at(a, 0), "a\n\nb");
	CHECK_STR(role_at(a, 1), "assistant");
	CHECK_STR(content_at(a, 1), "c\n\nd");
	CHECK_STR(role_at(a, 2), "user");
	CHECK_STR(content_at(a, 2), "e");
	json_decref(a);
}

TEST(shape_alternate_starts_with_user)
{
	const struct provider_msg m[] = {
		{ "assistant", "an old reply" }, { "user", "next" },
	};
	json_t *a = shape_alternate(m, 2);

	CHECK_INT(json_array_size(a), 3);
	CHECK_STR(role_at(a, 0), "user");
	CHECK_STR(content_at(a, 0), SHAPE_PLACEHOLDER);
	CHECK_STR(role_at(a, 1), "assistant");
	CHECK_STR(content_at(a, 1), "an old reply");
	CHECK_STR(role_at(a, 2), "user");
	json_decref(a);
}

TEST(shape_alternate_drops_system_and_empty)
{
	const struct provider_msg m[] = {
		{ "system", "be brief" }, { "user", "q1" }, { "assistant", "" },
		{ "user", "q2" }, { "assistant", "r" }, { "user", "q3" },
	};
	json_t *a = shape_alternate(m, 6);
	char *sys = shape_system("preamble", m, 6);

	/* the empty reply vanishes, so q1 and q2 merge */
	CHECK_INT(json_array_size(a), 3);
	CHECK_STR(content_at(a, 0), "q1\n\nq2");
	CHECK_STR(role_at(a, 1), "assistant");
	CHECK_STR(content_at(a, 2), "q3");
	for (size_t i = 1; i < json_array_size(a); i++)
		CHECK(strcmp(role_at(a, i), role_at(a, i - 1)));
	CHECK_STR(sys, "preamble\n\nbe brief");
	free(sys);
	json_decref(a);
}

TEST(shape_openai_puts_system_first)
{
	const struct provider_msg m[] = { { "user", "q" }, { "user", "q2" } };
	json_t *a = shape_openai_messages("sys", m, 2);
	json_t *b = shape_openai_messages("", m, 1);

	CHECK_INT(json_array_size(a), 3);
	CHECK_STR(role_at(a, 0), "system");
	CHECK_STR(content_at(a, 0), "sys");
	CHECK_STR(role_at(a, 2), "user");       /* OpenAI takes same-role runs as they are */
	CHECK_INT(json_array_size(b), 1);
	CHECK_STR(role_at(b, 0), "user");
	json_decref(a);
	json_decref(b);
}

TEST(shape_writers_match_the_json_builders)
{
	const struct provider_msg m[] = {
		{ "assistant", "starts \"quoted\" \\ back" }, { "user", "tab\there\nnew\x01line\x1f" },
		{ "user", "\xF0\x9F\x98\x80 \xE6\xBC\xA2 e\xCC\x81 \x7f" }, { "system", "sys" },
		{ "assistant", "" }, { "assistant", "end" }, { "user", "</script>" },
	};
	struct buf b = BUF_INIT(0);
	json_t *built, *parsed;

	shape_alternate_write(&b, m, 7);
	parsed = json_loads(b.ptr, 0, NULL);
	built = shape_alternate(m, 7);
	CHECK(parsed != NULL);
	CHECK(json_equal(parsed, built));
	CHECK(strstr(b.ptr, "\\u0001") != NULL);
	CHECK(strstr(b.ptr, "\\u001f") != NULL);
	json_decref(parsed);
	json_decref(built);
	buf_reset(&b);
	shape_openai_messages_write(&b, "be \"brief\"", m, 7);
	parsed = json_loads(b.ptr, 0, NULL);
	built = shape_openai_messages("be \"brief\"", m, 7);
	CHECK(parsed != NULL);
	CHECK(json_equal(parsed, built));
	json_decref(parsed);
	json_decref(built);
	buf_reset(&b);
	shape_openai_messages_write(&b, NULL, NULL, 0);
	CHECK_STR(b.ptr, "[]");
	buf_release(&b);
}

TEST(shape_body_appends_a_member)
{
	json_t *head = json_pack("{s:s, s:i}", "model", "m", "max_tokens", 5);
	struct buf v = BUF_INIT(0);
	char *s;
	json_t *doc;

	buf_adds(&v, "[1,2]");
	s = shape_body(head, "messages", &v);
	doc = json_loads(s, 0, NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "model")), "m");
	CHECK_INT(json_array_size(json_object_get(doc, "messages")), 2);
	free(s);
	json_decref(doc);
	json_decref(head);
	head = json_object();
	s = shape_body(head, "k", &v);
	CHECK_STR(s, "{\"k\":[1,2]}");
	free(s);
	json_decref(head);
	buf_release(&v);
}
