/* digest64.c -- the 64-bit id of bytes (digest64.h). */
#include "util/digest64.h"

#include <nettle/sha2.h>

int64_t digest64(const void *p, size_t n)
{
	uint8_t d[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;
	uint64_t x = 0;

	sha256_init(&ctx);
	sha256_update(&ctx, n, p);
	sha256_digest(&ctx, sizeof(d), d);
	for (int b = 0; b < 8; b++)
		x = x << 8 | d[b];
	return (int64_t)x;
}
