/*
 * draft_save.c -- what saving a Draft with AI does to HEAD (see draft.h):
 * the draft's items matched to HEAD's by key, and the patch (patch.h) that
 * carries HEAD forward with them.  The extraction never sees HEAD
 * (no earlier Checkpoint is in its prompt: domain/draft.h); the two meet only
 * here, after the model has answered, so nothing of HEAD is lost and
 * nothing it has is repeated.  Pure code.
 */
#include "domain/checkpoint.h"
#include "domain/diff.h"
#include "domain/draft.h"
#include "domain/patch.h"

#include <stdlib.h>
#include <string.h>

static const char *key_of(const json_t *item, const char *field)
{
	return json_string_value(json_object_get(item, checkpoint_item_key(field)));
}

/* The first item of list whose key is key, borrowed; NULL if none. */
static const json_t *find(const json_t *list, const char *field, const char *key)
{
	const json_t *item;
	size_t i;

	json_array_foreach(list, i, item) {
		const char *k = key_of(item, field);

		if (k && !strcmp(k, key))
			return item;
	}
	return NULL;
}

static int is_done(const json_t *task)
{
	const char *s = json_string_value(json_object_get(task, "status"));

	return s && !strcmp(s, "done");
}

/* The status of a draft item against base (NULL: empty); seen holds the keys met before. */
static const char *status_of(const struct checkpoint *base, const char *field,
			     const json_t *item, json_t *seen)
{
	const char *key = key_of(item, field);
	const json_t *had;

	if (!key)
		return "new";     /* draft_validate() gives every item its key */
	if (json_object_get(seen, key))
		return "repeated";
	json_object_set_new(seen, key, json_true());
	had = base ? find(checkpoint_list(base, field), field, key) : NULL;
	if (!had)
		return "new";
	if (!strcmp(field, "tasks") && is_done(item) && !is_done(had))
		return "done";
	if (!strcmp(field, "artifacts") && !json_equal(item, had))
		return "replaces";
	return "in_head";
}

json_t *draft_review(const struct checkpoint *base, const json_t *draft)
{
	json_t *out = json_object();

	for (size_t f = 0; checkpoint_list_fields[f]; f++) {
		const char *field = checkpoint_list_fields[f];
		json_t *v = json_array(), *seen = json_object(), *item;
		size_t i;

		json_array_foreach(json_object_get(draft, field), i, item)
			json_array_append_new(v, json_pack("{s:O, s:s}", "item", item, "status",
							   status_of(base, field, item, seen)));
		json_object_set_new(out, field, v);
		json_decref(seen);
	}
	return out;
}

/*
 * ch->reject as {field: {key: true}} with canonical field names, into *out
 * (new reference); every key must name an item of the draft.
 */
static enum smr_rc reject_set(const json_t *draft, const json_t *reject, json_t **out,
			      struct smr_err *err)
{
	const char *name, *field;
	json_t *refs, *ref;
	size_t i;

	*out = json_object();
	if (!reject)
		return SMR_OK;
	if (!json_is_object(reject))
		return smr_errf(err, SMR_EINVAL, "'reject' must be an object of lists of the"
				" draft's items, e.g. {\"decisions\": [\"...\"]}");
	json_object_foreach((json_t *)reject, name, refs) {
		field = patch_field_name(name);
		if (!field)
			return smr_errf(err, SMR_EINVAL, "cannot reject from unknown field '%s'", name);
		if (!json_is_array(refs))
			return smr_errf(err, SMR_EINVAL, "'reject.%s' must be an array", name);
		if (!json_object_get(*out, field))
			json_object_set_new(*out, field, json_object());
		json_array_foreach(refs, i, ref) {
			if (!json_is_string(ref))
				return smr_errf(err, SMR_EINVAL, "a rejected item is named by its"
						" text (name for entities and artifacts)");
			if (!find(json_object_get(draft, field), field, json_string_value(ref)))
				return smr_errf(err, SMR_EUNPROC, "the draft has no %s '%s'",
						checkpoint_item_noun(field),
						json_string_value(ref));
			json_object_set_new(json_object_get(*out, field), json_string_value(ref),
					    json_true());
		}
	}
	return SMR_OK;
}

/* 1 when drop (patch.h refs into base) names base's task key. */
static int task_dropped(const struct checkpoint *base, const json_t *drop, const char *key)
{
	static const char *const names[] = { "tasks", "task" };
	const json_t *ref;
	size_t i, n = json_array_size(base->tasks);

	for (size_t k = 0; k < 2; k++) {
		json_array_foreach(json_object_get(drop, names[k]), i, ref) {
			json_int_t pos = json_is_integer(ref) ? json_integer_value(ref) : 0;
			const char *s = json_string_value(ref);

			if (s && !strcmp(s, key))
				return 1;
			if (s && !find(base->tasks, "tasks", s) && strspn(s, "0123456789") == strlen(s))
				pos = (json_int_t)strtoll(s, NULL, 10);
			if (pos >= 1 && (size_t)pos <= n &&
			    !strcmp(key_of(json_array_get(base->tasks, (size_t)pos - 1), "tasks"), key))
				return 1;
		}
	}
	return 0;
}

/* Adds the draft's items of field to add (and done marks to done), as the choice says. */
static void take_field(const struct checkpoint *base, const json_t *draft, const char *field,
		       const struct draft_choice *ch, const json_t *rejected, json_t *add,
		       json_t *done)
{
	json_t *seen = json_object(), *taken = json_array(), *item;
	const char *st, *key;
	size_t i;

	json_array_foreach(json_object_get(draft, field), i, item) {
		st = status_of(ch->replace ? NULL : base, field, item, seen);
		key = key_of(item, field);
		if (key && json_object_get(json_object_get(rejected, field), key))
			continue;
		if (!strcmp(st, "new") || !strcmp(st, "replaces"))
			json_array_append(taken, item);
		else if (!strcmp(st, "done") && !task_dropped(base, ch->drop, key))
			json_array_append_new(done, json_string(key));
	}
	if (json_array_size(taken))
		json_object_set(add, field, taken);
	json_decref(taken);
	json_decref(seen);
}

/* {field: [1..n]} for every item of base: what replacing drops. */
static json_t *drop_all(const struct checkpoint *base)
{
	json_t *drop = json_object();

	for (size_t f = 0; base && checkpoint_list_fields[f]; f++) {
		const char *field = checkpoint_list_fields[f];
		size_t n = json_array_size(checkpoint_list(base, field));
		json_t *refs;

		if (!n)
			continue;
		refs = json_array();
		for (size_t i = 1; i <= n; i++)
			json_array_append_new(refs, json_integer((json_int_t)i));
		json_object_set_new(drop, field, refs);
	}
	return drop;
}

/* title or summary: the choice's, else the draft's when it has one. */
static void take_text(json_t *patch, const char *key, const char *chosen, const json_t *draft)
{
	const char *s = chosen ? chosen : json_string_value(json_object_get(draft, key));

	if (s && (chosen || *s))
		json_object_set_new(patch, key, json_string(s));
}

enum smr_rc draft_patch(const struct checkpoint *base, const json_t *draft,
			const struct draft_choice *ch, json_t **out, struct smr_err *err)
{
	json_t *rejected = NULL, *patch, *add, *done, *drop;
	const json_t *meta = json_object_get(draft, "metadata");
	enum smr_rc rc = reject_set(draft, ch->reject, &rejected, err);

	*out = NULL;
	if (rc) {
		json_decref(rejected);
		return rc;
	}
	patch = json_object();
	add = json_object();
	done = json_array();
	for (size_t f = 0; checkpoint_list_fields[f]; f++)
		take_field(base, draft, checkpoint_list_fields[f], ch, rejected, add, done);
	drop = ch->replace ? drop_all(base) : json_deep_copy(ch->drop);
	if (json_object_size(add))
		json_object_set(patch, "add", add);
	if (json_array_size(done))
		json_object_set(patch, "done", done);
	if (drop && json_object_size(drop))
		json_object_set(patch, "drop", drop);
	take_text(patch, "title", ch->title, draft);
	take_text(patch, "summary", ch->summary, draft);
	if (!json_object_size(patch))
		rc = smr_errf(err, SMR_EUNPROC, "the draft holds nothing that HEAD does not have"
			      " already; nothing to save");
	json_object_set_new(patch, "metadata", json_is_object(meta) ? json_deep_copy(meta) :
			    json_object());
	json_decref(rejected);
	json_decref(add);
	json_decref(done);
	json_decref(drop);
	if (rc)
		json_decref(patch);
	else
		*out = patch;
	return rc;
}

static void count_n(json_t *changes, const char *field, const char *what, size_t n)
{
	json_t *f;

	if (!n)
		return;
	f = json_object_get(changes, field);
	if (!f) {
		f = json_object();
		json_object_set_new(changes, field, f);
	}
	json_object_set_new(f, what, json_integer((json_int_t)n +
						  json_integer_value(json_object_get(f, what))));
}

/* A changed item: a task marked done or reopened, any other item replaced. */
static const char *change_kind(const char *field, const json_t *change)
{
	if (strcmp(field, "tasks"))
		return "replaced";
	return is_done(json_object_get(change, "to")) ? "done" : "reopened";
}

json_t *draft_changes(const struct checkpoint *base, const struct checkpoint *next)
{
	struct checkpoint empty;
	json_t *d, *changes = json_object(), *f, *c;
	size_t i;

	checkpoint_init(&empty);
	d = checkpoint_diff(base ? base : &empty, next);
	for (size_t k = 0; checkpoint_list_fields[k]; k++) {
		const char *field = checkpoint_list_fields[k];

		f = json_object_get(d, field);
		count_n(changes, field, "added", json_array_size(json_object_get(f, "added")));
		count_n(changes, field, "dropped", json_array_size(json_object_get(f, "removed")));
		json_array_foreach(json_object_get(f, "changed"), i, c)
			count_n(changes, field, change_kind(field, c), 1);
	}
	if (json_object_get(d, "title"))
		json_object_set_new(changes, "title", json_true());
	if (json_object_get(d, "summary"))
		json_object_set_new(changes, "summary", json_true());
	json_decref(d);
	checkpoint_release(&empty);
	return changes;
}
