/*
 * embedded.h -- data files built into the binary: the tables that
 * tools/embed.c --plain and tools/decl_index.c generate from src/ops/decl/
 * (see the Makefile).
 * The bytes are followed by a NUL, so a text file is a C string.
 */
#ifndef SMRITI_EMBEDDED_H
#define SMRITI_EMBEDDED_H

#include <stddef.h>

struct embedded_file {
	const char *name;               /* file name without directories */
	const char *data;
	size_t len;
};

/* Terminated by an entry whose name is NULL. */
extern const struct embedded_file embedded_files[];

/*
 * The same declarations indexed (tools/decl_index.c): one entry an
 * operation and one a $defs schema, sorted by name, json the compact
 * text of its declaration or schema.
 */
struct embedded_decl {
	const char *name;
	const char *json;
};

extern const struct embedded_decl embedded_decl_ops[], embedded_decl_defs[];
extern const size_t embedded_decl_ops_n, embedded_decl_defs_n;
/* The operations with an MCP tool ("mcp"), in the order the files declare them. */
extern const char *const embedded_decl_mcp_ops[];
extern const size_t embedded_decl_mcp_ops_n;

#endif
