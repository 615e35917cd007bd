/*
 * patch.h -- a change to a Checkpoint's state, applied on top of its parent.
 *
 * A Checkpoint stays a complete state; a patch is how the next one is
 * written without restating it (git's commit starting from its parent's
 * tree).  The patch document, the same for every transport:
 *
 *   {"add":    {"decisions": [item...], "tasks": [...], ...},
 *    "drop":   {"decisions": [ref...], ...},
 *    "done":   [ref...],        tasks to mark done
 *    "reopen": [ref...],        tasks to mark open again
 *    "title": "...", "summary": "...",   replace
 *    "metadata": {...}}         this checkpoint's own metadata
 *
 * Field names may be singular ("decision", "question", "entity").  Items
 * to add are what checkpoint_from_json takes (a string or an object).  A
 * ref names an item of the parent: its exact text (name for entities and
 * artifacts), or its 1-based position as `smriti show` prints it (an
 * integer, or a string of digits that is no item's text).  Naming an item
 * that is not there, adding one that is (an artifact of the same name is
 * replaced instead), marking a done task done: SMR_EUNPROC, nothing
 * applied.  Metadata is not carried forward: it describes how one
 * checkpoint was made (source session, restored_from, draft provenance).
 * Pure code.
 */
#ifndef SMRITI_PATCH_H
#define SMRITI_PATCH_H

#include "domain/model.h"
#include "util/err.h"

/* The canonical list field for name or its singular ("decision", "question"); NULL if none. */
const char *patch_field_name(const char *name);

/*
 * Applies patch to base (NULL: an empty Space) into out, which must be
 * checkpoint_init()ed: the content fields only (not hash, parents, author,
 * time).  *changes (may be NULL) gets a new reference counting what changed:
 * {"decisions": {"added": 2}, "tasks": {"done": 1}, "title": true, ...}.
 * A list the patch leaves alone is base's very list in out
 * (checkpoint_share_lists): change it through checkpoint_own_list.
 * On error out may be partly filled; the caller releases it either way.
 */
enum smr_rc patch_apply(const struct checkpoint *base, const json_t *patch,
			struct checkpoint *out, json_t **changes, struct smr_err *err);

/* "+2 decisions, 1 task done, title" for a changes document; caller free()s. */
char *patch_describe(const json_t *changes);

#endif
