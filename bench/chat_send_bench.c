/*
 * chat_send_bench.c -- seeds chat sessions for bench/chat_send.mjs, writing
 * the turns through SQLite in one transaction (10,000 sends would take far
 * longer and measure the provider, not the seed).
 *
 *   bench-chat_send seed DB SESSIONS N CHARS
 *
 * Makes SESSIONS Spaces, each with one Checkpoint (title, summary, five
 * decisions, a 3,000-character artifact) and a session mounted on it (the
 * structural, default mode), holding N turns of CHARS characters each,
 * alternating user and assistant.  Prints the session ids, one per line.
 */
#include "ops/context.h"
#include "ops/full/runtime.h"
#include "util/xalloc.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "bench-chat_send: %s: %s\n", what, msg);
	return 1;
}

static json_t *checkpoint_fields(void)
{
	char *art = xmalloc(3001);
	json_t *f;

	memset(art, 'x', 3000);
	art[3000] = '\0';
	f = json_pack("{s:s, s:s, s:[s,s,s,s,s], s:[s,s], s:[{s:s,s:s}], s:[{s:s,s:s,s:s}]}",
		      "title", "Benchmark state", "summary", "What the benchmark conversation settled.",
		      "decisions", "Use SQLite", "Keep the API small", "Ship weekly",
		      "Measure before tuning", "Write tests first",
		      "assumptions", "One user", "Loopback provider",
		      "tasks", "text", "Report figures", "status", "open",
		      "artifacts", "name", "notes.md", "kind", "text", "content", art);
	free(art);
	return f;
}

/* One Space with a Checkpoint and a session mounted on it; *sid gets the session id. */
static int make_session(struct ops_ctx *ctx, int i, char **sid)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	struct session s = { 0 }, m = { 0 };
	char name[64];
	json_t *f = checkpoint_fields();
	int rc = 1;

	snprintf(name, sizeof(name), "bench-%d", i);
	if (ops_space_create(ctx, name, "", &sp, &err) ||
	    ops_checkpoint_create(ctx, name, f, NULL, "bench", &c, &err) ||
	    chat_session_create(ctx, name, "bench", &s, &err) ||
	    chat_session_mount(ctx, s.id, c.hash, NULL, &m, &err))
		die("setup", err.msg);
	else
		rc = 0;
	if (!rc)
		*sid = xstrdup(m.id);
	json_decref(f);
	space_release(&sp);
	checkpoint_release(&c);
	session_release(&s);
	session_release(&m);
	return rc;
}

static int insert_turns(const char *db, char **sids, int n_sessions, long n, long chars)
{
	static const char sql[] =
		"INSERT INTO turns (session_id, sequence_number, role, content, provider, model,"
		" created_at) VALUES (?, ?, ?, ?, 'openai', 'gpt-4o-mini', '2026-01-01T00:00:00Z')";
	sqlite3 *h = NULL;
	sqlite3_stmt *q = NULL;
	char *text = xmalloc((size_t)chars + 1);
	int rc = 0;

	memset(text, 'w', (size_t)chars);
	for (long k = 5; k < chars; k += 6)
		text[k] = ' ';
	text[chars] = '\0';
	if (sqlite3_open(db, &h) || sqlite3_exec(h, "BEGIN", NULL, NULL, NULL) ||
	    sqlite3_prepare_v2(h, sql, -1, &q, NULL))
		rc = die("seed", sqlite3_errmsg(h));
	for (int s = 0; !rc && s < n_sessions; s++) {
		for (long i = 1; !rc && i <= n; i++) {
			sqlite3_reset(q);
			sqlite3_bind_text(q, 1, sids[s], -1, SQLITE_STATIC);
			sqlite3_bind_int64(q, 2, i);
			sqlite3_bind_text(q, 3, i % 2 ? "user" : "assistant", -1, SQLITE_STATIC);
			sqlite3_bind_text(q, 4, text, -1, SQLITE_STATIC);
			if (sqlite3_step(q) != SQLITE_DONE)
				rc = die("seed", sqlite3_errmsg(h));
		}
	}
	sqlite3_finalize(q);
	if (!rc && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL))
		rc = die("commit", sqlite3_errmsg(h));
	sqlite3_close(h);
	free(text);
	return rc;
}

static int seed(const char *db, int n_sessions, long n, long chars)
{
	struct smr_err err = SMR_ERR_INIT;
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;
	char **sids = xcalloc((size_t)n_sessions, sizeof(*sids));
	int rc = 0;

	if (store_open(db, &st, &err))
		return die("open", err.msg);
	ops_open_on(&ctx, st, NULL, NULL);
	for (int i = 0; !rc && i < n_sessions; i++)
		rc = make_session(ctx, i, &sids[i]);
	ops_close(ctx);
	store_close(st);
	if (!rc)
		rc = insert_turns(db, sids, n_sessions, n, chars);
	for (int i = 0; i < n_sessions; i++) {
		if (!rc)
			printf("%s\n", sids[i]);
		free(sids[i]);
	}
	free(sids);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "seed"))
		return seed(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]));
	fprintf(stderr, "usage: bench-chat_send seed DB SESSIONS N CHARS\n");
	return 2;
}
