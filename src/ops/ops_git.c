/*
 * ops_git.c -- a Space as a branch of a real git repository: every
 * checkpoint a commit (domain/gitexport.c writes them in git fast-import's
 * format, and git itself builds the objects), merges as merge commits, the
 * branch (smriti/SPACE unless chosen) at HEAD.  Several Spaces share one
 * repository, and a checkpoint two Spaces hold (a fork's history) is one
 * commit: <git dir>/smriti-checkpoints lists the checkpoints exported into
 * the repository, one a line (line N is fast-import mark N), and
 * <git dir>/smriti-marks is fast-import's own mark file, so running it again
 * adds only the checkpoints the repository does not have, whichever Space
 * brought them.
 *
 * It never moves a ref it did not write, and never touches HEAD, the index
 * or a work tree: fast-import builds the commits on a scratch ref it forgets
 * before it ends (so never writes), and the branch moves last, by `git update-ref` from the tip
 * read at the start, which must be a commit of smriti-marks (or --force), in
 * no work tree's checkout.  <git dir>/smriti-export.lock keeps two exports
 * from numbering marks at once.
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
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCRATCH "refs/smriti-export/scratch"
#define HEADS "refs/heads/"
#define BRANCH_MAX 200   /* bytes: a ref is a file name on git's files backend */

/*
 * What git must not inherit, as it would point it at another repository
 * (say a hook's): `git rev-parse --local-env-vars`, which git itself clears
 * before it runs a command in another repository.
 */
static const char *const git_env[] = {
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
	"GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE",
	"GIT_COMMON_DIR", NULL,
};

/* One export's state; export_release() frees it. */
struct export {
	const char *dir;
	const struct space_bundle *b;
	char *ref;              /* refs/heads/BRANCH */
	const char *branch;     /* ref + strlen(HEADS) */
	char *gitdir;
	char *lock;             /* the lock file, while this export holds it */
	char *tip;              /* the branch's commit now; NULL while there is none */
	struct strmap ckpts;    /* checkpoint hash -> mark (smriti-checkpoints) */
	size_t nmarks;
	struct strmap commits;  /* commit id -> mark (smriti-marks): what exports wrote */
};

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

/*
 * Whether git accepts ref as a ref name (git check-ref-format): SMR_OK,
 * SMR_EINTERNAL with err untouched when it does not, SMR_ENOTFOUND without git.
 */
static enum smr_rc check_ref(const char *ref, struct smr_err *err)
{
	const char *argv[] = { "git", "check-ref-format", ref, NULL };
	struct smr_err quiet = SMR_ERR_INIT;
	enum smr_rc rc = sys_run(argv, git_env, NULL, 0, &quiet);

	if (rc == SMR_ENOTFOUND)
		*err = quiet;
	return rc;
}

/* Whether a --branch name is one of a branch, not a ref or an option. */
static int branch_like(const char *name)
{
	return *name && *name != '-' && strncmp(name, "refs/", 5) && strcmp(name, "HEAD");
}

/* x->ref: --branch's name, or smriti/SPACE; a name git refuses is a usage error. */
static enum smr_rc branch_ref(struct export *x, const char *chosen, struct smr_err *err)
{
	struct buf ref = BUF_INIT(0);
	enum smr_rc rc;

	buf_adds(&ref, HEADS);
	if (chosen)
		buf_adds(&ref, chosen);
	else
		gitexport_branch_name(x->b->space.name, &ref);
	x->ref = buf_detach(&ref, NULL);
	x->branch = x->ref + strlen(HEADS);
	if (strlen(x->branch) <= BRANCH_MAX && (!chosen || branch_like(chosen))) {
		rc = check_ref(x->ref, err);
		if (rc != SMR_EINTERNAL)   /* accepted, or git is missing */
			return rc;
	}
	if (chosen)
		return smr_errf(err, SMR_EUSAGE, "--branch '%s' is not a branch name git accepts"
				" (see git check-ref-format; give it without refs/heads/)", chosen);
	return smr_errf(err, SMR_EUSAGE, "Space '%s' gives no branch name git accepts;"
			" choose one with --branch", x->b->space.name);
}

/* The git directory a linked work tree dir shares with its repository; caller frees. */
static enum smr_rc common_dir(const char *dir, char **out, struct smr_err *err)
{
	const char *argv[] = { "git", "-C", dir, "rev-parse", "--path-format=absolute",
			       "--git-common-dir", NULL };
	struct buf path = BUF_INIT(PATH_MAX);
	enum smr_rc rc = sys_run_read(argv, git_env, &path, err);
	size_t n = strcspn(path.ptr, "\n");

	if (!rc && !n)
		rc = smr_errf(err, SMR_EUSAGE, "'%s' is neither a git repository nor a new"
			      " directory", dir);
	if (!rc)
		*out = xstrndup(path.ptr, n);
	buf_release(&path);
	return rc;
}

/*
 * The git directory of dir, creating a bare repository, with HEAD on
 * branch, in a new or empty dir; caller frees.
 */
static enum smr_rc git_dir(const char *dir, const char *branch, char **out,
			   struct smr_err *err)
{
	char *dotgit = xasprintf("%s/.git", dir), *head = xasprintf("%s/HEAD", dir);
	char *initial = xasprintf("--initial-branch=%s", branch);
	const char *init[] = { "git", "init", "--bare", "--quiet", initial, dir, NULL };
	enum smr_rc rc = SMR_OK;

	*out = NULL;
	if (is_dir(dotgit)) {
		*out = dotgit;
		dotgit = NULL;
	} else if (!access(dotgit, F_OK)) {   /* a linked work tree: its .git names where */
		rc = common_dir(dir, out, err);
	} else if (!access(head, F_OK)) {
		*out = xstrdup(dir);
	} else if (!is_dir(dir) || is_empty_dir(dir)) {
		rc = sys_run(init, git_env, NULL, 0, err);
		if (!rc)
			*out = xstrdup(dir);
	} else {
		rc = smr_errf(err, SMR_EUSAGE, "'%s' is neither a git repository nor a new"
			      " directory", dir);
	}
	free(initial);
	free(dotgit);
	free(head);
	return rc;
}

/* Holds <git dir>/smriti-export.lock, which a crashed export may have left behind. */
static enum smr_rc take_lock(struct export *x, struct smr_err *err)
{
	char *path = xasprintf("%s/smriti-export.lock", x->gitdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	enum smr_rc rc = SMR_OK;

	if (fd >= 0) {
		close(fd);
		x->lock = path;
		return SMR_OK;
	}
	if (errno == EEXIST)
		rc = smr_errf(err, SMR_ECONFLICT, "another export into '%s' is running (if none"
			      " is, remove %s)", x->dir, path);
	else
		rc = smr_errf(err, SMR_EINTERNAL, "cannot create '%s': %s", path,
			      strerror(errno));
	free(path);
	return rc;
}

/* The length of the line at s, without its newline; *next the line after it. */
static size_t line_len(const char *s, const char **next)
{
	size_t n = strcspn(s, "\n");

	*next = s + n + (s[n] == '\n');
	return n;
}

/*
 * Refuses a branch checked out in a work tree of the repository: moving it
 * would change what `git status` says there.  Lines of `git worktree list
 * --porcelain`: "worktree PATH", then "branch REF" when one is checked out.
 */
static enum smr_rc refuse_checked_out(const struct export *x, struct smr_err *err)
{
	const char *argv[] = { "git", "-C", x->dir, "worktree", "list", "--porcelain", NULL };
	struct buf out = BUF_INIT(1 << 20);
	const char *tree = "", *line, *next;
	enum smr_rc rc = sys_run_read(argv, git_env, &out, err);

	for (line = out.ptr; !rc && *line; line = next) {
		size_t n = line_len(line, &next);

		if (!strncmp(line, "worktree ", 9))
			tree = line + 9;
		else if (n == 7 + strlen(x->ref) && !strncmp(line, "branch ", 7) &&
			 !strncmp(line + 7, x->ref, n - 7))
			rc = smr_errf(err, SMR_ECONFLICT, "branch '%s' is checked out in '%.*s';"
				      " switch that work tree to another branch, or export to"
				      " another with --branch", x->branch, (int)strcspn(tree, "\n"),
				      tree);
	}
	buf_release(&out);
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
 * Reads fast-import's mark file (":N ID" a line): commits gets each commit
 * id with its mark; with want nonzero, *id the id of mark want (caller
 * frees), which must be there.
 */
static enum smr_rc read_marks(const char *path, struct strmap *commits, size_t want, char **id,
			      struct smr_err *err)
{
	FILE *f = fopen(path, "r");
	char line[256], *end;

	if (!f && errno != ENOENT)
		return smr_errf(err, SMR_EINTERNAL, "cannot read '%s': %s", path, strerror(errno));
	while (f && fgets(line, sizeof(line), f)) {
		size_t mark = line[0] == ':' ? strtoul(line + 1, &end, 10) : 0;

		if (!mark || *end != ' ')
			continue;
		end[1 + strcspn(end + 1, " \n")] = '\0';
		strmap_put(commits, end + 1, mark);
		if (want && mark == want && id && !*id)
			*id = xstrdup(end + 1);
	}
	if (f)
		fclose(f);
	if (want && id && !*id)
		return smr_errf(err, SMR_EINTERNAL, "'%s' has no mark %zu; remove it and"
				" smriti-checkpoints beside it, then export again with --force", path,
				want);
	return SMR_OK;
}

/* x->tip: the commit x->ref points at, NULL while there is no such branch. */
static enum smr_rc read_tip(struct export *x, struct smr_err *err)
{
	const char *argv[] = { "git", "-C", x->dir, "for-each-ref",
			       "--format=%(objectname) %(refname)", x->ref, NULL };
	struct buf out = BUF_INIT(1 << 20);
	enum smr_rc rc = sys_run_read(argv, git_env, &out, err);
	const char *line, *next;

	for (line = out.ptr; !rc && *line && !x->tip; line = next) {
		size_t n = line_len(line, &next), id = strcspn(line, " ");

		if (id < n && n - id - 1 == strlen(x->ref) && !strncmp(line + id + 1, x->ref, n - id - 1))
			x->tip = xstrndup(line, id);
	}
	buf_release(&out);
	return rc;
}

/* Refuses a branch whose tip no export wrote, unless forced. */
static enum smr_rc check_owner(const struct export *x, int force, struct smr_err *err)
{
	if (!x->tip || force || strmap_get(&x->commits, x->tip, NULL))
		return SMR_OK;
	return smr_errf(err, SMR_ECONFLICT, "branch '%s' of '%s' is at %.12s, a commit Smriti did"
			" not write; nothing was changed (--force overwrites it)", x->branch, x->dir,
			x->tip);
}

/*
 * The fast-import stream of x's checkpoints not in x->ckpts (marked from
 * x->nmarks + 1 on), built on the scratch ref fast-import never writes;
 * fresh[] gets them, in order (borrowed from the bundle).
 */
static void build_stream(struct export *x, struct buf *out, const char **fresh, size_t *added)
{
	const struct space_bundle *b = x->b;

	*added = 0;
	for (size_t i = 0; i < b->n_checkpoints; i++) {
		const struct checkpoint *c = &b->checkpoints[i];

		if (mark_of(&x->ckpts, c->hash))
			continue;
		strmap_put(&x->ckpts, c->hash, ++x->nmarks);
		gitexport_commit(out, SCRATCH, b->space.name, c, x->nmarks,
				 mark_of(&x->ckpts, c->parent_hash),
				 mark_of(&x->ckpts, c->merge_parent_hash));
		fresh[(*added)++] = c->hash;
	}
	gitexport_reset(out, SCRATCH, 0);
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
		const char *argv[] = { "git", "-C", dir, "fast-import", "--quiet", imp, exp, NULL };

		rc = sys_run(argv, git_env, stream->ptr, stream->len, err);
	}
	if (rc == SMR_EINTERNAL)   /* git said why above; what a person can do about it */
		smr_errf(err, rc, "git fast-import failed in '%s'; if an object was not found,"
			 " a commit an export wrote is gone (branch deleted, then gc): remove"
			 " smriti-checkpoints and smriti-marks from %s, export each Space again"
			 " with --force", dir, abs);
	free(imp);
	free(exp);
	free(abs);
	return rc;
}

/* Moves x->ref from the tip read at the start to id, or refuses if it moved since. */
static enum smr_rc move_branch(const struct export *x, const char *id, struct smr_err *err)
{
	char *why = xasprintf("smriti export --git: %s", x->b->space.name);
	const char *argv[] = { "git", "-C", x->dir, "update-ref", "-m", why, x->ref, id,
			       x->tip ? x->tip : "", NULL };
	enum smr_rc rc = SMR_OK;

	if (!x->tip || strcmp(x->tip, id))
		rc = sys_run(argv, git_env, NULL, 0, err);
	free(why);
	if (rc == SMR_EINTERNAL)
		rc = smr_errf(err, SMR_ECONFLICT, "branch '%s' of '%s' moved during the export and"
			      " was left as it is; run the export again", x->branch, x->dir);
	return rc;
}

static void export_release(struct export *x)
{
	if (x->lock)
		unlink(x->lock);
	free(x->lock);
	free(x->ref);
	free(x->gitdir);
	free(x->tip);
	strmap_release(&x->ckpts);
	strmap_release(&x->commits);
}

/* The export proper, with the lock held. */
static enum smr_rc export_locked(struct export *x, int force, json_t **report,
				 struct smr_err *err)
{
	char *map = xasprintf("%s/smriti-checkpoints", x->gitdir);
	char *marks = xasprintf("%s/smriti-marks", x->gitdir), *id = NULL;
	const char **fresh = xcalloc(x->b->n_checkpoints + 1, sizeof(*fresh));
	struct buf stream = BUF_INIT(0);
	size_t added = 0;
	enum smr_rc rc = refuse_checked_out(x, err);

	if (!rc)
		rc = read_tip(x, err);
	if (!rc)
		rc = read_map(map, &x->ckpts, &x->nmarks, err);
	if (!rc)
		rc = read_marks(marks, &x->commits, 0, NULL, err);
	if (!rc)
		rc = check_owner(x, force, err);
	if (!rc)
		build_stream(x, &stream, fresh, &added);
	if (!rc && added)
		rc = fast_import(x->dir, x->gitdir, &stream, err);
	if (!rc)
		rc = append_map(map, fresh, added, err);
	if (!rc && x->b->space.head)
		rc = read_marks(marks, &x->commits, mark_of(&x->ckpts, x->b->space.head), &id,
				err);
	if (!rc && id)
		rc = move_branch(x, id, err);
	if (!rc)
		*report = json_pack("{s:s, s:s, s:s, s:I, s:I}", "space", x->b->space.name, "dir",
				    x->dir, "branch", x->branch, "added", (json_int_t)added,
				    "commits", (json_int_t)x->b->n_checkpoints);
	free(id);
	free(fresh);
	free(map);
	free(marks);
	buf_release(&stream);
	return rc;
}

enum smr_rc ops_git_export(const json_t *bundle, const char *dir,
			   const struct ops_git_opts *opt, json_t **report, struct smr_err *err)
{
	struct export x = { .dir = dir, .ckpts = STRMAP_INIT, .commits = STRMAP_INIT };
	struct space_bundle *v = NULL;
	size_t n = 0;
	enum smr_rc rc = bundle_from_json(bundle, &v, &n, err);

	if (!rc && n != 1)
		rc = smr_errf(err, SMR_EUSAGE, "export --git writes one Space, not %zu", n);
	if (!rc) {
		x.b = &v[0];
		rc = branch_ref(&x, opt ? opt->branch : NULL, err);
	}
	if (!rc)
		rc = git_dir(dir, x.branch, &x.gitdir, err);
	if (!rc)
		rc = take_lock(&x, err);
	if (!rc)
		rc = export_locked(&x, opt && opt->force, report, err);
	export_release(&x);
	space_bundles_free(v, n);
	return rc;
}
