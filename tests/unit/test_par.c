// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/par.c: the jobs run at the same time (each waits,
 * with a deadline, until all have started: one after the other, the first
 * would time out), every result lands at its index, failures are counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/timeutil.h"
#include "host/par.h"

struct meet {
	atomic_int arrived;
	int n;
};

/* Arrives, then waits up to 5 s for the others; returns i + 1 (job 3
 * fails with -EIO), or -ETIMEDOUT when the others never came. */
static int meet_all(void *ctx, int i)
{
	struct meet *m = ctx;
	int64_t deadline = tsync_now_ns() + 5000000000LL;

	atomic_fetch_add(&m->arrived, 1);
	while (atomic_load(&m->arrived) < m->n)
		if (tsync_now_ns() > deadline)
			return -ETIMEDOUT;
	return i == 3 ? -EIO : i + 1;
}

/* 16 jobs meet: they ran at once; results at their index. */
static void test_parallel(void **state)
{
	struct meet m = { .n = 16 };
	int rets[16];

	(void)state;
	assert_int_equal(host_par_run(16, meet_all, &m, rets), 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(rets[i], i == 3 ? -EIO : i + 1);
}

/* Returns 0 for even jobs, -EIO for odd ones. */
static int odd_fails(void *ctx, int i)
{
	(void)ctx;
	return i % 2 ? -EIO : 0;
}

/* Failures are counted; no jobs and bad arguments. */
static void test_count(void **state)
{
	int rets[5] = { 7, 7, 7, 7, 7 };

	(void)state;
	assert_int_equal(host_par_run(5, odd_fails, NULL, rets), 2);
	assert_int_equal(rets[0], 0);
	assert_int_equal(rets[1], -EIO);
	assert_int_equal(rets[4], 0);
	assert_int_equal(host_par_run(0, odd_fails, NULL, rets), 0);
	assert_int_equal(host_par_run(-1, odd_fails, NULL, rets), -EINVAL);
	assert_int_equal(host_par_run(1, NULL, NULL, rets), -EINVAL);
	assert_int_equal(host_par_run(1, odd_fails, NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
