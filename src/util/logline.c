/*
 * logline.c -- Smriti's own lines on standard error, as text or JSON
 * (logline.h).  Each line goes out in one write(2), so that it does not
 * interleave with the access log's thread mid-line.
 */
#include "util/logline.h"
#include "util/sys.h"
#include "util/utf8.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int as_json;

void logline_json(int on)
{
	as_json = on;
}

static void write_line(const char *text)
{
	size_t n = strlen(text);

	while (n) {
		ssize_t w = write(STDERR_FILENO, text, n);

		if (w <= 0)
			return;
		text += w;
		n -= (size_t)w;
	}
}

void logline(const char *level, const char *fmt, ...)
{
	char msg[512], now[32], line[600];
	char *json;
	json_t *o;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!as_json) {
		snprintf(line, sizeof(line), "smriti: %s\n", msg);
		write_line(line);
		return;
	}
	sys_now_iso(now);
	o = json_pack("{s:s, s:s, s:s, s:s}", "time", now, "level", level, "source", "smriti",
		      "message", utf8_valid(msg, strlen(msg)) ? msg : "(a message that is not UTF-8)");
	json = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!json)
		return;
	snprintf(line, sizeof(line), "%s\n", json);
	free(json);
	write_line(line);
}
