// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/cpu: CPU lists beyond glibc's fixed CPU_SETSIZE
 * (1024; the protocol allows 8192), duplicates and order, bad lists with
 * their reasons, and pinning with the affinity restored.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/base/cpu.h"

/* Lists come back sorted, each CPU once, CPUs past 1024 included. */
static void test_list_parse(void **state)
{
	uint32_t *cpus;
	char err[200];

	(void)state;
	assert_int_equal(tsync_cpu_list_parse("6,0-3,2", 8, &cpus, err, sizeof(err)), 5);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 6);
	free(cpus);
	assert_int_equal(tsync_cpu_list_parse("1050,1023-1025,8191", 8192, &cpus, err,
					      sizeof(err)), 5);
	assert_int_equal(cpus[0], 1023);
	assert_int_equal(cpus[2], 1025);
	assert_int_equal(cpus[3], 1050);
	assert_int_equal(cpus[4], 8191);
	free(cpus);
	assert_int_equal(tsync_cpu_list_parse("0-8191", 8192, &cpus, err, sizeof(err)), 8192);
	assert_int_equal(cpus[8191], 8191);
	free(cpus);
}

/* Bad lists are refused with a reason and nothing to free. */
static void test_list_bad(void **state)
{
	static const struct { const char *list, *why; } bad[] = {
		{ "1100", "does not exist (1100 CPUs)" },
		{ "", "empty" },
		{ "3-1", "bad CPU range" },
		{ "1,x", "expected a number" },
		{ "1;2", "junk" },
		{ "-1", "expected a number" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t *cpus = (uint32_t *)&cpus;
		char err[200] = "";

		assert_int_equal(tsync_cpu_list_parse(bad[i].list, 1100, &cpus, err, sizeof(err)),
				 -EINVAL);
		assert_null(cpus);
		if (!strstr(err, bad[i].why))
			fail_msg("'%s': '%s' does not say '%s'", bad[i].list, err, bad[i].why);
	}
}

/* Pinning moves the thread; unpinning restores the mask it had. */
static void test_pin(void **state)
{
	struct tsync_cpu_mask old = { 0 };
	cpu_set_t before, after;

	(void)state;
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
	assert_int_equal(tsync_cpu_pin(0, &old), 0);
	assert_int_equal(sched_getcpu(), 0);
	assert_int_equal(tsync_cpu_unpin(&old), 0);
	assert_null(old.set);
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
	/* a CPU that does not exist: refused, nothing left pinned or held */
	assert_int_equal(tsync_cpu_pin(tsync_cpu_count() + 100, &old), -EINVAL);
	assert_null(old.set);
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
}

/* Returns the calling thread's policy and priority in @prio. */
static int policy_of(int *prio)
{
	struct sched_param sp;
	int policy;

	assert_int_equal(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
	*prio = sp.sched_priority;
	return policy;
}

/* The real-time class of a round: entered, kept when already higher,
 * restored; a bad priority changes nothing. */
static void test_rt(void **state)
{
	struct tsync_cpu_sched old, inner;
	struct sched_param sp = { .sched_priority = 5 };
	int prio, ret;

	(void)state;
	assert_int_equal(policy_of(&prio), SCHED_OTHER);
	assert_int_equal(tsync_cpu_rt_enter(0, &old), -EINVAL);
	assert_int_equal(tsync_cpu_rt_enter(100, &old), -EINVAL);
	assert_int_equal(policy_of(&prio), SCHED_OTHER);
	ret = tsync_cpu_rt_enter(1, &old);
	if (ret == -EPERM)
		skip();	/* neither root nor RLIMIT_RTPRIO */
	assert_int_equal(ret, 0);
	assert_int_equal(policy_of(&prio), SCHED_FIFO);
	assert_int_equal(prio, 1);
	assert_int_equal(tsync_cpu_rt_leave(&old), 0);
	assert_int_equal(policy_of(&prio), SCHED_OTHER);
	assert_int_equal(tsync_cpu_rt_leave(&old), 0);	/* twice: nothing */
	assert_int_equal(policy_of(&prio), SCHED_OTHER);
	/* a thread already above (trace-cmd's -r): left as it is */
	assert_int_equal(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), 0);
	assert_int_equal(tsync_cpu_rt_enter(1, &inner), 0);
	assert_int_equal(policy_of(&prio), SCHED_FIFO);
	assert_int_equal(prio, 5);
	assert_int_equal(tsync_cpu_rt_leave(&inner), 0);
	assert_int_equal(policy_of(&prio), SCHED_FIFO);
	assert_int_equal(prio, 5);
	sp.sched_priority = 0;
	assert_int_equal(pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_parse),
		cmocka_unit_test(test_list_bad),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_rt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
