// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/cmd/par.c: the jobs run at the same time (each waits,
 * with a deadline, until all have started: one after the other, the first
 * would time out), every result lands at its index, failures are counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "host/cmd/par.h"

struct meet {
	pthread_mutex_t lock;
	pthread_cond_t all_in;
	int arrived;
	int n;
};

/* Arrives, then sleeps on a condition variable (not a spin: valgrind runs
 * one thread at a time, and spinning jobs starve the ones still to come)
 * up to 20 s for the others; returns i + 1 (job 3 fails with -EIO), or
 * -ETIMEDOUT when the others never came. */
static int meet_all(void *ctx, int i)
{
	struct meet *m = ctx;
	struct timespec deadline;
	int err = 0;
	bool met;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 20;
	pthread_mutex_lock(&m->lock);
	if (++m->arrived == m->n)
		pthread_cond_broadcast(&m->all_in);
	while (m->arrived < m->n && !err)
		err = pthread_cond_timedwait(&m->all_in, &m->lock, &deadline);
	met = m->arrived == m->n;
	pthread_mutex_unlock(&m->lock);
	if (!met)
		return -ETIMEDOUT;
	return i == 3 ? -EIO : i + 1;
}

/* 16 jobs meet: they ran at once; results at their index. */
static void test_parallel(void **state)
{
	struct meet m = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.all_in = PTHREAD_COND_INITIALIZER,
		.n = 16,
	};
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
