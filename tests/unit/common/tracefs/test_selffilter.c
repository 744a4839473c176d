// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tests of the filters that leave our threads out of the switches and
 * wakeups naming them (common/tracefs/selffilter.c): known answers for
 * single ids, runs merged into ranges (unsorted, repeated ids), a user's
 * filter joined with &&, refused input, and the exact fit: an expression
 * of len - 1 bytes fits, one byte more is -E2BIG.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/tracefs/selffilter.h"

static const char *const sw[] = { "prev_pid", "next_pid" };
static const char *const wk[] = { "pid" };

static void test_single(void **state)
{
	int t[] = { 42 };
	char buf[256];

	(void)state;
	assert_int_equal(tsync_self_filter_expr(t, 1, wk, 1, NULL, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "pid!=42");
	assert_int_equal(tsync_self_filter_expr(t, 1, sw, 2, "", buf, sizeof(buf)),
			 (int)strlen("prev_pid!=42&&next_pid!=42"));
	assert_string_equal(buf, "prev_pid!=42&&next_pid!=42");
}

static void test_ranges(void **state)
{
	int t[] = { 10, 7, 9, 9, 12 };
	char buf[256];

	(void)state;
	assert_true(tsync_self_filter_expr(t, 5, sw, 2, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "prev_pid!=7&&(prev_pid<9||prev_pid>10)&&prev_pid!=12&&"
			    "next_pid!=7&&(next_pid<9||next_pid>10)&&next_pid!=12");
}

static void test_user(void **state)
{
	int t[] = { 5, 6 };
	char buf[256];

	(void)state;
	assert_true(tsync_self_filter_expr(t, 2, wk, 1, "prio<100", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "(prio<100)&&((pid<5||pid>6))");
}

static void test_refused(void **state)
{
	int t[] = { 0, 3 }, one[] = { 3 };
	char buf[64];

	(void)state;
	assert_int_equal(tsync_self_filter_expr(t, 2, wk, 1, NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tsync_self_filter_expr(one, 0, wk, 1, NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tsync_self_filter_expr(one, 1, wk, 0, NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tsync_self_filter_expr(one, 1, wk, 1, NULL, buf, 0), -EINVAL);
}

static void test_fit(void **state)
{
	int t[] = { 1234 };
	char buf[16];

	(void)state;
	/* "pid!=1234": 9 bytes and the terminator */
	assert_int_equal(tsync_self_filter_expr(t, 1, wk, 1, NULL, buf, 10), 9);
	assert_string_equal(buf, "pid!=1234");
	assert_int_equal(tsync_self_filter_expr(t, 1, wk, 1, NULL, buf, 9), -E2BIG);
	assert_int_equal(tsync_self_filter_expr(t, 1, wk, 1, "x", buf, sizeof(buf)), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
