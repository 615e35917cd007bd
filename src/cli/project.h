/*
 * project.h -- the project file: a small JSON file, .smriti.json, that names
 * a project's Space and (optionally) its database or server, found by
 * walking up from the current directory as git finds .git.
 *
 * Precedence, stated once (docs/cli.md "Project file"): a SPACE named on
 * the command line beats the file's; --db, --remote, SMRITI_DB and
 * SMRITI_URL each beat the file's store, and when any of them is given the
 * file's "db" and "url" are both ignored (one store choice, never half of
 * each); the file beats the XDG default database.
 */
#ifndef SMRITI_CLI_PROJECT_H
#define SMRITI_CLI_PROJECT_H

#include "util/err.h"

#define PROJECT_FILE ".smriti.json"

struct project {
	char *path;    /* absolute path of the file, NULL when none was found */
	char *space;   /* its Space */
	char *db;      /* its database (a relative path made absolute from the file's
			  directory), or NULL */
	char *url;     /* its server, or NULL */
};

/*
 * Looks for PROJECT_FILE in dir and its parents (dir NULL: the current
 * directory).  None found is SMR_OK with p->path NULL.  A file that is not
 * a JSON object with a non-empty "space" string is SMR_EINVAL naming it.
 * Release with project_release().
 */
enum smr_rc project_find(const char *dir, struct project *p, struct smr_err *err);

void project_release(struct project *p);

/*
 * The file's text for space and at most one of db and url: a JSON object,
 * two-space indented, final newline.  Caller frees.
 */
char *project_text(const char *space, const char *db, const char *url);

#endif
