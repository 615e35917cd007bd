/*
 * ops_ingest.c -- V1 transcript ingestion and context packs: parse a
 * transcript (domain/ingest.c), store it as a session of a Space with its
 * turns in order, and render a session or transcript as Markdown.
 *
 * The transcript is parsed and checked whole before anything is written,
 * so a rejected transcript leaves the store as it was.  On a server with
 * users the user's turns get the signed-in caller as author, as a chat
 * send's do: the transcript's own speaker names are not identities.
 */
#include "domain/contextpack.h"
#include "domain/ingest.h"
#include "ops/auth.h"
#include "ops/context.h"
#include "ops/review_ingest.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define TITLE_MAX_CHARS 200     /* a given title */
#define TITLE_AUTO_CHARS 80     /* a title made from the first request */
#define PROVIDER_INGEST "ingest"

static enum smr_rc check_title(const char *title, struct smr_err *err)
{
	size_t n;

	if (!title)
		return SMR_OK;
	n = strlen(title);
	if (!utf8_valid(title, n))
		return smr_errf(err, SMR_EINVAL, "the title is not valid UTF-8");
	if (utf8_chars(title, n) > TITLE_MAX_CHARS)
		return smr_errf(err, SMR_EINVAL, "the title is longer than %d characters",
				TITLE_MAX_CHARS);
	return SMR_OK;
}

/* The given title, else the export's, else the first line of the first turn; caller frees. */
static char *session_title(const char *title, const struct transcript *t)
{
	const char *first;
	size_t n, cut;

	if (title && *title)
		return xstrdup(title);
	if (t->title && *t->title)
		return xstrdup(t->title);
	first = t->turns[0].content;
	n = strcspn(first, "\n");
	cut = utf8_prefix_bytes(first, n, TITLE_AUTO_CHARS);
	return xasprintf("%.*s%s", (int)cut, first, cut < n ? "..." : "");
}

/* Creates the session and all its turns in one transaction; out gets the stored session. */
static enum smr_rc store_session(struct ops_ctx *ctx, const struct space *sp, const char *title,
				 const struct transcript *t, struct session *out,
				 struct smr_err *err)
{
	struct session s = { 0 };
	struct turn *turns = xcalloc(t->n ? t->n : 1, sizeof(*turns));
	char id[37], now[32];
	enum smr_rc rc;

	ctx->new_id(id);
	ctx->now(now);
	s.id = id;
	s.repo_id = sp->id;
	s.title = (char *)title;
	s.history_base_seq = -1;
	s.created_at = now;
	for (size_t i = 0; i < t->n; i++) {
		turns[i].session_id = id;
		turns[i].role = (char *)t->turns[i].role;
		turns[i].content = t->turns[i].content;
		turns[i].provider = (char *)PROVIDER_INGEST;
		turns[i].prompt_tokens = turns[i].completion_tokens = turns[i].latency_ms = -1;
		turns[i].created_at = now;
		/* as a chat send's: the person (or agent) who brought the user's turns in */
		if (ops_restricted(ctx) && !strcmp(turns[i].role, "user"))
			turns[i].author = (char *)ctx->who->name;
	}
	rc = store_session_import(ctx->st, &s, turns, t->n, err);
	free(turns);
	if (!rc)
		rc = store_session_get(ctx->st, id, out, err);
	return rc;
}

/* Parses a transcript given as a format name (NULL: auto). */
static enum smr_rc parse(const char *text, size_t len, const char *format, struct transcript *t,
			 struct smr_err *err)
{
	enum ingest_format f;
	enum smr_rc rc = ingest_format_parse(format, &f, err);

	memset(t, 0, sizeof(*t));
	if (!rc)
		rc = ingest_parse(text, len, f, t, err);
	return rc;
}

enum smr_rc ops_ingest(struct ops_ctx *ctx, const char *space, const char *transcript,
		       size_t len, const char *format, const char *title, json_t **out,
		       struct smr_err *err)
{
	struct transcript t;
	struct space sp = { 0 };
	struct session s = { 0 };
	char *name = NULL;
	enum smr_rc rc = check_title(title, err);

	memset(&t, 0, sizeof(t));
	if (!rc)
		rc = parse(transcript, len, format, &t, err);
	if (!rc)
		rc = store_space_get(ctx->st, space, &sp, err);
	if (!rc) {
		name = session_title(title, &t);
		rc = store_session(ctx, &sp, name, &t, &s, err);
	}
	if (!rc)
		*out = json_pack("{s:o, s:I, s:s}", "session", ops_session_json(&s, sp.name),
				 "turns", (json_int_t)t.n, "format", ingest_format_name(t.format));
	free(name);
	session_release(&s);
	space_release(&sp);
	transcript_release(&t);
	return rc;
}

static json_t *pack_result(const struct contextpack *p)
{
	char *md = contextpack_render(p);
	json_t *res = json_pack("{s:s, s:I, s:s, s:s}", "markdown", md, "turns", (json_int_t)p->n,
				"title", p->title ? p->title : "", "source", p->source);

	free(md);
	return res;
}

enum smr_rc ops_context_pack_transcript(const char *transcript, size_t len, const char *format,
					const char *title, json_t **out, struct smr_err *err)
{
	static const char *const sources[] = {
		"a transcript", "a text transcript", "a Markdown chat export",
		"a ChatGPT export", "a Claude export",
	};
	struct transcript t;
	struct contextpack p = { 0 };
	enum smr_rc rc = check_title(title, err);

	memset(&t, 0, sizeof(t));
	if (!rc)
		rc = parse(transcript, len, format, &t, err);
	if (!rc) {
		p.title = title && *title ? title : t.title;
		p.source = sources[t.format];
		p.turns = t.turns;
		p.n = t.n;
		*out = pack_result(&p);
	}
	transcript_release(&t);
	return rc;
}

/* The turns of a session after its mount boundary, as ingest turns borrowing their text. */
static struct ingest_turn *pack_turns(const struct turn *v, size_t n)
{
	struct ingest_turn *it = xcalloc(n ? n : 1, sizeof(*it));

	for (size_t i = 0; i < n; i++) {
		it[i].role = v[i].role;
		it[i].content = v[i].content;
	}
	return it;
}

enum smr_rc ops_context_pack_session(struct ops_ctx *ctx, const char *session_id,
				     json_t **out, struct smr_err *err)
{
	struct session s = { 0 };
	struct turn *v = NULL;
	struct ingest_turn *it = NULL;
	struct contextpack p = { 0 };
	char *source = NULL;
	size_t n = 0;
	enum smr_rc rc = store_session_get(ctx->st, session_id, &s, err);

	if (!rc)
		rc = store_turn_list(ctx->st, s.id,
				     s.history_base_seq > 0 ? s.history_base_seq : 0,
				     &v, &n, err);
	if (!rc && !n)
		rc = smr_errf(err, SMR_EUNPROC, "session '%s' has no turns to pack", session_id);
	if (!rc) {
		it = pack_turns(v, n);
		source = xasprintf("session %s", s.id);
		p.title = s.title;
		p.source = source;
		p.turns = it;
		p.n = n;
		*out = pack_result(&p);
	}
	free(source);
	free(it);
	turns_free(v, n);
	session_release(&s);
	return rc;
}

/* The transcript parameter with its length (JSON strings may hold NUL). */
static enum smr_rc transcript_param(const json_t *p, int required, const char **text,
				    size_t *len, struct smr_err *err)
{
	enum smr_rc rc = api_str(p, "transcript", required, text, err);

	*len = !rc && *text ? json_string_length(json_object_get(p, "transcript")) : 0;
	return rc;
}

enum smr_rc ops_api_ingest(struct ops_ctx *ctx, const json_t *p, json_t **result,
			   struct smr_err *err)
{
	const char *space, *text, *format, *title;
	size_t len;
	enum smr_rc rc = api_str(p, "space", 1, &space, err);

	if (!rc)
		rc = transcript_param(p, 1, &text, &len, err);
	if (!rc)
		rc = api_str(p, "format", 0, &format, err);
	if (!rc)
		rc = api_str(p, "title", 0, &title, err);
	if (!rc)
		rc = ops_ingest(ctx, space, text, len, format, title, result, err);
	return rc;
}

enum smr_rc ops_api_context_pack(struct ops_ctx *ctx, const json_t *p, json_t **result,
				 struct smr_err *err)
{
	const char *session_id, *text, *format, *title;
	size_t len;
	enum smr_rc rc = api_str(p, "session_id", 0, &session_id, err);

	if (!rc)
		rc = transcript_param(p, 0, &text, &len, err);
	if (!rc)
		rc = api_str(p, "format", 0, &format, err);
	if (!rc)
		rc = api_str(p, "title", 0, &title, err);
	if (!rc && !session_id == !text)
		rc = smr_errf(err, SMR_EUSAGE,
			      "give either 'session_id' or 'transcript' for a context pack");
	if (!rc && session_id)
		rc = ops_context_pack_session(ctx, session_id, result, err);
	else if (!rc)
		rc = ops_context_pack_transcript(text, len, format, title, result, err);
	return rc;
}
