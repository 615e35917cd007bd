/*
 * ref.c -- parse "BASE" and "BASE~N" (see ref.h).
 */
#include "domain/ref.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum smr_rc ref_parse(const char *s, struct ref_spec *out, struct smr_err *err)
{
	const char *tilde = strrchr(s, '~');
	char *end;
	long n = 0;

	memset(out, 0, sizeof(*out));
	if (!*s)
		return smr_errf(err, SMR_EUSAGE, "empty checkpoint reference");
	if (tilde) {
		if (tilde == s)
			return smr_errf(err, SMR_EUSAGE, "bad reference '%s': nothing before '~'", s);
		errno = 0;
		n = tilde[1] ? strtol(tilde + 1, &end, 10) : 1;
		if (tilde[1] && (errno || *end || n < 0 || tilde[1] == '-' || tilde[1] == '+'))
			return smr_errf(err, SMR_EUSAGE,
					"bad reference '%s': '~' must be followed by a number", s);
		out->base = xstrndup(s, (size_t)(tilde - s));
	} else {
		out->base = xstrdup(s);
	}
	out->ancestors = n;
	return SMR_OK;
}

void ref_spec_release(struct ref_spec *r)
{
	free(r->base);
	r->base = NULL;
}
