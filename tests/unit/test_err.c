/*
 * test_err.c -- errors carry a code, a reason beside it and a message that
 * a prefix can extend.
 */
#include "harness.h"
#include "util/err.h"

#include <string.h>

TEST(err_reason_survives_a_prefix_and_plain_errors_reset_it)
{
	struct smr_err err = SMR_ERR_INIT;

	CHECK_INT(smr_errf_why(&err, SMR_EPROVIDER, SMR_WHY_REPLY_NOT_JSON,
			       "%s: structured reply is not valid JSON", "openai"), SMR_EPROVIDER);
	CHECK_INT(smr_err_prefix(&err, SMR_ETIMEOUT, "the %s failed: ", "provider"), SMR_ETIMEOUT);
	CHECK_STR(err.msg, "the provider failed: openai: structured reply is not valid JSON");
	CHECK_INT(err.code, SMR_ETIMEOUT);
	CHECK_INT(err.why, SMR_WHY_REPLY_NOT_JSON);
	smr_errf(&err, SMR_ENOTFOUND, "no space '%s'", "x");
	CHECK_INT(err.why, SMR_WHY_NONE);
	CHECK_INT(smr_err_prefix(NULL, SMR_EINVAL, "ignored"), SMR_EINVAL);
}

TEST(err_prefix_keeps_the_message_within_its_buffer)
{
	struct smr_err err = SMR_ERR_INIT;
	char big[600];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	smr_errf(&err, SMR_EINTERNAL, "%s", big);
	smr_err_prefix(&err, SMR_EINTERNAL, "while reading: ");
	CHECK_INT(strlen(err.msg), sizeof(err.msg) - 1);
	CHECK(!strncmp(err.msg, "while reading: xxx", 18));
}
