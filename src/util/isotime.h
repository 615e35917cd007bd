/*
 * isotime.h -- the one timestamp form Smriti writes, "2026-12-06T08:05:31.123456Z"
 * (UTC, microseconds), and reading its date and time back.  Always UTC
 * (timegm, gmtime_r), never the local zone, so a server's TZ changes nothing.
 */
#ifndef SMRITI_ISOTIME_H
#define SMRITI_ISOTIME_H

/* Room for a formatted timestamp and its NUL. */
#define ISO_TIME_SIZE 32

/*
 * Seconds since the epoch of the "YYYY-MM-DDTHH:MM:SS" that iso starts
 * with (what follows, fractions and zone, is not read: Smriti writes UTC);
 * -1 if iso is NULL or does not start so.
 */
long long iso_seconds(const char *iso);

/* The days of month (1-12) in year, by the Gregorian calendar's leap years. */
int iso_days_in_month(int year, int month);

/* Seconds since the epoch of a UTC date and time (month 1-12), as timegm counts them. */
long long iso_utc_seconds(int year, int month, int day, int hour, int minute, int second);

/* Writes seconds since the epoch plus micros microseconds as Smriti's timestamp. */
void iso_format(long long seconds, long micros, char out[ISO_TIME_SIZE]);

#endif
