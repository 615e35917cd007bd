/*
 * runtime.h -- Smriti's live chat runtime (smriti-full only): sessions,
 * sending a message through a provider, and mounting a Checkpoint.
 *
 * struct runtime is created once per process from the environment, where
 * the program starts (cmd_serve for the server, with its draft runner;
 * main for a CLI command that uses providers), and passed down in
 * ops_ctx.rt; it is read-only afterwards, so any number of server workers
 * share it.  Operations take the caller's ops_ctx (store handle, clock,
 * ids) and the runtime.
 *
 * Mounting (see docs/providers.md):
 *  - v5.3, structural, the default: session.mount forks a NEW session that
 *    records the mounted Checkpoint, the session it came from and that
 *    session's last sequence number at mount time (history_base_seq, in the
 *    parent's numbering).  The new session starts with no turns, so every
 *    turn it gets is after the mount: sends use the Checkpoint plus all of
 *    its own turns.  The old session is untouched.
 *  - v5.2, client boundary: a send may carry commit_hash and/or
 *    history_base_seq; they are validated (a Checkpoint of the session's
 *    Space; an integer from 0 to the session's last sequence number) and
 *    then used for that send only: the Checkpoint plus the turns with
 *    sequence_number > history_base_seq.
 *  - neither: no Checkpoint, every turn of the session.
 */
#ifndef SMRITI_RUNTIME_H
#define SMRITI_RUNTIME_H

#include <jansson.h>

#include "ops/api.h"
#include "ops/ops.h"
#include "provider/provider.h"

#define RT_PROVIDERS PROVIDER_KINDS  /* one per kind, indexed as provider_names */
#define RT_MESSAGE_MAX_CHARS 200000     /* one chat message */
#define RT_TITLE_MAX_CHARS 200

struct chat_gens;
struct lease;

struct rt_budget {
	char *model_prefix;
	size_t chars;
};

struct runtime {
	struct provider *providers[RT_PROVIDERS];
	char *default_provider;          /* SMRITI_PROVIDER, else "openai" */
	char *preamble;                  /* SMRITI_SYSTEM_PREAMBLE, else a built-in one */
	size_t budget_default;           /* SMRITI_CONTEXT_BUDGET_CHARS */
	struct rt_budget *budgets;       /* SMRITI_CONTEXT_BUDGETS, then built-ins */
	size_t n_budgets;
	int64_t nudge_threshold;         /* SMRITI_NUDGE_TURNS, else 10 */
	struct draft_runner *drafts;     /* draft job workers (draft.h); NULL: run inline */
	struct chat_gens *gens;          /* replies being generated (generation.h) */
	struct lease *lease;             /* borrowed: a server's (lease.h), its work's owner; or NULL */
};

/*
 * The runtime configured from the environment (provider keys and base URLs
 * as documented in provider.h and docs/providers.md).  Also runs
 * the provider port's global set-up once.  Caller runtime_free()s.
 */
struct runtime *runtime_new_from_env(void);
void runtime_free(struct runtime *rt);

/* SMR_OK when ctx carries a runtime; else an error naming the missing wiring. */
enum smr_rc runtime_required(const struct ops_ctx *ctx, struct smr_err *err);

/* The provider handle called name, or NULL. Borrowed. */
struct provider *runtime_provider(const struct runtime *rt, const char *name);

/*
 * Context budget in characters for a model: the longest matching prefix of
 * SMRITI_CONTEXT_BUDGETS ("prefix=chars,..."), then of the built-in table,
 * else SMRITI_CONTEXT_BUDGET_CHARS (default 90000, about 24k tokens).
 */
size_t runtime_budget_for(const struct runtime *rt, const char *model);

/* Sessions.  Output structs are the caller's to release (domain/model.h). */
enum smr_rc chat_session_create(struct ops_ctx *ctx, const char *space, const char *title,
				struct session *out, struct smr_err *err);
/*
 * A new session of a Space with commit_hash (a full hash or unique prefix
 * of a Checkpoint of that Space) mounted from its first turn: the model sees
 * the Checkpoint and every turn of the session.  NULL: none mounted, as
 * chat_session_create.
 */
enum smr_rc chat_session_start(struct ops_ctx *ctx, const char *space, const char *title,
			       const char *commit_hash, struct session *out, struct smr_err *err);
enum smr_rc chat_session_list(struct ops_ctx *ctx, const char *space, struct session **out,
			      size_t *n, struct smr_err *err);
enum smr_rc chat_session_get(struct ops_ctx *ctx, const char *id, struct session *out,
			     struct turn **turns, size_t *n_turns, struct smr_err *err);
/*
 * Structural mount: a new session forked from session_id with commit_hash
 * (a full hash or unique prefix of a Checkpoint of the same Space) mounted.
 * title NULL keeps the old session's title.
 */
enum smr_rc chat_session_mount(struct ops_ctx *ctx, const char *session_id,
			       const char *commit_hash, const char *title, struct session *out,
			       struct smr_err *err);

/*
 * The Checkpoint ref (a full hash or unique prefix) names, which must belong
 * to Space sp; SMR_EUNPROC when it does not.  Caller releases out.
 */
enum smr_rc chat_space_checkpoint(struct ops_ctx *ctx, const struct space *sp, const char *ref,
				  struct checkpoint *out, struct smr_err *err);

/*
 * What a send does with a session's tree of turns (domain/thread.h):
 *  - send: a new question at the end of the path shown (leaf_seq), then its reply;
 *  - edit: a new question beside turn seq (a question; it stays), then its reply;
 *  - regenerate: a new reply to the question of turn seq (that question, or a
 *    reply to it), beside the replies it has;
 *  - continue: the model is given reply seq (joined with what it continues)
 *    as the start of its answer and goes on; the new text is stored as a
 *    turn after seq, which continues it.
 * Whichever it is, the new turns become the path shown, and the model gets
 * exactly that path: the turns from the first (or the boundary) to the
 * question, and for continue the reply so far.
 */
enum chat_action { CHAT_SEND, CHAT_EDIT, CHAT_REGENERATE, CHAT_CONTINUE };

struct chat_send_req {
	enum chat_action action;
	int64_t seq;                     /* edit, regenerate, continue: the turn acted on */
	const char *session_id;
	const char *message;             /* send, edit; NULL for regenerate and continue */
	const char *provider;            /* NULL: rt->default_provider */
	const char *model;               /* NULL: the provider's default model */
	const char *commit_hash;         /* v5.2 client boundary, or NULL */
	int has_base;                    /* history_base_seq given */
	long long history_base_seq;
};

/*
 * Sends one message and waits for the reply (generation.h's
 * chat_send_start, for callers that want the whole answer); see runtime.h's
 * header comment for the boundary and docs/providers.md for the result
 * document.  The user turn is stored before the provider is called.  The
 * reply is stored with its status (complete, truncated, stopped, or error /
 * interrupted with the text received).  When the provider failed before
 * any text came, the user turn keeps the error, the call returns
 * SMR_EPROVIDER or SMR_ETIMEOUT, and *result is still set to {generation,
 * user_turn, error, context}.  A send repeating a failed, unanswered last
 * user turn reuses it instead of adding another.  SMR_ECONFLICT while the
 * session has a reply running.  *result is a new reference whenever set
 * (caller json_decref()s).
 */
enum smr_rc chat_send(struct ops_ctx *ctx, struct runtime *rt, const struct chat_send_req *req,
		      json_t **result, struct smr_err *err);

/*
 * Shows the path through turn seq: the session's leaf_seq becomes the end
 * of the newest line from seq (thread_newest_end), which the next send
 * follows.  *out is the session after (caller releases).  SMR_EUNPROC when
 * the session has no turn seq; SMR_ECONFLICT while a reply runs.
 */
enum smr_rc chat_session_switch(struct ops_ctx *ctx, const char *session_id, int64_t seq,
				struct session *out, struct smr_err *err);

/*
 * A new session started from turn seq of session_id: the path shown up to
 * that turn is copied as its turns 1.. (the old session is untouched); it
 * keeps the mounted Checkpoint and records forked_from and fork_seq.
 * title NULL: the old session's title.  Caller releases out.
 */
enum smr_rc chat_session_fork(struct ops_ctx *ctx, const char *session_id, int64_t seq,
			      const char *title, struct session *out, struct smr_err *err);

/* The api table of the runtime ("session.create", ..., "chat.send"). */
extern const struct api_op chat_api_ops[];
/* providers.list and context.preview (preview.c): read-only, for the web UI. */
extern const struct api_op chat_view_ops[];

#endif
