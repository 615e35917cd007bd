/*
 * store.h -- the storage port: the functions the operations layer calls to
 * read and write Spaces, Checkpoints, sessions, turns and draft jobs.
 *
 * Like git's refs_*() over ref_storage_be, these functions are the only way
 * in; the backends (sqlite.c, full/postgres.c) and their ops table are
 * private to src/store (store/store_int.h).  Every function is one
 * transaction: it either happens whole or not at all.  Output structs and
 * arrays are owned by the caller (release with the functions of
 * domain/model.h).  A handle is used by one thread at a time; a server
 * opens one per worker (or pools them).
 *
 * Contracts every backend meets (tests/unit/test_store_conformance.c):
 *  - every move of a Space's HEAD (commit, restore, merge, fork, rename,
 *    delete) writes its reflog row in the transaction of the move.
 *  - store_checkpoint_put is a compare-and-swap on the Space's HEAD: it
 *    succeeds only while HEAD equals expected_head (NULL: the Space is
 *    empty), else SMR_ECONFLICT naming the current HEAD, and nothing is
 *    written.  A write that names no parent (store_checkpoint_put_on_head,
 *    store_checkpoint_update) takes the HEAD it locks and is never refused
 *    for a race.
 *  - store_turn_append assigns sequence_number = last + 1 inside its
 *    transaction; numbers are unique and gap-free per session under
 *    concurrent writers.
 *  - an SMR_OK return means the write is durable (fsync'd / committed).
 */
#ifndef SMRITI_STORE_H
#define SMRITI_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "domain/model.h"
#include "util/err.h"

struct store;   /* one backend's handle; opaque outside src/store */

/* Called once per checkpoint by store_checkpoint_scan; nonzero return stops the scan. */
typedef int (*store_scan_fn)(const struct checkpoint *c, int parent_missing, void *ctx);

/* Opens the backend of this binary that handles dsn.  Caller store_close()s. */
enum smr_rc store_open(const char *dsn, struct store **out, struct smr_err *err);
/* NULL is a no-op. */
void store_close(struct store *st);

/* The backend's name ("sqlite", "postgres"); static storage. */
const char *store_name(const struct store *st);
/*
 * 1 when several servers may share the database (PostgreSQL): state a
 * server leaves behind may belong to another live server.  0 for an
 * embedded file that one server owns (SQLite).
 */
int store_is_shared(const struct store *st);

/*
 * Marks st's writes as background work, which nobody waits on at the
 * moment (starting chat sends behind a burst of them): where handles share
 * a commit group (SQLite, store/group.c), such a write leads a transaction
 * only when no foreground write waits.  A handle starts foreground.
 */
void store_set_background(struct store *st, int on);

/*
 * Who moves a Space's HEAD, when and why: what the reflog row of the move
 * records.  NULL actor or reason is recorded as "".  at is the time (ISO).
 */
struct ref_move {
	const char *actor;
	const char *reason;
	const char *at;
	/*
	 * Creating or forking a Space: the person (user id) made its owner in
	 * the same transaction, with the auth epoch moved (store/auth.h), so a
	 * Space never exists without the owner it was made for; NULL: none.
	 */
	const char *owner;
};

/*
 * Spaces.  Lookups take a Space's id or its name and see live Spaces only.
 * Every write below records its move in the reflog in the same
 * transaction.
 */
enum smr_rc store_space_create(struct store *st, const struct space *sp,
			       const struct ref_move *mv, struct smr_err *err);
enum smr_rc store_space_get(struct store *st, const char *id_or_name, struct space *out,
			    struct smr_err *err);
enum smr_rc store_space_list(struct store *st, struct space **out, size_t *n,
			     struct smr_err *err);
/* The live Spaces whose HEAD is one of hashes[0..n), by name (*out: caller frees each and it). */
enum smr_rc store_space_heads_at(struct store *st, const char *const *hashes, size_t n,
				 struct space **out, size_t *nout, struct smr_err *err);
/* Live Spaces by name, those after the name after (NULL: from the first), at most limit (0: all). */
enum smr_rc store_space_page(struct store *st, const char *after, size_t limit,
			     struct space **out, size_t *n, struct smr_err *err);
/*
 * What the overview shows of a Space beyond its row: its HEAD's hash,
 * title, author and time (NULL: no HEAD), its sessions, the newest of their
 * creation times and the newest of their last turns' times (NULL: none).
 */
struct space_summary {
	struct space sp;              /* as store_space_page lists it; sp.head its HEAD */
	char *head_title, *head_author, *head_at;
	char *newest_session_at, *newest_turn_at;
	int64_t sessions;
};
/*
 * Every live Space and its summary, in one statement (the overview read a
 * Space's HEAD, its sessions and each one's last turn, statement by
 * statement, and the list of Spaces in another).  Caller
 * space_summaries_free()s *out.
 */
enum smr_rc store_space_summaries(struct store *st, struct space_summary **out, size_t *n,
				  struct smr_err *err);
void space_summaries_free(struct space_summary *v, size_t n);
enum smr_rc store_space_rename(struct store *st, const char *id, const char *new_name,
			       const struct ref_move *mv, struct smr_err *err);
/*
 * Soft delete: the Space leaves every lookup and list, and its name is
 * free again; its rows stay (reachable through store_space_find and the
 * reflog) until store_gc_prune.
 */
enum smr_rc store_space_delete(struct store *st, const char *id, const struct ref_move *mv,
			       struct smr_err *err);
/*
 * Creates new_space with HEAD = hash, which src_space_id must reach: the
 * history is shared (docs/storage.md), so this writes the Space, its ref
 * and its reflog row (and the owner's grant), nothing that grows with
 * the history.
 */
enum smr_rc store_space_fork(struct store *st, const struct space *new_space,
			     const char *src_space_id, const char *hash,
			     const struct ref_move *mv, struct smr_err *err);
/*
 * A Space live or deleted: a live one by id or name, else a deleted one by
 * id, else the most recently deleted Space that had that name.
 */
enum smr_rc store_space_find(struct store *st, const char *id_or_name, struct space *out,
			     struct smr_err *err);
/* Soft-deleted Spaces, oldest deletion first; caller spaces_free()s. */
enum smr_rc store_space_list_deleted(struct store *st, struct space **out, size_t *n,
				     struct smr_err *err);
/* What store_gc_prune removed. */
struct gc_counts {
	size_t spaces;                     /* deleted Spaces pruned */
	size_t reflog;                     /* reflog entries expired */
	size_t unreached;                  /* checkpoints only those entries reached */
	size_t chunks, items;              /* content no checkpoint names any more */
};

/*
 * Removes for good the Spaces deleted at or before `before` (NULL: all),
 * with their sessions, turns and reflog, and the checkpoints they wrote
 * that no surviving Space reaches (its ref, its reflog, or a checkpoint it
 * wrote), with their search rows; a checkpoint a surviving Space reaches
 * stays, that Space its origin now.  Expires the reflog entries written
 * before `expire` (NULL: none), never a Space's newest, and removes the
 * checkpoints only they reached (none a ref, a remaining entry, a
 * session's mount or a hand-off note reaches).  Then the items and chunks
 * no checkpoint names go.  One transaction.
 */
enum smr_rc store_gc_prune(struct store *st, const char *before, const char *expire,
			   struct gc_counts *n, struct smr_err *err);

/*
 * The reflog of a Space (live or deleted), newest first: the entries at or
 * before `before` (NULL: all), at most limit of them (0: all).  Caller
 * reflog_entries_free()s.
 */
enum smr_rc store_reflog_list(struct store *st, const char *space_id, const char *before,
			      size_t limit, struct reflog_entry **out, size_t *n,
			      struct smr_err *err);

/*
 * Hand-off notes (struct handoff): append h (its id is ignored) to the
 * Space h->space_id, a live Space; and the newest one of the live Space
 * named space (by name: what a HEAD read has), out->id 0 when none.  Caller handoff_release()s out.
 */
enum smr_rc store_handoff_put(struct store *st, const struct handoff *h, struct smr_err *err);
enum smr_rc store_handoff_latest(struct store *st, const char *space, struct handoff *out,
				 struct smr_err *err);

/*
 * The search index.  It holds what each checkpoint introduced (an item
 * whose words its first parent does not have in that field), written with
 * the checkpoint, and every turn, written with the turn.  Words are
 * util/terms.h's.
 */
struct search_item {
	const char *field;    /* "title", "summary", "decisions", ..., "artifacts" (static) */
	size_t ordinal;       /* its index in that list; 0 for title and summary */
	char *text;           /* owned */
};
/* The searchable items of c, in field order; caller store_search_items_free()s. */
size_t store_search_items(const struct checkpoint *c, struct search_item **out);
void store_search_items_free(struct search_item *v, size_t n);

struct search_word {
	const char *word;     /* one word as util/terms.h folds it */
	int prefix;           /* 1: any word starting with it */
};

/*
 * The FTS5 MATCH expression the SQLite backend runs for words[0..n): each
 * word quoted (words have no quotes: see util/terms.h), '*' after a
 * prefix, all joined by AND, so no text of the user's reaches FTS5's query
 * syntax.  Public for the search fuzz target, which runs it against a real
 * FTS5 table.  Caller frees.
 */
char *store_fts5_query(const struct search_word *words, size_t n);

struct search_filter {
	const struct search_word *words;   /* every one must match */
	size_t n_words;
	const char *const *space_ids;      /* only these Spaces; NULL: every live Space */
	size_t n_spaces;
	const char *field;                 /* NULL: any field ("turn" for turns) */
	const char *author;                /* NULL: anyone (a turn's author is its role) */
	const char *since;                 /* NULL: any time; else created_at >= since */
	const char *until;                 /* NULL: any time; else created_at <= until */
	int turns;                         /* 1: chat turns as well as checkpoints */
	size_t limit;                      /* at most this many rows, indexed last first */
};

/* A live Space that holds found checkpoints, once however many of them it holds. */
struct search_space {
	char *id, *name;
};

/*
 * One matching item: of a checkpoint, found once however many Spaces hold
 * it (the history is shared), with the Spaces of the filter that hold it;
 * or a chat turn of one Space.
 */
struct search_row {
	/* the texts point into texts, which the row owns (search_row_texts) */
	const char *space_id;
	const char *space_name;
	const char *commit_hash;    /* NULL for a turn */
	const char *session_id;     /* a turn's session, else NULL */
	int64_t seq;                /* a turn's sequence number, else 0 */
	const char *field;          /* static: store_field_name's */
	int64_t ordinal;
	const char *words;          /* the indexed words */
	const char *author;
	const char *created_at;
	const char *text;           /* a turn's content; NULL for a checkpoint's item */
	char *texts;
	int64_t commit_id;    /* the checkpoint's row and chain (store/sql.h); 0 for a turn */
	int64_t chain;
	/*
	 * A checkpoint's item: space_id is the Space that wrote the checkpoint
	 * (live or not), space_name NULL; holders index search_found.spaces,
	 * by name, at least one once read (NULL until then: see
	 * store_search_holders).  A turn: its Space, and no holders.
	 */
	size_t *holders;
	size_t n_holders;
};

/* What store_search found: its rows, and the Spaces they name. */
struct search_found {
	struct search_row *rows;
	size_t n;
	struct search_space *spaces;
	size_t n_spaces;
};

/*
 * Rows whose words match f, those indexed last first (for a history
 * written here, newest first; an import indexes older checkpoints late),
 * at most f->limit of them, each held by a live Space of f; caller
 * search_found_release()s *out.  With a Space filter every row's holders
 * are read; without one, maybe none are yet: a Space holds every
 * checkpoint it wrote, so a row whose origin is live is kept unread, and
 * store_search_holders reads those of the rows a caller shows.
 */
enum smr_rc store_search(struct store *st, const struct search_filter *f,
			 struct search_found *out, struct smr_err *err);
/* Reads the holders of rows idx[0..n) of fd that have none yet (the live Spaces holding them). */
enum smr_rc store_search_holders(struct store *st, struct search_found *fd, const size_t *idx,
				 size_t n, struct smr_err *err);
void search_found_release(struct search_found *f);
/* Frees the rows a backend's search returned. */
void search_rows_free(struct search_row *v, size_t n);

/*
 * The texts of a backend's search row, in this order (NULL: none), copied
 * into one block that r owns: a search reads thousands of rows, and a
 * block each was a fifth of its time where a copy each text was.
 */
enum search_row_text {
	SEARCH_SPACE_ID, SEARCH_SPACE_NAME, SEARCH_COMMIT_HASH, SEARCH_SESSION_ID, SEARCH_WORDS,
	SEARCH_AUTHOR, SEARCH_CREATED_AT, SEARCH_TEXT, SEARCH_TEXTS
};
void search_row_texts(struct search_row *r, const char *const text[SEARCH_TEXTS],
		      const size_t len[SEARCH_TEXTS]);

/*
 * The rows one import adds to one Space, as the operations planned them
 * from a bundle (see ops_import): only what the store does not hold yet.
 */
struct import_space {
	const struct space *space;                 /* id, name, description, created_at */
	int create;                                /* 1: the Space is new */
	const struct checkpoint *const *commits;   /* new checkpoints, parents first */
	const struct checkpoint *const *parents;   /* first parent of each (search index), or NULL */
	const struct checkpoint_text *const *texts;   /* each one's JSON text (or NULL), or NULL */
	size_t n_commits;
	const char *head;                          /* where HEAD goes; NULL: it stays */
	const struct ref_move *move;               /* HEAD moving on an existing Space: its row */
	const struct session *const *sessions;     /* new sessions */
	size_t n_sessions;
	struct turn *const *turns;                 /* new turns, numbered as given (ids set) */
	size_t n_turns;
	const struct reflog_entry *const *reflog;  /* reflog rows to append as written, oldest first */
	size_t n_reflog;
	/*
	 * A bulk load standing for an agent's writes (bench/scale.sh) rather
	 * than a bundle, which brings its reflog: created, when set with
	 * create, is the creation's move, and record_commits 1 records each
	 * checkpoint's move, each in the reflog as store_space_create and
	 * store_checkpoint_put record them.
	 */
	const struct ref_move *created;
	int record_commits;
};

/*
 * Writes the rows of v[0..n) in one transaction: all of them or, on any
 * failure (a name or hash taken meanwhile), none.  Checkpoints and turns
 * are indexed for search as they are written.
 */
enum smr_rc store_import(struct store *st, const struct import_space *v, size_t n,
			 struct smr_err *err);

/* Checkpoints.  c->hash must already be sealed. */
enum smr_rc store_checkpoint_put(struct store *st, const char *space_id,
				 const struct checkpoint *c, const char *expected_head,
				 struct smr_err *err);
/*
 * Builds a checkpoint on top of HEAD and writes it, in one transaction:
 * HEAD is locked and read, build(head (NULL: empty Space), out, arg) fills
 * and seals out (out->parent_hash must be head's hash), then out is
 * inserted and HEAD moved.  Concurrent updates queue on the lock, so none
 * is lost.  out is the caller's (checkpoint_init()ed, released by them).
 */
typedef enum smr_rc (*store_build_fn)(const struct checkpoint *head, struct checkpoint *out,
				      void *arg, struct smr_err *err);
enum smr_rc store_checkpoint_update(struct store *st, const char *space_id,
				    store_build_fn build, void *arg, struct checkpoint *out,
				    struct smr_err *err);
/*
 * store_checkpoint_update on Space sp->id, in the same transaction checking
 * that ref still names that Space, called sp->name: SMR_ENOTFOUND, nothing
 * written, when it no longer does (as store_checkpoint_put_checked).
 */
enum smr_rc store_checkpoint_update_checked(struct store *st, const struct space *sp,
					    const char *ref, store_build_fn build, void *arg,
					    struct checkpoint *out, struct smr_err *err);
/*
 * Writes merge checkpoint c (sealed, both parents set) on top of HEAD, which
 * must still be c->parent_hash (else SMR_ECONFLICT); src_space_id (the
 * same Space, or one that shares history, e.g. a fork) must reach
 * c->merge_parent_hash, which the Space then reaches through c.
 */
enum smr_rc store_checkpoint_merge(struct store *st, const char *space_id,
				   const struct checkpoint *c, const char *src_space_id,
				   struct smr_err *err);
/*
 * Moves HEAD from expected_head to hash (a descendant), which src_space_id
 * must reach; the reflog names actor (NULL: "") for the move.
 */
enum smr_rc store_head_fast_forward(struct store *st, const char *space_id,
				    const char *expected_head, const char *src_space_id,
				    const char *hash, const char *actor, struct smr_err *err);
/*
 * A write that names no parent: c goes on whatever HEAD space_id has when
 * its transaction holds HEAD's lock, however many writers race, and is
 * never refused for a race.  c comes sealed on the HEAD its caller read
 * (c->parent_hash, NULL for an empty Space); when HEAD is another by then,
 * reseal(head, c, arg) seals c on it (parent_hash = head, the time of
 * now, the hash; it may change nothing else of c: its lists' JSON text is
 * made before the transaction).  reseal runs on the thread of whichever
 * writer commits the transaction, while this caller waits.  SMR_ECONFLICT
 * only when c is there already.
 */
typedef void (*store_reseal_fn)(const char *head, struct checkpoint *c, void *arg);
enum smr_rc store_checkpoint_put_on_head(struct store *st, const char *space_id,
					 struct checkpoint *c, store_reseal_fn reseal, void *arg,
					 struct smr_err *err);
/*
 * 1 and, in *out, checkpoint hash as a write or patch of this process made
 * it lately, sharing its very lists (checkpoint_share_lists: change none
 * in place), when one did; else 0.  Caller releases *out.  A checkpoint is
 * a function of its hash, so any such copy is right; it may not be in the
 * database (a transaction that failed after making it).
 */
int store_checkpoint_recent(const char *hash, struct checkpoint *out);
/*
 * store_checkpoint_put_on_head on Space sp->id, in the same transaction
 * checking that ref (a name or id) still names that Space and that it is
 * still called sp->name: SMR_ENOTFOUND, nothing written, when it no
 * longer does (as store_checkpoint_put_checked).
 */
enum smr_rc store_checkpoint_put_on_head_checked(struct store *st, const struct space *sp,
						 const char *ref, struct checkpoint *c,
						 store_reseal_fn reseal, void *arg,
						 struct smr_err *err);
/*
 * store_checkpoint_put on Space sp->id, in the same transaction checking
 * that ref (a name or id) still names that Space and that it is still
 * called sp->name, so a caller may skip looking the Space up before a
 * write: SMR_ENOTFOUND, nothing written, when it no longer does.
 */
enum smr_rc store_checkpoint_put_checked(struct store *st, const struct space *sp,
					 const char *ref, const struct checkpoint *c,
					 const char *expected_head, struct smr_err *err);
/*
 * A version of the whole database as this handle sees it: it changes
 * whenever anything was committed since it was last read, by this handle,
 * another handle or another process, so a caller may keep what it read
 * while the version stays the same.  Read the version before what it
 * guards.  *v = 0: this backend has no cheap version (PostgreSQL), keep
 * nothing.
 */
enum smr_rc store_data_version(struct store *st, uint64_t *v, struct smr_err *err);
/*
 * The HEAD checkpoint of a Space (id or name) in one read.  An empty Space
 * gives SMR_OK with out->hash NULL and out->space its name; SMR_ENOTFOUND:
 * no such Space.  out's JSON fields may be shared with the handle (a
 * backend may keep the last HEAD it parsed): read them, and json_deep_copy
 * one before changing it.  checkpoint_release(out) as ever.
 */
enum smr_rc store_head_get(struct store *st, const char *space, struct checkpoint *out,
			   struct smr_err *err);
/*
 * hash as read through Space space_id, which must reach it (out->space is
 * its name); space_id NULL: through the Space that wrote it.
 */
enum smr_rc store_checkpoint_get(struct store *st, const char *space_id, const char *hash,
				 struct checkpoint *out, struct smr_err *err);
/*
 * Called by store_checkpoints_each for hashes[i] in order: c read as
 * store_checkpoint_get(st, NULL, hashes[i]) reads it, or NULL when that
 * found none.  fn may take *c (moving it out and zeroing it); what it
 * leaves is released after the call.  Nonzero return stops.
 */
typedef int (*store_each_fn)(size_t i, struct checkpoint *c, void *ctx);
/*
 * Reads the checkpoints hashes[0..n) (repeats allowed), each through the
 * Space that wrote it, and hands them to fn one at a time, in order: a
 * backend over a network reads them in a few round trips, not one or two
 * each, and holds no more than one parsed at a time.
 */
enum smr_rc store_checkpoints_each(struct store *st, const char *const *hashes, size_t n,
				   store_each_fn fn, void *ctx, struct smr_err *err);
/* Distinct hashes starting with prefix, at most limit of them; caller frees each and *out. */
enum smr_rc store_checkpoint_find_prefix(struct store *st, const char *prefix, size_t limit,
					 char ***out, size_t *n, struct smr_err *err);
/* First-parent ancestry of hash in space_id, newest first, at most limit (0: all). */
enum smr_rc store_checkpoint_log(struct store *st, const char *space_id, const char *hash,
				 size_t limit, struct checkpoint **out, size_t *n,
				 struct smr_err *err);
/*
 * Adds hash and every ancestor of it in space_id (both parents of merges)
 * to into, as {hash: created_at}, in one statement.  Reads only the links,
 * not the content (merge bases, up-to-date checks, ahead/behind).
 */
enum smr_rc store_checkpoint_ancestry(struct store *st, const char *space_id, const char *hash,
				      json_t *into, struct smr_err *err);
/*
 * A history by its chains (docs/storage.md, "Chains"): every chain the
 * ancestry of a checkpoint reaches, with the highest row it reaches on it
 * (each row of that chain at or below it is an ancestor, and no other),
 * and the checkpoint's own row and chain.  A chain not yet found by the
 * migration that names them is 0.
 */
struct chain_top {
	int64_t chain, top;
};
struct history_chains {
	int64_t id, chain;            /* the checkpoint's */
	struct chain_top *v;          /* by chain */
	size_t n;
};
/*
 * The chains of hash's history, read in space_id (ENOTFOUND when that
 * Space does not reach it), in one statement that walks where chains are
 * left (their first rows, merges), not every checkpoint.  Caller
 * history_chains_release()s.
 */
enum smr_rc store_checkpoint_chains(struct store *st, const char *space_id, const char *hash,
				    struct history_chains *out, struct smr_err *err);
void history_chains_release(struct history_chains *h);
/* How many rows of chain lie above row lo, up to row hi. */
enum smr_rc store_chain_count(struct store *st, int64_t chain, int64_t lo, int64_t hi,
			      int64_t *n, struct smr_err *err);
/*
 * The hash and time of each checkpoint row ids[0..n) (n at most
 * STORE_ROWS_AT_ONCE), in one statement: (*hashes)[i] and (*times)[i],
 * NULL for a row that is not there.  Caller frees each and both arrays.
 */
#define STORE_ROWS_AT_ONCE 16
enum smr_rc store_row_hashes(struct store *st, const int64_t *ids, size_t n, char ***hashes,
			     char ***times, struct smr_err *err);
/*
 * One checkpoint as a history view draws it: its row id (a generation
 * number: parents have smaller ones), its links, and what a row shows.
 * parent_id and merge_id are -1 when there is none.
 */
struct graph_row {
	int64_t id, parent_id, merge_id;
	char *hash, *parent, *merge_parent, *title, *author, *created_at, *restored_from;
};
/*
 * The graph row of checkpoint hash, or of row id when hash is NULL: one
 * indexed read, with no test of which Space reaches it (the caller walks
 * from HEADs it may read).  graph_row_release(out) as ever.
 */
enum smr_rc store_graph_row(struct store *st, int64_t id, const char *hash,
			    struct graph_row *out, struct smr_err *err);
/*
 * The graph rows of row id and of its first parents, up to limit of them,
 * in one read and in no order (*out: caller releases each and frees it);
 * none when id is not a row.
 */
enum smr_rc store_graph_run(struct store *st, int64_t id, size_t limit,
			    struct graph_row **out, size_t *n, struct smr_err *err);
void graph_row_release(struct graph_row *g);
/*
 * Every Space (deleted ones too) that was forked, with the Space that wrote
 * the checkpoint it was forked at: (*pairs)[2i] the fork's id, [2i+1] that
 * origin's, *n pairs; one read of each Space's first reflog entry.  The
 * caller frees each string and *pairs.
 */
enum smr_rc store_space_forks(struct store *st, char ***pairs, size_t *n, struct smr_err *err);
/*
 * The ids of the Spaces (deleted ones too) with a fork's entry anywhere in
 * their reflog, once for each such entry, in one statement: the Spaces
 * whose first entry may be a fork's (the others were not forked).  Caller
 * frees each and *ids.
 */
enum smr_rc store_spaces_with_fork_entries(struct store *st, char ***ids, size_t *n,
					   struct smr_err *err);
/*
 * Every checkpoint a Space reaches, in insertion order (parents first), for
 * fsck; space_id NULL: every checkpoint of the database once, deleted
 * Spaces' too, each named by the Space that wrote it.
 */
enum smr_rc store_checkpoint_scan(struct store *st, const char *space_id, store_scan_fn fn,
				  void *ctx, struct smr_err *err);
/*
 * Called by store_checkpoint_scan_text: c without its lists and metadata
 * (NULL) and t their JSON text as stored, or c whole and t NULL (a
 * backend that has no text at hand); both valid for the call only.
 */
typedef int (*store_scan_text_fn)(const struct checkpoint *c, const struct checkpoint_text *t,
				  void *ctx);
/* store_checkpoint_scan() that leaves the lists as text where it can (an export). */
enum smr_rc store_checkpoint_scan_text(struct store *st, const char *space_id,
				       store_scan_text_fn fn, void *ctx, struct smr_err *err);

/* Sessions and turns. */
enum smr_rc store_session_create(struct store *st, const struct session *s,
				 struct smr_err *err);
enum smr_rc store_session_get(struct store *st, const char *id, struct session *out,
			      struct smr_err *err);
enum smr_rc store_session_list(struct store *st, const char *repo_id, struct session **out,
			       size_t *n, struct smr_err *err);
/*
 * Creates session s with turns[0..n) as its turns 1..n, all in one
 * transaction (transcript import): assigns each turn's seq and id.
 */
enum smr_rc store_session_import(struct store *st, const struct session *s,
				 struct turn *turns, size_t n, struct smr_err *err);
/*
 * Appends t to its session: assigns t->seq (last + 1) and t->id.  When
 * expected_last >= 0 the append only happens if the session's last
 * sequence number is still expected_last (else SMR_ECONFLICT).
 */
enum smr_rc store_turn_append(struct store *st, struct turn *t, int64_t expected_last,
			      struct smr_err *err);
/*
 * Makes the session's shown path end at turn leaf (<= 0: at the newest
 * turn, the default).  Appending a turn with has_parent set makes the
 * newest turn the end again.  SMR_ENOTFOUND naming the session.
 */
enum smr_rc store_session_set_leaf(struct store *st, const char *session_id, int64_t leaf,
				   struct smr_err *err);
/* Records a provider failure on a stored turn. */
enum smr_rc store_turn_set_error(struct store *st, int64_t turn_id, const char *error,
				 struct smr_err *err);
/* Turns of a session with sequence_number > after_seq, oldest first. */
enum smr_rc store_turn_list(struct store *st, const char *session_id, int64_t after_seq,
			    struct turn **out, size_t *n, struct smr_err *err);
/* Turns written since the Space's HEAD was created, over all its sessions. */
enum smr_rc store_turns_since_head(struct store *st, const char *repo_id, int64_t *count,
				   struct smr_err *err);

/* Draft jobs. */
enum smr_rc store_job_create(struct store *st, const struct draft_job *j, struct smr_err *err);
enum smr_rc store_job_get(struct store *st, const char *id, struct draft_job *out,
			  struct smr_err *err);
/* Sets status, and result/error/started_at/finished_at where non-NULL. */
enum smr_rc store_job_update(struct store *st, const struct draft_job *j, struct smr_err *err);
/*
 * Marks the queued or running jobs of server owner failed (its lease
 * lapsed), or with owner NULL those whose owner has no servers row any
 * more; *n gets the count.  A job with no owner (a local CLI run) is not
 * touched.
 */
enum smr_rc store_job_fail_owned(struct store *st, const char *owner, const char *reason,
				 const char *now, size_t *n, struct smr_err *err);

/*
 * Generations (model.h), each write one transaction.  begin: inserts g
 * (SMR_ECONFLICT naming the running one when the session already has one)
 * and, unless user is NULL (a failed turn reused: g->user_seq names it),
 * appends user after expected_last (store_turn_append's rule) and records
 * its number in g->user_seq.  end: appends reply (if not NULL) after
 * whatever is last, records its number in g->assistant_seq, and updates
 * g's row.  running: the session's running generation, SMR_ENOTFOUND when
 * none.  update: status, user_seq, assistant_seq, and error and
 * finished_at where non-NULL.  Out structs are the caller's to release.
 */
enum smr_rc store_generation_begin(struct store *st, struct generation *g, struct turn *user,
				   int64_t expected_last, struct smr_err *err);
enum smr_rc store_generation_end(struct store *st, struct generation *g, struct turn *reply,
				 struct smr_err *err);
/* store_generation_end for n generations, all in one transaction (all or nothing). */
enum smr_rc store_generation_end_many(struct store *st, struct generation **g,
				      struct turn **reply, size_t n, struct smr_err *err);
enum smr_rc store_generation_get(struct store *st, const char *id, struct generation *out,
				 struct smr_err *err);
enum smr_rc store_generation_running(struct store *st, const char *session_id,
				     struct generation *out, struct smr_err *err);
enum smr_rc store_generation_update(struct store *st, const struct generation *g,
				    struct smr_err *err);
/*
 * The running generations of server owner, or with owner NULL those whose
 * owner is nobody (made before leases) or has no servers row any more.
 * Caller frees the array (generation_release each, then free).
 */
enum smr_rc store_generation_list_orphaned(struct store *st, const char *owner,
					   struct generation **out, size_t *n,
					   struct smr_err *err);
/*
 * Takes over generation g, running on a server whose lease lapsed: in one
 * transaction, if it still runs, it becomes interrupted with reason; text
 * (the reply as far as its server stored it; NULL or "": none) becomes its
 * assistant turn (status interrupted, reason as its error), else the user
 * turn keeps reason as its error (so the next send of the same message
 * reuses it).  *taken is 0 when it no longer ran (ended, or another server
 * took it first).
 */
enum smr_rc store_generation_take_over(struct store *st, const struct generation *g,
				       const char *text, const char *reason, const char *now,
				       int *taken, struct smr_err *err);

/*
 * Servers (ops/full/lease.c): one row per process that runs replies and
 * draft jobs, its heartbeat moved every fraction of lease_s.
 */
struct server_row {
	char *id;
	char *name;                  /* host and process, for people reading the table */
	char *started_at;
	char *heartbeat_at;
	int64_t lease_s;
};

/*
 * Moves sv's heartbeat to sv->heartbeat_at; inserts its row when insert is
 * set or the row is gone (a server that took it for dead removed it).
 */
enum smr_rc store_server_beat(struct store *st, const struct server_row *sv, int insert,
			      struct smr_err *err);
/* Every servers row; caller server_rows_free()s. */
enum smr_rc store_server_list(struct store *st, struct server_row **out, size_t *n,
			      struct smr_err *err);
/* Removes server id's row; with heartbeat_at, only while its heartbeat still reads so. */
enum smr_rc store_server_remove(struct store *st, const char *id, const char *heartbeat_at,
				struct smr_err *err);
void server_rows_free(struct server_row *v, size_t n);

/*
 * A generation's events as another server reads them (ops/full/relay.c):
 * events first_seq..last_seq (numbered from 1, as generation.h numbers
 * them) as server-sent-event text, and text, the deltas among them joined.
 */
struct gen_events {
	char *generation_id;
	int64_t first_seq, last_seq;
	char *events;
	char *text;
};
void gen_events_free(struct gen_events *b, size_t n);

/*
 * Writes n batches in one transaction.  A batch whose generation already
 * has one at the same first_seq replaces it (a retry after a commit whose
 * outcome was unknown carries the same events and maybe more).
 */
enum smr_rc store_generation_publish(struct store *st, const struct gen_events *b, size_t n,
				     struct smr_err *err);
/* The batches of id holding events after `after`, oldest first; caller gen_events_free()s. */
enum smr_rc store_generation_events(struct store *st, const char *id, int64_t after,
				    struct gen_events **out, size_t *n, struct smr_err *err);
/*
 * The text id streamed so far, as its server last wrote it (within a
 * second of its arrival); "" when none was written.  Caller free()s.
 */
enum smr_rc store_generation_text(struct store *st, const char *id, char **out,
				  struct smr_err *err);
/* Drops the batches of generations that ended before `before` (and of those deleted). */
enum smr_rc store_generation_events_prune(struct store *st, const char *before, size_t *n,
					  struct smr_err *err);
/*
 * Asks whichever server runs id to stop it: *stopping 1 when id was running
 * and had not been asked yet (on PostgreSQL the servers hear of it at once).
 */
enum smr_rc store_generation_request_stop(struct store *st, const char *id, int *stopping,
					  struct smr_err *err);
/* The running generations someone asked to stop (their ids; caller frees each and *out). */
enum smr_rc store_generation_stops(struct store *st, char ***out, size_t *n,
				   struct smr_err *err);

#endif
