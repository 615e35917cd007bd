/*
 * files.h -- writing the small files the CLI owns or edits (the project
 * file, hosts' settings): whole or not at all.
 */
#ifndef SMRITI_CLI_FILES_H
#define SMRITI_CLI_FILES_H

#include <sys/types.h>

#include "util/err.h"

/*
 * Writes text to path through a temporary file beside it, fsync and
 * rename, so a crash leaves the old file or the new one.  mode is the new
 * file's (an existing file keeps its own).
 */
enum smr_rc cli_write_file(const char *path, const char *text, mode_t mode,
			   struct smr_err *err);

/* The whole text of path (caller frees); NULL with *missing set when absent. */
enum smr_rc cli_read_file(const char *path, char **text, int *missing, struct smr_err *err);

/* mkdir -p of path's directory, each new level mode 0755. */
void cli_make_parent_dirs(const char *path);

/* Removes path's empty parent directories up to (not including) stop. */
void cli_remove_empty_parents(const char *path, const char *stop);

#endif
