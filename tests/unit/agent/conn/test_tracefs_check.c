// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of agent/conn/tracefs_check.c: the verdict on tracefs from what
 * the check saw (pure), each case with its exact reason and fix; and the
 * check itself on this machine, whose tracefs the tests use.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/conn/tracefs_check.h"
#include "proto/proto.h"

#define DIR "/sys/kernel/tracing"
#define MOUNT_FIX "mount -t tracefs nodev /sys/kernel/tracing"

/* Judges @f and checks the verdict against @code, @why and @fix. */
static void judged(const struct agent_tracefs_facts *f, uint32_t code, const char *why,
		   const char *fix)
{
	struct agent_tracefs t;

	memset(&t, 0x55, sizeof(t));
	agent_tracefs_judge(f, &t);
	assert_false(t.usable);
	assert_int_equal(t.code, code);
	assert_string_equal(t.why, why);
	assert_string_equal(t.fix, fix);
}

/* Found, tracefs, readable and writable: usable, whoever runs it. */
static void test_usable(void **state)
{
	struct agent_tracefs_facts f = { .dir = DIR, .is_tracefs = true, .euid = 0 };
	struct agent_tracefs t;

	(void)state;
	memset(&t, 0x55, sizeof(t));
	agent_tracefs_judge(&f, &t);
	assert_true(t.usable);
	assert_string_equal(t.why, "");
	f.euid = 1000;	/* a tracing group may grant it */
	agent_tracefs_judge(&f, &t);
	assert_true(t.usable);
}

/* Not mounted, and libtracefs could not mount it (or did not say why). */
static void test_not_mounted(void **state)
{
	struct agent_tracefs_facts f = { .find_err = EPERM };

	(void)state;
	judged(&f, TSYNC_ERR_UNSUPPORTED,
	       "tracefs is not mounted at /sys/kernel/tracing and mounting it failed "
	       "(Operation not permitted)", MOUNT_FIX);
	f.find_err = 0;
	judged(&f, TSYNC_ERR_UNSUPPORTED, "tracefs is not mounted at /sys/kernel/tracing",
	       MOUNT_FIX);
}

/* Something else mounted over it (an empty tmpfs). */
static void test_covered(void **state)
{
	struct agent_tracefs_facts f = { .dir = DIR, .is_tracefs = false, .read_err = ENOENT };

	(void)state;
	judged(&f, TSYNC_ERR_UNSUPPORTED,
	       "tracefs is not mounted at /sys/kernel/tracing (another file system is)",
	       MOUNT_FIX);
}

/* Not root: no read, or read but no instances. */
static void test_not_root(void **state)
{
	struct agent_tracefs_facts f = { .dir = DIR, .is_tracefs = true, .read_err = EACCES,
					 .euid = 65534 };

	(void)state;
	judged(&f, TSYNC_ERR_PERMISSION,
	       "tracefs at /sys/kernel/tracing is not accessible to uid 65534, only to root "
	       "(Permission denied)", "run tsync-agent as root");
	f.read_err = 0;
	f.write_err = EACCES;
	judged(&f, TSYNC_ERR_PERMISSION,
	       "tracefs at /sys/kernel/tracing is not accessible to uid 65534, only to root "
	       "(Permission denied)", "run tsync-agent as root");
}

/* Root and still refused: lockdown or a security module. */
static void test_locked_down(void **state)
{
	struct agent_tracefs_facts f = { .dir = DIR, .is_tracefs = true, .read_err = EPERM };

	(void)state;
	judged(&f, TSYNC_ERR_PERMISSION,
	       "tracefs at /sys/kernel/tracing refuses access although the agent runs as "
	       "root (Operation not permitted)",
	       "check the kernel's lockdown mode (/sys/kernel/security/lockdown) and the "
	       "security module's policy");
}

/* Any other failure names the step and the errno. */
static void test_other(void **state)
{
	struct agent_tracefs_facts f = { .dir = DIR, .is_tracefs = true, .read_err = EIO };

	(void)state;
	judged(&f, TSYNC_ERR_UNSUPPORTED,
	       "tracefs at /sys/kernel/tracing cannot be used: reading trace_clock "
	       "(Input/output error)", "check that the kernel has tracing (CONFIG_FTRACE)");
	f.read_err = 0;
	f.write_err = EROFS;
	f.euid = 1000;
	judged(&f, TSYNC_ERR_UNSUPPORTED,
	       "tracefs at /sys/kernel/tracing cannot be used: writing to instances/ "
	       "(Read-only file system)", "check that the kernel has tracing (CONFIG_FTRACE)");
}

/* The real check: as root with tracefs mounted (as the tests run), usable;
 * the clocks that work without it are listed either way. */
static void test_check_here(void **state)
{
	struct agent_tracefs t;

	(void)state;
	agent_tracefs_check(&t);
	assert_true(strncmp(t.clocks, "mono, mono_raw, boot, tai", 25) == 0);
	if (geteuid() != 0 || access(DIR "/trace_marker_raw", W_OK)) {
		assert_false(t.usable);
		assert_true(t.why[0] && t.fix[0]);
		skip();
	}
	assert_true(t.usable);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usable),
		cmocka_unit_test(test_not_mounted),
		cmocka_unit_test(test_covered),
		cmocka_unit_test(test_not_root),
		cmocka_unit_test(test_locked_down),
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_check_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
