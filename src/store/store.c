/*
 * store.c -- the storage port's front door: store_open() picks the backend
 * for a DSN, and every other function of store.h dispatches to the
 * backend's method.  The list of backends differs between the lean binary
 * (SQLite only) and the full one (with PostgreSQL); see backends_*.c.
 */
#include "store/internal.h"

enum smr_rc store_open(const char *dsn, struct store **out, struct smr_err *err)
{
	for (size_t i = 0; store_backends[i]; i++)
		if (store_backends[i]->accepts(dsn))
			return store_backends[i]->open(dsn, out, err);
	return smr_errf(err, SMR_EUSAGE, "no storage backend in this binary handles '%s'", dsn);
}

void store_close(struct store *st)
{
	if (st)
		st->ops->close(st);
}

const char *store_name(const struct store *st)
{
	return st->ops->name;
}

int store_is_shared(const struct store *st)
{
	return st->ops->shared;
}

enum smr_rc store_space_create(struct store *st, const struct space *sp, struct smr_err *err)
{
	return st->ops->space_create(st, sp, err);
}

enum smr_rc store_space_get(struct store *st, const char *id_or_name, struct space *out,
			    struct smr_err *err)
{
	return st->ops->space_get(st, id_or_name, out, err);
}

enum smr_rc store_space_list(struct store *st, struct space **out, size_t *n,
			     struct smr_err *err)
{
	return st->ops->space_list(st, out, n, err);
}

enum smr_rc store_space_rename(struct store *st, const char *id, const char *new_name,
			       struct smr_err *err)
{
	return st->ops->space_rename(st, id, new_name, err);
}

enum smr_rc store_space_delete(struct store *st, const char *id, struct smr_err *err)
{
	return st->ops->space_delete(st, id, err);
}

enum smr_rc store_space_fork(struct store *st, const struct space *new_space,
			     const char *src_space_id, const char *hash, struct smr_err *err)
{
	return st->ops->space_fork(st, new_space, src_space_id, hash, err);
}

enum smr_rc store_checkpoint_put(struct store *st, const char *space_id,
				 const struct checkpoint *c, const char *expected_head,
				 struct smr_err *err)
{
	return st->ops->checkpoint_put(st, space_id, c, expected_head, err);
}

enum smr_rc store_checkpoint_get(struct store *st, const char *space_id, const char *hash,
				 struct checkpoint *out, struct smr_err *err)
{
	return st->ops->checkpoint_get(st, space_id, hash, out, err);
}

enum smr_rc store_checkpoint_find_prefix(struct store *st, const char *prefix, size_t limit,
					 char ***out, size_t *n, struct smr_err *err)
{
	return st->ops->checkpoint_find_prefix(st, prefix, limit, out, n, err);
}

enum smr_rc store_checkpoint_log(struct store *st, const char *space_id, const char *hash,
				 size_t limit, struct checkpoint **out, size_t *n,
				 struct smr_err *err)
{
	return st->ops->checkpoint_log(st, space_id, hash, limit, out, n, err);
}

enum smr_rc store_checkpoint_scan(struct store *st, const char *space_id, store_scan_fn fn,
				  void *ctx, struct smr_err *err)
{
	return st->ops->checkpoint_scan(st, space_id, fn, ctx, err);
}

enum smr_rc store_session_create(struct store *st, const struct session *s,
				 struct smr_err *err)
{
	return st->ops->session_create(st, s, err);
}

enum smr_rc store_session_get(struct store *st, const char *id, struct session *out,
			      struct smr_err *err)
{
	return st->ops->session_get(st, id, out, err);
}

enum smr_rc store_session_list(struct store *st, const char *repo_id, struct session **out,
			       size_t *n, struct smr_err *err)
{
	return st->ops->session_list(st, repo_id, out, n, err);
}

enum smr_rc store_session_import(struct store *st, const struct session *s,
				 struct turn *turns, size_t n, struct smr_err *err)
{
	return st->ops->session_import(st, s, turns, n, err);
}

enum smr_rc store_turn_append(struct store *st, struct turn *t, int64_t expected_last,
			      struct smr_err *err)
{
	return st->ops->turn_append(st, t, expected_last, err);
}

enum smr_rc store_turn_set_error(struct store *st, int64_t turn_id, const char *error,
				 struct smr_err *err)
{
	return st->ops->turn_set_error(st, turn_id, error, err);
}

enum smr_rc store_turn_list(struct store *st, const char *session_id, int64_t after_seq,
			    struct turn **out, size_t *n, struct smr_err *err)
{
	return st->ops->turn_list(st, session_id, after_seq, out, n, err);
}

enum smr_rc store_turns_since_head(struct store *st, const char *repo_id, int64_t *count,
				   struct smr_err *err)
{
	return st->ops->turns_since_head(st, repo_id, count, err);
}

enum smr_rc store_job_create(struct store *st, const struct draft_job *j, struct smr_err *err)
{
	return st->ops->job_create(st, j, err);
}

enum smr_rc store_job_get(struct store *st, const char *id, struct draft_job *out,
			  struct smr_err *err)
{
	return st->ops->job_get(st, id, out, err);
}

enum smr_rc store_job_update(struct store *st, const struct draft_job *j, struct smr_err *err)
{
	return st->ops->job_update(st, j, err);
}

enum smr_rc store_job_fail_unfinished(struct store *st, const char *reason, const char *now,
				      size_t *n, struct smr_err *err)
{
	return st->ops->job_fail_unfinished(st, reason, now, n, err);
}
