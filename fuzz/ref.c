/*
 * ref.c -- fuzz target: the REF syntax users type (domain/ref.h): hashes,
 * prefixes, SPACE~N, ^P, @{N} and @{DATE}, dates on their own, and the
 * hash-prefix test beside them.  Properties: a parsed REF's base prefixes
 * the input and is empty only before @{...}; N >= 0; P is 0, 1 or 2; a
 * time is a NUL-terminated ISO instant, the last microsecond of a second;
 * a date alone is its own day's midnight (domain/ref.h).
 */
#include "fuzz.h"

#include "domain/checkpoint.h"
#include "domain/ref.h"

#define NOW "2026-12-03T09:00:00.000000Z"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ref_spec r = { 0 };
	char *s = fuzz_text(data, size);
	char when[32];

	if (ref_parse(s, NOW, &r, &err) == SMR_OK) {
		FUZZ_CHECK(r.base);
		FUZZ_CHECK(r.base[0] || r.at != REF_AT_NONE);
		FUZZ_CHECK(!strncmp(s, r.base, strlen(r.base)));
		FUZZ_CHECK(r.ancestors >= 0);
		FUZZ_CHECK(r.parent >= 0 && r.parent <= 2);
		FUZZ_CHECK(memchr(r.at_time, '\0', sizeof(r.at_time)));
		FUZZ_CHECK(r.at != REF_AT_TIME || strlen(r.at_time) == 27);
	} else {
		FUZZ_CHECK(err.code == SMR_EUSAGE && err.msg[0]);
	}
	ref_spec_release(&r);
	if (ref_parse_date(s, NOW, when, &err) == SMR_OK) {
		FUZZ_CHECK(strlen(when) == 27);
		FUZZ_CHECK(!strcmp(when + 19, ".999999Z"));
		/* a date alone is that day's midnight, in the same day */
		if (strlen(s) == 10 && s[4] == '-')
			FUZZ_CHECK(!strncmp(when, s, 10) && !strcmp(when + 10, "T00:00:00.999999Z"));
	}
	(void)is_hash_prefix(s);
	free(s);
	return 0;
}
