/*
 * main.c -- runs the registered unit tests (see harness.h).
 */
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

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

/* Seconds of wall clock, or of CPU (this process's threads and the children
 * it waited for: servers a test started count for it). */
static double seconds(int cpu)
{
	struct rusage self, kids;
	struct timespec ts;

	if (!cpu) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return ts.tv_sec + ts.tv_nsec / 1e9;
	}
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
	       kids.ru_stime.tv_sec + (self.ru_utime.tv_usec + self.ru_stime.tv_usec +
	       kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
}

/* SMRITI_UNIT_TIMES=1: each test's wall and CPU seconds on stderr, to find
 * where the suite's time goes (docs/testing.md). */
static void report_time(const char *name, double wall0, double cpu0)
{
	if (getenv("SMRITI_UNIT_TIMES"))
		fprintf(stderr, "time %s %.2f s wall %.2f s cpu\n", name,
			seconds(0) - wall0, seconds(1) - cpu0);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		double wall0 = seconds(0), cpu0 = seconds(1);

		current_failed = 0;
		tests[i].fn();
		report_time(tests[i].name, wall0, cpu0);
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
