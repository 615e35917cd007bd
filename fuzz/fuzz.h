/*
 * fuzz.h -- what the libFuzzer targets in fuzz/ share: a NUL-terminated
 * copy of the input, a property check that aborts (so libFuzzer keeps the
 * input as a crash), and a small deterministic generator for cutting an
 * input into pieces.  Each fuzz/NAME.c is one target with its own
 * LLVMFuzzerTestOneInput; docs/testing.md says how to add one.
 */
#ifndef SMRITI_FUZZ_H
#define SMRITI_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property the target asserts broke: report it and abort (a libFuzzer crash). */
#define FUZZ_CHECK(cond)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, \
				__LINE__, #cond);                               \
			abort();                                                \
		}                                                               \
	} while (0)

/* data as a NUL-terminated string (it may hold NULs before the end); caller free()s. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* xorshift32: the same input always cuts the same way, so a crash replays. */
static inline uint32_t fuzz_next(uint32_t *state)
{
	uint32_t x = *state ? *state : 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

#endif
