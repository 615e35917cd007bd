/*
 * test_gitexport.c -- the default branch of a Space's git export: a name
 * git accepts for every Space name, by the escaping gitexport.h documents,
 * and two names never sharing a branch.
 */
#include "harness.h"

#include "domain/gitexport.h"

#include <stdlib.h>

/* The branch of space; caller frees. */
static char *branch(const char *space)
{
	struct buf b = BUF_INIT(0);

	gitexport_branch_name(space, &b);
	return buf_detach(&b, NULL);
}

TEST(gitexport_branch_name_escapes_what_git_refuses)
{
	static const char *const cases[][2] = {
		{ "trip", "smriti/trip" },
		{ "Trip-2026_v1.2", "smriti/Trip-2026_v1.2" },
		{ "road trip: v2?", "smriti/road%20trip%3A%20v2%3F" },
		{ "a..b", "smriti/a.%2Eb" },
		{ "a...b", "smriti/a.%2E%2Eb" },
		{ ".hidden", "smriti/%2Ehidden" },
		{ "end.", "smriti/end%2E" },
		{ "x.lock", "smriti/x%2Elock" },
		{ "x.lock.y", "smriti/x.lock.y" },
		{ ".lock", "smriti/%2Elock" },
		{ "köln", "smriti/köln" },
		{ "50%", "smriti/50%25" },
		{ "@", "smriti/%40" },
		{ "a@{1}", "smriti/a%40%7B1%7D" },
		{ "~^:?*[\\/", "smriti/%7E%5E%3A%3F%2A%5B%5C%2F" },
		{ "tab\there", "smriti/tab%09here" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = branch(cases[i][0]);

		CHECK_STR(got, cases[i][1]);
		free(got);
	}
}

TEST(gitexport_branch_name_keeps_names_apart)
{
	/* '%' itself is escaped, so a name spelling an escape is not the name it spells */
	char *a = branch("a b"), *b = branch("a%20b");

	CHECK(strcmp(a, b) != 0);
	free(a);
	free(b);
}
