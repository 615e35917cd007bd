/*
 * ref.h -- parsing of the REF syntax users type to name a Checkpoint.
 *
 *   <64 hex>        a full commit_hash
 *   <4+ hex>        a unique prefix of one
 *   SPACE           the HEAD of a Space
 *   SPACE~N         the Nth first-parent ancestor of that HEAD
 *   <hex>~N         the Nth ancestor of a hash
 *   SPACE@{N}       what HEAD was N moves ago (git's reflog meaning: @{0}
 *                   is HEAD now, @{1} the value before the last move)
 *   SPACE@{DATE}    what HEAD was at DATE (the last move at or before it)
 *   @{N}, @{DATE}   the same for the Space a command is about (restore)
 *   REF^ REF^1      the (first) parent of any of the above
 *   REF^2           the second parent of a merge
 *
 * DATE is UTC: "2026-12-01", "2026-12-01 12:00", "2026-12-01T12:00:05Z",
 * "now", "yesterday" (24 hours ago), or "N unit(s) ago" with units second,
 * minute, hour, day, week, month (30 days) or year (365 days), words
 * separated by spaces or dots ("2.days.ago").  @{...} may be followed by
 * ~N.  A name that is both a Space and a hex prefix means the Space
 * (resolution in the ops layer tries the Space first).  Pure code: the
 * clock comes in as an argument.
 */
#ifndef SMRITI_REF_H
#define SMRITI_REF_H

#include "util/err.h"

enum ref_at { REF_AT_NONE, REF_AT_INDEX, REF_AT_TIME };

struct ref_spec {
	char *base;        /* the part before '@{', '~' and '^'; "" for a bare @{...} */
	enum ref_at at;    /* what @{...} gave, if anything */
	long at_index;     /* N of @{N} */
	char at_time[32];  /* @{DATE}: its last instant, "YYYY-MM-DDTHH:MM:SS.999999Z" */
	long ancestors;    /* N of ~N, 0 without */
	int parent;        /* P of a final ^P (1 or 2), 0 without */
};

/*
 * Splits s; now (ISO UTC, as ops_ctx.now gives it) anchors relative
 * dates.  Caller ref_spec_release()s.  Errors are SMR_EUSAGE.
 */
enum smr_rc ref_parse(const char *s, const char *now, struct ref_spec *out,
		      struct smr_err *err);
void ref_spec_release(struct ref_spec *r);

/*
 * A DATE of @{DATE} on its own (gc --prune=DATE, search --since): its last
 * instant into out, "YYYY-MM-DDTHH:MM:SS.999999Z".  SMR_EUSAGE if it is
 * not a date.
 */
enum smr_rc ref_parse_date(const char *text, const char *now, char out[32],
			   struct smr_err *err);

#endif
