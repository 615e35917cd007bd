/*
 * test_draft_jobs.c -- draft jobs whose server died: a job left running long
 * past its timeout, or queued for an hour, is reported (and stored) as
 * failed when read; a job still within its time is left alone.
 */
#include "harness.h"
#include "temp_store.h"
#include "ops/ops.h"
#include "ops/full/draft.h"

#include <stdlib.h>
#include <unistd.h>

static const char *fixed_now;

static void test_now(char out[32])
{
	snprintf(out, 32, "%s", fixed_now);
}

static void add_job(struct store *st, const char *sid, const char *id, enum job_status status,
		    const char *created, const char *started)
{
	struct draft_job j = { .id = (char *)id, .session_id = (char *)sid, .status = JOB_QUEUED,
			       .provider = "openai", .model = "m", .created_at = (char *)created };

	CHECK_INT(store_job_create(st, &j, NULL), SMR_OK);
	j.status = status;
	j.started_at = (char *)started;
	CHECK_INT(store_job_update(st, &j, NULL), SMR_OK);
}

static const char *status_of(struct ops_ctx *ctx, const char *id)
{
	static char buf[16];
	json_t *doc = NULL;

	CHECK_INT(draft_get(ctx, id, &doc, NULL), SMR_OK);
	snprintf(buf, sizeof(buf), "%s", json_string_value(json_object_get(doc, "status")));
	json_decref(doc);
	return buf;
}

TEST(draft_jobs_of_a_dead_server_expire_when_read)
{
	char path[TEMP_STORE_PATH_MAX];
	struct store *st = NULL;
	struct ops_ctx *ctx = NULL;
	struct space sp = { 0 };
	struct session sn = { .id = "s1", .title = "t", .history_base_seq = -1,
			      .created_at = "2026-01-01T00:00:00.000000Z" };
	struct draft_job j = { 0 };

	temp_store_open(path, &st, &ctx);
	ctx->now = test_now;
	fixed_now = "2026-01-01T00:00:00.000000Z";
	CHECK_INT(ops_space_create(ctx, "jobs", NULL, &sp, NULL), SMR_OK);
	sn.repo_id = sp.id;
	CHECK_INT(store_session_create(st, &sn, NULL), SMR_OK);
	add_job(st, "s1", "running-old", JOB_RUNNING, "2026-01-01T00:00:00.000000Z",
		"2026-01-01T00:00:00.000000Z");
	add_job(st, "s1", "running-new", JOB_RUNNING, "2026-01-01T00:02:00.000000Z",
		"2026-01-01T00:02:30.000000Z");
	add_job(st, "s1", "queued-new", JOB_QUEUED, "2026-01-01T00:00:00.000000Z", NULL);
	add_job(st, "s1", "queued-old", JOB_QUEUED, "2025-12-31T22:00:00.000000Z", NULL);
	/* the default timeout is 120 s, plus a minute of grace */
	fixed_now = "2026-01-01T00:03:30.000000Z";
	CHECK_STR(status_of(ctx, "running-old"), "failed");
	CHECK_STR(status_of(ctx, "running-new"), "running");
	CHECK_STR(status_of(ctx, "queued-new"), "queued");
	CHECK_STR(status_of(ctx, "queued-old"), "failed");
	CHECK_INT(store_job_get(st, "running-old", &j, NULL), SMR_OK);
	CHECK_INT(j.status, JOB_FAILED);
	CHECK(j.error && strstr(j.error, "stopped before it finished"));
	draft_job_release(&j);
	space_release(&sp);
	temp_store_close(path, ctx);
}
