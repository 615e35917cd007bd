/*
 * err.h -- Smriti's one result code and the error message that travels with it.
 *
 * Every fallible function returns an enum smr_rc and fills a caller-owned
 * struct smr_err on failure.  On success the err is left untouched, so calls
 * chain.  Messages follow git's rules: lower case, no full stop, say what
 * failed first and quote the subject.  Transports map codes to exit codes
 * (cli), HTTP statuses (http) and tool errors (mcp); see smr_rc_exit_code().
 */
#ifndef SMRITI_ERR_H
#define SMRITI_ERR_H

#include <stdarg.h>

enum smr_rc {
	SMR_OK = 0,
	SMR_EINTERNAL,     /* a bug or an I/O failure: exit 1, HTTP 500 */
	SMR_EUSAGE,        /* bad command line: exit 2, HTTP 400 */
	SMR_EINVAL,        /* malformed input (bad JSON, bad UTF-8): exit 2, HTTP 400 */
	SMR_EUNPROC,       /* well-formed but invalid (empty checkpoint, bad seq): exit 2, HTTP 422 */
	SMR_ENOTFOUND,     /* unknown Space, Checkpoint, session: exit 3, HTTP 404 */
	SMR_ECONFLICT,     /* stale parent, name taken: exit 4, HTTP 409 */
	SMR_ETOOBIG,       /* input over a hard cap: exit 2, HTTP 413 */
	SMR_EPROVIDER,     /* the LLM provider failed: exit 5, HTTP 502 */
	SMR_ETIMEOUT,      /* the LLM provider timed out: exit 5, HTTP 504 */
	SMR_EUNAVAIL,      /* the store is unreachable right now: exit 1, HTTP 503 */
};

struct smr_err {
	enum smr_rc code;
	char msg[512];
};

#define SMR_ERR_INIT { SMR_OK, "" }

/* Fills err (if not NULL) and returns code, so callers can `return smr_errf(...)`. */
enum smr_rc smr_errf(struct smr_err *err, enum smr_rc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Process exit code for a result: 0 ok, 1 internal, 2 usage/input, 3 not found, 4 conflict, 5 provider. */
int smr_rc_exit_code(enum smr_rc rc);

/* HTTP status for a result. */
int smr_rc_http_status(enum smr_rc rc);

/* Stable machine-readable name ("not_found", "conflict", ...) for JSON error bodies. */
const char *smr_rc_name(enum smr_rc rc);

#endif
