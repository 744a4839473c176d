// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `chronyc -c tracking`'s line (common/clock/chrony_parse.c): lines as
 * chronyc 4.3 prints them, the bound made of them, and every field that
 * does not parse.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/clock/chrony_parse.h"

static void test_synced(void **state)
{
	struct tsync_clock_state s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(chrony_parse_tracking(
		"C0A80001,192.168.0.1,3,1700000000.123456789,-0.000001500,0.000000200,"
		"0.000000300,-12.345,0.001,0.010,0.000200000,0.000050000,64.2,Normal\n", &s), 0);
	assert_int_equal(s.source, TSYNC_CLOCK_SRC_CHRONY);
	assert_int_equal(s.synced, 1);
	assert_int_equal(s.stratum, 3);
	assert_int_equal(s.offset_ns, -1500);
	/* 1500 + 50000 + 200000 / 2 */
	assert_int_equal(s.bound_ns, 151500);
	assert_string_equal(s.master, "192.168.0.1");
	assert_string_equal(s.detail, "Normal");
	/* a local reference (`local stratum 10`) */
	assert_int_equal(chrony_parse_tracking(
		"7F7F0101,127.127.1.1,10,1700000000.000000000,0.000000000,0.000000000,"
		"0.000000000,0.000,0.000,0.000,0.000000000,0.000000000,0.0,Normal", &s), 0);
	assert_int_equal(s.synced, 1);
	assert_int_equal(s.bound_ns, 0);
	assert_int_equal(s.stratum, 10);
}

static void test_not_synced(void **state)
{
	struct tsync_clock_state s;

	(void)state;
	assert_int_equal(chrony_parse_tracking(
		"00000000,,0,0.000000000,0.000000000,0.000000000,0.000000000,0.000,0.000,"
		"0.000,1.000000000,1.000000000,0.0,Not synchronised", &s), 0);
	assert_int_equal(s.synced, 0);
	assert_true(s.bound_ns == TSYNC_CLOCK_BOUND_UNKNOWN);
	assert_string_equal(s.detail, "Not synchronised");
	assert_int_equal(chrony_parse_tracking(
		"C0A80001,a,16,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,Normal", &s), 0);
	assert_int_equal(s.synced, 0);
}

static void test_rejects(void **state)
{
	static const struct { const char *line, *why; } cases[] = {
		{ "", "chronyc tracking: bad line (not 14 fields)" },
		{ "506f6f6c,x,3,0,0,0,0,0,0,0,0,0,0", "chronyc tracking: bad line (not 14 fields)" },
		{ "506f6f6c,x,3,0,0,0,0,0,0,0,0,0,0,Normal,extra",
		  "chronyc tracking: bad line (not 14 fields)" },
		{ "zz,x,3,0,0,0,0,0,0,0,0,0,0,Normal", "chronyc tracking: bad reference ID" },
		{ "1,x,17,0,0,0,0,0,0,0,0,0,0,Normal", "chronyc tracking: bad stratum" },
		{ "1,x,3,0,fast,0,0,0,0,0,0,0,0,Normal", "chronyc tracking: bad system time offset" },
		{ "1,x,3,0,nan,0,0,0,0,0,0,0,0,Normal", "chronyc tracking: bad system time offset" },
		{ "1,x,3,0,0,0,0,0,0,0,-1,0,0,Normal", "chronyc tracking: bad root delay" },
		{ "1,x,3,0,0,0,0,0,0,0,0,1e9,0,Normal", "chronyc tracking: bad root dispersion" },
	};
	struct tsync_clock_state s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&s, 0, sizeof(s));
		assert_int_equal(chrony_parse_tracking(cases[i].line, &s), -EBADMSG);
		assert_string_equal(s.detail, cases[i].why);
		assert_int_equal(s.synced, 0);
	}
	/* a name with a control byte is shown with '?' */
	assert_int_equal(chrony_parse_tracking("1,a\tb,3,0,0,0,0,0,0,0,0,0,0,Normal", &s), 0);
	assert_string_equal(s.master, "a?b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synced),
		cmocka_unit_test(test_not_synced),
		cmocka_unit_test(test_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
