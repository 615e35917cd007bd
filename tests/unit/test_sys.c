/*
 * test_sys.c -- running a program (util/sys.h): what it prints comes back,
 * over its cap is SMR_ETOOBIG, a failing exit is SMR_EINTERNAL, and the
 * env entries set and remove variables of the child's environment only.
 */
#include "harness.h"

#include "util/sys.h"

#include <stdlib.h>

TEST(sys_run_read_sets_and_removes_variables)
{
	const char *argv[] = { "sh", "-c", "printf '%s|%s' \"$SMRITI_T_A\" \"${SMRITI_T_B-unset}\"",
			       NULL };
	const char *env[] = { "SMRITI_T_A=new", "SMRITI_T_B", NULL };
	struct smr_err err = SMR_ERR_INIT;
	struct buf out = BUF_INIT(0);

	setenv("SMRITI_T_A", "old", 1);
	setenv("SMRITI_T_B", "here", 1);
	CHECK_INT(sys_run_read(argv, env, &out, &err), SMR_OK);
	CHECK_STR(out.ptr, "new|unset");
	CHECK_STR(getenv("SMRITI_T_B"), "here");   /* ours is as it was */
	buf_release(&out);
	CHECK_INT(sys_run_read(argv, NULL, &out, &err), SMR_OK);
	CHECK_STR(out.ptr, "old|here");
	buf_release(&out);
	unsetenv("SMRITI_T_A");
	unsetenv("SMRITI_T_B");
}

TEST(sys_run_read_refuses_past_its_cap_and_a_failed_exit)
{
	const char *big[] = { "sh", "-c", "head -c 100000 /dev/zero", NULL };
	const char *bad[] = { "sh", "-c", "exit 3", NULL };
	const char *none[] = { "smriti-no-such-program", NULL };
	struct smr_err err = SMR_ERR_INIT;
	struct buf out = BUF_INIT(16);

	CHECK_INT(sys_run_read(big, NULL, &out, &err), SMR_ETOOBIG);
	buf_release(&out);
	CHECK_INT(sys_run_read(bad, NULL, &out, &err), SMR_EINTERNAL);
	CHECK(strstr(err.msg, "exit status 3") != NULL);
	CHECK_INT(sys_run_read(none, NULL, &out, &err), SMR_ENOTFOUND);
	buf_release(&out);
}
