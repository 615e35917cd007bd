/*
 * strmap.c -- strings to numbers by open addressing (see strmap.h).
 */
#include "util/strmap.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Eight bytes a step: search groups thousands of candidates by keys of a
 * hundred bytes or more, and a byte at a time was most of its grouping.
 * The final mix brings the high bits down, so that keys differing only
 * near their ends (a Space and a field shared) still spread.
 */
size_t strmap_hash(const char *key)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	size_t len = strlen(key), i = 0;
	uint64_t h = len * k, w;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, key + i, 8);
		h = (((h << 5) | (h >> 59)) ^ w) * k;
	}
	w = 0;
	memcpy(&w, key + i, len - i);
	h = (((h << 5) | (h >> 59)) ^ w) * k;
	h ^= h >> 29;
	h *= k;
	return (size_t)(h ^ (h >> 32));
}

/* The slot holding key (of hash h), or the empty one where it would go. */
static size_t find(const struct strmap *m, const char *key, size_t h)
{
	size_t i = h & (m->cap - 1);

	while (m->keys[i] && (m->hashes[i] != h || strcmp(m->keys[i], key)))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void grow(struct strmap *m)
{
	struct strmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 256;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->values = xcalloc(m->cap, sizeof(*m->values));
	m->hashes = xcalloc(m->cap, sizeof(*m->hashes));
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.keys[i])
			continue;
		size_t j = old.hashes[i] & (m->cap - 1);

		while (m->keys[j])   /* the keys are distinct: no compare */
			j = (j + 1) & (m->cap - 1);
		m->keys[j] = old.keys[i];
		m->values[j] = old.values[i];
		m->hashes[j] = old.hashes[i];
	}
	free(old.keys);
	free(old.values);
	free(old.hashes);
}

void strmap_put(struct strmap *m, const char *key, size_t value)
{
	size_t h = strmap_hash(key), i;

	if (2 * (m->n + 1) > m->cap)
		grow(m);
	i = find(m, key, h);
	if (!m->keys[i]) {
		m->keys[i] = xstrdup(key);
		m->hashes[i] = h;
		m->n++;
	}
	m->values[i] = value;
}

int strmap_get(const struct strmap *m, const char *key, size_t *value)
{
	size_t i;

	if (!m->cap || !key)
		return 0;
	i = find(m, key, strmap_hash(key));
	if (!m->keys[i])
		return 0;
	if (value)
		*value = m->values[i];
	return 1;
}

void strmap_release(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->values);
	free(m->hashes);
	memset(m, 0, sizeof(*m));
}
