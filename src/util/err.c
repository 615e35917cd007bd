/*
 * err.c -- formatting of errors and the mapping of result codes onto the
 * conventions of each transport (exit codes, HTTP statuses, JSON names).
 */
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 4, 0)))
static enum smr_rc verrf(struct smr_err *err, enum smr_rc code, enum smr_why why,
			 const char *fmt, va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->why = why;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return code;
}

enum smr_rc smr_errf(struct smr_err *err, enum smr_rc code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrf(err, code, SMR_WHY_NONE, fmt, ap);
	va_end(ap);
	return code;
}

enum smr_rc smr_errf_why(struct smr_err *err, enum smr_rc code, enum smr_why why,
			 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrf(err, code, why, fmt, ap);
	va_end(ap);
	return code;
}

enum smr_rc smr_err_prefix(struct smr_err *err, enum smr_rc code, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;
	int n;

	if (!err)
		return code;
	memcpy(msg, err->msg, sizeof(msg));
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, "%s", msg);
	err->code = code;
	return code;
}

void smr_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "smriti: BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

int smr_rc_exit_code(enum smr_rc rc)
{
	switch (rc) {
	case SMR_OK:
		return 0;
	case SMR_EUSAGE:
	case SMR_EINVAL:
	case SMR_EUNPROC:
	case SMR_ETOOBIG:
		return 2;
	case SMR_ENOTFOUND:
		return 3;
	case SMR_ECONFLICT:
		return 4;
	case SMR_EPROVIDER:
	case SMR_ETIMEOUT:
		return 5;
	case SMR_EUNAUTH:
	case SMR_EFORBIDDEN:
		return 6;
	case SMR_EINTERNAL:
	case SMR_EUNAVAIL:
		break;
	}
	return 1;
}

int smr_rc_http_status(enum smr_rc rc)
{
	switch (rc) {
	case SMR_OK:
		return 200;
	case SMR_EUSAGE:
	case SMR_EINVAL:
		return 400;
	case SMR_EUNPROC:
		return 422;
	case SMR_ENOTFOUND:
		return 404;
	case SMR_ECONFLICT:
		return 409;
	case SMR_ETOOBIG:
		return 413;
	case SMR_EPROVIDER:
		return 502;
	case SMR_ETIMEOUT:
		return 504;
	case SMR_EUNAVAIL:
		return 503;
	case SMR_EUNAUTH:
		return 401;
	case SMR_EFORBIDDEN:
		return 403;
	case SMR_EINTERNAL:
		break;
	}
	return 500;
}

const char *smr_rc_name(enum smr_rc rc)
{
	switch (rc) {
	case SMR_OK:
		return "ok";
	case SMR_EUSAGE:
		return "usage";
	case SMR_EINVAL:
		return "invalid_input";
	case SMR_EUNPROC:
		return "unprocessable";
	case SMR_ENOTFOUND:
		return "not_found";
	case SMR_ECONFLICT:
		return "conflict";
	case SMR_ETOOBIG:
		return "too_large";
	case SMR_EPROVIDER:
		return "provider_error";
	case SMR_ETIMEOUT:
		return "provider_timeout";
	case SMR_EUNAVAIL:
		return "unavailable";
	case SMR_EUNAUTH:
		return "unauthorized";
	case SMR_EFORBIDDEN:
		return "forbidden";
	case SMR_EINTERNAL:
		break;
	}
	return "internal";
}
