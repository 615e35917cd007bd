/*
 * cmd_serve.c -- `smriti serve`: run the HTTP API server on the store.
 *
 * This is where the server is wired: it binds first (a server that cannot
 * listen touches nothing), then builds the chat runtime and its draft
 * runner and hands them to the server, and takes them down after it.
 */
#include "cli/cli.h"
#include "http/server.h"
#include "ops/full/draft.h"
#include "ops/full/generation.h"
#include "ops/full/lease.h"
#include "ops/full/runtime.h"
#include "util/xalloc.h"
#include "util/logline.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_serve(int argc, char **argv, struct cli_ctx *ctx);
int cmd_openapi(int argc, char **argv, struct cli_ctx *ctx);

/* smriti openapi: the document /openapi.json serves, without a server or a store. */
int cmd_openapi(int argc, char **argv, struct cli_ctx *ctx)
{
	char *text;

	(void)ctx;
	if (cli_wants_help(argc, argv)) {
		printf("usage: smriti openapi\n\n"
		       "Prints the OpenAPI 3.1 document of the HTTP API (what GET /openapi.json\n"
		       "of 'smriti serve' answers), to generate a client from.\n");
		return 0;
	}
	if (argc > 1)
		return cli_usage(cli_find("openapi"), "takes no arguments");
	text = http_openapi_text();
	puts(text);
	free(text);
	return 0;
}

static const struct cli_cmd serve_cmd = {
	"serve",
	"serve [--listen HOST:PORT] [--db PATH|URL] [--workers N] [--threads N]\n"
	"         [--max-body BYTES] [--quiet] [--log-format text|json] [--no-metrics]\n"
	"         [--metrics-listen [HOST:]PORT] [--max-connections N]\n"
	"         [--max-connections-per-address N] [--header-timeout S]\n"
	"         [--body-timeout S] [--body-min-rate BYTES]",
	cmd_serve, CLI_FULL,
};

static void serve_help(void)
{
	printf("usage: smriti %s\n\n"
	       "Serves the JSON API (see /openapi.json) on %s by default; --listen with\n"
	       "port 0 picks a free port.  --workers N threads run writes and chat sends\n"
	       "(default %d); reads are answered on --threads event threads (default one\n"
	       "per CPU, at most 8).  Request bodies over --max-body bytes (default %u)\n"
	       "get 413.  --quiet drops the access log (one line per request on stderr);\n"
	       "--log-format json writes each line as a JSON object.  GET /metrics\n"
	       "answers in the Prometheus text format, to the administrator only (or to\n"
	       "anyone on a server without sign-in); --metrics-listen serves it alone,\n"
	       "without a token, on a listener of its own (a port alone: 127.0.0.1);\n"
	       "--no-metrics turns it off.\n\n"
	       "Slow clients: a request head must be complete --header-timeout seconds\n"
	       "after its first byte (default %d), and a body must arrive within\n"
	       "--body-timeout seconds (default %d) plus one second per --body-min-rate\n"
	       "bytes (default %d); else the connection is closed.  Past --max-connections\n"
	       "(default %d) a new connection evicts the oldest unfinished one of the\n"
	       "address holding the most; one address holds at most\n"
	       "--max-connections-per-address (default %d).  Behind a proxy, list it in\n"
	       "SMRITI_TRUSTED_PROXIES (addresses or ADDRESS/BITS, comma separated): its\n"
	       "requests then count as the client's it names in X-Forwarded-For or\n"
	       "X-Real-IP; those headers from anyone else are ignored.\n\n"
	       "Security: listening anywhere but loopback needs SMRITI_TOKEN, and with a\n"
	       "token every request but /healthz needs 'Authorization: Bearer TOKEN'.\n"
	       "Requests must name the server in Host (localhost, 127.0.0.1, [::1], the\n"
	       "listen address, or a name in SMRITI_ALLOWED_HOSTS, comma separated).\n"
	       "Cross-origin writes are refused.  Stops cleanly on SIGINT or SIGTERM.\n",
	       serve_cmd.usage, HTTP_DEFAULT_LISTEN, HTTP_DEFAULT_WORKERS,
	       HTTP_DEFAULT_MAX_BODY, HTTP_DEFAULT_HEADER_TIMEOUT, HTTP_DEFAULT_BODY_TIMEOUT,
	       HTTP_DEFAULT_BODY_MIN_RATE, HTTP_DEFAULT_MAX_CONNS, HTTP_DEFAULT_MAX_PER_ADDRESS);
}

/* Parses a whole number in [min, max]; 0 on success. */
static int parse_num(const char *s, unsigned long long min, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	*out = strtoull(s, &end, 10);
	return *out < min || *out > max ? -1 : 0;
}

/* A failure of the server as the CLI's error, or under --log-format json its last JSON line. */
static int serve_fail(const struct http_config *cfg, enum smr_rc rc, const char *msg)
{
	if (!cfg->log_json)
		return cli_fail(rc, "%s", msg);
	logline("error", "%s", msg);
	return smr_rc_exit_code(rc);
}

static int serve(const struct http_config *cfg)
{
	struct smr_err err = SMR_ERR_INIT;
	struct http_server *srv = NULL;
	struct lease *lease = NULL;
	struct runtime *rt;
	enum smr_rc rc;

	logline_json(cfg->log_json);   /* before any thread; the runtime's own lines follow it */
	rc = http_listen(cfg, &srv, &err);
	if (rc)
		return serve_fail(cfg, rc, err.msg);
	rt = runtime_new_from_env();    /* before any thread: the provider port's global set-up */
	/* the owner its replies and draft jobs record; its row goes after the last of them */
	rc = lease_start(cfg->dsn, &lease, &err);
	rt->lease = lease;
	if (!rc)
		rc = draft_runner_start(cfg->dsn, rt, &rt->drafts, &err);
	if (!rc)
		rc = chat_generations_start(rt, cfg->dsn, &err);
	if (!rc)
		rc = http_serve(srv, rt, &err);
	http_close(srv);
	draft_runner_stop(rt->drafts);  /* after the server's workers: no more draft.create */
	runtime_free(rt);               /* stops the chat finisher, then the provider loops */
	lease_stop(lease);
	return rc ? serve_fail(cfg, rc, err.msg) : 0;
}

static int take(int c, const char *val, void *arg)
{
	struct http_config *cfg = arg;
	unsigned long long n;

	switch (c) {
	case 'l':
		cfg->listen = val;
		return 0;
	case 'w':
		if (parse_num(val, 1, 256, &n))
			return cli_usage(&serve_cmd, "--workers wants 1 to 256, got '%s'", val);
		cfg->workers = (unsigned)n;
		return 0;
	case 't':
		if (parse_num(val, 1, 8, &n))
			return cli_usage(&serve_cmd, "--threads wants 1 to 8, got '%s'", val);
		cfg->threads = (unsigned)n;
		return 0;
	case 'm':
		if (parse_num(val, 1, 1ull << 30, &n))
			return cli_usage(&serve_cmd,
					 "--max-body wants 1 to 1073741824 bytes, got '%s'", val);
		cfg->max_body = (size_t)n;
		return 0;
	case 'q':
		cfg->access_log = 0;
		return 0;
	case 'f':
		if (strcmp(val, "text") && strcmp(val, "json"))
			return cli_usage(&serve_cmd, "--log-format wants text or json, got '%s'", val);
		cfg->log_json = !strcmp(val, "json");
		return 0;
	case 'M':
		cfg->metrics = 0;
		return 0;
	case 'P':
		cfg->metrics_listen = val;
		return 0;
	case 'C':
		if (parse_num(val, 1, 65536, &n))
			return cli_usage(&serve_cmd, "--max-connections wants 1 to 65536, got '%s'",
					 val);
		cfg->max_conns = (unsigned)n;
		return 0;
	case 'A':
		if (parse_num(val, 1, 65536, &n))
			return cli_usage(&serve_cmd, "--max-connections-per-address wants 1 to 65536,"
					 " got '%s'", val);
		cfg->max_per_address = (unsigned)n;
		return 0;
	case 'H':
	case 'B':
		if (parse_num(val, 1, 3600, &n))
			return cli_usage(&serve_cmd, "--%s-timeout wants 1 to 3600 seconds, got '%s'",
					 c == 'H' ? "header" : "body", val);
		*(c == 'H' ? &cfg->header_timeout : &cfg->body_timeout) = (unsigned)n;
		return 0;
	case 'R':
		if (parse_num(val, 1, 1ull << 30, &n))
			return cli_usage(&serve_cmd,
					 "--body-min-rate wants 1 to 1073741824 bytes a second, got '%s'",
					 val);
		cfg->body_min_rate = (size_t)n;
		return 0;
	case 'h':
		serve_help();
		return CLI_OPT_DONE;
	}
	return CLI_OPT_REFUSED;
}

int cmd_serve(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "workers", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 't' },
		{ "max-body", required_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "log-format", required_argument, NULL, 'f' },
		{ "no-metrics", no_argument, NULL, 'M' },
		{ "metrics-listen", required_argument, NULL, 'P' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "max-connections-per-address", required_argument, NULL, 'A' },
		{ "header-timeout", required_argument, NULL, 'H' },
		{ "body-timeout", required_argument, NULL, 'B' },
		{ "body-min-rate", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct http_config cfg = {
		HTTP_DEFAULT_LISTEN, ctx->db, HTTP_DEFAULT_WORKERS, 0, HTTP_DEFAULT_MAX_BODY,
		getenv("SMRITI_TOKEN"), getenv("SMRITI_ALLOWED_HOSTS"), 1, 0, 1, NULL,
	};
	struct smr_err err = SMR_ERR_INIT;
	const char *actor;
	char *own = NULL;
	int first, rc;

	cfg.trusted_proxies = getenv("SMRITI_TRUSTED_PROXIES");
	rc = cli_options(&serve_cmd, argc, argv, "+h", opts, "unknown option", take, &cfg, &first);
	if (rc)
		return rc == CLI_OPT_DONE ? 0 : rc;
	if (first < argc)
		return cli_usage(&serve_cmd, "unexpected argument '%s'", argv[first]);
	if (cli_db_prepare(ctx, &err))
		return cli_fail(err.code, "%s", err.msg);
	/* once, and a copy: cli_default_author() may answer from a buffer of its own */
	actor = cli_default_author();
	own = actor ? xstrdup(actor) : NULL;
	cfg.actor = own;
	rc = serve(&cfg);
	free(own);
	return rc;
}
