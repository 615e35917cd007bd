/*
 * setup_text.c -- the text edits of `smriti setup` (setup.h): one TOML
 * table for Codex and one marked Markdown section for AGENTS.md and its
 * kin.  No TOML library Debian ships writes TOML from C, so this is the
 * smallest careful writer of the one table Smriti owns: lines from its
 * header to the next table's header are Smriti's, every other byte is
 * copied as it was.
 */
#include "cli/setup.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* The table a header line names ("" for a line that is no header), in buf name. */
static int header_name(const char *line, const char *end, char *name, size_t cap)
{
	const char *p = skip_space(line, end), *close;
	size_t n = 0;

	if (p >= end || *p != '[')
		return 0;
	while (p < end && *p == '[')
		p++;
	close = memchr(p, ']', (size_t)(end - p));
	if (!close)
		return 0;
	for (; p < close && n + 1 < cap; p++)
		if (!isspace((unsigned char)*p) && *p != '"')
			name[n++] = *p;
	name[n] = '\0';
	return 1;
}

static int ours(const char *name)
{
	return !strcmp(name, "mcp_servers.smriti") || !strncmp(name, "mcp_servers.smriti.", 19);
}

/* A key defining the server outside its own table: smriti = {...}, smriti.x = ... */
static int foreign_definition(const char *table, const char *line, const char *end)
{
	const char *p = skip_space(line, end);
	const char *key = !strcmp(table, "mcp_servers") ? "smriti" :
			  !*table ? "mcp_servers" : NULL;
	size_t n = key ? strlen(key) : 0;

	if (!key || (size_t)(end - p) < n || strncmp(p, key, n))
		return 0;
	p = skip_space(p + n, end);
	if (*table)
		return p < end && (*p == '=' || *p == '.');
	return memmem(line, (size_t)(end - line), "smriti", 6) != NULL;
}

static int blank(const char *line, const char *end)
{
	const char *p = skip_space(line, end);

	return p >= end || *p == '\n' || *p == '\r';
}

enum smr_rc setup_toml_table(const char *text, const char *block, int remove, char **out,
			     struct smr_err *err)
{
	struct buf b = BUF_INIT(0);
	char table[256] = "";
	const char *line = text, *end;
	int in_ours = 0, placed = 0, at_end_removed = 0;

	for (; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		if (header_name(line, end, table, sizeof(table))) {
			in_ours = ours(table);
			if (in_ours && !remove && !placed) {
				buf_adds(&b, block);
				placed = 1;
			}
			at_end_removed = in_ours && remove;
			if (in_ours)
				continue;
		} else if (foreign_definition(table, line, end)) {
			buf_release(&b);
			return smr_errf(err, SMR_ECONFLICT, "the MCP server 'smriti' is defined "
					"here in another form (a key of [mcp_servers] or an inline "
					"table): take it out, then run setup again");
		}
		if (in_ours) {
			/* blank lines closing our table separate it from the next: kept on
			   a replace, dropped with it on a remove */
			if (!remove && blank(line, end))
				buf_add(&b, line, (size_t)(end - line));
			at_end_removed = remove;
			continue;
		}
		buf_add(&b, line, (size_t)(end - line));
	}
	/* our table was last: the blank line that set it apart goes with it */
	if (at_end_removed && b.len >= 2 && b.ptr[b.len - 1] == '\n' && b.ptr[b.len - 2] == '\n')
		b.ptr[--b.len] = '\0';
	if (!remove && !placed) {
		if (b.len && b.ptr[b.len - 1] != '\n')
			buf_addch(&b, '\n');
		if (b.len)
			buf_addch(&b, '\n');
		buf_adds(&b, block);
	}
	*out = buf_detach(&b, NULL);
	return SMR_OK;
}

/* The byte range [*from, *to) of the marked section in text; 0 when it has none. */
static int find_section(const char *text, size_t *from, size_t *to)
{
	const char *b = strstr(text, SETUP_MD_BEGIN), *e;

	if (!b)
		return 0;
	e = strstr(b, SETUP_MD_END);
	if (!e)
		return 0;
	e += strlen(SETUP_MD_END);
	if (*e == '\n')
		e++;
	*from = (size_t)(b - text);
	*to = (size_t)(e - text);
	return 1;
}

char *setup_md_section(const char *text, const char *section, int remove)
{
	struct buf b = BUF_INIT(0);
	size_t from, to, len = strlen(text);

	if (find_section(text, &from, &to)) {
		/* the blank line that set the section apart goes with it */
		if (remove && from >= 2 && text[from - 1] == '\n' && text[from - 2] == '\n')
			from--;
		else if (remove && !from && text[to] == '\n')
			to++;
		buf_add(&b, text, from);
		if (!remove)
			buf_adds(&b, section);
		buf_add(&b, text + to, len - to);
	} else {
		buf_add(&b, text, len);
		if (!remove) {
			if (len && text[len - 1] != '\n')
				buf_addch(&b, '\n');
			if (len)
				buf_addch(&b, '\n');
			buf_adds(&b, section);
		}
	}
	return buf_detach(&b, NULL);
}
