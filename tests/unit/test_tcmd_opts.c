// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of agent/tcmd_opts.c: the record options a trace-cmd host
 * sends (as trace-cmd 3.1.6 builds them: "-C CLOCK" first), what the agent
 * applies, and the refusal of everything else with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/tcmd_opts.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Expects @argv to be refused with a reason containing @what. */
static void refused(int argc, const char *const *argv, const char *what)
{
	struct tcmd_rec r;
	char err[300] = "";

	assert_int_equal(tcmd_opts_parse(argc, argv, &r, err, sizeof(err)), -EINVAL);
	if (!strstr(err, what))
		fail_msg("reason '%s' does not mention '%s'", err, what);
	tcmd_opts_free(&r);
}

static void test_applied(void **state)
{
	static const char *const argv[] = {
		"-C", "mono", "-d", "-k", "--no-filter", "-e", "sched:sched_switch",
		"-f", "prev_pid > 0", "-e", "irq", "-b", "2048", "--name", "g",
	};
	struct tcmd_rec r;
	char err[300];

	(void)state;
	if (tcmd_opts_parse(N(argv), argv, &r, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(r.clock, "mono");
	assert_int_equal(r.buffer_kb, 2048);
	assert_int_equal(r.nevents, 2);
	assert_string_equal(r.events[0].name, "sched:sched_switch");
	assert_string_equal(r.events[0].filter, "(prev_pid > 0)");	/* as trace-cmd joins them */
	assert_string_equal(r.events[1].name, "irq");
	assert_null(r.events[1].filter);
	tcmd_opts_free(&r);
}

static void test_refused(void **state)
{
	static const char *const tracer[] = { "-e", "sched", "-p", "function" };
	static const char *const negate[] = { "-v", "-e", "sched" };
	static const char *const none[] = { "-C", "local", "-d" };
	static const char *const output[] = { "-e", "sched", "-o", "x.dat" };
	static const char *const unknown[] = { "-e", "sched", "--bogus" };
	static const char *const operand[] = { "-e", "sched", "sleep", "1" };
	static const char *const pids[] = { "-e", "sched", "-P", "1" };
	static const char *const opt[] = { "-e", "sched", "-O", "stacktrace" };
	static const char *const sleep_us[] = { "-e", "sched", "-s", "1000" };

	(void)state;
	refused(N(tracer), tracer, "-p (tracers) is not supported");
	refused(N(negate), negate, "-v");
	refused(N(none), none, "no events to record");
	refused(N(output), output, "-o");
	refused(N(unknown), unknown, "bogus");
	refused(N(operand), operand, "sleep");
	refused(N(pids), pids, "-P");
	refused(N(opt), opt, "-O");
	refused(N(sleep_us), sleep_us, "whole recording");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applied),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
