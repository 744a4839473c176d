// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd's socket activation variables (agent/listenfds.c): started by
 * hand, the valid sets, and every wrong set with its exact reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/listenfds.h"

#define SELF 4242

/* No LISTEN_PID and no LISTEN_FDS: started by hand, whatever the names. */
static void test_by_hand(void **state)
{
	struct agent_listen_fds l;
	char err[256] = "";

	(void)state;
	assert_int_equal(agent_listen_fds_parse(NULL, NULL, NULL, SELF, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(agent_listen_fds_parse(NULL, NULL, "a:b", SELF, &l, err, sizeof(err)),
			 0);
	assert_int_equal(l.n, 0);
	assert_string_equal(err, "");
}

/* Valid sets: the count, and the names where given. */
static void test_valid(void **state)
{
	struct agent_listen_fds l;
	char err[256] = "", names[600];

	(void)state;
	assert_int_equal(agent_listen_fds_parse("4242", "1", NULL, SELF, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.names[0], "");

	assert_int_equal(agent_listen_fds_parse("4242", "2", "tsync-agent.socket:tcmd", SELF, &l,
						err, sizeof(err)), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.names[0], "tsync-agent.socket");
	assert_string_equal(l.names[1], "tcmd");

	assert_int_equal(agent_listen_fds_parse("4242", "8", "a:b:c:d:e:f:g:", SELF, &l, err,
						sizeof(err)), 0);
	assert_int_equal(l.n, AGENT_MAX_LISTEN);
	assert_string_equal(l.names[6], "g");
	assert_string_equal(l.names[7], "");

	/* a long name is cut for the logs; a control character shown as '?' */
	memset(names, 'n', 300);
	strcpy(names + 300, ":a\tb");
	assert_int_equal(agent_listen_fds_parse("4242", "2", names, SELF, &l, err, sizeof(err)),
			 0);
	assert_int_equal(strlen(l.names[0]), AGENT_FDNAME_MAX - 1);
	assert_string_equal(l.names[1], "a?b");
}

/* Every wrong set: -EINVAL, n 0, and its one line. */
static void test_wrong(void **state)
{
	static const struct {
		const char *pid, *fds, *names, *err;
	} bad[] = {
		{ "4242", NULL, NULL, "socket activation: LISTEN_PID is set but LISTEN_FDS is not" },
		{ NULL, "1", NULL, "socket activation: LISTEN_FDS is set but LISTEN_PID is not" },
		{ "1", "1", NULL, "socket activation: LISTEN_PID=1 is not this process (pid 4242): "
		  "the sockets were passed to another one" },
		{ "42420", "1", NULL, "socket activation: LISTEN_PID=42420 is not this process "
		  "(pid 4242): the sockets were passed to another one" },
		{ "", "1", NULL, "socket activation: LISTEN_PID='' is not a process id" },
		{ "0", "1", NULL, "socket activation: LISTEN_PID='0' is not a process id" },
		{ "-4242", "1", NULL, "socket activation: LISTEN_PID='-4242' is not a process id" },
		{ "4242x", "1", NULL, "socket activation: LISTEN_PID='4242x' is not a process id" },
		{ "99999999999", "1", NULL,
		  "socket activation: LISTEN_PID='99999999999' is not a process id" },
		{ "4242", "0", NULL, "socket activation: LISTEN_FDS=0: no socket was passed" },
		{ "4242", "", NULL, "socket activation: LISTEN_FDS='' is not a number of sockets" },
		{ "4242", "1\n", NULL,
		  "socket activation: LISTEN_FDS='1?' is not a number of sockets" },
		{ "4242", "-1", NULL, "socket activation: LISTEN_FDS='-1' is not a number of sockets" },
		{ "4242", "9", NULL, "socket activation: LISTEN_FDS=9: at most 8 sockets" },
		{ "4242", "99999999", NULL,
		  "socket activation: LISTEN_FDS='99999999' is not a number of sockets" },
		{ "4242", "2", "one", "socket activation: LISTEN_FDNAMES has 1 name for "
		  "LISTEN_FDS=2 sockets" },
		{ "4242", "1", "a:b", "socket activation: LISTEN_FDNAMES has 2 names for "
		  "LISTEN_FDS=1 socket" },
	};
	struct agent_listen_fds l;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = agent_listen_fds_parse(bad[i].pid, bad[i].fds, bad[i].names, SELF, &l,
						 err, sizeof(err));

		if (ret != -EINVAL)
			fail_msg("%zu: %d", i, ret);
		assert_int_equal(l.n, 0);
		if (strcmp(err, bad[i].err))
			fail_msg("%zu:\n  expected: %s\n  got:      %s", i, bad[i].err, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_wrong),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
