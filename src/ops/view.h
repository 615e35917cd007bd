/*
 * view.h -- read-only operations that a person's view of Smriti needs
 * beyond what the agents use: the checkpoint graph of a Space with its
 * forks, an overview of every Space, and a cheap version of what is shown so
 * that a page can tell when anyone (the UI, the CLI, an MCP agent, another
 * server on the same database) changed it.  None of them writes.
 */
#ifndef SMRITI_VIEW_H
#define SMRITI_VIEW_H

#include "ops/api.h"

/*
 * The checkpoint graph of a Space and its family (the Spaces linked to it
 * by forks): what their HEADs reach, newest first (by row id: children
 * before parents); a page of at most limit nodes (0: all), from the HEADs,
 * or where cursor (a page's `cursor`) says, or after the node `after` (a
 * walk down from the HEADs to it).  *out is {space, nodes: [{hash,
 * parent, merge_parent?, restored_from?, title, author, created_at, spaces,
 * heads, own, changes?}], next: hash|null, cursor?}; new reference.  With
 * changes, each node of the page carries checkpoint_diff_counts() against
 * its first parent (domain/diff.h).  A page reads about as many rows as it
 * shows, whatever the length of the history.
 */
enum smr_rc ops_space_graph(struct ops_ctx *ctx, const char *space, const char *after,
			    const char *cursor, size_t limit, int changes, json_t **out,
			    struct smr_err *err);

/*
 * Every Space with its HEAD's title, author and time, its number of
 * sessions and its last activity (the newest of its creation, its HEAD and
 * its latest turn), the most recently active first (then by name): those
 * whose name, description or HEAD title holds match (NULL: all; ASCII
 * letters in either case), at most limit of them (0: all).  *out is an
 * array; new reference.
 */
enum smr_rc ops_space_overview(struct ops_ctx *ctx, const char *match, size_t limit,
			       json_t **out, struct smr_err *err);

/*
 * Every fork among the Spaces the caller may read whose origin (the Space
 * its reflog's fork entry names) it may read too, with how far each line
 * went since they parted, counted as a merge's dry run counts them: ahead
 * (the fork's checkpoints its origin's HEAD lacks) and behind (the
 * origin's that the fork lacks).  One call for a whole list of Spaces: each
 * Space's history is walked once, however many forks share it.  *out is
 * [{space, origin, ahead, behind}] in the order of ops_space_list(); new
 * reference.
 */
enum smr_rc ops_space_forks(struct ops_ctx *ctx, json_t **out, struct smr_err *err);

/*
 * A fingerprint of what a page shows: the Spaces (names, HEADs), and with
 * space the sessions of that Space (titles, turn counts).  It changes
 * whenever any of that changes, whoever wrote it.  *out is {version};
 * new reference.
 */
enum smr_rc ops_state_version(struct ops_ctx *ctx, const char *space, json_t **out,
			      struct smr_err *err);

/*
 * The difference from ref (NULL: an empty state) to a proposed checkpoint
 * that is not saved, given as checkpoint fields (validated as a save would
 * validate them): what an editor shows against HEAD.  *out is a diff
 * document (domain/diff.h), with "refused": the message a save of it would
 * be refused with (a list holding an item twice) when there is one; new
 * reference.
 */
enum smr_rc ops_diff_proposal(struct ops_ctx *ctx, const char *from, const json_t *fields,
			      json_t **out, struct smr_err *err);

/* The JSON handlers of the operations above (space.graph, space.overview, space.forks, state.version, diff.proposal). */
extern const struct api_op view_ops[];
enum smr_rc ops_api_space_graph(struct ops_ctx *ctx, const json_t *p, json_t **result,
				struct smr_err *err);

#endif
