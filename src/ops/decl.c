/*
 * decl.c -- reads the operations' declarations (see decl.h) built into the
 * binary, once per process, and resolves the references between schemas.
 */
#include "ops/decl.h"
#include "util/embedded.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static json_t *all;
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

/* Copies every member of from[key] into to[key]; -1 when one is there already. */
static int merge_member(json_t *to, const json_t *from, const char *key, const char **dup)
{
	json_t *into = json_object_get(to, key), *v;
	const char *name;

	json_object_foreach((json_t *)json_object_get(from, key), name, v) {
		if (json_object_get(into, name)) {
			*dup = name;
			return -1;
		}
		json_object_set(into, name, v);
	}
	return 0;
}

json_t *decl_merge(const char *const *texts, size_t n, struct smr_err *err)
{
	json_t *out = json_pack("{s:{}, s:[], s:{}}", "$defs", "tags", "operations");
	json_error_t je;
	const char *dup = NULL;

	for (size_t i = 0; i < n; i++) {
		json_t *one = json_loads(texts[i], 0, &je);

		if (!json_is_object(one)) {
			json_decref(one);
			json_decref(out);
			smr_errf(err, SMR_EINVAL, "declaration file %zu: line %d: %s", i, je.line,
				 je.text);
			return NULL;
		}
		if (merge_member(out, one, "$defs", &dup) ||
		    merge_member(out, one, "operations", &dup)) {
			smr_errf(err, SMR_EINVAL, "'%s' is declared twice", dup);
			json_decref(one);
			json_decref(out);
			return NULL;
		}
		json_array_extend(json_object_get(out, "tags"), json_object_get(one, "tags"));
		json_decref(one);
	}
	return out;
}

static void load_all(void)
{
	const char *texts[64];
	struct smr_err err = SMR_ERR_INIT;
	size_t n = 0;

	for (const struct embedded_file *f = embedded_files; f->name; f++) {
		if (n == sizeof(texts) / sizeof(texts[0]))
			BUG("more than %zu declaration files", n);
		texts[n++] = f->data;
	}
	all = decl_merge(texts, n, &err);
	if (!all)
		BUG("the operations' declarations do not load: %s", err.msg);
}

const json_t *decl_all(void)
{
	pthread_once(&all_once, load_all);
	return all;
}

/*
 * One operation's declaration and one shared schema are parsed when first
 * asked for, from the index tools/decl_index.c builds, not with all the
 * others: a CLI process makes one call, and parsing every declaration was
 * nine tenths of a cold `smriti head`.  What was parsed stays, read-only,
 * for the process (HTTP workers share it); the lock covers the memo
 * objects, which grow.
 */
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *ops_memo, *defs_memo;

static int entry_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct embedded_decl *)e)->name);
}

/* name's parsed entry of table v (n entries), memoised in *memo; NULL if it has none. */
static const json_t *indexed(json_t **memo, const struct embedded_decl *v, size_t n,
			     const char *name)
{
	const struct embedded_decl *e;
	json_t *got;

	pthread_mutex_lock(&memo_mu);
	if (!*memo)
		*memo = json_object();
	got = json_object_get(*memo, name);
	if (!got && (e = bsearch(name, v, n, sizeof(*v), entry_cmp))) {
		got = json_loads(e->json, 0, NULL);
		if (!got)
			BUG("the declaration of '%s' does not parse", name);
		json_object_set_new(*memo, name, got);
	}
	pthread_mutex_unlock(&memo_mu);
	return got;
}

const json_t *decl_op(const char *name)
{
	return indexed(&ops_memo, embedded_decl_ops, embedded_decl_ops_n, name);
}

const char *const *decl_mcp_ops(size_t *n)
{
	*n = embedded_decl_mcp_ops_n;
	return embedded_decl_mcp_ops;
}

const json_t *decl_ref(const char *ref)
{
	const json_t *d = strncmp(ref, "#/$defs/", 8) ? NULL :
			  indexed(&defs_memo, embedded_decl_defs, embedded_decl_defs_n, ref + 8);

	if (!d)
		BUG("the declarations name a schema '%s' they do not define", ref);
	return d;
}

const json_t *decl_http(const json_t *decl, const char *op, const char *method,
			const char *path)
{
	const json_t *o = json_object_get(json_object_get(decl, "operations"), op ? op : "");
	const json_t *h;
	size_t i;

	json_array_foreach(json_object_get(o, "http"), i, h)
		if (!strcmp(json_string_value(json_object_get(h, "method")), method) &&
		    !strcmp(json_string_value(json_object_get(h, "path")), path))
			return h;
	return NULL;
}

const json_t *decl_def(const json_t *defs, const char *ref)
{
	const json_t *d;

	if (!defs)
		return decl_ref(ref);
	d = strncmp(ref, "#/$defs/", 8) ? NULL : json_object_get(defs, ref + 8);

	if (!d)
		BUG("the declarations name a schema '%s' they do not define", ref);
	return d;
}

static json_t *inline_depth(const json_t *defs, const json_t *v, int depth)
{
	const char *key, *ref = json_string_value(json_object_get(v, "$ref"));
	json_t *out, *x;
	size_t i;

	if (depth > 32)
		BUG("the declarations' $refs nest too deep (a schema that contains itself?)");
	if (ref)
		return inline_depth(defs, decl_def(defs, ref), depth + 1);
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x)
			json_array_append_new(out, inline_depth(defs, x, depth + 1));
		return out;
	}
	if (!json_is_object(v))
		return json_deep_copy(v);
	out = json_object();
	json_object_foreach((json_t *)v, key, x)
		json_object_set_new(out, key, inline_depth(defs, x, depth + 1));
	return out;
}

json_t *decl_inline(const json_t *defs, const json_t *schema)
{
	return inline_depth(defs, schema, 0);
}

json_t *decl_rebase(const json_t *schema, const char *prefix)
{
	const char *key, *ref = json_string_value(json_object_get(schema, "$ref"));
	json_t *out, *x;
	size_t i;

	if (ref && !strncmp(ref, "#/$defs/", 8)) {
		out = json_deep_copy(schema);
		json_object_set_new(out, "$ref", json_sprintf("%s%s", prefix, ref + 8));
		return out;
	}
	if (json_is_array(schema)) {
		out = json_array();
		json_array_foreach(schema, i, x)
			json_array_append_new(out, decl_rebase(x, prefix));
		return out;
	}
	if (!json_is_object(schema))
		return json_deep_copy(schema);
	out = json_object();
	json_object_foreach((json_t *)schema, key, x)
		json_object_set_new(out, key, decl_rebase(x, prefix));
	return out;
}
