/*
 * ref.c -- parse "BASE", "BASE~N", "BASE@{N}", "BASE@{DATE}" and a final
 * "^P" (see ref.h).  Dates are read as UTC with timegm(), never the local zone, so a
 * ref means the same instant on every machine.
 */
#include "domain/ref.h"
#include "util/xalloc.h"
#include "util/isotime.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 1 if s starts with the layout, where '9' is a digit and any other byte itself. */
static int shaped(const char *s, const char *layout)
{
	for (; *layout; s++, layout++)
		if (*layout == '9' ? !isdigit((unsigned char)*s) : *s != *layout)
			return 0;
	return 1;
}

/*
 * "YYYY-MM-DD[( |T)HH:MM[:SS[.frac]]][Z]" into *out; 0 on success.  The
 * digits are checked first: sscanf's %4d alone takes "+026" or " 26" too.
 */
static int parse_iso(const char *s, time_t *out)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
	const char *p;

	if (!shaped(s, "9999-99-99") || sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 ||
	    n != 10)
		return -1;
	p = s + n;
	if (*p == ' ' || *p == 'T') {
		if (!shaped(p + 1, "99:99") || sscanf(p + 1, "%2d:%2d%n", &h, &mi, &n) != 2 ||
		    n != 5)
			return -1;
		p += 1 + n;
		if (*p == ':') {
			if (!shaped(p + 1, "99") || sscanf(p + 1, "%2d%n", &sec, &n) != 1 || n != 2)
				return -1;
			p += 1 + n;
			if (*p == '.')
				for (p++; isdigit((unsigned char)*p); p++)
					;
		}
	}
	if (*p == 'Z')
		p++;
	/*
	 * before 1970 nothing was written, and a 3-digit year would print
	 * short; a day past its month's last (09-31) is no date, not the next
	 * month's first (found by fuzz/ref.c)
	 */
	if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > iso_days_in_month(y, mo) ||
	    h > 23 || mi > 59 || sec > 60)
		return -1;
	*out = (time_t)iso_utc_seconds(y, mo, d, h, mi, sec);
	return 0;
}

static const struct { const char *name; long seconds; } units[] = {
	{ "second", 1 }, { "minute", 60 }, { "hour", 3600 }, { "day", 86400 },
	{ "week", 7 * 86400 }, { "month", 30 * 86400 }, { "year", 365 * 86400 },
};

/* "N unit[s] ago" (spaces or dots between words) as seconds; 0 on success. */
static int parse_ago(const char *s, long *seconds)
{
	char unit[16], ago[8];
	long n;
	int used = 0;
	char *copy = xstrdup(s);
	int rc = -1;

	for (char *p = copy; *p; p++)
		if (*p == '.')
			*p = ' ';
	if (sscanf(copy, "%ld %15s %7s %n", &n, unit, ago, &used) == 3 && !copy[used] &&
	    !strcmp(ago, "ago") && n >= 0 && n < 100000) {
		size_t len = strlen(unit);

		if (len > 1 && unit[len - 1] == 's')
			unit[len - 1] = '\0';
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(unit, units[i].name)) {
				*seconds = n * units[i].seconds;
				rc = 0;
			}
	}
	free(copy);
	return rc;
}

/* The instant a DATE names, into out as its last microsecond in ISO form. */
static enum smr_rc parse_date(const char *ref, const char *text, const char *now,
			      char out[32], struct smr_err *err)
{
	time_t base = 0, t;
	long back = 0;

	if (!now || parse_iso(now, &base))
		return smr_errf(err, SMR_EUSAGE, "'%s': no clock to read '%s' against", ref, text);
	if (!strcmp(text, "now"))
		t = base;
	else if (!strcmp(text, "yesterday"))
		t = base - 86400;
	else if (!parse_ago(text, &back))
		/* "1234 years ago" is before anything was written: the oldest state, as git says */
		t = base - back < 0 ? 0 : base - back;
	else if (parse_iso(text, &t) && ref == text)
		return smr_errf(err, SMR_EUSAGE, "'%s' is not a date (try 2026-12-01,"
				" '2026-12-01 12:00', yesterday, '3 hours ago')", text);
	else if (parse_iso(text, &t))
		return smr_errf(err, SMR_EUSAGE,
				"bad reference '%s': '%s' is not a number or a date (try"
				" 2026-12-01, '2026-12-01 12:00', yesterday, '3 hours ago')",
				ref, text);
	iso_format((long long)t, 999999, out);
	return SMR_OK;
}

/* Reads "@{...}" at the end of base (cut off there) into out. */
static enum smr_rc parse_at(const char *ref, char *base, const char *now,
			    struct ref_spec *out, struct smr_err *err)
{
	size_t len = strlen(base);
	char *open = NULL, *end;
	long n;

	for (char *p = strstr(base, "@{"); p; p = strstr(p + 1, "@{"))
		open = p;
	if (!open || len == 0 || base[len - 1] != '}')
		return SMR_OK;
	base[len - 1] = '\0';
	*open = '\0';
	open += 2;
	if (!*open)
		return smr_errf(err, SMR_EUSAGE, "bad reference '%s': nothing inside '@{}'", ref);
	errno = 0;
	n = strtol(open, &end, 10);
	if (isdigit((unsigned char)*open) && !*end) {
		if (errno || n < 0)
			return smr_errf(err, SMR_EUSAGE, "bad reference '%s': '@{%s}' is too large",
					ref, open);
		out->at = REF_AT_INDEX;
		out->at_index = n;
		return SMR_OK;
	}
	out->at = REF_AT_TIME;
	return parse_date(ref, open, now, out->at_time, err);
}

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

/* ref_parse() of s, the reference without its final ^P. */
static enum smr_rc parse_rest(const char *in, const char *s, const char *now,
			      struct ref_spec *out, struct smr_err *err)
{
	const char *tilde = strrchr(s, '~');
	char *end;
	long n = 0;
	enum smr_rc rc;

	if (tilde && strchr(tilde, '}'))
		tilde = NULL;   /* a '~' inside @{...} is not an ancestry step */
	if (tilde) {
		if (tilde == s)
			return smr_errf(err, SMR_EUSAGE, "bad reference '%s': nothing before '~'", in);
		errno = 0;
		n = tilde[1] ? strtol(tilde + 1, &end, 10) : 1;
		if (tilde[1] && (errno || *end || n < 0 || tilde[1] == '-' || tilde[1] == '+'))
			return smr_errf(err, SMR_EUSAGE,
					"bad reference '%s': '~' must be followed by a number", in);
		out->base = xstrndup(s, (size_t)(tilde - s));
	} else {
		out->base = xstrdup(s);
	}
	out->ancestors = n;
	rc = parse_at(in, out->base, now, out, err);
	if (!rc && !*out->base && out->at == REF_AT_NONE)
		rc = smr_errf(err, SMR_EUSAGE, "bad reference '%s': nothing before '~'", in);
	return rc;
}

enum smr_rc ref_parse(const char *in, const char *now, struct ref_spec *out,
		      struct smr_err *err)
{
	int parent;
	char *s;
	enum smr_rc rc;

	memset(out, 0, sizeof(*out));
	if (!*in)
		return smr_errf(err, SMR_EUSAGE, "empty checkpoint reference");
	s = xstrndup(in, take_parent(in, &parent));
	rc = parse_rest(in, s, now, out, err);
	free(s);
	out->parent = parent;
	if (rc)
		ref_spec_release(out);
	return rc;
}

enum smr_rc ref_parse_date(const char *text, const char *now, char out[32],
			   struct smr_err *err)
{
	return parse_date(text, text, now, out, err);
}

void ref_spec_release(struct ref_spec *r)
{
	free(r->base);
	r->base = NULL;
}
