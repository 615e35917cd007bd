/*
 * mcp_resources.c -- checkpoints as MCP resources.
 *
 *   smriti://spaces/{name}/head     HEAD of a Space (name percent-encoded)
 *   smriti://checkpoints/{hash}     one checkpoint (full hash or 4+ hex prefix)
 *
 * Each reads as Markdown (text/markdown); a ".json" suffix on the last
 * segment or "?format=json" gives the checkpoint document as JSON
 * (application/json), the same document the tools return.  resources/list
 * lists the HEAD of every non-empty Space, by name, 100 per page; the cursor
 * is the last name of the previous page.  Reads go through the same
 * operations as the tools (head, show), never to the store directly.
 *
 * Every json_t * returned here is a new reference; every char * is the
 * caller's to free().
 */
#include "mcp/mcp_int.h"
#include "domain/markdown.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SCHEME "smriti://"
#define PAGE_SIZE 100

/* Name with every byte outside RFC 3986's unreserved set as %XX. */
static void add_encoded(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
			buf_addch(b, (char)*p);
			continue;
		}
		buf_addch(b, '%');
		buf_addch(b, hex[*p >> 4]);
		buf_addch(b, hex[*p & 15]);
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s[0..n) into a new string; NULL if malformed or it holds NUL. */
static char *decode(const char *s, size_t n)
{
	struct buf b = BUF_INIT(0);
	int hi, lo;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			buf_addch(&b, s[i]);
			continue;
		}
		hi = i + 2 < n ? hexval(s[i + 1]) : -1;
		lo = i + 2 < n ? hexval(s[i + 2]) : -1;
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			buf_release(&b);
			return NULL;
		}
		buf_addch(&b, (char)(hi * 16 + lo));
		i += 2;
	}
	return buf_detach(&b, NULL);
}

static char *head_uri(const char *name)
{
	struct buf b = BUF_INIT(0);

	buf_adds(&b, SCHEME "spaces/");
	add_encoded(&b, name);
	buf_adds(&b, "/head");
	return buf_detach(&b, NULL);
}

static int by_name(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "name")),
		      json_string_value(json_object_get(y, "name")));
}

static json_t *head_entry(const json_t *sp)
{
	const char *name = json_string_value(json_object_get(sp, "name"));
	const char *desc = json_string_value(json_object_get(sp, "description"));
	char *uri = head_uri(name);
	json_t *e;

	e = json_pack("{s:s, s:s, s:s+, s:s, s:s}", "uri", uri, "name", name,
		      "title", "HEAD of ", name,
		      "description", desc && *desc ? desc : "Latest checkpoint of the Space",
		      "mimeType", "text/markdown");
	free(uri);
	return e;
}

/* One page of entries from sorted non-empty Spaces after cursor. */
static json_t *head_page(json_t **v, size_t n, const char *cursor)
{
	json_t *list = json_array(), *out;
	size_t i = 0, taken = 0;

	while (i < n && cursor &&
	       strcmp(json_string_value(json_object_get(v[i], "name")), cursor) <= 0)
		i++;
	for (; i < n && taken < PAGE_SIZE; i++, taken++)
		json_array_append_new(list, head_entry(v[i]));
	out = json_pack("{s:o}", "resources", list);
	if (i < n)
		json_object_set_new(out, "nextCursor",
				    json_string(json_string_value(json_object_get(v[i - 1], "name"))));
	return out;
}

json_t *mcp_resources_list(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const json_t *cursor = json_object_get(params, "cursor");
	struct smr_err err = SMR_ERR_INIT;
	json_t *spaces = NULL, *sp, *out, **v;
	size_t i, n = 0;

	if (cursor && !json_is_string(cursor))
		return mcp_failf(fail, MCP_INVALID_PARAMS, "invalid cursor: must be a string");
	if (s->call(s->cls, "space.list", NULL, &spaces, &err)) {
		json_decref(spaces);
		return mcp_failf(fail, MCP_INTERNAL_ERROR, "cannot list spaces: %s", err.msg);
	}
	v = xcalloc(json_array_size(spaces) + 1, sizeof(*v));
	json_array_foreach(spaces, i, sp)
		if (json_is_string(json_object_get(sp, "head")) &&
		    json_is_string(json_object_get(sp, "name")))
			v[n++] = sp;
	qsort(v, n, sizeof(*v), by_name);
	out = head_page(v, n, json_string_value(cursor));
	free(v);
	json_decref(spaces);
	return out;
}

static json_t *template(const char *uri, const char *name, const char *title,
			const char *desc, const char *mime)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "uriTemplate", uri, "name", name,
			 "title", title, "description", desc, "mimeType", mime);
}

json_t *mcp_resources_templates(struct mcp_session *s, const json_t *params,
				struct mcp_fail *fail)
{
	(void)s;
	if (json_object_get(params, "cursor"))
		return mcp_failf(fail, MCP_INVALID_PARAMS,
				 "invalid cursor: resources/templates/list has one page");
	return json_pack("{s:[o, o, o, o]}", "resourceTemplates",
			 template(SCHEME "spaces/{name}/head", "space-head", "HEAD of a Space",
				  "The latest checkpoint of the Space, as Markdown",
				  "text/markdown"),
			 template(SCHEME "spaces/{name}/head.json", "space-head-json",
				  "HEAD of a Space (JSON)",
				  "The latest checkpoint of the Space, as the JSON document "
				  "read_head returns", "application/json"),
			 template(SCHEME "checkpoints/{hash}", "checkpoint", "A checkpoint",
				  "One checkpoint by commit_hash (or a unique prefix of 4+ hex "
				  "characters), as Markdown", "text/markdown"),
			 template(SCHEME "checkpoints/{hash}.json", "checkpoint-json",
				  "A checkpoint (JSON)",
				  "One checkpoint by commit_hash, as the JSON document "
				  "show_checkpoint returns", "application/json"));
}

/* A resource URI taken apart: which operation reads it, with what, in which form. */
struct res_uri {
	const char *op;      /* "head" or "show" */
	const char *key;     /* "space" or "ref" */
	char *arg;           /* decoded Space name or hash */
	int json;
};

/* Strips a ".json" suffix or a "?format=json|markdown" query; -1 if the query is unknown. */
static int take_format(const char **end, const char *start, int *json)
{
	const char *q = memchr(start, '?', (size_t)(*end - start));

	*json = 0;
	if (q) {
		if (!strcmp(q, "?format=json"))
			*json = 1;
		else if (strcmp(q, "?format=markdown"))
			return -1;
		*end = q;
		return 0;
	}
	if (*end - start > 5 && !memcmp(*end - 5, ".json", 5)) {
		*json = 1;
		*end -= 5;
	}
	return 0;
}

/* 0 when uri names a Smriti resource; out->arg is then the caller's to free. */
static int parse_uri(const char *uri, struct res_uri *out)
{
	const char *p, *end = uri + strlen(uri);

	memset(out, 0, sizeof(*out));
	if (strncmp(uri, SCHEME, strlen(SCHEME)))
		return -1;
	p = uri + strlen(SCHEME);
	if (take_format(&end, p, &out->json))
		return -1;
	if (!strncmp(p, "spaces/", 7) && end - p > 12 && !memcmp(end - 5, "/head", 5)) {
		out->op = "head";
		out->key = "space";
		out->arg = decode(p + 7, (size_t)(end - 5 - (p + 7)));
	} else if (!strncmp(p, "checkpoints/", 12)) {
		out->op = "show";
		out->key = "hash";
		out->arg = xstrndup(p + 12, (size_t)(end - (p + 12)));
	}
	if (out->arg && (!*out->arg || strchr(out->arg, '/'))) {
		free(out->arg);
		out->arg = NULL;
	}
	return out->arg ? 0 : -1;
}

char *mcp_head_uri_space(const char *uri)
{
	struct res_uri r;

	if (parse_uri(uri, &r))
		return NULL;
	if (strcmp(r.op, "head")) {
		free(r.arg);
		return NULL;
	}
	return r.arg;
}

static json_t *not_found(struct mcp_fail *fail, const char *uri, const char *why)
{
	fail->data = json_pack("{s:o}", "uri", mcp_json_text(uri));
	return mcp_failf(fail, MCP_RESOURCE_NOT_FOUND, "resource not found: %s", why);
}

static json_t *contents(const char *uri, const json_t *doc, int as_json)
{
	struct buf b = BUF_INIT(0);
	char *text;
	json_t *out;

	if (as_json) {
		text = json_dumps(doc, JSON_INDENT(2));
		if (!text)
			BUG("cannot serialise resource '%s'", uri);
	} else {
		checkpoint_markdown(&b, doc, 1);
		text = buf_detach(&b, NULL);
	}
	out = json_pack("{s:[{s:o, s:s, s:s}]}", "contents", "uri", mcp_json_text(uri),
			"mimeType", as_json ? "application/json" : "text/markdown", "text", text);
	free(text);
	if (!out)
		BUG("the contents of resource '%s' do not pack", uri);
	return out;
}

json_t *mcp_resources_read(struct mcp_session *s, const json_t *params, struct mcp_fail *fail)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct smr_err err = SMR_ERR_INIT;
	struct res_uri r;
	json_t *p, *doc = NULL, *out = NULL;
	enum smr_rc rc;

	if (!uri)
		return mcp_failf(fail, MCP_INVALID_PARAMS, "resources/read needs a string 'uri'");
	if (parse_uri(uri, &r))
		return not_found(fail, uri, "not a smriti:// Space HEAD or checkpoint URI");
	p = json_pack("{s:s}", r.key, r.arg);
	rc = p ? s->call(s->cls, r.op, p, &doc, &err) :
		 smr_errf(&err, SMR_ENOTFOUND, "not a valid name");
	if (rc == SMR_EINVAL && !strcmp(r.key, "hash"))   /* not a hash: no such resource */
		not_found(fail, uri, "not a smriti:// Space HEAD or checkpoint URI");
	else if (rc == SMR_ENOTFOUND)
		not_found(fail, uri, err.msg);
	else if (rc == SMR_EINVAL || rc == SMR_EUSAGE)
		mcp_failf(fail, MCP_INVALID_PARAMS, "%s", err.msg);
	else if (rc)
		mcp_failf(fail, MCP_INTERNAL_ERROR, "%s", err.msg);
	else
		out = contents(uri, doc, r.json);
	json_decref(p);
	json_decref(doc);
	free(r.arg);
	return out;
}
