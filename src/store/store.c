/*
 * store.c -- the storage port's front door: store_open() picks the backend
 * for a DSN, the writes with a rule to keep (HEAD's compare-and-swap, turn
 * numbering) run that rule here over the backend's row methods, and every
 * other function of store.h dispatches to the backend's method.  The list
 * of backends differs between the lean binary (SQLite only) and the full
 * one (with PostgreSQL); see backends_*.c.
 */
#include "store/internal.h"

#include <stdlib.h>
#include <string.h>

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

/* ---- writes whose rules live here, once for every backend ---- */

/* Ends a write begun with txn_begin: commits, or rolls back and passes rc on. */
static enum smr_rc txn_end(struct store *st, enum smr_rc rc, struct smr_err *err)
{
	if (!rc)
		return st->ops->txn_commit(st, err);
	st->ops->txn_rollback(st);
	return rc;
}

/*
 * 1 when a write must run once more: the backend says its first try never
 * reached the database (a connection that died while idle), so nothing of
 * it happened.  Only the first try is retried.
 */
static int again(struct store *st, enum smr_rc rc, int *tries)
{
	return rc == SMR_EUNAVAIL && (*tries)++ == 0 && st->ops->txn_not_started &&
	       st->ops->txn_not_started(st);
}

static int same_hash(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static enum smr_rc stale_parent(const char *head, struct smr_err *err)
{
	if (!head)
		return smr_errf(err, SMR_ECONFLICT,
				"parent is stale: the space has no checkpoints yet");
	return smr_errf(err, SMR_ECONFLICT, "parent is stale: HEAD is now %.12s (%s)", head,
			head);
}

static enum smr_rc exists_already(const struct checkpoint *c, struct smr_err *err)
{
	return smr_errf(err, SMR_ECONFLICT, "checkpoint %.12s already exists", c->hash);
}

/*
 * Locks HEAD, checks it is expected_head, inserts c on it and moves HEAD to
 * c.  A pipelining backend learns of a conflict only at commit, so which
 * conflict it was (stale parent, or c already there) is told afterwards
 * from the HEAD that head_lock read.
 */
static enum smr_rc put_once(struct store *st, const char *space_id,
			    const struct checkpoint *c, const char *expected_head,
			    struct smr_err *err)
{
	char *head = NULL;
	enum smr_rc rc = st->ops->txn_begin(st, err);

	if (rc)
		return rc;
	rc = st->ops->head_lock(st, space_id, expected_head, &head, err);
	if (!rc)
		rc = st->ops->commit_insert(st, space_id, c, err);
	if (!rc)
		rc = st->ops->head_move(st, space_id, c->hash, err);
	rc = txn_end(st, rc, err);
	if (rc == SMR_ECONFLICT)
		rc = same_hash(head, expected_head) ? exists_already(c, err)
						    : stale_parent(head, err);
	free(head);
	return rc;
}

enum smr_rc store_checkpoint_put(struct store *st, const char *space_id,
				 const struct checkpoint *c, const char *expected_head,
				 struct smr_err *err)
{
	int tries = 0;
	enum smr_rc rc;

	do
		rc = put_once(st, space_id, c, expected_head, err);
	while (again(st, rc, &tries));
	return rc;
}

enum smr_rc store_head_get(struct store *st, const char *space, struct checkpoint *out,
			   struct smr_err *err)
{
	return st->ops->head_get(st, space, out, err);
}

static enum smr_rc session_create_once(struct store *st, const struct session *s,
				       struct smr_err *err)
{
	enum smr_rc rc = st->ops->txn_begin(st, err);

	if (rc)
		return rc;
	return txn_end(st, st->ops->session_insert(st, s, err), err);
}

enum smr_rc store_session_create(struct store *st, const struct session *s,
				 struct smr_err *err)
{
	int tries = 0;
	enum smr_rc rc;

	do
		rc = session_create_once(st, s, err);
	while (again(st, rc, &tries));
	return rc;
}

static enum smr_rc import_once(struct store *st, const struct session *s, struct turn *turns,
			       size_t n, struct smr_err *err)
{
	enum smr_rc rc = st->ops->txn_begin(st, err);

	if (rc)
		return rc;
	rc = st->ops->session_insert(st, s, err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = st->ops->turn_insert(st, &turns[i], err);   /* numbered 1..n */
	return txn_end(st, rc, err);
}

enum smr_rc store_session_import(struct store *st, const struct session *s,
				 struct turn *turns, size_t n, struct smr_err *err)
{
	int tries = 0;
	enum smr_rc rc;

	do
		rc = import_once(st, s, turns, n, err);
	while (again(st, rc, &tries));
	return rc;
}

static enum smr_rc append_once(struct store *st, struct turn *t, int64_t expected_last,
			       struct smr_err *err)
{
	int64_t last = 0;
	enum smr_rc rc = st->ops->txn_begin(st, err);

	if (rc)
		return rc;
	rc = st->ops->last_seq_lock(st, t->session_id, expected_last, &last, err);
	if (!rc)
		rc = st->ops->turn_insert(st, t, err);
	rc = txn_end(st, rc, err);
	if (rc == SMR_ECONFLICT)
		rc = smr_errf(err, SMR_ECONFLICT,
			      "session has moved on: its last turn is now %lld, not %lld",
			      (long long)last, (long long)expected_last);
	return rc;
}

enum smr_rc store_turn_append(struct store *st, struct turn *t, int64_t expected_last,
			      struct smr_err *err)
{
	int tries = 0;
	enum smr_rc rc;

	do
		rc = append_once(st, t, expected_last, err);
	while (again(st, rc, &tries));
	return rc;
}
