// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of common/base/trace_clock.c: synthetic trace_clock texts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "common/base/trace_clock.h"

/* The list keeps the order, strips the brackets and finds the selected. */
static void test_list(void **state)
{
	char names[8][TSYNC_TRACE_CLOCK_NAME_MAX];
	int sel;

	(void)state;
	assert_int_equal(tsync_trace_clock_list("local [global] counter uptime perf mono mono_raw boot tai x86-tsc\n",
						names, 8, &sel), 8);
	assert_string_equal(names[0], "local");
	assert_string_equal(names[1], "global");
	assert_string_equal(names[7], "boot");
	assert_int_equal(sel, 1);
	assert_int_equal(tsync_trace_clock_list("[local]\n", names, 8, &sel), 1);
	assert_string_equal(names[0], "local");
	assert_int_equal(sel, 0);
	/* no selection, blanks of every kind, an over-long word skipped */
	assert_int_equal(tsync_trace_clock_list(" a\tb\n\nthis_word_is_far_too_long_for_a_clock_name c",
						names, 8, &sel), 3);
	assert_int_equal(sel, -1);
	assert_string_equal(names[2], "c");
	assert_int_equal(tsync_trace_clock_list(NULL, names, 8, &sel), 0);
	assert_int_equal(tsync_trace_clock_list("", names, 8, NULL), 0);
	/* "[]" is a word, not a selection */
	assert_int_equal(tsync_trace_clock_list("[] x", names, 8, &sel), 2);
	assert_int_equal(sel, -1);
}

/* The selected clock is copied when there is one and it fits. */
static void test_selected(void **state)
{
	char clk[16];

	(void)state;
	assert_int_equal(tsync_trace_clock_selected("local [mono] x", clk, sizeof(clk)), 0);
	assert_string_equal(clk, "mono");
	assert_int_equal(tsync_trace_clock_selected("[] x", clk, sizeof(clk)), -EINVAL);
	assert_int_equal(tsync_trace_clock_selected("[verylongclockname]", clk, 8), -EINVAL);
	assert_int_equal(tsync_trace_clock_selected("local global", clk, sizeof(clk)), -EINVAL);
	assert_int_equal(tsync_trace_clock_selected(NULL, clk, sizeof(clk)), -EINVAL);
}

/* offers() matches whole names only; the table knows the POSIX clocks. */
static void test_table(void **state)
{
	clockid_t clk = -1;

	(void)state;
	assert_true(tsync_trace_clock_offers("local [global] mono", "global"));
	assert_true(tsync_trace_clock_offers("local [global] mono", "mono"));
	assert_false(tsync_trace_clock_offers("local [global] mono_raw", "mono"));
	assert_false(tsync_trace_clock_offers(NULL, "mono"));
	assert_int_equal(tsync_trace_clock_posix("mono", &clk), 0);
	assert_int_equal(clk, CLOCK_MONOTONIC);
	assert_int_equal(tsync_trace_clock_posix("mono_raw", &clk), 0);
	assert_int_equal(clk, CLOCK_MONOTONIC_RAW);
	assert_int_equal(tsync_trace_clock_posix("boot", &clk), 0);
	assert_int_equal(clk, CLOCK_BOOTTIME);
	assert_int_equal(tsync_trace_clock_posix("tai", &clk), 0);
	assert_int_equal(clk, CLOCK_TAI);
	assert_int_equal(tsync_trace_clock_posix("local", &clk), -EINVAL);
	assert_int_equal(tsync_trace_clock_posix(NULL, &clk), -EINVAL);
	assert_true(tsync_trace_clock_is_tsc("x86-tsc"));
	assert_false(tsync_trace_clock_is_tsc("mono"));
	/* names -C takes: 1..31 bytes, no blank or '/' */
	assert_true(tsync_trace_clock_name_ok("x86-tsc"));
	assert_true(tsync_trace_clock_name_ok("0123456789012345678901234567890"));
	assert_false(tsync_trace_clock_name_ok("01234567890123456789012345678901"));
	assert_false(tsync_trace_clock_name_ok(""));
	assert_false(tsync_trace_clock_name_ok("mo no"));
	assert_false(tsync_trace_clock_name_ok("mono\t"));
	assert_false(tsync_trace_clock_name_ok("../mono"));
}

/* The clocks user space reads without tracefs: each one the clock source
 * can stamp, x86-tsc only when asked, and never past @max. */
static void test_user_list(void **state)
{
	char names[8][TSYNC_TRACE_CLOCK_NAME_MAX];
	clockid_t clk;
	int n;

	(void)state;
	n = tsync_trace_clock_user_list(names, 8, false);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "mono");
	assert_string_equal(names[3], "tai");
	for (int i = 0; i < n; i++)
		assert_int_equal(tsync_trace_clock_posix(names[i], &clk), 0);
	assert_int_equal(tsync_trace_clock_user_list(names, 8, true), 5);
	assert_string_equal(names[4], "x86-tsc");
	memset(names, 0, sizeof(names));
	assert_int_equal(tsync_trace_clock_user_list(names, 2, true), 2);
	assert_string_equal(names[1], "mono_raw");
	assert_string_equal(names[2], "");
	assert_int_equal(tsync_trace_clock_user_list(names, 0, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_selected),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_user_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
