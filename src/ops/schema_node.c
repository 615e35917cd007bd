/*
 * schema_node.c -- compiles the declarations' JSON Schemas for
 * ops/schema.c (see schema_node.h), once per process.
 *
 * Compiled nodes are found by the address of the schema they came from, in
 * one table under one lock: a check takes the lock once, for its top
 * schema, and then walks nodes that never change.  A node is entered
 * before its sub-schemas are compiled, so a schema that contains itself
 * (through $defs) compiles to a cycle, not an endless recursion.  Nothing
 * is freed: a node lives as long as the process, like the declarations.
 */
#include "ops/schema_node.h"
#include "ops/decl.h"
#include "util/err.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Nodes by the address of their schema: open addressing, grown at half full. */
struct slot {
	const json_t *schema;
	struct schema_node *node;
};

static pthread_mutex_t nodes_mu = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static size_t nslots, nused;

static size_t slot_index(const json_t *schema, size_t n)
{
	uint64_t h = (uint64_t)(uintptr_t)schema * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (n - 1);
}

static struct slot *slot_of(struct slot *table, size_t n, const json_t *schema)
{
	size_t i = slot_index(schema, n);

	while (table[i].schema && table[i].schema != schema)
		i = (i + 1) & (n - 1);
	return &table[i];
}

static struct schema_node *lookup(const json_t *schema)
{
	return nslots ? slot_of(slots, nslots, schema)->node : NULL;
}

static void grow(void)
{
	size_t n = nslots ? nslots * 2 : 256;
	struct slot *table = xcalloc(n, sizeof(*table));

	for (size_t i = 0; i < nslots; i++)
		if (slots[i].schema)
			*slot_of(table, n, slots[i].schema) = slots[i];
	free(slots);
	slots = table;
	nslots = n;
}

static void enter(const json_t *schema, struct schema_node *node)
{
	struct slot *s;

	if (2 * (nused + 1) > nslots)
		grow();
	s = slot_of(slots, nslots, schema);
	if (!s->schema)
		nused++;
	s->schema = schema;
	s->node = node;
}

/* Where key's value goes in kw, or NULL for a keyword not understood ("description"). */
static const json_t **keyword_slot(struct keywords *kw, const char *key)
{
	switch (key[0]) {
	case '$':
		return !strcmp(key, "$ref") ? &kw->ref : NULL;
	case 'a':
		return !strcmp(key, "anyOf") ? &kw->any_of :
		       !strcmp(key, "additionalProperties") ? &kw->extra : NULL;
	case 'c':
		return !strcmp(key, "const") ? &kw->cst : NULL;
	case 'e':
		return !strcmp(key, "enum") ? &kw->en : NULL;
	case 'i':
		return !strcmp(key, "items") ? &kw->items : NULL;
	case 'm':
		return !strcmp(key, "minItems") ? &kw->min_items :
		       !strcmp(key, "minLength") ? &kw->min_len :
		       !strcmp(key, "maxLength") ? &kw->max_len :
		       !strcmp(key, "minimum") ? &kw->minimum :
		       !strcmp(key, "maximum") ? &kw->maximum : NULL;
	case 'o':
		return !strcmp(key, "oneOf") ? &kw->one_of : NULL;
	case 'p':
		return !strcmp(key, "properties") ? &kw->props :
		       !strcmp(key, "pattern") ? &kw->pattern : NULL;
	case 'r':
		return !strcmp(key, "required") ? &kw->required : NULL;
	case 't':
		return !strcmp(key, "type") ? &kw->type : NULL;
	default:
		return NULL;
	}
}

static void read_keywords(const json_t *schema, struct keywords *kw)
{
	const json_t **slot;
	const char *key;
	json_t *v;

	memset(kw, 0, sizeof(*kw));
	json_object_foreach((json_t *)schema, key, v)
		if ((slot = keyword_slot(kw, key)))
			*slot = v;
}

/* The schema a {"$ref": "#/$defs/NAME"} names (through any chain of them), or schema itself. */
static const json_t *deref(const json_t *schema, struct keywords *kw)
{
	for (int hops = 0; hops < 16; hops++) {
		read_keywords(schema, kw);
		if (!json_is_string(kw->ref))
			return schema;
		schema = decl_ref(json_string_value(kw->ref));
	}
	BUG("the declarations' $refs go round in a circle");
}

unsigned schema_type_bit(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return SCHEMA_T_OBJECT;
	case JSON_ARRAY:
		return SCHEMA_T_ARRAY;
	case JSON_STRING:
		return SCHEMA_T_STRING;
	case JSON_INTEGER:
		return SCHEMA_T_INTEGER;
	case JSON_REAL:
		return SCHEMA_T_REAL;
	case JSON_TRUE:
	case JSON_FALSE:
		return SCHEMA_T_BOOLEAN;
	default:
		return SCHEMA_T_NULL;
	}
}

/* The bits of one type name; 0 for a name JSON Schema does not have. */
static unsigned name_bits(const char *t)
{
	static const struct {
		const char *name;
		unsigned bits;
	} names[] = {
		{ "object", SCHEMA_T_OBJECT }, { "array", SCHEMA_T_ARRAY },
		{ "string", SCHEMA_T_STRING }, { "integer", SCHEMA_T_INTEGER },
		{ "number", SCHEMA_T_INTEGER | SCHEMA_T_REAL }, { "boolean", SCHEMA_T_BOOLEAN },
		{ "null", SCHEMA_T_NULL },
	};

	for (size_t i = 0; t && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, t))
			return names[i].bits;
	return 0;
}

/* The type keyword (a name, a list of names, or absent) as a set. */
static unsigned type_bits(const json_t *type)
{
	unsigned bits = 0;
	size_t i;
	json_t *t;

	if (!type)
		return SCHEMA_T_ALL;
	if (json_is_string(type))
		return name_bits(json_string_value(type));
	json_array_foreach(type, i, t)
		bits |= name_bits(json_string_value(t));
	return bits;
}

static const struct schema_node *compile(const json_t *schema);

static const struct schema_node *const *compile_alts(const json_t *any, size_t *n)
{
	const struct schema_node **alts;
	size_t i;
	json_t *alt;

	*n = json_array_size(any);
	alts = xcalloc(*n ? *n : 1, sizeof(*alts));
	json_array_foreach(any, i, alt)
		alts[i] = compile(alt);
	return alts;
}

static int member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct schema_member *)a)->key,
		      ((const struct schema_member *)b)->key);
}

static const struct schema_member *compile_props(const json_t *props, size_t *n)
{
	struct schema_member *m = xcalloc(json_object_size(props) + 1, sizeof(*m));
	const char *key;
	json_t *p;

	*n = 0;
	json_object_foreach((json_t *)props, key, p)
		m[(*n)++] = (struct schema_member){ key, compile(p) };
	qsort(m, *n, sizeof(*m), member_cmp);
	return m;
}

static const regex_t *compile_pattern(const json_t *pattern)
{
	regex_t *re;

	if (!json_is_string(pattern))
		return NULL;
	re = xmalloc(sizeof(*re));
	if (regcomp(re, json_string_value(pattern), REG_EXTENDED | REG_NOSUB))
		BUG("the declarations' pattern '%s' does not compile", json_string_value(pattern));
	return re;
}

/* Fills n's sub-schemas: after n is entered, so a schema that contains itself ends. */
static void compile_parts(struct schema_node *n)
{
	const json_t *any = n->kw.any_of ? n->kw.any_of : n->kw.one_of;

	if (any)
		n->alts = compile_alts(any, &n->nalts);
	if (json_is_object(n->kw.props))
		n->props = compile_props(n->kw.props, &n->nprops);
	if (n->kw.items)
		n->items = compile(n->kw.items);
	if (json_is_object(n->kw.extra))
		n->extra = compile(n->kw.extra);
	n->pattern = compile_pattern(n->kw.pattern);
}

/* Called with nodes_mu held. */
static const struct schema_node *compile(const json_t *schema)
{
	struct schema_node *n = lookup(schema);
	struct keywords kw;
	const json_t *target;

	if (n)
		return n;
	target = deref(schema, &kw);
	n = lookup(target);
	if (!n) {
		n = xcalloc(1, sizeof(*n));
		n->kw = kw;
		n->types = type_bits(kw.type);
		enter(target, n);
		compile_parts(n);
	}
	enter(schema, n);
	return n;
}

const struct schema_node *schema_node(const json_t *schema)
{
	const struct schema_node *n;

	pthread_mutex_lock(&nodes_mu);
	n = lookup(schema);
	if (!n) {
		/* held, so no other schema is ever made at this address */
		json_incref((json_t *)schema);
		n = compile(schema);
	}
	pthread_mutex_unlock(&nodes_mu);
	return n;
}

static int member_key_cmp(const void *key, const void *m)
{
	return strcmp(key, ((const struct schema_member *)m)->key);
}

const struct schema_node *schema_member(const struct schema_node *n, const char *key)
{
	const struct schema_member *m = n->nprops ?
		bsearch(key, n->props, n->nprops, sizeof(*n->props), member_key_cmp) : NULL;

	return m ? m->node : NULL;
}
