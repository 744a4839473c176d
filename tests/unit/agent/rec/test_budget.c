// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of agent/budget: the total trace buffer budget. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/rec/budget.h"

/* Reservations add up to the total; one over it is refused with what is
 * free, and releasing gives it back. */
static void test_reserve_release(void **state)
{
	struct agent_budget *b = agent_budget_new(1000);
	uint64_t free_kb = 0;

	(void)state;
	assert_non_null(b);
	assert_int_equal(agent_budget_total(b), 1000);
	assert_int_equal(agent_budget_reserve(b, 600, NULL), 0);
	assert_int_equal(agent_budget_reserve(b, 401, &free_kb), -ENOSPC);
	assert_int_equal(free_kb, 400);
	assert_int_equal(agent_budget_reserve(b, 400, NULL), 0);
	assert_int_equal(agent_budget_reserve(b, 1, &free_kb), -ENOSPC);
	assert_int_equal(free_kb, 0);
	agent_budget_release(b, 600);
	assert_int_equal(agent_budget_reserve(b, 600, NULL), 0);
	agent_budget_free(b);
}

/* A request larger than the whole budget, and a release of more than was
 * reserved (never below zero). */
static void test_edges(void **state)
{
	struct agent_budget *b = agent_budget_new(100);
	uint64_t free_kb = 7;

	(void)state;
	assert_int_equal(agent_budget_reserve(b, UINT64_MAX, &free_kb), -ENOSPC);
	assert_int_equal(free_kb, 100);
	assert_int_equal(agent_budget_reserve(b, 0, NULL), 0);
	agent_budget_release(b, 50);	/* nothing reserved: stays at zero */
	assert_int_equal(agent_budget_reserve(b, 100, NULL), 0);
	assert_int_equal(agent_budget_reserve(b, 1, NULL), -ENOSPC);
	agent_budget_free(b);
	agent_budget_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_release),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
