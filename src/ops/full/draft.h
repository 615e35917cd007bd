/*
 * draft.h (runtime) -- Draft with AI as background jobs (smriti-full).
 *
 * A draft job extracts a proposed Checkpoint from a session's turns after
 * its mount boundary (domain/draft.h) through a provider.  It is kept apart
 * from chat (proposing a Checkpoint never holds up or steers a
 * conversation): its own operations, its own worker threads, its own
 * timeout, and a failure that lands on the job, never on the chat.
 *
 *   draft.create --> queued --worker--> running --valid reply--> done (draft)
 *        |             |                   |
 *   422/404: no job    |                   +--provider error, timeout, reply not
 *                      |                   |  JSON / not of the schema (after one
 *                      |                   |  repair request)--> failed (error)
 *                      +--server stopped---+--server killed: failed by another server
 *                                                  once its lease lapsed (lease.h)
 *
 * In the server, a draft_runner owns the workers: draft.create stores the
 * job (queued), hands it to the runner and returns at once.  Each worker
 * holds its own store handle; a watchdog fails a job whose time is up even
 * while its provider call is still going (the late result is dropped).
 * Without a runner (a local CLI run, MCP over stdio) draft.create runs the
 * job to its end in the calling thread and returns the finished job.
 *
 * Environment: SMRITI_DRAFT_TIMEOUT_MS (per job, default 120000),
 * SMRITI_DRAFT_WORKERS (threads of the runner, default 4).
 */
#ifndef SMRITI_RUNTIME_DRAFT_H
#define SMRITI_RUNTIME_DRAFT_H

#include <jansson.h>

#include "ops/api.h"
#include "ops/full/runtime.h"

#define DRAFT_DEFAULT_TIMEOUT_MS 120000
#define DRAFT_DEFAULT_WORKERS 4
#define DRAFT_MAX_WORKERS 64
#define DRAFT_MAX_QUEUED 256         /* jobs waiting for a worker; more is 503 */

struct draft_runner;

/*
 * Starts the workers and the watchdog, each with a store handle of dsn.
 * Jobs record rt->lease as their owner.  rt is borrowed and must outlive the runner.  Caller
 * draft_runner_stop()s *out.
 */
enum smr_rc draft_runner_start(const char *dsn, struct runtime *rt, struct draft_runner **out,
			       struct smr_err *err);

/*
 * Stops taking jobs: queued ones fail ("the server stopped ..."), running
 * ones finish (each within its timeout); then frees r.  NULL is a no-op.
 */
void draft_runner_stop(struct draft_runner *r);

struct draft_req {
	const char *session_id;
	const char *provider;        /* NULL: rt->default_provider */
	const char *model;           /* NULL: the provider's default model */
};

/*
 * Creates a draft job for req.  Checked first, with no job created: the
 * session exists (SMR_ENOTFOUND), the provider is known and has its key and
 * the session has turns after its boundary (SMR_EUNPROC), the runner has
 * room (SMR_EUNAVAIL).  *out is a new reference to the job document
 * (draft_job_json): queued when rt->drafts runs it, else finished.
 */
enum smr_rc draft_create(struct ops_ctx *ctx, struct runtime *rt, const struct draft_req *req,
			 json_t **out, struct smr_err *err);

/* The job document of job_id; SMR_ENOTFOUND for an unknown job. */
enum smr_rc draft_get(struct ops_ctx *ctx, const char *job_id, json_t **out,
		      struct smr_err *err);

/*
 * {job_id, session_id, status, provider, model, created_at, started_at,
 * finished_at, error?, draft?}: started_at/finished_at null until set,
 * error only on a failed job, draft (the proposed checkpoint) only on a
 * done one.  New reference.
 */
json_t *draft_job_json(const struct draft_job *j);

/* "draft.create" {session_id, provider?, model?}, "draft.get" {job_id}. */
extern const struct api_op draft_api_ops[];

#endif
