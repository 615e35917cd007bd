/*
 * test_text_forms.c -- the small text forms every layer shares: lower-case
 * hex (util/hex.h) and Smriti's UTC timestamps (util/isotime.h), read back
 * to the second they were written from, whatever the process's TZ.
 */
#include "harness.h"

#include "util/hex.h"
#include "util/isotime.h"
#include "util/sys.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

TEST(hex_encode_writes_lower_case_and_a_nul)
{
	const uint8_t b[] = { 0x00, 0x0f, 0xa5, 0xff };
	char out[9], mid[12] = "xxxxxxxxxxx";

	memset(out, '#', sizeof(out));
	hex_encode(b, sizeof(b), out);
	CHECK_STR(out, "000fa5ff");
	hex_digits(b, 2, mid + 1);
	CHECK_STR(mid, "x000fxxxxxx");      /* no NUL: the text around stays */
	CHECK_INT((int)hex_span("00ffzz"), 4);
	CHECK_INT((int)hex_span("ABCD"), 0);  /* upper case is not Smriti's spelling */
}

TEST(hex_decode_reads_back_what_hex_encode_wrote_and_nothing_else)
{
	const uint8_t b[] = { 0x00, 0x0f, 0xa5, 0xff };
	uint8_t got[4];
	char text[9];

	hex_encode(b, sizeof(b), text);
	CHECK_INT(hex_decode(text, sizeof(b), got), 0);
	CHECK(!memcmp(got, b, sizeof(b)));
	CHECK_INT(hex_decode("0f", 1, got), 0);
	CHECK_INT(got[0], 0x0f);
	CHECK_INT(hex_decode("0F", 1, got), -1);   /* upper case is not Smriti's spelling */
	CHECK_INT(hex_decode("0g", 1, got), -1);
	CHECK_INT(hex_decode("0", 1, got), -1);    /* the NUL is no digit */
}

TEST(isotime_round_trips_in_utc_whatever_tz)
{
	char out[ISO_TIME_SIZE], now[ISO_TIME_SIZE];
	const char *tz = getenv("TZ");
	char *saved = tz ? strdup(tz) : NULL;

	setenv("TZ", "IST-5:30", 1);   /* POSIX form: no tzdata needed */
	tzset();
	iso_format(0, 0, out);
	CHECK_STR(out, "1970-01-01T00:00:00.000000Z");
	iso_format(1796544331LL, 123456, out);
	CHECK_STR(out, "2026-12-06T08:05:31.123456Z");
	CHECK(iso_seconds(out) == 1796544331LL);
	CHECK(iso_seconds("2026-12-06T08:05:31Z") == 1796544331LL);
	sys_now_iso(now);
	CHECK(iso_seconds(now) > 1796544331LL - 86400 * 365);
	CHECK(iso_seconds(NULL) == -1);
	CHECK(iso_seconds("yesterday") == -1);
	CHECK(iso_seconds("2026-12-06") == -1);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
}
