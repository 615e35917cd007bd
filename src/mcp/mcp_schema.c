/*
 * mcp_schema.c -- checks tool arguments against the tools' inputSchema.
 *
 * Only the JSON Schema keywords Smriti's own schemas use are understood:
 * type (one name or a list), properties, required, additionalProperties
 * (false), items, anyOf, enum, minimum, maximum and minLength.  Unknown
 * keywords are ignored, as JSON Schema says.  The checks stop at the first
 * problem and name it by its path ("decisions[2]"), so an agent can fix the
 * call.  Deeper rules (a task's status, an artifact's content) stay with the
 * domain, which reports them in the same words for every transport.
 */
#include "mcp/mcp_int.h"
#include "util/utf8.h"

#include <stdio.h>
#include <string.h>

static const char *type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static int has_type(const char *t, const json_t *v)
{
	if (!strcmp(t, "object"))
		return json_is_object(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "integer"))
		return json_is_integer(v);
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	if (!strcmp(t, "null"))
		return json_is_null(v);
	return 0;
}

/* "a string", "a string or null", ... for a type keyword. */
static void type_words(const json_t *type, char *out, size_t size)
{
	size_t i, used = 0;
	json_t *t;

	if (json_is_string(type)) {
		snprintf(out, size, "%s", json_string_value(type));
		return;
	}
	out[0] = '\0';
	json_array_foreach(type, i, t) {
		int n = snprintf(out + used, size - used, "%s%s", i ? " or " : "",
				 json_string_value(t));

		if (n < 0 || (size_t)n >= size - used)
			return;
		used += (size_t)n;
	}
}

static int check_type(const json_t *type, const json_t *v, const char *path, char *msg,
		      size_t size)
{
	char words[64];
	size_t i;
	json_t *t;

	if (!type)
		return 0;
	if (json_is_string(type) && has_type(json_string_value(type), v))
		return 0;
	json_array_foreach(type, i, t)
		if (has_type(json_string_value(t), v))
			return 0;
	type_words(type, words, sizeof(words));
	snprintf(msg, size, "argument '%s' must be of type %s, not %s", path, words, type_of(v));
	return -1;
}

static int check(const json_t *schema, const json_t *v, const char *path, char *msg,
		 size_t size);

static int check_object(const json_t *schema, const json_t *v, const char *path, char *msg,
			size_t size)
{
	const json_t *props = json_object_get(schema, "properties");
	const json_t *req = json_object_get(schema, "required");
	const char *key;
	char sub[256];
	size_t i;
	json_t *x;

	json_array_foreach(req, i, x)
		if (!json_object_get(v, json_string_value(x))) {
			snprintf(msg, size, "missing required argument '%s%s%s'", path,
				 *path ? "." : "", json_string_value(x));
			return -1;
		}
	json_object_foreach((json_t *)v, key, x) {
		const json_t *ps = json_object_get(props, key);

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		if (!ps && json_is_false(json_object_get(schema, "additionalProperties"))) {
			snprintf(msg, size, "unknown argument '%s'", sub);
			return -1;
		}
		if (ps && check(ps, x, sub, msg, size))
			return -1;
	}
	return 0;
}

static int check_array(const json_t *schema, const json_t *v, const char *path, char *msg,
		       size_t size)
{
	const json_t *items = json_object_get(schema, "items");
	char sub[256];
	size_t i;
	json_t *x;

	if (!items)
		return 0;
	json_array_foreach(v, i, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (check(items, x, sub, msg, size))
			return -1;
	}
	return 0;
}

/*
 * anyOf: the first alternative whose type fits decides (so the message is
 * about that shape); when no type fits, the message lists the types.
 */
static int check_any_of(const json_t *any, const json_t *v, const char *path, char *msg,
			size_t size)
{
	char scratch[8], words[96] = "";
	size_t i, used = 0;
	json_t *alt, *t;

	json_array_foreach(any, i, alt)
		if (!check_type(json_object_get(alt, "type"), v, path, scratch, sizeof(scratch)))
			return check(alt, v, path, msg, size);
	json_array_foreach(any, i, alt) {
		t = json_object_get(alt, "type");
		if (json_is_string(t) && used + 32 < sizeof(words))
			used += (size_t)snprintf(words + used, sizeof(words) - used, "%s%s",
						 used ? " or " : "", json_string_value(t));
	}
	snprintf(msg, size, "argument '%s' must be of type %s, not %s", path, words, type_of(v));
	return -1;
}

static int check_scalar(const json_t *schema, const json_t *v, const char *path, char *msg,
			size_t size)
{
	const json_t *min = json_object_get(schema, "minimum");
	const json_t *max = json_object_get(schema, "maximum");
	const json_t *min_len = json_object_get(schema, "minLength");

	if (json_is_integer(v) && json_is_integer(min) &&
	    json_integer_value(v) < json_integer_value(min)) {
		snprintf(msg, size, "argument '%s' must be at least %lld", path,
			 (long long)json_integer_value(min));
		return -1;
	}
	if (json_is_integer(v) && json_is_integer(max) &&
	    json_integer_value(v) > json_integer_value(max)) {
		snprintf(msg, size, "argument '%s' must be at most %lld", path,
			 (long long)json_integer_value(max));
		return -1;
	}
	if (json_is_string(v) && json_is_integer(min_len) &&
	    (long long)utf8_chars(json_string_value(v), json_string_length(v)) <
	    json_integer_value(min_len)) {
		snprintf(msg, size, "argument '%s' must not be empty", path);
		return -1;
	}
	return 0;
}

static int check_enum(const json_t *values, const json_t *v, const char *path, char *msg,
		      size_t size)
{
	size_t i;
	json_t *x;

	if (!values)
		return 0;
	json_array_foreach(values, i, x)
		if (json_equal(x, v))
			return 0;
	snprintf(msg, size, "argument '%s' has a value that is not allowed", path);
	return -1;
}

static int check(const json_t *schema, const json_t *v, const char *path, char *msg,
		 size_t size)
{
	const json_t *any = json_object_get(schema, "anyOf");

	if (any)
		return check_any_of(any, v, path, msg, size);
	if (check_type(json_object_get(schema, "type"), v, path, msg, size))
		return -1;
	if (check_enum(json_object_get(schema, "enum"), v, path, msg, size))
		return -1;
	if (json_is_object(v))
		return check_object(schema, v, path, msg, size);
	if (json_is_array(v))
		return check_array(schema, v, path, msg, size);
	return check_scalar(schema, v, path, msg, size);
}

int mcp_schema_check(const json_t *schema, const json_t *v, char *msg, size_t size)
{
	if (json_is_object(v) && !json_object_get(schema, "anyOf"))
		return check_object(schema, v, "", msg, size);
	return check(schema, v, "", msg, size);
}
