/*
 * checkpoint.c -- validation, normalisation, canonical form and hashing of
 * Checkpoints.
 *
 * The canonical form (version 1) is the compact JSON object, keys sorted by
 * byte value, of: v, parent, merge_parent, title, summary, decisions,
 * assumptions, tasks, open_questions, entities, artifacts, metadata, author,
 * created_at.  docs/checkpoint-hash.md specifies it for other implementations.
 */
#include "domain/checkpoint.h"
#include "domain/item_texts.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/hex.h"

#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

const char *const checkpoint_list_fields[] = {
	"decisions", "assumptions", "tasks", "open_questions", "entities",
	"artifacts", NULL,
};

const json_t *checkpoint_list(const struct checkpoint *c, const char *name)
{
	if (!strcmp(name, "decisions"))
		return c->decisions;
	if (!strcmp(name, "assumptions"))
		return c->assumptions;
	if (!strcmp(name, "tasks"))
		return c->tasks;
	if (!strcmp(name, "open_questions"))
		return c->open_questions;
	if (!strcmp(name, "entities"))
		return c->entities;
	if (!strcmp(name, "artifacts"))
		return c->artifacts;
	return NULL;
}

json_t **checkpoint_list_slot(struct checkpoint *c, const char *name)
{
	if (!strcmp(name, "decisions"))
		return &c->decisions;
	if (!strcmp(name, "assumptions"))
		return &c->assumptions;
	if (!strcmp(name, "tasks"))
		return &c->tasks;
	if (!strcmp(name, "open_questions"))
		return &c->open_questions;
	if (!strcmp(name, "entities"))
		return &c->entities;
	if (!strcmp(name, "artifacts"))
		return &c->artifacts;
	return NULL;
}

static int is_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return 0;
	return 1;
}

const char *checkpoint_item_key(const char *field)
{
	return !strcmp(field, "entities") || !strcmp(field, "artifacts") ? "name" : "text";
}

static enum smr_rc check_optional_string(const json_t *item, const char *key,
					 const char *field, size_t idx,
					 struct smr_err *err)
{
	const json_t *v = json_object_get(item, key);

	if (v && !json_is_string(v))
		return smr_errf(err, SMR_EINVAL, "%s[%zu].%s must be a string",
				field, idx, key);
	return SMR_OK;
}

static enum smr_rc normalize_task_status(json_t *item, size_t idx, struct smr_err *err)
{
	const json_t *st = json_object_get(item, "status");
	const char *s;

	if (!st) {
		json_object_set_new(item, "status", json_string("open"));
		return SMR_OK;
	}
	if (!json_is_string(st))
		return smr_errf(err, SMR_EINVAL, "tasks[%zu].status must be a string", idx);
	s = json_string_value(st);
	if (strcmp(s, "open") && strcmp(s, "done"))
		return smr_errf(err, SMR_EINVAL,
				"tasks[%zu].status is '%s'; expected 'open' or 'done'", idx, s);
	return SMR_OK;
}

static enum smr_rc normalize_artifact(json_t *item, size_t idx, struct smr_err *err)
{
	const json_t *kind = json_object_get(item, "kind");
	const json_t *content = json_object_get(item, "content");

	if (!json_is_string(content))
		return smr_errf(err, SMR_EINVAL, "artifacts[%zu].content must be a string", idx);
	if (kind && !json_is_string(kind))
		return smr_errf(err, SMR_EINVAL, "artifacts[%zu].kind must be a string", idx);
	if (!kind)
		json_object_set_new(item, "kind", json_string("text"));
	return SMR_OK;
}

/* Characters in every string of v (keys aside), skipping an artifact's content. */
static size_t item_chars(const json_t *v, int skip_content)
{
	const char *key;
	json_t *x;
	size_t n = 0, i;

	if (json_is_string(v))
		return utf8_chars(json_string_value(v), json_string_length(v));
	if (json_is_array(v))
		json_array_foreach(v, i, x)
			n += item_chars(x, 0);
	if (json_is_object(v))
		json_object_foreach((json_t *)v, key, x)
			if (!(skip_content && !strcmp(key, "content")))
				n += item_chars(x, 0);
	return n;
}

static enum smr_rc check_item_size(const char *field, const json_t *item, size_t idx,
				   struct smr_err *err)
{
	int artifact = !strcmp(field, "artifacts");
	const json_t *content = json_is_object(item) && artifact ?
				json_object_get(item, "content") : NULL;
	size_t n = item_chars(item, artifact);

	if (n > CHECKPOINT_MAX_ITEM_CHARS)
		return smr_errf(err, SMR_ETOOBIG,
				"%s[%zu] has %zu characters; an item may have at most %d",
				field, idx, n, CHECKPOINT_MAX_ITEM_CHARS);
	n = content ? item_chars(content, 0) : 0;
	if (n > CHECKPOINT_MAX_CONTENT_CHARS)
		return smr_errf(err, SMR_ETOOBIG,
				"artifacts[%zu].content has %zu characters; an artifact's content"
				" may have at most %d", idx, n, CHECKPOINT_MAX_CONTENT_CHARS);
	return SMR_OK;
}

/* Turns one input element into a new normalised item object, or NULL with err set. */
static json_t *normalize_item(const char *field, const json_t *in, size_t idx,
			      struct smr_err *err)
{
	const char *key = checkpoint_item_key(field);
	const json_t *name;
	json_t *item;
	enum smr_rc rc = SMR_OK;

	if (json_is_string(in) && strcmp(field, "artifacts")) {
		item = json_object();
		json_object_set(item, key, (json_t *)in);
	} else if (json_is_object(in)) {
		item = json_copy((json_t *)in);   /* members shared: items are never changed in place */
	} else {
		smr_errf(err, SMR_EINVAL, "%s[%zu] must be %s", field, idx,
			 strcmp(field, "artifacts") ? "a string or an object" :
			 "an object {name, kind, content}");
		return NULL;
	}
	name = json_object_get(item, key);
	if (!json_is_string(name) || is_blank(json_string_value(name)))
		rc = smr_errf(err, SMR_EINVAL, "%s[%zu].%s must be a non-empty string",
			      field, idx, key);
	if (!rc && !strcmp(field, "tasks"))
		rc = normalize_task_status(item, idx, err);
	if (!rc && !strcmp(field, "artifacts"))
		rc = normalize_artifact(item, idx, err);
	if (!rc && !strcmp(field, "entities"))
		rc = check_optional_string(item, "kind", field, idx, err);
	if (!rc && !strcmp(field, "entities"))
		rc = check_optional_string(item, "description", field, idx, err);
	if (!rc)   /* what was given, not the defaults added ("status": "open") */
		rc = check_item_size(field, in, idx, err);
	if (rc) {
		json_decref(item);
		return NULL;
	}
	return item;
}

enum smr_rc checkpoint_check_item(const char *field, const json_t *item, size_t idx,
				  struct smr_err *err)
{
	json_t *norm = normalize_item(field, item, idx, err);

	if (!norm)
		return err ? err->code : SMR_EINVAL;
	json_decref(norm);
	return SMR_OK;
}

json_t *checkpoint_normalize_list(const char *field, const json_t *in,
				  struct smr_err *err)
{
	json_t *out, *item;
	size_t i;

	if (!json_is_array(in)) {
		smr_errf(err, SMR_EINVAL, "'%s' must be an array", field);
		return NULL;
	}
	/* before any work: a million items would otherwise be normalised first */
	if (json_array_size(in) > CHECKPOINT_MAX_ITEMS) {
		smr_errf(err, SMR_ETOOBIG, "'%s' has %zu items; a list may have at most %d",
			 field, json_array_size(in), CHECKPOINT_MAX_ITEMS);
		return NULL;
	}
	out = json_array();
	for (i = 0; i < json_array_size(in); i++) {
		item = normalize_item(field, json_array_get(in, i), i, err);
		if (!item) {
			json_decref(out);
			return NULL;
		}
		json_array_append_new(out, item);
	}
	return out;
}

static enum smr_rc take_string(const json_t *v, const char *key, char **dst,
			       struct smr_err *err)
{
	if (json_is_null(v))
		return SMR_OK;
	if (!json_is_string(v))
		return smr_errf(err, SMR_EINVAL, "'%s' must be a string", key);
	free(*dst);
	*dst = xstrdup(json_string_value(v));
	return SMR_OK;
}

static int is_output_only_key(const char *key)
{
	static const char *const keys[] = {
		"commit_hash", "parent_hash", "merge_parent_hash", "space",
		"created_at", NULL,
	};

	for (size_t i = 0; keys[i]; i++)
		if (!strcmp(key, keys[i]))
			return 1;
	return 0;
}

static enum smr_rc take_field(const char *key, const json_t *v,
			      struct checkpoint *out, struct smr_err *err)
{
	json_t **slot;

	if (!strcmp(key, "title"))
		return take_string(v, key, &out->title, err);
	if (!strcmp(key, "summary"))
		return take_string(v, key, &out->summary, err);
	if (!strcmp(key, "author"))
		return take_string(v, key, &out->author, err);
	if (!strcmp(key, "metadata")) {
		if (!json_is_object(v))
			return smr_errf(err, SMR_EINVAL, "'metadata' must be an object");
		json_decref(out->metadata);
		out->metadata = json_deep_copy(v);
		return SMR_OK;
	}
	slot = checkpoint_list_slot(out, key);
	if (slot) {
		json_t *norm = checkpoint_normalize_list(key, v, err);

		if (!norm)
			return err ? err->code : SMR_EINVAL;
		json_decref(*slot);
		*slot = norm;
		return SMR_OK;
	}
	if (is_output_only_key(key))
		return SMR_OK;
	return smr_errf(err, SMR_EINVAL, "unknown checkpoint field '%s'", key);
}

enum smr_rc checkpoint_from_json(const json_t *in, struct checkpoint *out,
				 struct smr_err *err)
{
	const char *key;
	json_t *v;
	enum smr_rc rc;

	if (!json_is_object(in))
		return smr_errf(err, SMR_EINVAL, "a checkpoint must be a JSON object");
	json_object_foreach((json_t *)in, key, v) {
		rc = take_field(key, v, out, err);
		if (rc)
			return rc;
	}
	return checkpoint_check_limits(out, err);
}

/*
 * At least as many bytes as s takes in compact JSON: jansson escapes '"',
 * '\\' and control characters only (six bytes at most each), and writes
 * the rest as it is.
 */
static size_t string_bound(const char *s, size_t len)
{
	size_t n = len + 2;

	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20)
			n += 5;
		else if (ch == '"' || ch == '\\')
			n += 1;
	}
	return n;
}

/*
 * At least as many bytes as v takes in compact JSON (numbers at their
 * longest); a value t holds a text of (a patch's item shared with the
 * checkpoint it was made from) at that text's length.  t may be NULL.
 */
static size_t json_bound(const json_t *v, const struct item_texts *t)
{
	const char *key;
	json_t *x;
	size_t n = 2, i, known = item_texts_canon_len(t, v);

	if (known)
		return known;
	if (!v)
		return 4;
	switch (json_typeof(v)) {
	case JSON_STRING:
		return string_bound(json_string_value(v), json_string_length(v));
	case JSON_ARRAY:
		json_array_foreach(v, i, x)
			n += json_bound(x, t) + 1;
		return n;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, x)
			n += string_bound(key, strlen(key)) + 1 + json_bound(x, t) + 1;
		return n;
	default:
		return 32;   /* a number, true, false, null */
	}
}

/*
 * At least as many bytes as checkpoint_canonical(c) has, without writing
 * it: a write checks the limit once it has its content and writes the
 * canonical form once, for its hash.  A patch's items it shares with the
 * checkpoint it was made from are counted from their texts.
 */
static size_t canonical_bound(const struct checkpoint *c)
{
	const char *const texts[] = { c->title, c->summary, c->author, c->created_at,
				      c->parent_hash, c->merge_parent_hash };
	size_t n = 256;   /* braces, keys, "v" and the nulls of a root */

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		n += texts[i] ? string_bound(texts[i], strlen(texts[i])) : 0;
	for (size_t i = 0; checkpoint_list_fields[i]; i++)
		n += json_bound(checkpoint_list(c, checkpoint_list_fields[i]), c->texts);
	return n + json_bound(c->metadata, NULL);
}

enum smr_rc checkpoint_check_limits(const struct checkpoint *c, struct smr_err *err)
{
	size_t n = c->title ? utf8_chars(c->title, strlen(c->title)) : 0;
	char *canon;

	if (n > CHECKPOINT_MAX_ITEM_CHARS)
		return smr_errf(err, SMR_ETOOBIG, "the title has %zu characters; at most %d",
				n, CHECKPOINT_MAX_ITEM_CHARS);
	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		const json_t *list = checkpoint_list(c, checkpoint_list_fields[i]);

		if (json_array_size(list) > CHECKPOINT_MAX_ITEMS)
			return smr_errf(err, SMR_ETOOBIG,
					"'%s' has %zu items; a list may have at most %d",
					checkpoint_list_fields[i], json_array_size(list),
					CHECKPOINT_MAX_ITEMS);
	}
	if (canonical_bound(c) <= CHECKPOINT_MAX_BYTES)
		return SMR_OK;   /* no need to serialise it to know */
	canon = checkpoint_canonical(c);
	n = strlen(canon);
	free(canon);
	if (n > CHECKPOINT_MAX_BYTES)
		return smr_errf(err, SMR_ETOOBIG,
				"the checkpoint is %zu bytes as JSON; at most %u bytes (4 MiB)"
				" are allowed", n, CHECKPOINT_MAX_BYTES);
	return SMR_OK;
}

#define DUP_QUOTE_CHARS 200

const char *checkpoint_item_noun(const char *field)
{
	static const char *const singular[][2] = {
		{ "decisions", "decision" }, { "assumptions", "assumption" }, { "tasks", "task" },
		{ "open_questions", "question" }, { "entities", "entity" },
		{ "artifacts", "artifact" },
	};

	for (size_t i = 0; i < sizeof(singular) / sizeof(singular[0]); i++)
		if (!strcmp(field, singular[i][0]))
			return singular[i][1];
	return field;
}

enum smr_rc checkpoint_err_duplicate(const char *field, const char *key, struct smr_err *err)
{
	size_t n = strlen(key), cut = utf8_prefix_bytes(key, n, DUP_QUOTE_CHARS);

	return smr_errf(err, SMR_EUNPROC, "%s '%.*s%s' is already there (a list holds each item"
			" once)", checkpoint_item_noun(field), (int)cut, key, cut < n ? "..." : "");
}

/* The first key of list that an earlier item has too, or NULL. */
static const char *first_repeat(const json_t *list, const char *field)
{
	json_t *seen = json_object(), *item;
	const char *key, *found = NULL;
	size_t i;

	json_array_foreach(list, i, item) {
		key = json_string_value(json_object_get(item, checkpoint_item_key(field)));
		if (!key)
			continue;
		if (json_object_get(seen, key)) {
			found = key;
			break;
		}
		json_object_set_new(seen, key, json_true());
	}
	json_decref(seen);
	return found;
}

enum smr_rc checkpoint_check_unique(const struct checkpoint *c, struct smr_err *err)
{
	const char *field, *key;

	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		field = checkpoint_list_fields[i];
		key = first_repeat(checkpoint_list(c, field), field);
		if (key)
			return checkpoint_err_duplicate(field, key, err);
	}
	return SMR_OK;
}

int checkpoint_is_empty(const struct checkpoint *c)
{
	if (c->title && !is_blank(c->title))
		return 0;
	if (c->summary && !is_blank(c->summary))
		return 0;
	for (size_t i = 0; checkpoint_list_fields[i]; i++)
		if (json_array_size(checkpoint_list(c, checkpoint_list_fields[i])))
			return 0;
	return 1;
}

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *string_or_empty(const char *s)
{
	return json_string(s ? s : "");
}

static void add_content(json_t *o, const struct checkpoint *c)
{
	json_object_set_new(o, "title", string_or_empty(c->title));
	json_object_set_new(o, "summary", string_or_empty(c->summary));
	/* the lists are shared with o, which only reads them (jansson counts references) */
	for (size_t i = 0; checkpoint_list_fields[i]; i++)
		json_object_set(o, checkpoint_list_fields[i],
				(json_t *)checkpoint_list(c, checkpoint_list_fields[i]));
	json_object_set(o, "metadata", c->metadata);
	json_object_set_new(o, "author", string_or_empty(c->author));
	json_object_set_new(o, "created_at", string_or_empty(c->created_at));
}

char *checkpoint_canonical(const struct checkpoint *c)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "v", json_integer(1));
	json_object_set_new(o, "parent", string_or_null(c->parent_hash));
	json_object_set_new(o, "merge_parent", string_or_null(c->merge_parent_hash));
	add_content(o, c);
	s = json_dumps(o, ITEM_TEXTS_CANONICAL);
	json_decref(o);
	if (!s)
		BUG("cannot serialise a checkpoint for its hash");
	return s;
}

/* out: the hex SHA-256 of canon, which is freed. */
static void hash_canonical(char *canon, char out[HASH_HEX_LEN + 1])
{
	uint8_t digest[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, strlen(canon), (const uint8_t *)canon);
	sha256_digest(&ctx, sizeof(digest), digest);
	free(canon);
	hex_encode(digest, sizeof(digest), out);
}

void checkpoint_compute_hash(const struct checkpoint *c, char out[HASH_HEX_LEN + 1])
{
	hash_canonical(checkpoint_canonical(c), out);
}

/* Appends v as the canonical form writes it, and drops v; -1 if v is NULL. */
static int put_value(struct buf *b, const char *key, json_t *v)
{
	char *s = v ? json_dumps(v, ITEM_TEXTS_CANONICAL | JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	if (!s)
		return -1;
	buf_addf(b, "%s\"%s\":%s", b->len > 1 ? "," : "", key, s);
	free(s);
	return 0;
}

/*
 * checkpoint_canonical's text, the lists put together from t (every item
 * of c must be in it), or NULL to write it whole.  The keys go in byte
 * order, as JSON_SORT_KEYS puts them; a value add_content would leave out
 * (a NULL list, text that is not UTF-8) sends the caller the whole way.
 */
static char *canonical_from(const struct checkpoint *c, const struct item_texts *t)
{
	static const char *const keys[] = {
		"artifacts", "assumptions", "author", "created_at", "decisions", "entities",
		"merge_parent", "metadata", "open_questions", "parent", "summary", "tasks",
		"title", "v", NULL,
	};
	struct buf b = BUF_INIT(0);
	const json_t *list;
	const char *k;
	int bad = 0;

	buf_reserve(&b, item_texts_bytes(t) + 1024);
	buf_addch(&b, '{');
	for (size_t i = 0; keys[i] && !bad; i++) {
		k = keys[i];
		list = checkpoint_list(c, k);
		if (list) {
			buf_addf(&b, "%s\"%s\":", b.len > 1 ? "," : "", k);
			bad = item_texts_list(t, list, 1, &b);
		} else if (!strcmp(k, "author"))
			bad = put_value(&b, k, string_or_empty(c->author));
		else if (!strcmp(k, "created_at"))
			bad = put_value(&b, k, string_or_empty(c->created_at));
		else if (!strcmp(k, "merge_parent"))
			bad = put_value(&b, k, string_or_null(c->merge_parent_hash));
		else if (!strcmp(k, "metadata"))
			bad = put_value(&b, k, json_incref(c->metadata));
		else if (!strcmp(k, "parent"))
			bad = put_value(&b, k, string_or_null(c->parent_hash));
		else if (!strcmp(k, "summary"))
			bad = put_value(&b, k, string_or_empty(c->summary));
		else if (!strcmp(k, "title"))
			bad = put_value(&b, k, string_or_empty(c->title));
		else if (!strcmp(k, "v"))
			bad = put_value(&b, k, json_integer(1));
		else
			bad = -1;   /* a list c does not have */
	}
	buf_addch(&b, '}');
	if (bad) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

void checkpoint_seal(struct checkpoint *c)
{
	struct item_texts *t = item_texts_make(c, c->texts);
	char hash[HASH_HEX_LEN + 1];
	char *canon;

	/* the texts of c's items, those it shares with the checkpoint it was made from copied */
	item_texts_unref(c->texts);
	c->texts = t;
	canon = canonical_from(c, t);
	if (!canon)
		canon = checkpoint_canonical(c);
	hash_canonical(canon, hash);
	free(c->hash);
	c->hash = xstrdup(hash);
}

json_t *checkpoint_to_json(const struct checkpoint *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "commit_hash", string_or_null(c->hash));
	json_object_set_new(o, "parent_hash", string_or_null(c->parent_hash));
	if (c->merge_parent_hash)
		json_object_set_new(o, "merge_parent_hash", json_string(c->merge_parent_hash));
	json_object_set_new(o, "space", string_or_null(c->space));
	add_content(o, c);
	return o;
}

char *checkpoint_content_text(const struct checkpoint *c)
{
	json_t *j = checkpoint_to_json(c);
	char *text;

	json_object_del(j, "space");
	text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	return text;
}

/*
 * dst's content fields become src's, each list and the metadata through
 * copy: json_deep_copy (new items), json_copy (src's items, shared) or
 * same (src's very lists).
 * The texts go with shared items only.
 */
static void copy_content(struct checkpoint *dst, const struct checkpoint *src,
			 json_t *(*copy)(const json_t *))
{
	json_t **slot;

	free(dst->title);
	free(dst->summary);
	free(dst->author);
	dst->title = xstrdup(src->title);
	dst->summary = xstrdup(src->summary);
	dst->author = xstrdup(src->author);
	for (size_t i = 0; checkpoint_list_fields[i]; i++) {
		slot = checkpoint_list_slot(dst, checkpoint_list_fields[i]);
		json_decref(*slot);
		*slot = copy(checkpoint_list(src, checkpoint_list_fields[i]));
	}
	json_decref(dst->metadata);
	dst->metadata = copy(src->metadata);
	item_texts_unref(dst->texts);
	dst->texts = copy == json_deep_copy ? NULL : item_texts_ref(src->texts);
}

/* json_copy, which does not change what it copies (its prototype is not const). */
static json_t *share(const json_t *v)
{
	return json_copy((json_t *)v);
}

/* json_incref: the very list, for checkpoints that do not change theirs in place. */
static json_t *same(const json_t *v)
{
	return json_incref((json_t *)v);
}

void checkpoint_share_lists(struct checkpoint *dst, const struct checkpoint *src)
{
	copy_content(dst, src, same);
}

json_t *checkpoint_own_list(struct checkpoint *c, const struct checkpoint *from,
			    const char *field)
{
	json_t **slot = checkpoint_list_slot(c, field), *mine;

	if (from && *slot == checkpoint_list(from, field)) {
		mine = json_copy(*slot);
		json_decref(*slot);
		*slot = mine;
	}
	return *slot;
}

void checkpoint_copy_content(struct checkpoint *dst, const struct checkpoint *src)
{
	copy_content(dst, src, json_deep_copy);
}

void checkpoint_share_content(struct checkpoint *dst, const struct checkpoint *src)
{
	copy_content(dst, src, share);
}

/*
 * 1 when a and b are written out as the same JSON text: same values, and
 * an object's keys in the same order (which json_equal does not ask, and
 * the stored form keeps); a real number by its bits, as -0.0 is not 0.0.
 */
static int same_text(const json_t *a, const json_t *b)
{
	void *ia, *ib;
	size_t i;
	double x, y;

	if (a == b)
		return 1;
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		ia = json_object_iter((json_t *)a);
		ib = json_object_iter((json_t *)b);
		for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
				 ib = json_object_iter_next((json_t *)b, ib))
			if (json_object_iter_key_len(ia) != json_object_iter_key_len(ib) ||
			    memcmp(json_object_iter_key(ia), json_object_iter_key(ib),
				   json_object_iter_key_len(ia)) ||
			    !same_text(json_object_iter_value(ia), json_object_iter_value(ib)))
				return 0;
		return !ia && !ib;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!same_text(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       !memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
	case JSON_INTEGER:
		return json_integer_value(a) == json_integer_value(b);
	case JSON_REAL:
		x = json_real_value(a);
		y = json_real_value(b);
		return !memcmp(&x, &y, sizeof(x));
	default:
		return 1;   /* true, false, null: the type is the value */
	}
}

void checkpoint_adopt_items(struct checkpoint *c, const struct checkpoint *from)
{
	const json_t *theirs;
	json_t *mine;
	size_t n, adopted = 0;

	if (c->texts || !from->texts)
		return;
	for (size_t f = 0; checkpoint_list_fields[f]; f++) {
		mine = *checkpoint_list_slot(c, checkpoint_list_fields[f]);
		theirs = checkpoint_list(from, checkpoint_list_fields[f]);
		n = json_array_size(mine) < json_array_size(theirs) ? json_array_size(mine)
								    : json_array_size(theirs);
		for (size_t i = 0; i < n; i++)
			if (json_array_get(mine, i) != json_array_get(theirs, i) &&
			    same_text(json_array_get(mine, i), json_array_get(theirs, i))) {
				/* counted once more, not changed: items are shared so */
				json_array_set(mine, i, (json_t *)json_array_get(theirs, i));
				adopted++;
			}
	}
	if (adopted)
		c->texts = item_texts_ref(from->texts);
}

int is_hash_prefix(const char *s)
{
	size_t n = strlen(s);

	if (n < 4 || n > HASH_HEX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}
