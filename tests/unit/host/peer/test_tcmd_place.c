// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/peer/tcmd_place: the loops between arrival times
 * (fastest, median, counted), and which of two placements is kept, with
 * known answers: the faster fastest loop; within 1/32 the lower median;
 * a full tie, or a placement that saw no loop, keeps the first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/peer/tcmd_place.h"

static void test_loops(void **state)
{
	/* loops 10, 30, 20, 40 */
	const int64_t t[] = { 100, 110, 140, 160, 200 };
	struct tcmd_place_loops l;

	(void)state;
	tcmd_place_loops(t, 5, &l);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.min, 10);
	assert_int_equal(l.median, 25);	/* between 20 and 30 */
	tcmd_place_loops(t, 4, &l);	/* 10, 30, 20 */
	assert_int_equal(l.n, 3);
	assert_int_equal(l.median, 20);
	tcmd_place_loops(t, 1, &l);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.min, 0);
	tcmd_place_loops(t, 0, &l);
	assert_int_equal(l.n, 0);
}

/* more arrivals than a trial's loops: only the first 2 * TCMD_PLACE_TRIAL
 * loops count */
static void test_loops_bounded(void **state)
{
	int64_t t[2 * TCMD_PLACE_TRIAL + 10];
	struct tcmd_place_loops l;

	(void)state;
	for (int i = 0; i < 2 * TCMD_PLACE_TRIAL + 10; i++)
		t[i] = i <= 2 * TCMD_PLACE_TRIAL ? 1000LL * i :
			2000LL * TCMD_PLACE_TRIAL + (i - 2 * TCMD_PLACE_TRIAL);
	tcmd_place_loops(t, 2 * TCMD_PLACE_TRIAL + 10, &l);
	assert_int_equal(l.n, 2 * TCMD_PLACE_TRIAL);
	assert_int_equal(l.min, 1000);
}

#define L(n, mn, md) (struct tcmd_place_loops){ (n), (mn), (md) }

static void test_pick(void **state)
{
	struct tcmd_place_loops a, b;

	(void)state;
	/* the kernel of tcmd_place.h: the agent's own CPU the faster */
	a = L(40, 34452, 38176);
	b = L(40, 47160, 62483);
	assert_int_equal(tcmd_place_pick(&a, &b), 0);
	assert_int_equal(tcmd_place_pick(&b, &a), 1);
	/* fastest loops 3200 apart of 100000: beyond 1/32 (3125) */
	a = L(40, 100000, 100000);
	b = L(40, 96800, 200000);
	assert_int_equal(tcmd_place_pick(&a, &b), 1);
	/* 3000 apart: within, so the medians decide */
	b = L(40, 97000, 200000);
	assert_int_equal(tcmd_place_pick(&a, &b), 0);
	b = L(40, 97000, 99000);
	assert_int_equal(tcmd_place_pick(&a, &b), 1);
	b = L(40, 103000, 99000);
	assert_int_equal(tcmd_place_pick(&a, &b), 1);
	/* a full tie keeps the first */
	assert_int_equal(tcmd_place_pick(&a, &a), 0);
	/* one that saw no loop: the first */
	b = L(0, 0, 0);
	assert_int_equal(tcmd_place_pick(&a, &b), 0);
	assert_int_equal(tcmd_place_pick(&b, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loops),
		cmocka_unit_test(test_loops_bounded),
		cmocka_unit_test(test_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
