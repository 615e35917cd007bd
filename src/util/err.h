/*
 * err.h -- Smriti's one result code and the error message that travels with it.
 *
 * Every fallible function returns an enum smr_rc and fills a caller-owned
 * struct smr_err on failure.  On success the err is left untouched, so calls
 * chain.  Messages follow git's rules: lower case, no full stop, say what
 * failed first and quote the subject.  Transports map codes to exit codes
 * (cli), HTTP statuses (http) and tool errors (mcp); see smr_rc_exit_code().
 * A caller that must tell two failures of one code apart reads err->why,
 * never the message.  Broken invariants are not errors: they are BUG()s.
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
	SMR_EUNAUTH,       /* no valid token (missing, wrong, expired, revoked): exit 6, HTTP 401 */
	SMR_EFORBIDDEN,    /* the caller's role does not allow it: exit 6, HTTP 403 */
};

/* Finer reasons beside the code, for the few callers that act on one; most errors have none. */
enum smr_why {
	SMR_WHY_NONE = 0,
	SMR_WHY_REPLY_NOT_JSON,   /* a provider answered, but not with the structured reply asked for */
};

struct smr_err {
	enum smr_rc code;
	enum smr_why why;
	char msg[512];
};

#define SMR_ERR_INIT { SMR_OK, SMR_WHY_NONE, "" }

/* Fills err (if not NULL) and returns code, so callers can `return smr_errf(...)`. */
enum smr_rc smr_errf(struct smr_err *err, enum smr_rc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* smr_errf() with a reason beside the code. */
enum smr_rc smr_errf_why(struct smr_err *err, enum smr_rc code, enum smr_why why,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Puts the formatted text before err's message ("the provider failed: " +
 * what it said) and sets code; err->why stays.  Returns code.
 */
enum smr_rc smr_err_prefix(struct smr_err *err, enum smr_rc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An invariant of the program broke: says where on stderr and aborts (git's BUG()). */
#define BUG(...) smr_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void smr_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Process exit code for a result: 0 ok, 1 internal, 2 usage/input, 3 not
 * found, 4 conflict, 5 provider, 6 not allowed (no valid token, or a role
 * too low).
 */
int smr_rc_exit_code(enum smr_rc rc);

/* HTTP status for a result. */
int smr_rc_http_status(enum smr_rc rc);

/* Stable machine-readable name ("not_found", "conflict", ...) for JSON error bodies. */
const char *smr_rc_name(enum smr_rc rc);

#endif
