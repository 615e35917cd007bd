/*
 * cmd_setup.c -- `smriti setup HOST`: wires Smriti into an agent host by
 * editing that host's own configuration (the MCP server, a session-start
 * hook running `smriti prime`, a stop hook that reminds the agent to
 * checkpoint), and `smriti setup agents-md`: a marked section in the
 * instruction files agents read.  Where each host keeps what, and in which
 * shape, is this file's table; how a file is edited is setup_json.c and
 * setup_text.c.  Nothing is written before every file has been read and
 * its new text made, so a file that cannot be parsed changes nothing.
 */
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/setup.h"
#include "util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_USER = 1, OPT_PROJECT, OPT_DRY_RUN, OPT_REMOVE, OPT_URL, OPT_FILE };

static const struct option setup_opts[] = {
	{ "user", no_argument, NULL, OPT_USER },
	{ "project", no_argument, NULL, OPT_PROJECT },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "remove", no_argument, NULL, OPT_REMOVE },
	{ "url", required_argument, NULL, OPT_URL },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define MAX_FILES 4

struct setup_args {
	int user, project, dry_run, remove;
	const char *url;
	const char *files[MAX_FILES];
	size_t nfiles;
};

enum target_kind { T_JSON, T_TOML, T_MD };

struct target {
	enum target_kind kind;
	char *path;
	const char *what;                 /* what Smriti keeps there, for the report */
	struct jedit edits[4];
	size_t n;
	char *text;                       /* T_TOML's table, T_MD's section */
	char *before, *after;             /* the file's text now and to be (NULL: none) */
};

struct plan {
	const char *host;
	struct target t[MAX_FILES];
	size_t n;
	const char *note;                 /* what the user must still do, or NULL */
	char *root;                       /* where emptied directories stop being removed */
};

struct where {
	const char *scope;                /* "project" or "user" */
	char *dir;                        /* the project directory or HOME */
	const char *url;                  /* the server, or NULL for stdio */
	const char *db;                   /* a database named for the server's env, or NULL */
	int remove;                       /* --remove: every form Smriti may have written goes */
	char self[PATH_MAX];              /* this binary, for hosts that need a full path */
};

static struct target *add_target(struct plan *p, enum target_kind kind, char *path,
				 const char *what)
{
	struct target *t = &p->t[p->n++];

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->path = path;
	t->what = what;
	return t;
}

static void edit(struct target *t, enum jedit_kind kind, json_t *value, const char *k0,
		 const char *k1, const char *k2)
{
	struct jedit *e = &t->edits[t->n++];

	e->kind = kind;
	e->value = value;
	e->path[0] = k0;
	e->path[1] = k1;
	e->path[2] = k2;
	e->path[3] = NULL;
}

/* "http://host:7411" -> "http://host:7411/mcp"; caller frees. */
static char *mcp_url(const char *url)
{
	size_t n = strlen(url);

	if (n >= 4 && !strcmp(url + n - 4, "/mcp"))
		return xstrdup(url);
	return xasprintf("%s%smcp", url, n && url[n - 1] == '/' ? "" : "/");
}

/* The stdio server entry: {type?, command, args, env?}; new reference. */
static json_t *stdio_entry(const struct where *w, int typed, int full_path)
{
	json_t *e = json_object();

	if (typed)
		json_object_set_new(e, "type", json_string("stdio"));
	json_object_set_new(e, "command", json_string(full_path ? w->self : "smriti"));
	json_object_set_new(e, "args", json_pack("[s]", "mcp"));
	if (w->db)
		json_object_set_new(e, "env", json_pack("{s:s}", "SMRITI_DB", w->db));
	return e;
}

/*
 * The HTTP server entry: url under url_key, the token as an Authorization
 * header naming a variable the host expands (auth), never its value.
 */
static json_t *http_entry(const struct where *w, const char *url_key, int typed,
			  const char *auth)
{
	char *url = mcp_url(w->url);
	json_t *e = json_object();

	if (typed)
		json_object_set_new(e, "type", json_string("http"));
	json_object_set_new(e, url_key, json_string(url));
	json_object_set_new(e, "headers", json_pack("{s:s}", "Authorization", auth));
	free(url);
	return e;
}

static json_t *hook(const char *command, json_int_t timeout)
{
	json_t *h = json_pack("{s:s, s:s}", "type", "command", "command", command);

	if (timeout)
		json_object_set_new(h, "timeout", json_integer(timeout));
	return h;
}

/* A hook group {matcher?, hooks: [hook]}; steals h. */
static json_t *group(const char *matcher, json_t *h)
{
	json_t *g = json_object();

	if (matcher)
		json_object_set_new(g, "matcher", json_string(matcher));
	json_object_set_new(g, "hooks", json_pack("[o]", h));
	return g;
}

static char *in_dir(const struct where *w, const char *rel)
{
	return xasprintf("%s/%s", w->dir, rel);
}

static const char *config_home(char *buf, size_t n, const struct where *w)
{
	const char *x = getenv("XDG_CONFIG_HOME");

	snprintf(buf, n, "%s", x && x[0] == '/' ? x : "");
	if (!*buf)
		snprintf(buf, n, "%s/.config", w->dir);
	return buf;
}

/*
 * Claude Code: .mcp.json (project) or ~/.claude.json (user) for the
 * server; .claude/settings.json or ~/.claude/settings.json for the hooks.
 * SessionStart fires again after a compaction (source "compact"), which is
 * where the primer must come back.
 */
static void host_claude(struct plan *p, const struct where *w, int user)
{
	struct target *t = add_target(p, T_JSON, in_dir(w, user ? ".claude.json" : ".mcp.json"),
				      "MCP server 'smriti'");

	edit(t, JEDIT_MEMBER, w->url ? http_entry(w, "url", 1, "Bearer ${SMRITI_TOKEN}") :
	     stdio_entry(w, 1, 0), "mcpServers", "smriti", NULL);
	t = add_target(p, T_JSON, in_dir(w, ".claude/settings.json"), "SessionStart and Stop hooks");
	edit(t, JEDIT_GROUP, group("startup|resume|clear|compact",
				   hook("smriti prime --hook claude", 30)), "hooks", "SessionStart",
	     NULL);
	edit(t, JEDIT_GROUP, group(NULL, hook("smriti prime --stop-hook claude", 30)), "hooks",
	     "Stop", NULL);
	p->note = user ? NULL : "Claude Code asks you to approve the project's MCP server"
		  " (.mcp.json) the first time it starts here.";
}

/* The Codex table: stdio forwarding Smriti's variables, or HTTP naming the token's. */
static char *codex_table(const struct where *w)
{
	char *url, *out;

	if (!w->url)
		return xasprintf("[mcp_servers.smriti]\ncommand = \"smriti\"\nargs = [\"mcp\"]\n"
				 "env_vars = [\"SMRITI_DB\", \"SMRITI_URL\", \"SMRITI_TOKEN\","
				 " \"SMRITI_AUTHOR\"]\n");
	url = mcp_url(w->url);
	out = xasprintf("[mcp_servers.smriti]\nurl = \"%s\"\nbearer_token_env_var ="
			" \"SMRITI_TOKEN\"\n", url);
	free(url);
	return out;
}

/* Codex CLI: config.toml's [mcp_servers.smriti] and hooks.json, in .codex or CODEX_HOME. */
static void host_codex(struct plan *p, const struct where *w, int user)
{
	const char *home = getenv("CODEX_HOME");
	char *dir = user && home && home[0] == '/' ? xstrdup(home) : in_dir(w, ".codex");
	struct target *t;

	t = add_target(p, T_TOML, xasprintf("%s/config.toml", dir), "[mcp_servers.smriti]");
	t->text = codex_table(w);
	t = add_target(p, T_JSON, xasprintf("%s/hooks.json", dir), "SessionStart and Stop hooks");
	edit(t, JEDIT_GROUP, group("startup|resume|clear|compact",
				   hook("smriti prime --hook codex", 30)), "hooks", "SessionStart",
	     NULL);
	edit(t, JEDIT_GROUP, group(NULL, hook("smriti prime --stop-hook codex", 30)), "hooks",
	     "Stop", NULL);
	free(dir);
	p->note = "Codex runs new hooks only once you trust them (/hooks in Codex), and a"
		  " project's .codex only in a trusted project.";
}

/*
 * Gemini CLI: .gemini/settings.json or ~/.gemini/settings.json.  Its hooks
 * must print JSON only; AfterAgent is its stop; timeouts are milliseconds.
 */
static void host_gemini(struct plan *p, const struct where *w, int user)
{
	struct target *t = add_target(p, T_JSON, in_dir(w, ".gemini/settings.json"),
				      "MCP server 'smriti', SessionStart and AfterAgent hooks");
	json_t *start = hook("smriti prime --hook gemini", 30000);
	json_t *stop = hook("smriti prime --stop-hook gemini", 30000);

	json_object_set_new(start, "name", json_string("smriti-prime"));
	json_object_set_new(stop, "name", json_string("smriti-checkpoint-reminder"));
	edit(t, JEDIT_MEMBER, w->url ? http_entry(w, "httpUrl", 0, "Bearer ${SMRITI_TOKEN}") :
	     stdio_entry(w, 0, 0), "mcpServers", "smriti", NULL);
	edit(t, JEDIT_GROUP, group(NULL, start), "hooks", "SessionStart", NULL);
	edit(t, JEDIT_GROUP, group(NULL, stop), "hooks", "AfterAgent", NULL);
	p->note = user ? NULL : "Gemini CLI reads a project's .gemini/settings.json only in a"
		  " trusted folder.";
}

/* Cursor: .cursor/mcp.json and .cursor/hooks.json (or under ~/.cursor). */
static void host_cursor(struct plan *p, const struct where *w, int user)
{
	struct target *t = add_target(p, T_JSON, in_dir(w, ".cursor/mcp.json"),
				      "MCP server 'smriti'");

	(void)user;
	edit(t, JEDIT_MEMBER, w->url ? http_entry(w, "url", 0, "Bearer ${env:SMRITI_TOKEN}") :
	     stdio_entry(w, 0, 0), "mcpServers", "smriti", NULL);
	t = add_target(p, T_JSON, in_dir(w, ".cursor/hooks.json"), "sessionStart and stop hooks");
	edit(t, JEDIT_DEFAULT, json_integer(1), "version", NULL, NULL);
	edit(t, JEDIT_HOOK, json_pack("{s:s}", "command", "smriti prime --hook cursor"), "hooks",
	     "sessionStart", NULL);
	edit(t, JEDIT_HOOK, json_pack("{s:s}", "command", "smriti prime --stop-hook cursor"),
	     "hooks", "stop", NULL);
}

/*
 * VS Code: .vscode/mcp.json ("servers") or the profile's mcp.json; hooks
 * (Preview) in a file of Smriti's own, .github/hooks/smriti.json or
 * ~/.copilot/hooks/smriti.json.  Over HTTP the token is an input VS Code
 * asks for once and keeps in its secret storage.
 */
static void host_vscode(struct plan *p, const struct where *w, int user)
{
	char cfg[PATH_MAX];
	struct target *t;

#ifdef __APPLE__
	snprintf(cfg, sizeof(cfg), "%s/Library/Application Support", w->dir);
#else
	config_home(cfg, sizeof(cfg), w);
#endif
	t = add_target(p, T_JSON, user ? xasprintf("%s/Code/User/mcp.json", cfg) :
		       in_dir(w, ".vscode/mcp.json"), "MCP server 'smriti'");
	edit(t, JEDIT_MEMBER, w->url ? http_entry(w, "url", 1, "Bearer ${input:smriti-token}") :
	     stdio_entry(w, 1, 0), "servers", "smriti", NULL);
	if (w->url || w->remove)
		edit(t, JEDIT_ITEM, json_pack("{s:s, s:s, s:s, s:b}", "type", "promptString", "id",
					      "smriti-token", "description", "Smriti token "
					      "(SMRITI_TOKEN)", "password", 1), "inputs", NULL,
		     NULL);
	t = add_target(p, T_JSON, in_dir(w, user ? ".copilot/hooks/smriti.json" :
					 ".github/hooks/smriti.json"), "SessionStart and Stop hooks");
	edit(t, JEDIT_HOOK, hook("smriti prime --hook vscode", 30), "hooks", "SessionStart", NULL);
	edit(t, JEDIT_HOOK, hook("smriti prime --stop-hook vscode", 30), "hooks", "Stop", NULL);
	p->note = "VS Code's agent hooks are a Preview feature; it also runs Claude Code's hooks"
		  " (.claude/settings.json), so set up one of the two for hooks.";
}

/*
 * Claude Desktop: one user file, stdio only (its file takes no HTTP
 * server), the command by full path since a GUI app may not see PATH.
 */
static void host_desktop(struct plan *p, const struct where *w, int user)
{
	char cfg[PATH_MAX];
	struct target *t;

	(void)user;
#ifdef __APPLE__
	t = add_target(p, T_JSON, in_dir(w, "Library/Application Support/Claude/"
				   "claude_desktop_config.json"), "MCP server 'smriti'");
	(void)cfg;
#else
	t = add_target(p, T_JSON, xasprintf("%s/Claude/claude_desktop_config.json",
					    config_home(cfg, sizeof(cfg), w)),
		       "MCP server 'smriti'");
#endif
	edit(t, JEDIT_MEMBER, stdio_entry(w, 0, 1), "mcpServers", "smriti", NULL);
	p->note = "Restart Claude Desktop to load the server.";
}

static const char agents_section[] =
	SETUP_MD_BEGIN "\n"
	"## Smriti: this project's reasoning state\n\n"
	"Decisions, tasks and open questions live in Smriti, on the Space named in"
	" `.smriti.json` (`smriti status` shows it).\n\n"
	"- Start by reading where things stand: `smriti prime` (or `smriti head`).\n"
	"- At a point worth keeping, write a Checkpoint on the HEAD you read:"
	" `smriti checkpoint create --parent HASH --title T --decision D --task T`.\n"
	"- Exit 4 is a conflict: someone wrote since you read. Read HEAD again, fold their work"
	" in, write on the new HEAD; never overwrite it.\n"
	"- Before you stop, leave a note for the next agent: `smriti handoff -m NOTE`.\n"
	SETUP_MD_END "\n";

/* AGENTS.md, and CLAUDE.md and GEMINI.md where they exist, unless --file names them. */
static void host_agents_md(struct plan *p, const struct where *w, const struct setup_args *a)
{
	static const char *const names[] = { "AGENTS.md", "CLAUDE.md", "GEMINI.md" };

	for (size_t i = 0; i < (a->nfiles ? a->nfiles : 3); i++) {
		char *path = in_dir(w, a->nfiles ? a->files[i] : names[i]);
		struct target *t;

		if (!a->nfiles && i && access(path, F_OK)) {
			free(path);
			continue;
		}
		t = add_target(p, T_MD, path, "the Smriti section");
		t->text = xstrdup(agents_section);
	}
}

struct host {
	const char *name;
	int scopes;                       /* 1 project, 2 user, 3 both */
	void (*build)(struct plan *p, const struct where *w, int user);
	const char *label;
};

static const struct host hosts[] = {
	{ "claude", 3, host_claude, "Claude Code" },
	{ "codex", 3, host_codex, "Codex CLI" },
	{ "gemini", 3, host_gemini, "Gemini CLI" },
	{ "cursor", 3, host_cursor, "Cursor" },
	{ "vscode", 3, host_vscode, "VS Code" },
	{ "claude-desktop", 2, host_desktop, "Claude Desktop" },
	{ NULL, 0, NULL, NULL },
};

/* The JSON settings text as the hosts write it: two-space indent, final newline. */
static char *json_text(const json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *out = xasprintf("%s\n", s);

	free(s);
	return out;
}

static enum smr_rc new_json(struct target *t, int remove, struct smr_err *err)
{
	json_error_t jerr;
	const char *s = t->before ? t->before : "";
	json_t *doc;

	doc = s[strspn(s, " \t\r\n")] ? json_loads(s, JSON_REJECT_DUPLICATES, &jerr) :
					json_object();
	if (!json_is_object(doc)) {
		json_decref(doc);
		return smr_errf(err, SMR_EINVAL, "cannot read %s as a JSON object (%s, line %d):"
				" fix it or add Smriti's entry by hand; nothing was changed",
				t->path, doc ? "not an object" : jerr.text, doc ? 1 : jerr.line);
	}
	if (!setup_json_apply(doc, t->edits, t->n, remove))
		t->after = t->before ? xstrdup(t->before) : NULL;
	else if (remove && !json_object_size(doc))
		t->after = NULL;      /* nothing else was in it: the file goes */
	else
		t->after = json_text(doc);
	json_decref(doc);
	return SMR_OK;
}

static enum smr_rc new_text(struct target *t, int remove, struct smr_err *err)
{
	const char *s = t->before ? t->before : "";
	char *out = NULL;
	enum smr_rc rc = SMR_OK;

	if (t->kind == T_JSON)
		return new_json(t, remove, err);
	if (t->kind == T_TOML)
		rc = setup_toml_table(s, t->text, remove, &out, err);
	else
		out = setup_md_section(s, t->text, remove);
	if (rc)
		return smr_err_prefix(err, rc, "%s: ", t->path);
	if (remove && !*out && t->before && strcmp(out, t->before)) {
		free(out);
		out = NULL;
	}
	t->after = out;
	return SMR_OK;
}

static int same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Reads every file and makes its new text; nothing is written yet. */
static enum smr_rc prepare(struct plan *p, int remove, struct smr_err *err)
{
	for (size_t i = 0; i < p->n; i++) {
		struct target *t = &p->t[i];
		int missing;
		enum smr_rc rc = cli_read_file(t->path, &t->before, &missing, err);

		if (!rc)
			rc = new_text(t, remove, err);
		if (rc)
			return rc;
	}
	return SMR_OK;
}

static const char *change_word(const struct target *t, int dry)
{
	if (same_text(t->before, t->after))
		return "unchanged";
	if (!t->before)
		return dry ? "would create" : "created";
	if (!t->after)
		return dry ? "would delete" : "deleted";
	return dry ? "would update" : "updated";
}

static enum smr_rc write_all(struct plan *p, struct smr_err *err)
{
	for (size_t i = 0; i < p->n; i++) {
		struct target *t = &p->t[i];
		enum smr_rc rc = SMR_OK;

		if (same_text(t->before, t->after))
			continue;
		if (!t->after) {
			if (unlink(t->path) && errno != ENOENT)
				return smr_errf(err, SMR_EINTERNAL, "cannot remove '%s': %s",
						t->path, strerror(errno));
			cli_remove_empty_parents(t->path, p->root);
			continue;
		}
		cli_make_parent_dirs(t->path);
		rc = cli_write_file(t->path, t->after, 0644, err);
		if (rc)
			return rc;
	}
	return SMR_OK;
}

static void report(const struct plan *p, const struct setup_args *a)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct target *t = &p->t[i];

		printf("%-13s %s  (%s)\n", change_word(t, a->dry_run), t->path, t->what);
		if (a->dry_run && t->after && !same_text(t->before, t->after) && t->kind != T_MD)
			printf("%s", t->after);
	}
	if (p->note && !a->remove && !a->dry_run)
		printf("note: %s\n", p->note);
}

static void plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct target *t = &p->t[i];

		for (size_t j = 0; j < t->n; j++)
			json_decref(t->edits[j].value);
		free(t->path);
		free(t->text);
		free(t->before);
		free(t->after);
	}
	free(p->root);
}

static int take(int c, const char *val, void *arg)
{
	struct setup_args *a = arg;

	if (c == OPT_USER)
		a->user = 1;
	else if (c == OPT_PROJECT)
		a->project = 1;
	else if (c == OPT_DRY_RUN)
		a->dry_run = 1;
	else if (c == OPT_REMOVE)
		a->remove = 1;
	else if (c == OPT_URL)
		a->url = *val ? val : NULL;
	else if (c == OPT_FILE && a->nfiles < MAX_FILES && !strchr(val, '/') && *val)
		a->files[a->nfiles++] = val;
	else if (c == OPT_FILE)
		return cli_usage(cli_find("setup"), "--file names a file in the project directory"
				 " (at most %d), not '%s'", MAX_FILES, val);
	else
		return CLI_OPT_REFUSED;
	return 0;
}

static void print_help(void)
{
	printf("usage: smriti %s\n\nHOST is one of:", cli_find("setup")->usage);
	for (const struct host *h = hosts; h->name; h++)
		printf(" %s", h->name);
	printf(", or agents-md (a section in AGENTS.md, and CLAUDE.md and GEMINI.md\n"
	       "where they exist, or the files given with --file NAME).\n"
	       "Project scope (the project directory: where .smriti.json is, else here) unless\n"
	       "--user; Claude Desktop is user-only.  --url URL (or SMRITI_URL or the project's\n"
	       "server) registers the server over HTTP with the token read from SMRITI_TOKEN by\n"
	       "the host; else stdio ('smriti mcp').  --dry-run shows what would change;\n"
	       "--remove takes out only what setup added.\n");
}

/* The project directory: the project file's, else the current one. Caller frees. */
static char *project_dir(const struct cli_ctx *ctx)
{
	char cwd[PATH_MAX], *dir, *slash;

	if (ctx->project.path) {
		dir = xstrdup(ctx->project.path);
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		return dir;
	}
	return getcwd(cwd, sizeof(cwd)) ? xstrdup(cwd) : NULL;
}

/* Where and how the host will reach Smriti; exit code on a refusal. */
static int make_where(struct where *w, const struct cli_ctx *ctx, const struct setup_args *a,
		      int user)
{
	const char *home = getenv("HOME");
	ssize_t n = readlink("/proc/self/exe", w->self, sizeof(w->self) - 1);

	w->self[n > 0 ? n : 0] = '\0';
	if (!n || n < 0)
		snprintf(w->self, sizeof(w->self), "smriti");
	/* the lean binary, not smriti-full when setup ran there */
	n = (ssize_t)strlen(w->self);
	if (n > 12 && !strcmp(w->self + n - 12, "/smriti-full"))
		w->self[n - 5] = '\0';
	w->scope = user ? "user" : "project";
	w->remove = a->remove;
	w->url = a->url ? a->url : ctx->remote;
	w->db = ctx->db_from && (!strcmp(ctx->db_from, "--db") ||
				 !strcmp(ctx->db_from, "SMRITI_DB")) ? ctx->db : NULL;
	if (user && (!home || home[0] != '/'))
		return cli_fail(SMR_EUSAGE, "HOME is not an absolute path: user scope needs it");
	w->dir = user ? xstrdup(home) : project_dir(ctx);
	if (!w->dir)
		return cli_fail(SMR_EINTERNAL, "cannot read the current directory: %s",
				strerror(errno));
	return 0;
}

static const struct host *find_host(const char *name)
{
	for (const struct host *h = hosts; h->name; h++)
		if (!strcmp(h->name, name))
			return h;
	return NULL;
}

static int run_plan(struct plan *p, const struct setup_args *a)
{
	struct smr_err err = SMR_ERR_INIT;
	enum smr_rc rc = prepare(p, a->remove, &err);

	if (!rc && !a->dry_run)
		rc = write_all(p, &err);
	if (rc)
		return cli_fail(rc, "%s", err.msg);
	report(p, a);
	return 0;
}

/* Checks the arguments against the host; returns the scope (1 user) or -exit code. */
static int pick_scope(const struct host *h, const struct setup_args *a, const char *name)
{
	const struct cli_cmd *cmd = cli_find("setup");

	if (a->user && a->project)
		return -cli_usage(cmd, "give --user or --project, not both");
	if (!h && strcmp(name, "agents-md"))
		return -cli_usage(cmd, "no host '%s': see 'smriti setup --help'", name);
	if (!h)
		return a->user ? -cli_usage(cmd, "agents-md writes the project's files; leave out "
					    "--user") : 0;
	if (a->nfiles)
		return -cli_usage(cmd, "--file goes with agents-md");
	if (a->project && !(h->scopes & 1))
		return -cli_usage(cmd, "%s has no project configuration: leave out --project",
				  h->label);
	return a->user || !(h->scopes & 1);
}

int cmd_setup(int argc, char **argv, struct cli_ctx *ctx)
{
	struct setup_args a = { 0 };
	struct plan p = { 0 };
	struct where w = { 0 };
	const struct host *h;
	int rc, first, user;

	if (cli_wants_help(argc, argv)) {
		print_help();
		return 0;
	}
	rc = cli_options(cli_find("setup"), argc, argv, "h", setup_opts, "unknown option", take,
			 &a, &first);
	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (argc - first != 1)
		return cli_usage(cli_find("setup"), "give one HOST (see 'smriti setup --help')");
	h = find_host(argv[first]);
	user = pick_scope(h, &a, argv[first]);
	if (user < 0)
		return -user;
	rc = make_where(&w, ctx, &a, user);
	if (!rc && h && w.url && h->build == host_desktop && !a.remove)
		rc = cli_fail(SMR_EUSAGE, "Claude Desktop's file takes no HTTP server: set it up "
			      "without --url (and without SMRITI_URL) to run 'smriti mcp'");
	if (!rc) {
		p.root = xstrdup(w.dir);
		if (h)
			h->build(&p, &w, user);
		else
			host_agents_md(&p, &w, &a);
		rc = run_plan(&p, &a);
	}
	plan_release(&p);
	free(w.dir);
	return rc;
}
