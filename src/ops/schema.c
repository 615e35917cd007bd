/*
 * schema.c -- checks a JSON value against a JSON Schema of the operations'
 * declarations (see decl.h): every operation's parameters before it runs,
 * and an MCP tool's arguments against its inputSchema.
 *
 * Only the keywords the declarations use are understood: $ref (into the
 * declarations' $defs), type (one name or a list), properties, required,
 * additionalProperties (false, or a schema), items, anyOf (and oneOf, read
 * as anyOf: the declarations' alternatives never overlap), enum, const,
 * minimum, maximum, minLength, maxLength, minItems and pattern (POSIX
 * extended regular expressions).  Unknown keywords are ignored, as JSON
 * Schema says.  The check stops at the first problem and names it by its
 * path ("decisions[2].status") and, for an enum, the values allowed, so a
 * caller can fix the call.  Deeper rules (a Space name's characters, an
 * artifact's size) stay with the domain, which reports them in the same
 * words for every transport.
 */
#include "ops/decl.h"
#include "util/utf8.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check {
	const char *noun;               /* "parameter", "argument" */
	char *msg;
	size_t size;
	enum smr_rc rc;
};

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

static const char *type_article(const char *t)
{
	static const char *const names[][2] = {
		{ "object", "an object" }, { "array", "an array" }, { "string", "a string" },
		{ "integer", "an integer" }, { "number", "a number" },
		{ "boolean", "a boolean" }, { "null", "null" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i][0], t))
			return names[i][1];
	return t;
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

static int fail(struct check *c, enum smr_rc rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct check *c, enum smr_rc rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, c->size, fmt, ap);
	va_end(ap);
	c->rc = rc;
	return -1;
}

/* Appends "a string or an object" for a type keyword (a name or a list) to words. */
static void type_words(const json_t *type, char *words, size_t size)
{
	size_t i, used = strlen(words);
	json_t *t;

	if (json_is_string(type)) {
		snprintf(words + used, size - used, "%s%s", used ? " or " : "",
			 type_article(json_string_value(type)));
		return;
	}
	json_array_foreach(type, i, t) {
		used = strlen(words);
		snprintf(words + used, size - used, "%s%s", used ? " or " : "",
			 type_article(json_string_value(t)));
	}
}

static int type_fits(const json_t *type, const json_t *v)
{
	size_t i;
	json_t *t;

	if (!type)
		return 1;
	if (json_is_string(type))
		return has_type(json_string_value(type), v);
	json_array_foreach(type, i, t)
		if (has_type(json_string_value(t), v))
			return 1;
	return 0;
}

/* What a {"$ref": "#/$defs/NAME"} names, or schema itself. */
static const json_t *deref(const json_t *schema)
{
	for (int hops = 0; hops < 16; hops++) {
		const char *ref = json_string_value(json_object_get(schema, "$ref"));

		if (!ref)
			return schema;
		schema = decl_ref(ref);
	}
	BUG("the declarations' $refs go round in a circle");
}

static int check(struct check *c, const json_t *schema, const json_t *v, const char *path);

static void sub_path(char *sub, size_t size, const char *path, const char *key)
{
	snprintf(sub, size, "%s%s%s", path, *path ? "." : "", key);
}

static int check_object(struct check *c, const json_t *schema, const json_t *v,
			const char *path)
{
	const json_t *props = json_object_get(schema, "properties");
	const json_t *extra = json_object_get(schema, "additionalProperties");
	const char *key;
	char sub[256];
	size_t i;
	json_t *x;

	json_array_foreach(json_object_get(schema, "required"), i, x) {
		const json_t *have = json_object_get(v, json_string_value(x));

		sub_path(sub, sizeof(sub), path, json_string_value(x));
		if (!have || (json_is_null(have) && !*path))
			return fail(c, SMR_EUSAGE, "missing required %s '%s'", c->noun, sub);
	}
	json_object_foreach((json_t *)v, key, x) {
		const json_t *ps = json_object_get(props, key);

		/* a top-level null is an absent parameter, as the operations read them */
		if (json_is_null(x) && !*path)
			continue;
		sub_path(sub, sizeof(sub), path, key);
		if (!ps && json_is_false(extra))
			return fail(c, SMR_EINVAL, "unknown %s '%s'", c->noun, sub);
		if (!ps && json_is_object(extra))
			ps = extra;
		if (ps && check(c, ps, x, sub))
			return -1;
	}
	return 0;
}

static int check_array(struct check *c, const json_t *schema, const json_t *v, const char *path)
{
	const json_t *items = json_object_get(schema, "items");
	const json_t *min = json_object_get(schema, "minItems");
	char sub[256];
	size_t i;
	json_t *x;

	if (json_is_integer(min) && (json_int_t)json_array_size(v) < json_integer_value(min))
		return fail(c, SMR_EINVAL, "%s '%s' must have at least %lld items", c->noun, path,
			    (long long)json_integer_value(min));
	if (!items)
		return 0;
	json_array_foreach(v, i, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (check(c, items, x, sub))
			return -1;
	}
	return 0;
}

/*
 * anyOf: the first alternative whose type fits decides (so the message is
 * about that shape); when no type fits, the message lists the types.
 */
static int check_any_of(struct check *c, const json_t *any, const json_t *v, const char *path)
{
	char words[160] = "";
	size_t i;
	json_t *alt;

	json_array_foreach(any, i, alt)
		if (type_fits(json_object_get(deref(alt), "type"), v))
			return check(c, alt, v, path);
	json_array_foreach(any, i, alt)
		type_words(json_object_get(deref(alt), "type"), words, sizeof(words));
	return fail(c, SMR_EINVAL, "%s '%s' must be %s, not %s", c->noun, path, words,
		    type_of(v));
}

static int check_pattern(struct check *c, const json_t *pattern, const json_t *v,
			 const char *path)
{
	regex_t re;
	int miss;

	if (regcomp(&re, json_string_value(pattern), REG_EXTENDED | REG_NOSUB))
		BUG("the declarations' pattern '%s' does not compile", json_string_value(pattern));
	miss = regexec(&re, json_string_value(v), 0, NULL, 0);
	regfree(&re);
	if (miss)
		return fail(c, SMR_EINVAL, "%s '%s' must match %s", c->noun, path,
			    json_string_value(pattern));
	return 0;
}

static int check_string(struct check *c, const json_t *schema, const json_t *v,
			const char *path)
{
	const json_t *min = json_object_get(schema, "minLength");
	const json_t *max = json_object_get(schema, "maxLength");
	const json_t *pattern = json_object_get(schema, "pattern");
	long long n = (long long)utf8_chars(json_string_value(v), json_string_length(v));

	if (json_is_integer(min) && n < json_integer_value(min))
		return json_integer_value(min) == 1 ?
		       fail(c, SMR_EINVAL, "%s '%s' must not be empty", c->noun, path) :
		       fail(c, SMR_EINVAL, "%s '%s' must be at least %lld characters", c->noun,
			    path, (long long)json_integer_value(min));
	if (json_is_integer(max) && n > json_integer_value(max))
		return fail(c, SMR_EINVAL, "%s '%s' must be at most %lld characters", c->noun,
			    path, (long long)json_integer_value(max));
	if (json_is_string(pattern))
		return check_pattern(c, pattern, v, path);
	return 0;
}

static int check_number(struct check *c, const json_t *schema, const json_t *v,
			const char *path)
{
	const json_t *min = json_object_get(schema, "minimum");
	const json_t *max = json_object_get(schema, "maximum");

	if (json_is_number(min) && json_number_value(v) < json_number_value(min))
		return fail(c, SMR_EINVAL, "%s '%s' must be at least %g", c->noun, path,
			    json_number_value(min));
	if (json_is_number(max) && json_number_value(v) > json_number_value(max))
		return fail(c, SMR_EINVAL, "%s '%s' must be at most %g", c->noun, path,
			    json_number_value(max));
	return 0;
}

/* "status' must be one of: open, done (not 'gone')": the values allowed, and the one given. */
static int check_enum(struct check *c, const json_t *values, const json_t *v, const char *path)
{
	char words[256] = "";
	char *given;
	size_t i, used = 0;
	json_t *x;

	json_array_foreach(values, i, x)
		if (json_equal(x, v))
			return 0;
	json_array_foreach(values, i, x) {
		char *one = json_dumps(x, JSON_ENCODE_ANY);
		const char *shown = json_is_string(x) ? json_string_value(x) : one;

		if (used < sizeof(words))
			used += (size_t)snprintf(words + used, sizeof(words) - used, "%s%s",
						 i ? ", " : "", shown ? shown : "?");
		free(one);
	}
	given = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);
	fail(c, SMR_EINVAL, "%s '%s' must be one of: %s (not %s%.40s%s)", c->noun, path, words,
	     given ? "" : "'", given ? given : json_string_value(v), given ? "" : "'");
	free(given);
	return -1;
}

static int check(struct check *c, const json_t *schema, const json_t *v, const char *path)
{
	const json_t *any, *type, *en, *cst;
	char words[96] = "";

	schema = deref(schema);
	any = json_object_get(schema, "anyOf");
	if (!any)
		any = json_object_get(schema, "oneOf");
	if (any)
		return check_any_of(c, any, v, path);
	type = json_object_get(schema, "type");
	if (!type_fits(type, v)) {
		type_words(type, words, sizeof(words));
		return fail(c, SMR_EINVAL, "%s '%s' must be %s, not %s", c->noun, path, words,
			    type_of(v));
	}
	en = json_object_get(schema, "enum");
	cst = json_object_get(schema, "const");
	if (en && check_enum(c, en, v, path))
		return -1;
	if (cst && !json_equal(cst, v))
		return fail(c, SMR_EINVAL, "%s '%s' must be %s", c->noun, path,
			    json_is_string(cst) ? json_string_value(cst) : "the one value allowed");
	if (json_is_object(v))
		return check_object(c, schema, v, path);
	if (json_is_array(v))
		return check_array(c, schema, v, path);
	if (json_is_string(v))
		return check_string(c, schema, v, path);
	return json_is_number(v) ? check_number(c, schema, v, path) : 0;
}

enum smr_rc decl_check(const json_t *schema, const json_t *v, const char *noun,
		       struct smr_err *err)
{
	char msg[sizeof(err->msg)];
	struct check c = { noun, msg, sizeof(msg), SMR_OK };

	if (!check(&c, schema, v, ""))
		return SMR_OK;
	return smr_errf(err, c.rc, "%s", msg);
}
