/*
 * harness.h -- a minimal unit-test harness: TEST() registers a function at
 * load time, CHECK*() record failures with file and line, and main.c runs
 * every test (or those whose name contains argv[1]) and prints
 * "N passed, N failed".
 */
#ifndef SMRITI_TEST_HARNESS_H
#define SMRITI_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define TEST(name)                                                          \
	static void test_##name(void);                                      \
	__attribute__((constructor)) static void register_##name(void)      \
	{                                                                   \
		test_register(#name, test_##name);                          \
	}                                                                   \
	static void test_##name(void)

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);  \
	} while (0)

#define CHECK_INT(a, b)                                                     \
	do {                                                                \
		long long a_ = (long long)(a), b_ = (long long)(b);         \
		if (a_ != b_)                                               \
			test_fail(__FILE__, __LINE__, "%s == %lld, want %lld", \
				  #a, a_, b_);                              \
	} while (0)

#define CHECK_STR(a, b)                                                     \
	do {                                                                \
		const char *a_ = (a), *b_ = (b);                            \
		if (!a_ || !b_ || strcmp(a_, b_))                           \
			test_fail(__FILE__, __LINE__, "%s == \"%s\", want \"%s\"", \
				  #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} while (0)

#endif
