/*
 * bundle_read.c -- reading and checking a bundle (see bundle.h): walked
 * from its text with util/jspan.h, never parsed whole; every hash and the
 * sha256 recomputed, nothing returned unless all of it is sound.
 */
#include "domain/bundle.h"
#include "domain/bundle_internal.h"
#include "domain/checkpoint.h"
#include "util/buf.h"
#include "util/jspan.h"
#include "util/strmap.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

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
	    get_str(o, "created_at", 1, &t->created_at) || get_int(o, "parent_seq", &t->parent_seq))
		return -1;
	/* a parent is written only when it is not the turn before: anything else would not round trip */
	t->has_parent = t->parent_seq >= 0;
	if (t->has_parent && t->parent_seq >= want - 1)
		return -1;
	t->session_id = xstrdup(session_id);
	return 0;
}

/* leaf_seq: a turn of the session's but its last (the default); fork_seq: a turn number. */
static int read_path(const json_t *o, struct session *s, size_t n_turns)
{
	if (get_int(o, "leaf_seq", &s->leaf_seq) || get_int(o, "fork_seq", &s->fork_seq) ||
	    s->leaf_seq == 0 || s->fork_seq == 0 ||
	    (s->leaf_seq > 0 && (size_t)s->leaf_seq >= n_turns))
		return -1;
	s->leaf_seq = s->leaf_seq < 0 ? 0 : s->leaf_seq;
	s->fork_seq = s->fork_seq < 0 ? 0 : s->fork_seq;
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
		if (read_path(o, s, b->n_turns[i]))
			return bad(err, b->space.name, "a session's leaf_seq or fork_seq is not one"
				   " of its turns");
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
	s->own = bundle_dump(v, JSON_COMPACT, &s->jlen);
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
		rc = bundle_reader_item(r, f, p, (size_t)(q - p), r->n_items[f], &it, &why);
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
		p = bundle_item_canon(r->items[f][i], &n);
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
	p = bundle_item_canon(meta, &n);
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
	bundle_digest_hex(d, out);
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
		p = bundle_item_compact(r->items[f][i], &n);
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
	text->json[META] = bundle_item_compact(meta, &text->len[META]);
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
		rc = bundle_reader_item(r, META, t.meta->val, t.meta->vlen, 0, &r->items[META][0], &why);
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
		bundle_reader_rehash(r, r->cap);
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
			q = NULL;   /* two values without a comma */
		else
			q = jspan_end(jspan_ws(p, end), end);
		if (!q) {       /* or a comma with no value after it */
			rc = refused(sp, se, sum, bad(err, "?", "spaces is malformed"), err);
			break;
		}
		p = jspan_ws(p, end);
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
	for (size_t i = 0; !rc && i < len_v; i++)
		for (size_t j = 0; !rc && j < i; j++)
			if (!strcmp(v[i].space.id, v[j].space.id))
				rc = smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s' appears"
					      " twice; nothing was imported", v[i].space.name);
	if (!rc) {
		bundle_digest_light(lights, digest);
		if (strcmp(digest, sum))
			rc = damaged(err);
	}
	json_decref(lights);
	bundle_reader_release(&r);
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
