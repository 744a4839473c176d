// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of agent/registry: sessions by id with references. The
 * registry never looks inside a session, so any distinct pointers stand
 * in for them.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/conn/registry.h"

static int slot[8];
#define S(i) ((struct agent_session *)&slot[i])

/* Ids count up from the first; lookups find the right session and take a
 * reference; unknown ids find nothing; --max-sessions holds. */
static void test_add_get(void **state)
{
	struct agent_registry *r = agent_registry_new(2, 100);
	uint64_t a, b, c;

	(void)state;
	assert_non_null(r);
	assert_int_equal(agent_registry_add(r, S(0), &a), 0);
	assert_int_equal(agent_registry_add(r, S(1), &b), 0);
	assert_true(a == 100 && b == 101);
	assert_int_equal(agent_registry_add(r, S(2), &c), -EBUSY);
	assert_ptr_equal(agent_registry_get(r, b), S(1));
	assert_ptr_equal(agent_registry_get(r, a), S(0));
	assert_null(agent_registry_get(r, 999));
	agent_registry_put(r, S(1));
	agent_registry_put(r, S(0));
	agent_registry_remove(r, S(0));
	assert_null(agent_registry_get(r, a));
	/* room again, and ids are never reused */
	assert_int_equal(agent_registry_add(r, S(2), &c), 0);
	assert_true(c == 102);
	agent_registry_remove(r, S(1));
	agent_registry_remove(r, S(2));
	agent_registry_free(r);
}

/* trace-cmd sessions hold at most half of --max-sessions: tsync's own
 * hosts keep the rest; a removed one gives its slot back. */
static void test_tcmd_cap(void **state)
{
	struct agent_registry *r = agent_registry_new(4, 1);
	uint64_t id;

	(void)state;
	assert_non_null(r);
	assert_int_equal(agent_registry_add_tcmd(r, S(0), &id), 0);
	assert_int_equal(agent_registry_add_tcmd(r, S(1), &id), 0);
	assert_int_equal(agent_registry_add_tcmd(r, S(2), &id), -EBUSY);
	assert_int_equal(agent_registry_add(r, S(3), &id), 0);
	assert_int_equal(agent_registry_add(r, S(4), &id), 0);
	assert_int_equal(agent_registry_add(r, S(5), &id), -EBUSY);
	agent_registry_remove(r, S(0));
	assert_int_equal(agent_registry_add_tcmd(r, S(2), &id), 0);
	for (int i = 1; i <= 4; i++)
		agent_registry_remove(r, S(i));
	agent_registry_free(r);
	/* one slot: trace-cmd may have it */
	r = agent_registry_new(1, 1);
	assert_int_equal(agent_registry_add_tcmd(r, S(0), &id), 0);
	agent_registry_remove(r, S(0));
	agent_registry_free(r);
}

/* After stop, no new session. */
static void test_stop(void **state)
{
	struct agent_registry *r = agent_registry_new(4, 1);
	uint64_t id;

	(void)state;
	agent_registry_stop(r);
	assert_int_equal(agent_registry_add(r, S(0), &id), -ESHUTDOWN);
	agent_registry_free(r);
}

struct remover {
	struct agent_registry *r;
	bool done;
};

/* Thread: removes S(0) (waits for the other references). */
static void *remove_thread(void *arg)
{
	struct remover *rm = arg;

	agent_registry_remove(rm->r, S(0));
	__atomic_store_n(&rm->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* remove waits until every reference is dropped; meanwhile the session
 * can no longer be found (a data connection arriving late gets nothing). */
static void test_remove_waits(void **state)
{
	struct agent_registry *r = agent_registry_new(4, 1);
	struct remover rm = { .r = r };
	pthread_t th;
	uint64_t id;

	(void)state;
	assert_int_equal(agent_registry_add(r, S(0), &id), 0);
	assert_ptr_equal(agent_registry_get(r, id), S(0));	/* a data connection */
	assert_int_equal(pthread_create(&th, NULL, remove_thread, &rm), 0);
	/* the remover dropped the control reference (or will): the session
	 * is not handed out any more once only ours is left */
	while (agent_registry_get(r, id))
		agent_registry_put(r, S(0));
	assert_false(__atomic_load_n(&rm.done, __ATOMIC_ACQUIRE));
	agent_registry_put(r, S(0));		/* the data connection ends */
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(rm.done);
	agent_registry_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_get),
		cmocka_unit_test(test_tcmd_cap),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_remove_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
