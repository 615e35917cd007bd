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
 *
 * Every call checks, so the work a schema alone decides is done once per
 * process (ops/schema_node.c compiles it), and a path is put into words
 * only for the message of a check that fails.
 */
#include "ops/decl.h"
#include "ops/schema_node.h"
#include "util/utf8.h"

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

/*
 * Where the value being checked sits: a chain of steps on the stack, each a
 * member's key or an item's index, put into words ("decisions[2].status")
 * only when a check fails.  Most calls pass, and writing every member's
 * path as it was visited cost more than the checks themselves.
 */
struct path {
	const struct path *up;          /* NULL at the top level */
	const char *key;                /* NULL for an item of an array */
	size_t index;
	int empty;                      /* its words are "": the top level, or "" keys under it */
};

#define PATH_SIZE 256                   /* a longer path is cut to 255 bytes */

static struct path key_step(const struct path *up, const char *key)
{
	return (struct path){ up, key, 0, up->empty && !*key };
}

static struct path index_step(const struct path *up, size_t index)
{
	return (struct path){ up, NULL, index, 0 };
}

/* Writes p's words into out[PATH_SIZE]; their length. */
static size_t render(const struct path *p, char *out)
{
	size_t used;
	int n;

	if (!p->up) {
		*out = '\0';
		return 0;
	}
	used = render(p->up, out);
	if (p->key)
		n = snprintf(out + used, PATH_SIZE - used, "%s%s", used ? "." : "", p->key);
	else
		n = snprintf(out + used, PATH_SIZE - used, "[%zu]", p->index);
	return used + (size_t)n < PATH_SIZE ? used + (size_t)n : PATH_SIZE - 1;
}

/* "missing required parameter 'space'": what, the noun and the path's words; -1. */
static int fail(struct check *c, enum smr_rc rc, const struct path *path, const char *what)
{
	char at[PATH_SIZE];

	render(path, at);
	snprintf(c->msg, c->size, "%s %s '%s'", what, c->noun, at);
	c->rc = rc;
	return -1;
}

/* "parameter 'tasks[0]' " and then fmt's words: a value that does not fit; -1. */
static int fail_at(struct check *c, const struct path *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct check *c, const struct path *path, const char *fmt, ...)
{
	char at[PATH_SIZE];
	size_t used;
	va_list ap;

	render(path, at);
	used = (size_t)snprintf(c->msg, c->size, "%s '%s' ", c->noun, at);
	if (used < c->size) {
		va_start(ap, fmt);
		vsnprintf(c->msg + used, c->size - used, fmt, ap);
		va_end(ap);
	}
	c->rc = SMR_EINVAL;
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

static int check(struct check *c, const struct schema_node *n, const json_t *v,
		 const struct path *path);

static int check_required(struct check *c, const struct schema_node *n, const json_t *v,
			  const struct path *path)
{
	size_t i;
	json_t *x;

	json_array_foreach(n->kw.required, i, x) {
		const json_t *have = json_object_get(v, json_string_value(x));
		struct path sub = key_step(path, json_string_value(x));

		if (!have || (json_is_null(have) && path->empty))
			return fail(c, SMR_EUSAGE, &sub, "missing required");
	}
	return 0;
}

static int check_object(struct check *c, const struct schema_node *n, const json_t *v,
			const struct path *path)
{
	const char *key;
	json_t *x;

	if (check_required(c, n, v, path))
		return -1;
	json_object_foreach((json_t *)v, key, x) {
		const struct schema_node *ps = schema_member(n, key);
		struct path sub = key_step(path, key);

		/* a top-level null is an absent parameter, as the operations read them */
		if (json_is_null(x) && path->empty)
			continue;
		if (!ps && json_is_false(n->kw.extra))
			return fail(c, SMR_EINVAL, &sub, "unknown");
		if (!ps)
			ps = n->extra;
		if (ps && check(c, ps, x, &sub))
			return -1;
	}
	return 0;
}

static int check_array(struct check *c, const struct schema_node *n, const json_t *v,
		       const struct path *path)
{
	const json_t *min = n->kw.min_items;
	size_t i;
	json_t *x;

	if (json_is_integer(min) && (json_int_t)json_array_size(v) < json_integer_value(min))
		return fail_at(c, path, "must have at least %lld items",
			       (long long)json_integer_value(min));
	if (!n->items)
		return 0;
	json_array_foreach(v, i, x) {
		struct path sub = index_step(path, i);

		if (check(c, n->items, x, &sub))
			return -1;
	}
	return 0;
}

/*
 * anyOf: the first alternative whose type fits decides (so the message is
 * about that shape); when no type fits, the message lists the types.
 */
static int check_any_of(struct check *c, const struct schema_node *n, const json_t *v,
			const struct path *path)
{
	char words[160] = "";
	unsigned bit = schema_type_bit(v);

	for (size_t i = 0; i < n->nalts; i++)
		if (n->alts[i]->types & bit)
			return check(c, n->alts[i], v, path);
	for (size_t i = 0; i < n->nalts; i++)
		type_words(n->alts[i]->kw.type, words, sizeof(words));
	return fail_at(c, path, "must be %s, not %s", words, type_of(v));
}

/* Characters are counted only for a schema that limits them: most strings have no limit. */
static int check_string(struct check *c, const struct schema_node *n, const json_t *v,
			const struct path *path)
{
	const json_t *min = n->kw.min_len, *max = n->kw.max_len;
	long long chars = 0;

	if (json_is_integer(min) || json_is_integer(max))
		chars = (long long)utf8_chars(json_string_value(v), json_string_length(v));
	if (json_is_integer(min) && chars < json_integer_value(min))
		return json_integer_value(min) == 1 ?
		       fail_at(c, path, "must not be empty") :
		       fail_at(c, path, "must be at least %lld characters",
			       (long long)json_integer_value(min));
	if (json_is_integer(max) && chars > json_integer_value(max))
		return fail_at(c, path, "must be at most %lld characters",
			       (long long)json_integer_value(max));
	if (n->pattern && regexec(n->pattern, json_string_value(v), 0, NULL, 0))
		return fail_at(c, path, "must match %s", json_string_value(n->kw.pattern));
	return 0;
}

static int check_number(struct check *c, const struct schema_node *n, const json_t *v,
			const struct path *path)
{
	const json_t *min = n->kw.minimum, *max = n->kw.maximum;

	if (json_is_number(min) && json_number_value(v) < json_number_value(min))
		return fail_at(c, path, "must be at least %g", json_number_value(min));
	if (json_is_number(max) && json_number_value(v) > json_number_value(max))
		return fail_at(c, path, "must be at most %g", json_number_value(max));
	return 0;
}

/* "status' must be one of: open, done (not 'gone')": the values allowed, and the one given. */
static int check_enum(struct check *c, const json_t *values, const json_t *v,
		      const struct path *path)
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
	fail_at(c, path, "must be one of: %s (not %s%.40s%s)", words, given ? "" : "'",
		given ? given : json_string_value(v), given ? "" : "'");
	free(given);
	return -1;
}

static int check(struct check *c, const struct schema_node *n, const json_t *v,
		 const struct path *path)
{
	const json_t *cst = n->kw.cst;
	char words[96] = "";

	if (n->alts)
		return check_any_of(c, n, v, path);
	if (!(n->types & schema_type_bit(v))) {
		type_words(n->kw.type, words, sizeof(words));
		return fail_at(c, path, "must be %s, not %s", words, type_of(v));
	}
	if (n->kw.en && check_enum(c, n->kw.en, v, path))
		return -1;
	if (cst && !json_equal(cst, v))
		return fail_at(c, path, "must be %s",
			       json_is_string(cst) ? json_string_value(cst) : "the one value allowed");
	if (json_is_object(v))
		return check_object(c, n, v, path);
	if (json_is_array(v))
		return check_array(c, n, v, path);
	if (json_is_string(v))
		return check_string(c, n, v, path);
	return json_is_number(v) ? check_number(c, n, v, path) : 0;
}

enum smr_rc decl_check(const json_t *schema, const json_t *v, const char *noun,
		       struct smr_err *err)
{
	char msg[sizeof(err->msg)];
	struct check c = { noun, msg, sizeof(msg), SMR_OK };
	struct path top = { NULL, NULL, 0, 1 };

	if (!check(&c, schema_node(schema), v, &top))
		return SMR_OK;
	return smr_errf(err, c.rc, "%s", msg);
}
