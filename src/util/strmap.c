/*
 * strmap.c -- strings to numbers by open addressing (see strmap.h).
 */
#include "util/strmap.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static size_t slot(const struct strmap *m, const char *key)
{
	size_t h = 5381;

	for (const char *p = key; *p; p++)
		h = h * 33 + (unsigned char)*p;
	/*
	 * The low bits alone hash keys that differ only before their last
	 * bytes into neighbouring slots (search's keys share a Space and a
	 * field), and linear probing then walks runs: mix the high bits down.
	 */
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	return (h >> 32) & (m->cap - 1);
}

/* The slot holding key, or the empty one where it would go. */
static size_t find(const struct strmap *m, const char *key)
{
	size_t i = slot(m, key);

	while (m->keys[i] && strcmp(m->keys[i], key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void grow(struct strmap *m)
{
	struct strmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 256;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->values = xcalloc(m->cap, sizeof(*m->values));
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.keys[i])
			continue;
		size_t j = find(m, old.keys[i]);

		m->keys[j] = old.keys[i];
		m->values[j] = old.values[i];
	}
	free(old.keys);
	free(old.values);
}

void strmap_put(struct strmap *m, const char *key, size_t value)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap)
		grow(m);
	i = find(m, key);
	if (!m->keys[i]) {
		m->keys[i] = xstrdup(key);
		m->n++;
	}
	m->values[i] = value;
}

int strmap_get(const struct strmap *m, const char *key, size_t *value)
{
	size_t i;

	if (!m->cap || !key)
		return 0;
	i = find(m, key);
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
	memset(m, 0, sizeof(*m));
}
