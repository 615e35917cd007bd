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

#endif
