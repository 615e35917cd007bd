/*
 * diff.c -- compute what changed between two Checkpoints (see diff.h).
 */
#include "domain/diff.h"
#include "domain/checkpoint.h"

#include <string.h>

static const char *key_of(const char *field)
{
	return !strcmp(field, "entities") || !strcmp(field, "artifacts") ? "name" : "text";
}

static const json_t *find_item(const json_t *list, const char *key, const char *value)
{
	size_t i;
	json_t *item;

	json_array_foreach(list, i, item) {
		const char *v = json_string_value(json_object_get(item, key));

		if (v && !strcmp(v, value))
			return item;
	}
	return NULL;
}

/* Adds to out the items of list a whose key is missing from b. */
static void collect_missing(const json_t *a, const json_t *b, const char *key,
			    json_t *out)
{
	size_t i;
	json_t *item;

	json_array_foreach(a, i, item) {
		const char *v = json_string_value(json_object_get(item, key));

		if (v && !find_item(b, key, v))
			json_array_append(out, item);
	}
}

static json_t *diff_list(const char *field, const json_t *a, const json_t *b)
{
	const char *key = key_of(field);
	json_t *added = json_array(), *removed = json_array(), *changed = json_array();
	json_t *out, *item;
	const json_t *other;
	size_t i;

	collect_missing(b, a, key, added);
	collect_missing(a, b, key, removed);
	json_array_foreach(a, i, item) {
		const char *v = json_string_value(json_object_get(item, key));

		other = v ? find_item(b, key, v) : NULL;
		if (other && !json_equal(item, other))
			json_array_append_new(changed, json_pack("{sOsO}", "from", item,
								 "to", other));
	}
	if (!json_array_size(added) && !json_array_size(removed) &&
	    !json_array_size(changed)) {
		json_decref(added);
		json_decref(removed);
		json_decref(changed);
		return NULL;
	}
	out = json_object();
	json_object_set_new(out, "added", added);
	json_object_set_new(out, "removed", removed);
	json_object_set_new(out, "changed", changed);
	return out;
}

static void diff_scalar(json_t *out, const char *field, const char *a, const char *b)
{
	a = a ? a : "";
	b = b ? b : "";
	if (strcmp(a, b))
		json_object_set_new(out, field, json_pack("{ssss}", "from", a, "to", b));
}

json_t *checkpoint_diff(const struct checkpoint *a, const struct checkpoint *b)
{
	json_t *out = json_object(), *d;
	const char *f;
	int changed;

	json_object_set_new(out, "from", a->hash ? json_string(a->hash) : json_null());
	json_object_set_new(out, "to", b->hash ? json_string(b->hash) : json_null());
	diff_scalar(out, "title", a->title, b->title);
	diff_scalar(out, "summary", a->summary, b->summary);
	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		f = checkpoint_list_fields[i];
		d = diff_list(f, checkpoint_list(a, f), checkpoint_list(b, f));
		if (d)
			json_object_set_new(out, f, d);
	}
	if (!json_equal(a->metadata, b->metadata))
		json_object_set_new(out, "metadata",
				    json_pack("{sOsO}", "from", a->metadata, "to", b->metadata));
	changed = json_object_size(out) > 2;
	json_object_set_new(out, "identical", json_boolean(!changed));
	return out;
}

/* Tasks of a field diff whose status became "done". */
static size_t tasks_done(const json_t *changed)
{
	size_t i, n = 0;
	json_t *ch;

	json_array_foreach(changed, i, ch) {
		const char *from = json_string_value(json_object_get(json_object_get(ch, "from"),
								     "status"));
		const char *to = json_string_value(json_object_get(json_object_get(ch, "to"),
								   "status"));

		if (to && !strcmp(to, "done") && (!from || strcmp(from, "done")))
			n++;
	}
	return n;
}

json_t *checkpoint_diff_counts(const struct checkpoint *a, const struct checkpoint *b)
{
	struct checkpoint empty;
	json_t *d, *out = json_object();

	checkpoint_init(&empty);
	d = checkpoint_diff(a ? a : &empty, b);
	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		const char *f = checkpoint_list_fields[i];
		const json_t *fd = json_object_get(d, f);
		json_t *c;

		if (!fd)
			continue;
		c = json_pack("{s:I, s:I, s:I}",
			      "added", (json_int_t)json_array_size(json_object_get(fd, "added")),
			      "removed", (json_int_t)json_array_size(json_object_get(fd, "removed")),
			      "changed", (json_int_t)json_array_size(json_object_get(fd, "changed")));
		if (!strcmp(f, "tasks"))
			json_object_set_new(c, "done",
					    json_integer((json_int_t)tasks_done(json_object_get(fd, "changed"))));
		json_object_set_new(out, f, c);
	}
	json_decref(d);
	checkpoint_release(&empty);
	return out;
}
