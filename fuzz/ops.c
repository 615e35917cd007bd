/*
 * ops.c -- fuzz target: the operations' JSON face (ops/api.h), the one
 * every transport reaches (HTTP /api/ops/{op}, the remote CLI, MCP), on a
 * fresh in-memory store.  The input is lines; each line's first byte picks
 * an operation of this build that calls no provider and the rest is its
 * params.  There is no chat runtime here (no runtime), so chat.send and
 * draft.create may answer runtime_required()'s "not started", the one
 * internal error that is expected.  Properties: no operation reports an internal error (a bug or an
 * I/O failure) for any input; a failure carries a message; a result is
 * JSON; and after the whole sequence fsck finds nothing wrong.
 */
#include "store.h"

#include <jansson.h>

static void run_line(struct ops_ctx *ctx, const char *line, size_t len)
{
	struct smr_err err = SMR_ERR_INIT;
	json_t *params, *result = NULL;
	const struct api_op **ops;
	size_t n;
	char *text;
	enum smr_rc rc;

	if (!len)
		return;
	ops = fuzz_ops(&n);
	params = json_loadb(line + 1, len - 1, JSON_REJECT_DUPLICATES, NULL);
	if (!params)
		return;
	rc = api_call(ctx, ops[(unsigned char)line[0] % n]->name, params, &result, &err);
	if (rc == SMR_EINTERNAL && strstr(err.msg, "chat runtime was not started"))
		rc = SMR_EUNAVAIL;
	if (rc == SMR_EINTERNAL)
		fprintf(stderr, "%s: internal error: %s\n", ops[(unsigned char)line[0] % n]->name,
			err.msg);
	FUZZ_CHECK(rc != SMR_EINTERNAL);
	FUZZ_CHECK(rc == SMR_OK || err.msg[0]);
	FUZZ_CHECK(rc != SMR_OK || result);
	if (result) {
		text = json_dumps(result, JSON_ENCODE_ANY);
		FUZZ_CHECK(text);
		free(text);
	}
	json_decref(result);
	json_decref(params);
}

/* SMRITI_FUZZ_LIST_OPS=1 prints "BYTE NAME" per operation, for writing seeds. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct api_op **ops;
	size_t n;

	(void)argc;
	(void)argv;
	ops = fuzz_ops(&n);
	if (getenv("SMRITI_FUZZ_LIST_OPS")) {
		for (size_t i = 0; i < n; i++)
			printf("%zu %s\n", i, ops[i]->name);
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct ops_ctx *ctx = NULL;

	if (size > 65536)
		return 0;
	fuzz_store_open(&ctx);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		run_line(ctx, p, len);
		p += len + 1;
	}
	fuzz_check_fsck(ctx, "after the sequence");
	ops_close(ctx);
	return 0;
}
