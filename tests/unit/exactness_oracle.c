/*
 * exactness_oracle.c -- the oracle of the context-exactness property test
 * (see exactness.h): what reaches the provider, worked out from the
 * scenario's model and the documented rules alone.  Nothing here calls the
 * code under test (domain/context.c, provider/shape.c, ops/full): the
 * rules are restated from the documents they come from.
 *
 *  - isolation by sequence numbers (docs/providers.md): only turns
 *    with sequence_number > history_base_seq; v5.3 makes the boundary
 *    structural (a mounted fork holds only turns after the mount).
 *  - a provider switch keeps the session (docs/providers.md): the
 *    same context for every provider.
 *  - docs/providers.md: artifacts capped at 2,000 characters
 *    (code points, the cut marked "[... truncated, N more characters]");
 *    failed turns are included as written; OpenAI-style servers get the
 *    system text as a first "system" message, Anthropic at the top level
 *    with messages alternating from "user" (runs of one role joined by a
 *    blank line, "(earlier conversation omitted)" before a leading reply);
 *    empty messages are not sent.
 *  - no earlier Checkpoint in a draft's prompt (docs/draft.md): a draft prompt holds the session's turns after
 *    its mount boundary and no Checkpoint text.
 */
#include "exactness.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLACEHOLDER "(earlier conversation omitted)"

const char *ex_tok_str(const struct ex_scen *sc, int i)
{
	return sc->toks[i].s;
}

int ex_tok_new(struct ex_scen *sc, char letter, const char *fmt, ...)
{
	struct ex_tok *t;
	va_list ap;

	if (sc->n_tok == EX_MAX_TOKS)
		abort();        /* the generator keeps scenarios smaller than this */
	t = &sc->toks[sc->n_tok];
	snprintf(t->s, sizeof(t->s), "{%c%d.%06x}", letter, ++sc->next_tok, sc->tag);
	va_start(ap, fmt);
	vsnprintf(t->what, sizeof(t->what), fmt, ap);
	va_end(ap);
	return sc->n_tok++;
}

int ex_fail(struct ex_scen *sc, const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	if (sc->why.len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	buf_adds(&sc->why, line);
	return -1;
}

size_t ex_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Bytes of the first max code points of s. */
static size_t prefix_bytes(const char *s, size_t max)
{
	size_t i = 0, chars = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (chars == max)
				break;
			chars++;
		}
	}
	return i;
}

/* ---- tokens found in a text ---- */

/* The index of the token at s (which starts with '{'), -2 when unknown, -1 when none. */
static int tok_at(const struct ex_scen *sc, const char *s, size_t *len)
{
	const char *p = s + 1;

	if (*p < 'a' || *p > 'z')
		return -1;
	for (p++; *p >= '0' && *p <= '9'; p++)
		;
	if (*p != '.')
		return -1;
	for (p++; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
		;
	if (*p != '}')
		return -1;
	*len = (size_t)(p + 1 - s);
	for (int i = 0; i < sc->n_tok; i++)
		if (strlen(sc->toks[i].s) == *len && !memcmp(sc->toks[i].s, s, *len))
			return i;
	return -2;
}

/* Marks in seen[] every token of text; 1 when text holds a token of no token of this scenario. */
static int scan(const struct ex_scen *sc, const char *text, unsigned char *seen, char *stranger,
		size_t stranger_size)
{
	int strange = 0, i;
	size_t len;

	for (const char *p = strchr(text, '{'); p; p = strchr(p + 1, '{')) {
		i = tok_at(sc, p, &len);
		if (i >= 0)
			seen[i] = 1;
		if (i == -2 && !strange++)
			snprintf(stranger, stranger_size, "%.*s", (int)len, p);
	}
	return strange;
}

/* Compares tokens seen with tokens wanted; reports the first difference in where. */
static int compare_toks(struct ex_scen *sc, const unsigned char *seen, const unsigned char *want,
			const char *where)
{
	for (int i = 0; i < sc->n_tok; i++) {
		if (seen[i] && !want[i]) {
			ex_fail(sc, "%s holds %s, which it must not: the %s", where,
				sc->toks[i].s, sc->toks[i].what);
			return -1;
		}
		if (!seen[i] && want[i]) {
			ex_fail(sc, "%s lacks %s: the %s", where, sc->toks[i].s, sc->toks[i].what);
			return -1;
		}
	}
	return 0;
}

/* ---- the expected messages ---- */

static void add_msg(json_t *a, const char *role, const char *content, int anthropic)
{
	json_t *last = json_array_get(a, json_array_size(a) - 1);
	char *joined;

	if (!*content)
		return;
	if (anthropic && last && !strcmp(json_string_value(json_object_get(last, "role")), role)) {
		joined = xasprintf("%s\n\n%s",
				   json_string_value(json_object_get(last, "content")), content);
		json_object_set_new(last, "content", json_string(joined));
		free(joined);
		return;
	}
	if (anthropic && !last && !strcmp(role, "assistant"))
		json_array_append_new(a, json_pack("{s:s, s:s}", "role", "user", "content",
						   PLACEHOLDER));
	json_array_append_new(a, json_pack("{s:s, s:s}", "role", role, "content", content));
}

json_t *ex_expected_messages(const struct ex_scen *sc, int si, int64_t base, int skip_last,
			     const char *message, int anthropic)
{
	const struct ex_sess *s = &sc->ss[si];
	json_t *a = json_array();
	int n = s->n - (skip_last ? 1 : 0);

	for (int i = 0; i < n; i++)
		if (s->turns[i].seq > base)
			add_msg(a, s->turns[i].user ? "user" : "assistant", s->turns[i].content,
				anthropic);
	add_msg(a, "user", message, anthropic);
	return a;
}

/* ---- the system text ---- */

static void want_state(const struct ex_scen *sc, int ck, unsigned char *want, int *titles)
{
	const struct ex_ck *c = &sc->cks[ck];

	if (c->title)
		want[c->title_tok] = 1;
	*titles = c->title != NULL;
	want[c->summary_tok] = 1;
	for (int l = 0; l < EX_LISTS; l++)
		for (int i = 0; i < c->n[l]; i++)
			want[c->items[l][i].tok] = 1;
}

/* Leaves title tokens out of both sets (a merge's title is its own; the model does not know it). */
static void forget_titles(const struct ex_scen *sc, unsigned char *seen, unsigned char *want)
{
	for (int i = 0; i < sc->n_tok; i++)
		if (sc->toks[i].s[1] == 't')
			seen[i] = want[i] = 0;
}

static int check_artifact(struct ex_scen *sc, const char *sys, const struct ex_item *it,
			  int ck)
{
	const char *tok = ex_tok_str(sc, it->tok), *at = strstr(sys, tok), *after;
	size_t n = ex_chars(it->content), keep = prefix_bytes(it->content, EX_ART_CAP);
	char mark[80];

	if (!at || strstr(at + 1, tok))
		return ex_fail(sc, "artifact %s of checkpoint %d: its content is in the system text"
			       " %s", tok, ck, at ? "twice" : "nowhere");
	if (strncmp(at, it->content, keep))
		return ex_fail(sc, "artifact %s of checkpoint %d (%zu characters): the system text"
			       " does not hold its first %d characters as they are (a cut in the"
			       " wrong place, or inside a UTF-8 character)", tok, ck, n, EX_ART_CAP);
	after = at + keep;
	if (*after == '\n')
		after++;
	snprintf(mark, sizeof(mark), "[... truncated, %zu more characters]",
		 n > EX_ART_CAP ? n - EX_ART_CAP : 0);
	if (n > EX_ART_CAP && strncmp(after, mark, strlen(mark)))
		return ex_fail(sc, "artifact %s of checkpoint %d (%zu characters) is not cut at %d"
			       " characters with the mark '%s'", tok, ck, n, EX_ART_CAP, mark);
	if (n <= EX_ART_CAP && !strncmp(after, "[... truncated", 14))
		return ex_fail(sc, "artifact %s of checkpoint %d (%zu characters, within the cap)"
			       " is marked as cut", tok, ck, n);
	return 0;
}

static int check_tasks(struct ex_scen *sc, const char *sys, int ck)
{
	const struct ex_ck *c = &sc->cks[ck];
	char *line;
	int bad;

	for (int i = 0; i < c->n[L_TASK]; i++) {
		line = xasprintf("- [%s] %s", c->items[L_TASK][i].done ? "done" : "open",
				 c->items[L_TASK][i].text);
		bad = !strstr(sys, line);
		if (bad)
			ex_fail(sc, "the system text lacks the task line '%s' of checkpoint %d", line,
				ck);
		free(line);
		if (bad)
			return -1;
	}
	return 0;
}

static int check_system(struct ex_scen *sc, const char *sys, int ck, const char *preamble)
{
	unsigned char seen[EX_MAX_TOKS] = { 0 }, want[EX_MAX_TOKS] = { 0 };
	char stranger[40];
	int titles = 1;
	size_t pl = strlen(preamble);

	if (ck < 0 && strcmp(sys, preamble))
		return ex_fail(sc, "no Checkpoint is mounted, yet the system text is not the"
			       " preamble alone: '%.200s'", sys + (strncmp(sys, preamble, pl) ? 0 : pl));
	if (ck < 0)
		return 0;
	if (strncmp(sys, preamble, pl))
		return ex_fail(sc, "the system text does not start with the preamble: '%.120s'", sys);
	if (!strstr(sys, sc->cks[ck].hash))
		return ex_fail(sc, "the system text does not name the mounted checkpoint %d (%.12s)",
			       ck, sc->cks[ck].hash);
	if (scan(sc, sys, seen, stranger, sizeof(stranger)))
		return ex_fail(sc, "the system text holds %s, text of another scenario", stranger);
	want_state(sc, ck, want, &titles);
	if (!titles)
		forget_titles(sc, seen, want);
	if (compare_toks(sc, seen, want, "the system text (mounted checkpoint)"))
		return -1;
	for (int i = 0; i < sc->cks[ck].n[L_ART]; i++)
		if (check_artifact(sc, sys, &sc->cks[ck].items[L_ART][i], ck))
			return -1;
	return check_tasks(sc, sys, ck);
}

/* ---- one chat request ---- */

static const char *msg_str(const json_t *m, const char *key)
{
	const char *s = json_string_value(json_object_get(m, key));

	return s ? s : "(not a string)";
}

static int compare_messages(struct ex_scen *sc, const json_t *got, const json_t *want)
{
	unsigned char seen[EX_MAX_TOKS] = { 0 }, wanted[EX_MAX_TOKS] = { 0 };
	char stranger[40];
	size_t i;
	int strange = 0;

	for (i = 0; i < json_array_size(got); i++)
		strange |= scan(sc, msg_str(json_array_get(got, i), "content"), seen, stranger,
				sizeof(stranger));
	for (i = 0; i < json_array_size(want); i++)
		scan(sc, msg_str(json_array_get(want, i), "content"), wanted, stranger,
		     sizeof(stranger));
	if (strange)
		return ex_fail(sc, "the message list holds %s, text of another scenario", stranger);
	if (compare_toks(sc, seen, wanted, "the message list"))
		return -1;
	for (i = 0; i < json_array_size(want) || i < json_array_size(got); i++) {
		const json_t *g = json_array_get(got, i), *w = json_array_get(want, i);

		if (!g || !w || strcmp(msg_str(g, "role"), msg_str(w, "role")) ||
		    strcmp(msg_str(g, "content"), msg_str(w, "content")))
			return ex_fail(sc, "message %zu of %zu (want %zu): got %s '%.160s', want %s"
				       " '%.160s'", i, json_array_size(got), json_array_size(want),
				       g ? msg_str(g, "role") : "nothing", g ? msg_str(g, "content") : "",
				       w ? msg_str(w, "role") : "nothing", w ? msg_str(w, "content") : "");
	}
	return 0;
}

/* The system text and the conversation of a request body, per wire format. */
static int split_body(struct ex_scen *sc, const json_t *req, const char **sys, json_t **msgs)
{
	const char *path = json_string_value(json_object_get(req, "path"));
	const json_t *body = json_object_get(req, "body"), *first;

	if (!json_is_object(body))
		return ex_fail(sc, "request to %s: %s", path, json_is_string(body) ?
			       json_string_value(body) : "the body is not a JSON object");
	if (strstr(path, "/messages")) {
		*sys = json_string_value(json_object_get(body, "system"));
		*msgs = json_deep_copy(json_object_get(body, "messages"));
	} else {
		*msgs = json_deep_copy(json_object_get(body, "messages"));
		first = json_array_get(json_object_get(body, "messages"), 0);
		*sys = first && !strcmp(msg_str(first, "role"), "system") ?
		       json_string_value(json_object_get(first, "content")) : NULL;
		if (*sys)
			json_array_remove(*msgs, 0);
	}
	if (!*sys)
		*sys = "";
	return 0;
}

int ex_check_chat(struct ex_scen *sc, const json_t *req, int ck, const json_t *want,
		  const char *preamble)
{
	const char *sys;
	json_t *msgs = NULL;
	int rc = split_body(sc, req, &sys, &msgs);

	if (!rc)
		rc = check_system(sc, sys, ck, preamble);
	if (!rc)
		rc = compare_messages(sc, msgs, want);
	json_decref(msgs);
	return rc;
}

/* ---- a draft request ---- */

int ex_check_draft(struct ex_scen *sc, const json_t *req, int si, const char *preamble)
{
	const struct ex_sess *s = &sc->ss[si];
	unsigned char seen[EX_MAX_TOKS] = { 0 }, want[EX_MAX_TOKS] = { 0 };
	char *text, stranger[40];
	const char *sys;
	json_t *msgs = NULL;
	int rc = split_body(sc, req, &sys, &msgs);

	if (rc)
		return rc;
	text = json_dumps(json_object_get(req, "body"), JSON_COMPACT);
	if (strstr(text, preamble))
		rc = ex_fail(sc, "the draft prompt holds the chat preamble");
	if (!rc && scan(sc, text, seen, stranger, sizeof(stranger)))
		rc = ex_fail(sc, "the draft prompt holds %s, text of another scenario", stranger);
	for (int i = 0; i < s->n; i++)
		scan(sc, s->turns[i].content, want, stranger, sizeof(stranger));
	if (!rc)
		rc = compare_toks(sc, seen, want, "the draft prompt");
	for (int i = 0; !rc && i < s->n; i++)
		if (!strstr(msg_str(json_array_get(msgs, 0), "content"), s->turns[i].content))
			rc = ex_fail(sc, "the draft prompt lacks turn %lld as it was written",
				     (long long)s->turns[i].seq);
	free(text);
	json_decref(msgs);
	return rc;
}

/* ---- a stored checkpoint ---- */

static const char *const list_keys[EX_LISTS] = {
	"decisions", "assumptions", "open_questions", "tasks", "entities", "artifacts",
};

static const json_t *find_item(const json_t *list, const char *key, const char *text)
{
	size_t i;
	const json_t *it;

	json_array_foreach(list, i, it)
		if (!strcmp(msg_str(it, key), text))
			return it;
	return NULL;
}

static int check_list(struct ex_scen *sc, const json_t *doc, int ck, int l)
{
	const json_t *list = json_object_get(doc, list_keys[l]), *it;
	const struct ex_item *m;
	const char *key = l == L_ENT || l == L_ART ? "name" : "text";

	if ((int)json_array_size(list) != sc->cks[ck].n[l])
		return ex_fail(sc, "checkpoint %d as stored has %zu %s, the model %d", ck,
			       json_array_size(list), list_keys[l], sc->cks[ck].n[l]);
	for (int i = 0; i < sc->cks[ck].n[l]; i++) {
		m = &sc->cks[ck].items[l][i];
		it = find_item(list, key, m->text);
		if (!it)
			return ex_fail(sc, "checkpoint %d as stored lacks %s '%.80s'", ck,
				       list_keys[l], m->text);
		if (l == L_TASK && strcmp(msg_str(it, "status"), m->done ? "done" : "open"))
			return ex_fail(sc, "checkpoint %d as stored has task '%.80s' %s", ck, m->text,
				       msg_str(it, "status"));
		if (l == L_ART && strcmp(msg_str(it, "content"), m->content))
			return ex_fail(sc, "checkpoint %d as stored has other content in artifact"
				       " '%s'", ck, m->text);
	}
	return 0;
}

int ex_check_stored(struct ex_scen *sc, const json_t *doc, int ck)
{
	const struct ex_ck *c = &sc->cks[ck];

	if (c->title && strcmp(msg_str(doc, "title"), c->title))
		return ex_fail(sc, "checkpoint %d as stored has title '%.80s', the model '%.80s'", ck,
			       msg_str(doc, "title"), c->title);
	if (strcmp(msg_str(doc, "summary"), c->summary))
		return ex_fail(sc, "checkpoint %d as stored has summary '%.80s', the model '%.80s'",
			       ck, msg_str(doc, "summary"), c->summary);
	for (int l = 0; l < EX_LISTS; l++)
		if (check_list(sc, doc, ck, l))
			return -1;
	return 0;
}
