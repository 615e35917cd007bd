/*
 * ops.h -- the operations layer: the one API that every transport calls.
 *
 * The CLI, the HTTP server and the MCP server each parse their input, call
 * one function here and render what it returns; none of them holds domain
 * logic.  This layer reads the clock and makes ids (so the domain below it
 * stays deterministic), resolves user references, and drives the store port.
 *
 * Outputs are owned by the caller: release structs with the functions of
 * domain/model.h.  Space arguments take a Space's name or id.
 */
#ifndef SMRITI_OPS_H
#define SMRITI_OPS_H

#include <stdint.h>

#include "domain/model.h"
#include "util/err.h"

struct ops_ctx;       /* one thread's way in; opaque outside src/ops (ops/context.h) */
struct runtime;       /* chat runtime of smriti-full (providers, jobs); opaque here */
struct principal;     /* who is calling (ops/auth.h) */
struct auth_keeper;   /* a server's watch on the auth state (ops/auth.h) */
struct ops_changes;   /* a process's watch on writes (ops/changes.h) */
struct review_pass;   /* a second review pass (ops/review_ingest.h) */

/*
 * What a program built at start-up and hands every context it opens; all
 * borrowed (they must outlive the context), all may be zero.  Nothing here
 * is global: a transport sets these when it opens a context, and nothing
 * inside it afterwards.
 */
struct ops_opts {
	struct runtime *rt;              /* the chat runtime (main, cmd_serve); NULL: none */
	struct auth_keeper *keeper;      /* a server's watch on the auth state, or NULL */
	struct ops_changes *changes;     /* its watch on writes (ops/changes.h): told of each, or NULL */
	/*
	 * Who a write names when its caller names nobody (ops_writer in
	 * ops/auth.h): the local user for the CLI, the server process's
	 * default, computed once at start-up, for a server; NULL: none
	 * (OPS_UNNAMED is recorded).
	 */
	const char *actor;
	void (*now)(char out[32]);       /* NULL: sys_now_iso (tests swap the clock) */
	void (*new_id)(char out[37]);    /* NULL: sys_uuid */
	/*
	 * 1: the context's writes are background work nobody waits on at the
	 * moment (a server's chat workers): they yield to other writes
	 * (store_set_background).
	 */
	int background;
};

/*
 * The one way to open Smriti: opens the store dsn names (running its
 * migrations) and a context over it with the clock, ids and passes this
 * binary was linked with and what opt (NULL: nothing) hands it.  One
 * context per thread that runs operations.  On failure *out is NULL and
 * nothing is left open.  Caller ops_close()s.
 */
enum smr_rc ops_open(struct ops_ctx **out, const char *dsn, const struct ops_opts *opt,
		     struct smr_err *err);
/* Closes what ops_open() opened and frees ctx; NULL is a no-op. */
void ops_close(struct ops_ctx *ctx);

/*
 * Names the caller of the calls that follow: who (borrowed until the next
 * ops_set_caller) as a transport authenticated it, or NULL for the
 * database's owner (local CLI, a loopback server without users: no
 * checks).  A transport that serves many callers on one context (the HTTP
 * server's threads) sets it before a request, clears it after and calls
 * ops_auth_stale() (ops/auth.h) so the next request reads its rights again.
 */
void ops_set_caller(struct ops_ctx *ctx, const struct principal *who);

/* The store backend's name ("sqlite", "postgres"); static storage. */
const char *ops_store_name(const struct ops_ctx *ctx);

/*
 * The store's data version (store_data_version): a number that moves when
 * any handle or process commits; *out 0 when the backend has none.
 */
enum smr_rc ops_data_version(struct ops_ctx *ctx, uint64_t *out, struct smr_err *err);

/* Spaces */
enum smr_rc ops_space_create(struct ops_ctx *ctx, const char *name, const char *description,
			     struct space *out, struct smr_err *err);
enum smr_rc ops_space_get(struct ops_ctx *ctx, const char *space, struct space *out,
			  struct smr_err *err);
enum smr_rc ops_space_list(struct ops_ctx *ctx, struct space **out, size_t *n,
			   struct smr_err *err);
/*
 * A page of ops_space_list, by name: the Spaces the caller may read whose
 * name sorts after after (NULL: from the first), at most limit (0: all).
 * A page shorter than limit is the last.
 */
enum smr_rc ops_space_page(struct ops_ctx *ctx, const char *after, size_t limit,
			   struct space **out, size_t *n, struct smr_err *err);
/* The Spaces the caller may read whose HEAD is one of hashes[0..n), by name. */
enum smr_rc ops_space_heads_at(struct ops_ctx *ctx, const char *const *hashes, size_t n,
			       struct space **out, size_t *nout, struct smr_err *err);
enum smr_rc ops_space_rename(struct ops_ctx *ctx, const char *space, const char *new_name,
			     struct space *out, struct smr_err *err);
enum smr_rc ops_space_delete(struct ops_ctx *ctx, const char *space, struct smr_err *err);

/* Validates a Space name: 1..100 characters, no control characters, no '~', '^' or '/'. */
enum smr_rc ops_check_space_name(const char *name, struct smr_err *err);

/*
 * Resolves a REF (hash, unique prefix, SPACE, SPACE~N, HASH~N, SPACE@{N},
 * SPACE@{DATE}; domain/ref.h) to its checkpoint.  SPACE@{...} also reads
 * the reflog of a deleted Space, so its checkpoints stay reachable until
 * `gc --prune`.
 */
enum smr_rc ops_resolve(struct ops_ctx *ctx, const char *ref, struct checkpoint *out,
			struct smr_err *err);
/*
 * ops_resolve() that may leave out with the hash and the Space's name only,
 * its content unread: where a REF points, for a caller that reads nothing
 * of it (an access check).
 */
enum smr_rc ops_resolve_where(struct ops_ctx *ctx, const char *ref, struct checkpoint *out,
			      struct smr_err *err);
/* ops_resolve() where a bare @{...} means space's (NULL: an error). */
enum smr_rc ops_resolve_in(struct ops_ctx *ctx, const char *space, const char *ref,
			   struct checkpoint *out, struct smr_err *err);

/*
 * ops_resolve() for a ref that must be a checkpoint hash or prefix: 4 to 64
 * hex digits in any case, else SMR_EINVAL.  The one hash check of every
 * transport (HTTP's /v4/commits/{hash}, MCP's smriti://checkpoints/{hash}).
 */
enum smr_rc ops_resolve_hash(struct ops_ctx *ctx, const char *hash, struct checkpoint *out,
			     struct smr_err *err);

/*
 * The HEAD checkpoint of a Space as the "head" operation's document (new
 * reference, shared: do not modify it), with "handoff" (ops_handoff_json)
 * when a person left a hand-off note on the Space: its newest, on_head false
 * once HEAD moved past the checkpoint it was left on.  A context from ops_open() keeps
 * the last one it read with the store's data version (store_data_version)
 * and hands it out again while that version has not moved, so an unchanged
 * HEAD is neither read nor rebuilt; any write committed before the call,
 * by any handle or process, is seen.  Where the version moved (or the
 * store has none, as PostgreSQL) HEAD is read again, and the same document
 * is handed out when it is the same checkpoint under the same name, so a
 * transport that keeps what it rendered for a document (the HTTP server)
 * renders it once.
 */
enum smr_rc ops_head_doc(struct ops_ctx *ctx, const char *space, json_t **out,
			 struct smr_err *err);
/*
 * Hand-off notes (ops_handoff.c).  ops_handoff leaves note (1 to
 * OPS_HANDOFF_NOTE_MAX bytes, not blank) for the next agent on a Space: on
 * HEAD (ref NULL, or ref naming HEAD, else SMR_ECONFLICT: HEAD moved), or
 * with restore on ref restored onto HEAD first (one call; the restore stays
 * if writing the note then fails).  The author is ops_author()'s rule, else
 * the actor.  *result (new reference): {"handoff": ops_handoff_json,
 * "checkpoint": the one it was left on, "restored": bool}.
 */
#define OPS_HANDOFF_NOTE_MAX 8192
enum smr_rc ops_handoff(struct ops_ctx *ctx, const char *space, const char *ref,
			const char *note, int restore, const char *author, json_t **result,
			struct smr_err *err);
/* The newest hand-off of the live Space named space_name (out->id 0: none). */
enum smr_rc ops_handoff_latest(struct ops_ctx *ctx, const char *space_name,
			       struct handoff *out, struct smr_err *err);
/*
 * {note, checkpoint, author, created_at, on_head}: on_head says whether it
 * was left on head_hash (the HEAD the reader sees; NULL: none).  New reference.
 */
json_t *ops_handoff_json(const struct handoff *h, const char *head_hash);
/*
 * The hand-off text an agent starts from on a Space: a short lead-in, then
 * HEAD with its newest hand-off note in the one checkpoint Markdown
 * (domain/markdown.h), the note first.  *result (new reference):
 * {"space", "commit_hash", "text"}.  SMR_ENOTFOUND for a Space the caller
 * cannot read or one without checkpoints, as for "head".
 */
enum smr_rc ops_handoff_text(struct ops_ctx *ctx, const char *space, json_t **result,
			     struct smr_err *err);

/*
 * The soft-deleted Spaces the caller could read, newest deletion first:
 * [{name (the name it had), id, deleted_at, head}].  New reference in *out.
 */
enum smr_rc ops_space_list_deleted(struct ops_ctx *ctx, json_t **out, struct smr_err *err);

/*
 * The HEAD checkpoint of a Space; SMR_ENOTFOUND while the Space is empty.
 * out's JSON fields are read-only (shared with the store, see
 * store_head_get); checkpoint_release(out).
 */
enum smr_rc ops_head(struct ops_ctx *ctx, const char *space, struct checkpoint *out,
		     struct smr_err *err);

/*
 * Writes a checkpoint of fields (validated by checkpoint_from_json) into a
 * Space.  With parent NULL it goes on top of whatever HEAD is when it is
 * written; with parent given (a full hash or unique prefix) HEAD must still
 * be that checkpoint, else SMR_ECONFLICT naming the current HEAD and nothing
 * is written.  author may be NULL ("").  out gets the stored checkpoint.
 */
enum smr_rc ops_checkpoint_create(struct ops_ctx *ctx, const char *space, const json_t *fields,
				  const char *parent, const char *author,
				  struct checkpoint *out, struct smr_err *err);

/*
 * Writes the next checkpoint of a Space as a patch on its parent
 * (domain/patch.h: add, drop, done, reopen, title, summary, metadata).
 * With parent NULL the patch is applied to whatever HEAD is, read and
 * written in one transaction, so concurrent patches all land; with parent
 * given it is a compare-and-swap like ops_checkpoint_create.  A bad patch
 * writes nothing.  out gets the stored checkpoint, *changes (may be NULL)
 * a new reference counting what changed.
 */
enum smr_rc ops_checkpoint_update(struct ops_ctx *ctx, const char *space, const json_t *patch,
				  const char *parent, const char *author,
				  struct checkpoint *out, json_t **changes, struct smr_err *err);

/*
 * Makes the patch for base (the checkpoint it is applied to; NULL: an empty
 * Space) into *patch, a new reference.  May run more than once for one
 * write (each time HEAD is read again).
 */
typedef enum smr_rc (*ops_patch_fn)(const struct checkpoint *base, void *arg, json_t **patch,
				    struct smr_err *err);

/*
 * ops_checkpoint_update() with a patch made from the parent it lands on,
 * for a change that depends on what HEAD holds when it is written (a saved
 * draft: items HEAD has are not added again).
 */
enum smr_rc ops_checkpoint_update_with(struct ops_ctx *ctx, const char *space,
				       ops_patch_fn make, void *arg, const char *parent,
				       const char *author, struct checkpoint *out,
				       json_t **changes, struct smr_err *err);

/* What a merge is asked to do; every member borrowed. */
struct merge_req {
	const char *space;          /* the Space whose HEAD receives the merge */
	const char *ref;            /* what to merge in */
	const json_t *resolution;   /* NULL, or how conflicts are settled (domain/merge.h) */
	const char *author;         /* as the caller claimed, or NULL (ops/auth.h's ops_writer) */
	const char *title;          /* the merge checkpoint's title, or NULL: "Merge REF into
				       SPACE" (domain/merge.h: titles are never merged) */
	const char *expect_head;    /* NULL, or the HEAD the caller saw ("" for none): another
				       is SMR_ECONFLICT, nothing written */
	int dry_run;                /* compute the result, write nothing */
};

/*
 * Merges req->ref (a checkpoint of this Space's history or of one that
 * shares it, e.g. a fork) into the Space's HEAD.  *result (a new reference,
 * set on success and on a conflict of content) is {"status": "merged" |
 * "fast-forward" | "up-to-date", "checkpoint", "base"?, "contradictions"?}
 * or, with SMR_ECONFLICT, {"status": "conflict", "base", "conflicts"}
 * (domain/merge.h) and nothing written.  A title that is empty or blank is
 * SMR_EINVAL; a fast-forward writes no checkpoint, so it has no title.
 *
 * With dry_run nothing is written and conflicts are no error: *result is
 * the same document (status "conflict" with the conflicts; for "merged"
 * the would-be state, unsealed; for both the merge's "title"), plus "dry_run": true,
 * "ahead" (REF's checkpoints HEAD lacks) and "behind" (HEAD's that REF
 * lacks).
 */
enum smr_rc ops_merge(struct ops_ctx *ctx, const struct merge_req *req, json_t **result,
		      struct smr_err *err);

/*
 * The merge base of two checkpoints (their nearest common ancestor, as a
 * merge picks it): *out is {a, b, base: hash or null when they share no
 * history}; new reference.  Reads only.
 */
enum smr_rc ops_merge_base(struct ops_ctx *ctx, const char *ref_a, const char *ref_b,
			   json_t **out, struct smr_err *err);

/*
 * Ancestry of ref, newest first, every checkpoint before its parents: all
 * ancestors through both parents of merges, or with first_parent only the
 * first-parent chain.  limit 0 means all.
 */
enum smr_rc ops_log(struct ops_ctx *ctx, const char *ref, size_t limit, int first_parent,
		    struct checkpoint **out, size_t *n, struct smr_err *err);

/*
 * The checkpoints of a Space from HEAD back, newest first; none while it is
 * empty.  space is looked up as a Space only, so a name that looks like a
 * hash still means the Space.
 */
enum smr_rc ops_space_log(struct ops_ctx *ctx, const char *space, size_t limit,
			  int first_parent, struct checkpoint **out, size_t *n,
			  struct smr_err *err);

/* Field-by-field difference; *out is a new reference (see domain/diff.h). */
enum smr_rc ops_diff(struct ops_ctx *ctx, const char *ref_a, const char *ref_b, json_t **out,
		     struct smr_err *err);

/* A new checkpoint on top of the Space's HEAD carrying ref's state. */
enum smr_rc ops_restore(struct ops_ctx *ctx, const char *space, const char *ref,
			const char *author, struct checkpoint *out, struct smr_err *err);

/*
 * ops_restore() only if HEAD is still parent (NULL: whatever HEAD is): the
 * write is a compare-and-swap on HEAD, as a checkpoint's --parent is, so
 * undoing a restore cannot silently drop what another writer added since
 * (SMR_ECONFLICT, naming HEAD).
 */
enum smr_rc ops_restore_on(struct ops_ctx *ctx, const char *space, const char *ref,
			   const char *parent, const char *author, struct checkpoint *out,
			   struct smr_err *err);

/* A new Space whose HEAD is ref, sharing ref's ancestry and hashes. */
enum smr_rc ops_fork(struct ops_ctx *ctx, const char *ref, const char *new_space,
		     struct space *out, struct smr_err *err);

/*
 * Recomputes every hash and parent link of one Space (or all when space is
 * NULL).  *report is a new reference: {"ok", "spaces", "checkpoints",
 * "problems": [{"space", "commit_hash", "problem"}]}.  Damage is not an
 * error of the call; it is in the report.
 */
enum smr_rc ops_fsck(struct ops_ctx *ctx, const char *space, json_t **report,
		     struct smr_err *err);

/*
 * The reflog of a Space (live, or deleted and not yet pruned: by its old
 * name or id), newest first; limit 0 means all.  Caller
 * reflog_entries_free()s.
 */
enum smr_rc ops_reflog(struct ops_ctx *ctx, const char *space, size_t limit,
		       struct reflog_entry **out, size_t *n, struct smr_err *err);
/* [{index, space_id, space, old, new, action, actor, reason, created_at}]; new reference. */
json_t *ops_reflog_json(const struct reflog_entry *v, size_t n);

/*
 * Garbage collection: lists the soft-deleted Spaces (deleted at or before
 * `before`, a DATE of domain/ref.h; NULL: all) and with prune removes them
 * for good, expires the reflog entries older than `expire` (a DATE, or
 * "never"; NULL: OPS_REFLOG_EXPIRE, git's gc.reflogExpire) and removes
 * what nothing reaches any more.  expire without prune is SMR_EUSAGE.
 * *report is a new reference: {"deleted": [{name, id, deleted_at, head}],
 * "pruned": bool, "pruned_spaces": N, and with prune "expired_reflog",
 * "unreached_checkpoints", "unused_chunks", "unused_items": N}.
 */
#define OPS_REFLOG_EXPIRE "90 days ago"
enum smr_rc ops_gc(struct ops_ctx *ctx, int prune, const char *before, const char *expire,
		   json_t **report, struct smr_err *err);

/* How many results a search answers at the most (search_params.limit). */
#define SEARCH_LIMIT_MAX 200

/* What to search for (ops_search). */
struct search_params {
	const char *query;            /* words, "phrases", word* (domain/search.h) */
	const char *const *spaces;    /* names or ids; NULL: every live Space (a caller's
					 access filter goes here) */
	size_t n_spaces;
	const char *field;            /* NULL, or one field ("turn" for turns) */
	const char *author;           /* NULL, or who wrote the checkpoint (a turn's role) */
	const char *since;            /* NULL, or a DATE of domain/ref.h */
	const char *until;            /* NULL, or a DATE: what was written at or before it */
	int turns;                    /* 1: chat turns too */
	size_t limit;                 /* 0: 20; at most SEARCH_LIMIT_MAX */
};

/*
 * Full-text search over what each checkpoint introduced (and turns with
 * p->turns).  *out is a new reference: {"query", "total", "truncated",
 * "results": [{space, kind: "checkpoint"|"turn", field, snippet,
 * highlights: [[start, end]...] (bytes of snippet), score, author,
 * created_at, text, and for a checkpoint's item commit_hash (its newest
 * copy), ordinal, in_head (HEAD still holds it), first: {commit_hash,
 * author, created_at} (where it first appeared); for a turn session_id and
 * seq}]}, best first; the same on every backend for the same data.
 */
enum smr_rc ops_search(struct ops_ctx *ctx, const struct search_params *p, json_t **out,
		       struct smr_err *err);

/*
 * Blame: for every item of ref's checkpoint (title, summary, each list item,
 * entity and artifact), the checkpoint that introduced it, followed back
 * through first parents, merges' second parents and restores.  *out is a
 * new reference: {"commit_hash", "space", "items": [{field, ordinal, text,
 * here (introduced by this very checkpoint), introduced: {commit_hash,
 * title, author, created_at, source}}]}
 * where source is {session_id, first_seq, last_seq} for a drafted
 * checkpoint, else null.
 */
enum smr_rc ops_blame(struct ops_ctx *ctx, const char *ref, json_t **out, struct smr_err *err);

/*
 * The bundle of the Spaces named in spaces[0..n) (NULL: every live Space),
 * domain/bundle.h's document; *bundle is a new reference.
 */
enum smr_rc ops_export(struct ops_ctx *ctx, const char *const *spaces, size_t n,
		       json_t **bundle, struct smr_err *err);
/* ops_export() as the bundle's compact text (caller frees *text), written as it is read. */
enum smr_rc ops_export_text(struct ops_ctx *ctx, const char *const *spaces, size_t n,
			    char **text, size_t *len, struct smr_err *err);
/*
 * Imports a bundle: all or nothing, after checking it whole (sha256, every
 * checkpoint's hash, parents); idempotent.  *report is a new reference:
 * {"spaces": [{name, created, checkpoints, sessions, turns, reflog, head}],
 * "checkpoints": N added}.
 */
enum smr_rc ops_import(struct ops_ctx *ctx, const json_t *doc, json_t **report,
		       struct smr_err *err);
/* ops_import() of the bundle's text[0..len), read as it is walked (domain/bundle.h). */
enum smr_rc ops_import_text(struct ops_ctx *ctx, const char *text, size_t len,
			    json_t **report, struct smr_err *err);

/* Where and how ops_git_export() writes; all zero: smriti/SPACE, refusing a foreign tip. */
struct ops_git_opts {
	const char *branch;   /* the branch (without refs/heads/); NULL: smriti/SPACE */
	int force;            /* move the branch even when no export wrote its tip */
};

/*
 * Writes the one Space of bundle (ops_export's document) into the git
 * repository dir (a new or empty dir becomes a bare one, HEAD on the
 * branch) with git fast-import: a commit per checkpoint, merges as merge
 * commits, the branch at HEAD; checkpoints exported before, by any Space,
 * are skipped.  Moves only the branch, and only from a commit an export
 * wrote (else SMR_ECONFLICT unless opt->force); never a branch checked out
 * in a work tree (SMR_ECONFLICT); never HEAD, the index or a work tree.
 * SMR_EUSAGE for a branch name git refuses.  *report is a new reference:
 * {space, dir, branch, added: commits written now, commits: the Space's
 * checkpoints}.  Needs git on PATH.
 */
enum smr_rc ops_git_export(const json_t *bundle, const char *dir,
			   const struct ops_git_opts *opt, json_t **report, struct smr_err *err);

/* JSON renderings shared by every transport; new references. */
json_t *ops_space_json(const struct space *sp);
/* space_name may be NULL (rendered as null). */
json_t *ops_session_json(const struct session *s, const char *space_name);
json_t *ops_turn_json(const struct turn *t);
json_t *ops_generation_json(const struct generation *g);

#endif
