/*
 * session.c -- chat sessions: create, list, read with turns, the
 * structural mount that forks a session (see runtime.h), which path of a
 * session's tree of turns is shown, and a new session from a turn.
 */
#include "ops/context.h"
#include "ops/full/runtime.h"
#include "domain/checkpoint.h"
#include "domain/thread.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static enum smr_rc check_title(const char *title, struct smr_err *err)
{
	size_t n = strlen(title);

	if (!utf8_valid(title, n))
		return smr_errf(err, SMR_EINVAL, "session title is not valid UTF-8");
	if (utf8_chars(title, n) > RT_TITLE_MAX_CHARS)
		return smr_errf(err, SMR_EINVAL, "session title is longer than %d characters",
				RT_TITLE_MAX_CHARS);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)title[i] < 0x20 || title[i] == 0x7f)
			return smr_errf(err, SMR_EINVAL,
					"session title has a control character");
	return SMR_OK;
}

/* Stores s (id and created_at are filled here) and reads it back into out. */
static enum smr_rc insert_session(struct ops_ctx *ctx, struct session *s, struct session *out,
				  struct smr_err *err)
{
	char id[37], now[32];
	enum smr_rc rc;

	ctx->new_id(id);
	ctx->now(now);
	s->id = id;
	s->created_at = now;
	rc = store_session_create(ctx->st, s, err);
	if (!rc)
		rc = store_session_get(ctx->st, id, out, err);
	s->id = NULL;
	s->created_at = NULL;
	return rc;
}

enum smr_rc chat_session_start(struct ops_ctx *ctx, const char *space, const char *title,
			       const char *commit_hash, struct session *out, struct smr_err *err)
{
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	struct session s = { 0 };
	enum smr_rc rc = SMR_OK;

	if (title)
		rc = check_title(title, err);
	if (!rc)
		rc = ops_space_get(ctx, space, &sp, err);
	if (!rc && commit_hash)
		rc = chat_space_checkpoint(ctx, &sp, commit_hash, &c, err);
	if (!rc) {
		s.repo_id = sp.id;
		s.title = (char *)(title ? title : "");
		s.mounted_hash = c.hash;
		/* mounted: every turn of the new session is after the mount */
		s.history_base_seq = commit_hash ? 0 : -1;
		rc = insert_session(ctx, &s, out, err);
	}
	checkpoint_release(&c);
	space_release(&sp);
	return rc;
}

enum smr_rc chat_session_create(struct ops_ctx *ctx, const char *space, const char *title,
				struct session *out, struct smr_err *err)
{
	return chat_session_start(ctx, space, title, NULL, out, err);
}

enum smr_rc chat_session_list(struct ops_ctx *ctx, const char *space, struct session **out,
			      size_t *n, struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = ops_space_get(ctx, space, &sp, err);

	if (!rc)
		rc = store_session_list(ctx->st, sp.id, out, n, err);
	space_release(&sp);
	return rc;
}

enum smr_rc chat_session_get(struct ops_ctx *ctx, const char *id, struct session *out,
			     struct turn **turns, size_t *n_turns, struct smr_err *err)
{
	enum smr_rc rc = store_session_get(ctx->st, id, out, err);

	if (!rc && turns)
		rc = store_turn_list(ctx->st, id, 0, turns, n_turns, err);
	return rc;
}

enum smr_rc chat_space_checkpoint(struct ops_ctx *ctx, const struct space *sp, const char *ref,
				  struct checkpoint *out, struct smr_err *err)
{
	char **found = NULL;
	size_t n = 0;
	enum smr_rc rc;

	if (!is_hash_prefix(ref))
		return smr_errf(err, SMR_EUNPROC, "'%s' is not a checkpoint hash", ref);
	rc = store_checkpoint_find_prefix(ctx->st, ref, 2, &found, &n, err);
	if (!rc && n > 1)
		rc = smr_errf(err, SMR_EUNPROC, "checkpoint prefix '%s' is ambiguous", ref);
	if (!rc && n == 0)
		rc = smr_errf(err, SMR_EUNPROC, "no checkpoint '%s'", ref);
	if (!rc) {
		rc = store_checkpoint_get(ctx->st, sp->id, found[0], out, err);
		if (rc == SMR_ENOTFOUND)
			rc = smr_errf(err, SMR_EUNPROC, "checkpoint %.12s is not in space '%s'",
				      found[0], sp->name);
	}
	for (size_t i = 0; i < n; i++)
		free(found[i]);
	free(found);
	return rc;
}

enum smr_rc chat_session_mount(struct ops_ctx *ctx, const char *session_id,
			       const char *commit_hash, const char *title, struct session *out,
			       struct smr_err *err)
{
	struct session old = { 0 }, s = { 0 };
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	enum smr_rc rc = SMR_OK;

	if (title)
		rc = check_title(title, err);
	if (!rc)
		rc = store_session_get(ctx->st, session_id, &old, err);
	if (!rc)
		rc = store_space_get(ctx->st, old.repo_id, &sp, err);
	if (!rc)
		rc = chat_space_checkpoint(ctx, &sp, commit_hash, &c, err);
	if (!rc) {
		s.repo_id = old.repo_id;
		s.title = title ? (char *)title : old.title;
		s.mounted_hash = c.hash;
		s.forked_from = old.id;
		s.history_base_seq = old.last_seq;
		rc = insert_session(ctx, &s, out, err);
	}
	checkpoint_release(&c);
	space_release(&sp);
	session_release(&old);
	return rc;
}

/* SMR_ECONFLICT while the session has a reply running: its path is about to grow. */
static enum smr_rc not_generating(struct ops_ctx *ctx, const char *session_id,
				  struct smr_err *err)
{
	struct generation g = { 0 };
	enum smr_rc rc = store_generation_running(ctx->st, session_id, &g, NULL);

	if (!rc)
		smr_errf(err, SMR_ECONFLICT, "session '%s' is generating a reply (generation %s);"
			 " wait for it or stop it first", session_id, g.id);
	generation_release(&g);
	return rc ? SMR_OK : SMR_ECONFLICT;
}

enum smr_rc chat_session_switch(struct ops_ctx *ctx, const char *session_id, int64_t seq,
				struct session *out, struct smr_err *err)
{
	struct session sn = { 0 };
	struct turn *all = NULL;
	size_t n = 0;
	int64_t end;
	enum smr_rc rc = store_session_get(ctx->st, session_id, &sn, err);

	if (!rc)
		rc = not_generating(ctx, session_id, err);
	if (!rc)
		rc = store_turn_list(ctx->st, session_id, 0, &all, &n, err);
	if (!rc && thread_find(all, n, seq) < 0)
		rc = smr_errf(err, SMR_EUNPROC, "session '%s' has no turn %lld", session_id,
			      (long long)seq);
	if (!rc) {
		end = thread_newest_end(all, n, seq);
		rc = store_session_set_leaf(ctx->st, session_id, end == sn.last_seq ? 0 : end, err);
	}
	if (!rc)
		rc = store_session_get(ctx->st, session_id, out, err);
	turns_free(all, n);
	session_release(&sn);
	return rc;
}

/* The shown path up to turn seq, copied for a new session (numbered 1.. there). */
static enum smr_rc path_copy(const struct turn *all, size_t n, int64_t seq,
			     struct turn **out, size_t *n_out, struct smr_err *err)
{
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	size_t len = thread_path(all, n, seq, 0, idx, &(int64_t){ 0 });
	struct turn *v = xcalloc(len + 1, sizeof(*v));

	for (size_t i = 0; i < len; i++) {
		const struct turn *t = &all[idx[i]];

		v[i] = (struct turn){
			.role = xstrdup(t->role), .content = xstrdup(t->content),
			.provider = t->provider ? xstrdup(t->provider) : NULL,
			.model = t->model ? xstrdup(t->model) : NULL,
			.prompt_tokens = t->prompt_tokens, .completion_tokens = t->completion_tokens,
			.latency_ms = t->latency_ms, .error = t->error ? xstrdup(t->error) : NULL,
			.status = t->status ? xstrdup(t->status) : NULL,
			.created_at = xstrdup(t->created_at),
			.author = t->author ? xstrdup(t->author) : NULL,
		};
	}
	free(idx);
	*out = v;
	*n_out = len;
	(void)err;
	return SMR_OK;
}

enum smr_rc chat_session_fork(struct ops_ctx *ctx, const char *session_id, int64_t seq,
			      const char *title, struct session *out, struct smr_err *err)
{
	struct session old = { 0 }, s = { 0 };
	struct turn *all = NULL, *copy = NULL;
	size_t n = 0, n_copy = 0;
	char id[37], now[32];
	enum smr_rc rc = title ? check_title(title, err) : SMR_OK;

	if (!rc)
		rc = store_session_get(ctx->st, session_id, &old, err);
	if (!rc)
		rc = store_turn_list(ctx->st, session_id, 0, &all, &n, err);
	if (!rc && thread_find(all, n, seq) < 0)
		rc = smr_errf(err, SMR_EUNPROC, "session '%s' has no turn %lld", session_id,
			      (long long)seq);
	if (!rc)
		rc = path_copy(all, n, seq, &copy, &n_copy, err);
	if (!rc) {
		ctx->new_id(id);
		ctx->now(now);
		for (size_t i = 0; i < n_copy; i++)
			copy[i].session_id = xstrdup(id);
		s = (struct session){
			.id = id, .repo_id = old.repo_id, .created_at = now,
			.title = title ? (char *)title : old.title, .mounted_hash = old.mounted_hash,
			.forked_from = old.id, .fork_seq = seq,
			/* a mounted session's turns all count: the copies are its own now */
			.history_base_seq = old.mounted_hash ? 0 : -1,
		};
		rc = store_session_import(ctx->st, &s, copy, n_copy, err);
	}
	if (!rc)
		rc = store_session_get(ctx->st, id, out, err);
	turns_free(copy, n_copy);
	turns_free(all, n);
	session_release(&old);
	return rc;
}
