/*
 * draft.c -- Draft with AI jobs (see draft.h): creating and reading jobs,
 * running one job (prompt, provider call with a JSON schema, validation,
 * one repair request), and the runner's worker threads and watchdog.
 *
 * Who writes a job's row: draft.create writes it queued; the worker that
 * takes it writes running; the end state (done or failed) is written by
 * whoever claims the job first under the runner's lock -- its worker when
 * the work ends, or the watchdog when the job's time is up -- so a late
 * result never overwrites a timeout.  A job records the server that owns it
 * (lease.h); a server killed mid-job leaves rows queued or running, which
 * another server fails once that server's lease lapsed, and from then on
 * the store drops any late write to them.
 */
#include "ops/context.h"
#include "ops/full/draft.h"
#include "ops/full/lease.h"
#include "domain/checkpoint.h"
#include "domain/diff.h"
#include "domain/draft.h"
#include "domain/patch.h"
#include "domain/thread.h"
#include "util/logline.h"
#include "util/metrics.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/workq.h"
#include "util/xalloc.h"
#include "util/isotime.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MODEL_MAX_CHARS 200
#define DRAFT_MIN_REPLY_TOKENS 4096     /* a draft of a long talk needs room */
#define REPAIR_ECHO_CHARS 8000          /* of a rejected reply, sent back to repair */

static const char stop_reason[] =
	"the server stopped before this job ran; start a new draft";

/* One job as the runner knows it; strings owned. */
struct draft_task {
	char *job_id;
	char *session_id;
	char *provider;
	char *model;
	int64_t base;                 /* turns after this sequence number ... */
	int64_t upto;                 /* ... on the path to the one shown when the job was made */
	int64_t deadline_us;          /* monotonic; set when it starts running */
	int claimed;                  /* its end state is being written (under lock) */
	struct workq_item qi;         /* waiting for a worker */
	struct draft_task *next;      /* active list */
};

/* What a worker of the runner runs with. */
struct draft_worker {
	struct draft_runner *r;
	struct store *st;
};

struct draft_runner {
	struct runtime *rt;
	long timeout_ms;
	struct workq q;               /* the workers (util/workq.h) */
	int q_started;
	pthread_mutex_t lock;         /* guards active and every task's claimed */
	pthread_cond_t tick;          /* the active list changed (watchdog) */
	struct draft_task *active;
	int workers_done;
	struct store **stores;        /* one per worker, then the watchdog's */
	struct draft_worker *workers;
	unsigned n;
	int watchdog_started;
	pthread_t watchdog;
};

static long draft_timeout_ms(void)
{
	return sys_env_long("SMRITI_DRAFT_TIMEOUT_MS", DRAFT_DEFAULT_TIMEOUT_MS, 1, 3600000);
}

static void task_free(struct draft_task *t)
{
	if (!t)
		return;
	free(t->job_id);
	free(t->session_id);
	free(t->provider);
	free(t->model);
	free(t);
}

/* ---- the job document ---- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *draft_job_json(const struct draft_job *j)
{
	json_t *o = json_object();
	json_t *draft;

	json_object_set_new(o, "job_id", json_string(j->id));
	json_object_set_new(o, "session_id", json_string(j->session_id));
	json_object_set_new(o, "status", json_string(job_status_name(j->status)));
	json_object_set_new(o, "provider", str_or_null(j->provider));
	json_object_set_new(o, "model", str_or_null(j->model));
	json_object_set_new(o, "created_at", json_string(j->created_at));
	json_object_set_new(o, "started_at", str_or_null(j->started_at));
	json_object_set_new(o, "finished_at", str_or_null(j->finished_at));
	if (j->status == JOB_FAILED)
		json_object_set_new(o, "error", json_string(j->error ? j->error :
							    "the job failed"));
	if (j->status == JOB_DONE && j->result) {
		draft = json_loads(j->result, 0, NULL);
		if (draft)
			json_object_set_new(o, "draft", draft);
	}
	return o;
}

/* ---- writing a job's state ---- */

static void job_write(struct store *st, const char *job_id, enum job_status status,
		      const char *result, const char *error)
{
	struct draft_job j = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	char now[32];

	sys_now_iso(now);
	j.id = (char *)job_id;
	j.status = status;
	j.result = (char *)result;
	j.error = (char *)error;
	if (status == JOB_RUNNING)
		j.started_at = now;
	else
		j.finished_at = now;
	if (store_job_update(st, &j, &err))
		logline("error", "draft job %s: cannot record it %s: %s", job_id,
			job_status_name(status), err.msg);
}

/* ---- running one job ---- */

struct job_run {
	struct store *st;
	struct runtime *rt;
	const struct draft_task *t;
	struct provider *p;
	long timeout_ms;
	json_t *schema;
	struct turn *turns;
	size_t n_turns;
	struct thread_view path;      /* the turns drafted from: the path shown, over turns */
	struct draft_prompt prompt;
};

static enum smr_rc job_timed_out(const struct job_run *jr, struct smr_err *err)
{
	return smr_errf(err, SMR_ETIMEOUT, "the draft timed out after %ld ms"
			" (SMRITI_DRAFT_TIMEOUT_MS)", jr->timeout_ms);
}

/* One structured request; the per-attempt timeout never runs past the job's deadline. */
static enum smr_rc ask(struct job_run *jr, const struct provider_msg *msgs, size_t n,
		       struct provider_resp *resp, struct smr_err *err)
{
	struct provider_req req = { 0 };
	int64_t left_ms = (jr->t->deadline_us - sys_monotonic_us()) / 1000;
	enum smr_rc rc;

	if (left_ms <= 0)
		return job_timed_out(jr, err);
	req.model = jr->t->model;
	req.system = jr->prompt.system;
	req.msgs = msgs;
	req.n_msgs = n;
	req.max_tokens = provider_max_tokens(jr->p) < DRAFT_MIN_REPLY_TOKENS ?
			 DRAFT_MIN_REPLY_TOKENS : provider_max_tokens(jr->p);
	req.temperature = -1;
	req.timeout_ms = left_ms < provider_timeout_ms(jr->p) ? (long)left_ms : provider_timeout_ms(jr->p);
	req.schema = jr->schema;
	req.schema_name = DRAFT_SCHEMA_NAME;
	req.schema_description = "The proposed checkpoint: only what the conversation states";
	req.schema_strict = 1;
	rc = provider_complete(jr->p, &req, resp, err);
	if (rc == SMR_ETIMEOUT && req.timeout_ms == left_ms)
		return job_timed_out(jr, err);
	if (rc == SMR_ETIMEOUT)
		return smr_err_prefix(err, SMR_ETIMEOUT, "the provider timed out: ");
	return rc;
}

/*
 * 1 when the provider answered but its structured reply is not JSON (or
 * Anthropic's forced tool was not called): the model's fault, worth one
 * repair request.
 */
static int reply_not_json(enum smr_rc rc, const struct smr_err *err)
{
	return rc == SMR_EPROVIDER && err->why == SMR_WHY_REPLY_NOT_JSON;
}

/*
 * Asks for the draft, and once more with a repair note when the reply was
 * not JSON or not of the schema.  *draft gets the validated draft.
 */
static enum smr_rc ask_and_check(struct job_run *jr, json_t **draft, struct smr_err *err)
{
	struct provider_msg msgs[3] = { { "user", jr->prompt.user } };
	struct provider_resp resp = { 0 };
	struct smr_err why = SMR_ERR_INIT;
	const char *kind = NULL;
	char *echo = NULL, *note = NULL;
	size_t n = 1;
	enum smr_rc rc = SMR_OK;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (attempt) {
			note = draft_repair_note(why.msg);
			n = 1;
			if (echo)
				msgs[n++] = (struct provider_msg){ "assistant", echo };
			msgs[n++] = (struct provider_msg){ "user", note };
		}
		provider_resp_release(&resp);
		rc = ask(jr, msgs, n, &resp, err);
		if (reply_not_json(rc, err)) {
			kind = "is not valid JSON";
			smr_errf(&why, SMR_EUNPROC, "%s", err->msg);
			continue;
		}
		if (rc) {
			if (rc == SMR_EPROVIDER)
				smr_err_prefix(err, rc, "the provider failed: ");
			goto out;
		}
		rc = draft_validate(resp.json, draft, &why);
		if (!rc)
			goto out;
		kind = "does not fit the checkpoint schema";
		free(echo);
		echo = xstrndup(resp.text, utf8_prefix_bytes(resp.text, strlen(resp.text),
							     REPAIR_ECHO_CHARS));
	}
	rc = smr_errf(err, SMR_EPROVIDER, "the model's reply %s, also after one repair request:"
		      " %.400s", kind, why.msg);
out:
	provider_resp_release(&resp);
	free(echo);
	free(note);
	return rc;
}

static enum smr_rc extract(struct job_run *jr, json_t **draft, struct smr_err *err)
{
	const struct draft_task *t = jr->t;
	struct draft_prompt_in in = { 0 };
	struct draft_provenance prov;
	enum smr_rc rc;

	rc = store_turn_list(jr->st, t->session_id, t->base, &jr->turns, &jr->n_turns, err);
	if (rc == SMR_ENOTFOUND)
		return smr_errf(err, SMR_ENOTFOUND, "session '%s' no longer exists", t->session_id);
	if (rc)
		return rc;
	/* the conversation the person looks at: no version beside it, a continued reply whole */
	thread_view_build(jr->turns, jr->n_turns, t->upto, t->base, &jr->path);
	in.turns = jr->path.turns;
	in.n_turns = jr->path.n;
	in.after_seq = t->base;
	in.upto_seq = t->upto;
	in.budget_chars = runtime_budget_for(jr->rt, t->model);
	rc = draft_prompt_build(&in, &jr->prompt, err);
	if (!rc)
		rc = ask_and_check(jr, draft, err);
	if (rc)
		return rc;
	prov = (struct draft_provenance){ t->session_id, jr->prompt.first_seq,
					  jr->prompt.last_seq, t->provider, t->model, t->job_id };
	draft_set_provenance(*draft, &prov);
	return SMR_OK;
}

/*
 * Runs the work of task t on store st: its result (draft JSON text, caller
 * free()s) or its error message in err.
 */
static enum smr_rc run_work(struct store *st, struct runtime *rt, struct draft_task *t,
			    long timeout_ms, char **result, struct smr_err *err)
{
	struct job_run jr = { .st = st, .rt = rt, .t = t, .timeout_ms = timeout_ms };
	json_t *draft = NULL;
	enum smr_rc rc;

	*result = NULL;
	jr.p = runtime_provider(rt, t->provider);
	if (!jr.p)
		return smr_errf(err, SMR_EUNPROC, "unknown provider '%s'", t->provider);
	jr.schema = draft_schema();
	rc = extract(&jr, &draft, err);
	if (!rc)
		*result = json_dumps(draft, JSON_COMPACT);
	json_decref(draft);
	json_decref(jr.schema);
	thread_view_release(&jr.path);
	turns_free(jr.turns, jr.n_turns);
	draft_prompt_release(&jr.prompt);
	return rc;
}

/* Runs t to its end in the calling thread (no runner) and records the outcome. */
static void run_inline(struct store *st, struct runtime *rt, struct draft_task *t)
{
	struct smr_err err = SMR_ERR_INIT;
	char *result = NULL;
	long timeout = draft_timeout_ms();

	job_write(st, t->job_id, JOB_RUNNING, NULL, NULL);
	t->deadline_us = sys_monotonic_us() + (int64_t)timeout * 1000;
	if (run_work(st, rt, t, timeout, &result, &err))
		job_write(st, t->job_id, JOB_FAILED, NULL, err.msg);
	else
		job_write(st, t->job_id, JOB_DONE, result, NULL);
	free(result);
}

/* ---- the runner ---- */

static void active_remove(struct draft_runner *r, struct draft_task *t)
{
	for (struct draft_task **pp = &r->active; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return;
		}
	}
}

static void run_task(struct draft_runner *r, struct store *st, struct draft_task *t)
{
	struct smr_err err = SMR_ERR_INIT;
	char *result = NULL;
	enum smr_rc rc;
	int mine;

	job_write(st, t->job_id, JOB_RUNNING, NULL, NULL);
	pthread_mutex_lock(&r->lock);
	t->deadline_us = sys_monotonic_us() + (int64_t)r->timeout_ms * 1000;
	t->next = r->active;
	r->active = t;
	pthread_cond_signal(&r->tick);
	pthread_mutex_unlock(&r->lock);

	rc = run_work(st, r->rt, t, r->timeout_ms, &result, &err);

	pthread_mutex_lock(&r->lock);
	mine = !t->claimed;
	t->claimed = 1;
	active_remove(r, t);
	pthread_mutex_unlock(&r->lock);
	if (mine && rc)
		job_write(st, t->job_id, JOB_FAILED, NULL, err.msg);
	else if (mine)
		job_write(st, t->job_id, JOB_DONE, result, NULL);
	free(result);
	task_free(t);
}

static struct draft_task *task_of(struct workq_item *it)
{
	return (struct draft_task *)((char *)it - offsetof(struct draft_task, qi));
}

static void run_queued(struct workq_item *it, void *arg)
{
	struct draft_worker *w = arg;

	metrics_draft_queue(-1);
	run_task(w->r, w->st, task_of(it));
}

static void cancel_queued(struct workq_item *it, void *arg)
{
	struct draft_worker *w = arg;
	struct draft_task *t = task_of(it);

	metrics_draft_queue(-1);
	job_write(w->st, t->job_id, JOB_FAILED, NULL, stop_reason);
	task_free(t);
}

/* Claims every active job whose time is up; their ids go to ids (caller frees each). */
static size_t claim_expired(struct draft_runner *r, char **ids, size_t max, int64_t *next_us)
{
	int64_t now = sys_monotonic_us();
	size_t n = 0;

	*next_us = 0;
	for (struct draft_task *t = r->active; t; t = t->next) {
		if (t->claimed)
			continue;
		if (t->deadline_us <= now && n < max) {
			t->claimed = 1;
			ids[n++] = xstrdup(t->job_id);
		} else if (!*next_us || t->deadline_us < *next_us) {
			*next_us = t->deadline_us;
		}
	}
	return n;
}

static void wait_until(struct draft_runner *r, int64_t mono_us)
{
	struct timespec ts;

	if (!mono_us) {
		pthread_cond_wait(&r->tick, &r->lock);
		return;
	}
	ts.tv_sec = (time_t)(mono_us / 1000000);
	ts.tv_nsec = (long)(mono_us % 1000000) * 1000;
	pthread_cond_timedwait(&r->tick, &r->lock, &ts);
}

/* Fails jobs whose time is up, while their provider calls may still be going. */
static void *watchdog_main(void *arg)
{
	struct draft_runner *r = arg;
	struct store *st = r->stores[r->n];
	char msg[160], *ids[DRAFT_MAX_WORKERS];
	int64_t next_us;
	size_t n;

	sys_thread_name("smr-draft-watch");
	snprintf(msg, sizeof(msg), "the draft timed out after %ld ms (SMRITI_DRAFT_TIMEOUT_MS)",
		 r->timeout_ms);
	pthread_mutex_lock(&r->lock);
	while (!(r->workers_done && !r->active)) {
		n = claim_expired(r, ids, DRAFT_MAX_WORKERS, &next_us);
		if (!n) {
			wait_until(r, next_us);
			continue;
		}
		pthread_mutex_unlock(&r->lock);
		for (size_t i = 0; i < n; i++) {
			job_write(st, ids[i], JOB_FAILED, NULL, msg);
			free(ids[i]);
		}
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void runner_free(struct draft_runner *r)
{
	for (unsigned i = 0; r->stores && i <= r->n; i++)
		store_close(r->stores[i]);
	free(r->stores);
	free(r->workers);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->tick);
	free(r);
}

static enum smr_rc start_threads(struct draft_runner *r, struct smr_err *err)
{
	void **args = xcalloc(r->n, sizeof(*args));
	int failed;

	r->workers = xcalloc(r->n, sizeof(*r->workers));
	for (unsigned i = 0; i < r->n; i++) {
		r->workers[i] = (struct draft_worker){ r, r->stores[i] };
		args[i] = &r->workers[i];
	}
	r->q.run = run_queued;
	r->q.name = "smr-draft";
	r->q.cancel = cancel_queued;
	r->q_started = 1;
	failed = workq_start(&r->q, r->n, args);
	free(args);
	if (!failed && !sys_thread_start(&r->watchdog, watchdog_main, r)) {
		r->watchdog_started = 1;
		return SMR_OK;
	}
	return smr_errf(err, SMR_EINTERNAL, "cannot start draft job threads");
}

enum smr_rc draft_runner_start(const char *dsn, struct runtime *rt, struct draft_runner **out,
			       struct smr_err *err)
{
	struct draft_runner *r = xcalloc(1, sizeof(*r));
	pthread_condattr_t ca;
	unsigned n = (unsigned)sys_env_long("SMRITI_DRAFT_WORKERS", DRAFT_DEFAULT_WORKERS, 1,
					    DRAFT_MAX_WORKERS);
	enum smr_rc rc = SMR_OK;

	*out = NULL;
	r->rt = rt;
	r->timeout_ms = draft_timeout_ms();
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->tick, &ca);
	pthread_condattr_destroy(&ca);
	r->stores = xcalloc(n + 1, sizeof(*r->stores));
	r->n = n;
	for (unsigned i = 0; !rc && i <= n; i++)
		rc = store_open(dsn, &r->stores[i], err);
	if (!rc)
		rc = start_threads(r, err);
	if (rc) {
		draft_runner_stop(r);
		return rc;
	}
	*out = r;
	return SMR_OK;
}

/* Queued jobs fail in the workers (cancel_queued), running ones finish first. */
void draft_runner_stop(struct draft_runner *r)
{
	if (!r)
		return;
	if (r->q_started)
		workq_stop(&r->q);
	pthread_mutex_lock(&r->lock);
	r->workers_done = 1;
	pthread_cond_signal(&r->tick);
	pthread_mutex_unlock(&r->lock);
	if (r->watchdog_started)
		pthread_join(r->watchdog, NULL);
	if (r->q_started)
		workq_free(&r->q);      /* the server stopped first: nothing submits any more */
	runner_free(r);
}

/* SMR_EUNAVAIL when the runner cannot take another job. */
static enum smr_rc runner_room(struct draft_runner *r, struct smr_err *err)
{
	int why = workq_room(&r->q, DRAFT_MAX_QUEUED);

	if (why == WORKQ_STOPPING)
		return smr_errf(err, SMR_EUNAVAIL,
				"the server is shutting down; no draft was started");
	if (why == WORKQ_FULL)
		return smr_errf(err, SMR_EUNAVAIL, "%d draft jobs are already waiting; try again"
				" later", DRAFT_MAX_QUEUED);
	return SMR_OK;
}

/* Hands t to a worker; when the runner stopped meanwhile, t fails here (on st). */
static int runner_submit(struct draft_runner *r, struct store *st, struct draft_task *t)
{
	metrics_draft_queue(1);      /* before a worker can take it and count it down */
	if (!workq_submit(&r->q, &t->qi))
		return 0;
	metrics_draft_queue(-1);
	job_write(st, t->job_id, JOB_FAILED, NULL, stop_reason);
	task_free(t);
	return -1;
}

/* ---- draft.create and draft.get ---- */

static enum smr_rc pick_provider(struct runtime *rt, const struct draft_req *req,
				 struct provider **p, const char **model, struct smr_err *err)
{
	const char *name = req->provider ? req->provider : rt->default_provider;
	const char *why;
	size_t n;

	*p = runtime_provider(rt, name);
	if (!*p)
		return smr_errf(err, SMR_EUNPROC,
				"unknown provider '%s' (expected openai, anthropic or local)", name);
	why = provider_unusable(*p);
	/* the same answer as chat.send and review give: a provider failure (502, exit 5) */
	if (why)
		return smr_errf(err, SMR_EPROVIDER, "%s: %s", name, why);
	*model = req->model ? req->model : provider_default_model(*p);
	n = strlen(*model);
	if (!n || !utf8_valid(*model, n) || utf8_chars(*model, n) > MODEL_MAX_CHARS)
		return smr_errf(err, SMR_EINVAL, "model must be 1 to %d characters of text",
				MODEL_MAX_CHARS);
	return SMR_OK;
}

/* The session's boundary and the end of its path shown: as chat sends see it (runtime.h). */
static enum smr_rc session_scope(struct ops_ctx *ctx, const char *id, int64_t *base,
				 int64_t *upto, struct smr_err *err)
{
	struct session s = { 0 };
	enum smr_rc rc = store_session_get(ctx->st, id, &s, err);

	if (rc)
		return rc;
	*base = s.forked_from || s.history_base_seq < 0 ? 0 : s.history_base_seq;
	*upto = s.leaf_seq > 0 ? s.leaf_seq : s.last_seq;
	if (*upto <= *base)
		rc = smr_errf(err, SMR_EUNPROC, "session '%s' has no turns%s to draft from", id,
			      *base ? " after its mount boundary" : "");
	session_release(&s);
	return rc;
}

static struct draft_task *task_new(const char *job_id, const struct draft_req *req,
				   const struct provider *p, const char *model, int64_t base,
				   int64_t upto)
{
	struct draft_task *t = xcalloc(1, sizeof(*t));

	t->job_id = xstrdup(job_id);
	t->session_id = xstrdup(req->session_id);
	t->provider = xstrdup(provider_name(p));
	t->model = xstrdup(model);
	t->base = base;
	t->upto = upto;
	return t;
}

enum smr_rc draft_create(struct ops_ctx *ctx, struct runtime *rt, const struct draft_req *req,
			 json_t **out, struct smr_err *err)
{
	struct draft_job j = { 0 };
	struct draft_task *t;
	struct provider *p = NULL;
	const char *model = NULL;
	char id[37], now[32];
	int64_t base = 0, upto = 0;
	enum smr_rc rc;

	rc = session_scope(ctx, req->session_id, &base, &upto, err);
	if (!rc)
		rc = pick_provider(rt, req, &p, &model, err);
	if (!rc && rt->drafts)
		rc = runner_room(rt->drafts, err);
	if (rc)
		return rc;
	ctx->new_id(id);
	ctx->now(now);
	j = (struct draft_job){ .id = id, .session_id = (char *)req->session_id,
				.status = JOB_QUEUED, .provider = (char *)provider_name(p), .model = (char *)model,
				.created_at = now,
				/* a runner's job is its server's; an inline one (the CLI) has no lease */
				.owner = rt->drafts ? (char *)lease_id(rt->lease) : NULL };
	rc = store_job_create(ctx->st, &j, err);
	if (rc)
		return rc;
	t = task_new(id, req, p, model, base, upto);
	if (!rt->drafts) {
		run_inline(ctx->st, rt, t);
		task_free(t);
	} else if (!runner_submit(rt->drafts, ctx->st, t)) {
		*out = draft_job_json(&j);
		return SMR_OK;
	}
	return draft_get(ctx, id, out, err);
}

/* Seconds from ISO time a to ISO time b (both "YYYY-MM-DDTHH:MM:SS..."), or -1. */
static long seconds_between(const char *a, const char *b)
{
	long long ta = iso_seconds(a), tb = iso_seconds(b);

	if (ta < 0 || tb < 0)
		return -1;
	return (long)(tb - ta);
}

/*
 * A job without an owner (run inline by a local CLI, which holds no lease,
 * or made before leases) whose process died stays queued or running in the
 * store; a job with an owner is failed when its server's lease lapses.  An
 * inline job ends within its timeout, so one still running well past it,
 * or still queued after an hour, has no process left: record it as failed
 * so nobody waits on it forever.
 */
static void expire_abandoned(struct ops_ctx *ctx, struct draft_job *j)
{
	static const char reason[] =
		"the process running this job stopped before it finished; start a new draft";
	long limit_s = draft_timeout_ms() / 1000 + 60;
	char now[32];
	long age;

	if ((j->status != JOB_RUNNING && j->status != JOB_QUEUED) || j->owner)
		return;
	ctx->now(now);
	if (j->status == JOB_QUEUED) {
		age = seconds_between(j->created_at, now);
		limit_s = 3600 > limit_s ? 3600 : limit_s;
	} else {
		age = seconds_between(j->started_at, now);
	}
	if (age < limit_s)
		return;
	j->status = JOB_FAILED;
	free(j->error);
	j->error = xstrdup(reason);
	free(j->finished_at);
	j->finished_at = xstrdup(now);
	store_job_update(ctx->st, j, NULL);
}

enum smr_rc draft_get(struct ops_ctx *ctx, const char *job_id, json_t **out,
		      struct smr_err *err)
{
	struct draft_job j = { 0 };
	enum smr_rc rc = store_job_get(ctx->st, job_id, &j, err);

	if (!rc)
		expire_abandoned(ctx, &j);
	if (!rc)
		*out = draft_job_json(&j);
	draft_job_release(&j);
	return rc;
}

/* What saving a draft is asked to do (draft.save, draft.plan). */
struct save_req {
	const char *job_id;
	const char *parent;          /* NULL: whatever HEAD is when it is written */
	const char *author;
	struct draft_choice ch;
};

/* The finished draft of job_id (*draft, new reference) and its session's Space (*space_id). */
static enum smr_rc load_draft(struct ops_ctx *ctx, const char *job_id, json_t **draft,
			      char **space_id, struct smr_err *err)
{
	struct draft_job j = { 0 };
	struct session s = { 0 };
	enum smr_rc rc = store_job_get(ctx->st, job_id, &j, err);

	*draft = NULL;
	if (!rc)
		expire_abandoned(ctx, &j);
	if (!rc && j.status != JOB_DONE)
		rc = smr_errf(err, SMR_EUNPROC,
			      "draft job %s is %s; only a finished draft can be saved", j.id,
			      job_status_name(j.status));
	if (!rc && !(*draft = json_loads(j.result ? j.result : "", 0, NULL)))
		rc = smr_errf(err, SMR_EINTERNAL, "draft job %s holds no readable draft", j.id);
	if (!rc)
		rc = store_session_get(ctx->st, j.session_id, &s, err);
	if (!rc) {
		*space_id = s.repo_id;
		s.repo_id = NULL;
	}
	session_release(&s);
	draft_job_release(&j);
	return rc;
}

struct save_arg {
	const json_t *draft;
	const struct draft_choice *ch;
	struct checkpoint base;       /* the content it landed on, to count the change */
	int on_base;                  /* 0: it landed on an empty Space */
};

/* ops_patch_fn: the draft on the HEAD it lands on. */
static enum smr_rc save_patch(const struct checkpoint *base, void *arg, json_t **patch,
			      struct smr_err *err)
{
	struct save_arg *a = arg;

	checkpoint_release(&a->base);
	checkpoint_init(&a->base);
	a->on_base = base != NULL;
	if (base)
		checkpoint_copy_content(&a->base, base);
	return draft_patch(base, a->draft, a->ch, patch, err);
}

/*
 * Saves the draft a finished job proposed as a checkpoint of its session's
 * Space: the very draft that was shown, so saving never calls the model
 * again (and never gets a different, paid-for draft).  It is a write on
 * top of HEAD (domain/draft.h: draft_patch): HEAD's items stay unless
 * req->ch drops them or replaces them all.  parent as in
 * ops_checkpoint_update (given and not HEAD: SMR_ECONFLICT).
 */
static enum smr_rc draft_save(struct ops_ctx *ctx, const struct save_req *req,
			      struct checkpoint *out, json_t **changes, struct smr_err *err)
{
	json_t *draft = NULL;
	char *space_id = NULL;
	enum smr_rc rc = load_draft(ctx, req->job_id, &draft, &space_id, err);
	struct save_arg arg = { draft, &req->ch, { 0 }, 0 };

	checkpoint_init(&arg.base);
	if (!rc)
		rc = ops_checkpoint_update_with(ctx, space_id, save_patch, &arg, req->parent,
						req->author, out, NULL, err);
	if (!rc)
		*changes = draft_changes(arg.on_base ? &arg.base : NULL, out);
	checkpoint_release(&arg.base);
	json_decref(draft);
	free(space_id);
	return rc;
}

/* The checkpoint a plan starts from: parent, else HEAD (base->hash NULL: an empty Space). */
static enum smr_rc plan_base(struct ops_ctx *ctx, const char *space_id, const char *parent,
			     struct checkpoint *base, struct smr_err *err)
{
	if (parent)
		return ops_resolve_hash(ctx, parent, base, err);
	return store_head_get(ctx->st, space_id, base, err);
}

/*
 * What draft.save would write, without writing: {space, parent, review
 * (every draft item with its status), patch, checkpoint (the state it
 * would write), changes, changed, diff (against the parent)}.
 */
static enum smr_rc draft_plan(struct ops_ctx *ctx, const struct save_req *req, json_t **out,
			      struct smr_err *err)
{
	struct checkpoint base = { 0 }, next;
	json_t *draft = NULL, *patch = NULL, *changes = NULL;
	char *space_id = NULL, *said;
	const struct checkpoint *b;
	enum smr_rc rc = load_draft(ctx, req->job_id, &draft, &space_id, err);

	checkpoint_init(&next);
	if (!rc)
		rc = plan_base(ctx, space_id, req->parent, &base, err);
	b = base.hash ? &base : NULL;
	if (!rc)
		rc = draft_patch(b, draft, &req->ch, &patch, err);
	if (!rc)
		rc = patch_apply(b, patch, &next, NULL, err);
	if (!rc) {
		changes = draft_changes(b, &next);
		said = patch_describe(changes);
		*out = json_pack("{s:s?, s:s?, s:o, s:O, s:o, s:O, s:s, s:o}", "space", base.space,
				 "parent", base.hash, "review", draft_review(b, draft), "patch", patch,
				 "checkpoint", checkpoint_to_json(&next), "changes", changes,
				 "changed", said, "diff", checkpoint_diff(b ? b : &next, &next));
		free(said);
	}
	json_decref(draft);
	json_decref(patch);
	json_decref(changes);
	free(space_id);
	checkpoint_release(&base);
	checkpoint_release(&next);
	return rc;
}

/* ---- operations by name ---- */

static enum smr_rc check_keys(const json_t *p, const char *const *known, struct smr_err *err)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)p, key, v) {
		for (i = 0; known[i] && strcmp(known[i], key); i++)
			;
		if (!known[i])
			return smr_errf(err, SMR_EINVAL, "unknown parameter '%.64s'", key);
	}
	return SMR_OK;
}

static enum smr_rc op_draft_create(struct ops_ctx *ctx, const json_t *p, json_t **result,
				   struct smr_err *err)
{
	static const char *const known[] = { "session_id", "provider", "model", NULL };
	struct draft_req req = { 0 };
	enum smr_rc rc;

	rc = check_keys(p, known, err);
	if (!rc)
		rc = api_str(p, "session_id", 1, &req.session_id, err);
	if (!rc)
		rc = api_str(p, "provider", 0, &req.provider, err);
	if (!rc)
		rc = api_str(p, "model", 0, &req.model, err);
	if (!rc)
		rc = runtime_required(ctx, err);
	if (!rc)
		rc = draft_create(ctx, ctx->rt, &req, result, err);
	return rc;
}

static enum smr_rc op_draft_get(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err)
{
	const char *id;
	enum smr_rc rc = api_str(p, "job_id", 1, &id, err);

	if (!rc)
		rc = draft_get(ctx, id, result, err);
	return rc;
}

static enum smr_rc opt_object(const json_t *p, const char *key, const json_t **out,
			      struct smr_err *err)
{
	const json_t *v = json_object_get(p, key);

	*out = NULL;
	if (v && !json_is_null(v) && !json_is_object(v))
		return smr_errf(err, SMR_EINVAL, "parameter '%s' must be an object of lists", key);
	if (json_is_object(v))
		*out = v;
	return SMR_OK;
}

/* draft.save's and draft.plan's parameters into req (borrowed from p). */
static enum smr_rc save_params(const json_t *p, struct save_req *req, struct smr_err *err)
{
	static const char *const known[] = { "job_id", "parent", "author", "replace", "reject",
					     "drop", "title", "summary", NULL };
	const json_t *replace = json_object_get(p, "replace");
	enum smr_rc rc = check_keys(p, known, err);

	if (!rc)
		rc = api_str(p, "job_id", 1, &req->job_id, err);
	if (!rc)
		rc = api_str(p, "parent", 0, &req->parent, err);
	if (!rc)
		rc = api_str(p, "author", 0, &req->author, err);
	if (!rc)
		rc = api_str(p, "title", 0, &req->ch.title, err);
	if (!rc)
		rc = api_str(p, "summary", 0, &req->ch.summary, err);
	if (!rc)
		rc = opt_object(p, "reject", &req->ch.reject, err);
	if (!rc)
		rc = opt_object(p, "drop", &req->ch.drop, err);
	if (!rc && replace && !json_is_boolean(replace) && !json_is_null(replace))
		rc = smr_errf(err, SMR_EINVAL, "parameter 'replace' must be true or false");
	req->ch.replace = json_is_true(replace);
	return rc;
}

static enum smr_rc op_draft_save(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	struct save_req req = { 0 };
	struct checkpoint c = { 0 };
	json_t *changes = NULL;
	char *said;
	enum smr_rc rc = save_params(p, &req, err);

	if (!rc)
		rc = draft_save(ctx, &req, &c, &changes, err);
	if (!rc) {
		said = patch_describe(changes);
		*result = json_pack("{s:o, s:O, s:s}", "checkpoint", checkpoint_to_json(&c),
				    "changes", changes, "changed", said);
		free(said);
	}
	json_decref(changes);
	checkpoint_release(&c);
	return rc;
}

static enum smr_rc op_draft_plan(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	struct save_req req = { 0 };
	enum smr_rc rc = save_params(p, &req, err);

	return rc ? rc : draft_plan(ctx, &req, result, err);
}

const struct api_op draft_api_ops[] = {
	{ "draft.create", op_draft_create, 1, 0 },
	{ "draft.get", op_draft_get, 0, 0 },
	{ "draft.save", op_draft_save, 1, 0 },
	{ "draft.plan", op_draft_plan, 0, 0 },
	{ NULL, NULL, 0, 0 },
};
