/*
 * merge.h -- three-way merge of two Checkpoint states from their nearest
 * common ancestor.
 *
 * Item by item for each list (items matched by text; entities and
 * artifacts by name; two items of the same text in one list are the first
 * and the second of that text, matched as such), and for the summary:
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
 *
 * The title is not merged.  It is a checkpoint's own message, as a git
 * commit message describes its step: each line's title said what that line
 * did, and the merge is a step of its own, so it gets its own title
 * (merge_title() by default) and two lines that both moved on merge without
 * a conflict over what they were called.  The summary is state, merged as
 * above.
 */
#ifndef SMRITI_MERGE_H
#define SMRITI_MERGE_H

#include "domain/model.h"
#include "util/err.h"

/*
 * Merges ours and theirs from base (NULL: no common ancestor, an empty
 * state) into out (checkpoint_init()ed; content fields only).  out->title
 * is left as the caller set it (the merge's own title), and counts in the
 * limits checked on the result.
 *
 * resolution (may be NULL) settles conflicts: {"*": "ours"|"theirs"} for
 * all, {"summary": "ours", "decisions": {"<text>": "theirs"}, ...} one by
 * one (field names may be singular), or with an edited value instead of a
 * side: {"tasks": {"<text>": {"edit": ITEM}}} (normalised and checked as
 * an item of the field; null drops it), {"summary": {"edit": "text"}}.
 * A resolution that names no conflict
 * is SMR_EINVAL; so is one that names the title, which never conflicts.
 *
 * *conflicts gets a new reference to the conflicts left unresolved, in a
 * fixed order: [{"field", "item"?, "base", "ours", "theirs"}] where the
 * values are the item objects (strings for the summary) or null for
 * absent.  With any left, returns SMR_ECONFLICT naming them; out is then
 * not meaningful.
 */
enum smr_rc checkpoint_merge3(const struct checkpoint *base, const struct checkpoint *ours,
			      const struct checkpoint *theirs, const json_t *resolution,
			      struct checkpoint *out, json_t **conflicts, struct smr_err *err);

/*
 * The default title of a merge checkpoint: "Merge THEIRS into OURS", where
 * theirs is what the caller called the line merged in (a Space's name, or
 * the REF as given) and ours the Space receiving it.  Caller frees.
 */
char *merge_title(const char *theirs, const char *ours);

#endif
