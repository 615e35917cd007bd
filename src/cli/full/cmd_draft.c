/*
 * cmd_draft.c -- `smriti draft SESSION`: Draft with AI from the command
 * line.  It creates a draft job (draft.create) and waits for it
 * (draft.get), locally or on the server at SMRITI_URL, then prints the
 * proposed checkpoint.  The job keeps its draft, so the draft a person
 * read is the one that gets saved: `--save` saves it right away, and
 * `smriti draft --job JOB --save` saves a job's draft later (draft.save),
 * without calling the model again.  Saving writes on top of HEAD (HEAD's
 * items stay, the draft's new ones are added); `--replace` writes exactly
 * the draft instead.  `--json` prints the draft in the form
 * `smriti checkpoint create SPACE --from-json -` reads.
 */
#include "cli/cli.h"
#include "util/jfield.h"
#include "util/utf8.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define POLL_FIRST_MS 20
#define POLL_MAX_MS 500
#define WAIT_MAX_S (6 * 3600)   /* the server fails a job at its timeout long before */

int cmd_draft(int argc, char **argv, struct cli_ctx *ctx);

static const struct cli_cmd *draft_cmd(void)
{
	return cli_find("draft");
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int finished(const json_t *job)
{
	return !strcmp(jfield_str(job, "status"), "done") || !strcmp(jfield_str(job, "status"), "failed");
}

/* Polls draft.get until the job is done or failed; *job is replaced. */
static int wait_for(struct cli_ctx *ctx, json_t **job)
{
	long delay = POLL_FIRST_MS, waited = 0;
	json_t *next;
	int rc;

	while (!finished(*job)) {
		if (waited > WAIT_MAX_S * 1000L)
			return cli_fail(SMR_ETIMEOUT, "gave up waiting for draft job %s",
					jfield_str(*job, "job_id"));
		sleep_ms(delay);
		waited += delay;
		delay = delay * 2 > POLL_MAX_MS ? POLL_MAX_MS : delay * 2;
		next = NULL;
		rc = cli_call(ctx, "draft.get", json_pack("{s:s}", "job_id", jfield_str(*job, "job_id")),
			      &next);
		if (rc)
			return rc;
		json_decref(*job);
		*job = next;
	}
	return 0;
}

static void render_list(const json_t *draft, const char *field, const char *heading)
{
	const json_t *list = json_object_get(draft, field), *item;
	const char *key = !strcmp(field, "entities") || !strcmp(field, "artifacts") ? "name" :
			  "text";
	size_t i;

	if (!json_array_size(list))
		return;
	printf("\n%s:\n", heading);
	json_array_foreach(list, i, item) {
		if (!strcmp(field, "tasks"))
			printf("  [%c] %s\n", strcmp(jfield_str(item, "status"), "done") ? ' ' : 'x',
			       jfield_str(item, key));
		else if (*jfield_str(item, "kind"))
			printf("  - %s (%s)\n", jfield_str(item, key), jfield_str(item, "kind"));
		else
			printf("  - %s\n", jfield_str(item, key));
	}
}

/* Prints the draft; the closing hint says how to save it unless it is being saved. */
static void render_draft(const json_t *job, int saving)
{
	const json_t *draft = json_object_get(job, "draft");
	const json_t *range = json_object_get(json_object_get(json_object_get(draft, "metadata"),
							      "draft"), "turn_range");

	printf("draft %s of session %s, turns %lld to %lld, by %s %s%s\n", jfield_str(job, "job_id"),
	       jfield_str(job, "session_id"),
	       (long long)json_integer_value(json_object_get(range, "first_seq")),
	       (long long)json_integer_value(json_object_get(range, "last_seq")),
	       jfield_str(job, "provider"), jfield_str(job, "model"), saving ? "" : " (not saved)");
	printf("\n    %s\n", *jfield_str(draft, "title") ? jfield_str(draft, "title") : "(untitled)");
	if (*jfield_str(draft, "summary"))
		printf("\n    %s\n", jfield_str(draft, "summary"));
	render_list(draft, "decisions", "Decisions");
	render_list(draft, "assumptions", "Assumptions");
	render_list(draft, "tasks", "Tasks");
	render_list(draft, "open_questions", "Open questions");
	render_list(draft, "entities", "Entities");
	render_list(draft, "artifacts", "Artifacts");
	if (saving) {
		putchar('\n');
		return;
	}
	printf("\nTo save this draft as shown: smriti draft --job %s --save\n"
	       "To edit it first: smriti draft --job %s --json > draft.json, then\n"
	       "  smriti checkpoint create SPACE --from-json draft.json\n",
	       jfield_str(job, "job_id"), jfield_str(job, "job_id"));
}

static const struct option opts[] = {
	{ "provider", required_argument, NULL, 'p' },
	{ "model", required_argument, NULL, 'm' },
	{ "json", no_argument, NULL, 'j' },
	{ "save", no_argument, NULL, 's' },
	{ "job", required_argument, NULL, 'J' },
	{ "author", required_argument, NULL, 'a' },
	{ "replace", no_argument, NULL, 'r' },
	{ "parent", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_help(void)
{
	printf("usage: smriti %s\n\n"
	       "Drafts a checkpoint from the turns of SESSION after its mount boundary:\n"
	       "a model extracts only the decisions, assumptions, tasks, open questions,\n"
	       "entities and artifacts the conversation states.  No earlier checkpoint is\n"
	       "shown to it.  The draft is printed; it is saved only when you ask:\n"
	       "--save saves it as a checkpoint of the session's Space, and\n"
	       "'smriti draft --job JOB --save' saves the draft a job already made,\n"
	       "exactly as it was shown, without calling the model again.\n\n"
	       "Saving writes on top of HEAD: every item of HEAD stays, the draft's\n"
	       "items HEAD does not have are added (each once), a task the draft\n"
	       "reports done is marked done, and the title and summary are the\n"
	       "draft's.  --replace writes exactly the draft instead, dropping every\n"
	       "item of HEAD the draft does not state.\n\n"
	       "  --provider P   openai, anthropic or local (default: SMRITI_PROVIDER)\n"
	       "  --model M      the provider's model (default: its configured one)\n"
	       "  --job JOB      use the draft of job JOB instead of drafting anew\n"
	       "  --save         save the draft as a checkpoint (author: --author,\n"
	       "                 else SMRITI_AUTHOR, else your login name)\n"
	       "  --author NAME  the saved checkpoint's author\n"
	       "  --replace      with --save: replace HEAD's state with the draft\n"
	       "  --parent HASH  with --save: save only while HASH is HEAD (else exit 4)\n"
	       "  --json         print the draft (with --save: the checkpoint) as JSON,\n"
	       "                 in the form 'smriti checkpoint create --from-json' reads\n\n"
	       "Runs on the local store, or on the server at SMRITI_URL.  The job times\n"
	       "out after SMRITI_DRAFT_TIMEOUT_MS (default 120000).  Exit code 5 when the\n"
	       "draft failed (provider error or no key, timeout, a reply that is not a\n"
	       "draft).\n",
	       draft_cmd()->usage);
	return 0;
}

/* params[key] = val; -1 when val is not UTF-8 text. */
static int set_str(json_t *params, const char *key, const char *val)
{
	json_t *s = json_string(val);

	if (!s)
		return -1;
	json_object_set_new(params, key, s);
	return 0;
}

struct draft_args {
	json_t *params;
	const char *job, *author, *parent;
	int json, save, replace, bad;
};

static int take(int c, const char *val, void *arg)
{
	struct draft_args *a = arg;

	if (c == 'j')
		a->json = 1;
	else if (c == 's')
		a->save = 1;
	else if (c == 'J')
		a->job = val;
	else if (c == 'a')
		a->author = val;
	else if (c == 'r')
		a->replace = 1;
	else if (c == 'P')
		a->parent = val;
	else if (c == 'p')
		a->bad |= set_str(a->params, "provider", val);
	else if (c == 'm')
		a->bad |= set_str(a->params, "model", val);
	else
		return CLI_OPT_REFUSED;
	return 0;
}

static int parse(int argc, char **argv, struct draft_args *a)
{
	int first, rc;

	rc = cli_options(draft_cmd(), argc, argv, "", opts, "unknown option or missing value",
			 take, a, &first);
	if (rc)
		return rc;
	if (a->job && argc - first != 0)
		return cli_usage(draft_cmd(), "give either SESSION or --job JOB, not both");
	if (!a->job && argc - first != 1)
		return cli_usage(draft_cmd(), "give exactly one SESSION (or --job JOB)");
	if (a->job && (json_object_get(a->params, "provider") ||
		       json_object_get(a->params, "model")))
		return cli_usage(draft_cmd(), "--job reuses a finished draft: it takes no"
				 " --provider or --model");
	if ((a->replace || a->parent) && !a->save)
		return cli_usage(draft_cmd(), "--replace and --parent go with --save");
	if (!a->job)
		a->bad |= set_str(a->params, "session_id", argv[first]);
	if (a->parent && !utf8_valid(a->parent, strlen(a->parent)))
		a->bad = 1;
	if (a->bad)
		return cli_fail(SMR_EINVAL, "arguments must be valid UTF-8");
	return 0;
}

/*
 * Saves the draft of job (done) as shown, on top of HEAD or in place of
 * its state (--replace): draft.save, no second model call.
 */
static int save(struct cli_ctx *ctx, const json_t *job, const struct draft_args *a)
{
	json_t *r = NULL, *c;
	const char *author = a->author ? a->author : cli_default_author();
	int rc = cli_call(ctx, "draft.save", json_pack("{s:s, s:s?, s:s?, s:b}", "job_id",
						       jfield_str(job, "job_id"), "author", author,
						       "parent", a->parent, "replace", a->replace), &r);

	if (rc)
		return rc;
	c = json_object_get(r, "checkpoint");
	if (a->json)
		cli_print_json(c);
	else
		printf("saved the draft of job %s %s as [%s %.12s] %s\n %s\n",
		       jfield_str(job, "job_id"),
		       a->replace ? "in place of HEAD's state" : "on top of HEAD",
		       jfield_str(c, "space"), jfield_str(c, "commit_hash"), jfield_str(c, "title"),
		       jfield_str(r, "changed"));
	json_decref(r);
	return 0;
}

int cmd_draft(int argc, char **argv, struct cli_ctx *ctx)
{
	struct draft_args a = { .params = json_object() };
	json_t *job = NULL;
	int rc;

	if (cli_wants_help(argc, argv)) {
		json_decref(a.params);
		return usage_help();
	}
	rc = parse(argc, argv, &a);
	if (!rc && a.job)
		rc = cli_call(ctx, "draft.get", json_pack("{s:s}", "job_id", a.job), &job);
	else if (!rc)
		rc = cli_call(ctx, "draft.create", json_incref(a.params), &job);
	if (!rc)
		rc = wait_for(ctx, &job);
	if (!rc && !strcmp(jfield_str(job, "status"), "failed"))
		rc = cli_fail(SMR_EPROVIDER, "draft job %s failed: %s", jfield_str(job, "job_id"),
			      jfield_str(job, "error"));
	if (!rc && a.save && !a.json)
		render_draft(job, 1);
	if (!rc && a.save)
		rc = save(ctx, job, &a);
	else if (!rc && a.json)
		cli_print_json(json_object_get(job, "draft"));
	else if (!rc)
		render_draft(job, 0);
	json_decref(job);
	json_decref(a.params);
	return rc;
}
