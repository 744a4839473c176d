// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of agent/rec/evsel.c's agent_recopt_words(): the record options
 * a host sends its agent, parsed the same way for both protocols (here
 * as trace-cmd 3.1.6 builds a TRACE_REQ's argv: "-C CLOCK" first). What
 * the agent applies is every instance option of trace-cmd record; the
 * whole recording's options and unknown ones are refused with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/rec/evsel.h"
#include "common/cli/recopt.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Expects @argv to be refused with a reason containing @what. */
static void refused(int argc, const char *const *argv, const char *what)
{
	struct tsync_recopt o;
	char err[300] = "";

	tsync_recopt_init(&o);
	assert_int_equal(agent_recopt_words(argc, argv, &o, err, sizeof(err)), -EINVAL);
	if (!strstr(err, what))
		fail_msg("reason '%s' does not mention '%s'", err, what);
	tsync_recopt_free(&o);
}

static void test_applied(void **state)
{
	static const char *const argv[] = {
		"-C", "mono", "-d", "-k", "--no-filter", "-e", "sched:sched_switch",
		"-f", "prev_pid > 0", "-e", "irq", "-b", "2048", "--name", "g",
		"-p", "function", "-l", "schedule", "-n", "x*", "-g", "y",
		"--max-graph-depth", "3", "-P", "1,2", "-c", "-O", "noirq-info", "-T",
		"-M", "3", "-i", "-v", "-e", "sched:sched_wakeup", "--cmdlines-size", "64",
		"--file-version", "6", "--compression", "none", "--ts-offset", "-0x10",
	};
	struct tsync_recopt o;
	char err[300];

	(void)state;
	tsync_recopt_init(&o);
	if (agent_recopt_words(N(argv), argv, &o, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(o.clock, "mono");
	assert_int_equal(o.inst.buffer_kb, 2048);
	assert_int_equal(o.nevents, 3);
	assert_string_equal(o.events[0].name, "sched:sched_switch");
	assert_string_equal(o.events[0].filter, "(prev_pid > 0)");	/* as trace-cmd joins them */
	assert_string_equal(o.events[1].name, "irq");
	assert_null(o.events[1].filter);
	assert_true(o.events[2].negate);
	assert_string_equal(o.inst.tracer, "function");
	assert_int_equal(o.inst.funcs.n, 1);
	assert_int_equal(o.inst.notrace_funcs.n, 1);
	assert_int_equal(o.inst.graph_funcs.n, 1);
	assert_int_equal(o.inst.max_graph_depth, 3);
	assert_int_equal(o.inst.npids, 2);
	assert_true(o.inst.follow_children);
	assert_int_equal(o.inst.options.n, 2);		/* -O and -T */
	assert_string_equal(o.inst.cpumask, "3");
	assert_true(o.ignore_missing);
	assert_true(o.no_filter);
	assert_int_equal(o.inst.cmdlines_size, 64);
	assert_int_equal(o.file_version, 6);	/* the metadata a trace-cmd host gets */
	assert_string_equal(o.compression, "none");
	assert_string_equal(o.ts_offset, "-0x10");	/* its OFFSET option */
	tsync_recopt_free(&o);
}

/* tsync's own TRACE_START: the agent writes no file, so a format or an
 * OFFSET in its option words is refused rather than ignored. */
static void test_trace_args_format(void **state)
{
	static char *words[] = { "-e", "sched", "--file-version", "6" };
	struct tsync_trace_start rq = { .flags = TSYNC_TRACE_FL_ARGS, .nargs = 4,
					.args = words }, out;
	static char *offset[] = { "-e", "sched", "--ts-offset", "5" };
	struct tsync_trace_start rq2 = { .flags = TSYNC_TRACE_FL_ARGS, .nargs = 4,
					 .args = offset };
	struct tsync_recopt o;
	char err[300] = "";

	(void)state;
	tsync_recopt_init(&o);
	assert_int_equal(agent_trace_args(&rq, &o, &out, err, sizeof(err)),
			 TSYNC_ERR_BAD_REQUEST);
	assert_non_null(strstr(err, "--file-version"));
	tsync_recopt_free(&o);
	tsync_recopt_init(&o);
	assert_int_equal(agent_trace_args(&rq2, &o, &out, err, sizeof(err)),
			 TSYNC_ERR_BAD_REQUEST);
	assert_non_null(strstr(err, "--ts-offset"));
	tsync_recopt_free(&o);
}

static void test_refused(void **state)
{
	static const char *const output[] = { "-e", "sched", "-o", "x.dat" };
	static const char *const unknown[] = { "-e", "sched", "--bogus" };
	static const char *const operand[] = { "-e", "sched", "sleep", "1" };
	static const char *const sleep_us[] = { "-e", "sched", "-s", "1000" };
	static const char *const prio[] = { "-e", "sched", "-r", "10" };
	static const char *const guest[] = { "-e", "sched", "-A", "1" };

	(void)state;
	refused(N(output), output, "-o");
	refused(N(unknown), unknown, "bogus");
	refused(N(operand), operand, "sleep");
	refused(N(sleep_us), sleep_us, "whole recording");
	refused(N(prio), prio, "-r");
	refused(N(guest), guest, "-A");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applied),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_trace_args_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
