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
 * ~N.
 *
 * A DATE names one second, and all of it counts (reflog times have
 * microseconds): the instant used is its last microsecond.  A date alone
 * is midnight as that day begins -- 2026-12-01 is 2026-12-01T00:00:00Z, so
 * SPACE@{2026-12-01} is HEAD as of 00:00:00.999999Z -- as ISO 8601, SQL
 * and date(1) read it, and as `search --since` and `gc --prune=` need (a
 * day's items from its start; what was deleted before that day).  git
 * reads a date alone at the current time of day, so one ref names
 * different states as the day goes on; a script cannot rely on that.  The
 * day's end is written 2026-12-01 23:59:59.  Before the first move of
 * HEAD a DATE is an error (the ops layer says the Space did not exist
 * yet); after the last move it is HEAD now.  A name that is both a Space and a hex prefix means the Space
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
	char at_time[32];  /* @{DATE}: its second's last microsecond, "YYYY-MM-DDTHH:MM:SS.999999Z" */
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
 * A DATE of @{DATE} on its own (gc --prune=DATE, search --since): the last
 * microsecond of the second it names into out, "YYYY-MM-DDTHH:MM:SS.999999Z"
 * (a date alone: 00:00:00.999999 of that day).  SMR_EUSAGE if it is not a
 * date.
 */
enum smr_rc ref_parse_date(const char *text, const char *now, char out[32],
			   struct smr_err *err);

#endif
