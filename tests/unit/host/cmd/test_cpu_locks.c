// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/cmd/cpu_locks.c: one lock per host CPU, each usable from
 * another thread while a different one is held (rounds on different host
 * CPUs run in parallel), and the same one excluding a second holder.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/base/cpu.h"
#include "host/cmd/cpu_locks.h"

/* Tries lock @arg from another thread; returns pthread_mutex_trylock's. */
static void *try_other(void *arg)
{
	pthread_mutex_t *m = arg;
	int r = pthread_mutex_trylock(m);

	if (!r)
		pthread_mutex_unlock(m);
	return (void *)(intptr_t)r;
}

/* Returns what trylock of @m says from another thread. */
static int trylock_elsewhere(pthread_mutex_t *m)
{
	pthread_t th;
	void *r;

	assert_int_equal(pthread_create(&th, NULL, try_other, m), 0);
	assert_int_equal(pthread_join(th, &r), 0);
	return (int)(intptr_t)r;
}

static void test_one_per_cpu(void **state)
{
	pthread_mutex_t *l = NULL;
	int n;

	(void)state;
	n = host_cpu_locks_new(&l);
	assert_int_equal(n, tsync_cpu_count());
	assert_non_null(l);
	assert_int_equal(pthread_mutex_lock(&l[0]), 0);
	assert_int_equal(trylock_elsewhere(&l[0]), EBUSY);
	if (n > 1)
		assert_int_equal(trylock_elsewhere(&l[n - 1]), 0);
	assert_int_equal(pthread_mutex_unlock(&l[0]), 0);
	assert_int_equal(trylock_elsewhere(&l[0]), 0);
	host_cpu_locks_free(l, n);
	host_cpu_locks_free(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_per_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
