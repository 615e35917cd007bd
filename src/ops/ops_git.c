/*
 * ops_git.c -- a Space as a real git repository: every checkpoint a commit
 * (domain/gitexport.c writes them in git fast-import's format, and git
 * itself builds the objects), merges as merge commits, the branch main at
 * HEAD.  Running it again adds only the checkpoints the repository does not
 * have: <git dir>/smriti-checkpoints lists the checkpoints exported, one a
 * line (line N is fast-import mark N), and <git dir>/smriti-marks is
 * fast-import's own mark file.
 *
 * It works from a bundle (ops_export's document), so the CLI can export a
 * Space of a remote server into a local repository.  It writes files, so it
 * is not an operation a server offers.
 */
#include "domain/bundle.h"
#include "domain/gitexport.h"
#include "ops/ops.h"
#include "util/strmap.h"
#include "util/sys.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BRANCH "refs/heads/main"

/* A checkpoint's mark in m (checkpoint hash -> mark), 0 when it has none. */
static size_t mark_of(const struct strmap *m, const char *hash)
{
	size_t mark = 0;

	if (hash)
		strmap_get(m, hash, &mark);
	return mark;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int is_empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 0;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* The git directory of dir, creating a bare repository in a new or empty dir; caller frees. */
static enum smr_rc git_dir(const char *dir, char **out, struct smr_err *err)
{
	char *dotgit = xasprintf("%s/.git", dir), *head = xasprintf("%s/HEAD", dir);
	const char *init[] = { "git", "init", "--bare", "--quiet", "--initial-branch=main", dir,
			       NULL };
	enum smr_rc rc = SMR_OK;

	*out = NULL;
	if (is_dir(dotgit)) {
		*out = dotgit;
		dotgit = NULL;
	} else if (!access(head, F_OK)) {
		*out = xstrdup(dir);
	} else if (!is_dir(dir) || is_empty_dir(dir)) {
		rc = sys_run(init, NULL, NULL, 0, err);
		if (!rc)
			*out = xstrdup(dir);
	} else {
		rc = smr_errf(err, SMR_EUSAGE, "'%s' is neither a git repository nor a new"
			      " directory", dir);
	}
	free(dotgit);
	free(head);
	return rc;
}

/* The checkpoints already exported (line N: mark N) into m; *n gets their number. */
static enum smr_rc read_map(const char *path, struct strmap *m, size_t *n, struct smr_err *err)
{
	FILE *f = fopen(path, "r");
	char line[128];

	*n = 0;
	if (!f)
		return errno == ENOENT ? SMR_OK
			: smr_errf(err, SMR_EINTERNAL, "cannot read '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		++*n;
		if (!strmap_get(m, line, NULL))   /* a line repeated keeps its first mark */
			strmap_put(m, line, *n);
	}
	fclose(f);
	return SMR_OK;
}

/*
 * The fast-import stream of b's checkpoints not in m (marked from *n + 1
 * on); fresh[] gets them, in order (borrowed from b).
 */
static void build_stream(const struct space_bundle *b, struct strmap *m, size_t *n,
			 struct buf *out, const char **fresh, size_t *added)
{
	*added = 0;
	for (size_t i = 0; i < b->n_checkpoints; i++) {
		const struct checkpoint *c = &b->checkpoints[i];

		if (mark_of(m, c->hash))
			continue;
		strmap_put(m, c->hash, ++*n);
		gitexport_commit(out, BRANCH, b->space.name, c, *n, mark_of(m, c->parent_hash),
				 mark_of(m, c->merge_parent_hash));
		fresh[(*added)++] = c->hash;
	}
	if (b->space.head)
		gitexport_reset(out, BRANCH, mark_of(m, b->space.head));
}

static enum smr_rc append_map(const char *path, const char **fresh, size_t n,
			      struct smr_err *err)
{
	FILE *f = fopen(path, "a");
	int bad = !f;

	for (size_t i = 0; f && i < n; i++)
		bad |= fprintf(f, "%s\n", fresh[i]) < 0;
	if (f)
		bad |= fclose(f) != 0;
	return bad ? smr_errf(err, SMR_EINTERNAL, "cannot write '%s': %s", path, strerror(errno))
		   : SMR_OK;
}

/* Runs git fast-import in dir on the stream, keeping its marks in gitdir. */
static enum smr_rc fast_import(const char *dir, const char *gitdir, const struct buf *stream,
			       struct smr_err *err)
{
	char *abs = realpath(gitdir, NULL);
	char *imp, *exp;
	enum smr_rc rc;

	if (!abs)
		return smr_errf(err, SMR_EINTERNAL, "cannot resolve '%s': %s", gitdir,
				strerror(errno));
	imp = xasprintf("--import-marks-if-exists=%s/smriti-marks", abs);
	exp = xasprintf("--export-marks=%s/smriti-marks", abs);
	{
		const char *argv[] = { "git", "-C", dir, "fast-import", "--quiet", "--force", imp,
				       exp, NULL };

		rc = sys_run(argv, NULL, stream->ptr, stream->len, err);
	}
	free(imp);
	free(exp);
	free(abs);
	return rc;
}

enum smr_rc ops_git_export(const json_t *bundle, const char *dir, json_t **report,
			   struct smr_err *err)
{
	struct space_bundle *v = NULL;
	struct strmap m = STRMAP_INIT;
	struct buf stream = BUF_INIT(0);
	const char **fresh = NULL;
	char *gitdir = NULL, *map = NULL;
	size_t n = 0, nmarks = 0, added = 0;
	enum smr_rc rc = bundle_from_json(bundle, &v, &n, err);

	if (!rc && n != 1)
		rc = smr_errf(err, SMR_EUSAGE, "export --git writes one Space, not %zu", n);
	if (!rc)
		rc = git_dir(dir, &gitdir, err);
	if (!rc) {
		map = xasprintf("%s/smriti-checkpoints", gitdir);
		rc = read_map(map, &m, &nmarks, err);
	}
	if (!rc) {
		fresh = xcalloc(v[0].n_checkpoints + 1, sizeof(*fresh));
		build_stream(&v[0], &m, &nmarks, &stream, fresh, &added);
		rc = fast_import(dir, gitdir, &stream, err);
	}
	if (!rc)
		rc = append_map(map, fresh, added, err);
	if (!rc)
		*report = json_pack("{s:s, s:s, s:s, s:I, s:I}", "space", v[0].space.name, "dir", dir,
				    "branch", "main", "added", (json_int_t)added, "commits",
				    (json_int_t)nmarks);
	free(fresh);
	free(map);
	free(gitdir);
	buf_release(&stream);
	strmap_release(&m);
	space_bundles_free(v, n);
	return rc;
}
