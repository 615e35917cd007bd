/*
 * bundle.c -- the export bundle as a document (see bundle.h): its parts
 * released, a bundle written as JSON, and its sha256.  Reading one is
 * bundle_read.c, writing one as its parts come bundle_write.c.
 */
#include "domain/bundle.h"
#include "domain/bundle_internal.h"
#include "util/hex.h"

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

/* A turn; parent_seq only when it is not the turn before (a version of a turn, issue 26). */
static json_t *turn_json(const struct turn *t)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
			 "seq", (json_int_t)t->seq, "role", t->role, "content", t->content,
			 "provider", str_or_null(t->provider), "model", str_or_null(t->model),
			 "prompt_tokens", int_or_null(t->prompt_tokens),
			 "completion_tokens", int_or_null(t->completion_tokens),
			 "latency_ms", int_or_null(t->latency_ms), "error", str_or_null(t->error),
			 "status", str_or_null(t->status), "created_at", t->created_at);

	if (t->has_parent)
		json_object_set_new(o, "parent_seq", json_integer(t->parent_seq));
	return o;
}

json_t *bundle_session_json(const struct session *s, const struct turn *turns, size_t n)
{
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, turn_json(&turns[i]));
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:s, s:o}", "id", s->id, "title",
			      s->title ? s->title : "", "mounted_commit_hash",
			      str_or_null(s->mounted_hash), "forked_from_session_id",
			      str_or_null(s->forked_from), "history_base_seq",
			      int_or_null(s->history_base_seq), "created_at", s->created_at,
			      "turns", list);

	/* only when set, so that a bundle of linear sessions reads as before */
	if (s->leaf_seq > 0)
		json_object_set_new(o, "leaf_seq", json_integer(s->leaf_seq));
	if (s->fork_seq > 0)
		json_object_set_new(o, "fork_seq", json_integer(s->fork_seq));
	return o;
}

json_t *bundle_reflog_json(const struct reflog_entry *e)
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
		json_array_append_new(ss, bundle_session_json(&b->sessions[i], b->turns[i], b->n_turns[i]));
	for (size_t i = 0; i < b->n_reflog; i++)
		json_array_append_new(rl, bundle_reflog_json(&b->reflog[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "id", b->space.id, "name",
			 b->space.name, "description",
			 b->space.description ? b->space.description : "", "created_at",
			 b->space.created_at, "head", str_or_null(b->space.head),
			 "checkpoints", ck, "sessions", ss, "reflog", rl);
}

void bundle_digest_hex(const uint8_t *d, char *out)
{
	hex_digits(d, SHA256_DIGEST_SIZE, out);
}

void bundle_digest_light(const json_t *light, char out[65])
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
	bundle_digest_hex(d, out);
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
	bundle_digest_light(light, out);
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
