/*
 * test_store_trace.c -- the trace backend (store/trace.c) wraps every
 * method of the storage port.  Its table starts as a copy of the backend's
 * and replaces the methods it knows, so a method added to struct store_ops
 * but not to trace.c's list would run untraced, silently: this test finds
 * such a method by comparing the traced table with the backend's, slot by
 * slot, on SQLite (and on PostgreSQL with SMRITI_TEST_PG).
 */
#include "harness.h"
#include "store/store_int.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The members a traced table shares with its backend's, on purpose. */
static const size_t shared_members[] = {
	offsetof(struct store_ops, name),
	offsetof(struct store_ops, shared),
	offsetof(struct store_ops, accepts),
	offsetof(struct store_ops, open),
	offsetof(struct store_ops, auth_bump_sql),
	offsetof(struct store_ops, reach_into_sql),
	offsetof(struct store_ops, heads_at_sql),
	offsetof(struct store_ops, live_of_sql),
	offsetof(struct store_ops, watch_open),
};

static int is_shared_member(size_t off)
{
	for (size_t i = 0; i < sizeof(shared_members) / sizeof(*shared_members); i++)
		if (shared_members[i] == off)
			return 1;
	return 0;
}

static uintptr_t slot(const struct store_ops *ops, size_t off)
{
	uintptr_t v;

	memcpy(&v, (const char *)ops + off, sizeof(v));
	return v;
}

static struct store *open_with_trace(const char *dsn, int on)
{
	struct store *st = NULL;

	if (on)
		setenv("SMRITI_STORE_TRACE", "1", 1);
	else
		unsetenv("SMRITI_STORE_TRACE");
	CHECK_INT(store_open(dsn, &st, NULL), SMR_OK);
	unsetenv("SMRITI_STORE_TRACE");
	return st;
}

/* Every method slot of the traced table is the trace's own, or NULL where the backend's is. */
static void check_every_method_traced(const char *dsn)
{
	struct store *plain = open_with_trace(dsn, 0);
	struct store *traced = open_with_trace(dsn, 1);

	if (!plain || !traced)
		goto out;
	CHECK(plain->ops != traced->ops);
	for (size_t off = 0; off + sizeof(uintptr_t) <= sizeof(struct store_ops);
	     off += sizeof(uintptr_t)) {
		uintptr_t in = slot(plain->ops, off), tr = slot(traced->ops, off);

		if (is_shared_member(off))
			continue;
		if (in == tr && in)
			test_fail(__FILE__, __LINE__,
				  "%s: struct store_ops member at offset %zu is not traced: "
				  "list it in store/trace.c's METHODS", plain->ops->name, off);
		if (!in && tr)
			test_fail(__FILE__, __LINE__,
				  "%s: the trace offers a method at offset %zu the backend lacks",
				  plain->ops->name, off);
	}
out:
	if (traced)
		store_close(traced);
	if (plain)
		store_close(plain);
}

TEST(store_trace_wraps_every_method)
{
	char path[] = "/tmp/smriti-unit-trace-XXXXXX";
	int fd = mkstemp(path);
	const char *pg = getenv("SMRITI_TEST_PG");

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	check_every_method_traced(path);
	unlink(path);
	for (const char *side = "-wal"; side; side = side[1] == 'w' ? "-shm" : NULL) {
		char p[sizeof(path) + 8];

		snprintf(p, sizeof(p), "%s%s", path, side);
		unlink(p);
	}
	if (pg && *pg)
		check_every_method_traced(pg);
}
