/*
 * merge.h -- three-way merge of two Checkpoint states from their nearest
 * common ancestor.
 *
 * Item by item for each list (items matched by text; entities and
 * artifacts by name; two items of the same text in one list are the first
 * and the second of that text, matched as such), and for the title and the
 * summary:
 *
 *   base      ours       theirs     result
 *   absent    X          absent     X           added on one side
 *   absent    X          X          X           added alike on both
 *   absent    X          Y          conflict    added differently
 *   B         B          B          B
 *   B         absent     B          absent      dropped on one side
 *   B         absent     absent     absent
 *   B         X          B          X           changed on one side (a task's
 *                                               status, an artifact's content)
 *   B         X          X          X
 *   B         X          Y          conflict    changed differently
 *   B         absent     X          conflict    dropped here, changed there
 *
 * and the same with the sides swapped.  Lists keep ours' order, then the
 * items only theirs has, in theirs' order.  The result's metadata is empty
 * (the caller records the merge in it).  Pure code, deterministic.
 */
#ifndef SMRITI_MERGE_H
#define SMRITI_MERGE_H

#include "domain/model.h"
#include "util/err.h"

/*
 * Merges ours and theirs from base (NULL: no common ancestor, an empty
 * state) into out (checkpoint_init()ed; content fields only).
 *
 * resolution (may be NULL) settles conflicts: {"*": "ours"|"theirs"} for
 * all, {"title": "ours", "decisions": {"<text>": "theirs"}, ...} one by one
 * (field names may be singular).  A resolution that names no conflict is
 * SMR_EINVAL.
 *
 * *conflicts gets a new reference to the conflicts left unresolved, in a
 * fixed order: [{"field", "item"?, "base", "ours", "theirs"}] where the
 * values are the item objects (strings for title and summary) or null for
 * absent.  With any left, returns SMR_ECONFLICT naming them; out is then
 * not meaningful.
 */
enum smr_rc checkpoint_merge3(const struct checkpoint *base, const struct checkpoint *ours,
			      const struct checkpoint *theirs, const json_t *resolution,
			      struct checkpoint *out, json_t **conflicts, struct smr_err *err);

#endif
