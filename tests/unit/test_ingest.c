/*
 * test_ingest.c -- transcript ingestion: every format read from the
 * fixtures in tests/fixtures/ingest/ into an exact role/content sequence,
 * detection, the error cases (unknown, empty, oversized, malformed), the
 * context pack, and the ingest and context_pack operations on a real store.
 */
#include "harness.h"
#include "temp_store.h"

#include "domain/contextpack.h"
#include "domain/ingest.h"
#include "ops/api.h"
#include "ops/ops.h"
#include "ops/review_ingest.h"
#include "util/buf.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <unistd.h>

#define FIXTURES "tests/fixtures/ingest/"

struct want {
	const char *role, *content;
};

/* A fixture's text (run the tests from the repository root); caller frees. */
static char *fixture(const char *name, size_t *len)
{
	char *path = xasprintf(FIXTURES "%s", name), *text = NULL;
	struct smr_err err = SMR_ERR_INIT;

	if (sys_read_file(path, INGEST_MAX_BYTES, &text, len, &err))
		test_fail(__FILE__, __LINE__, "%s (run from the repository root)", err.msg);
	free(path);
	return text;
}

static void check_turns(const struct transcript *t, const struct want *w, size_t n)
{
	CHECK_INT(t->n, n);
	for (size_t i = 0; i < n && i < t->n; i++) {
		CHECK_STR(t->turns[i].role, w[i].role);
		CHECK_STR(t->turns[i].content, w[i].content);
	}
}

/* Parses a fixture in format and checks the detected format name and title. */
static void parse_fixture(const char *name, enum ingest_format format, struct transcript *t,
			  const char *want_format, const char *want_title)
{
	size_t len = 0;
	char *text = fixture(name, &len);
	struct smr_err err = SMR_ERR_INIT;

	if (!text)
		return;
	if (ingest_parse(text, len, format, t, &err))
		test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
	CHECK_STR(ingest_format_name(t->format), want_format);
	if (want_title)
		CHECK_STR(t->title, want_title);
	else
		CHECK(t->title == NULL);
	free(text);
}

static enum smr_rc parse_str(const char *text, enum ingest_format f, struct transcript *t,
			     struct smr_err *err)
{
	return ingest_parse(text, strlen(text), f, t, err);
}

TEST(ingest_plain_text_labels)
{
	static const struct want w[] = {
		{ "user", "I want to build a small garden shed. Which wood should I use?" },
		{ "assistant", "Cedar is a good choice: it resists rot and insects.\n\n"
			       "Pressure-treated pine is cheaper but needs sealing every two years." },
		{ "user", "How big should the foundation be?" },
		{ "assistant", "Make the foundation 10 cm wider than the shed on every side." },
	};
	struct transcript t;

	parse_fixture("plain.txt", INGEST_AUTO, &t, "text", NULL);
	check_turns(&t, w, 4);
	transcript_release(&t);
}

TEST(ingest_text_label_variants)
{
	static const struct want w[] = {
		{ "user", "Write a haiku about tea." },
		{ "assistant", "Steam curls from the cup\nleaves unfold in amber warmth\n"
			       "morning finds its voice" },
		{ "user", "Now one about coffee, as Python code." },
		{ "assistant", "Here it is:\n```python\nprint(\"dark roast at dawn\")\n"
			       "# User: this is not a label, it is inside a code block\n```" },
		{ "user", "Thanks!" },
	};
	struct transcript t;

	parse_fixture("labels.txt", INGEST_AUTO, &t, "text", NULL);
	check_turns(&t, w, 5);
	transcript_release(&t);
}

TEST(ingest_text_crlf_and_stamps)
{
	static const struct want w[] = {
		{ "user", "hi there\r\nsecond line" },
		{ "assistant", "hello" },
	};
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;

	/* '\r' ends a line, inner ones are kept as written */
	CHECK_INT(parse_str("[10:02] USER: hi there\r\nsecond line\r\n[10:03] Assistant : hello\r\n",
			    INGEST_AUTO, &t, &err), SMR_OK);
	CHECK_STR(ingest_format_name(t.format), "text");
	CHECK_INT(t.n, 2);
	if (t.n == 2) {
		CHECK_STR(t.turns[0].content, "hi there\nsecond line");
		CHECK_STR(t.turns[1].content, w[1].content);
	}
	transcript_release(&t);
	/* "Username:" and "Me and you:" are not labels */
	CHECK_INT(parse_str("Username: bob\nUser: hi\nMe and you: ok", INGEST_AUTO, &t, &err),
		  SMR_OK);
	CHECK_INT(t.n, 1);
	if (t.n == 1)
		CHECK_STR(t.turns[0].content, "hi\nMe and you: ok");
	transcript_release(&t);
}

TEST(ingest_markdown_headings)
{
	static const struct want w[] = {
		{ "user", "We have five days in the Alps. Where should we start?" },
		{ "assistant", "Start in **Innsbruck**: it has good train links.\n\n"
			       "- Day 1: Innsbruck to Seefeld\n- Day 2: Seefeld to Garmisch" },
		{ "user", "Is that too hard for beginners?" },
		{ "assistant", "~~~text\n## User\nThis heading is inside a fence and stays content.\n"
			       "~~~\nThe climbs are moderate; rent e-bikes if unsure." },
	};
	struct transcript t;

	parse_fixture("headings.md", INGEST_AUTO, &t, "markdown", "Planning a bike tour");
	check_turns(&t, w, 4);
	transcript_release(&t);
}

TEST(ingest_markdown_bold_labels)
{
	static const struct want w[] = {
		{ "user", "Translate \"good morning\" into Hindi." },
		{ "assistant", "सुप्रभात (suprabhāt)." },
		{ "user", "And \"thank you\"?" },
		{ "assistant", "धन्यवाद (dhanyavād)." },
	};
	struct transcript t;

	parse_fixture("bold.md", INGEST_AUTO, &t, "markdown", NULL);
	check_turns(&t, w, 4);
	transcript_release(&t);
}

static const struct want chatgpt_want[] = {
	{ "user", "My sourdough starter smells like nail polish remover. Is it dead?" },
	{ "assistant", "No, it is hungry: the smell is acetone from a starving starter.\n\n"
		       "Feed it twice a day for a few days." },
	{ "user", "Here is a photo. Does it look active?" },
	{ "assistant", "Yes, the bubbles show it is active again." },
};

TEST(ingest_chatgpt_export)
{
	struct transcript t;

	parse_fixture("chatgpt.json", INGEST_AUTO, &t, "chatgpt", "Sourdough starter help");
	check_turns(&t, chatgpt_want, 4);
	transcript_release(&t);
	parse_fixture("chatgpt.json", INGEST_CHATGPT, &t, "chatgpt", "Sourdough starter help");
	check_turns(&t, chatgpt_want, 4);
	transcript_release(&t);
}

/* Without current_node the path follows the last child from the root; as a one-element list. */
TEST(ingest_chatgpt_without_current_node)
{
	size_t len = 0;
	char *text = fixture("chatgpt.json", &len), *dumped;
	json_t *conv = text ? json_loads(text, 0, NULL) : NULL, *list;
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;

	CHECK(conv != NULL);
	json_object_del(conv, "current_node");
	list = json_pack("[o]", conv);
	dumped = json_dumps(list, 0);
	json_decref(list);
	CHECK_INT(parse_str(dumped, INGEST_AUTO, &t, &err), SMR_OK);
	check_turns(&t, chatgpt_want, 4);
	transcript_release(&t);
	free(dumped);
	free(text);
}

TEST(ingest_chatgpt_bad_shapes)
{
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(parse_str("[{\"mapping\": {}}, {\"mapping\": {}}]", INGEST_AUTO, &t, &err),
		  SMR_EUNPROC);
	CHECK(strstr(err.msg, "holds 2 conversations"));
	transcript_release(&t);
	CHECK_INT(parse_str("{\"current_node\": \"a\", \"mapping\": {"
			    "\"a\": {\"parent\": \"b\", \"message\": null},"
			    "\"b\": {\"parent\": \"a\", \"message\": null}}}",
			    INGEST_AUTO, &t, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "cycle"));
	transcript_release(&t);
	CHECK_INT(parse_str("{\"chat_messages\": []}", INGEST_CHATGPT, &t, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "no 'mapping'"));
	transcript_release(&t);
	CHECK_INT(parse_str("User: hi", INGEST_CHATGPT, &t, &err), SMR_EINVAL);
	CHECK(strstr(err.msg, "not valid JSON"));
	transcript_release(&t);
	CHECK_INT(parse_str("{\"mapping\": {\"r\": {\"message\": {\"author\": {\"role\": \"user\"},"
			    " \"content\": {\"parts\": [\"a\\u0000b\"]}}}}}",
			    INGEST_AUTO, &t, &err), SMR_EINVAL);
	CHECK(strstr(err.msg, "NUL"));
	transcript_release(&t);
}

TEST(ingest_claude_export)
{
	static const struct want w[] = {
		{ "user", "Which houseplant survives a dark room?" },
		{ "assistant", "A ZZ plant or a snake plant.\n\n"
			       "Both tolerate low light and rare watering." },
		{ "user", "How often do I water a ZZ plant?" },
		{ "assistant", "Every two to three weeks, when the soil is dry." },
	};
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;

	parse_fixture("claude.json", INGEST_AUTO, &t, "claude", "Choosing a houseplant");
	check_turns(&t, w, 4);
	transcript_release(&t);
	/* a single conversation object works too */
	CHECK_INT(parse_str("{\"name\": \"x\", \"chat_messages\": [{\"sender\": \"human\","
			    " \"text\": \"hello\"}]}", INGEST_AUTO, &t, &err), SMR_OK);
	CHECK_INT(t.n, 1);
	CHECK_STR(t.title, "x");
	transcript_release(&t);
}

TEST(ingest_unknown_and_wrong_formats)
{
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;
	enum ingest_format f;
	size_t len = 0;
	char *md = fixture("headings.md", &len);

	CHECK_INT(parse_str("Some notes\nwith no speaker labels at all.", INGEST_AUTO, &t, &err),
		  SMR_EUNPROC);
	CHECK(strstr(err.msg, "unknown transcript format"));
	transcript_release(&t);
	CHECK_INT(parse_str("{\"messages\": []}", INGEST_AUTO, &t, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "neither a ChatGPT export"));
	transcript_release(&t);
	CHECK_INT(parse_str("{\"broken\": ", INGEST_AUTO, &t, &err), SMR_EINVAL);
	CHECK(strstr(err.msg, "not valid JSON"));
	transcript_release(&t);
	/* Markdown headings read as plain text have no labels, so no turns */
	CHECK_INT(ingest_parse(md, len, INGEST_TEXT, &t, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "no turns"));
	transcript_release(&t);
	CHECK_INT(ingest_format_parse("pdf", &f, &err), SMR_EINVAL);
	CHECK(strstr(err.msg, "unknown transcript format 'pdf'"));
	CHECK_INT(ingest_format_parse("markdown", &f, &err), SMR_OK);
	CHECK_INT(f, INGEST_MARKDOWN);
	free(md);
}

TEST(ingest_empty_transcripts)
{
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(parse_str("", INGEST_AUTO, &t, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "empty"));
	transcript_release(&t);
	CHECK_INT(parse_str(" \n\t\n", INGEST_TEXT, &t, &err), SMR_EUNPROC);
	transcript_release(&t);
	CHECK_INT(parse_str("User:\n\nAssistant:   \nSystem: be nice\n", INGEST_AUTO, &t, &err),
		  SMR_EUNPROC);
	CHECK(strstr(err.msg, "has no turns"));
	transcript_release(&t);
	CHECK_INT(parse_str("{\"chat_messages\": [{\"sender\": \"human\", \"text\": \"  \"}]}",
			    INGEST_AUTO, &t, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "has no turns"));
	transcript_release(&t);
}

TEST(ingest_oversized_and_malformed_input)
{
	struct transcript t;
	struct smr_err err = SMR_ERR_INIT;
	struct buf b = BUF_INIT(0);
	char *big = xmalloc(INGEST_MAX_BYTES + 2);

	memset(big, 'a', INGEST_MAX_BYTES + 1);
	memcpy(big, "User: ", 6);
	big[INGEST_MAX_BYTES + 1] = '\0';
	CHECK_INT(ingest_parse(big, INGEST_MAX_BYTES + 1, INGEST_AUTO, &t, &err), SMR_ETOOBIG);
	CHECK(strstr(err.msg, "larger than"));
	transcript_release(&t);
	/* exactly at the cap is fine */
	CHECK_INT(ingest_parse(big, INGEST_MAX_BYTES, INGEST_AUTO, &t, &err), SMR_OK);
	CHECK_INT(t.n, 1);
	transcript_release(&t);
	free(big);
	for (int i = 0; i < INGEST_MAX_TURNS + 1; i++)
		buf_adds(&b, i % 2 ? "AI: b\n" : "User: a\n");
	CHECK_INT(ingest_parse(b.ptr, b.len, INGEST_AUTO, &t, &err), SMR_ETOOBIG);
	CHECK(strstr(err.msg, "more than 10000 turns"));
	transcript_release(&t);
	buf_release(&b);
	CHECK_INT(ingest_parse("User: \xC3\x28", 8, INGEST_AUTO, &t, &err), SMR_EINVAL);
	CHECK(strstr(err.msg, "UTF-8"));
	transcript_release(&t);
	CHECK_INT(ingest_parse("User: a\0b", 9, INGEST_AUTO, &t, &err), SMR_EINVAL);
	CHECK(strstr(err.msg, "NUL"));
	transcript_release(&t);
}

TEST(contextpack_renders_and_reads_back)
{
	size_t len = 0;
	char *text = fixture("plain.txt", &len), *md;
	struct transcript t, back;
	struct contextpack p = { 0 };
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(ingest_parse(text, len, INGEST_AUTO, &t, &err), SMR_OK);
	p.title = "Garden shed";
	p.source = "a text transcript";
	p.turns = t.turns;
	p.n = t.n;
	md = contextpack_render(&p);
	CHECK(!strncmp(md, "# Context pack: Garden shed\n\n4 turns from a text transcript:"
		       " 2 by the user, 2 by the assistant. It opens with: \"I want to build",
		       120));
	CHECK(strstr(md, "\n## Conversation\n\n### User\n\nI want to build a small garden shed."));
	CHECK(strstr(md, "\n### Assistant\n\nCedar is a good choice"));
	/* the pack is itself a Markdown transcript with the same turns */
	CHECK_INT(ingest_parse(md, strlen(md), INGEST_AUTO, &back, &err), SMR_OK);
	CHECK_STR(ingest_format_name(back.format), "markdown");
	CHECK_STR(back.title, "Context pack: Garden shed");
	CHECK_INT(back.n, t.n);
	for (size_t i = 0; i < t.n && i < back.n; i++) {
		CHECK_STR(back.turns[i].role, t.turns[i].role);
		CHECK_STR(back.turns[i].content, t.turns[i].content);
	}
	transcript_release(&back);
	transcript_release(&t);
	free(md);
	free(text);
}

TEST(contextpack_renders_a_draft)
{
	struct ingest_turn turns[] = { { "user", (char *)"Plan the launch" } };
	json_t *draft = json_pack("{s:s, s:s, s:[s], s:[s], s:[{s:s, s:s}], s:[s],"
				  " s:[{s:s, s:s}], s:[{s:s, s:s}]}",
				  "title", "Launch plan", "summary", "We launch in May.",
				  "decisions", "Launch on May 4", "assumptions", "Beta is stable",
				  "tasks", "text", "Write notes", "status", "done",
				  "open_questions", "Who announces it?",
				  "entities", "name", "Acme", "kind", "company",
				  "artifacts", "name", "notes.md", "content", "``` nested ```");
	struct contextpack p = { "Launch", NULL, turns, 1, draft };
	char *md = contextpack_render(&p);

	CHECK(strstr(md, "1 turn from a transcript: 1 by the user, 0 by the assistant."));
	/* the draft in the checkpoint Markdown of MCP's resources (markdown.h), a level down */
	CHECK(strstr(md, "## Draft checkpoint\n\n### Launch plan\n\nWe launch in May.\n\n"
			 "#### Decisions\n\n- Launch on May 4\n\n#### Assumptions\n\n"
			 "- Beta is stable\n\n#### Tasks\n\n- [x] Write notes\n\n"
			 "#### Open questions\n\n- Who announces it?\n\n#### Entities\n\n"
			 "- **Acme** (company)\n\n#### Artifacts\n\n##### notes.md\n\n````\n"
			 "``` nested ```\n````\n\n## Conversation\n"));
	free(md);
	json_decref(draft);
}

/* ---- the operations on a real store ---- */

struct fixture {
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx;
};

static void setup(struct fixture *f)
{
	struct space sp = { 0 };

	temp_store_open(f->path, &f->st, &f->ctx);
	CHECK_INT(ops_space_create(f->ctx, "backfill", NULL, &sp, NULL), SMR_OK);
	space_release(&sp);
}

static void teardown(struct fixture *f)
{
	temp_store_close(f->path, f->ctx);
}

static size_t session_count(struct fixture *f)
{
	struct space sp = { 0 };
	struct session *v = NULL;
	size_t n = 0;

	CHECK_INT(store_space_get(f->st, "backfill", &sp, NULL), SMR_OK);
	CHECK_INT(store_session_list(f->st, sp.id, &v, &n, NULL), SMR_OK);
	sessions_free(v, n);
	space_release(&sp);
	return n;
}

TEST(ingest_operation_creates_session_with_turns)
{
	struct fixture f;
	size_t len = 0, n = 0;
	char *text = fixture("chatgpt.json", &len);
	json_t *params, *res = NULL, *s;
	struct turn *v = NULL;
	struct smr_err err = SMR_ERR_INIT;

	setup(&f);
	params = json_pack("{s:s, s:s}", "space", "backfill", "transcript", text);
	CHECK_INT(api_call(f.ctx, "ingest", params, &res, &err), SMR_OK);
	s = json_object_get(res, "session");
	CHECK_INT(json_integer_value(json_object_get(res, "turns")), 4);
	CHECK_STR(json_string_value(json_object_get(res, "format")), "chatgpt");
	CHECK_STR(json_string_value(json_object_get(s, "title")), "Sourdough starter help");
	CHECK_STR(json_string_value(json_object_get(s, "space")), "backfill");
	CHECK_INT(json_integer_value(json_object_get(s, "last_seq")), 4);
	CHECK_INT(store_turn_list(f.st, json_string_value(json_object_get(s, "id")), 0, &v,
				  &n, &err), SMR_OK);
	CHECK_INT(n, 4);
	for (size_t i = 0; i < n && i < 4; i++) {
		CHECK_INT(v[i].seq, (int64_t)i + 1);
		CHECK_STR(v[i].role, chatgpt_want[i].role);
		CHECK_STR(v[i].content, chatgpt_want[i].content);
		CHECK_STR(v[i].provider, "ingest");
	}
	turns_free(v, n);
	json_decref(params);
	json_decref(res);
	free(text);
	teardown(&f);
}

TEST(ingest_operation_errors_write_nothing)
{
	struct fixture f;
	json_t *params, *res = NULL;
	struct smr_err err = SMR_ERR_INIT;
	static const struct {
		const char *space, *transcript, *format;
		enum smr_rc rc;
	} cases[] = {
		{ "backfill", "no labels here", NULL, SMR_EUNPROC },
		{ "backfill", "User:\nAssistant:\n", NULL, SMR_EUNPROC },
		{ "backfill", "User: hi", "pdf", SMR_EINVAL },
		{ "nosuch", "User: hi", NULL, SMR_ENOTFOUND },
		{ "backfill", "{\"mapping\": 1}", NULL, SMR_EUNPROC },
	};

	setup(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		params = json_pack("{s:s, s:s, s:s?}", "space", cases[i].space, "transcript",
				   cases[i].transcript, "format", cases[i].format);
		CHECK_INT(api_call(f.ctx, "ingest", params, &res, &err), cases[i].rc);
		CHECK(res == NULL);
		json_decref(params);
	}
	params = json_pack("{s:s, s:s, s:s}", "space", "backfill", "transcript", "User: hi",
			   "title", "");
	CHECK_INT(api_call(f.ctx, "ingest", params, &res, &err), SMR_OK);
	CHECK_STR(json_string_value(json_object_get(json_object_get(res, "session"), "title")),
		  "hi");
	CHECK_INT(session_count(&f), 1);
	json_decref(res);
	json_decref(params);
	teardown(&f);
}

TEST(context_pack_operation)
{
	struct fixture f;
	json_t *params, *res = NULL;
	struct smr_err err = SMR_ERR_INIT;
	const char *md, *id;

	setup(&f);
	params = json_pack("{s:s, s:s, s:s}", "space", "backfill", "transcript",
			   "User: What is 2+2?\nAssistant: 4.", "title", "Sums");
	CHECK_INT(api_call(f.ctx, "ingest", params, &res, &err), SMR_OK);
	id = json_string_value(json_object_get(json_object_get(res, "session"), "id"));
	json_decref(params);
	params = json_pack("{s:s}", "session_id", id);
	json_decref(res);
	res = NULL;
	CHECK_INT(api_call(f.ctx, "context_pack", params, &res, &err), SMR_OK);
	md = json_string_value(json_object_get(res, "markdown"));
	CHECK(md && !strncmp(md, "# Context pack: Sums\n\n2 turns from session ", 43));
	CHECK(md && strstr(md, "### User\n\nWhat is 2+2?\n\n### Assistant\n\n4.\n"));
	CHECK_INT(json_integer_value(json_object_get(res, "turns")), 2);
	json_decref(res);
	res = NULL;
	json_decref(params);

	params = json_pack("{s:s}", "transcript", "**User:** hi\n**Assistant:** hello");
	CHECK_INT(api_call(f.ctx, "context_pack", params, &res, &err), SMR_OK);
	md = json_string_value(json_object_get(res, "markdown"));
	CHECK(md && strstr(md, "2 turns from a Markdown chat export"));
	CHECK_STR(json_string_value(json_object_get(res, "source")), "a Markdown chat export");
	json_decref(res);
	res = NULL;
	json_decref(params);

	params = json_pack("{}");
	CHECK_INT(api_call(f.ctx, "context_pack", params, &res, &err), SMR_EUSAGE);
	json_decref(params);
	params = json_pack("{s:s, s:s}", "session_id", "x", "transcript", "User: hi");
	CHECK_INT(api_call(f.ctx, "context_pack", params, &res, &err), SMR_EUSAGE);
	json_decref(params);
	params = json_pack("{s:s}", "session_id", "no-such-session");
	CHECK_INT(api_call(f.ctx, "context_pack", params, &res, &err), SMR_ENOTFOUND);
	json_decref(params);
	CHECK(res == NULL);
	CHECK_INT(session_count(&f), 1);
	teardown(&f);
}
