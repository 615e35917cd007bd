/*
 * send.c -- chat.send: store the user's turn, rebuild the context from the
 * store, call the provider, store the reply, and say whether to checkpoint.
 *
 *   validate --ok--> store user turn --> assemble context --> provider
 *      |                  (or reuse a failed,       |            |  \--fail--> record error on the
 *      |                   unanswered one)          |            |             user turn, return it
 *   422/400, nothing written                        |           ok--> store reply --> nudge
 *
 * Nothing is written before validation passes.  The context is rebuilt on
 * every send, so switching provider or model keeps the session and its
 * context (DECISIONS.md, "Why provider switching does not create a new
 * session").
 */
#include "ops/runtime/runtime.h"
#include "domain/context.h"
#include "domain/nudge.h"
#include "util/sys.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MODEL_MAX_CHARS 200
#define WINDOW_ALL 2048         /* sessions this long are read whole */

struct send {
	struct ops_ctx *ctx;
	struct runtime *rt;
	const struct chat_send_req *req;
	struct provider *p;
	const char *model;
	struct session sn;
	struct checkpoint ck;
	int has_ck;
	const char *mode;              /* "structural" | "client" */
	int64_t base;                  /* boundary in this session's numbering */
	struct turn user;
	int reused;
	struct turn *turns;            /* turns after the boundary, before the user's */
	size_t n_turns, n_loaded;
	int64_t window;                /* turns with base < seq <= window were not loaded */
	struct context cx;
	size_t budget;
	struct provider_resp resp;
	struct turn reply;
	int64_t t0, provider_us;
	int64_t cpu0;                  /* thread CPU time at the start */
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
	s->model = s->req->model ? s->req->model : s->p->cfg.default_model;
	n = strlen(s->model);
	if (!n || !utf8_valid(s->model, n) || utf8_chars(s->model, n) > MODEL_MAX_CHARS)
		return smr_errf(err, SMR_EINVAL, "model must be 1 to %d characters of text",
				MODEL_MAX_CHARS);
	why = provider_unusable(s->p);
	if (why)
		return smr_errf(err, SMR_EPROVIDER, "%s: %s", s->p->name, why);
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

	if (s->sn.last_seq <= 0)
		return SMR_OK;
	rc = store_turn_list(s->ctx->st, s->sn.id, s->sn.last_seq - 1, &last, &n, err);
	if (!rc && n == 1 && !strcmp(last[0].role, "user") && last[0].error &&
	    !strcmp(last[0].content, s->req->message)) {
		s->user = last[0];
		memset(&last[0], 0, sizeof(last[0]));
		s->reused = 1;
	}
	turns_free(last, n);
	return rc;
}

static enum smr_rc store_user_turn(struct send *s, struct smr_err *err)
{
	char now[32];
	enum smr_rc rc = find_retry(s, err);

	if (rc || s->reused)
		return rc;
	s->ctx->now(now);
	s->user = (struct turn){
		.session_id = xstrdup(s->sn.id), .role = xstrdup("user"),
		.content = xstrdup(s->req->message), .provider = xstrdup(s->p->name),
		.model = xstrdup(s->model), .prompt_tokens = -1, .completion_tokens = -1,
		.latency_ms = -1, .created_at = xstrdup(now),
	};
	rc = store_turn_append(s->ctx->st, &s->user, s->sn.last_seq, err);
	if (rc == SMR_ECONFLICT)
		rc = smr_errf(err, SMR_ECONFLICT, "session '%s' got a new turn while this message"
			      " was being sent; reload it and send again", s->sn.id);
	return rc;
}

/* Sets n_turns to the loaded turns before the user's; with count, returns their characters. */
static size_t prior_turns(struct send *s, int count)
{
	size_t chars = 0;

	s->n_turns = 0;
	while (s->n_turns < s->n_loaded && s->turns[s->n_turns].seq < s->user.seq) {
		if (count)
			chars += utf8_chars(s->turns[s->n_turns].content,
					    strlen(s->turns[s->n_turns].content));
		s->n_turns++;
	}
	return chars;
}

/*
 * Loads the newest turns after the boundary that the budget can hold, not
 * the whole session: sessions up to WINDOW_ALL turns are read whole; longer
 * ones a small window first, then one sized from the average turn, growing
 * until the turns loaded pass the budget or reach the boundary.  Sequence
 * numbers are gap-free, so the ones left unloaded are exactly base+1 ..
 * window and are reported as dropped.
 */
static enum smr_rc load_turns(struct send *s, struct smr_err *err)
{
	int64_t last = s->user.seq - 1, k = last - s->base <= WINDOW_ALL ? last : 64, after;
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
		chars = prior_turns(s, after > s->base);
		if (after == s->base || chars >= s->budget)
			break;
		/* enough turns of the average size seen so far, and a quarter more */
		k += (int64_t)((s->budget - chars) / (chars / (s->n_turns + 1) + 1) * 5 / 4) + k;
	}
	s->window = after;
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
	in.turns = s->turns;
	in.n_turns = s->n_turns;
	in.history_base_seq = s->base;
	in.message = s->user.content;
	in.message_seq = s->user.seq;
	in.budget_chars = s->budget;
	context_build(&in, &s->cx);
	return SMR_OK;
}

static enum smr_rc call_provider(struct send *s, struct smr_err *err)
{
	struct provider_msg *msgs = xcalloc(s->cx.n_msgs, sizeof(*msgs));
	struct provider_req req = { 0 };
	int64_t t0 = sys_monotonic_us();
	enum smr_rc rc;

	for (size_t i = 0; i < s->cx.n_msgs; i++)
		msgs[i] = (struct provider_msg){ s->cx.msgs[i].role, s->cx.msgs[i].content };
	req.model = s->model;
	req.system = s->cx.system;
	req.msgs = msgs;
	req.n_msgs = s->cx.n_msgs;
	req.temperature = -1;
	rc = provider_complete(s->p, &req, &s->resp, err);
	/* the provider's share is its HTTP time; building and parsing bodies is ours */
	s->provider_us = rc ? sys_monotonic_us() - t0 : s->resp.http_us;
	free(msgs);
	return rc;
}

static enum smr_rc store_reply(struct send *s, struct smr_err *err)
{
	char now[32];
	enum smr_rc rc = SMR_OK;

	if (s->reused) {
		rc = store_turn_set_error(s->ctx->st, s->user.id, NULL, err);
		free(s->user.error);
		s->user.error = NULL;
	}
	if (rc)
		return rc;
	s->ctx->now(now);
	s->reply = (struct turn){
		.session_id = xstrdup(s->sn.id), .role = xstrdup("assistant"),
		.content = xstrdup(s->resp.text), .provider = xstrdup(s->p->name),
		.model = xstrdup(s->model), .prompt_tokens = s->resp.prompt_tokens,
		.completion_tokens = s->resp.completion_tokens,
		.latency_ms = s->resp.latency_us / 1000, .created_at = xstrdup(now),
	};
	/* never lose a paid-for reply to a race: append after whatever is last */
	rc = store_turn_append(s->ctx->st, &s->reply, -1, err);
	if (rc)
		store_turn_set_error(s->ctx->st, s->user.id,
				     "the reply could not be stored", NULL);
	return rc;
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

	for (int64_t seq = s->base + 1; seq <= s->window; seq++)
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
	json_object_set_new(o, "trimmed", json_boolean(s->cx.trimmed || s->window > s->base));
	json_object_set_new(o, "mode", json_string(s->mode));
	json_object_set_new(o, "budget_chars", json_integer((json_int_t)s->budget));
	json_object_set_new(o, "chars", json_integer((json_int_t)s->cx.chars));
	json_object_set_new(o, "timing", json_pack("{s:I, s:I, s:I}",
		"total_us", (json_int_t)(sys_monotonic_us() - s->t0),
		"provider_us", (json_int_t)s->provider_us,
		"cpu_us", (json_int_t)(thread_cpu_us() - s->cpu0)));
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

/* The provider failed: keep the user turn, record the error, describe both. */
static enum smr_rc record_failure(struct send *s, enum smr_rc failure, json_t **result,
				  struct smr_err *err)
{
	/* a store failure here must not hide the provider's message */
	store_turn_set_error(s->ctx->st, s->user.id, err->msg, NULL);
	free(s->user.error);
	s->user.error = xstrdup(err->msg);
	*result = json_pack("{s:o, s:s, s:o}", "user_turn", ops_turn_json(&s->user),
			    "error", err->msg, "context", context_json(s));
	return failure;
}

static enum smr_rc prepare(struct send *s, struct smr_err *err)
{
	enum smr_rc rc;

	if (!s->req->session_id)
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'session_id'");
	if (!s->req->message)
		return smr_errf(err, SMR_EUSAGE, "missing required parameter 'message'");
	rc = check_message(s->req->message, err);
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

static void send_release(struct send *s)
{
	session_release(&s->sn);
	checkpoint_release(&s->ck);
	turn_release(&s->user);
	turns_free(s->turns, s->n_loaded);
	context_release(&s->cx);
	provider_resp_release(&s->resp);
	turn_release(&s->reply);
}

enum smr_rc chat_send(struct ops_ctx *ctx, struct runtime *rt, const struct chat_send_req *req,
		      json_t **result, struct smr_err *err)
{
	struct send s = { .ctx = ctx, .rt = rt, .req = req, .t0 = sys_monotonic_us(),
			  .cpu0 = thread_cpu_us() };
	json_t *nudge = NULL;
	enum smr_rc rc;

	rc = prepare(&s, err);
	if (!rc)
		rc = store_user_turn(&s, err);
	if (!rc)
		rc = assemble(&s, err);
	if (!rc) {
		rc = call_provider(&s, err);
		if (rc == SMR_EPROVIDER || rc == SMR_ETIMEOUT) {
			rc = record_failure(&s, rc, result, err);
			goto out;
		}
	}
	if (!rc)
		rc = store_reply(&s, err);
	if (!rc)
		rc = nudge_json(&s, &nudge, err);
	if (!rc)
		*result = json_pack("{s:o, s:o, s:o, s:o}", "user_turn", ops_turn_json(&s.user),
				    "assistant_turn", ops_turn_json(&s.reply),
				    "context", context_json(&s), "nudge", nudge);
out:
	send_release(&s);
	return rc;
}
