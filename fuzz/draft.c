/*
 * draft.c -- fuzz target: a model's draft reply checked against the
 * checkpoint schema (draft_validate, domain/draft.h).  Properties: a valid
 * draft, validated again, is accepted unchanged (normalising is
 * idempotent), and it is a checkpoint the domain accepts.
 */
#include "fuzz.h"

#include "domain/checkpoint.h"
#include "domain/draft.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *reply = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	json_t *out = NULL, *again = NULL;
	struct checkpoint c;

	if (!reply)
		return 0;
	if (draft_validate(reply, &out, &err) != SMR_OK) {
		FUZZ_CHECK(!out && err.code == SMR_EUNPROC && err.msg[0]);
		json_decref(reply);
		return 0;
	}
	FUZZ_CHECK(json_is_object(out));
	/* the draft without its metadata is a reply the schema accepts again */
	json_t *bare = json_deep_copy(out);
	json_object_del(bare, "metadata");
	FUZZ_CHECK(draft_validate(bare, &again, &err) == SMR_OK);
	FUZZ_CHECK(json_equal(out, again));
	checkpoint_init(&c);
	FUZZ_CHECK(checkpoint_from_json(out, &c, &err) == SMR_OK);
	checkpoint_release(&c);
	json_decref(bare);
	json_decref(again);
	json_decref(out);
	json_decref(reply);
	return 0;
}
