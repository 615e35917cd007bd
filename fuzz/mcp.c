/*
 * mcp.c -- fuzz target: MCP messages (JSON-RPC over stdio or one HTTP
 * body) handled by a session whose tools run on a fresh in-memory store.
 * The input is lines, one message each, as on stdio.  Properties: every
 * answer is one line of JSON, a JSON-RPC 2.0 response with either a result
 * or an error, never both.
 */
#include "store.h"

#include "mcp/mcp.h"

#include <jansson.h>

static void check_answer(const char *text)
{
	json_t *doc = json_loads(text, 0, NULL);

	FUZZ_CHECK(doc);
	FUZZ_CHECK(!strchr(text, '\n'));
	FUZZ_CHECK(json_is_object(doc));
	FUZZ_CHECK(!strcmp(json_string_value(json_object_get(doc, "jsonrpc")) ?: "", "2.0"));
	FUZZ_CHECK(!json_object_get(doc, "result") != !json_object_get(doc, "error"));
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct ops_ctx *ctx = NULL;
	struct mcp_session *s;

	if (size > 65536)
		return 0;
	fuzz_store_open(&ctx);
	s = mcp_session_new(mcp_call_local, ctx, "fuzz");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *answer = mcp_handle_text(s, p, len);

		if (answer)
			check_answer(answer);
		free(answer);
		p += len + 1;
	}
	mcp_session_free(s);
	ops_close(ctx);
	return 0;
}
