/*
 * documents.c -- the JSON documents of sessions and turns, shared by every
 * operation that returns them (chat, mounting, ingestion), so that one
 * session reads the same whichever route produced it.
 */
#include "ops/ops.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *int_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

json_t *ops_session_json(const struct session *s, const char *space_name)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(s->id));
	json_object_set_new(o, "repo_id", json_string(s->repo_id));
	json_object_set_new(o, "space", str_or_null(space_name));
	json_object_set_new(o, "title", json_string(s->title ? s->title : ""));
	json_object_set_new(o, "mounted_commit_hash", str_or_null(s->mounted_hash));
	json_object_set_new(o, "forked_from_session_id", str_or_null(s->forked_from));
	json_object_set_new(o, "history_base_seq", int_or_null(s->history_base_seq));
	json_object_set_new(o, "created_at", json_string(s->created_at));
	json_object_set_new(o, "last_seq", json_integer(s->last_seq));
	/* the turn the path shown (and sent next) ends at: chosen, or the newest */
	json_object_set_new(o, "leaf_seq", json_integer(s->leaf_seq > 0 ? s->leaf_seq : s->last_seq));
	json_object_set_new(o, "fork_seq", s->fork_seq > 0 ? json_integer(s->fork_seq) : json_null());
	return o;
}

json_t *ops_turn_json(const struct turn *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "session_id", json_string(t->session_id));
	json_object_set_new(o, "sequence_number", json_integer(t->seq));
	json_object_set_new(o, "parent_seq", json_integer(t->has_parent ? t->parent_seq : t->seq - 1));
	json_object_set_new(o, "role", json_string(t->role));
	json_object_set_new(o, "content", json_string(t->content));
	json_object_set_new(o, "provider", str_or_null(t->provider));
	json_object_set_new(o, "model", str_or_null(t->model));
	json_object_set_new(o, "prompt_tokens", int_or_null(t->prompt_tokens));
	json_object_set_new(o, "completion_tokens", int_or_null(t->completion_tokens));
	json_object_set_new(o, "latency_ms", int_or_null(t->latency_ms));
	json_object_set_new(o, "error", str_or_null(t->error));
	json_object_set_new(o, "status", json_string(t->status ? t->status : TURN_COMPLETE));
	json_object_set_new(o, "created_at", json_string(t->created_at));
	if (t->author)
		json_object_set_new(o, "author", json_string(t->author));
	return o;
}

json_t *ops_generation_json(const struct generation *g)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(g->id));
	json_object_set_new(o, "session_id", json_string(g->session_id));
	json_object_set_new(o, "status", json_string(g->status));
	json_object_set_new(o, "provider", str_or_null(g->provider));
	json_object_set_new(o, "model", str_or_null(g->model));
	json_object_set_new(o, "user_turn_seq", int_or_null(g->user_seq));
	json_object_set_new(o, "assistant_turn_seq", int_or_null(g->assistant_seq));
	json_object_set_new(o, "error", str_or_null(g->error));
	json_object_set_new(o, "created_at", json_string(g->created_at));
	json_object_set_new(o, "finished_at", str_or_null(g->finished_at));
	return o;
}
