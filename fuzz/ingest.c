/*
 * ingest.c -- fuzz target: transcript ingestion (domain/ingest.h), every
 * format: plain text, Markdown, ChatGPT and Claude exports, and detection.
 * The first byte picks the format.  Properties: a parsed transcript has
 * turns, each with a role of "user" or "assistant" and valid UTF-8
 * content; an error has a code and a message.
 */
#include "fuzz.h"

#include "domain/ingest.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ingest_format formats[] = {
		INGEST_AUTO, INGEST_TEXT, INGEST_MARKDOWN, INGEST_CHATGPT, INGEST_CLAUDE,
	};
	struct smr_err err = SMR_ERR_INIT;
	struct transcript t = { 0 };
	enum ingest_format f;

	if (!size)
		return 0;
	f = formats[data[0] % (sizeof(formats) / sizeof(formats[0]))];
	if (ingest_parse((const char *)data + 1, size - 1, f, &t, &err) == SMR_OK) {
		FUZZ_CHECK(t.n > 0 && t.n <= INGEST_MAX_TURNS);
		for (size_t i = 0; i < t.n; i++) {
			FUZZ_CHECK(!strcmp(t.turns[i].role, "user") ||
				   !strcmp(t.turns[i].role, "assistant"));
			FUZZ_CHECK(t.turns[i].content);
			FUZZ_CHECK(utf8_valid(t.turns[i].content, strlen(t.turns[i].content)));
		}
		FUZZ_CHECK(!t.title || utf8_valid(t.title, strlen(t.title)));
	} else {
		FUZZ_CHECK(err.code != SMR_OK && err.msg[0]);
	}
	transcript_release(&t);
	return 0;
}
