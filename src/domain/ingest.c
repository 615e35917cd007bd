/*
 * ingest.c -- reading transcripts (labelled text, Markdown chat exports,
 * ChatGPT and Claude JSON exports) into user and assistant turns.
 *
 * Text and Markdown are read line by line: a label line starts a message,
 * which runs until the next label line.  Lines inside ``` or ~~~ fences
 * are never labels, so a quoted "User:" in a code block stays content.
 * Lines before the first label are a preamble and are dropped (a Markdown
 * "# Title" there becomes the transcript's title).  System messages, tool
 * messages and empty messages are dropped in every format.
 */
#include "domain/ingest.h"
#include "util/buf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum style { STYLE_TEXT, STYLE_MARKDOWN };

static const char *const format_names[] = { "auto", "text", "markdown", "chatgpt", "claude" };

enum smr_rc ingest_format_parse(const char *name, enum ingest_format *out, struct smr_err *err)
{
	if (!name) {
		*out = INGEST_AUTO;
		return SMR_OK;
	}
	for (int i = 0; i <= INGEST_CLAUDE; i++) {
		if (!strcmp(name, format_names[i])) {
			*out = (enum ingest_format)i;
			return SMR_OK;
		}
	}
	return smr_errf(err, SMR_EINVAL,
			"unknown transcript format '%s'; use auto, text, markdown, chatgpt or"
			" claude", name);
}

const char *ingest_format_name(enum ingest_format f)
{
	return (unsigned)f <= INGEST_CLAUDE ? format_names[f] : "auto";
}

void transcript_release(struct transcript *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->turns[i].content);
	free(t->turns);
	free(t->title);
	memset(t, 0, sizeof(*t));
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* A copy of s[0..n) without surrounding whitespace; caller frees. */
static char *trimmed(const char *s, size_t n)
{
	while (n && is_space(*s)) {
		s++;
		n--;
	}
	while (n && is_space(s[n - 1]))
		n--;
	return xstrndup(s, n);
}

/* Takes ownership of content; drops it when empty. */
static enum smr_rc add_turn(struct transcript *t, const char *role, char *content,
			    struct smr_err *err)
{
	if (!*content) {
		free(content);
		return SMR_OK;
	}
	if (t->n == INGEST_MAX_TURNS) {
		free(content);
		return smr_errf(err, SMR_ETOOBIG, "the transcript has more than %d turns",
				INGEST_MAX_TURNS);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->turns = xrealloc(t->turns, t->cap * sizeof(*t->turns));
	}
	t->turns[t->n].role = role;
	t->turns[t->n++].content = content;
	return SMR_OK;
}

/* ---- speaker labels ---- */

static const struct {
	const char *word, *role;
} labels[] = {
	{ "user", "user" }, { "human", "user" }, { "you", "user" }, { "me", "user" },
	{ "assistant", "assistant" }, { "ai", "assistant" }, { "claude", "assistant" },
	{ "chatgpt", "assistant" }, { "gpt", "assistant" }, { "system", "system" },
};

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Length of a speaker label (and an optional " said") at s[0..n), 0 if none; sets *role. */
static size_t match_label(const char *s, size_t n, const char **role)
{
	size_t len;

	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		len = strlen(labels[i].word);
		if (n < len || strncasecmp(s, labels[i].word, len) || (n > len && is_alnum(s[len])))
			continue;
		*role = labels[i].role;
		if (n >= len + 5 && !strncasecmp(s + len, " said", 5) &&
		    (n == len + 5 || !is_alnum(s[len + 5])))
			len += 5;
		return len;
	}
	return 0;
}

static size_t skip_indent(const char *s, size_t n)
{
	size_t p = 0;

	while (p < n && p < 3 && s[p] == ' ')
		p++;
	return p;
}

static size_t skip_str(const char *s, size_t n, size_t p, const char *what)
{
	size_t k = strlen(what);

	return p + k <= n && !strncmp(s + p, what, k) ? p + k : p;
}

static size_t skip_blanks(const char *s, size_t n, size_t p)
{
	while (p < n && (s[p] == ' ' || s[p] == '\t'))
		p++;
	return p;
}

/* Past a "[10:02]"-style stamp and the blanks after it, if s[p] opens one. */
static size_t skip_stamp(const char *s, size_t n, size_t p)
{
	const char *close;

	if (p == n || s[p] != '[')
		return p;
	close = memchr(s + p, ']', n - p < 40 ? n - p : 40);
	return close ? skip_blanks(s, n, (size_t)(close - s) + 1) : p;
}

/* "User: rest", "[10:02] User: rest" (leading whitespace allowed); *rest is the offset of rest. */
static int text_label(const char *s, size_t n, const char **role, size_t *rest)
{
	size_t p = skip_stamp(s, n, skip_blanks(s, n, 0)), len = match_label(s + p, n - p, role);

	if (!len)
		return 0;
	p = skip_blanks(s, n, p + len);
	if (p == n || s[p] != ':')
		return 0;
	*rest = skip_blanks(s, n, p + 1);
	return 1;
}

/* "## User", "### **Assistant:**", "## User (10:02)", "## Human: rest". */
static int heading_label(const char *s, size_t n, const char **role, size_t *rest)
{
	size_t p = skip_indent(s, n), hashes = 0, len;
	int colon;

	while (p < n && s[p] == '#' && hashes < 7) {
		p++;
		hashes++;
	}
	if (!hashes || hashes > 6 || p == n || (s[p] != ' ' && s[p] != '\t'))
		return 0;
	p = skip_str(s, n, skip_blanks(s, n, p), "**");
	len = match_label(s + p, n - p, role);
	if (!len)
		return 0;
	p = skip_str(s, n, p + len, "**");
	colon = p < n && s[p] == ':';
	p = skip_blanks(s, n, skip_str(s, n, p + colon, "**"));
	*rest = p;
	if (p == n || colon)
		return 1;
	*rest = n;              /* "## User (10:42)": the stamp is not content */
	return s[p] == '(' && s[n - 1] == ')';
}

/* "**User:** rest", "**Assistant**: rest", "**User**" alone on its line. */
static int bold_label(const char *s, size_t n, const char **role, size_t *rest)
{
	size_t p = skip_indent(s, n), q, len;
	int colon;

	if (p + 2 > n || strncmp(s + p, "**", 2))
		return 0;
	p += 2;
	len = match_label(s + p, n - p, role);
	if (!len)
		return 0;
	p += len;
	colon = p < n && s[p] == ':';
	q = skip_str(s, n, p + colon, "**");
	if (q == p + colon)
		return 0;
	if (!colon && q < n && s[q] == ':') {
		colon = 1;
		q++;
	}
	*rest = skip_blanks(s, n, q);
	return colon || *rest == n;
}

static int label_line(const char *s, size_t n, enum style style, const char **role,
		      size_t *rest)
{
	if (style == STYLE_TEXT)
		return text_label(s, n, role, rest);
	return heading_label(s, n, role, rest) || bold_label(s, n, role, rest);
}

static int fence_line(const char *s, size_t n)
{
	size_t p = skip_indent(s, n);

	return (p + 3 <= n && !strncmp(s + p, "```", 3)) ||
	       (p + 3 <= n && !strncmp(s + p, "~~~", 3));
}

/* ---- line-based formats ---- */

struct lines {
	const char *text;
	size_t len, pos;
	int in_fence;
};

/* The next line (without its newline or '\r') into s/n; 0 at the end. */
static int next_line(struct lines *ls, const char **s, size_t *n)
{
	const char *nl;

	if (ls->pos >= ls->len)
		return 0;
	*s = ls->text + ls->pos;
	nl = memchr(*s, '\n', ls->len - ls->pos);
	*n = nl ? (size_t)(nl - *s) : ls->len - ls->pos;
	ls->pos += *n + (nl ? 1 : 0);
	if (*n && (*s)[*n - 1] == '\r')
		(*n)--;
	return 1;
}

/* 1 if s is a label outside a fence (tracks fences as lines go by). */
static int label_outside_fence(struct lines *ls, const char *s, size_t n, enum style style,
			       const char **role, size_t *rest)
{
	if (fence_line(s, n)) {
		ls->in_fence = !ls->in_fence;
		return 0;
	}
	return !ls->in_fence && label_line(s, n, style, role, rest);
}

static size_t count_labels(const char *text, size_t len, enum style style)
{
	struct lines ls = { text, len, 0, 0 };
	const char *s, *role;
	size_t n, rest, count = 0;

	while (next_line(&ls, &s, &n))
		count += (size_t)label_outside_fence(&ls, s, n, style, &role, &rest);
	return count;
}

static int separator_line(const char *s, size_t n)
{
	return n >= 3 && (strspn(s, "-") == n || strspn(s, "*") == n || strspn(s, "_") == n);
}

/* Drops "---" lines that separate Markdown messages from either end of content. */
static void strip_separators(char *content)
{
	size_t n = strlen(content), last, first;

	for (;;) {
		while (n && is_space(content[n - 1]))
			n--;
		last = n;
		while (last && content[last - 1] != '\n')
			last--;
		if (!separator_line(content + last, n - last))
			break;
		n = last;
	}
	content[n] = '\0';
	for (;;) {
		first = strspn(content, " \t\r\n");
		n = strcspn(content + first, "\n");
		if (!separator_line(content + first, n))
			break;
		memmove(content, content + first + n, strlen(content + first + n) + 1);
	}
}

static enum smr_rc flush_message(struct transcript *t, const char *role, struct buf *b,
				 enum style style, struct smr_err *err)
{
	char *content;

	if (!role || !strcmp(role, "system")) {
		buf_reset(b);
		return SMR_OK;
	}
	content = trimmed(b->ptr, b->len);
	buf_reset(b);
	if (style == STYLE_MARKDOWN)
		strip_separators(content);
	return add_turn(t, role, content, err);
}

/* A "# Title" line of the preamble becomes the title. */
static void preamble_line(struct transcript *t, const char *s, size_t n, enum style style)
{
	if (style == STYLE_MARKDOWN && !t->title && n > 2 && s[0] == '#' && s[1] == ' ')
		t->title = trimmed(s + 2, n - 2);
}

static enum smr_rc parse_lines(const char *text, size_t len, enum style style,
			       struct transcript *t, struct smr_err *err)
{
	struct lines ls = { text, len, 0, 0 };
	struct buf b = BUF_INIT(0);
	const char *s, *role = NULL, *label_role;
	size_t n, rest;
	enum smr_rc rc = SMR_OK;

	while (!rc && next_line(&ls, &s, &n)) {
		if (label_outside_fence(&ls, s, n, style, &label_role, &rest)) {
			rc = flush_message(t, role, &b, style, err);
			role = label_role;
			buf_add(&b, s + rest, n - rest);
		} else if (!role) {
			preamble_line(t, s, n, style);
		} else {
			buf_addch(&b, '\n');
			buf_add(&b, s, n);
		}
	}
	if (!rc)
		rc = flush_message(t, role, &b, style, err);
	buf_release(&b);
	return rc;
}

/* ---- JSON exports ---- */

/* The one conversation of an export: the object itself, or the only element of a list. */
static enum smr_rc one_conversation(const json_t *root, const char *what, const json_t **out,
				    struct smr_err *err)
{
	*out = root;
	if (!json_is_array(root))
		return SMR_OK;
	if (json_array_size(root) != 1)
		return smr_errf(err, SMR_EUNPROC,
				"the %s export holds %zu conversations; ingest one at a time"
				" (for example: jq '.[0]')", what, json_array_size(root));
	*out = json_array_get(root, 0);
	if (!json_is_object(*out))
		return smr_errf(err, SMR_EUNPROC, "the %s export's conversation is not an object",
				what);
	return SMR_OK;
}

static enum smr_rc take_title(struct transcript *t, const json_t *conv, const char *key)
{
	const char *title = json_string_value(json_object_get(conv, key));

	if (title && *title && !t->title)
		t->title = trimmed(title, strlen(title));
	return SMR_OK;
}

/* Appends a JSON string to b, refusing NUL characters inside it. */
static enum smr_rc add_json_text(struct buf *b, const json_t *s, const char *sep,
				 struct smr_err *err)
{
	size_t n = json_string_length(s);

	if (strlen(json_string_value(s)) != n)
		return smr_errf(err, SMR_EINVAL,
				"a message of the export contains a NUL character");
	if (b->len && n)
		buf_adds(b, sep);
	buf_add(b, json_string_value(s), n);
	return SMR_OK;
}

/* The text of a ChatGPT message: string parts joined, or content.text. */
static enum smr_rc chatgpt_text(const json_t *content, struct buf *b, struct smr_err *err)
{
	const json_t *parts = json_object_get(content, "parts"), *p;
	size_t i;
	enum smr_rc rc = SMR_OK;

	if (!json_is_array(parts)) {
		p = json_object_get(content, "text");
		return json_is_string(p) ? add_json_text(b, p, "", err) : SMR_OK;
	}
	json_array_foreach(parts, i, p)
		if (!rc && json_is_string(p))
			rc = add_json_text(b, p, "\n", err);
	return rc;
}

static enum smr_rc chatgpt_node(struct transcript *t, const json_t *node, struct smr_err *err)
{
	const json_t *msg = json_object_get(node, "message");
	const char *role = json_string_value(json_object_get(json_object_get(msg, "author"),
							     "role"));
	const char *to = json_string_value(json_object_get(msg, "recipient"));
	const json_t *meta = json_object_get(msg, "metadata");
	struct buf b = BUF_INIT(0);
	enum smr_rc rc;

	if (!role || (strcmp(role, "user") && strcmp(role, "assistant")))
		return SMR_OK;          /* system, tool, or no message at all */
	if ((to && strcmp(to, "all")) ||
	    json_is_true(json_object_get(meta, "is_visually_hidden_from_conversation")))
		return SMR_OK;          /* a tool call or a hidden message */
	rc = chatgpt_text(json_object_get(msg, "content"), &b, err);
	if (!rc)
		rc = add_turn(t, !strcmp(role, "user") ? "user" : "assistant",
			      trimmed(b.ptr, b.len), err);
	buf_release(&b);
	return rc;
}

static const char *node_link(const json_t *mapping, const char *id, int to_parent)
{
	const json_t *node = json_object_get(mapping, id);
	const json_t *kids = json_object_get(node, "children");

	if (to_parent)
		return json_string_value(json_object_get(node, "parent"));
	return json_string_value(json_array_get(kids, json_array_size(kids) - 1));
}

/* The node without a parent in the mapping; NULL if every node has one. */
static const char *root_node(const json_t *mapping)
{
	const char *key, *parent;
	const json_t *node;

	json_object_foreach((json_t *)mapping, key, node) {
		parent = json_string_value(json_object_get(node, "parent"));
		if (!parent || !json_object_get(mapping, parent))
			return key;
	}
	return NULL;
}

/*
 * Node ids of the conversation in order (new array): up the parents from
 * current_node (the branch the user last saw) when there is one, else from
 * the root down along the last child (the latest edit or regeneration).
 */
static enum smr_rc chatgpt_path(const json_t *conv, const json_t *mapping, json_t **path,
				struct smr_err *err)
{
	const char *cur = json_string_value(json_object_get(conv, "current_node"));
	int up = cur && json_object_get(mapping, cur);
	const char *id = up ? cur : root_node(mapping);
	size_t steps = 0, max = json_object_size(mapping), n;
	json_t *seen = json_array();

	*path = json_array();
	for (; id && json_object_get(mapping, id); id = node_link(mapping, id, up)) {
		if (steps++ == max) {
			json_decref(seen);
			return smr_errf(err, SMR_EUNPROC,
					"the ChatGPT export's message tree has a cycle");
		}
		json_array_append_new(seen, json_string(id));
	}
	n = json_array_size(seen);
	for (size_t i = 0; i < n; i++)
		json_array_append(*path, json_array_get(seen, up ? n - 1 - i : i));
	json_decref(seen);
	return SMR_OK;
}

static enum smr_rc parse_chatgpt(const json_t *root, struct transcript *t, struct smr_err *err)
{
	const json_t *conv, *mapping;
	json_t *path = NULL, *id;
	size_t i;
	enum smr_rc rc = one_conversation(root, "ChatGPT", &conv, err);

	if (rc)
		return rc;
	mapping = json_object_get(conv, "mapping");
	if (!json_is_object(mapping))
		return smr_errf(err, SMR_EUNPROC, "the ChatGPT export has no 'mapping' object");
	take_title(t, conv, "title");
	rc = chatgpt_path(conv, mapping, &path, err);
	json_array_foreach(path, i, id) {
		if (rc)
			break;
		rc = chatgpt_node(t, json_object_get(mapping, json_string_value(id)), err);
	}
	json_decref(path);
	return rc;
}

/* The text of a Claude message: its text blocks, else its "text". */
static enum smr_rc claude_text(const json_t *msg, struct buf *b, struct smr_err *err)
{
	const json_t *blocks = json_object_get(msg, "content"), *blk, *text;
	const char *type;
	size_t i;
	enum smr_rc rc = SMR_OK;

	json_array_foreach(blocks, i, blk) {
		text = json_object_get(blk, "text");
		type = json_string_value(json_object_get(blk, "type"));
		if (!rc && json_is_string(text) && type && !strcmp(type, "text"))
			rc = add_json_text(b, text, "\n\n", err);
	}
	text = json_object_get(msg, "text");
	if (!rc && !b->len && json_is_string(text))
		rc = add_json_text(b, text, "", err);
	return rc;
}

static enum smr_rc parse_claude(const json_t *root, struct transcript *t, struct smr_err *err)
{
	const json_t *conv, *msgs, *msg;
	const char *sender;
	struct buf b = BUF_INIT(0);
	size_t i;
	enum smr_rc rc = one_conversation(root, "Claude", &conv, err);

	if (rc)
		return rc;
	msgs = json_object_get(conv, "chat_messages");
	if (!json_is_array(msgs))
		return smr_errf(err, SMR_EUNPROC, "the Claude export has no 'chat_messages' list");
	take_title(t, conv, "name");
	json_array_foreach(msgs, i, msg) {
		sender = json_string_value(json_object_get(msg, "sender"));
		if (rc || !sender || (strcmp(sender, "human") && strcmp(sender, "assistant")))
			continue;
		rc = claude_text(msg, &b, err);
		if (!rc)
			rc = add_turn(t, !strcmp(sender, "human") ? "user" : "assistant",
				      trimmed(b.ptr, b.len), err);
		buf_reset(&b);
	}
	buf_release(&b);
	return rc;
}

/* Which JSON export root is: ChatGPT, Claude, or neither (INGEST_AUTO). */
static enum ingest_format json_kind(const json_t *root)
{
	const json_t *conv = json_is_array(root) ? json_array_get(root, 0) : root;

	if (json_is_object(json_object_get(conv, "mapping")))
		return INGEST_CHATGPT;
	if (json_is_array(json_object_get(conv, "chat_messages")))
		return INGEST_CLAUDE;
	return INGEST_AUTO;
}

/* ---- detection and entry point ---- */

static int blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_space(text[i]))
			return 0;
	return 1;
}

static int looks_like_json(const char *text, size_t len)
{
	size_t p = 0;

	while (p < len && is_space(text[p]))
		p++;
	return p < len && (text[p] == '{' || text[p] == '[');
}

/* Parses JSON text into *root (new reference). */
static enum smr_rc load_json(const char *text, size_t len, json_t **root, struct smr_err *err)
{
	json_error_t jerr;

	*root = json_loadb(text, len, JSON_ALLOW_NUL, &jerr);
	if (!*root)
		return smr_errf(err, SMR_EINVAL, "the transcript is not valid JSON: %s (line %d)",
				jerr.text, jerr.line);
	return SMR_OK;
}

/* Picks a format for text that is not a JSON export. */
static enum smr_rc detect_lines(const char *text, size_t len, enum ingest_format *out,
				struct smr_err *err)
{
	if (count_labels(text, len, STYLE_MARKDOWN))
		*out = INGEST_MARKDOWN;
	else if (count_labels(text, len, STYLE_TEXT))
		*out = INGEST_TEXT;
	else
		return smr_errf(err, SMR_EUNPROC,
				"unknown transcript format: found no speaker labels (\"User:\","
				" \"Assistant:\"), Markdown chat headings (\"## User\") or a"
				" ChatGPT/Claude JSON export");
	return SMR_OK;
}

static enum smr_rc parse_export(const json_t *root, enum ingest_format format,
				struct transcript *t, struct smr_err *err)
{
	if (format == INGEST_AUTO)
		format = json_kind(root);
	t->format = format;
	if (format == INGEST_CHATGPT)
		return parse_chatgpt(root, t, err);
	if (format == INGEST_CLAUDE)
		return parse_claude(root, t, err);
	return smr_errf(err, SMR_EUNPROC,
			"unknown transcript format: JSON that is neither a ChatGPT export"
			" (with 'mapping') nor a Claude export (with 'chat_messages')");
}

/*
 * Loads the JSON of an export.  In auto mode, text that only starts like
 * JSON ("[10:02] User: hi") but has speaker labels is left to the line
 * formats: *root stays NULL and *format is set.
 */
static enum smr_rc load_export(const char *text, size_t len, enum ingest_format *format,
			       json_t **root, struct smr_err *err)
{
	struct smr_err jerr = SMR_ERR_INIT;
	enum smr_rc rc;

	*root = NULL;
	if (*format == INGEST_AUTO && !looks_like_json(text, len))
		return SMR_OK;
	if (*format != INGEST_AUTO && *format != INGEST_CHATGPT && *format != INGEST_CLAUDE)
		return SMR_OK;
	rc = load_json(text, len, root, &jerr);
	if (rc && *format == INGEST_AUTO && !detect_lines(text, len, format, NULL))
		return SMR_OK;
	if (rc && err)
		*err = jerr;
	return rc;
}

static enum smr_rc check_input(const char *text, size_t len, struct smr_err *err)
{
	if (len > INGEST_MAX_BYTES)
		return smr_errf(err, SMR_ETOOBIG, "the transcript is larger than %u bytes (5 MiB)",
				INGEST_MAX_BYTES);
	if (memchr(text, '\0', len))
		return smr_errf(err, SMR_EINVAL, "the transcript contains a NUL byte");
	if (!utf8_valid(text, len))
		return smr_errf(err, SMR_EINVAL, "the transcript is not valid UTF-8");
	return SMR_OK;
}

enum smr_rc ingest_parse(const char *text, size_t len, enum ingest_format format,
			 struct transcript *out, struct smr_err *err)
{
	json_t *root = NULL;
	enum smr_rc rc = check_input(text, len, err);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
		text += 3;
		len -= 3;
	}
	if (blank(text, len))
		return smr_errf(err, SMR_EUNPROC, "the transcript is empty");
	rc = load_export(text, len, &format, &root, err);
	if (!rc && root)
		rc = parse_export(root, format, out, err);
	if (!rc && !root && format == INGEST_AUTO)
		rc = detect_lines(text, len, &format, err);
	if (!rc && !root) {
		out->format = format;
		rc = parse_lines(text, len, format == INGEST_TEXT ? STYLE_TEXT : STYLE_MARKDOWN,
				 out, err);
	}
	json_decref(root);
	if (!rc && !out->n)
		rc = smr_errf(err, SMR_EUNPROC,
			      "the transcript has no turns: no user or assistant message with"
			      " any text (read as %s)", ingest_format_name(out->format));
	return rc;
}
