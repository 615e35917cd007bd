/*
 * test_strmap.c -- util/strmap.c: every key put is found with its last
 * value through many growths, keys that differ in one byte anywhere (the
 * hash reads eight bytes at a time, then the tail) stay apart, and a key
 * never put is not found.
 */
#include "harness.h"

#include "util/strmap.h"

#include <stdio.h>
#include <string.h>

/* Key i: a shared prefix of length i % 41 (every tail length), then i. */
static void key_of(size_t i, char out[80])
{
	size_t pre = i % 41;

	memset(out, 'k', pre);
	snprintf(out + pre, 80 - pre, "%zu", i);
}

TEST(strmap_finds_every_key_through_growth_and_keeps_the_last_value)
{
	struct strmap m = STRMAP_INIT;
	char key[80];
	size_t v = 0;

	CHECK(!strmap_get(&m, "absent", &v));
	for (size_t i = 0; i < 5000; i++) {
		key_of(i, key);
		strmap_put(&m, key, i);
	}
	for (size_t i = 0; i < 5000; i += 2) {   /* replace half */
		key_of(i, key);
		strmap_put(&m, key, i + 1);
	}
	CHECK_INT(m.n, 5000);
	for (size_t i = 0; i < 5000; i++) {
		key_of(i, key);
		CHECK(strmap_get(&m, key, &v));
		CHECK_INT(v, i % 2 ? i : i + 1);
	}
	CHECK(!strmap_get(&m, "k5000", NULL));
	CHECK(strmap_get(&m, "", NULL) == 0);
	strmap_put(&m, "", 7);
	CHECK(strmap_get(&m, "", &v));
	CHECK_INT(v, 7);
	strmap_release(&m);
	CHECK(!strmap_get(&m, "k1", NULL));
}

TEST(strmap_keeps_apart_keys_that_differ_in_one_byte)
{
	struct strmap m = STRMAP_INIT;
	char key[33];
	size_t v = 0;

	/* every position of a 32-byte key, in each 8-byte word and at the end */
	for (size_t pos = 0; pos < 32; pos++) {
		memset(key, 'a', 32);
		key[32] = '\0';
		key[pos] = 'b';
		strmap_put(&m, key, pos);
	}
	memset(key, 'a', 32);
	strmap_put(&m, key, 99);
	CHECK_INT(m.n, 33);
	for (size_t pos = 0; pos < 32; pos++) {
		memset(key, 'a', 32);
		key[pos] = 'b';
		CHECK(strmap_get(&m, key, &v));
		CHECK_INT(v, pos);
	}
	memset(key, 'a', 32);
	CHECK(strmap_get(&m, key, &v));
	CHECK_INT(v, 99);
	key[31] = '\0';   /* a prefix of the keys is none of them */
	CHECK(!strmap_get(&m, key, NULL));
	strmap_release(&m);
}
