/*
 * cmd_session.c -- `smriti session list SPACE` and `smriti session show
 * SESSION`: the chat sessions of a Space and the turns of one, each with
 * its status (complete, truncated, stopped, error, interrupted), so that
 * what the web UI shows of a conversation is readable from a terminal and
 * by an agent (--json).  Reads only: session.list and session.get, locally
 * or on the server at SMRITI_URL.
 */
#include "cli/cli.h"
#include "util/jfield.h"
#include "util/utf8.h"

#include <getopt.h>
#include <stdio.h>
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
	       "      reply being generated, if one is\n\n"
	       "  --json   the operation's document (session.list, session.get)\n\n"
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

/* One turn: "#SEQ ROLE STATUS (provider model)", its error, then its text indented. */
static void render_turn(const json_t *t)
{
	const char *text = jfield_str(t, "content"), *eol;

	printf("\n#%lld %s %s", (long long)json_integer_value(json_object_get(t, "sequence_number")),
	       jfield_str(t, "role"), jfield_str(t, "status"));
	if (*jfield_str(t, "provider"))
		printf(" (%s %s)", jfield_str(t, "provider"), jfield_str(t, "model"));
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
		render_turn(t);
}

static const struct option opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },   /* --help: cli_wants_help() answers it first */
};

static int take(int c, const char *val, void *arg)
{
	(void)val;
	if (c != 'j')
		return CLI_OPT_REFUSED;
	*(int *)arg = 1;
	return 0;
}

int cmd_session(int argc, char **argv, struct cli_ctx *ctx)
{
	int json = 0, first, rc, list;
	json_t *params, *out = NULL;

	if (cli_wants_help(argc, argv))
		return usage_help();
	if (argc < 2)
		return cli_usage(session_cmd(), "give a subcommand: list or show");
	list = !strcmp(argv[1], "list") || !strcmp(argv[1], "ls");
	if (!list && strcmp(argv[1], "show"))
		return cli_usage(session_cmd(), "unknown subcommand 'session %s'", argv[1]);
	rc = cli_options(session_cmd(), argc - 1, argv + 1, "", opts, "unknown option", take,
			 &json, &first);
	if (rc)
		return rc;
	if (argc - 1 - first != 1)
		return cli_usage(session_cmd(), "give exactly one %s", list ? "SPACE" : "SESSION");
	params = json_pack("{s:s}", list ? "space" : "session_id", argv[1 + first]);
	if (!params)
		return cli_fail(SMR_EINVAL, "arguments must be valid UTF-8");
	rc = cli_call(ctx, list ? "session.list" : "session.get", params, &out);
	if (rc)
		return rc;
	if (json)
		cli_print_json(out);
	else if (list)
		render_list(out);
	else
		render_session(out);
	json_decref(out);
	return 0;
}
