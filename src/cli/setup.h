/*
 * setup.h -- `smriti setup HOST`: the edits it makes to an agent host's own
 * configuration files, kept apart from the host table (cmd_setup.c).
 *
 * Every edit is of something Smriti owns inside a file the user owns: one
 * member of a JSON object (the MCP server "smriti"), hook entries whose
 * command runs `smriti prime`, one TOML table ([mcp_servers.smriti]), one
 * marked section of a Markdown file.  Adding twice changes nothing;
 * removing takes out only what is Smriti's, drops containers left empty,
 * and deletes a file left empty, so a file Smriti created goes and a file
 * it edited comes back as it was (where the file was written as the hosts
 * write JSON: two-space indent, final newline).
 */
#ifndef SMRITI_CLI_SETUP_H
#define SMRITI_CLI_SETUP_H

#include <jansson.h>

#include "util/err.h"

/* How a JSON edit places its value. */
enum jedit_kind {
	JEDIT_MEMBER,   /* path names an object member: set it to value */
	JEDIT_GROUP,    /* path names an array of hook groups ({matcher?, hooks: [...]}):
			   the group value replaces any group holding a Smriti hook */
	JEDIT_HOOK,     /* path names an array of hooks ({command, ...}): value replaces
			   any Smriti hook */
	JEDIT_ITEM,     /* path names an array: value replaces the item with the same "id" */
	JEDIT_DEFAULT,  /* object member set only when absent (Cursor's "version") and
			   left alone by remove unless nothing else is in the file */
};

#define JEDIT_DEPTH 4

struct jedit {
	enum jedit_kind kind;
	const char *path[JEDIT_DEPTH];   /* keys from the top, NULL-terminated */
	json_t *value;                   /* owned */
};

/* 1 when a hook command is Smriti's (it runs `smriti prime`). */
int setup_hook_is_ours(const char *command);

/*
 * Applies n edits to doc (an object, changed in place), adding them or,
 * with remove, taking them out.  Returns 1 if doc changed.
 */
int setup_json_apply(json_t *doc, const struct jedit *e, size_t n, int remove);

/*
 * The new text of a TOML file whose one table [mcp_servers.smriti] (with
 * its sub-tables) becomes block (remove: goes).  text is the file's text
 * ("" when there is none); block ends in a newline.  SMR_ECONFLICT when
 * the server is defined in another form (an inline table, a dotted key)
 * that a line-level edit cannot own.  *out is new memory, caller frees.
 */
enum smr_rc setup_toml_table(const char *text, const char *block, int remove, char **out,
			     struct smr_err *err);

/*
 * The new text of a Markdown file with section (lines between
 * SETUP_MD_BEGIN and SETUP_MD_END, markers included) put in place of an
 * earlier one or appended after a blank line (remove: taken out with that
 * blank line).  Caller frees *out.
 */
#define SETUP_MD_BEGIN "<!-- BEGIN SMRITI (smriti setup agents-md) -->"
#define SETUP_MD_END "<!-- END SMRITI -->"
char *setup_md_section(const char *text, const char *section, int remove);

#endif
