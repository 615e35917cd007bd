/*
 * bundle_text.c -- fuzz target: a bundle's text as `smriti import` reads it
 * (domain/bundle.h's bundle_read, walked with util/jspan.h rather than
 * parsed whole), and jspan_compact() on the same bytes.  Properties: a
 * refusal is SMR_EINVAL or SMR_EUNPROC with a message; a bundle read is
 * written back (the export's writer, from the text the reader kept for a
 * store) to a text that reads again and writes to itself; whatever
 * jspan_compact() claims is jansson's own text is what jansson writes; an
 * array jspan_array_next() cuts whole and jansson reads has those values.
 */
#include "fuzz.h"

#include "domain/bundle.h"
#include "util/jspan.h"

static char *write_back(const struct space_bundle *v, size_t n, size_t *len)
{
	struct bundle_writer *w = bundle_writer_new();

	for (size_t i = 0; i < n; i++) {
		bundle_writer_space(w, &v[i].space);
		for (size_t j = 0; j < v[i].n_checkpoints; j++)
			bundle_writer_checkpoint(w, &v[i].checkpoints[j], &v[i].texts[j]);
		bundle_writer_space_end(w, &v[i]);
	}
	return bundle_writer_finish(w, len);
}

static void check_compact(const char *s, size_t size)
{
	json_t *v = json_loadb(s, size, JSON_DECODE_ANY, NULL);
	int form = jspan_compact(s, size);
	char *out;

	if (!v || !form) {
		json_decref(v);
		return;
	}
	out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
			 (form == JSPAN_SORTED ? JSON_SORT_KEYS : 0));
	FUZZ_CHECK(out && strlen(out) == size && !memcmp(out, s, size));
	free(out);
	json_decref(v);
}

static void check_array(const char *s, size_t size)
{
	json_t *v = json_loadb(s, size, JSON_DECODE_ANY, NULL), *one;
	const char *at = NULL;
	size_t len = 0, i = 0;
	int more;

	while ((more = jspan_array_next(s, size, &at, &len)) > 0) {
		FUZZ_CHECK(at > s && at + len < s + size);
		one = json_is_array(v) ? json_loadb(at, len, JSON_DECODE_ANY, NULL) : NULL;
		FUZZ_CHECK(!json_is_array(v) || json_equal(one, json_array_get(v, i)));
		json_decref(one);
		i++;
	}
	FUZZ_CHECK(more < 0 || !json_is_array(v) || i == json_array_size(v));
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space_bundle *v = NULL, *again = NULL;
	size_t n = 0, m = 0, len, len2;
	char *s = fuzz_text(data, size), *one, *two;

	check_compact(s, size);
	check_array(s, size);
	if (bundle_read(s, size, &v, &n, &err) != SMR_OK) {
		FUZZ_CHECK((err.code == SMR_EINVAL || err.code == SMR_EUNPROC) && err.msg[0]);
		FUZZ_CHECK(v == NULL);
		free(s);
		return 0;
	}
	one = write_back(v, n, &len);
	FUZZ_CHECK(bundle_read(one, len, &again, &m, &err) == SMR_OK && m == n);
	two = write_back(again, m, &len2);
	FUZZ_CHECK(len2 == len && !memcmp(one, two, len));
	space_bundles_free(again, m);
	space_bundles_free(v, n);
	free(two);
	free(one);
	free(s);
	return 0;
}
