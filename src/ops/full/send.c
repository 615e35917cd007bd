/*
 * send.c -- chat.send: store the user's turn, rebuild the context from the
 * store, stream the provider's reply, store it, and say whether to
 * checkpoint.
 *
 *   validate --ok--> generation (409 if one runs) --> store user turn
 *      |              (or reuse a failed, unanswered one) --> assemble context
 *   422/400, nothing written                                       |
 *                                 provider call on its event loop <+  (chat_send_start returns)
 *                                   | deltas --> generation events
 *                                   v end (loop thread)
 *               finisher thread: store the reply with its status (complete, truncated,
 *               stopped, error with the partial text, interrupted), or, when nothing
 *               arrived and the call failed, the error on the user turn --> nudge
 *               --> final event (generation.h)
 *
 * Nothing is written before validation passes.  The context is rebuilt on
 * every send, so switching provider or model keeps the session and its
 * context: the state is Smriti's, and a provider only renders it.
 */
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/full/generation.h"
#include "ops/full/lease.h"
#include "ops/full/runtime.h"
#include "provider/loop.h"
#include "domain/context.h"
#include "domain/nudge.h"
#include "domain/thread.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MODEL_MAX_CHARS 200
#define WINDOW_ALL 2048         /* sessions this long are read whole */

struct send {
	struct ops_ctx *ctx;           /* the caller's while starting; the finisher's after */
	struct runtime *rt;
	const struct chat_send_req *req;  /* while starting only */
	struct provider *p;
	char *model;
	struct session sn;
	struct checkpoint ck;
	int has_ck;
	const char *mode;              /* "structural" | "client" */
	int64_t base;                  /* boundary in this session's numbering */
	struct turn user;
	int reused;
	enum chat_action action;
	int64_t after;                 /* the turn the question follows on its path */
	int64_t reply_after;           /* the turn the reply follows (0: the question) */
	char *prefill;                 /* continue: the reply so far */
	int64_t prefill_seq;
	struct turn *turns;            /* loaded turns after the window (s->turns[0..n_loaded)) */
	size_t n_loaded;
	struct thread_view path;       /* the path to the question, over s->turns */
	int64_t cut;                   /* the path goes on below the loaded turns from here */
	struct context cx;
	size_t budget;
	struct generation gen;         /* its row */
	int gen_stored;                /* the row exists: it must end */
	struct chat_gen *g;            /* the generation owning this send (borrowed) */
	/* the call's outcome, written on the loop thread before the finish is queued */
	enum provider_end end;
	struct smr_err perr;
	char *finish_reason;
	int64_t prompt_tokens, completion_tokens;
	int64_t provider_us;
	struct turn reply;
	int64_t t0;
	int64_t cpu_us;                /* thread CPU time spent preparing */
};

static int64_t thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int is_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return 0;
	return 1;
}

static enum smr_rc check_message(const char *msg, struct smr_err *err)
{
	size_t n = strlen(msg);

	if (is_blank(msg))
		return smr_errf(err, SMR_EINVAL, "message is empty");
	if (!utf8_valid(msg, n))
		return smr_errf(err, SMR_EINVAL, "message is not valid UTF-8");
	if (utf8_chars(msg, n) > RT_MESSAGE_MAX_CHARS)
		return smr_errf(err, SMR_ETOOBIG, "message is longer than %d characters",
				RT_MESSAGE_MAX_CHARS);
	return SMR_OK;
}

static enum smr_rc pick_provider(struct send *s, struct smr_err *err)
{
	const char *name = s->req->provider ? s->req->provider : s->rt->default_provider;
	const char *why;
	size_t n;

	s->p = runtime_provider(s->rt, name);
	if (!s->p)
		return smr_errf(err, SMR_EUNPROC,
				"unknown provider '%s' (expected openai, anthropic or local)", name);
	s->model = xstrdup(s->req->model ? s->req->model : provider_default_model(s->p));
	n = strlen(s->model);
	if (!n || !utf8_valid(s->model, n) || utf8_chars(s->model, n) > MODEL_MAX_CHARS)
		return smr_errf(err, SMR_EINVAL, "model must be 1 to %d characters of text",
				MODEL_MAX_CHARS);
	why = provider_unusable(s->p);
	if (why)
		return smr_errf(err, SMR_EPROVIDER, "%s: %s", provider_name(s->p), why);
	return SMR_OK;
}

/* v5.2: the client's commit_hash / history_base_seq, validated against the session. */
static enum smr_rc client_boundary(struct send *s, struct smr_err *err)
{
	struct space sp = { 0 };
	enum smr_rc rc = SMR_OK;

	s->mode = "client";
	s->base = 0;
	if (s->req->has_base) {
		if (s->req->history_base_seq < 0 || s->req->history_base_seq > s->sn.last_seq)
			return smr_errf(err, SMR_EUNPROC,
					"history_base_seq %lld is out of range: session '%s' has"
					" sequence numbers 0 to %lld", s->req->history_base_seq,
					s->sn.id, (long long)s->sn.last_seq);
		s->base = s->req->history_base_seq;
	}
	if (!s->req->commit_hash)
		return SMR_OK;
	rc = store_space_get(s->ctx->st, s->sn.repo_id, &sp, err);
	if (!rc)
		rc = chat_space_checkpoint(s->ctx, &sp, s->req->commit_hash, &s->ck, err);
	s->has_ck = !rc;
	space_release(&sp);
	return rc;
}

/*
 * v5.3: a session forked by session.mount holds only turns after the mount,
 * so all of them count; history_base_seq there is the parent's position.  A
 * mounted session that was not forked keeps its recorded boundary.
 */
static enum smr_rc structural_boundary(struct send *s, struct smr_err *err)
{
	enum smr_rc rc;

	s->mode = "structural";
	s->base = s->sn.forked_from || s->sn.history_base_seq < 0 ? 0 : s->sn.history_base_seq;
	if (!s->sn.mounted_hash)
		return SMR_OK;
	rc = store_checkpoint_get(s->ctx->st, s->sn.repo_id, s->sn.mounted_hash,
				  &s->ck, err);
	s->has_ck = !rc;
	return rc;
}

/* The last turn if it is the user's same message, failed and unanswered. */
static enum smr_rc find_retry(struct send *s, struct smr_err *err)
{
	struct turn *last = NULL;
	size_t n = 0;
	enum smr_rc rc;

	if (s->after <= 0 || s->action != CHAT_SEND)
		return SMR_OK;
	rc = store_turn_list(s->ctx->st, s->sn.id, s->after - 1, &last, &n, err);
	/* the question at the path's end: a failed, unanswered one is asked again in place */
	if (!rc && n >= 1 && last[0].seq == s->after && !strcmp(last[0].role, "user") &&
	    last[0].error && !strcmp(last[0].content, s->req->message)) {
		s->user = last[0];
		memset(&last[0], 0, sizeof(last[0]));
		s->reused = 1;
		s->after = turn_parent(&s->user);
	}
	turns_free(last, n);
	return rc;
}

/* The user turn to store (begin_generation stores it), or the failed one reused. */
static enum smr_rc user_turn(struct send *s, struct smr_err *err)
{
	char now[32];
	enum smr_rc rc = find_retry(s, err);

	if (rc || s->reused)
		return rc;
	s->ctx->now(now);
	s->user = (struct turn){
		.session_id = xstrdup(s->sn.id), .role = xstrdup("user"),
		.content = xstrdup(s->req->message), .provider = xstrdup(provider_name(s->p)),
		.model = xstrdup(s->model), .prompt_tokens = -1, .completion_tokens = -1,
		.latency_ms = -1, .created_at = xstrdup(now),
		.author = ops_restricted(s->ctx) ? xstrdup(s->ctx->who->name) : NULL,
		/* the store keeps the parent only when it is not the turn before */
		.has_parent = s->after != s->sn.last_seq, .parent_seq = s->after,
	};
	return SMR_OK;
}

/*
 * s->path: the loaded turns of the path that ends where the question
 * follows (s->after), a reply's parts joined; with count, returns their
 * characters.  s->cut says whether the path goes on below them.
 */
static size_t build_path(struct send *s, int count)
{
	size_t chars = 0;

	thread_view_release(&s->path);
	thread_view_build(s->turns, s->n_loaded, s->after, s->base, &s->path);
	s->cut = s->path.missing;
	for (size_t i = 0; count && i < s->path.n; i++)
		chars += utf8_chars(s->path.turns[i].content, strlen(s->path.turns[i].content));
	return chars;
}

/*
 * Loads the newest turns after the boundary that the budget can hold, not
 * the whole session: sessions up to WINDOW_ALL turns are read whole; longer
 * ones a small window first, then one sized from the average turn, growing
 * until the path's turns loaded pass the budget or the path ends inside
 * them.  In a linear session the turns left unloaded are exactly base+1 ..
 * cut and are reported as dropped.
 */
static enum smr_rc load_turns(struct send *s, struct smr_err *err)
{
	int64_t last = s->after, k = last - s->base <= WINDOW_ALL ? last : 64, after;
	size_t chars;
	enum smr_rc rc;

	for (;;) {
		after = s->budget && last - k > s->base ? last - k : s->base;
		turns_free(s->turns, s->n_loaded);
		s->turns = NULL;
		s->n_loaded = 0;
		rc = store_turn_list(s->ctx->st, s->sn.id, after, &s->turns,
				     &s->n_loaded, err);
		if (rc)
			return rc;
		/* with everything after the boundary loaded, context_build does the counting */
		chars = build_path(s, after > s->base);
		if (after == s->base || chars >= s->budget || !s->cut)
			break;
		/* enough turns of the average size seen so far, and a quarter more */
		k += (int64_t)((s->budget - chars) / (chars / (s->path.n + 1) + 1) * 5 / 4) + k;
	}
	return SMR_OK;
}

static enum smr_rc assemble(struct send *s, struct smr_err *err)
{
	struct context_in in = { 0 };
	enum smr_rc rc;

	s->budget = runtime_budget_for(s->rt, s->model);
	rc = load_turns(s, err);
	if (rc)
		return rc;
	in.preamble = s->rt->preamble;
	in.checkpoint = s->has_ck ? &s->ck : NULL;
	in.turns = s->path.turns;
	in.n_turns = s->path.n;
	in.prefill = s->prefill;
	in.prefill_seq = s->prefill_seq;
	in.history_base_seq = s->base;
	in.message = s->user.content;
	in.message_seq = s->user.seq;
	in.budget_chars = s->budget;
	context_build(&in, &s->cx);
	return SMR_OK;
}

static json_t *seq_array(const int64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

/* The turns left out: those never loaded (base+1 .. window), then the trimmed ones. */
static json_t *dropped_json(const struct send *s)
{
	json_t *a = json_array();

	for (int64_t seq = s->base + 1; seq <= s->cut; seq++)
		json_array_append_new(a, json_integer(seq));
	for (size_t i = 0; i < s->cx.n_dropped; i++)
		json_array_append_new(a, json_integer(s->cx.dropped[i]));
	return a;
}

static json_t *context_json(const struct send *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "commit_hash", s->has_ck ? json_string(s->ck.hash) : json_null());
	json_object_set_new(o, "history_base_seq", json_integer(s->base));
	json_object_set_new(o, "turns_included", seq_array(s->cx.included, s->cx.n_included));
	json_object_set_new(o, "turns_dropped", dropped_json(s));
	json_object_set_new(o, "trimmed", json_boolean(s->cx.trimmed || s->cut > s->base));
	json_object_set_new(o, "mode", json_string(s->mode));
	json_object_set_new(o, "budget_chars", json_integer((json_int_t)s->budget));
	json_object_set_new(o, "chars", json_integer((json_int_t)s->cx.chars));
	json_object_set_new(o, "timing", json_pack("{s:I, s:I, s:I}",
		"total_us", (json_int_t)(sys_monotonic_us() - s->t0),
		"provider_us", (json_int_t)s->provider_us,
		"cpu_us", (json_int_t)s->cpu_us));
	return o;
}

static enum smr_rc nudge_json(struct send *s, json_t **out, struct smr_err *err)
{
	struct nudge_in in = { 0 };
	struct nudge n;
	json_t *reasons;
	enum smr_rc rc;

	rc = store_turns_since_head(s->ctx->st, s->sn.repo_id,
				    &in.turns_since_checkpoint, err);
	if (rc)
		return rc;
	in.threshold = s->rt->nudge_threshold;
	in.message = s->user.content;
	in.reply = s->reply.content;
	nudge_eval(&in, &n);
	reasons = json_array();
	for (size_t i = 0; i < n.n_reasons; i++)
		json_array_append_new(reasons, json_string(n.reasons[i]));
	*out = json_pack("{s:b, s:o, s:I}", "suggested", n.suggested, "reasons", reasons,
			 "turns_since_checkpoint", (json_int_t)in.turns_since_checkpoint);
	nudge_release(&n);
	return SMR_OK;
}

static enum smr_rc prepare(struct send *s, struct smr_err *err)
{
	enum smr_rc rc;

	if (!s->req->session_id)
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'session_id'");
	if (s->action <= CHAT_EDIT && !s->req->message)
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'message'");
	rc = s->action <= CHAT_EDIT ? check_message(s->req->message, err) : SMR_OK;
	/* "no such session" (404) before "no provider" (502): the caller's mistake first */
	if (!rc)
		rc = store_session_get(s->ctx->st, s->req->session_id, &s->sn, err);
	if (!rc)
		rc = pick_provider(s, err);
	if (!rc && (s->req->commit_hash || s->req->has_base))
		rc = client_boundary(s, err);
	else if (!rc)
		rc = structural_boundary(s, err);
	return rc;
}

/* ---- the turn acted on (edit, regenerate, continue) ---- */

/* The question reply i answers: back over the assistant's turns (a reply's parts); or -1. */
static long question_of(const struct turn *t, size_t n, long i)
{
	while (i >= 0 && !strcmp(t[i].role, "assistant"))
		i = thread_find(t, n, turn_parent(&t[i]));
	return i >= 0 && !strcmp(t[i].role, "user") ? i : -1;
}

/* continue: the reply so far, from the question's answer to turn i, its parts joined. */
static void take_prefill(struct send *s, const struct turn *t, size_t n, long q, long i)
{
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	size_t len = thread_path(t, n, t[i].seq, t[q].seq, idx, &(int64_t){ 0 });
	struct buf b = BUF_INIT(0);

	for (size_t k = 0; k < len; k++)
		buf_adds(&b, t[idx[k]].content);
	s->prefill = buf_detach(&b, NULL);
	s->prefill_seq = s->reply_after = t[i].seq;
	free(idx);
}

static enum smr_rc refuse_turn(const struct send *s, const struct turn *t, struct smr_err *err)
{
	long long seq = s->req->seq;

	if (!t)
		return smr_errf(err, SMR_EUNPROC, "session '%s' has no turn %lld", s->sn.id, seq);
	if (s->action == CHAT_EDIT)
		return smr_errf(err, SMR_EUNPROC, "turn %lld is a reply: only a question can be"
				" edited (regenerate a reply instead)", seq);
	if (s->action == CHAT_CONTINUE && strcmp(t->role, "assistant"))
		return smr_errf(err, SMR_EUNPROC, "turn %lld is a question: only a reply can be"
				" continued", seq);
	return smr_errf(err, SMR_EUNPROC, "turn %lld answers no question: there is nothing to"
			" %s", seq, s->action == CHAT_CONTINUE ? "continue" : "regenerate");
}

/* Where the question goes: after the path's end, or beside the turn acted on. */
static enum smr_rc place(struct send *s, struct smr_err *err)
{
	struct turn *all = NULL;
	size_t n = 0;
	long i, q = -1;
	enum smr_rc rc;

	s->after = s->sn.leaf_seq > 0 ? s->sn.leaf_seq : s->sn.last_seq;
	if (s->action == CHAT_SEND)
		return SMR_OK;
	rc = store_turn_list(s->ctx->st, s->sn.id, 0, &all, &n, err);
	if (rc)
		return rc;
	i = thread_find(all, n, s->req->seq);
	if (i >= 0 && s->action == CHAT_EDIT && !strcmp(all[i].role, "user")) {
		s->after = turn_parent(&all[i]);
	} else if (i >= 0 && s->action != CHAT_EDIT &&
		   (s->action == CHAT_REGENERATE || !strcmp(all[i].role, "assistant")) &&
		   (q = question_of(all, n, i)) >= 0) {
		if (s->action == CHAT_CONTINUE)
			take_prefill(s, all, n, q, i);
		s->user = all[q];
		memset(&all[q], 0, sizeof(all[q]));
		s->reused = 1;
		s->after = turn_parent(&s->user);
	} else {
		rc = refuse_turn(s, i >= 0 ? &all[i] : NULL, err);
	}
	turns_free(all, n);
	return rc;
}

/* ---- the generation row ---- */

/* The generation's row and the user's turn, in one transaction (409 while one runs). */
static enum smr_rc begin_generation(struct send *s, struct smr_err *err)
{
	char id[37], now[32];
	enum smr_rc rc;

	s->ctx->new_id(id);
	s->ctx->now(now);
	s->gen = (struct generation){
		.id = xstrdup(id), .session_id = xstrdup(s->sn.id), .status = xstrdup("running"),
		.provider = xstrdup(provider_name(s->p)), .model = xstrdup(s->model),
		.user_seq = s->reused ? s->user.seq : -1, .assistant_seq = -1,
		.created_at = xstrdup(now),
		.owner = s->rt->lease ? xstrdup(lease_id(s->rt->lease)) : NULL,
	};
	rc = store_generation_begin(s->ctx->st, &s->gen, s->reused ? NULL : &s->user,
				    s->sn.last_seq, err);
	s->gen_stored = !rc;
	return rc;
}

/* The row's end in memory: status, error and now. */
static void mark_ended(struct send *s, const char *status, const char *error)
{
	char now[32];

	s->ctx->now(now);
	free(s->gen.status);
	s->gen.status = xstrdup(status);
	free(s->gen.error);
	s->gen.error = error ? xstrdup(error) : NULL;
	free(s->gen.finished_at);
	s->gen.finished_at = xstrdup(now);
	s->gen_stored = 0;
}

/*
 * Ends the row as failed with error, which also goes on the user turn.
 * When the database is unreachable the finisher writes both once it is
 * back: a row left running would hold the session at 409.
 */
static void end_failed(struct send *s, const char *status, const char *error)
{
	enum smr_rc rc = store_turn_set_error(s->ctx->st, s->user.id, error, NULL);

	mark_ended(s, status, error);
	if (!rc)
		rc = store_generation_end(s->ctx->st, &s->gen, NULL, NULL);
	if (rc == SMR_EUNAVAIL)
		gen_settle_later(s->rt, &s->gen, s->user.id);
}

/* ---- the provider call (callbacks on the provider's loop thread) ---- */

static void on_delta(void *ud, const char *text, size_t len)
{
	gen_delta(ud, text, len);
}

static void take_outcome(struct chat_gen *g, const struct provider_outcome *o)
{
	struct send *s = gen_send(g);

	s->end = o->end;
	if (o->err)
		s->perr = *o->err;
	s->finish_reason = o->finish_reason ? xstrdup(o->finish_reason) : NULL;
	s->prompt_tokens = o->usage.prompt_tokens;
	s->completion_tokens = o->usage.completion_tokens;
	s->provider_us = o->latency_us;
	gen_call_ended(g);
}

static void on_end(void *ud, const struct provider_outcome *o)
{
	take_outcome(ud, o);
}

static enum smr_rc start_call(struct send *s, struct provider_stream **ps, struct smr_err *err)
{
	static const struct provider_stream_cbs cbs = {
		.on_delta = on_delta, .on_done = on_end, .on_error = on_end,
	};
	struct provider_msg *msgs = xcalloc(s->cx.n_msgs, sizeof(*msgs));
	struct provider_req req = { 0 };
	enum smr_rc rc;

	for (size_t i = 0; i < s->cx.n_msgs; i++)
		msgs[i] = (struct provider_msg){ s->cx.msgs[i].role, s->cx.msgs[i].content };
	req.model = s->model;
	req.system = s->cx.system;
	req.msgs = msgs;
	req.n_msgs = s->cx.n_msgs;
	req.temperature = -1;
	rc = provider_stream_start(s->p, &req, &cbs, s->g, ps, err);
	free(msgs);
	return rc;
}

/* ---- the finish (finisher thread, or chat_send's caller) ---- */

static const char *status_for(const struct send *s, struct chat_gen *g)
{
	switch (s->end) {
	case PROVIDER_END_COMPLETE:
		return TURN_COMPLETE;
	case PROVIDER_END_TRUNCATED:
		return TURN_TRUNCATED;
	case PROVIDER_END_STOPPED:
		return gen_shutting_down(g) ? TURN_INTERRUPTED : TURN_STOPPED;
	case PROVIDER_END_INTERRUPTED:
		return TURN_INTERRUPTED;
	case PROVIDER_END_ERROR:
		break;
	}
	return TURN_ERROR;
}

/* s->reply and the row's end, from the text received (taken); no I/O. */
static void build_reply(struct send *s, char *text, const char *status)
{
	char now[32];

	s->ctx->now(now);
	s->reply = (struct turn){
		.session_id = xstrdup(s->sn.id), .role = xstrdup("assistant"),
		.content = text, .provider = xstrdup(provider_name(s->p)),
		.model = xstrdup(s->model), .prompt_tokens = s->prompt_tokens,
		.completion_tokens = s->completion_tokens,
		.latency_ms = s->provider_us / 1000, .created_at = xstrdup(now),
		.status = xstrdup(status),
		/* a plain send's reply follows its question, the turn before it */
		.has_parent = s->action != CHAT_SEND,
		.parent_seq = s->reply_after ? s->reply_after : s->user.seq,
		.error = !strcmp(status, TURN_ERROR) || !strcmp(status, TURN_INTERRUPTED) ?
			 xstrdup(s->perr.msg[0] ? s->perr.msg : "the reply was cut off") : NULL,
	};
	free(s->gen.status);
	s->gen.status = xstrdup(status);
	free(s->gen.error);
	s->gen.error = s->reply.error ? xstrdup(s->reply.error) : NULL;
	free(s->gen.finished_at);
	s->gen.finished_at = xstrdup(now);
	s->gen_stored = 0;
}

static enum smr_rc store_reply(struct send *s, char *text, const char *status,
			       struct smr_err *err)
{
	enum smr_rc rc = SMR_OK;

	if (s->reused) {
		rc = store_turn_set_error(s->ctx->st, s->user.id, NULL, err);
		free(s->user.error);
		s->user.error = NULL;
	}
	if (rc) {
		free(text);
		return rc;
	}
	build_reply(s, text, status);
	/* never lose a paid-for reply to a race: appended after whatever is last */
	rc = store_generation_end(s->ctx->st, &s->gen, &s->reply, err);
	if (rc) {
		store_turn_set_error(s->ctx->st, s->user.id, "the reply could not be stored", NULL);
		turn_release(&s->reply);
	}
	return rc;
}

static json_t *error_member(enum smr_rc rc, const char *msg)
{
	return json_pack("{s:s, s:s}", "code", smr_rc_name(rc), "message", msg);
}

/* Nothing arrived and the call failed: the error goes on the user turn, as before streaming. */
static void finish_failed(struct send *s, struct chat_gen *g, const char *status)
{
	struct smr_err e = s->perr;
	enum smr_rc rc = e.code ? e.code : SMR_EPROVIDER;
	json_t *doc;

	if (!e.msg[0])
		smr_errf(&e, rc, "%s: the reply failed", provider_name(s->p));
	/* a store failure here must not hide the provider's message */
	end_failed(s, status, e.msg);
	free(s->user.error);
	s->user.error = xstrdup(e.msg);
	doc = json_pack("{s:o, s:o, s:o, s:o}", "error", error_member(rc, e.msg),
			"generation", ops_generation_json(&s->gen), "user_turn",
			ops_turn_json(&s->user), "context", context_json(s));
	gen_end(g, "error", doc, rc, &e);
}

/* The end of a send whose reply is stored: the nudge, the final event. */
static void finish_stored(struct send *s, struct chat_gen *g)
{
	const char *status = s->gen.status;
	int failed = !strcmp(status, TURN_ERROR) || !strcmp(status, TURN_INTERRUPTED);
	struct smr_err e = SMR_ERR_INIT;
	json_t *nudge = NULL, *doc;
	enum smr_rc rc;

	if (nudge_json(s, &nudge, &e))
		nudge = json_null();    /* the reply is stored; the hint is not worth failing it */
	doc = json_pack("{s:o, s:o, s:o, s:o, s:o}", "generation", ops_generation_json(&s->gen),
			"user_turn", ops_turn_json(&s->user), "assistant_turn",
			ops_turn_json(&s->reply), "context", context_json(s), "nudge", nudge);
	if (!failed) {
		gen_end(g, "done", doc, SMR_OK, NULL);
		return;
	}
	rc = s->perr.code ? s->perr.code : SMR_EUNAVAIL;
	json_object_set_new(doc, "error", error_member(rc, s->reply.error));
	smr_errf(&e, rc, "%s", s->reply.error);
	gen_end(g, "error", doc, rc, &e);
}

/* Status and error of a call that ended; 1 when its reply can go in a batch. */
static int finish_begin(struct ops_ctx *ctx, struct chat_gen *g, const char **status)
{
	struct send *s = gen_send(g);
	int failed;

	s->ctx = ctx;
	*status = status_for(s, g);
	failed = !strcmp(*status, TURN_ERROR) || !strcmp(*status, TURN_INTERRUPTED);
	if (failed && !s->perr.code)
		smr_errf(&s->perr, SMR_EUNAVAIL, "%s: the server stopped during the reply",
			 provider_name(s->p));
	return !s->reused && !(failed && !gen_text_len(g));
}

void send_finish(struct ops_ctx *ctx, struct chat_gen *g)
{
	struct send *s = gen_send(g);
	struct smr_err e = SMR_ERR_INIT;
	const char *status;
	char *text;

	finish_begin(ctx, g, &status);
	text = gen_text(g);
	if ((!strcmp(status, TURN_ERROR) || !strcmp(status, TURN_INTERRUPTED)) && !*text) {
		free(text);
		finish_failed(s, g, status);
		return;
	}
	if (store_reply(s, text, status, &e)) {
		s->perr = e;
		finish_failed(s, g, TURN_ERROR);
		return;
	}
	finish_stored(s, g);
}

void send_finish_batch(struct ops_ctx *ctx, struct chat_gen **gs, size_t n)
{
	struct generation **rows = xcalloc(n ? n : 1, sizeof(*rows));
	struct turn **replies = xcalloc(n ? n : 1, sizeof(*replies));
	struct chat_gen **batch = xcalloc(n ? n : 1, sizeof(*batch));
	struct smr_err e = SMR_ERR_INIT;
	const char *status;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct send *s = gen_send(gs[i]);

		if (!finish_begin(ctx, gs[i], &status)) {
			send_finish(ctx, gs[i]);
			continue;
		}
		build_reply(s, gen_text(gs[i]), status);
		batch[k] = gs[i];
		rows[k] = &s->gen;
		replies[k++] = &s->reply;
	}
	/* one transaction for them all; if it fails, each on its own (one bad row spoils none) */
	if (k && store_generation_end_many(ctx->st, rows, replies, k, &e)) {
		for (size_t i = 0; i < k; i++) {
			struct send *s = gen_send(batch[i]);

			if (store_generation_end(ctx->st, &s->gen, &s->reply, &e)) {
				store_turn_set_error(ctx->st, s->user.id,
						     "the reply could not be stored", NULL);
				turn_release(&s->reply);
				s->perr = e;
				finish_failed(s, batch[i], TURN_ERROR);
				batch[i] = NULL;
			}
		}
	}
	for (size_t i = 0; i < k; i++)
		if (batch[i])
			finish_stored(gen_send(batch[i]), batch[i]);
	free(rows);
	free(replies);
	free(batch);
}

void send_free(struct send *s)
{
	if (!s)
		return;
	free(s->model);
	session_release(&s->sn);
	checkpoint_release(&s->ck);
	turn_release(&s->user);
	turns_free(s->turns, s->n_loaded);
	thread_view_release(&s->path);
	free(s->prefill);
	context_release(&s->cx);
	generation_release(&s->gen);
	free(s->finish_reason);
	turn_release(&s->reply);
	free(s);
}

/*
 * A failure after the row was made: the row ends as an error, so the
 * session is free again.  A row whose write was cut off in its COMMIT
 * (unavailable) may have been made all the same: the finisher ends it too,
 * without touching a user turn whose id may not be its own.
 */
static enum smr_rc abandon(struct send *s, enum smr_rc rc, struct smr_err *err)
{
	if (s->gen_stored) {
		end_failed(s, TURN_ERROR, err->msg);
	} else if (rc == SMR_EUNAVAIL && s->gen.id) {
		mark_ended(s, TURN_ERROR, err->msg);
		gen_settle_later(s->rt, &s->gen, 0);
	}
	send_free(s);
	return rc;
}

enum smr_rc chat_send_start(struct ops_ctx *ctx, struct runtime *rt,
			    const struct chat_send_req *req, struct chat_gen **out,
			    struct smr_err *err)
{
	struct send *s = xcalloc(1, sizeof(*s));
	int64_t cpu0 = thread_cpu_us();
	struct provider_stream *ps = NULL;
	struct chat_gen *g;
	enum smr_rc rc;

	*out = NULL;
	*s = (struct send){ .ctx = ctx, .rt = rt, .req = req, .action = req->action,
			    .t0 = sys_monotonic_us() };
	rc = prepare(s, err);
	if (!rc)
		rc = place(s, err);
	if (!rc)
		rc = user_turn(s, err);
	if (!rc)
		rc = begin_generation(s, err);
	if (!rc)
		rc = assemble(s, err);
	if (rc)
		return abandon(s, rc, err);
	s->req = NULL;
	s->cpu_us = thread_cpu_us() - cpu0;
	g = gen_new(rt, s->gen.id, s->sn.id);
	s->g = g;
	gen_attach(g, s, NULL);
	gen_event(g, "generation", json_pack("{s:o, s:o}", "generation",
					     ops_generation_json(&s->gen), "user_turn",
					     ops_turn_json(&s->user)));
	if (start_call(s, &ps, &s->perr)) {
		s->end = PROVIDER_END_ERROR;
		gen_call_ended(g);
	} else {
		gen_set_stream(g, ps);
	}
	*out = g;
	return SMR_OK;
}

enum smr_rc chat_send(struct ops_ctx *ctx, struct runtime *rt, const struct chat_send_req *req,
		      json_t **result, struct smr_err *err)
{
	struct chat_gen *g = NULL;
	enum smr_rc rc = chat_send_start(ctx, rt, req, &g, err);

	if (rc)
		return rc;
	gen_wait(g, ctx);
	rc = chat_gen_result(g, result, err);
	chat_gen_unref(g);
	return rc;
}
