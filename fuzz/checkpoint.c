/*
 * checkpoint.c -- fuzz target: checkpoint JSON through validation and
 * normalisation (domain/checkpoint.h), then the content-addressing
 * property: the JSON a checkpoint is shown as, read back, gives the same
 * canonical form and so the same hash; and normalising is idempotent.
 */
#include "fuzz.h"

#include "domain/checkpoint.h"

#include <jansson.h>

/* c's JSON as a client gets it (text), read back into a fresh checkpoint. */
static void reread(const struct checkpoint *c, struct checkpoint *out)
{
	json_t *doc = checkpoint_to_json(c);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_t *again;
	struct smr_err err = SMR_ERR_INIT;

	FUZZ_CHECK(text);
	again = json_loads(text, 0, NULL);
	FUZZ_CHECK(again);
	checkpoint_init(out);
	FUZZ_CHECK(checkpoint_from_json(again, out, &err) == SMR_OK);
	/* what is not in the user's fields comes from the write, as in ops */
	out->parent_hash = c->parent_hash ? strdup(c->parent_hash) : NULL;
	out->created_at = strdup(c->created_at);
	json_decref(again);
	json_decref(doc);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c, back;
	char h1[HASH_HEX_LEN + 1], h2[HASH_HEX_LEN + 1];
	char *canon1, *canon2;
	json_t *in = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);

	if (!in)
		return 0;
	checkpoint_init(&c);
	if (checkpoint_from_json(in, &c, &err) != SMR_OK) {
		FUZZ_CHECK(err.code != SMR_OK && err.msg[0]);
		goto out;
	}
	c.parent_hash = strdup("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	c.created_at = strdup("2026-01-02T03:04:05.000006Z");
	checkpoint_compute_hash(&c, h1);
	reread(&c, &back);
	checkpoint_compute_hash(&back, h2);
	canon1 = checkpoint_canonical(&c);
	canon2 = checkpoint_canonical(&back);
	if (strcmp(canon1, canon2))
		fprintf(stderr, "canonical forms differ:\n%s\n%s\n", canon1, canon2);
	FUZZ_CHECK(!strcmp(canon1, canon2));
	FUZZ_CHECK(!strcmp(h1, h2));
	FUZZ_CHECK(checkpoint_check_limits(&back, &err) == SMR_OK);
	free(canon1);
	free(canon2);
	checkpoint_release(&back);
out:
	checkpoint_release(&c);
	json_decref(in);
	return 0;
}
