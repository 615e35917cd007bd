/*
 * bundle.c -- write and check the export bundle (see bundle.h).
 */
#include "domain/bundle.h"
#include "domain/checkpoint.h"
#include "util/strmap.h"
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
	memset(b, 0, sizeof(*b));
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

/*
 * Hex SHA-256 of spaces with each checkpoint reduced to its commit_hash:
 * a checkpoint is covered by its own hash, recomputed on import, so the
 * digest needs only what no other hash covers (the Space, the order of
 * its checkpoints, sessions, turns, reflog), and stays cheap.
 */
void bundle_digest(const json_t *spaces, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	json_t *light = json_array(), *sp, *ck, *hashes;
	size_t s, j;
	char *text;

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
	text = json_dumps(light, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(light);
	uint8_t d[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;

	if (!text)
		BUG("cannot serialise a bundle");
	sha256_init(&ctx);
	sha256_update(&ctx, strlen(text), (const uint8_t *)text);
	sha256_digest(&ctx, sizeof(d), d);
	free(text);
	for (size_t i = 0; i < sizeof(d); i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
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

/* The checkpoint of doc, exactly as written, with its hash recomputed and compared. */
static enum smr_rc read_checkpoint(const json_t *doc, const char *space, struct checkpoint *c,
				   struct smr_err *err)
{
	static const char *const lists[] = { "decisions", "assumptions", "tasks",
					     "open_questions", "entities", "artifacts" };
	struct checkpoint check;
	struct smr_err why = SMR_ERR_INIT;
	char hash[HASH_HEX_LEN + 1];
	json_t **slots[] = { &c->decisions, &c->assumptions, &c->tasks, &c->open_questions,
			     &c->entities, &c->artifacts };
	enum smr_rc rc;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(doc) || get_str(doc, "commit_hash", 1, &c->hash) ||
	    get_str(doc, "parent_hash", 0, &c->parent_hash) ||
	    get_str(doc, "merge_parent_hash", 0, &c->merge_parent_hash) ||
	    get_str(doc, "title", 1, &c->title) || get_str(doc, "summary", 1, &c->summary) ||
	    get_str(doc, "author", 1, &c->author) || get_str(doc, "created_at", 1, &c->created_at))
		return bad(err, space, "a checkpoint is missing a field or has one of the wrong type");
	for (size_t i = 0; i < 6; i++) {
		const json_t *v = json_object_get(doc, lists[i]);

		if (!json_is_array(v))
			return bad(err, space, "a checkpoint's list is not an array");
		*slots[i] = json_incref((json_t *)v);   /* shared with doc, which nobody changes */
	}
	if (!json_is_object(json_object_get(doc, "metadata")))
		return bad(err, space, "a checkpoint's metadata is not an object");
	c->metadata = json_incref(json_object_get(doc, "metadata"));
	/* the rules of any checkpoint hold (types, sizes, UTF-8) */
	checkpoint_init(&check);
	rc = checkpoint_from_json(doc, &check, &why);
	checkpoint_release(&check);
	if (rc)
		return smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s': checkpoint %.12s: %s;"
				" nothing was imported", space, c->hash, why.msg);
	checkpoint_compute_hash(c, hash);
	if (strcmp(hash, c->hash))
		return smr_errf(err, SMR_EUNPROC, "bundle refused: space '%s': checkpoint %.12s does"
				" not hash to its commit_hash (it hashes to %.12s); nothing was"
				" imported", space, c->hash, hash);
	return SMR_OK;
}

static enum smr_rc read_checkpoints(const json_t *list, struct space_bundle *b,
				    struct smr_err *err)
{
	struct strmap seen = STRMAP_INIT;
	enum smr_rc rc = SMR_OK;
	size_t i;
	json_t *doc;

	if (!json_is_array(list))
		return bad(err, b->space.name, "checkpoints is not an array");
	b->checkpoints = xcalloc(json_array_size(list) + 1, sizeof(*b->checkpoints));
	json_array_foreach(list, i, doc) {
		struct checkpoint *c = &b->checkpoints[i];

		b->n_checkpoints = i + 1;
		rc = read_checkpoint(doc, b->space.name, c, err);
		if (!rc && strmap_get(&seen, c->hash, NULL))
			rc = bad(err, b->space.name, "a checkpoint appears twice");
		if (!rc && c->parent_hash && !strmap_get(&seen, c->parent_hash, NULL))
			rc = bad(err, b->space.name, "a checkpoint comes before its parent");
		if (!rc && c->merge_parent_hash && !strmap_get(&seen, c->merge_parent_hash, NULL))
			rc = bad(err, b->space.name, "a merge comes before its second parent");
		if (rc)
			break;
		strmap_put(&seen, c->hash, i);
		c->space = xstrdup(b->space.name);
	}
	if (!rc && b->space.head && !strmap_get(&seen, b->space.head, NULL))
		rc = bad(err, b->space.name, "its head is not one of its checkpoints");
	strmap_release(&seen);
	if (rc)
		return rc;
	if (!b->space.head && b->n_checkpoints)
		return bad(err, b->space.name, "it has checkpoints but no head");
	return SMR_OK;
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

static enum smr_rc read_space(const json_t *o, struct space_bundle *b, struct smr_err *err)
{
	enum smr_rc rc;

	if (!json_is_object(o) || get_str(o, "id", 1, &b->space.id) ||
	    get_str(o, "name", 1, &b->space.name) ||
	    get_str(o, "description", 1, &b->space.description) ||
	    get_str(o, "created_at", 1, &b->space.created_at) ||
	    get_str(o, "head", 0, &b->space.head))
		return smr_errf(err, SMR_EUNPROC, "bundle refused: a space is missing its id, name,"
				" description, created_at or head; nothing was imported");
	rc = read_checkpoints(json_object_get(o, "checkpoints"), b, err);
	if (!rc)
		rc = read_sessions(json_object_get(o, "sessions"), b, err);
	if (!rc)
		rc = read_reflog(json_object_get(o, "reflog"), b, err);
	return rc;
}

enum smr_rc bundle_from_json(const json_t *doc, struct space_bundle **out, size_t *n,
			     struct smr_err *err)
{
	const json_t *spaces = json_object_get(doc, "spaces");
	const char *sum = json_string_value(json_object_get(doc, "sha256"));
	struct space_bundle *v;
	size_t len = json_array_size(spaces), i;
	char digest[65];
	enum smr_rc rc = SMR_OK;
	json_t *o;

	if (!json_is_object(doc) ||
	    strcmp(json_string_value(json_object_get(doc, "format")) ?: "", BUNDLE_FORMAT) ||
	    !json_is_array(spaces) || !sum)
		return smr_errf(err, SMR_EINVAL, "not a Smriti bundle (format '%s' with sha256 and"
				" spaces expected)", BUNDLE_FORMAT);
	if (json_integer_value(json_object_get(doc, "version")) != BUNDLE_VERSION)
		return smr_errf(err, SMR_EUNPROC, "bundle version %lld is not one this smriti reads"
				" (%d)", (long long)json_integer_value(json_object_get(doc, "version")),
				BUNDLE_VERSION);
	bundle_digest(spaces, digest);
	if (strcmp(digest, sum))
		return smr_errf(err, SMR_EUNPROC, "bundle refused: its content does not match its"
				" sha256 (damaged or edited); nothing was imported");
	v = xcalloc(len + 1, sizeof(*v));
	json_array_foreach(spaces, i, o) {
		rc = read_space(o, &v[i], err);
		if (rc)
			break;
	}
	if (rc) {
		space_bundles_free(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return SMR_OK;
}
