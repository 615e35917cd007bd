/*
 * logline.h -- a line of Smriti's own on standard error (a warning of the
 * provider settings, a draft job that could not be recorded), as text or,
 * once `smriti serve --log-format json` asked for it, as a JSON object
 * like every other line that server writes (issue 25: a log collector
 * reading JSON must never be handed text).
 *
 * The format is the process's, set once at start-up before any thread
 * runs, the way stderr's own buffering is: it changes how a line looks,
 * never what the program does.
 */
#ifndef SMRITI_LOGLINE_H
#define SMRITI_LOGLINE_H

/* From now on, lines are JSON objects (call before starting threads). */
void logline_json(int on);

/* One line: "smriti: MESSAGE", or {"time","level","source":"smriti","message"}. */
void logline(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
