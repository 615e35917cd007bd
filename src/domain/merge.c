/*
 * merge.c -- three-way merge of Checkpoint states (see merge.h).
 *
 * Every cell of the table in merge.h is one rule over three values (base,
 * ours, theirs; NULL for absent): both sides alike -> that; one side as in
 * base -> the other side; else a conflict.  Resolutions are marked as
 * they are used, so one never used names no conflict and is refused.  The
 * title is the merge's own (merge.h), never one of the sides'.
 *
 * A list may hold two items with the same text (or name): nothing forbids
 * it in a write.  They are told apart by occurrence: the second "X" of
 * ours is matched with the second "X" of base and of theirs, so no copy is
 * lost or duplicated (a first-match lookup silently dropped theirs' second
 * copy, found by fuzz/merge.c).
 */
#include "domain/merge.h"
#include "domain/checkpoint.h"
#include "domain/patch.h"
#include "util/buf.h"
#include "util/strmap.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct merge {
	json_t *resolution;      /* owned copy, canonical field names */
	json_t *used;            /* {field: true} or {field: {key: true}}: entries that were used */
	const char *all;         /* "ours" | "theirs" | NULL, borrowed from resolution */
	json_t *conflicts;
	struct smr_err *err;
	enum smr_rc rc;          /* first error (not conflicts) */
};

static int same(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return a == b;
	return json_equal((json_t *)a, (json_t *)b);
}

/* The three-way rule: sets *out (borrowed, may be NULL) and returns 0, or 1 for a conflict. */
static int decide(const json_t *b, const json_t *o, const json_t *t, const json_t **out)
{
	if (same(o, t) || same(b, t))
		*out = o;
	else if (same(b, o))
		*out = t;
	else
		return 1;
	return 0;
}

static enum smr_rc bad_side(struct merge *m, const char *what)
{
	if (!m->rc)
		m->rc = smr_errf(m->err, SMR_EINVAL,
				 "a resolution of %s must be \"ours\", \"theirs\""
				 " or {\"edit\": VALUE}", what);
	return m->rc;
}

/*
 * An edited value {"edit": V} for field: V normalised as an item of the
 * field (a string for the summary; null drops the item).  Borrowed from
 * holder, where the normalised value replaces V; NULL with m->rc set.
 */
static const json_t *edited(struct merge *m, const char *field, json_t *holder)
{
	json_t *v = json_object_get(holder, "edit"), *one, *norm;

	if (json_is_null(v))
		return v;
	if (!strcmp(field, "summary")) {
		if (json_is_string(v))
			return v;
		m->rc = smr_errf(m->err, SMR_EINVAL, "an edited summary must be a string");
		return NULL;
	}
	one = json_pack("[O]", v);
	norm = checkpoint_normalize_list(field, one, m->err);
	json_decref(one);
	if (!norm || json_array_size(norm) != 1) {
		if (!m->rc)
			m->rc = norm ? smr_errf(m->err, SMR_EINVAL, "an edited %s item is empty",
						field) : SMR_EINVAL;
		json_decref(norm);
		return NULL;
	}
	json_object_set(holder, "edit", json_array_get(norm, 0));
	json_decref(norm);
	return json_object_get(holder, "edit");
}

/*
 * The side chosen for a conflict of field (item key, or NULL for the
 * summary): "ours", "theirs", "edit" (with *value the edited value, NULL
 * to drop) or NULL when unresolved.  Marks the entry used (not removed:
 * two items of the same text share it).
 */
static const char *chosen(struct merge *m, const char *field, const char *key,
			  const json_t **value)
{
	json_t *f = json_object_get(m->resolution, field), *v;
	const char *side = NULL, *s;

	v = key ? json_object_get(f, key) : f;
	s = json_string_value(v);
	if (s && !strcmp(s, "ours"))
		side = "ours";
	else if (s && !strcmp(s, "theirs"))
		side = "theirs";
	else if (json_is_object(v) && json_object_get(v, "edit") && json_object_size(v) == 1) {
		*value = edited(m, field, v);
		side = m->rc ? NULL : "edit";
		if (*value && json_is_null(*value))
			*value = NULL;
	} else if (v)
		bad_side(m, field);
	if (v && key) {
		json_t *keys = json_object_get(m->used, field);

		if (!keys) {
			keys = json_object();
			json_object_set_new(m->used, field, keys);
		}
		json_object_set_new(keys, key, json_true());
	} else if (v) {
		json_object_set_new(m->used, field, json_true());
	}
	return side ? side : m->all;
}

static json_t *or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

/* Decides one value; on a conflict records it or applies its resolution.  *out borrowed. */
static void merge_value(struct merge *m, const char *field, const char *key, const json_t *b,
			const json_t *o, const json_t *t, const json_t **out)
{
	const json_t *value = NULL;
	const char *side;
	json_t *c;

	if (!decide(b, o, t, out))
		return;
	side = chosen(m, field, key, &value);
	if (side) {
		*out = !strcmp(side, "edit") ? value : !strcmp(side, "ours") ? o : t;
		return;
	}
	*out = NULL;
	c = json_pack("{s:s}", "field", field);
	if (key)
		json_object_set_new(c, "item", json_string(key));
	json_object_set_new(c, "base", or_null(b));
	json_object_set_new(c, "ours", or_null(o));
	json_object_set_new(c, "theirs", or_null(t));
	json_array_append_new(m->conflicts, c);
}

/*
 * A list's items by key and occurrence: "nth:key" -> position, so matching
 * items across the three lists stays linear in their length (a list may
 * hold CHECKPOINT_MAX_ITEMS items, and each item is looked up in three).
 */
struct item_index {
	const json_t *list;
	struct strmap at;
};

/* "nth:key", which no two (nth, key) pairs share.  Caller frees. */
static char *occurrence_key(size_t nth, const char *key)
{
	return xasprintf("%zu:%s", nth, key);
}

/*
 * Which occurrence of key the next item with that key is, counting in seen
 * (key -> items so far), and counts it.
 */
static size_t next_occurrence(struct strmap *seen, const char *key)
{
	size_t n = 0;

	strmap_get(seen, key, &n);
	strmap_put(seen, key, n + 1);
	return n;
}

static void index_list(struct item_index *ix, const json_t *list, const char *field)
{
	const char *k = checkpoint_item_key(field);
	struct strmap seen = STRMAP_INIT;
	size_t i;
	json_t *item;

	ix->list = list;
	memset(&ix->at, 0, sizeof(ix->at));
	json_array_foreach(list, i, item) {
		const char *v = json_string_value(json_object_get(item, k));
		char *at;

		if (!v)
			continue;
		at = occurrence_key(next_occurrence(&seen, v), v);
		strmap_put(&ix->at, at, i);
		free(at);
	}
	strmap_release(&seen);
}

/* The item whose key is key, its nth such (from 0); NULL if none.  Borrowed. */
static const json_t *find_item(const struct item_index *ix, const char *key, size_t nth)
{
	char *at = occurrence_key(nth, key);
	size_t i;
	int found = strmap_get(&ix->at, at, &i);

	free(at);
	return found ? json_array_get(ix->list, i) : NULL;
}

/* The three lists of field, indexed. */
struct item_lists {
	struct item_index base, ours, theirs;
};

static void merge_item(struct merge *m, const char *field, const char *key, size_t nth,
		       const struct item_lists *l, json_t *out)
{
	const json_t *v;

	merge_value(m, field, key, find_item(&l->base, key, nth), find_item(&l->ours, key, nth),
		    find_item(&l->theirs, key, nth), &v);
	if (v)
		json_array_append_new(out, json_deep_copy(v));
}

/* One list: ours' items in order, then the items only theirs has. */
static json_t *merge_list(struct merge *m, const char *field, const struct checkpoint *base,
			  const struct checkpoint *ours, const struct checkpoint *theirs)
{
	const json_t *ol = checkpoint_list(ours, field), *tl = checkpoint_list(theirs, field);
	const char *k = checkpoint_item_key(field), *key;
	struct strmap seen_ours = STRMAP_INIT, seen_theirs = STRMAP_INIT;
	struct item_lists l;
	json_t *out = json_array(), *item;
	size_t i, nth;

	index_list(&l.base, checkpoint_list(base, field), field);
	index_list(&l.ours, ol, field);
	index_list(&l.theirs, tl, field);
	json_array_foreach(ol, i, item) {
		key = json_string_value(json_object_get(item, k));
		if (key)
			merge_item(m, field, key, next_occurrence(&seen_ours, key), &l, out);
	}
	json_array_foreach(tl, i, item) {
		key = json_string_value(json_object_get(item, k));
		if (!key)
			continue;
		nth = next_occurrence(&seen_theirs, key);
		if (!find_item(&l.ours, key, nth))
			merge_item(m, field, key, nth, &l, out);
	}
	strmap_release(&seen_ours);
	strmap_release(&seen_theirs);
	strmap_release(&l.base.at);
	strmap_release(&l.ours.at);
	strmap_release(&l.theirs.at);
	return out;
}

/* The summary's three-way merge (absent is ""); caller frees. */
static char *merge_text(struct merge *m, const char *field, const char *b, const char *o,
			const char *t)
{
	json_t *jb = json_string(b ? b : ""), *jo = json_string(o ? o : "");
	json_t *jt = json_string(t ? t : "");
	const json_t *v;
	char *s;

	merge_value(m, field, NULL, jb, jo, jt, &v);
	s = xstrdup(v ? json_string_value(v) : "");
	json_decref(jb);
	json_decref(jo);
	json_decref(jt);
	return s;
}

/* A copy of the resolution with canonical field names; NULL with m->rc set on error. */
static json_t *canonical_resolution(struct merge *m, const json_t *in)
{
	json_t *out = json_object(), *v;
	const char *name, *field;

	if (in && !json_is_object(in)) {
		m->rc = smr_errf(m->err, SMR_EINVAL, "a merge resolution must be a JSON object");
		return out;
	}
	json_object_foreach((json_t *)in, name, v) {
		if (!strcmp(name, "title")) {
			m->rc = smr_errf(m->err, SMR_EINVAL,
					 "a merge resolution cannot name the title: titles are"
					 " never merged (a merge has its own; give it with title,"
					 " or -m on the command line)");
			break;
		}
		field = patch_field_name(name);
		if (!field && (!strcmp(name, "summary") || !strcmp(name, "*")))
			field = name;
		if (!field) {
			m->rc = smr_errf(m->err, SMR_EINVAL,
					 "a merge resolution names unknown field '%s'", name);
			break;
		}
		if (strcmp(field, "summary") && strcmp(field, "*") && !json_is_object(v)) {
			m->rc = smr_errf(m->err, SMR_EINVAL,
					 "the resolution of '%s' must map each item to"
					 " \"ours\", \"theirs\" or {\"edit\": ITEM}", name);
			break;
		}
		json_object_set_new(out, field, json_deep_copy(v));
	}
	return out;
}

/* Refuses resolution entries that matched no conflict. */
static void check_leftovers(struct merge *m)
{
	const char *field, *key;
	json_t *v, *item, *used;

	json_object_foreach(m->resolution, field, v) {
		used = json_object_get(m->used, field);
		if (m->rc || !strcmp(field, "*") || json_is_true(used))
			continue;
		if (!json_is_object(v)) {
			m->rc = smr_errf(m->err, SMR_EINVAL,
					 "the resolution names %s, which is not in conflict", field);
			return;
		}
		json_object_foreach(v, key, item) {
			if (json_object_get(used, key))
				continue;
			m->rc = smr_errf(m->err, SMR_EINVAL,
					 "the resolution names %s '%s', which is not in conflict",
					 field, key);
			return;
		}
	}
}

static void conflict_message(const json_t *conflicts, struct smr_err *err)
{
	struct buf b = BUF_INIT(0);
	size_t i, n = json_array_size(conflicts);
	json_t *c;
	char *s;

	json_array_foreach(conflicts, i, c) {
		const char *item = json_string_value(json_object_get(c, "item"));

		if (i == 4) {
			buf_addf(&b, ", and %zu more", n - i);
			break;
		}
		buf_addf(&b, "%s%s", i ? ", " : "",
			 json_string_value(json_object_get(c, "field")));
		if (item)
			buf_addf(&b, " '%s'", item);
	}
	s = buf_detach(&b, NULL);
	smr_errf(err, SMR_ECONFLICT,
		 "%zu conflict%s: %s; nothing was written (resolve each with ours or theirs)", n,
		 n == 1 ? "" : "s", s);
	free(s);
}

enum smr_rc checkpoint_merge3(const struct checkpoint *base, const struct checkpoint *ours,
			      const struct checkpoint *theirs, const json_t *resolution,
			      struct checkpoint *out, json_t **conflicts, struct smr_err *err)
{
	struct merge m = { NULL, json_object(), NULL, json_array(), err, SMR_OK };
	struct checkpoint empty;
	const char *f;
	json_t **slot;

	checkpoint_init(&empty);
	if (!base)
		base = &empty;
	m.resolution = canonical_resolution(&m, resolution);
	m.all = json_string_value(json_object_get(m.resolution, "*"));
	if (!m.rc && json_object_get(m.resolution, "*") && !m.all)
		bad_side(&m, "*");
	if (m.all && strcmp(m.all, "ours") && strcmp(m.all, "theirs"))
		bad_side(&m, "*");
	if (!m.rc) {
		free(out->summary);
		out->summary = merge_text(&m, "summary", base->summary, ours->summary,
					  theirs->summary);
		for (size_t i = 0; checkpoint_list_fields[i]; i++) {
			f = checkpoint_list_fields[i];
			slot = checkpoint_list_slot(out, f);
			json_decref(*slot);
			*slot = merge_list(&m, f, base, ours, theirs);
		}
		check_leftovers(&m);
	}
	if (!m.rc && json_array_size(m.conflicts)) {
		conflict_message(m.conflicts, err);
		m.rc = SMR_ECONFLICT;
	}
	/* two lines within the limits can merge into one past them */
	if (!m.rc)
		m.rc = checkpoint_check_limits(out, err);
	*conflicts = m.conflicts;
	json_decref(m.resolution);
	json_decref(m.used);
	checkpoint_release(&empty);
	return m.rc;
}

char *merge_title(const char *theirs, const char *ours)
{
	return xasprintf("Merge %s into %s", theirs, ours);
}
