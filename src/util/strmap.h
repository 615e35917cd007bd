/*
 * strmap.h -- a map from strings to numbers (open addressing, keys
 * copied), for the walks over whole histories that must not go quadratic:
 * hashes seen in a bundle, marks of a git export.
 */
#ifndef SMRITI_STRMAP_H
#define SMRITI_STRMAP_H

#include <stddef.h>

struct strmap {
	char **keys;
	size_t *values;
	size_t *hashes;   /* each key's, so that growing never hashes again */
	size_t cap, n;
};

#define STRMAP_INIT { NULL, NULL, NULL, 0, 0 }

/* Sets key to value (replacing an earlier value). */
void strmap_put(struct strmap *m, const char *key, size_t value);
/* 1 and *value when key is there (value may be NULL), else 0. */
int strmap_get(const struct strmap *m, const char *key, size_t *value);
void strmap_release(struct strmap *m);
/* The hash the map gives key (for a table of its own keyed by several strings). */
size_t strmap_hash(const char *key);

#endif
