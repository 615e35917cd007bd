/*
 * embedded.h -- data files built into the binary: the table that
 * tools/embed.c --plain generates from src/ops/decl/ (see the Makefile).
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

#endif
