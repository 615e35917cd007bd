/*
 * setup_json.c -- the JSON edits of `smriti setup` (setup.h): add or take
 * out what is Smriti's in a host's settings, leaving the rest untouched.
 */
#include "cli/setup.h"

#include <string.h>

int setup_hook_is_ours(const char *command)
{
	return command && strstr(command, "smriti prime") != NULL;
}

static int hook_ours(const json_t *hook)
{
	return setup_hook_is_ours(json_string_value(json_object_get(hook, "command")));
}

static int group_ours(const json_t *group)
{
	const json_t *hooks = json_object_get(group, "hooks"), *h;
	size_t i;

	json_array_foreach(hooks, i, h)
		if (hook_ours(h))
			return 1;
	return 0;
}

static int same_id(const json_t *a, const json_t *b)
{
	return json_equal(json_object_get(a, "id"), json_object_get(b, "id"));
}

/* 1 when item of an array edited by e is the one e owns. */
static int owned(const struct jedit *e, const json_t *item)
{
	if (e->kind == JEDIT_GROUP)
		return group_ours(item);
	if (e->kind == JEDIT_HOOK)
		return hook_ours(item);
	return same_id(item, e->value);
}

/*
 * The container at e's path (all but the last key for members), made when
 * make; NULL when absent (or not an object/array where one is needed).
 */
static json_t *walk(json_t *doc, const struct jedit *e, int make, const char **last)
{
	json_t *at = doc;
	size_t n = 0;

	while (n < JEDIT_DEPTH && e->path[n])
		n++;
	if (e->kind == JEDIT_MEMBER || e->kind == JEDIT_DEFAULT)
		n--;
	*last = e->path[n];
	for (size_t i = 0; i < n && at; i++) {
		json_t *next = json_object_get(at, e->path[i]);
		int array = i + 1 == n && e->kind != JEDIT_MEMBER && e->kind != JEDIT_DEFAULT;

		if (!next && make) {
			next = array ? json_array() : json_object();
			json_object_set_new(at, e->path[i], next);
		}
		at = next && (array ? json_is_array(next) : json_is_object(next)) ? next : NULL;
	}
	return at;
}

/* Takes out the array's owned items; 1 if any went. */
static int drop_owned(json_t *arr, const struct jedit *e)
{
	int changed = 0;

	for (size_t i = json_array_size(arr); i-- > 0;) {
		if (owned(e, json_array_get(arr, i))) {
			json_array_remove(arr, i);
			changed = 1;
		}
	}
	return changed;
}

static int add_one(json_t *doc, const struct jedit *e)
{
	const char *last;
	json_t *at = walk(doc, e, 1, &last), *old;
	size_t mine = 0, same = 0, i;

	if (!at)
		return 0;           /* a container of another type: left as the user has it */
	if (e->kind == JEDIT_DEFAULT) {
		if (json_object_get(at, last))
			return 0;
		return !json_object_set(at, last, e->value);
	}
	if (e->kind == JEDIT_MEMBER) {
		old = json_object_get(at, last);
		return json_equal(old, e->value) ? 0 : !json_object_set(at, last, e->value);
	}
	json_array_foreach(at, i, old) {
		mine += owned(e, old);
		same += owned(e, old) && json_equal(old, e->value);
	}
	if (mine == 1 && same == 1)
		return 0;           /* exactly ours, once: nothing to do */
	drop_owned(at, e);
	json_array_append(at, e->value);
	return 1;
}

/* Deletes empty objects and arrays along e's path, deepest first. */
static void prune(json_t *doc, const struct jedit *e)
{
	for (int depth = JEDIT_DEPTH; depth > 0; depth--) {
		json_t *at = doc, *v;
		int i;

		for (i = 0; i < depth - 1 && e->path[i] && at; i++)
			at = json_object_get(at, e->path[i]);
		if (i != depth - 1 || !e->path[i] || !json_is_object(at))
			continue;
		v = json_object_get(at, e->path[i]);
		if ((json_is_object(v) && !json_object_size(v)) ||
		    (json_is_array(v) && !json_array_size(v)))
			json_object_del(at, e->path[i]);
	}
}

static int remove_one(json_t *doc, const struct jedit *e)
{
	const char *last;
	json_t *at = walk(doc, e, 0, &last);
	int changed = 0;

	if (!at)
		return 0;
	if (e->kind == JEDIT_MEMBER)
		changed = !json_object_del(at, last);
	else if (e->kind != JEDIT_DEFAULT)
		changed = drop_owned(at, e);
	prune(doc, e);
	return changed;
}

int setup_json_apply(json_t *doc, const struct jedit *e, size_t n, int remove)
{
	int changed = 0;

	for (size_t i = 0; i < n; i++)
		changed |= remove ? remove_one(doc, &e[i]) : add_one(doc, &e[i]);
	if (!remove)
		return changed;
	/* a default left alone with nothing beside it was Smriti's too */
	for (size_t i = 0; i < n; i++) {
		const char *key = e[i].path[0];

		if (e[i].kind == JEDIT_DEFAULT && json_object_size(doc) == 1 &&
		    json_equal(json_object_get(doc, key), e[i].value)) {
			json_object_del(doc, key);
			changed = 1;
		}
	}
	return changed;
}
