// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of guest_stop_split() (host/guest/guest.c): the --verbose line
 * of where a guest's stop went, from known moments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "host/guest/guest.h"

#define MS 1000000LL

/* Every moment reached: each span and the total. */
static void test_full(void **state)
{
	const int64_t t[GUEST_STOP_N] = { 1000 * MS, 1003 * MS + 500000, 1005 * MS,
					  1014 * MS + 250000 };
	char buf[256];

	(void)state;
	guest_stop_split(t, buf, sizeof(buf));
	assert_string_equal(buf, "agent's stop 3.5, streams' ends 1.5, final metadata 9.2; "
			    "total 14.2 ms");
}

/* A moment not reached (the agent's stop failed, no metadata) is left
 * out; the next span starts at the last moment reached. */
static void test_missing(void **state)
{
	const int64_t t[GUEST_STOP_N] = { 1000 * MS, 0, 1030 * MS, 0 };
	const int64_t none[GUEST_STOP_N] = { 0, 0, 0, 0 };
	const int64_t begun[GUEST_STOP_N] = { 5 * MS, 0, 0, 0 };
	char buf[256];

	(void)state;
	guest_stop_split(t, buf, sizeof(buf));
	assert_string_equal(buf, "streams' ends 30.0; total 30.0 ms");
	guest_stop_split(none, buf, sizeof(buf));
	assert_string_equal(buf, "");
	guest_stop_split(begun, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* A short buffer is cut, always terminated; a zero length is not written. */
static void test_short(void **state)
{
	const int64_t t[GUEST_STOP_N] = { 1000 * MS, 1003 * MS, 1005 * MS, 1014 * MS };
	char buf[20], one = 'x';

	(void)state;
	guest_stop_split(t, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "agent's stop 3.0, s", sizeof(buf) - 1);
	guest_stop_split(t, &one, 0);
	assert_int_equal(one, 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
