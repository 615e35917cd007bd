/*
 * model.h -- the plain structs of Smriti's data model, shared by every layer.
 *
 * User-facing words map onto these names: a Space is a repo, a Checkpoint is
 * a commit (docs/architecture.md).  Strings are owned by the struct (free with the
 * matching *_release); json_t members hold one reference each.
 */
#ifndef SMRITI_MODEL_H
#define SMRITI_MODEL_H

#include <jansson.h>
#include <stdint.h>

#define HASH_HEX_LEN 64

/* Roles on a Space, in order: each allows what the one before it does. */
enum role { ROLE_NONE = 0, ROLE_READER = 1, ROLE_WRITER = 2, ROLE_OWNER = 3 };

struct space {
	char *id;            /* uuid */
	char *name;
	char *description;
	char *created_at;
	char *head;          /* hash of HEAD, NULL while the Space is empty */
	char *deleted_at;    /* NULL unless soft-deleted (kept until `gc --prune`) */
};

struct item_texts;

struct checkpoint {
	char *hash;              /* commit_hash: hex SHA-256 of the canonical form */
	char *parent_hash;       /* NULL for a root checkpoint */
	char *merge_parent_hash; /* NULL unless it merges a second line */
	char *space;             /* name of the Space holding it; not hashed */
	char *title;
	char *summary;
	json_t *decisions;       /* [{text, ...}] */
	json_t *assumptions;     /* [{text, ...}] */
	json_t *tasks;           /* [{text, status: open|done, ...}] */
	json_t *open_questions;  /* [{text, ...}] */
	json_t *entities;        /* [{name, kind?, description?}] */
	json_t *artifacts;       /* [{name, kind, content}] */
	json_t *metadata;        /* {} */
	char *author;
	char *created_at;
	/* the items' JSON texts (item_texts.h) since it was sealed, or NULL: not content */
	struct item_texts *texts;
};

/*
 * A checkpoint's six lists (checkpoint_list_fields' order) and its metadata
 * as the compact JSON text a store writes for them, when it is at hand
 * already (a bundle's reader has it): json[i] is len[i] bytes, not
 * NUL-terminated, borrowed from whoever made it.
 */
#define CHECKPOINT_TEXT_COLS 7
struct checkpoint_text {
	const char *json[CHECKPOINT_TEXT_COLS];
	size_t len[CHECKPOINT_TEXT_COLS];
};

struct session {
	char *id;
	char *repo_id;
	char *title;
	char *mounted_hash;          /* mounted Checkpoint, NULL if none */
	char *forked_from;           /* session this one was forked from on mount */
	int64_t history_base_seq;    /* structural boundary; -1 when none */
	char *created_at;
	int64_t last_seq;            /* highest sequence_number, 0 with no turns (read-only) */
	int64_t leaf_seq;            /* the turn the path shown ends at; 0: the newest turn */
	int64_t fork_seq;            /* started from forked_from's turn fork_seq (its path
	                                copied as turns 1..); 0 when not */
};

struct turn {
	int64_t id;
	char *session_id;
	int64_t seq;                 /* sequence_number, from 1, gap-free per session */
	char *role;                  /* user | assistant */
	char *content;
	char *provider;
	char *model;
	int64_t prompt_tokens;       /* -1 when unknown */
	int64_t completion_tokens;   /* -1 when unknown */
	int64_t latency_ms;          /* -1 when unknown */
	char *error;                 /* a provider failure: on a user turn, or a partial reply's */
	char *status;                /* how the turn ended (TURN_*); NULL reads as "complete" */
	char *created_at;
	char *author;                /* who wrote a user turn ("alice", "alice/agent"), or NULL */
	/*
	 * The turn this one follows on its path (0: none, the first).  Without
	 * has_parent it is the turn before it (seq - 1): a linear session stores
	 * no parents.  Edits and regenerated replies are siblings (the same
	 * parent); an assistant turn whose parent is an assistant turn continues
	 * it (domain/thread.h).
	 */
	int has_parent;
	int64_t parent_seq;
};

/*
 * One move of a Space's HEAD, as the reflog keeps it (append-only): what
 * HEAD was and became (NULL: empty, or the Space deleted), which kind of
 * move ("create", "commit", "restore", "merge", "fork", "rename",
 * "delete"), who made it and why.
 */
struct reflog_entry {
	int64_t id;                  /* increases with every move */
	char *space_id;
	char *space_name;            /* the Space's name when the move happened */
	char *old_hash;
	char *new_hash;
	char *action;
	char *actor;
	char *reason;
	char *created_at;
};

/*
 * A hand-off: a note a person left for the next agent on a Space, pointing
 * at the checkpoint HEAD was when it was left.  Not part of any checkpoint
 * (their hashes never change); HEAD reads show the newest one.
 */
struct handoff {
	int64_t id;                  /* 0: none; increases with every hand-off */
	char *space_id;
	char *hash;                  /* the checkpoint it was left on */
	char *note;
	char *author;
	char *created_at;
};

/*
 * How a turn ended.  A user turn is always complete (a failed send records
 * its error on it); an assistant turn is complete, or holds the text that
 * arrived before the person stopped it, the provider failed (error names
 * why), or the token limit cut it.  interrupted is a generation's status
 * only: the server stopped while the reply ran, and no reply was stored.
 */
#define TURN_COMPLETE "complete"
#define TURN_STOPPED "stopped"
#define TURN_ERROR "error"
#define TURN_INTERRUPTED "interrupted"
#define TURN_TRUNCATED "truncated"

/*
 * A generation: one send's reply being produced.  It belongs to its session
 * (one running per session at a time), outlives the connection that asked
 * for it, and ends with the status of the assistant turn it stored (or
 * "interrupted" when the server stopped under it).
 */
struct generation {
	char *id;                    /* uuid */
	char *session_id;
	char *status;                /* "running", then a TURN_* status */
	char *provider;
	char *model;
	int64_t user_seq;            /* the user turn it answers; -1 before it is stored */
	int64_t assistant_seq;       /* the reply stored; -1 when none */
	char *error;                 /* why it failed or was interrupted, or NULL */
	char *created_at;
	char *finished_at;           /* NULL while running */
	char *owner;                 /* the servers row (lease) running it, or NULL */
};

enum job_status { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_FAILED };

struct draft_job {
	char *id;
	char *session_id;
	enum job_status status;
	char *provider;
	char *model;
	char *result;                /* JSON text of the proposed checkpoint when done */
	char *error;
	char *created_at;
	char *started_at;
	char *finished_at;
	char *owner;                 /* the servers row (lease) whose runner has it, or NULL */
};

void space_release(struct space *sp);
void checkpoint_init(struct checkpoint *c);     /* empty lists, {} metadata */
void checkpoint_release(struct checkpoint *c);
void session_release(struct session *s);
void turn_release(struct turn *t);
void draft_job_release(struct draft_job *j);
void reflog_entry_release(struct reflog_entry *e);
void generation_release(struct generation *g);
void handoff_release(struct handoff *h);

/* Free arrays of n structs returned by the store, contents and array. */
void spaces_free(struct space *v, size_t n);
void checkpoints_free(struct checkpoint *v, size_t n);
void sessions_free(struct session *v, size_t n);
void turns_free(struct turn *v, size_t n);
void reflog_entries_free(struct reflog_entry *v, size_t n);

const char *job_status_name(enum job_status s);
int job_status_parse(const char *s, enum job_status *out);

#endif
