// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of agent/conntab: --max-conns and the eviction policy, on
 * real sockets (socketpairs): at the limit the oldest connection that has
 * not authenticated and has no bytes waiting is shut down to make room;
 * authenticated ones never are; with no candidate the newcomer is refused.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "agent/conn/conntab.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"

/* Adds a new connection (the agent's end of a socketpair) to @t; the
 * peer's end in *@peer_fd. Returns what agent_conntab_add() returns. */
static int add(struct agent_conntab *t, const char *name, struct agent_conn **c,
	       int *peer_fd)
{
	struct tsync_peer peer = { 0 };
	int sv[2], ret;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	snprintf(peer.name, sizeof(peer.name), "%s", name);
	ret = agent_conntab_add(t, sv[0], &peer, c);
	if (ret)
		close(sv[0]);
	*peer_fd = sv[1];
	return ret;
}

/* Returns true if the agent shut @peer_fd's connection down (EOF). */
static bool shut(int peer_fd)
{
	struct pollfd p = { .fd = peer_fd, .events = POLLIN };
	char b;

	return poll(&p, 1, 0) == 1 && recv(peer_fd, &b, 1, MSG_DONTWAIT) == 0;
}

/* At the limit the oldest unauthenticated connection goes; then the next
 * oldest; authenticated ones stay. */
static void test_evict_oldest(void **state)
{
	struct agent_conntab *t = agent_conntab_new(3, NULL);
	struct agent_conn *c[5];
	int p[5];

	(void)state;
	assert_int_equal(add(t, "a", &c[0], &p[0]), 0);
	assert_int_equal(add(t, "b", &c[1], &p[1]), 0);
	assert_int_equal(add(t, "c", &c[2], &p[2]), 0);
	agent_conntab_authenticated(t, c[0]);		/* a: a host */
	assert_int_equal(add(t, "d", &c[3], &p[3]), 0);	/* evicts b */
	assert_false(shut(p[0]));
	assert_true(shut(p[1]));
	assert_false(shut(p[2]));
	assert_int_equal(add(t, "e", &c[4], &p[4]), 0);	/* evicts c */
	assert_true(shut(p[2]));
	assert_false(shut(p[3]));
	assert_false(shut(p[0]));
	for (int i = 0; i < 5; i++) {
		agent_conntab_remove(t, c[i]);
		close(p[i]);
	}
	assert_int_equal(agent_conntab_wait_empty(t, tsync_deadline_ms(1000)), 0);
	agent_conntab_free(t);
}

/* A connection whose bytes are waiting is a host whose thread has not
 * run yet: not evicted. With every connection authenticated or busy, the
 * newcomer is refused (-EBUSY). */
static void test_no_candidate(void **state)
{
	struct agent_conntab *t = agent_conntab_new(2, NULL);
	struct agent_conn *c[3];
	int p[3];

	(void)state;
	assert_int_equal(add(t, "a", &c[0], &p[0]), 0);
	assert_int_equal(add(t, "b", &c[1], &p[1]), 0);
	agent_conntab_authenticated(t, c[0]);
	assert_int_equal(write(p[1], "TSYP", 4), 4);	/* b's hello is on its way */
	assert_int_equal(add(t, "c", &c[2], &p[2]), -EBUSY);
	close(p[2]);
	assert_false(shut(p[0]));
	for (int i = 0; i < 2; i++) {
		agent_conntab_remove(t, c[i]);
		close(p[i]);
	}
	agent_conntab_free(t);
}

/* Shutdown closes every connection's socket for reading and refuses new
 * ones; wait_empty says how many are still there at its deadline. */
static void test_shutdown(void **state)
{
	struct agent_conntab *t = agent_conntab_new(4, NULL);
	struct agent_conn *c[2], *x;
	int p[2], px;

	(void)state;
	assert_int_equal(add(t, "a", &c[0], &p[0]), 0);
	assert_int_equal(add(t, "b", &c[1], &p[1]), 0);
	agent_conntab_authenticated(t, c[0]);
	agent_conntab_shutdown(t);
	assert_true(shut(p[0]));
	assert_true(shut(p[1]));
	assert_int_equal(add(t, "late", &x, &px), -ESHUTDOWN);
	close(px);
	agent_conntab_remove(t, c[0]);
	assert_int_equal(agent_conntab_wait_empty(t, tsync_deadline_ms(50)), 1);
	agent_conntab_remove(t, c[1]);
	assert_int_equal(agent_conntab_wait_empty(t, tsync_deadline_ms(1000)), 0);
	close(p[0]);
	close(p[1]);
	agent_conntab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evict_oldest),
		cmocka_unit_test(test_no_candidate),
		cmocka_unit_test(test_shutdown),
	};

	tsync_log_init("test_conntab", TSYNC_LOG_ERR, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
