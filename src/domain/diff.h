/*
 * diff.h -- field-by-field difference between two Checkpoints.
 *
 * Items of a list are matched by their identity key (text; name for entities
 * and artifacts): an item only in b is added, only in a is removed, and one
 * in both whose other fields differ (a task's status, an artifact's content)
 * is changed.  Pure code.
 */
#ifndef SMRITI_DIFF_H
#define SMRITI_DIFF_H

#include "domain/model.h"

/*
 * Returns a new reference:
 *   {"from": hash, "to": hash, "identical": bool,
 *    "title": {"from","to"}?, "summary": {"from","to"}?,
 *    "decisions": {"added":[...],"removed":[...],"changed":[{"from","to"}]}?, ...}
 * Only fields that differ appear.
 */
json_t *checkpoint_diff(const struct checkpoint *a, const struct checkpoint *b);

/*
 * How many items checkpoint_diff(a, b) finds per list field, for a one-line
 * summary ("+2 decisions -1 assumption, 1 task done"); a NULL a is the empty
 * state.  Returns a new reference: {field: {"added", "removed", "changed"}}
 * for the fields that differ, tasks with "done" too (tasks now done that
 * were not).
 */
json_t *checkpoint_diff_counts(const struct checkpoint *a, const struct checkpoint *b);

#endif
