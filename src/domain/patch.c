/*
 * patch.c -- apply a patch (add, drop, done, reopen, title, summary) to a
 * Checkpoint's state (see patch.h).  Every reference is resolved against
 * the parent before anything changes, so positions mean what `smriti show`
 * printed for the parent, and a bad reference leaves nothing half-applied.
 */
#include "domain/patch.h"
#include "domain/checkpoint.h"
#include "util/buf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *alias, *field, *one, *many;
} fields[] = {
	{ "decision", "decisions", "decision", "decisions" },
	{ "assumption", "assumptions", "assumption", "assumptions" },
	{ "task", "tasks", "task", "tasks" },
	{ "question", "open_questions", "question", "questions" },
	{ "open_question", "open_questions", "question", "questions" },
	{ "questions", "open_questions", "question", "questions" },
	{ "entity", "entities", "entity", "entities" },
	{ "artifact", "artifacts", "artifact", "artifacts" },
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

const char *patch_field_name(const char *name)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!strcmp(name, fields[i].alias) || !strcmp(name, fields[i].field))
			return fields[i].field;
	return NULL;
}

/* "decision" or "decisions" as counted. */
static const char *noun(const char *field, long n)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!strcmp(field, fields[i].field))
			return n == 1 ? fields[i].one : fields[i].many;
	return field;
}

static const char *item_name(const json_t *item, const char *field)
{
	return json_string_value(json_object_get(item, checkpoint_item_key(field)));
}

/* Position of the item named key in list, or -1. */
static long find_key(const json_t *list, const char *field, const char *key)
{
	size_t i;
	json_t *item;

	json_array_foreach(list, i, item) {
		const char *v = item_name(item, field);

		if (v && !strcmp(v, key))
			return (long)i;
	}
	return -1;
}

/* A position written as digits only, 1-based; -1 when s is not one. */
static long position_of(const char *s)
{
	long v = 0;

	if (!*s || strlen(s) > 9)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

static enum smr_rc missing(const char *field, const char *what, size_t have,
			   struct smr_err *err)
{
	return smr_errf(err, SMR_EUNPROC, "no %s %s in the parent checkpoint (it has %zu %s)",
			noun(field, 1), what, have, noun(field, (long)have));
}

/* The key (text or name) of the parent's item that ref names, borrowed from list. */
static enum smr_rc resolve_ref(const json_t *list, const char *field, const json_t *ref,
			       const char **key, struct smr_err *err)
{
	size_t n = json_array_size(list);
	long pos = 0, at;
	char what[64];

	if (json_is_string(ref)) {
		at = find_key(list, field, json_string_value(ref));
		if (at >= 0) {
			*key = item_name(json_array_get(list, (size_t)at), field);
			return SMR_OK;
		}
		pos = position_of(json_string_value(ref));
		if (pos < 0) {
			char *q = xasprintf("'%s'", json_string_value(ref));

			missing(field, q, n, err);
			free(q);
			return SMR_EUNPROC;
		}
	} else if (json_is_integer(ref)) {
		pos = (long)json_integer_value(ref);
	} else {
		return smr_errf(err, SMR_EINVAL,
				"a %s is named by its text or its position (a string or an integer)",
				noun(field, 1));
	}
	if (pos < 1 || (size_t)pos > n) {
		snprintf(what, sizeof(what), "at position %ld", pos);
		return missing(field, what, n, err);
	}
	*key = item_name(json_array_get(list, (size_t)pos - 1), field);
	return SMR_OK;
}

/* Adds n to changes[field][what]. */
static void count(json_t *changes, const char *field, const char *what, long n)
{
	json_t *f = json_object_get(changes, field);

	if (!f) {
		f = json_object();
		json_object_set_new(changes, field, f);
	}
	n += (long)json_integer_value(json_object_get(f, what));
	json_object_set_new(f, what, json_integer(n));
}

static enum smr_rc check_array(const json_t *v, const char *what, struct smr_err *err)
{
	if (!json_is_array(v))
		return smr_errf(err, SMR_EINVAL, "'%s' must be an array", what);
	return SMR_OK;
}

/* The drops of one field: resolved against base, then removed from out. */
static enum smr_rc drop_field(const struct checkpoint *base, struct checkpoint *out,
			      const char *field, const json_t *refs, json_t *changes,
			      struct smr_err *err)
{
	const json_t *list = checkpoint_list(base, field);
	json_t *mine = checkpoint_own_list(out, base, field);
	const char *key;
	size_t i;
	json_t *ref;
	long at;
	enum smr_rc rc = check_array(refs, "drop", err);

	json_array_foreach(refs, i, ref) {
		if (rc)
			break;
		rc = resolve_ref(list, field, ref, &key, err);
		if (rc)
			break;
		at = find_key(mine, field, key);
		if (at < 0)
			return smr_errf(err, SMR_EUNPROC, "%s '%s' is dropped twice",
					noun(field, 1), key);
		json_array_remove(mine, (size_t)at);
		count(changes, field, "dropped", 1);
	}
	return rc;
}

static enum smr_rc apply_drops(const struct checkpoint *base, struct checkpoint *out,
			       const json_t *drop, json_t *changes, struct smr_err *err)
{
	const char *name, *field;
	json_t *refs;
	enum smr_rc rc;

	if (!drop)
		return SMR_OK;
	if (!json_is_object(drop))
		return smr_errf(err, SMR_EINVAL,
				"'drop' must be an object of lists, e.g. {\"decisions\": [\"...\"]}");
	json_object_foreach((json_t *)drop, name, refs) {
		field = patch_field_name(name);
		if (!field)
			return smr_errf(err, SMR_EINVAL, "cannot drop from unknown field '%s'", name);
		rc = drop_field(base, out, field, refs, changes, err);
		if (rc)
			return rc;
	}
	return SMR_OK;
}

/* Marks the tasks refs names as status ("done" or "open"). */
static enum smr_rc set_status(const struct checkpoint *base, struct checkpoint *out,
			      const json_t *refs, const char *status, json_t *changes,
			      struct smr_err *err)
{
	const char *what = !strcmp(status, "done") ? "done" : "reopened";
	const char *key, *now;
	json_t *ref, *item, *tasks;
	size_t i;
	long at;
	enum smr_rc rc;

	if (!refs)
		return SMR_OK;
	rc = check_array(refs, !strcmp(status, "done") ? "done" : "reopen", err);
	if (rc)
		return rc;
	json_array_foreach(refs, i, ref) {
		rc = resolve_ref(base->tasks, "tasks", ref, &key, err);
		if (rc)
			return rc;
		tasks = checkpoint_own_list(out, base, "tasks");
		at = find_key(tasks, "tasks", key);
		if (at < 0)
			return smr_errf(err, SMR_EUNPROC, "task '%s' is dropped by this change",
					key);
		item = json_array_get(tasks, (size_t)at);
		now = json_string_value(json_object_get(item, "status"));
		if (now && !strcmp(now, status))
			return smr_errf(err, SMR_EUNPROC, "task '%s' is already %s", key,
					status);
		/* the task is base's too (checkpoint_share_content): replace it */
		item = json_copy(item);
		json_object_set_new(item, "status", json_string(status));
		json_array_set_new(tasks, (size_t)at, item);
		count(changes, "tasks", what, 1);
	}
	return SMR_OK;
}

/* Appends the normalised items to out's field; an artifact of the same name is replaced. */
static enum smr_rc add_items(const struct checkpoint *base, struct checkpoint *out,
			     const char *field, const json_t *items, json_t *changes,
			     struct smr_err *err)
{
	json_t *norm = checkpoint_normalize_list(field, items, err), *item, *mine;
	const char *key;
	size_t i;
	long at;

	if (!norm)
		return err ? err->code : SMR_EINVAL;
	mine = checkpoint_own_list(out, base, field);
	json_array_foreach(norm, i, item) {
		key = item_name(item, field);
		at = find_key(mine, field, key);
		if (at >= 0 && strcmp(field, "artifacts")) {
			enum smr_rc rc = checkpoint_err_duplicate(field, key, err);

			json_decref(norm);
			return rc;
		}
		if (at >= 0) {
			json_array_set(mine, (size_t)at, item);
			count(changes, field, "replaced", 1);
		} else {
			json_array_append(mine, item);
			count(changes, field, "added", 1);
		}
	}
	json_decref(norm);
	return SMR_OK;
}

static enum smr_rc apply_adds(const struct checkpoint *base, struct checkpoint *out,
			      const json_t *add, json_t *changes, struct smr_err *err)
{
	const char *name, *field;
	json_t *items;
	enum smr_rc rc;

	if (!add)
		return SMR_OK;
	if (!json_is_object(add))
		return smr_errf(err, SMR_EINVAL,
				"'add' must be an object of lists, e.g. {\"decisions\": [\"...\"]}");
	json_object_foreach((json_t *)add, name, items) {
		field = patch_field_name(name);
		if (!field)
			return smr_errf(err, SMR_EINVAL, "cannot add to unknown field '%s'", name);
		rc = add_items(base, out, field, items, changes, err);
		if (rc)
			return rc;
	}
	return SMR_OK;
}

static enum smr_rc replace_text(const json_t *patch, const char *key, char **dst,
				json_t *changes, struct smr_err *err)
{
	const json_t *v = json_object_get(patch, key);

	if (!v)
		return SMR_OK;
	if (!json_is_string(v))
		return smr_errf(err, SMR_EINVAL, "'%s' must be a string", key);
	if (!*dst || strcmp(*dst, json_string_value(v)))
		json_object_set_new(changes, key, json_true());
	free(*dst);
	*dst = xstrdup(json_string_value(v));
	return SMR_OK;
}

static enum smr_rc check_keys(const json_t *patch, struct smr_err *err)
{
	static const char *const keys[] = {
		"add", "drop", "done", "reopen", "title", "summary", "metadata", NULL,
	};
	const char *key;
	json_t *v;
	size_t i;

	if (!json_is_object(patch))
		return smr_errf(err, SMR_EINVAL, "a patch must be a JSON object");
	json_object_foreach((json_t *)patch, key, v) {
		for (i = 0; keys[i] && strcmp(keys[i], key); i++)
			;
		if (!keys[i])
			return smr_errf(err, SMR_EINVAL,
					"unknown patch field '%s' (expected add, drop, done,"
					" reopen, title, summary or metadata)", key);
	}
	for (i = 0; keys[i] && !json_object_get(patch, keys[i]); i++)
		;
	if (!keys[i] || (json_object_size(patch) == 1 && json_object_get(patch, "metadata")))
		return smr_errf(err, SMR_EUSAGE,
				"nothing to change: give add, drop, done, reopen, title or summary");
	v = json_object_get(patch, "metadata");
	if (v && !json_is_object(v))
		return smr_errf(err, SMR_EINVAL, "'metadata' must be an object");
	return SMR_OK;
}

enum smr_rc patch_apply(const struct checkpoint *base, const json_t *patch,
			struct checkpoint *out, json_t **changes, struct smr_err *err)
{
	struct checkpoint empty;
	json_t *ch = json_object(), *meta;
	enum smr_rc rc = check_keys(patch, err);

	checkpoint_init(&empty);
	if (!base)
		base = &empty;
	if (!rc) {
		/* a list the patch leaves alone is base's very list; one it changes is copied first */
		checkpoint_share_lists(out, base);
		meta = json_object_get(patch, "metadata");
		json_decref(out->metadata);
		out->metadata = meta ? json_deep_copy(meta) : json_object();
		rc = apply_drops(base, out, json_object_get(patch, "drop"), ch, err);
	}
	if (!rc)
		rc = set_status(base, out, json_object_get(patch, "done"), "done", ch, err);
	if (!rc)
		rc = set_status(base, out, json_object_get(patch, "reopen"), "open", ch, err);
	if (!rc)
		rc = apply_adds(base, out, json_object_get(patch, "add"), ch, err);
	if (!rc)
		rc = replace_text(patch, "title", &out->title, ch, err);
	if (!rc)
		rc = replace_text(patch, "summary", &out->summary, ch, err);
	/* adds accumulate over patches: the result must stay within the limits */
	if (!rc)
		rc = checkpoint_check_limits(out, err);
	checkpoint_release(&empty);
	if (!rc && changes)
		*changes = json_incref(ch);
	json_decref(ch);
	return rc;
}

static void describe_count(struct buf *b, const json_t *f, const char *field, const char *what)
{
	long n = (long)json_integer_value(json_object_get(f, what));

	if (!n)
		return;
	if (b->len)
		buf_adds(b, ", ");
	if (!strcmp(what, "added"))
		buf_addf(b, "+%ld %s", n, noun(field, n));
	else if (!strcmp(what, "dropped"))
		buf_addf(b, "-%ld %s", n, noun(field, n));
	else
		buf_addf(b, "%ld %s %s", n, noun(field, n), what);
}

char *patch_describe(const json_t *changes)
{
	static const char *const whats[] = { "added", "dropped", "replaced", "done", "reopened" };
	struct buf b = BUF_INIT(0);
	const json_t *f;

	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		f = json_object_get(changes, checkpoint_list_fields[i]);
		for (size_t w = 0; f && w < sizeof(whats) / sizeof(whats[0]); w++)
			describe_count(&b, f, checkpoint_list_fields[i], whats[w]);
	}
	if (json_object_get(changes, "title"))
		buf_adds(&b, b.len ? ", new title" : "new title");
	if (json_object_get(changes, "summary"))
		buf_adds(&b, b.len ? ", new summary" : "new summary");
	if (!b.len)
		buf_adds(&b, "no change");
	return buf_detach(&b, NULL);
}
