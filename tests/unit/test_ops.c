/*
 * test_ops.c -- the core operations on a real SQLite store in a temporary
 * file: reference resolution, HEAD compare-and-swap, restore, fork and
 * fsck, with a deterministic clock.
 */
#include "harness.h"
#include "temp_store.h"

#include "domain/checkpoint.h"
#include "ops/ops.h"
#include "store/store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

struct fixture {
	char path[TEMP_STORE_PATH_MAX];
	struct store *st;
	struct ops_ctx *ctx;
};

static int tick;

static void test_now(char out[32])
{
	snprintf(out, 32, "2026-01-01T00:00:%02d.%06dZ", (tick / 1000000) % 60, tick % 1000000);
	tick++;
}

static void setup(struct fixture *f)
{
	temp_store_open(f->path, &f->st, &f->ctx);
	f->ctx->now = test_now;
}

static void teardown(struct fixture *f)
{
	temp_store_close(f->path, f->ctx);
}

/* Writes a checkpoint titled title on top of HEAD (or on parent); returns its hash (caller frees). */
static char *commit(struct fixture *f, const char *space, const char *title, const char *parent,
		    enum smr_rc want)
{
	struct checkpoint c = { 0 };
	json_t *fields = json_pack("{s:s, s:[s]}", "title", title, "decisions", title);
	enum smr_rc rc = ops_checkpoint_create(f->ctx, space, fields, parent, "tester", &c, NULL);
	char *hash = rc ? NULL : strdup(c.hash);

	CHECK_INT(rc, want);
	checkpoint_release(&c);
	json_decref(fields);
	return hash;
}

TEST(ops_resolve_space_ancestry_and_prefixes)
{
	struct fixture f;
	struct checkpoint c = { 0 };
	struct space sp = { 0 };
	char *h1, *h2, *h3, prefix[16];
	struct smr_err err = SMR_ERR_INIT;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	space_release(&sp);
	h1 = commit(&f, "demo", "one", NULL, SMR_OK);
	h2 = commit(&f, "demo", "two", NULL, SMR_OK);
	h3 = commit(&f, "demo", "three", NULL, SMR_OK);
	CHECK_INT(ops_resolve(f.ctx, "demo", &c, NULL), SMR_OK);
	CHECK_STR(c.hash, h3);
	checkpoint_release(&c);
	CHECK_INT(ops_resolve(f.ctx, "demo~2", &c, NULL), SMR_OK);
	CHECK_STR(c.hash, h1);
	CHECK_STR(c.title, "one");
	checkpoint_release(&c);
	snprintf(prefix, sizeof(prefix), "%.8s", h2);
	CHECK_INT(ops_resolve(f.ctx, prefix, &c, NULL), SMR_OK);
	CHECK_STR(c.hash, h2);
	CHECK_STR(c.parent_hash, h1);
	checkpoint_release(&c);
	snprintf(prefix, sizeof(prefix), "%.8s~1", h3);
	CHECK_INT(ops_resolve(f.ctx, prefix, &c, NULL), SMR_OK);
	CHECK_STR(c.hash, h2);
	checkpoint_release(&c);
	CHECK_INT(ops_resolve(f.ctx, "demo~3", &c, &err), SMR_ENOTFOUND);
	CHECK(strstr(err.msg, "past the first checkpoint") != NULL);
	CHECK_INT(ops_resolve(f.ctx, "nosuch", &c, &err), SMR_ENOTFOUND);
	CHECK_INT(ops_resolve(f.ctx, "ffffffff", &c, &err), SMR_ENOTFOUND);
	free(h1);
	free(h2);
	free(h3);
	teardown(&f);
}

TEST(ops_ambiguous_prefix_is_a_usage_error)
{
	struct fixture f;
	struct checkpoint c;
	struct space sp = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	const char *fake[2] = {
		"abcd111111111111111111111111111111111111111111111111111111111111",
		"abcd222222222222222222222222222222222222222222222222222222222222",
	};

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	for (int i = 0; i < 2; i++) {
		/* the store does not check hashes, so two can share a prefix on purpose */
		checkpoint_init(&c);
		c.title = strdup("x");
		c.created_at = strdup("2026-01-01T00:00:00.000000Z");
		c.hash = strdup(fake[i]);
		c.parent_hash = i ? strdup(fake[0]) : NULL;
		CHECK_INT(store_checkpoint_put(f.st, sp.id, &c, c.parent_hash, NULL), SMR_OK);
		checkpoint_release(&c);
	}
	memset(&c, 0, sizeof(c));
	CHECK_INT(ops_resolve(f.ctx, "abcd", &c, &err), SMR_EUSAGE);
	CHECK(strstr(err.msg, "ambiguous") != NULL);
	CHECK_INT(ops_resolve(f.ctx, "abcd2", &c, NULL), SMR_OK);
	CHECK_STR(c.hash, fake[1]);
	checkpoint_release(&c);
	space_release(&sp);
	teardown(&f);
}

TEST(ops_stale_parent_conflicts_and_writes_nothing)
{
	struct fixture f;
	struct space sp = { 0 };
	struct checkpoint *log = NULL;
	size_t n = 0;
	char *h1, *h2, *h3;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	h1 = commit(&f, "demo", "one", NULL, SMR_OK);
	h2 = commit(&f, "demo", "two", h1, SMR_OK);
	h3 = commit(&f, "demo", "late", h1, SMR_ECONFLICT);   /* h1 is no longer HEAD */
	CHECK(h3 == NULL);
	CHECK_INT(ops_log(f.ctx, "demo", 0, 1, &log, &n, NULL), SMR_OK);
	CHECK_INT(n, 2);
	CHECK_STR(log[0].hash, h2);
	checkpoints_free(log, n);
	free(commit(&f, "demo", "empty?", NULL, SMR_OK));
	free(h1);
	free(h2);
	space_release(&sp);
	teardown(&f);
}

TEST(ops_restore_puts_old_state_on_top_of_head)
{
	struct fixture f;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	char *h1, *h2;
	json_t *d = NULL;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	h1 = commit(&f, "demo", "good", NULL, SMR_OK);
	h2 = commit(&f, "demo", "bad turn", NULL, SMR_OK);
	CHECK_INT(ops_restore(f.ctx, "demo", "demo~1", "restorer", &c, NULL), SMR_OK);
	CHECK_STR(c.parent_hash, h2);
	CHECK_STR(c.title, "good");
	CHECK_STR(c.author, "restorer");
	CHECK_STR(json_string_value(json_object_get(c.metadata, "restored_from")), h1);
	CHECK(strcmp(c.hash, h1) != 0);
	CHECK_INT(ops_diff(f.ctx, h1, c.hash, &d, NULL), SMR_OK);
	/* only metadata differs: every field of the old state came back */
	CHECK(json_object_get(d, "decisions") == NULL);
	CHECK(json_object_get(d, "title") == NULL);
	CHECK(json_object_get(d, "metadata") != NULL);
	json_decref(d);
	checkpoint_release(&c);
	free(h1);
	free(h2);
	space_release(&sp);
	teardown(&f);
}

TEST(ops_fork_shares_history_with_same_hashes)
{
	struct fixture f;
	struct space sp = { 0 }, fork = { 0 };
	struct checkpoint *log = NULL;
	size_t n = 0;
	char *h1, *h2, *h3;
	json_t *report = NULL;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	h1 = commit(&f, "demo", "one", NULL, SMR_OK);
	h2 = commit(&f, "demo", "two", NULL, SMR_OK);
	h3 = commit(&f, "demo", "three", NULL, SMR_OK);
	CHECK_INT(ops_fork(f.ctx, "demo~1", "alt", &fork, NULL), SMR_OK);
	CHECK_STR(fork.head, h2);
	CHECK_INT(ops_log(f.ctx, "alt", 0, 1, &log, &n, NULL), SMR_OK);
	CHECK_INT(n, 2);
	CHECK_STR(log[0].hash, h2);
	CHECK_STR(log[1].hash, h1);
	CHECK_STR(log[0].space, "alt");
	checkpoints_free(log, n);
	/* the fork moves on independently */
	free(commit(&f, "alt", "alt-only", h2, SMR_OK));
	CHECK_INT(ops_fork(f.ctx, "demo", "alt", &sp, NULL), SMR_ECONFLICT);
	CHECK_INT(ops_fsck(f.ctx, NULL, &report, NULL), SMR_OK);
	CHECK(json_is_true(json_object_get(report, "ok")));
	/* h1..h3 and alt's own: the two held by both Spaces checked once */
	CHECK_INT(json_integer_value(json_object_get(report, "checkpoints")), 4);
	json_decref(report);
	free(h1);
	free(h2);
	free(h3);
	space_release(&fork);
	space_release(&sp);
	teardown(&f);
}

TEST(ops_fsck_detects_tampering)
{
	struct fixture f;
	struct space sp = { 0 };
	json_t *report = NULL, *p;
	sqlite3 *db;
	char *h1;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	h1 = commit(&f, "demo", "one", NULL, SMR_OK);
	free(commit(&f, "demo", "two", NULL, SMR_OK));
	CHECK_INT(sqlite3_open(f.path, &db), SQLITE_OK);
	/* an item as stored (each once, store/content.h), not a copy in its checkpoint's row */
	CHECK_INT(sqlite3_exec(db, "UPDATE items SET body = '{\"text\":\"forged\"}'"
			       " WHERE body = '{\"text\":\"one\"}'", NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_changes(db), 1);
	sqlite3_close(db);
	CHECK_INT(ops_fsck(f.ctx, "demo", &report, NULL), SMR_OK);
	CHECK(json_is_false(json_object_get(report, "ok")));
	p = json_array_get(json_object_get(report, "problems"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "commit_hash")), h1);
	CHECK(strstr(json_string_value(json_object_get(p, "problem")), "hash") != NULL);
	json_decref(report);
	/* the whole database: found once, named by the Space that wrote it */
	CHECK_INT(ops_fsck(f.ctx, NULL, &report, NULL), SMR_OK);
	CHECK(json_is_false(json_object_get(report, "ok")));
	CHECK_INT(json_array_size(json_object_get(report, "problems")), 1);
	p = json_array_get(json_object_get(report, "problems"), 0);
	CHECK_STR(json_string_value(json_object_get(p, "space")), "demo");
	CHECK_STR(json_string_value(json_object_get(p, "commit_hash")), h1);
	json_decref(report);
	free(h1);
	space_release(&sp);
	teardown(&f);
}

TEST(ops_rejects_empty_checkpoints_and_bad_space_names)
{
	struct fixture f;
	struct space sp = { 0 };
	struct checkpoint c = { 0 };
	json_t *empty = json_object();
	struct smr_err err = SMR_ERR_INIT;

	setup(&f);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	space_release(&sp);
	CHECK_INT(ops_checkpoint_create(f.ctx, "demo", empty, NULL, NULL, &c, &err), SMR_EUNPROC);
	CHECK(strstr(err.msg, "empty checkpoint") != NULL);
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_ECONFLICT);
	CHECK_INT(ops_space_create(f.ctx, "a~b", NULL, &sp, NULL), SMR_EINVAL);
	CHECK_INT(ops_space_create(f.ctx, "", NULL, &sp, NULL), SMR_EINVAL);
	CHECK_INT(ops_space_create(f.ctx, "x\ny", NULL, &sp, NULL), SMR_EINVAL);
	CHECK_INT(ops_head(f.ctx, "demo", &c, &err), SMR_ENOTFOUND);
	CHECK(strstr(err.msg, "no checkpoints yet") != NULL);
	json_decref(empty);
	teardown(&f);
}

/* Writes fields (taken) to space on parent (NULL: on HEAD) through ctx; its hash into hash[65]. */
static enum smr_rc write_json(struct ops_ctx *ctx, const char *space, const char *parent,
			      json_t *fields, char hash[65], struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_checkpoint_create(ctx, space, fields, parent, NULL, &c, err);

	if (!rc)
		snprintf(hash, 65, "%s", c.hash);
	checkpoint_release(&c);
	json_decref(fields);
	return rc;
}

/* Creates a checkpoint titled title in space on parent (NULL: on HEAD); its hash into hash[65]. */
static enum smr_rc write_titled(struct ops_ctx *ctx, const char *space, const char *parent,
				const char *title, char hash[65], struct smr_err *err)
{
	return write_json(ctx, space, parent, json_pack("{s:s}", "title", title), hash, err);
}

/*
 * Another handle renames Space a to b and makes a new a, with one
 * checkpoint ("new a", its hash into other[65]).
 */
static void a_becomes_b(struct store *st, struct ops_ctx *admin, char other[65])
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };

	CHECK_INT(ops_space_get(admin, "a", &sp, &err), SMR_OK);
	CHECK_INT(store_space_rename(st, sp.id, "b", NULL, &err), SMR_OK);
	space_release(&sp);
	CHECK_INT(ops_space_create(admin, "a", "", &sp, &err), SMR_OK);
	space_release(&sp);
	CHECK_INT(write_titled(admin, "a", NULL, "new a", other, &err), SMR_OK);
}

/*
 * A context remembers the Space its last write named, and the next write
 * on a parent skips the lookup: it must still land in the Space the name
 * means now (renamed meanwhile by another handle), and conflict as before.
 */
TEST(ops_write_on_a_remembered_space_follows_renames)
{
	char path[TEMP_STORE_PATH_MAX], root[65], next[65], other[65], mine[65];
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL, *admin = NULL;
	struct store *st = NULL;
	struct space sp = { 0 };
	struct checkpoint head = { 0 };

	temp_store_open(path, &st, &admin);
	CHECK_INT(ops_open(&ctx, path, NULL, &err), SMR_OK);
	CHECK_INT(ops_space_create(admin, "a", "", &sp, &err), SMR_OK);
	space_release(&sp);
	CHECK_INT(write_titled(ctx, "a", NULL, "root", root, &err), SMR_OK);
	CHECK_INT(write_titled(ctx, "a", root, "next", next, &err), SMR_OK);
	/* a stale parent on the short way is the same conflict as on the long one */
	CHECK_INT(write_titled(ctx, "a", root, "stale", other, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "parent is stale: HEAD is now") != NULL);
	/* another handle renames a to b and makes a new a */
	a_becomes_b(st, admin, other);
	/* b's HEAD is no parent in the new a: a conflict, and b is left alone */
	CHECK_INT(write_titled(ctx, "a", next, "into b?", mine, &err), SMR_ECONFLICT);
	CHECK_INT(write_titled(ctx, "a", other, "mine", mine, &err), SMR_OK);
	CHECK_INT(ops_head(admin, "a", &head, &err), SMR_OK);
	CHECK_STR(head.hash, mine);
	CHECK_STR(head.space, "a");
	checkpoint_release(&head);
	CHECK_INT(ops_head(admin, "b", &head, &err), SMR_OK);
	CHECK_STR(head.hash, next);
	checkpoint_release(&head);
	ops_close(ctx);
	temp_store_close(path, admin);
}

/*
 * A temporary store holding an empty Space "a", its administrator's
 * context and two more, one and two: two writers of a server.
 */
static void two_writers(char path[TEMP_STORE_PATH_MAX], struct store **st,
			struct ops_ctx **admin, struct ops_ctx **one, struct ops_ctx **two)
{
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };

	temp_store_open(path, st, admin);
	CHECK_INT(ops_open(one, path, NULL, &err), SMR_OK);
	CHECK_INT(ops_open(two, path, NULL, &err), SMR_OK);
	CHECK_INT(ops_space_create(*admin, "a", "", &sp, &err), SMR_OK);
	space_release(&sp);
}

/* A write of text to space on no parent through ctx: its hash into hash[65]. */
typedef enum smr_rc (*no_parent_fn)(struct ops_ctx *ctx, const char *space, const char *text,
				    char hash[65], struct smr_err *err);

static enum smr_rc write_on_head(struct ops_ctx *ctx, const char *space, const char *text,
				 char hash[65], struct smr_err *err)
{
	return write_titled(ctx, space, NULL, text, hash, err);
}

/* Patches space's HEAD through ctx with summary text, as PATCH .../head does. */
static enum smr_rc patch_on_head(struct ops_ctx *ctx, const char *space, const char *text,
				 char hash[65], struct smr_err *err)
{
	json_t *patch = json_pack("{s:s}", "summary", text);
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_checkpoint_update(ctx, space, patch, NULL, NULL, &c, NULL, err);

	if (!rc)
		snprintf(hash, 65, "%s", c.hash);
	checkpoint_release(&c);
	json_decref(patch);
	return rc;
}

/*
 * A write or patch that names no parent skips the Space's lookup too once
 * a write remembered the Space, starting from the HEAD it remembered: it
 * must go on the HEAD of its moment when another context moved it
 * meanwhile, land in the Space the name means now after a rename, and
 * find nothing once the Space is deleted.
 */
static void no_parent_on_a_remembered_space(no_parent_fn write)
{
	char path[TEMP_STORE_PATH_MAX], h[4][65], other[65];
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *one = NULL, *two = NULL, *admin = NULL;
	struct store *st = NULL;
	struct checkpoint head = { 0 };

	two_writers(path, &st, &admin, &one, &two);
	CHECK_INT(write_titled(one, "a", NULL, "root", h[0], &err), SMR_OK);
	CHECK_INT(write(one, "a", "on root", h[1], &err), SMR_OK);
	/* another context moves HEAD; one's memory of it is stale */
	CHECK_INT(write(two, "a", "by two", h[2], &err), SMR_OK);
	CHECK_INT(write(one, "a", "on two's", h[3], &err), SMR_OK);
	CHECK_INT(ops_head(admin, "a", &head, &err), SMR_OK);
	CHECK_STR(head.hash, h[3]);
	CHECK_STR(head.parent_hash, h[2]);
	checkpoint_release(&head);
	CHECK_INT(ops_resolve(admin, h[2], &head, &err), SMR_OK);
	CHECK_STR(head.parent_hash, h[1]);
	checkpoint_release(&head);
	/* renamed, and a new a made: the next write goes into the new a, on its HEAD */
	a_becomes_b(st, admin, other);
	CHECK_INT(write(one, "a", "into the new a", h[0], &err), SMR_OK);
	CHECK_INT(ops_head(admin, "a", &head, &err), SMR_OK);
	CHECK_STR(head.hash, h[0]);
	CHECK_STR(head.parent_hash, other);
	CHECK_STR(head.space, "a");
	checkpoint_release(&head);
	CHECK_INT(ops_head(admin, "b", &head, &err), SMR_OK);
	CHECK_STR(head.hash, h[3]);
	checkpoint_release(&head);
	/* deleted: not found, nothing written */
	CHECK_INT(ops_space_delete(admin, "a", &err), SMR_OK);
	CHECK_INT(write(two, "a", "into nothing", h[1], &err), SMR_ENOTFOUND);
	CHECK_INT(write(one, "a", "into nothing", h[1], &err), SMR_ENOTFOUND);
	CHECK_INT(ops_head(admin, "b", &head, &err), SMR_OK);
	CHECK_STR(head.hash, h[3]);
	checkpoint_release(&head);
	ops_close(one);
	ops_close(two);
	temp_store_close(path, admin);
}

TEST(ops_write_without_a_parent_on_a_remembered_space)
{
	no_parent_on_a_remembered_space(write_on_head);
}

TEST(ops_patch_without_a_parent_on_a_remembered_space)
{
	no_parent_on_a_remembered_space(patch_on_head);
}

/* Writes fields (JSON text) to space on parent through ctx; its hash into hash[65]. */
static enum smr_rc write_fields(struct ops_ctx *ctx, const char *space, const char *parent,
				const char *json, char hash[65], struct smr_err *err)
{
	return write_json(ctx, space, parent, json_loads(json, 0, NULL), hash, err);
}

/* How many items search finds for query in field. */
static size_t search_hits(struct ops_ctx *ctx, const char *query, const char *field)
{
	struct smr_err err = SMR_ERR_INIT;
	struct search_params p = { .query = query, .field = field };
	json_t *out = NULL;
	size_t n;

	CHECK_INT(ops_search(ctx, &p, &out, &err), SMR_OK);
	n = json_array_size(json_object_get(out, "results"));
	json_decref(out);
	return n;
}

/*
 * A server's writes go to whichever worker is free: what one context's
 * write remembered (the Space a name means, the items the search index
 * compared with) serves the next write on that Space from another context.
 * It must still land where the name means now, and index an item once,
 * where it appeared.
 */
TEST(ops_writes_of_one_space_through_several_contexts)
{
	char path[TEMP_STORE_PATH_MAX], h[4][65], other[65];
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *one = NULL, *two = NULL, *admin = NULL;
	struct store *st = NULL;
	struct checkpoint head = { 0 };

	two_writers(path, &st, &admin, &one, &two);
	CHECK_INT(write_fields(one, "a", NULL, "{\"title\":\"root\",\"decisions\":"
			       "[\"keep the ledger\"]}", h[0], &err), SMR_OK);
	CHECK_INT(write_fields(two, "a", h[0], "{\"title\":\"second\",\"decisions\":"
			       "[\"keep the ledger\",\"add a queue\"]}", h[1], &err), SMR_OK);
	CHECK_INT(write_fields(one, "a", h[1], "{\"title\":\"third\",\"decisions\":"
			       "[\"keep the ledger\",\"add a queue\",\"drop the cron\"]}", h[2],
			       &err), SMR_OK);
	CHECK_INT(write_fields(two, "a", h[2], "{\"title\":\"fourth\",\"decisions\":"
			       "[\"keep the ledger\",\"drop the cron\"]}", h[3], &err), SMR_OK);
	CHECK_INT(search_hits(admin, "ledger", "decisions"), 1);
	CHECK_INT(search_hits(admin, "queue", "decisions"), 1);
	CHECK_INT(search_hits(admin, "cron", "decisions"), 1);
	/* a stale parent from the other context is the same conflict */
	CHECK_INT(write_titled(one, "a", h[2], "stale", other, &err), SMR_ECONFLICT);
	CHECK(strstr(err.msg, "parent is stale: HEAD is now") != NULL);
	/* another handle renames a to b and makes a new a: neither context writes into b */
	a_becomes_b(st, admin, other);
	CHECK_INT(write_titled(one, "a", h[3], "into b?", h[0], &err), SMR_ECONFLICT);
	CHECK_INT(write_titled(two, "a", h[3], "into b?", h[0], &err), SMR_ECONFLICT);
	CHECK_INT(write_titled(two, "a", other, "mine", h[0], &err), SMR_OK);
	CHECK_INT(write_titled(one, "a", h[0], "and mine", h[1], &err), SMR_OK);
	CHECK_INT(ops_head(admin, "a", &head, &err), SMR_OK);
	CHECK_STR(head.hash, h[1]);
	checkpoint_release(&head);
	CHECK_INT(ops_head(admin, "b", &head, &err), SMR_OK);
	CHECK_STR(head.hash, h[3]);
	checkpoint_release(&head);
	ops_close(one);
	ops_close(two);
	temp_store_close(path, admin);
}

/* The clock of ops_dates_*: a fixed instant each write is told. */
static const char *date_now;

static void date_clock(char out[32])
{
	snprintf(out, 32, "%s", date_now);
}

/* The title of what ref resolves to, or its error code as text; caller frees. */
static char *title_at(struct fixture *f, const char *ref, struct smr_err *err)
{
	struct checkpoint c = { 0 };
	enum smr_rc rc = ops_resolve(f->ctx, ref, &c, err);
	char *s = rc ? strdup(smr_rc_name(rc)) : strdup(c.title);

	checkpoint_release(&c);
	return s;
}

/* gc's report figure name, as a number. */
static json_int_t gc_figure(const json_t *r, const char *name)
{
	return json_integer_value(json_object_get(r, name));
}

/*
 * gc --prune expires reflog entries after git's 90 days by default
 * (OPS_REFLOG_EXPIRE, read on the context's clock), then removes what only
 * they reached; "never" keeps them; an expiry date without prune is a
 * usage error.
 */
TEST(ops_gc_expires_the_reflog_after_90_days)
{
	struct fixture f;
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	struct ref_move mv = { "cy", "reset", "2026-01-02T00:00:00.000000Z" };
	struct import_space in = { .space = &sp, .move = &mv };
	json_t *r = NULL;
	char *one, *two, *title;

	setup(&f);
	f.ctx->now = date_clock;
	date_now = "2026-01-01T00:00:00.000000Z";
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	one = commit(&f, "demo", "one", NULL, SMR_OK);
	two = commit(&f, "demo", "two", NULL, SMR_OK);
	in.head = one;                      /* HEAD back to "one": "two" is in the reflog only */
	CHECK_INT(store_import(f.st, &in, 1, &err), SMR_OK);
	date_now = "2026-01-03T00:00:00.000000Z";
	free(commit(&f, "demo", "three", NULL, SMR_OK));
	CHECK_INT(ops_gc(f.ctx, 0, NULL, "now", &r, &err), SMR_EUSAGE);
	CHECK_INT(ops_gc(f.ctx, 1, NULL, "someday", &r, &err), SMR_EUSAGE);
	date_now = "2026-04-01T00:00:00.000000Z";           /* 90 days on; 89 after the move */
	CHECK_INT(ops_gc(f.ctx, 1, NULL, NULL, &r, &err), SMR_OK);
	CHECK_INT(gc_figure(r, "expired_reflog"), 3);         /* create, "one", "two" */
	CHECK_INT(gc_figure(r, "unreached_checkpoints"), 0);
	json_decref(r);
	title = title_at(&f, two, &err);
	CHECK_STR(title, "two");
	free(title);
	date_now = "2026-04-15T00:00:00.000000Z";
	CHECK_INT(ops_gc(f.ctx, 1, NULL, "never", &r, &err), SMR_OK);
	CHECK_INT(gc_figure(r, "expired_reflog"), 0);
	json_decref(r);
	CHECK_INT(ops_gc(f.ctx, 1, NULL, NULL, &r, &err), SMR_OK);
	CHECK_INT(gc_figure(r, "expired_reflog"), 1);         /* the move; "three" is HEAD's */
	CHECK_INT(gc_figure(r, "unreached_checkpoints"), 1);
	CHECK(gc_figure(r, "unused_items") >= 1);
	json_decref(r);
	title = title_at(&f, two, &err);
	CHECK_STR(title, "not_found");
	free(title);
	title = title_at(&f, "demo~1", &err);
	CHECK_STR(title, "one");
	free(title);
	space_release(&sp);
	free(one);
	free(two);
	teardown(&f);
}

/*
 * SPACE@{DATE}: the last move of HEAD at or before DATE (ref.h).  A date
 * alone is midnight UTC as the day begins (docs/man/smriti.1.scd), the
 * whole of that first second included; before the first move it is an
 * error that says so; after the last one it is HEAD now.
 */
TEST(ops_dates_name_midnight_and_the_ends_of_the_reflog)
{
	struct fixture f;
	struct space sp = { 0 };
	struct smr_err err = SMR_ERR_INIT;
	static const struct {
		const char *ref, *want;
	} cases[] = {
		{ "demo@{2026-11-30}", "not_found" },              /* before the Space */
		{ "demo@{2026-12-01}", "not_found" },              /* midnight: before the first move */
		{ "demo@{2026-12-01 11:59}", "not_found" },
		{ "demo@{2026-12-01 12:00}", "one" },              /* the move's own second */
		{ "demo@{2026-12-01T12:00:00.5Z}", "one" },
		{ "demo@{2026-12-02}", "one" },                    /* midnight after it */
		{ "demo@{2026-12-02T23:59:59Z}", "two" },
		{ "demo@{2026-12-03}", "two" },
		{ "demo@{2026-12-04}", "three" },                  /* written at that midnight */
		{ "demo@{2030-01-01}", "three" },                  /* after the last move: HEAD */
		{ "demo@{now}", "three" },
		{ "demo@{yesterday}", "three" },
		{ "demo@{3 days ago}", "two" },                    /* 2026-12-02T18:00 */
		{ "demo@{2026-12-03}~1", "one" },
	};
	char *got;

	setup(&f);
	f.ctx->now = date_clock;
	date_now = "2026-12-01T12:00:00.000000Z";
	CHECK_INT(ops_space_create(f.ctx, "demo", NULL, &sp, NULL), SMR_OK);
	space_release(&sp);
	free(commit(&f, "demo", "one", NULL, SMR_OK));
	date_now = "2026-12-02T18:00:00.000000Z";
	free(commit(&f, "demo", "two", NULL, SMR_OK));
	date_now = "2026-12-04T00:00:00.000000Z";
	free(commit(&f, "demo", "three", NULL, SMR_OK));
	date_now = "2026-12-05T18:00:00.000000Z";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = title_at(&f, cases[i].ref, &err);
		if (strcmp(got, cases[i].want))
			fprintf(stderr, "  %s: %s (%s)\n", cases[i].ref, got, err.msg);
		CHECK_STR(got, cases[i].want);
		free(got);
	}
	got = title_at(&f, "demo@{2026-12-01}", &err);
	CHECK(strstr(err.msg, "did not exist yet at 2026-12-01T00:00:00Z") != NULL);
	free(got);
	teardown(&f);
}

static unsigned fixed_ids;

static void fixed_now(char out[32])
{
	snprintf(out, 32, "2026-01-02T03:04:%02u.000000Z", fixed_ids % 60);
}

static void fixed_new_id(char out[37])
{
	snprintf(out, 37, "00000000-0000-4000-8000-%012u", ++fixed_ids);
}

/* A fresh in-memory store whose clock and ids repeat from the start. */
static struct ops_ctx *fixed_memory_store(void)
{
	struct ops_opts opt = { .now = fixed_now, .new_id = fixed_new_id };
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx = NULL;

	fixed_ids = 0;
	CHECK_INT(ops_open(&ctx, ":memory:", &opt, &err), SMR_OK);
	return ctx;
}

static void create(struct ops_ctx *ctx, const char *title, json_t *fields)
{
	struct smr_err err = SMR_ERR_INIT;
	struct checkpoint c = { 0 };

	json_object_set_new(fields, "title", json_string(title));
	CHECK_INT(ops_checkpoint_create(ctx, "demo", fields, NULL, "ana", &c, &err), SMR_OK);
	checkpoint_release(&c);
	json_decref(fields);
}

/*
 * The bundle of Space demo: a checkpoint whose task is written with its
 * keys in the order given (two orders: one hash, two texts as stored),
 * then one whose task's keys come text first.
 */
static char *family_bundle(int status_first)
{
	struct ops_ctx *ctx = fixed_memory_store();
	struct smr_err err = SMR_ERR_INIT;
	struct space sp = { 0 };
	const char *names[] = { "demo" };
	char *text = NULL;
	size_t len = 0;

	CHECK_INT(ops_space_create(ctx, "demo", "", &sp, &err), SMR_OK);
	space_release(&sp);
	create(ctx, "Start", json_pack("{s:[s]}", "decisions", "Use SQLite"));
	create(ctx, "edited", json_pack("{s:[s], s:[o]}", "decisions", "Use SQLite", "tasks",
					json_loads(status_first ? "{\"status\": \"done\", \"text\": \"write docs\"}"
						   : "{\"text\": \"write docs\", \"status\": \"done\"}", 0, NULL)));
	create(ctx, "Next", json_pack("{s:[s, s], s:[{s:s, s:s}]}", "decisions", "Use SQLite",
				      "Keep it small", "tasks", "text", "write docs", "status", "done"));
	CHECK_INT(ops_export_text(ctx, names, 1, &text, &len, &err), SMR_OK);
	ops_close(ctx);
	return text;
}

/*
 * Two in-memory databases of one process are two databases: the chunk
 * memories (store/content.h) are keyed by database, and every ":memory:"
 * had one key.  The fuzzer's bundle target found it: a checkpoint whose
 * items another in-memory store had stored in other words (keys in
 * another order: the same hash) was taken as stored here too, and its
 * child's chunks as stored with it: the child read back with no lists.
 */
TEST(two_in_memory_stores_keep_their_chunk_memories_apart)
{
	char *one = family_bundle(0), *two = family_bundle(1), *back = NULL;
	const char *names[] = { "demo" };
	struct smr_err err = SMR_ERR_INIT;
	struct ops_ctx *ctx;
	json_t *rep = NULL;
	size_t len = 0;

	CHECK(strcmp(one, two) != 0);
	ctx = fixed_memory_store();
	CHECK_INT(ops_import_text(ctx, one, strlen(one), &rep, &err), SMR_OK);
	json_decref(rep);
	rep = NULL;
	ops_close(ctx);
	ctx = fixed_memory_store();
	CHECK_INT(ops_import_text(ctx, two, strlen(two), &rep, &err), SMR_OK);
	CHECK_INT(ops_export_text(ctx, names, 1, &back, &len, &err), SMR_OK);
	CHECK_STR(back, two);
	json_decref(rep);
	ops_close(ctx);
	free(back);
	free(one);
	free(two);
}
