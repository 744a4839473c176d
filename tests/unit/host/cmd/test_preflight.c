// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/cmd/preflight.c's decisions: synthetic facts, exact text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "host/cmd/preflight.h"

static const char host_clocks[][TSYNC_TRACE_CLOCK_NAME_MAX] = {
	"local", "global", "mono", "x86-tsc",
};

/* Facts of root on a host with tracefs and four clocks, syncing @clock
 * with @source. */
static struct preflight_facts facts(const char *clock, unsigned int source)
{
	return (struct preflight_facts){
		.cmd = "sync", .clock = clock, .source = source,
		.tracefs_dir = "/sys/kernel/tracing", .tracefs = 0, .uid = 0,
		.nclocks = 4, .clocks = host_clocks,
	};
}

/* Root with tracefs: known clocks pass, an unknown one lists the host's. */
static void test_clock_known_unknown(void **state)
{
	struct preflight_facts f = facts("local", TSYNC_STAMP_MARKER);
	char err[512];

	(void)state;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), 0);
	f.clock = "nosuch";
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown trace clock 'nosuch': choose one this host offers "
			    "with -C: local, global, mono, x86-tsc");
	f.record = true;
	f.cmd = "record";
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EINVAL);
}

/* Not root: sync with marker stamps and record are refused with the fix;
 * sync with clock or tsc stamps runs without tracefs. */
static void test_not_root(void **state)
{
	struct preflight_facts f = facts("local", TSYNC_STAMP_MARKER);
	char err[512];

	(void)state;
	f.uid = 65534;
	f.tracefs = -EACCES;
	f.nclocks = -EACCES;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EACCES);
	assert_string_equal(err, "not root (uid 65534): trace clock 'local' is stamped through "
			    "tracefs, and /sys/kernel/tracing is not accessible: run it as root "
			    "(sudo tsync-host sync ...), or sync a clock read without tracefs "
			    "(-C mono, mono_raw, boot, tai or x86-tsc)");
	f.clock = "mono";
	f.source = TSYNC_STAMP_CLOCK;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), 0);
	f.clock = "x86-tsc";
	f.source = TSYNC_STAMP_TSC;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), 0);
	f.record = true;
	f.cmd = "record";
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EACCES);
	assert_string_equal(err, "not root (uid 65534): recording needs tracefs, and "
			    "/sys/kernel/tracing is not accessible: run it as root "
			    "(sudo tsync-host record ...)");
}

/* Root without tracefs access, and tracefs not mounted. */
static void test_root_no_tracefs(void **state)
{
	struct preflight_facts f = facts("local", TSYNC_STAMP_MARKER);
	char err[512];

	(void)state;
	f.tracefs = -EPERM;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EACCES);
	assert_string_equal(err, "tracefs at /sys/kernel/tracing: Operation not permitted, even "
			    "as root: is the kernel locked down, or tracefs mounted read-only?");
	f.tracefs = -ENODEV;
	f.tracefs_dir = NULL;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -ENODEV);
	assert_string_equal(err, "tracefs is not mounted at /sys/kernel/tracing (No such device): "
			    "mount it (mount -t tracefs nodev /sys/kernel/tracing), as root");
}

/* A --stamp that cannot stamp the clock is refused first, even as root. */
static void test_stamp_mismatch(void **state)
{
	struct preflight_facts f = facts("local", TSYNC_STAMP_CLOCK);
	char err[512];

	(void)state;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), 0);	/* not forced */
	f.stamp_forced = true;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--stamp clock cannot stamp trace clock 'local' (only mono, "
			    "mono_raw, boot and tai): leave --stamp out, or use --stamp marker");
	f.clock = "mono";
	f.source = TSYNC_STAMP_TSC;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--stamp tsc cannot stamp trace clock 'mono' (only x86-tsc, "
			    "on x86): leave --stamp out, or use --stamp marker");
	f.source = TSYNC_STAMP_MARKER;
	assert_int_equal(preflight_decide(&f, err, sizeof(err)), 0);
}

/* The guest's SESSION_REPLY list: a clock it lacks is named with its list;
 * an empty list is not checked. */
static void test_guest_clock(void **state)
{
	struct tsync_session_reply r = { .nclocks = 2 };
	const char (*names)[TSYNC_CLOCK_NAME_MAX] =
		(const char (*)[TSYNC_CLOCK_NAME_MAX])r.clocks;
	char err[512];

	(void)state;
	strcpy(r.clocks[0], "local");
	strcpy(r.clocks[1], "global");
	assert_int_equal(preflight_guest_clock(names, r.nclocks, "global", err, sizeof(err)), 0);
	assert_int_equal(preflight_guest_clock(names, r.nclocks, "mono", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "the guest has no trace clock 'mono': choose one both offer "
			    "with -C; the guest offers local, global");
	r.nclocks = 0;
	assert_int_equal(preflight_guest_clock(names, r.nclocks, "mono", err, sizeof(err)), 0);
	/* a count beyond the array is read as the array */
	r.nclocks = 1000;
	assert_int_equal(preflight_guest_clock(names, r.nclocks, "nosuch", err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_known_unknown),
		cmocka_unit_test(test_not_root),
		cmocka_unit_test(test_root_no_tracefs),
		cmocka_unit_test(test_stamp_mismatch),
		cmocka_unit_test(test_guest_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
