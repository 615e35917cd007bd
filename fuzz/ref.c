/*
 * ref.c -- fuzz target: the REF syntax users type (domain/ref.h), and the
 * hash-prefix test beside it.  Properties: a parsed REF has a non-empty base
 * and a non-negative ancestor count, and the base is a prefix of the input.
 */
#include "fuzz.h"

#include "domain/checkpoint.h"
#include "domain/ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	struct ref_spec r = { 0 };
	char *s = fuzz_text(data, size);

	if (ref_parse(s, &r, &err) == SMR_OK) {
		FUZZ_CHECK(r.base && r.base[0]);
		FUZZ_CHECK(r.ancestors >= 0);
		FUZZ_CHECK(!strncmp(s, r.base, strlen(r.base)));
	} else {
		FUZZ_CHECK(err.code == SMR_EUSAGE && err.msg[0]);
	}
	ref_spec_release(&r);
	(void)is_hash_prefix(s);
	free(s);
	return 0;
}
