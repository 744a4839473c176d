// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/cmd/phases.c: the split of a record's time, known
 * answers from set moments (phases not reached are left out, the time
 * added before and after COMMAND), and a buffer too small stays
 * terminated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "host/cmd/phases.h"

#define MS 1000000LL

/* A host-only run: no guests' phases between, 1 s of COMMAND. */
static void test_host_only(void **state)
{
	struct rec_phases p = { 0 };
	char buf[512];

	(void)state;
	p.t[REC_PH_BEGIN] = 1000 * MS;
	p.t[REC_PH_CHECKED] = 1001 * MS;
	p.t[REC_PH_HOST] = 1011 * MS;
	p.t[REC_PH_ARMED] = 1012 * MS;
	p.t[REC_PH_CMD_END] = 2012 * MS;
	p.t[REC_PH_STOPPED] = 2013 * MS;
	p.t[REC_PH_HOST_META] = 2015 * MS;
	p.t[REC_PH_HOST_FILE] = 2045 * MS;
	p.t[REC_PH_END] = 2045 * MS + MS / 2;
	rec_phases_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "checks 1.0, host instance 10.0, guests' tracing 1.0, "
			    "COMMAND 1000.0, host flush 1.0, host metadata 2.0, host file 30.0, "
			    "guest files (the rest of) 0.5; added before COMMAND 12.0, "
			    "after 33.5, total 1045.5 ms");
}

/* The guests' receivers started while COMMAND ran: said how far into it. */
static void test_guests_during(void **state)
{
	struct rec_phases p = { 0 };
	char buf[512];

	(void)state;
	p.t[REC_PH_BEGIN] = 1000 * MS;
	p.t[REC_PH_GUESTS] = 1040 * MS;
	p.t[REC_PH_HOST] = 1050 * MS;
	p.t[REC_PH_ARMED] = 1051 * MS;
	p.guests_on = 1131 * MS;
	p.t[REC_PH_CMD_END] = 2051 * MS;
	p.t[REC_PH_END] = 2081 * MS;
	rec_phases_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "guests (connect, metadata, first sync) 40.0, host instance "
			    "10.0, guests' tracing 1.0, COMMAND 1000.0 (guests' receivers on "
			    "after 80.0), guest files (the rest of) 30.0; added before COMMAND 51.0, "
			    "after 30.0, total 1081.0 ms");
}

/* Not started: nothing but what was reached, and no "added" part. */
static void test_partial(void **state)
{
	struct rec_phases p = { 0 };
	char buf[512];

	(void)state;
	rec_phases_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "");
	p.t[REC_PH_BEGIN] = 5 * MS;
	p.t[REC_PH_CHECKED] = 7 * MS;
	rec_phases_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "checks 2.0");
}

/* A small buffer is cut, terminated, never overrun. */
static void test_small_buffer(void **state)
{
	struct rec_phases p = { 0 };
	char buf[16];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	p.t[REC_PH_BEGIN] = 1 * MS;
	p.t[REC_PH_CHECKED] = 2 * MS;
	p.t[REC_PH_GUESTS] = 300 * MS;
	p.t[REC_PH_ARMED] = 400 * MS;
	p.t[REC_PH_CMD_END] = 1400 * MS;
	p.t[REC_PH_END] = 1500 * MS;
	rec_phases_format(&p, buf, 12);
	assert_int_equal(strlen(buf), 11);
	assert_memory_equal(buf, "checks 1.0,", 11);
	assert_int_equal(buf[12], 'x');
	rec_phases_format(&p, buf, 1);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_only),
		cmocka_unit_test(test_guests_during),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
