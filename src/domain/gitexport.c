/*
 * gitexport.c -- checkpoints as git fast-import commands (see gitexport.h).
 */
#include "domain/gitexport.h"
#include "domain/checkpoint.h"
#include "domain/markdown.h"
#include "util/xalloc.h"
#include "util/isotime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "data N\n" and the bytes: fast-import's counted form, safe for any content. */
static void data(struct buf *b, const char *s, size_t n)
{
	buf_addf(b, "data %zu\n", n);
	buf_add(b, s, n);
	buf_addch(b, '\n');
}

/* Seconds since the epoch of an ISO UTC time; 0 if unreadable. */
static long long epoch(const char *iso)
{
	long long t = iso_seconds(iso);

	return t < 0 ? 0 : t;
}

/* A person line: the name without '<', '>' or line breaks, and no e-mail. */
static void person(struct buf *b, const char *what, const char *name, long long when)
{
	buf_addf(b, "%s ", what);
	if (!name || !*name)
		name = "unknown";
	for (const char *p = name; *p; p++)
		buf_addch(b, *p == '<' || *p == '>' || *p == '\n' || *p == '\r' ? ' ' : *p);
	buf_addf(b, " <> %lld +0000\n", when);
}

void gitexport_file_name(const char *name, struct buf *out)
{
	size_t start = out->len;

	for (const char *p = name; *p && out->len - start < 200; p++) {
		unsigned char c = (unsigned char)*p;

		buf_addch(out, c < 0x20 || c == 0x7f || c == '/' || c == '\\' ||
				       (out->len == start && (c == '.' || c == '"')) ? '_' : (char)c);
	}
	if (out->len == start)
		buf_adds(out, "artifact");
}

/* Whether the '.' at name[i] must be escaped to keep the branch name valid. */
static int dot_needs_escape(const char *name, size_t i, size_t n)
{
	return i == 0 || i == n - 1 || name[i - 1] == '.' ||
	       (n - i == 5 && !strcmp(name + i, ".lock"));
}

void gitexport_branch_name(const char *space, struct buf *out)
{
	size_t n = strlen(space);

	buf_adds(out, "smriti/");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)space[i];
		int keep = c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '-' || c == '_' ||
			   (c == '.' && !dot_needs_escape(space, i, n));

		if (keep)
			buf_addch(out, (char)c);
		else
			buf_addf(out, "%%%02X", c);
	}
}

/* M lines for the artifacts, names made unique with -2, -3, ... */
static void artifacts(struct buf *b, const struct checkpoint *c)
{
	size_t n = json_array_size(c->artifacts), i;
	char **names = xcalloc(n + 1, sizeof(*names));
	json_t *a;

	json_array_foreach(c->artifacts, i, a) {
		const char *content = json_string_value(json_object_get(a, "content"));
		struct buf name = BUF_INIT(0);
		size_t base;

		gitexport_file_name(json_string_value(json_object_get(a, "name")) ?: "", &name);
		base = name.len;
		for (int k = 2;; k++) {
			size_t j = 0;

			while (j < i && strcmp(names[j], name.ptr))
				j++;
			if (j == i)
				break;
			name.len = base;
			name.ptr[base] = '\0';
			buf_addf(&name, "-%d", k);
		}
		names[i] = buf_detach(&name, NULL);
		buf_addf(b, "M 100644 inline artifacts/%s\n", names[i]);
		data(b, content ? content : "", content ? strlen(content) : 0);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void gitexport_commit(struct buf *b, const char *ref, const char *space,
		      const struct checkpoint *c, size_t mark, size_t parent, size_t merge)
{
	struct buf msg = BUF_INIT(0), md = BUF_INIT(0);
	json_t *doc = checkpoint_to_json(c);
	char *text;
	long long when = epoch(c->created_at);

	if (!parent)
		buf_addf(b, "reset %s\n", ref);
	buf_addf(b, "commit %s\nmark :%zu\n", ref, mark);
	person(b, "author", c->author, when);
	person(b, "committer", c->author, when);
	buf_adds(&msg, c->title && *c->title ? c->title : "(untitled)");
	buf_adds(&msg, "\n\n");
	if (c->summary && *c->summary)
		buf_addf(&msg, "%s\n\n", c->summary);
	buf_addf(&msg, "Smriti-Checkpoint: %s\nSmriti-Space: %s\n", c->hash, space);
	data(b, msg.ptr, msg.len);
	if (parent)
		buf_addf(b, "from :%zu\n", parent);
	if (merge)
		buf_addf(b, "merge :%zu\n", merge);
	buf_adds(b, "deleteall\n");
	checkpoint_markdown(&md, doc, 1);
	buf_adds(b, "M 100644 inline checkpoint.md\n");
	data(b, md.ptr, md.len);
	json_object_del(doc, "space");
	text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	md.len = 0;
	buf_addf(&md, "%s\n", text);
	buf_adds(b, "M 100644 inline checkpoint.json\n");
	data(b, md.ptr, md.len);
	artifacts(b, c);
	buf_addch(b, '\n');
	free(text);
	json_decref(doc);
	buf_release(&msg);
	buf_release(&md);
}

void gitexport_reset(struct buf *b, const char *ref, size_t mark)
{
	buf_addf(b, "reset %s\n", ref);
	if (mark)
		buf_addf(b, "from :%zu\n", mark);
	buf_addch(b, '\n');
}
