/*
 * files.c -- whole-file reads and writes for the CLI (see files.h).
 */
#include "cli/files.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 MiB: far beyond any host's settings; a bigger file is not one we edit. */
#define FILE_MAX (1 << 20)

enum smr_rc cli_write_file(const char *path, const char *text, mode_t mode,
			   struct smr_err *err)
{
	char *tmp = xasprintf("%s.smriti-tmp.%ld", path, (long)getpid());
	struct stat st;
	FILE *f = fopen(tmp, "w");
	enum smr_rc rc = SMR_OK;

	if (!stat(path, &st))
		mode = st.st_mode & 07777;
	if (!f) {
		rc = smr_errf(err, SMR_EINTERNAL, "cannot write '%s': %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	if (fchmod(fileno(f), mode) || fputs(text, f) < 0 || fflush(f) || fsync(fileno(f)))
		rc = smr_errf(err, SMR_EINTERNAL, "cannot write '%s': %s", tmp, strerror(errno));
	if (fclose(f) && !rc)
		rc = smr_errf(err, SMR_EINTERNAL, "cannot write '%s': %s", tmp, strerror(errno));
	if (!rc && rename(tmp, path))
		rc = smr_errf(err, SMR_EINTERNAL, "cannot write '%s': %s", path, strerror(errno));
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

enum smr_rc cli_read_file(const char *path, char **text, int *missing, struct smr_err *err)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	*text = NULL;
	*missing = !f && errno == ENOENT;
	if (!f)
		return *missing ? SMR_OK : smr_errf(err, SMR_EINTERNAL, "cannot read '%s': %s",
						    path, strerror(errno));
	buf = xmalloc(FILE_MAX + 1);
	n = fread(buf, 1, FILE_MAX + 1, f);
	fclose(f);
	if (n > FILE_MAX || memchr(buf, '\0', n)) {
		free(buf);
		return smr_errf(err, SMR_EINVAL, "'%s' is not a text file of at most 1 MiB: "
				"edit it by hand", path);
	}
	buf[n] = '\0';
	*text = buf;
	return SMR_OK;
}

void cli_make_parent_dirs(const char *path)
{
	char *dir = xstrdup(path);

	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	free(dir);
}

void cli_remove_empty_parents(const char *path, const char *stop)
{
	char *dir = xstrdup(path), *slash;
	size_t n = strlen(stop);

	while ((slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (strlen(dir) <= n || strncmp(dir, stop, n) || rmdir(dir))
			break;
	}
	free(dir);
}
