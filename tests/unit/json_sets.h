/*
 * json_sets.h -- JSON arrays compared as sets, and merge conflicts with
 * their sides swapped: how the merge tests (tests/unit/test_merge.c) and
 * the merge fuzz target (fuzz/merge.c), two separate programs, check that
 * a merge one way is the merge the other way.
 */
#ifndef SMRITI_TESTS_JSON_SETS_H
#define SMRITI_TESTS_JSON_SETS_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static inline int json_sets_by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* arr's elements as a sorted array of their canonical texts (a set); new reference. */
static inline json_t *json_as_set(const json_t *arr)
{
	size_t n = json_array_size(arr);
	char **v = calloc(n + 1, sizeof(*v));
	json_t *out = json_array();

	if (!v)
		abort();
	for (size_t i = 0; i < n; i++)
		v[i] = json_dumps(json_array_get(arr, i),
				  JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
	qsort(v, n, sizeof(*v), json_sets_by_text);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(out, json_string(v[i]));
		free(v[i]);
	}
	free(v);
	return out;
}

/* merge's conflicts with ours and theirs swapped, as a set; new reference. */
static inline json_t *conflicts_mirrored(const json_t *conflicts)
{
	json_t *m = json_array(), *c, *out;
	size_t i;

	json_array_foreach(conflicts, i, c) {
		json_t *d = json_deep_copy(c);

		json_object_set(d, "ours", json_object_get(c, "theirs"));
		json_object_set(d, "theirs", json_object_get(c, "ours"));
		json_array_append_new(m, d);
	}
	out = json_as_set(m);
	json_decref(m);
	return out;
}

#endif
