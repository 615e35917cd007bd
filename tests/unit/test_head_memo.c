/*
 * test_head_memo.c -- store/head_memo.c: the checkpoints patches wrote
 * lately are kept by count and by bytes, oldest out first, and a state too
 * big to keep is not kept at all.
 */
#include "harness.h"

#include "domain/checkpoint.h"
#include "store/head_memo.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* A sealed checkpoint titled title, with one artifact of content_bytes bytes; caller releases. */
static void sealed(struct checkpoint *c, const char *title, size_t content_bytes)
{
	char *content = xmalloc(content_bytes + 1);

	memset(content, 'x', content_bytes);
	content[content_bytes] = '\0';
	checkpoint_init(c);
	c->title = xstrdup(title);
	c->summary = xstrdup("kept or not");
	c->author = xstrdup("test");
	c->created_at = xstrdup("2026-12-07T00:00:00.000000Z");
	json_array_append_new(c->artifacts, json_pack("{s:s, s:s, s:s}", "name", "a.txt", "kind",
						      "text", "content", content));
	free(content);
	checkpoint_seal(c);
}

/* Whether the memo holds hash. */
static int kept(const char *hash)
{
	struct checkpoint c = { 0 };
	int found = head_memo_get(hash, &c);

	checkpoint_release(&c);
	return found;
}

TEST(head_memo_keeps_the_newest_within_its_byte_bound_and_not_a_state_too_big)
{
	struct checkpoint big, c;
	char title[32], hash[40][HASH_HEX_LEN + 1];

	/* 9 artifacts of nearly 1 MB: over a quarter of the bound, so never kept */
	sealed(&big, "too big", 10);
	for (int i = 0; i < 9; i++) {
		struct checkpoint part;

		sealed(&part, "part", 990000);
		json_array_append(big.artifacts, json_array_get(part.artifacts, 0));
		checkpoint_release(&part);
	}
	checkpoint_seal(&big);
	head_memo_put(&big);
	CHECK(!kept(big.hash));

	/* 40 states of about 1.8 MB each (the texts count both forms): 32 MiB hold 17 of them */
	for (int i = 0; i < 40; i++) {
		snprintf(title, sizeof(title), "state %d", i);
		sealed(&c, title, 900000);
		head_memo_put(&c);
		memcpy(hash[i], c.hash, sizeof(hash[i]));
		checkpoint_release(&c);   /* the memo keeps its own references */
		CHECK(head_memo_bytes() <= (32u << 20));
	}
	CHECK(kept(hash[39]));
	CHECK(kept(hash[30]));
	CHECK(!kept(hash[0]));
	CHECK(!kept(hash[20]));

	/* small ones push the big ones out by count: 64 slots */
	for (int i = 0; i < 64; i++) {
		struct checkpoint s;

		snprintf(title, sizeof(title), "small %d", i);
		sealed(&s, title, 10);
		head_memo_put(&s);
		if (i == 63)
			CHECK(kept(s.hash));
		checkpoint_release(&s);
	}
	CHECK(!kept(hash[39]));
	CHECK(head_memo_bytes() < (1u << 20));
	checkpoint_release(&big);
}
