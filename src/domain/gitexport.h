/*
 * gitexport.h -- a checkpoint as a git commit, written in git fast-import's
 * input format (git-fast-import(1)), so that git itself builds the objects.
 * Pure code: the caller runs `git fast-import` on what this writes.
 *
 * The commit's author and date are the checkpoint's, its message the title,
 * the summary and two trailers (Smriti-Checkpoint, Smriti-Space), and its
 * tree checkpoint.md, checkpoint.json and artifacts/NAME for each artifact.
 */
#ifndef SMRITI_GITEXPORT_H
#define SMRITI_GITEXPORT_H

#include <stddef.h>

#include "domain/model.h"
#include "util/buf.h"

/*
 * Appends the commands that make c commit mark on ref: its first parent is
 * mark parent and a merge's second parent mark merge (0: none).  A root
 * commit resets ref first, so that it has no parent even when ref exists.
 */
void gitexport_commit(struct buf *b, const char *ref, const char *space,
		      const struct checkpoint *c, size_t mark, size_t parent, size_t merge);

/*
 * Points ref at mark; with mark 0 fast-import forgets ref, so that it does
 * not write it when it ends (the commits made on it stay, by their marks).
 */
void gitexport_reset(struct buf *b, const char *ref, size_t mark);

/*
 * Appends the branch a Space exports to by default: "smriti/" and the
 * Space's name, in which letters, digits, '-', '_', '.' and every byte of
 * a non-ASCII character stay as they are and every other byte becomes %XX
 * (upper-case hex), as does a '.' that starts or ends the name, follows
 * another '.' or begins a final ".lock".  So any name gives a branch git
 * accepts (git-check-ref-format(1)), and two names never give the same one.
 */
void gitexport_branch_name(const char *space, struct buf *out);

/* An artifact name as a file name: no '/', no control characters, no leading '.'. */
void gitexport_file_name(const char *name, struct buf *out);

#endif
