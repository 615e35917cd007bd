/*
 * bundle.c -- write and check the export bundle (see bundle.h).
 */
#include "domain/bundle.h"
#include "domain/checkpoint.h"
#include "util/buf.h"
#include "util/jspan.h"
#include "util/strmap.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

void space_bundle_release(struct space_bundle *b)
{
	space_release(&b->space);
	checkpoints_free(b->checkpoints, b->n_checkpoints);
	for (size_t i = 0; i < b->n_sessions; i++)
		turns_free(b->turns[i], b->n_turns[i]);
	sessions_free(b->sessions, b->n_sessions);
	free(b->turns);
	free(b->n_turns);
	reflog_entries_free(b->reflog, b->n_reflog);
	bundle_drop_texts(b);
	memset(b, 0, sizeof(*b));
}

void bundle_drop_texts(struct space_bundle *b)
{
	for (size_t i = 0; i < b->n_owned; i++)
		free(b->owned[i]);
	free(b->owned);
	free(b->texts);
	b->owned = NULL;
	b->texts = NULL;
	b->n_owned = b->cap_owned = 0;
}

void space_bundles_free(struct space_bundle *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		space_bundle_release(&v[i]);
	free(v);
}

/* ---- writing ---- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *int_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *turn_json(const struct turn *t)
{
	return json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
			 "seq", (json_int_t)t->seq, "role", t->role, "content", t->content,
			 "provider", str_or_null(t->provider), "model", str_or_null(t->model),
			 "prompt_tokens", int_or_null(t->prompt_tokens),
			 "completion_tokens", int_or_null(t->completion_tokens),
			 "latency_ms", int_or_null(t->latency_ms), "error", str_or_null(t->error),
			 "status", str_or_null(t->status), "created_at", t->created_at);
}

static json_t *session_json(const struct session *s, const struct turn *turns, size_t n)
{
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, turn_json(&turns[i]));
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:s, s:o}", "id", s->id, "title",
			 s->title ? s->title : "", "mounted_commit_hash",
			 str_or_null(s->mounted_hash), "forked_from_session_id",
			 str_or_null(s->forked_from), "history_base_seq",
			 int_or_null(s->history_base_seq), "created_at", s->created_at,
			 "turns", list);
}

static json_t *reflog_json(const struct reflog_entry *e)
{
	return json_pack("{s:s, s:o, s:o, s:s, s:s, s:s, s:s}", "space", e->space_name,
			 "old", str_or_null(e->old_hash), "new", str_or_null(e->new_hash),
			 "action", e->action, "actor", e->actor, "reason", e->reason,
			 "created_at", e->created_at);
}

static json_t *space_json(const struct space_bundle *b)
{
	json_t *ck = json_array(), *ss = json_array(), *rl = json_array(), *c;

	for (size_t i = 0; i < b->n_checkpoints; i++) {
		c = checkpoint_to_json(&b->checkpoints[i]);
		json_object_del(c, "space");   /* the Space is the one around it */
		json_array_append_new(ck, c);
	}
	for (size_t i = 0; i < b->n_sessions; i++)
		json_array_append_new(ss, session_json(&b->sessions[i], b->turns[i], b->n_turns[i]));
	for (size_t i = 0; i < b->n_reflog; i++)
		json_array_append_new(rl, reflog_json(&b->reflog[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "id", b->space.id, "name",
			 b->space.name, "description",
			 b->space.description ? b->space.description : "", "created_at",
			 b->space.created_at, "head", str_or_null(b->space.head),
			 "checkpoints", ck, "sessions", ss, "reflog", rl);
}

/* The 64 hex digits of a SHA-256 digest into out (no NUL). */
static void digest_hex(const uint8_t d[SHA256_DIGEST_SIZE], char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
}

/* Hex SHA-256 of the compact text of light, the Spaces as the digest sees them. */
static void digest_light(const json_t *light, char out[65])
{
	char *text = json_dumps(light, JSON_COMPACT | JSON_REAL_PRECISION(17));
	uint8_t d[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;

	if (!text)
		BUG("cannot serialise a bundle");
	sha256_init(&ctx);
	sha256_update(&ctx, strlen(text), (const uint8_t *)text);
	sha256_digest(&ctx, sizeof(d), d);
	free(text);
	digest_hex(d, out);
	out[64] = '\0';
}

/*
 * Hex SHA-256 of spaces with each checkpoint reduced to its commit_hash:
 * a checkpoint is covered by its own hash, recomputed on import, so the
 * digest needs only what no other hash covers (the Space, the order of
 * its checkpoints, sessions, turns, reflog), and stays cheap.
 */
void bundle_digest(const json_t *spaces, char out[65])
{
	json_t *light = json_array(), *sp, *ck, *hashes;
	size_t s, j;

	json_array_foreach(spaces, s, sp) {
		json_t *copy = json_copy(sp);

		hashes = json_array();
		json_array_foreach(json_object_get(sp, "checkpoints"), j, ck)
			json_array_append(hashes, json_object_get(ck, "commit_hash") ?: json_null());
		if (json_is_object(copy))
			json_object_set_new(copy, "checkpoints", hashes);
		else
			json_decref(hashes);
		json_array_append_new(light, copy ? copy : json_null());
	}
	digest_light(light, out);
	json_decref(light);
}

json_t *bundle_to_json(const struct space_bundle *v, size_t n)
{
	json_t *spaces = json_array();
	char digest[65];

	for (size_t i = 0; i < n; i++)
		json_array_append_new(spaces, space_json(&v[i]));
	bundle_digest(spaces, digest);
	return json_pack("{s:s, s:i, s:s, s:o}", "format", BUNDLE_FORMAT, "version",
			 BUNDLE_VERSION, "sha256", digest, "spaces", spaces);
}

/* ---- reading ---- */

/* A string member: required (NULL refused) or optional (null -> NULL); copied. */
static int get_str(const json_t *o, const char *key, int required, char **out)
{
	const json_t *v = json_object_get(o, key);

	*out = NULL;
	if ((!v || json_is_null(v)) && !required)
		return 0;
	if (!json_is_string(v))
		return -1;
	*out = xstrdup(json_string_value(v));
	return 0;
}

static int get_int(const json_t *o, const char *key, int64_t *out)
{
	const json_t *v = json_object_get(o, key);

	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

static enum smr_rc bad(struct smr_err *err, const char *space, const char *what)
{
	return smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s': %s; nothing was imported",
			space, what);
}

static int read_turn(const json_t *o, const char *session_id, int64_t want, struct turn *t)
{
	memset(t, 0, sizeof(*t));
	if (!json_is_object(o) || get_int(o, "seq", &t->seq) || t->seq != want ||
	    get_str(o, "role", 1, &t->role) || get_str(o, "content", 1, &t->content) ||
	    get_str(o, "provider", 0, &t->provider) || get_str(o, "model", 0, &t->model) ||
	    get_int(o, "prompt_tokens", &t->prompt_tokens) ||
	    get_int(o, "completion_tokens", &t->completion_tokens) ||
	    get_int(o, "latency_ms", &t->latency_ms) || get_str(o, "error", 0, &t->error) ||
	    get_str(o, "status", 0, &t->status) ||
	    get_str(o, "created_at", 1, &t->created_at))
		return -1;
	t->session_id = xstrdup(session_id);
	return 0;
}

static enum smr_rc read_sessions(const json_t *list, struct space_bundle *b,
				 struct smr_err *err)
{
	size_t i, j, n = json_array_size(list);
	json_t *o, *t;

	if (!json_is_array(list))
		return bad(err, b->space.name, "sessions is not an array");
	b->sessions = xcalloc(n + 1, sizeof(*b->sessions));
	b->turns = xcalloc(n + 1, sizeof(*b->turns));
	b->n_turns = xcalloc(n + 1, sizeof(*b->n_turns));
	json_array_foreach(list, i, o) {
		struct session *s = &b->sessions[i];
		const json_t *turns = json_object_get(o, "turns");

		b->n_sessions = i + 1;
		if (!json_is_object(o) || get_str(o, "id", 1, &s->id) ||
		    get_str(o, "title", 1, &s->title) ||
		    get_str(o, "mounted_commit_hash", 0, &s->mounted_hash) ||
		    get_str(o, "forked_from_session_id", 0, &s->forked_from) ||
		    get_int(o, "history_base_seq", &s->history_base_seq) ||
		    get_str(o, "created_at", 1, &s->created_at) || !json_is_array(turns))
			return bad(err, b->space.name, "a session is missing a field or has one of"
				   " the wrong type");
		s->repo_id = xstrdup(b->space.id);
		b->turns[i] = xcalloc(json_array_size(turns) + 1, sizeof(**b->turns));
		json_array_foreach(turns, j, t) {
			b->n_turns[i] = j + 1;
			if (read_turn(t, s->id, (int64_t)j + 1, &b->turns[i][j]))
				return bad(err, b->space.name, "a turn is malformed or out of"
					   " sequence");
		}
	}
	return SMR_OK;
}

static enum smr_rc read_reflog(const json_t *list, struct space_bundle *b,
			       struct smr_err *err)
{
	size_t i;
	json_t *o;

	if (!json_is_array(list))
		return bad(err, b->space.name, "reflog is not an array");
	b->reflog = xcalloc(json_array_size(list) + 1, sizeof(*b->reflog));
	json_array_foreach(list, i, o) {
		struct reflog_entry *e = &b->reflog[i];

		b->n_reflog = i + 1;
		if (!json_is_object(o) || get_str(o, "space", 1, &e->space_name) ||
		    get_str(o, "old", 0, &e->old_hash) || get_str(o, "new", 0, &e->new_hash) ||
		    get_str(o, "action", 1, &e->action) || get_str(o, "actor", 1, &e->actor) ||
		    get_str(o, "reason", 1, &e->reason) ||
		    get_str(o, "created_at", 1, &e->created_at))
			return bad(err, b->space.name, "a reflog entry is malformed");
		e->space_id = xstrdup(b->space.id);
	}
	return SMR_OK;
}


/*
 * A bundle is read from its text, walked with util/jspan.h, never parsed
 * whole: a tree of 100,000 checkpoints cost more time to build and free
 * than everything else an import does.  Each checkpoint's items go to
 * jansson one by one, and only once: a checkpoint carries most of its
 * parent's items, so an item whose text was met in one of the last
 * ITEM_WINDOW checkpoints is the value already parsed, checked and
 * serialised then (the same bytes are the same value).  Everything the
 * hashes cover is still recomputed from the values.
 */

#define ITEM_WINDOW 64
#define META 6                        /* the cache's field number of metadata */

/* One distinct item text of a list (or a metadata object) met in the bundle. */
struct item {
	const char *span;                 /* its text in the bundle (own: a copy) */
	char *own;
	size_t len;
	uint64_t h;
	int field;                        /* checkpoint_list_fields' index, or META */
	json_t *value;                    /* parsed and checked */
	char *compact;                    /* what a store writes, when not span */
	size_t clen;
	char *canon;                      /* what is hashed (keys sorted), when not compact */
	size_t nlen;
	size_t used;                      /* the last checkpoint that held it */
};

struct reader {
	struct item **slot;               /* open addressing on h */
	size_t cap, n;
	size_t tick;                      /* checkpoints read */
	int stored;                       /* items from a store's rows: copied, checked no more */
	struct item **items[CHECKPOINT_TEXT_COLS];   /* the checkpoint's, per field */
	size_t n_items[CHECKPOINT_TEXT_COLS], cap_items[CHECKPOINT_TEXT_COLS];
	/* the last checkpoint's lists: a list written the same is the same value */
	const char *last_span[6];
	size_t last_len[6];
	json_t *last_list[6];                        /* a reference */
	const char *last_text[6];
	size_t last_tlen[6];
};

static void item_free(struct item *it)
{
	json_decref(it->value);
	free(it->own);
	free(it->compact);
	free(it->canon);
	free(it);
}

static void reader_release(struct reader *r)
{
	for (size_t i = 0; i < r->cap; i++)
		if (r->slot[i])
			item_free(r->slot[i]);
	free(r->slot);
	for (int f = 0; f < CHECKPOINT_TEXT_COLS; f++)
		free(r->items[f]);
	for (int f = 0; f < 6; f++)
		json_decref(r->last_list[f]);
	memset(r, 0, sizeof(*r));
}

/* A hash of the text, eight bytes a step (every item of every checkpoint goes through it). */
static uint64_t span_hash(int field, const char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)field << 56) ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static void slot_put(struct item **slot, size_t cap, struct item *it)
{
	size_t i = it->h & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = it;
}

/* Rebuilds the table at cap, dropping the items no checkpoint of the window held. */
static void reader_rehash(struct reader *r, size_t cap)
{
	struct item **old = r->slot;
	size_t ocap = r->cap;

	r->slot = xcalloc(cap, sizeof(*r->slot));
	r->cap = cap;
	r->n = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i])
			continue;
		if (old[i]->used + ITEM_WINDOW < r->tick) {
			item_free(old[i]);
			continue;
		}
		slot_put(r->slot, cap, old[i]);
		r->n++;
	}
	free(old);
}

static struct item *reader_find(const struct reader *r, int field, const char *p, size_t n,
				uint64_t h)
{
	for (size_t i = h & (r->cap - 1); r->cap && r->slot[i]; i = (i + 1) & (r->cap - 1)) {
		const struct item *it = r->slot[i];

		if (it->h == h && it->field == field && it->len == n && !memcmp(it->span, p, n))
			return r->slot[i];
	}
	return NULL;
}

/* jansson's text of v with flags; caller frees. */
static char *dump(const json_t *v, size_t flags, size_t *len)
{
	char *s = json_dumps(v, flags | JSON_ENCODE_ANY);

	if (!s)
		BUG("cannot serialise a value jansson parsed");
	*len = strlen(s);
	return s;
}

/* A new item for the text [p, p + n) of field: parsed, checked, serialised both ways. */
static enum smr_rc item_new(int field, const char *p, size_t n, size_t idx, uint64_t h,
			    int stored, struct item **out, struct smr_err *err)
{
	struct item *it = xcalloc(1, sizeof(*it));
	json_error_t jerr;
	enum smr_rc rc = SMR_OK;
	int form;

	*it = (struct item){ .span = p, .len = n, .h = h, .field = field };
	it->value = json_loadb(p, n, JSON_DECODE_ANY, &jerr);
	if (!it->value)
		rc = smr_errf(err, SMR_EUNPROC, "%s", jerr.text);
	else if (stored)
		rc = SMR_OK;
	else if (field == META && !json_is_object(it->value))
		rc = smr_errf(err, SMR_EUNPROC, "its metadata is not an object");
	else if (field != META)
		rc = checkpoint_check_item(checkpoint_list_fields[field], it->value, idx, err);
	if (rc) {
		item_free(it);
		return rc;
	}
	/* serialised again only where the text is not already jansson's (util/jspan.h) */
	form = jspan_compact(p, n);
	it->clen = n;
	if (!form) {
		it->compact = dump(it->value, JSON_COMPACT, &it->clen);
		if (it->clen == n && !memcmp(it->compact, p, n)) {
			free(it->compact);
			it->compact = NULL;
		}
	}
	if (!stored && form != JSPAN_SORTED) {   /* a store's item is never hashed here */
		it->canon = dump(it->value, JSON_COMPACT | JSON_SORT_KEYS |
				 JSON_REAL_PRECISION(17), &it->nlen);
		if (it->nlen == it->clen &&
		    !memcmp(it->canon, it->compact ? it->compact : p, it->clen)) {
			free(it->canon);
			it->canon = NULL;
		}
	}
	if (stored) {   /* the row it came from is gone at the next one */
		it->own = xstrndup(p, n);
		it->span = it->own;
	}
	*out = it;
	return SMR_OK;
}

static const char *item_compact(const struct item *it, size_t *len)
{
	*len = it->compact ? it->clen : it->len;
	return it->compact ? it->compact : it->span;
}

static const char *item_canon(const struct item *it, size_t *len)
{
	if (it->canon) {
		*len = it->nlen;
		return it->canon;
	}
	return item_compact(it, len);
}

/* The item of field written [p, p + n): the one met before, or a new one. */
static enum smr_rc reader_item(struct reader *r, int field, const char *p, size_t n,
			       size_t idx, struct item **out, struct smr_err *err)
{
	uint64_t h = span_hash(field, p, n);
	struct item *it = reader_find(r, field, p, n, h);
	enum smr_rc rc;

	if (!it) {
		rc = item_new(field, p, n, idx, h, r->stored, &it, err);
		if (rc)
			return rc;
		if (2 * (r->n + 1) > r->cap)
			reader_rehash(r, r->cap ? 2 * r->cap : 1024);
		slot_put(r->slot, r->cap, it);
		r->n++;
	}
	it->used = r->tick;
	*out = it;
	return SMR_OK;
}

/* ---- the members of an object ---- */

struct member {
	const char *key;                  /* its text, quotes included */
	size_t klen;
	const char *val;
	size_t vlen;
};

/* 1 when the key of m is name (a key with escapes is decoded first). */
static int key_is(const struct member *m, const char *name)
{
	size_t n = strlen(name);
	json_t *k;
	int yes;

	if (jspan_plain_string(m->key, m->key + m->klen))
		return m->klen == n + 2 && !memcmp(m->key + 1, name, n);
	k = json_loadb(m->key, m->klen, JSON_DECODE_ANY, NULL);
	yes = json_is_string(k) && !strcmp(json_string_value(k), name);
	json_decref(k);
	return yes;
}

/*
 * The members of the object [p, end) in order: *out (caller frees) has *n.
 * -1 when it is not an object of string keys.
 */
static int members(const char *p, const char *end, struct member **out, size_t *n)
{
	struct member *v = NULL;
	size_t len = 0, cap = 0;
	const char *q;

	p = jspan_ws(p, end);
	if (p == end || *p++ != '{')
		return -1;
	p = jspan_ws(p, end);
	if (p < end && *p == '}' && jspan_ws(p + 1, end) == end)
		return *out = NULL, *n = 0, 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		p = jspan_ws(p, end);
		if (p == end || *p != '"' || !(q = jspan_end(p, end)))
			break;
		v[len] = (struct member){ p, (size_t)(q - p), NULL, 0 };
		p = jspan_ws(q, end);
		if (p == end || *p++ != ':')
			break;
		p = jspan_ws(p, end);
		q = jspan_end(p, end);
		if (!q)
			break;
		v[len].val = p;
		v[len++].vlen = (size_t)(q - p);
		p = jspan_ws(q, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}' && jspan_ws(p + 1, end) == end) {
			*out = v;
			*n = len;
			return 0;
		}
		break;
	}
	free(v);
	return -1;
}

/* The member of v[0..n) called name, NULL if none; 1 in *twice when there are two. */
static const struct member *member_of(const struct member *v, size_t n, const char *name,
				      int *twice)
{
	const struct member *m = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!key_is(&v[i], name))
			continue;
		if (m)
			*twice = 1;
		m = &v[i];
	}
	return m;
}

/* ---- one checkpoint ---- */

/* The key of m decoded; caller frees; NULL when it is not a string. */
static char *key_of(const struct member *m)
{
	json_t *k;
	char *s;

	if (jspan_plain_string(m->key, m->key + m->klen))
		return xstrndup(m->key + 1, m->klen - 2);
	k = json_loadb(m->key, m->klen, JSON_DECODE_ANY, NULL);
	s = json_is_string(k) ? xstrdup(json_string_value(k)) : NULL;
	json_decref(k);
	return s;
}

/* A string member: its value (owned) and its JSON text as jansson writes it. */
struct str {
	char *value;                      /* NULL: null */
	const char *json;
	size_t jlen;
	char *own;                        /* json, when it is not the bundle's bytes */
};

static void str_release(struct str *s)
{
	free(s->value);
	free(s->own);
	memset(s, 0, sizeof(*s));
}

/* -1 when m is missing (and required) or neither a string nor null (or null and required). */
static int read_str(const struct member *m, int required, struct str *s)
{
	json_t *v;

	memset(s, 0, sizeof(*s));
	if (!m || (m->vlen == 4 && !memcmp(m->val, "null", 4))) {
		s->json = "null";
		s->jlen = 4;
		return required ? -1 : 0;
	}
	if (jspan_plain_string(m->val, m->val + m->vlen)) {
		s->value = xstrndup(m->val + 1, m->vlen - 2);
		s->json = m->val;
		s->jlen = m->vlen;
		return 0;
	}
	v = json_loadb(m->val, m->vlen, JSON_DECODE_ANY, NULL);
	if (!json_is_string(v)) {
		json_decref(v);
		return -1;
	}
	s->value = xstrdup(json_string_value(v));
	s->own = dump(v, JSON_COMPACT, &s->jlen);
	s->json = s->own;
	json_decref(v);
	return 0;
}

enum { S_HASH, S_PARENT, S_MERGE, S_TITLE, S_SUMMARY, S_AUTHOR, S_CREATED, N_STR };

/* What one checkpoint object of the bundle holds while it is read. */
struct ck_text {
	struct str s[N_STR];
	const struct member *list[6], *meta;
	int exact[6];                     /* the list's text is what a store writes */
	int same[6];                      /* the list is written as the last checkpoint's */
};

/*
 * Which field of a checkpoint m is: 0..N_STR-1, N_STR + list, 2 * N_STR:
 * metadata, -1: space (output-only: the Space is the one around it), -2:
 * none.  Its key is read once (this ran for every member of every
 * checkpoint).
 */
static int ck_key(const struct member *m)
{
	static const struct { const char *name; size_t len; int code; } keys[] = {
		{ "commit_hash", 11, S_HASH }, { "parent_hash", 11, S_PARENT },
		{ "merge_parent_hash", 17, S_MERGE }, { "title", 5, S_TITLE },
		{ "summary", 7, S_SUMMARY }, { "author", 6, S_AUTHOR },
		{ "created_at", 10, S_CREATED }, { "decisions", 9, N_STR },
		{ "assumptions", 11, N_STR + 1 }, { "tasks", 5, N_STR + 2 },
		{ "open_questions", 14, N_STR + 3 }, { "entities", 8, N_STR + 4 },
		{ "artifacts", 9, N_STR + 5 }, { "metadata", 8, 2 * N_STR }, { "space", 5, -1 },
	};
	char *own = NULL;
	const char *k = m->key + 1;
	size_t len = m->klen - 2;
	int code = -2;

	if (memchr(k, '\\', len)) {   /* escaped: decoded first */
		own = key_of(m);
		k = own ? own : "";
		len = strlen(k);
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (keys[i].len == len && !memcmp(keys[i].name, k, len)) {
			code = keys[i].code;
			break;
		}
	free(own);
	return code;
}

static enum smr_rc ck_bad(struct smr_err *err, const char *space, const char *hash,
			  const char *what)
{
	if (!hash)
		return bad(err, space, what);
	return smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s': checkpoint %.12s: %s;"
			" nothing was imported", space, hash, what);
}

/* Sorts the members of a checkpoint object into t; the strings are read. */
static enum smr_rc ck_members(const struct member *v, size_t n, const char *space,
			      struct ck_text *t, struct smr_err *err)
{
	const struct member *str[N_STR] = { 0 };
	unsigned seen = 0;

	for (size_t i = 0; i < n; i++) {
		int k = ck_key(&v[i]);

		if (k == -2)
			return bad(err, space, "a checkpoint has a field a checkpoint does not have");
		if (k == -1)
			continue;
		if (seen & (1u << k))
			return bad(err, space, "a checkpoint has a field twice");
		seen |= 1u << k;
		if (k < N_STR)
			str[k] = &v[i];
		else if (k < 2 * N_STR)
			t->list[k - N_STR] = &v[i];
		else
			t->meta = &v[i];
	}
	for (int i = 0; i < N_STR; i++)
		if (read_str(str[i], i != S_PARENT && i != S_MERGE, &t->s[i]))
			return bad(err, space, "a checkpoint is missing a field or has one of the"
				   " wrong type");
	return SMR_OK;
}

/* The items of list field f of the checkpoint into r->items[f]. */
static enum smr_rc ck_list(struct reader *r, int f, struct ck_text *t, const char *space,
			   struct smr_err *err)
{
	const struct member *m = t->list[f];
	const char *p, *end, *q;
	struct smr_err why = SMR_ERR_INIT;
	struct item *it;
	enum smr_rc rc;

	r->n_items[f] = 0;
	if (!m || *m->val != '[' || m->val[m->vlen - 1] != ']')
		return ck_bad(err, space, t->s[S_HASH].value, "a list is not an array");
	p = m->val + 1;
	end = m->val + m->vlen - 1;   /* at its ']' */
	t->exact[f] = 1;
	if (jspan_ws(p, end) == end) {
		t->exact[f] = end == p;
		return SMR_OK;
	}
	for (;;) {
		q = jspan_ws(p, end);
		t->exact[f] &= q == p;
		p = q;
		q = jspan_end(p, end);
		if (!q)
			return ck_bad(err, space, t->s[S_HASH].value, "a list is malformed");
		if (r->n_items[f] == CHECKPOINT_MAX_ITEMS)
			return ck_bad(err, space, t->s[S_HASH].value, "a list has too many items");
		rc = reader_item(r, f, p, (size_t)(q - p), r->n_items[f], &it, &why);
		if (rc)
			return ck_bad(err, space, t->s[S_HASH].value, why.msg);
		t->exact[f] &= !it->compact;
		if (r->n_items[f] == r->cap_items[f]) {
			r->cap_items[f] = r->cap_items[f] ? 2 * r->cap_items[f] : 16;
			r->items[f] = xrealloc(r->items[f], r->cap_items[f] * sizeof(*r->items[f]));
		}
		r->items[f][r->n_items[f]++] = it;
		p = jspan_ws(q, end);
		t->exact[f] &= p == q;
		if (p == end)
			return SMR_OK;
		if (*p != ',')
			return ck_bad(err, space, t->s[S_HASH].value, "a list is malformed");
		p++;
	}
}

/* SHA-256 over pieces, counting the bytes. */
struct hasher {
	struct sha256_ctx ctx;
	size_t len;
};

static void hadd(struct hasher *h, const char *p, size_t n)
{
	sha256_update(&h->ctx, n, (const uint8_t *)p);
	h->len += n;
}

static void hadds(struct hasher *h, const char *s)
{
	hadd(h, s, strlen(s));
}

static void hadd_list(struct hasher *h, const struct reader *r, int f)
{
	const char *p;
	size_t n;

	hadd(h, "[", 1);
	for (size_t i = 0; i < r->n_items[f]; i++) {
		if (i)
			hadd(h, ",", 1);
		p = item_canon(r->items[f][i], &n);
		hadd(h, p, n);
	}
	hadd(h, "]", 1);
}

static void hadd_str(struct hasher *h, const struct str *s)
{
	hadd(h, s->json, s->jlen);
}

/*
 * checkpoint_canonical()'s text of what t and r hold, hashed as it goes
 * (keys sorted: artifacts, assumptions, author, created_at, decisions,
 * entities, merge_parent, metadata, open_questions, parent, summary, tasks,
 * title, v); its length into *len.
 */
static void ck_hash(const struct reader *r, const struct ck_text *t, char out[65],
		    size_t *len)
{
	const struct item *meta = r->items[META][0];
	struct hasher h = { .len = 0 };
	uint8_t d[SHA256_DIGEST_SIZE];
	const char *p;
	size_t n;

	sha256_init(&h.ctx);
	hadds(&h, "{\"artifacts\":");
	hadd_list(&h, r, 5);
	hadds(&h, ",\"assumptions\":");
	hadd_list(&h, r, 1);
	hadds(&h, ",\"author\":");
	hadd_str(&h, &t->s[S_AUTHOR]);
	hadds(&h, ",\"created_at\":");
	hadd_str(&h, &t->s[S_CREATED]);
	hadds(&h, ",\"decisions\":");
	hadd_list(&h, r, 0);
	hadds(&h, ",\"entities\":");
	hadd_list(&h, r, 4);
	hadds(&h, ",\"merge_parent\":");
	hadd_str(&h, &t->s[S_MERGE]);
	hadds(&h, ",\"metadata\":");
	p = item_canon(meta, &n);
	hadd(&h, p, n);
	hadds(&h, ",\"open_questions\":");
	hadd_list(&h, r, 3);
	hadds(&h, ",\"parent\":");
	hadd_str(&h, &t->s[S_PARENT]);
	hadds(&h, ",\"summary\":");
	hadd_str(&h, &t->s[S_SUMMARY]);
	hadds(&h, ",\"tasks\":");
	hadd_list(&h, r, 2);
	hadds(&h, ",\"title\":");
	hadd_str(&h, &t->s[S_TITLE]);
	hadds(&h, ",\"v\":1}");
	sha256_digest(&h.ctx, sizeof(d), d);
	digest_hex(d, out);
	out[64] = '\0';
	*len = h.len;
}

/* s (its length in *len), kept by b: the store text that is not the bundle's bytes. */
static const char *keep(struct space_bundle *b, char *s)
{
	if (b->n_owned == b->cap_owned) {
		b->cap_owned = b->cap_owned ? 2 * b->cap_owned : 16;
		b->owned = xrealloc(b->owned, b->cap_owned * sizeof(*b->owned));
	}
	b->owned[b->n_owned++] = s;
	return s;
}

/* The text a store writes for list f: the bundle's own when exact, else built (kept in b). */
static void ck_column(const struct reader *r, const struct ck_text *t, int f,
		      struct space_bundle *b, struct checkpoint_text *out)
{
	struct buf s = BUF_INIT(0);
	const char *p;
	size_t n;

	if (t->exact[f]) {
		out->json[f] = t->list[f]->val;
		out->len[f] = t->list[f]->vlen;
		return;
	}
	buf_addch(&s, '[');
	for (size_t i = 0; i < r->n_items[f]; i++) {
		if (i)
			buf_addch(&s, ',');
		p = item_compact(r->items[f][i], &n);
		buf_add(&s, p, n);
	}
	buf_addch(&s, ']');
	out->json[f] = keep(b, buf_detach(&s, &out->len[f]));
}

/* The checkpoint of t as a struct (lists of the shared item values) and its store text. */
static void ck_fill(struct reader *r, struct ck_text *t, struct space_bundle *b,
		    struct checkpoint *c, struct checkpoint_text *text)
{
	json_t **slots[] = { &c->decisions, &c->assumptions, &c->tasks, &c->open_questions,
			     &c->entities, &c->artifacts };
	const struct item *meta = r->items[META][0];
	char **dst[N_STR] = { &c->hash, &c->parent_hash, &c->merge_parent_hash, &c->title,
			      &c->summary, &c->author, &c->created_at };

	for (int i = 0; i < N_STR; i++) {
		*dst[i] = t->s[i].value;
		t->s[i].value = NULL;
	}
	c->space = xstrdup(b->space.name);
	for (int f = 0; f < 6; f++) {
		const struct member *m = t->list[f];

		if (t->same[f]) {   /* as the last checkpoint's: that value, that text */
			*slots[f] = json_incref(r->last_list[f]);
			text->json[f] = r->last_text[f];
			text->len[f] = r->last_tlen[f];
			continue;
		}
		*slots[f] = json_array();
		for (size_t i = 0; i < r->n_items[f]; i++)
			json_array_append(*slots[f], r->items[f][i]->value);
		ck_column(r, t, f, b, text);
		json_decref(r->last_list[f]);
		r->last_list[f] = json_incref(*slots[f]);
		r->last_span[f] = m->val;
		r->last_len[f] = m->vlen;
		r->last_text[f] = text->json[f];
		r->last_tlen[f] = text->len[f];
	}
	c->metadata = json_incref(meta->value);
	text->json[META] = item_compact(meta, &text->len[META]);
	if (meta->compact)   /* the cache's, which goes before the text is used */
		text->json[META] = keep(b, xstrndup(meta->compact, meta->clen));
}

/* Reads, checks and hashes the checkpoint object m into c (and its store text). */
static enum smr_rc read_checkpoint(struct reader *r, const struct member *m,
				   struct space_bundle *b, struct checkpoint *c,
				   struct checkpoint_text *text, struct smr_err *err)
{
	const char *space = b->space.name;
	struct ck_text t = { 0 };
	struct member *v = NULL;
	struct smr_err why = SMR_ERR_INIT;
	char hash[HASH_HEX_LEN + 1];
	size_t n = 0, len;
	enum smr_rc rc = SMR_OK;

	r->tick++;
	if (members(m->val, m->val + m->vlen, &v, &n))
		return bad(err, space, "a checkpoint is not an object");
	rc = ck_members(v, n, space, &t, err);
	for (int f = 0; !rc && f < 6; f++) {
		const struct member *l = t.list[f];

		/* most lists are written as in the last checkpoint: its items, read then */
		t.same[f] = l && r->last_list[f] && r->last_len[f] == l->vlen &&
			    !memcmp(r->last_span[f], l->val, l->vlen);
		for (size_t i = 0; t.same[f] && i < r->n_items[f]; i++)
			r->items[f][i]->used = r->tick;
		if (!t.same[f])
			rc = ck_list(r, f, &t, space, err);
	}
	if (!rc && !t.meta)
		rc = ck_bad(err, space, t.s[S_HASH].value, "its metadata is not an object");
	if (!rc) {
		if (!r->items[META])
			r->items[META] = xcalloc(1, sizeof(*r->items[META]));
		rc = reader_item(r, META, t.meta->val, t.meta->vlen, 0, &r->items[META][0], &why);
		if (rc)
			rc = ck_bad(err, space, t.s[S_HASH].value, why.msg);
	}
	if (!rc && utf8_chars(t.s[S_TITLE].value, strlen(t.s[S_TITLE].value)) >
		   CHECKPOINT_MAX_ITEM_CHARS)
		rc = ck_bad(err, space, t.s[S_HASH].value, "its title is too long");
	if (!rc) {
		ck_hash(r, &t, hash, &len);
		if (len > CHECKPOINT_MAX_BYTES)
			rc = ck_bad(err, space, t.s[S_HASH].value, "it is larger than 4 MiB as JSON");
		else if (strcmp(hash, t.s[S_HASH].value))
			rc = smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s': checkpoint %.12s"
				      " does not hash to its commit_hash (it hashes to %.12s);"
				      " nothing was imported", space, t.s[S_HASH].value, hash);
	}
	if (!rc)
		ck_fill(r, &t, b, c, text);
	for (int i = 0; i < N_STR; i++)
		str_release(&t.s[i]);
	free(v);
	/* now and then, forget the items no recent checkpoint held */
	if (r->tick % 1024 == 0 && r->cap)
		reader_rehash(r, r->cap);
	return rc;
}

/* The checkpoints array m of a Space, in order, each checked against those before it. */
static enum smr_rc read_checkpoints(struct reader *r, const struct member *m,
				    struct space_bundle *b, json_t *hashes, struct smr_err *err)
{
	struct strmap seen = STRMAP_INIT;
	const char *p, *end, *q;
	size_t cap = 0;
	enum smr_rc rc = SMR_OK;

	if (!m || *m->val != '[' || m->val[m->vlen - 1] != ']')
		return bad(err, b->space.name, "checkpoints is not an array");
	p = m->val + 1;
	end = m->val + m->vlen - 1;
	while (!rc && (p = jspan_ws(p, end)) < end) {
		struct checkpoint *c;
		struct member one;

		if (b->n_checkpoints && *p++ != ',') {
			rc = bad(err, b->space.name, "checkpoints is malformed");
			break;
		}
		p = jspan_ws(p, end);
		q = jspan_end(p, end);
		if (!q) {
			rc = bad(err, b->space.name, "checkpoints is malformed");
			break;
		}
		if (b->n_checkpoints == cap) {
			cap = cap ? 2 * cap : 64;
			b->checkpoints = xrealloc(b->checkpoints, cap * sizeof(*b->checkpoints));
			b->texts = xrealloc(b->texts, cap * sizeof(*b->texts));
		}
		c = &b->checkpoints[b->n_checkpoints];
		memset(c, 0, sizeof(*c));
		one = (struct member){ NULL, 0, p, (size_t)(q - p) };
		rc = read_checkpoint(r, &one, b, c, &b->texts[b->n_checkpoints], err);
		if (rc)
			break;
		b->n_checkpoints++;
		if (strmap_get(&seen, c->hash, NULL))
			rc = bad(err, b->space.name, "a checkpoint appears twice");
		if (!rc && c->parent_hash && !strmap_get(&seen, c->parent_hash, NULL))
			rc = bad(err, b->space.name, "a checkpoint comes before its parent");
		if (!rc && c->merge_parent_hash && !strmap_get(&seen, c->merge_parent_hash, NULL))
			rc = bad(err, b->space.name, "a merge comes before its second parent");
		strmap_put(&seen, c->hash, b->n_checkpoints);
		json_array_append_new(hashes, json_string(c->hash));
		p = q;
	}
	if (!rc && b->space.head && !strmap_get(&seen, b->space.head, NULL))
		rc = bad(err, b->space.name, "its head is not one of its checkpoints");
	strmap_release(&seen);
	if (!rc && !b->space.head && b->n_checkpoints)
		rc = bad(err, b->space.name, "it has checkpoints but no head");
	return rc;
}

/* ---- a Space, and the whole bundle ---- */

/*
 * *light: the Space object with its checkpoints member (*ck) a new empty
 * array, to receive their hashes (what the bundle's sha256 covers), the
 * other members parsed.  -1 when it is not an object of JSON values.
 */
static int space_light(const struct member *v, size_t n, json_t **light,
		       const struct member **ck)
{
	json_t *o = json_object(), *x;

	*ck = NULL;
	for (size_t i = 0; i < n; i++) {
		char *key = key_of(&v[i]);

		if (key && !strcmp(key, "checkpoints")) {
			x = json_array();
			*ck = &v[i];
		} else {
			x = json_loadb(v[i].val, v[i].vlen, JSON_DECODE_ANY, NULL);
		}
		if (!key || !x || json_object_get(o, key)) {
			free(key);
			json_decref(x);
			json_decref(o);
			return -1;
		}
		json_object_set_new(o, key, x);
		free(key);
	}
	*light = o;
	return 0;
}

static enum smr_rc read_space(struct reader *r, const char *p, const char *end,
			      struct space_bundle *b, json_t *lights, struct smr_err *err)
{
	struct member *v = NULL;
	const struct member *ck = NULL;
	json_t *o = NULL;
	size_t n = 0;
	enum smr_rc rc;

	if (members(p, end, &v, &n) || space_light(v, n, &o, &ck) ||
	    get_str(o, "id", 1, &b->space.id) || get_str(o, "name", 1, &b->space.name) ||
	    get_str(o, "description", 1, &b->space.description) ||
	    get_str(o, "created_at", 1, &b->space.created_at) ||
	    get_str(o, "head", 0, &b->space.head)) {
		free(v);
		json_decref(o);
		return smr_errf(err, SMR_EUNPROC, "bundle refused: a space is missing its id, name,"
				" description, created_at or head; nothing was imported");
	}
	json_array_append_new(lights, o);
	rc = read_checkpoints(r, ck, b, json_object_get(o, "checkpoints"), err);
	if (!rc)
		rc = read_sessions(json_object_get(o, "sessions"), b, err);
	if (!rc)
		rc = read_reflog(json_object_get(o, "reflog"), b, err);
	free(v);
	return rc;
}

static enum smr_rc not_bundle(struct smr_err *err)
{
	return smr_errf(err, SMR_EINVAL, "not a Smriti bundle (format '%s' with sha256 and"
			" spaces expected)", BUNDLE_FORMAT);
}

static enum smr_rc damaged(struct smr_err *err)
{
	return smr_errf(err, SMR_EUNPROC, "bundle refused: its content does not match its"
			" sha256 (damaged or edited); nothing was imported");
}

/* The top of the bundle: its format and version right, its sha256, its spaces' extent. */
static enum smr_rc read_top(const char *text, size_t len, char **sum, const char **sp,
			    const char **se, struct smr_err *err)
{
	struct member *v = NULL;
	size_t n = 0;
	int twice = 0;
	const struct member *fm, *vm, *sm, *spm;
	struct str f = { 0 }, h = { 0 };
	json_t *ver = NULL;
	enum smr_rc rc = SMR_OK;

	if (members(text, text + len, &v, &n))
		return not_bundle(err);
	fm = member_of(v, n, "format", &twice);
	vm = member_of(v, n, "version", &twice);
	sm = member_of(v, n, "sha256", &twice);
	spm = member_of(v, n, "spaces", &twice);
	if (twice || read_str(fm, 1, &f) || strcmp(f.value, BUNDLE_FORMAT) || !spm ||
	    *spm->val != '[' || spm->val[spm->vlen - 1] != ']' || read_str(sm, 1, &h))
		rc = not_bundle(err);
	if (!rc && vm)
		ver = json_loadb(vm->val, vm->vlen, JSON_DECODE_ANY, NULL);
	if (!rc && json_integer_value(ver) != BUNDLE_VERSION)
		rc = smr_errf(err, SMR_EUNPROC, "bundle version %lld is not one this smriti reads"
			      " (%d)", (long long)json_integer_value(ver), BUNDLE_VERSION);
	if (!rc) {
		*sum = h.value;
		h.value = NULL;
		*sp = spm->val;
		*se = spm->val + spm->vlen;
	}
	json_decref(ver);
	str_release(&f);
	str_release(&h);
	free(v);
	return rc;
}

/*
 * After a Space was refused: the bundle's own sha256, recomputed the slow
 * way, says whether it was damaged (the message a user needs) rather than
 * made so by someone.
 */
static enum smr_rc refused(const char *p, const char *end, const char *sum,
			   enum smr_rc rc, struct smr_err *err)
{
	json_t *spaces = json_loadb(p, (size_t)(end - p), 0, NULL);
	char digest[65];

	if (spaces)
		bundle_digest(spaces, digest);
	json_decref(spaces);
	if (!spaces || strcmp(digest, sum))
		return damaged(err);
	return rc;
}

enum smr_rc bundle_read(const char *text, size_t len, struct space_bundle **out, size_t *n,
			struct smr_err *err)
{
	struct reader r = { 0 };
	struct space_bundle *v = NULL;
	json_t *lights = json_array();
	const char *p = NULL, *end = NULL, *q, *sp = NULL, *se = NULL;
	size_t cap = 0, len_v = 0;
	char *sum = NULL, digest[65];
	enum smr_rc rc = read_top(text, len, &sum, &sp, &se, err);

	if (!rc) {
		p = sp + 1;
		end = se - 1;   /* at the ']' of spaces */
	}
	while (!rc && (p = jspan_ws(p, end)) < end) {
		if (len_v && *p++ != ',')
			break;
		p = jspan_ws(p, end);
		q = jspan_end(p, end);
		if (!q)
			break;
		if (len_v == cap) {
			cap = cap ? 2 * cap : 4;
			v = xrealloc(v, (cap + 1) * sizeof(*v));
		}
		memset(&v[len_v], 0, sizeof(*v));
		rc = read_space(&r, p, q, &v[len_v++], lights, err);
		if (rc)
			rc = refused(sp, se, sum, rc, err);
		p = q;
	}
	if (!rc && p < end)   /* not a list of values */
		rc = refused(sp, se, sum, bad(err, "?", "spaces is malformed"), err);
	for (size_t i = 0; !rc && i < len_v; i++)
		for (size_t j = 0; !rc && j < i; j++)
			if (!strcmp(v[i].space.id, v[j].space.id))
				rc = smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s' appears"
					      " twice; nothing was imported", v[i].space.name);
	if (!rc) {
		digest_light(lights, digest);
		if (strcmp(digest, sum))
			rc = damaged(err);
	}
	json_decref(lights);
	reader_release(&r);
	free(sum);
	if (rc) {
		space_bundles_free(v, len_v);
		return rc;
	}
	*out = v ? v : xcalloc(1, sizeof(*v));
	*n = len_v;
	return SMR_OK;
}

enum smr_rc bundle_from_json(const json_t *doc, struct space_bundle **out, size_t *n,
			     struct smr_err *err)
{
	char *text = json_is_object(doc) ? json_dumps(doc, JSON_COMPACT) : NULL;
	enum smr_rc rc;

	if (!text)
		return not_bundle(err);
	rc = bundle_read(text, strlen(text), out, n, err);
	for (size_t i = 0; !rc && i < *n; i++)
		bundle_drop_texts(&(*out)[i]);   /* they point into text */
	free(text);
	return rc;
}

/* ---- writing a bundle's text as its parts come (an export) ---- */

#define TOP "{\"format\":\"" BUNDLE_FORMAT "\",\"version\":1,\"sha256\":\""

struct bundle_writer {
	struct buf out;                   /* the bundle; the sha256 in its top filled in last */
	struct sha256_ctx digest;         /* over the Spaces, each checkpoint as its hash */
	struct reader items;              /* stored items met: is a list's text jansson's own? */
	size_t spaces, checkpoints;       /* written: Spaces, and checkpoints of this one */
};

struct bundle_writer *bundle_writer_new(void)
{
	struct bundle_writer *w = xcalloc(1, sizeof(*w));

	w->out = (struct buf)BUF_INIT(0);
	w->items.stored = 1;
	buf_adds(&w->out, TOP);
	buf_add(&w->out, "0000000000000000000000000000000000000000000000000000000000000000", 64);
	buf_adds(&w->out, "\",\"spaces\":[");
	sha256_init(&w->digest);
	sha256_update(&w->digest, 1, (const uint8_t *)"[");
	return w;
}

void bundle_writer_free(struct bundle_writer *w)
{
	if (!w)
		return;
	buf_release(&w->out);
	reader_release(&w->items);
	free(w);
}

enum { OUT = 1, LIGHT = 2, BOTH = 3 };   /* where put() writes: the bundle, its digest */

static void put(struct bundle_writer *w, const char *p, size_t n, int to)
{
	if (to & OUT)
		buf_add(&w->out, p, n);
	if (to & LIGHT)
		sha256_update(&w->digest, n, (const uint8_t *)p);
}

static void puts_both(struct bundle_writer *w, const char *s)
{
	put(w, s, strlen(s), BOTH);
}

/* s as a JSON string the way jansson writes it (null for NULL, or for text that is not UTF-8). */
static void put_str(struct bundle_writer *w, const char *s, int to)
{
	size_t n = s ? strlen(s) : 0, len;
	json_t *v;
	char *text;

	if (s && jspan_plain(s, n)) {
		put(w, "\"", 1, to);
		put(w, s, n, to);
		put(w, "\"", 1, to);
		return;
	}
	v = s ? json_string(s) : NULL;
	text = v ? dump(v, JSON_COMPACT, &len) : NULL;
	put(w, text ? text : "null", text ? len : 4, to);
	free(text);
	json_decref(v);
}

/* v compact, as jansson writes it. */
static void put_json(struct bundle_writer *w, const json_t *v, int to)
{
	size_t len;
	char *text = v ? dump(v, JSON_COMPACT, &len) : NULL;

	put(w, text ? text : "null", text ? len : 4, to);
	free(text);
}

void bundle_writer_space(struct bundle_writer *w, const struct space *sp)
{
	if (w->spaces++)
		puts_both(w, ",");
	puts_both(w, "{\"id\":");
	put_str(w, sp->id, BOTH);
	puts_both(w, ",\"name\":");
	put_str(w, sp->name, BOTH);
	puts_both(w, ",\"description\":");
	put_str(w, sp->description ? sp->description : "", BOTH);
	puts_both(w, ",\"created_at\":");
	put_str(w, sp->created_at, BOTH);
	puts_both(w, ",\"head\":");
	put_str(w, sp->head, BOTH);
	puts_both(w, ",\"checkpoints\":[");
	w->checkpoints = 0;
}

/* 1 when the stored list [p, p + n) is jansson's text already: each item is (checked once). */
static int column_exact(struct bundle_writer *w, int k, const char *p, size_t n)
{
	const char *end = p + n - 1, *s = p + 1, *q;
	struct item *it;

	if (n < 2 || *p != '[' || *end != ']')
		return 0;
	if (s == end)
		return 1;
	for (size_t i = 0;; i++) {
		q = jspan_end(s, end);   /* NULL on white space too: jansson writes none */
		if (!q || reader_item(&w->items, k, s, (size_t)(q - s), i, &it, NULL) ||
		    it->compact)
			return 0;
		if (q == end)
			return 1;
		if (*q != ',')
			return 0;
		s = q + 1;
	}
}

/*
 * The stored text [p, p + n) of list (or metadata) k as jansson writes it:
 * itself when it already is, else parsed and written (null when it is not
 * JSON, as the store reads it).
 */
static void put_column(struct bundle_writer *w, int k, const char *p, size_t n)
{
	struct item *it;
	json_t *v;

	if (k != META && column_exact(w, k, p, n)) {
		put(w, p, n, OUT);
		return;
	}
	if (k == META && !reader_item(&w->items, META, p, n, 0, &it, NULL)) {
		size_t len;
		const char *text = item_compact(it, &len);

		put(w, text, len, OUT);
		return;
	}
	v = json_loadb(p, n, JSON_DECODE_ANY, NULL);
	put_json(w, v, OUT);
	json_decref(v);
}

void bundle_writer_checkpoint(struct bundle_writer *w, const struct checkpoint *c,
			      const struct checkpoint_text *t)
{
	const json_t *lists[] = { c->decisions, c->assumptions, c->tasks, c->open_questions,
				  c->entities, c->artifacts, c->metadata };
	static const char *const keys[CHECKPOINT_TEXT_COLS] = {
		",\"decisions\":", ",\"assumptions\":", ",\"tasks\":", ",\"open_questions\":",
		",\"entities\":", ",\"artifacts\":", ",\"metadata\":",
	};

	if (w->checkpoints++)
		puts_both(w, ",");
	put_str(w, c->hash, LIGHT);   /* the digest has the hash alone */
	put(w, "{\"commit_hash\":", 15, OUT);
	put_str(w, c->hash, OUT);
	put(w, ",\"parent_hash\":", 15, OUT);
	put_str(w, c->parent_hash, OUT);
	if (c->merge_parent_hash) {
		put(w, ",\"merge_parent_hash\":", 21, OUT);
		put_str(w, c->merge_parent_hash, OUT);
	}
	put(w, ",\"title\":", 9, OUT);
	put_str(w, c->title ? c->title : "", OUT);
	put(w, ",\"summary\":", 11, OUT);
	put_str(w, c->summary ? c->summary : "", OUT);
	w->items.tick++;
	for (int k = 0; k < CHECKPOINT_TEXT_COLS; k++) {
		put(w, keys[k], strlen(keys[k]), OUT);
		if (t)
			put_column(w, k, t->json[k], t->len[k]);
		else
			put_json(w, lists[k], OUT);
	}
	put(w, ",\"author\":", 10, OUT);
	put_str(w, c->author ? c->author : "", OUT);
	put(w, ",\"created_at\":", 14, OUT);
	put_str(w, c->created_at ? c->created_at : "", OUT);
	put(w, "}", 1, OUT);
	if (w->items.tick % 1024 == 0 && w->items.cap)
		reader_rehash(&w->items, w->items.cap);
}

void bundle_writer_space_end(struct bundle_writer *w, const struct space_bundle *b)
{
	json_t *ss = json_array(), *rl = json_array();

	for (size_t i = 0; i < b->n_sessions; i++)
		json_array_append_new(ss, session_json(&b->sessions[i], b->turns[i], b->n_turns[i]));
	for (size_t i = 0; i < b->n_reflog; i++)
		json_array_append_new(rl, reflog_json(&b->reflog[i]));
	puts_both(w, "],\"sessions\":");
	put_json(w, ss, BOTH);
	puts_both(w, ",\"reflog\":");
	put_json(w, rl, BOTH);
	puts_both(w, "}");
	json_decref(ss);
	json_decref(rl);
}

char *bundle_writer_finish(struct bundle_writer *w, size_t *len)
{
	uint8_t d[SHA256_DIGEST_SIZE];
	char *text;

	buf_adds(&w->out, "]}");
	sha256_update(&w->digest, 1, (const uint8_t *)"]");
	sha256_digest(&w->digest, sizeof(d), d);
	digest_hex(d, w->out.ptr + strlen(TOP));
	text = buf_detach(&w->out, len);
	bundle_writer_free(w);
	return text;
}
