/*
 * ref.h -- parsing of the REF syntax users type to name a Checkpoint.
 *
 *   <64 hex>      a full commit_hash
 *   <4+ hex>      a unique prefix of one
 *   SPACE         the HEAD of a Space
 *   SPACE~N       the Nth first-parent ancestor of that HEAD
 *   <hex>~N       the Nth ancestor of a hash
 *   REF^ REF^1    the (first) parent of any of the above
 *   REF^2         the second parent of a merge
 *
 * A name that is both a Space and a hex prefix means the Space (resolution
 * in the ops layer tries the Space first).  Pure code.
 */
#ifndef SMRITI_REF_H
#define SMRITI_REF_H

#include "util/err.h"

struct ref_spec {
	char *base;        /* the part before '~' and '^' */
	long ancestors;    /* N of ~N, 0 without */
	int parent;        /* P of a final ^P (1 or 2), 0 without */
};

/* Splits s; caller ref_spec_release()s.  Errors are SMR_EUSAGE. */
enum smr_rc ref_parse(const char *s, struct ref_spec *out, struct smr_err *err);
void ref_spec_release(struct ref_spec *r);

#endif
