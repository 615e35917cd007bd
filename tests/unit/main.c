/*
 * main.c -- runs the registered unit tests (see harness.h).
 */
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>

#define MAX_TESTS 1024

static struct {
	const char *name;
	test_fn fn;
} tests[MAX_TESTS];
static int ntests, current_failed;

void test_register(const char *name, test_fn fn)
{
	if (ntests == MAX_TESTS)
		abort();
	tests[ntests].name = name;
	tests[ntests++].fn = fn;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	current_failed = 1;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		current_failed = 0;
		tests[i].fn();
		if (current_failed) {
			fprintf(stderr, "FAIL %s\n", tests[i].name);
			failed++;
		} else {
			passed++;
		}
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
