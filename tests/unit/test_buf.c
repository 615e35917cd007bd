/*
 * test_buf.c -- util/buf.c's formatted appends: what fits in the room the
 * buffer has, what needs it to grow (a long %s among them), and a cap that
 * refuses an append and keeps the text before it.
 */
#include "harness.h"

#include "util/buf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

TEST(buf_addf_appends_in_place_and_after_growing)
{
	struct buf b = BUF_INIT(0);
	char *big = xcalloc(5001, 1);

	memset(big, 'x', 5000);
	buf_addf(&b, "%d-%s", 7, "a");
	CHECK_STR(b.ptr, "7-a");
	buf_addf(&b, "[%s]", big);   /* past the room: grows, formats again */
	CHECK_INT(b.len, 3 + 5002);
	CHECK(b.ptr[3] == '[' && b.ptr[5004] == ']' && b.ptr[5005] == '\0');
	buf_reset(&b);
	buf_addf(&b, "%s", "in the room it has");
	CHECK_STR(b.ptr, "in the room it has");
	buf_release(&b);
	free(big);
}

TEST(buf_addf_over_the_cap_sets_err_and_keeps_what_was_there)
{
	struct buf b = BUF_INIT(16);

	buf_addf(&b, "%s", "twelve bytes");
	CHECK_STR(b.ptr, "twelve bytes");
	buf_addf(&b, "%s", "12345");   /* 17 > 16, though the room would hold it */
	CHECK(b.err);
	CHECK_STR(b.ptr, "twelve bytes");
	buf_addf(&b, "%s", "z");       /* err sticks */
	CHECK_STR(b.ptr, "twelve bytes");
	buf_release(&b);
}

TEST(xasprintf_formats_long_strings_whole)
{
	char *big = xcalloc(70001, 1), *s;

	memset(big, 'y', 70000);
	s = xasprintf("{%s:%d}", big, 42);
	CHECK_INT(strlen(s), 70005);
	CHECK(!strncmp(s + 70000, "y:42}", 5));
	free(s);
	free(big);
}
