// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/agent_arg.c: the AGENT[@NAME] arguments of sync and
 * record. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "host/agent_arg.h"

/* AGENT alone is named guestN; AGENT@NAME carries NAME. */
static void test_names(void **state)
{
	struct host_agent_arg a;
	char err[200];

	(void)state;
	assert_int_equal(host_agent_arg_parse("tcp:127.0.0.1:8823", 3, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "guest3");
	assert_int_equal(a.ep.port, 8823);
	assert_int_equal(host_agent_arg_parse("tcp:127.0.0.1:9000@vm-1.a_b", 0, &a, err,
					      sizeof(err)), 0);
	assert_string_equal(a.name, "vm-1.a_b");
	assert_int_equal(a.ep.port, 9000);
	/* the last @ separates the name: "5@x" is no address */
	assert_int_equal(host_agent_arg_parse("5@x@y", 0, &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(host_agent_arg_parse("5@y", 0, &a, err, sizeof(err)), 0);
	assert_string_equal(a.name, "y");
	assert_int_equal(a.ep.cid, 5);
}

/* Bad names and addresses are refused with a reason. */
static void test_refusals(void **state)
{
	static const char *const bad[] = {
		"tcp:127.0.0.1:1@", "tcp:127.0.0.1:1@a b", "tcp:127.0.0.1:1@a/b",
		"tcp:127.0.0.1:1@0123456789012345678901234567890123456789012345678901234567890123",
		"nonsense:1:2", "@name", "",
	};
	struct host_agent_arg a;
	char err[200], long_arg[400];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(host_agent_arg_parse(bad[i], 0, &a, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != '\0');
	}
	memset(long_arg, 'a', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	assert_int_equal(host_agent_arg_parse(long_arg, 0, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
