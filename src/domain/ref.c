/*
 * ref.c -- parse "BASE", "BASE~N" and a final "^P" (see ref.h).
 */
#include "domain/ref.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Takes a final "^", "^1" or "^2" off s into *parent; returns the rest's length. */
static size_t take_parent(const char *s, int *parent)
{
	size_t n = strlen(s);

	*parent = 0;
	if (n >= 2 && s[n - 1] == '^') {
		*parent = 1;
		return n - 1;
	}
	if (n >= 3 && s[n - 2] == '^' && (s[n - 1] == '1' || s[n - 1] == '2')) {
		*parent = s[n - 1] - '0';
		return n - 2;
	}
	return n;
}

enum smr_rc ref_parse(const char *in, struct ref_spec *out, struct smr_err *err)
{
	char *s, *end;
	const char *tilde;
	long n = 0;
	int parent;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	if (!*in)
		return smr_errf(err, SMR_EUSAGE, "empty checkpoint reference");
	s = xstrndup(in, take_parent(in, &parent));
	tilde = strrchr(s, '~');
	rc = SMR_OK;
	if (tilde == s) {
		rc = smr_errf(err, SMR_EUSAGE, "bad reference '%s': nothing before '~'", in);
	} else if (tilde) {
		errno = 0;
		n = tilde[1] ? strtol(tilde + 1, &end, 10) : 1;
		if (tilde[1] && (errno || *end || n < 0 || tilde[1] == '-' || tilde[1] == '+'))
			rc = smr_errf(err, SMR_EUSAGE,
				      "bad reference '%s': '~' must be followed by a number", in);
		else
			out->base = xstrndup(s, (size_t)(tilde - s));
	} else {
		out->base = xstrdup(s);
	}
	free(s);
	out->ancestors = n;
	out->parent = parent;
	return rc;
}

void ref_spec_release(struct ref_spec *r)
{
	free(r->base);
	r->base = NULL;
}
