/*
 * project.c -- finding and reading the project file (see project.h).
 */
#include "cli/project.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void project_release(struct project *p)
{
	free(p->path);
	free(p->space);
	free(p->db);
	free(p->url);
	memset(p, 0, sizeof(*p));
}

/* A string member, or NULL when absent or empty; SMR_EINVAL when not a string. */
static enum smr_rc member(const json_t *doc, const char *key, const char *path, char **out,
			  struct smr_err *err)
{
	const json_t *v = json_object_get(doc, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return SMR_OK;
	if (!json_is_string(v))
		return smr_errf(err, SMR_EINVAL, "'%s' in %s must be a string", key, path);
	if (json_string_length(v))
		*out = xstrdup(json_string_value(v));
	return SMR_OK;
}

/* The file's db made absolute from dir (the file's directory) when relative. */
static void absolute_db(struct project *p, const char *dir)
{
	char *abs;

	if (!p->db || p->db[0] == '/' || strstr(p->db, "://") || !strncmp(p->db, "file:", 5) ||
	    !strcmp(p->db, ":memory:"))
		return;
	abs = xasprintf("%s/%s", dir, p->db);
	free(p->db);
	p->db = abs;
}

static enum smr_rc project_read(const char *dir, const char *path, struct project *p,
				struct smr_err *err)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	enum smr_rc rc;

	if (!doc || !json_is_object(doc)) {
		json_decref(doc);
		return smr_errf(err, SMR_EINVAL, "%s is not a JSON object (%s): fix it or run "
				"'smriti init --force'", path, doc ? "not an object" : jerr.text);
	}
	p->path = xstrdup(path);
	rc = member(doc, "space", path, &p->space, err);
	if (!rc && !p->space)
		rc = smr_errf(err, SMR_EINVAL, "%s names no \"space\": run 'smriti init SPACE "
			      "--force' there", path);
	if (!rc)
		rc = member(doc, "db", path, &p->db, err);
	if (!rc)
		rc = member(doc, "url", path, &p->url, err);
	json_decref(doc);
	if (rc)
		project_release(p);
	else
		absolute_db(p, dir);
	return rc;
}

enum smr_rc project_find(const char *start, struct project *p, struct smr_err *err)
{
	char dir[PATH_MAX], *path, *slash;
	struct stat st;
	enum smr_rc rc;

	memset(p, 0, sizeof(*p));
	if (start ? !realpath(start, dir) : !getcwd(dir, sizeof(dir)))
		return SMR_OK;          /* no current directory: no project, as git says */
	for (;;) {
		path = xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", PROJECT_FILE);
		if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			rc = project_read(dir, path, p, err);
			free(path);
			return rc;
		}
		free(path);
		slash = strrchr(dir, '/');
		if (!slash || !strcmp(dir, "/"))
			return SMR_OK;
		slash[slash == dir] = '\0';
	}
}

char *project_text(const char *space, const char *db, const char *url)
{
	json_t *doc = json_pack("{s:s, s:s*, s:s*}", "space", space, "db", db, "url", url);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *out = xasprintf("%s\n", text);

	free(text);
	json_decref(doc);
	return out;
}
