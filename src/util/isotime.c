/*
 * isotime.c -- Smriti's timestamps (see isotime.h).
 */
#include "util/isotime.h"

#include <stdio.h>
#include <time.h>

int iso_days_in_month(int year, int month)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return days[month - 1] + (month == 2 && leap);
}

long long iso_utc_seconds(int year, int month, int day, int hour, int minute, int second)
{
	struct tm tm = { 0 };

	tm.tm_year = year - 1900;
	tm.tm_mon = month - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = minute;
	tm.tm_sec = second;
	return (long long)timegm(&tm);
}

long long iso_seconds(const char *iso)
{
	int y, mo, d, h, mi, s;

	if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6)
		return -1;
	return iso_utc_seconds(y, mo, d, h, mi, s);
}

void iso_format(long long seconds, long micros, char out[ISO_TIME_SIZE])
{
	time_t t = (time_t)seconds;
	struct tm tm;
	char date[24];

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, ISO_TIME_SIZE, "%.19s.%06ldZ", date, micros);
}
