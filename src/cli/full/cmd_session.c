/*
 * cmd_session.c -- `smriti session list SPACE` and `smriti session show
 * SESSION`: the chat sessions of a Space and the turns of one, each with
 * its status (complete, truncated, stopped, error, interrupted), so that
 * what the web UI shows of a conversation is readable from a terminal and
 * by an agent (--json); the turns beside the path shown (edited questions,
 * regenerated replies) are marked.  `session switch SESSION SEQ` shows the
 * path through another version (session.switch) and `session fork SESSION
 * SEQ` starts a new session from a turn (session.fork), locally or on the
 * server at SMRITI_URL.
 */
#include "cli/cli.h"
#include "util/jfield.h"
#include "util/utf8.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREVIEW_CHARS 60     /* of a session's title in a list */

int cmd_session(int argc, char **argv, struct cli_ctx *ctx);

static const struct cli_cmd *session_cmd(void)
{
	return cli_find("session");
}

static int usage_help(void)
{
	printf("usage: smriti %s\n\n"
	       "  smriti session list SPACE [--json]\n"
	       "      the chat sessions of SPACE, oldest first: id, turns, mount, title\n"
	       "  smriti session show SESSION [--json]\n"
	       "      every turn of SESSION in order, each with its role and status:\n"
	       "      complete, truncated (the token limit), stopped (Stop was pressed;\n"
	       "      the text is what arrived), error (the provider failed; the text is\n"
	       "      what arrived), interrupted (the server stopped meanwhile); and the\n"
	       "      reply being generated, if one is.  Turns beside the path shown (an\n"
	       "      edited question's old version, a regenerated reply) are marked: the\n"
	       "      next send builds on the path only\n"
	       "  smriti session switch SESSION SEQ [--json]\n"
	       "      show the path through turn SEQ (another version of a question or\n"
	       "      reply): the next send follows it\n"
	       "  smriti session fork SESSION SEQ [--title TITLE] [--json]\n"
	       "      a new session holding the path up to turn SEQ; SESSION is untouched\n\n"
	       "  --json   the operation's document (session.list, session.get,\n"
	       "           session.switch, session.fork)\n\n"
	       "Reads the local store, or the server at SMRITI_URL.\n",
	       session_cmd()->usage);
	return 0;
}

/* At most PREVIEW_CHARS characters of s on one line (newlines shown as spaces). */
static void print_preview(const char *s)
{
	size_t len = strlen(s), n = utf8_prefix_bytes(s, len, PREVIEW_CHARS);

	for (size_t i = 0; i < n; i++)
		putchar(s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i]);
	if (n < len)
		fputs("...", stdout);
}

static void render_list(const json_t *list)
{
	const json_t *s;
	size_t i;

	if (!json_array_size(list))
		printf("no sessions\n");
	json_array_foreach(list, i, s) {
		printf("%s  %3lld turns  ", jfield_str(s, "id"),
		       (long long)json_integer_value(json_object_get(s, "last_seq")));
		if (*jfield_str(s, "mounted_commit_hash"))
			printf("mounted %.12s  ", jfield_str(s, "mounted_commit_hash"));
		print_preview(*jfield_str(s, "title") ? jfield_str(s, "title") : "(untitled)");
		putchar('\n');
	}
}

static int on_path(const json_t *path, json_int_t seq)
{
	const json_t *v;
	size_t i;

	json_array_foreach(path, i, v)
		if (json_integer_value(v) == seq)
			return 1;
	return 0;
}

/*
 * One turn: "#SEQ ROLE STATUS (provider model)", where it follows when not
 * the turn before, whether it is beside the path shown, its error, then its
 * text indented.
 */
static void render_turn(const json_t *t, const json_t *path)
{
	const char *text = jfield_str(t, "content"), *eol;
	json_int_t seq = json_integer_value(json_object_get(t, "sequence_number"));
	json_int_t parent = json_integer_value(json_object_get(t, "parent_seq"));

	printf("\n#%lld %s %s", (long long)seq, jfield_str(t, "role"), jfield_str(t, "status"));
	if (*jfield_str(t, "provider"))
		printf(" (%s %s)", jfield_str(t, "provider"), jfield_str(t, "model"));
	if (parent != seq - 1)
		printf(" after #%lld", (long long)parent);
	if (json_is_array(path) && !on_path(path, seq))
		printf(" [another version: not on the path shown]");
	putchar('\n');
	if (*jfield_str(t, "error"))
		printf("    error: %s\n", jfield_str(t, "error"));
	for (; *text; text = *eol ? eol + 1 : eol) {
		eol = strchr(text, '\n');
		if (!eol)
			eol = text + strlen(text);
		printf("    %.*s\n", (int)(eol - text), text);
	}
}

static void render_session(const json_t *s)
{
	const json_t *turns = json_object_get(s, "turns"), *t, *gen = json_object_get(s, "generation");
	size_t i;

	printf("session %s in Space '%s'", jfield_str(s, "id"), jfield_str(s, "space"));
	if (*jfield_str(s, "title"))
		printf(": %s", jfield_str(s, "title"));
	putchar('\n');
	if (*jfield_str(s, "mounted_commit_hash"))
		printf("mounted %.12s: the model sees that checkpoint and the turns after #%lld\n",
		       jfield_str(s, "mounted_commit_hash"),
		       (long long)json_integer_value(json_object_get(s, "history_base_seq")));
	if (json_is_object(gen))
		printf("generating a reply now: generation %s (%s %s)\n", jfield_str(gen, "id"),
		       jfield_str(gen, "provider"), jfield_str(gen, "model"));
	if (!json_array_size(turns))
		printf("no turns yet\n");
	json_array_foreach(turns, i, t)
		render_turn(t, json_object_get(s, "path"));
}

static const struct option opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "title", required_argument, NULL, 't' },
	{ NULL, 0, NULL, 0 },   /* --help: cli_wants_help() answers it first */
};

struct args {
	int json;
	const char *title;
	int titled;              /* --title is only for fork */
};

static int take(int c, const char *val, void *arg)
{
	struct args *a = arg;

	if (c == 'j')
		a->json = 1;
	else if (c == 't' && a->titled)
		a->title = val;
	else
		return CLI_OPT_REFUSED;
	return 0;
}

/* The subcommand's operation, how many arguments it takes and their names. */
static const struct {
	const char *sub, *op, *names;
	int args;
} subs[] = {
	{ "list", "session.list", "SPACE", 1 }, { "ls", "session.list", "SPACE", 1 },
	{ "show", "session.get", "SESSION", 1 }, { "switch", "session.switch", "SESSION and SEQ", 2 },
	{ "fork", "session.fork", "SESSION and SEQ", 2 },
};

/* SESSION SEQ's parameters, or NULL with the usage error in *rc. */
static json_t *pick_params(const char *session, const char *seq, const char *title, int *rc)
{
	char *end;
	long long n = strtoll(seq, &end, 10);

	if (!*seq || *end || n < 1) {
		*rc = cli_usage(session_cmd(), "SEQ must be a turn's number (1, 2, ...), not '%s'", seq);
		return NULL;
	}
	return json_pack("{s:s, s:I, s:s?}", "session_id", session, "seq", (json_int_t)n,
			 "title", title);
}

static void render(const char *op, const json_t *out, int json)
{
	if (json)
		cli_print_json(out);
	else if (!strcmp(op, "session.list"))
		render_list(out);
	else if (!strcmp(op, "session.get"))
		render_session(out);
	else if (!strcmp(op, "session.switch"))
		printf("session %s now shows the path to turn #%lld; the next send follows it\n",
		       jfield_str(out, "id"), (long long)json_integer_value(json_object_get(out, "leaf_seq")));
	else
		printf("new session %s: the path up to turn #%lld of session %s\n", jfield_str(out, "id"),
		       (long long)json_integer_value(json_object_get(out, "fork_seq")),
		       jfield_str(out, "forked_from_session_id"));
}

int cmd_session(int argc, char **argv, struct cli_ctx *ctx)
{
	struct args a = { 0 };
	int first, rc = 0, k = -1;
	json_t *params, *out = NULL;

	if (cli_wants_help(argc, argv))
		return usage_help();
	if (argc < 2)
		return cli_usage(session_cmd(), "give a subcommand: list, show, switch or fork");
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i].sub))
			k = (int)i;
	if (k < 0)
		return cli_usage(session_cmd(), "unknown subcommand 'session %s'", argv[1]);
	a.titled = !strcmp(subs[k].sub, "fork");
	rc = cli_options(session_cmd(), argc - 1, argv + 1, "", opts, "unknown option", take,
			 &a, &first);
	if (rc)
		return rc;
	if (argc - 1 - first != subs[k].args)
		return cli_usage(session_cmd(), "give exactly %s%s", subs[k].args == 1 ? "one " : "",
				 subs[k].names);
	if (subs[k].args == 2)
		params = pick_params(argv[1 + first], argv[2 + first], a.title, &rc);
	else
		params = json_pack("{s:s}", !strcmp(subs[k].names, "SPACE") ? "space" : "session_id",
				   argv[1 + first]);
	if (!params)
		return rc ? rc : cli_fail(SMR_EINVAL, "arguments must be valid UTF-8");
	rc = cli_call(ctx, subs[k].op, params, &out);
	if (rc)
		return rc;
	render(subs[k].op, out, a.json);
	json_decref(out);
	return 0;
}
