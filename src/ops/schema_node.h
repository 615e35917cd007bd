/*
 * schema_node.h -- a JSON Schema of the declarations compiled for
 * ops/schema.c: its keywords found, its $ref followed, its types made a
 * set, its pattern compiled and its sub-schemas compiled, once per process.
 * A check then reads fields, not names: looking up fifteen keywords by
 * name in every node visited, and following every $ref through decl_ref,
 * cost more than the checks themselves.
 */
#ifndef SMRITI_SCHEMA_NODE_H
#define SMRITI_SCHEMA_NODE_H

#include <jansson.h>
#include <regex.h>

/* The keywords understood (see schema.c), each the schema's own member or NULL. */
struct keywords {
	const json_t *ref, *any_of, *one_of, *type, *en, *cst, *props, *required, *extra;
	const json_t *items, *min_items, *min_len, *max_len, *pattern, *minimum, *maximum;
};

struct schema_member {
	const char *key;
	const struct schema_node *node;
};

struct schema_node {
	struct keywords kw;             /* of the schema its $ref names, if it has one */
	unsigned types;                 /* SCHEMA_T_* bits the type keyword allows (all without one) */
	const struct schema_node *const *alts;  /* anyOf, or oneOf: nalts of them */
	size_t nalts;
	const struct schema_member *props;      /* properties, sorted by key */
	size_t nprops;
	const struct schema_node *items;        /* NULL without items */
	const struct schema_node *extra;        /* additionalProperties when it is a schema */
	const regex_t *pattern;                 /* NULL without a pattern */
};

enum {
	SCHEMA_T_OBJECT = 1, SCHEMA_T_ARRAY = 2, SCHEMA_T_STRING = 4, SCHEMA_T_INTEGER = 8,
	SCHEMA_T_REAL = 16, SCHEMA_T_BOOLEAN = 32, SCHEMA_T_NULL = 64, SCHEMA_T_ALL = 127,
};

/* v's SCHEMA_T_* bit. */
unsigned schema_type_bit(const json_t *v);

/*
 * schema compiled, the first time it is asked for; the same node every
 * time after, in every thread.  Compiled nodes are kept for the process,
 * and so is schema (with a reference): it must not change afterwards.  The
 * declarations' schemas are a fixed set, so this is bounded.  A $ref that
 * goes round in a circle or a pattern that does not compile is a BUG().
 */
const struct schema_node *schema_node(const json_t *schema);

/* The node of member key of n's properties; NULL when it has none. */
const struct schema_node *schema_member(const struct schema_node *n, const char *key);

#endif
