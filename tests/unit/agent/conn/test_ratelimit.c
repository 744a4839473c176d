// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of agent/ratelimit: at most AGENT_RL_BURST lines per kind
 * and interval, kinds independent, no limiter no limit. The lines are
 * caught by pointing stderr (where the log goes) at a temporary file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/conn/ratelimit.h"
#include "common/base/log.h"

/* Runs @n warnings of @kind through @rl with stderr captured; returns how
 * many lines came out. */
static int lines_out(struct agent_ratelimit *rl, enum agent_rl_kind kind, int n)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), count = 0;
	char line[600];

	assert_non_null(tmp);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	for (int i = 0; i < n; i++)
		agent_rl_warn(rl, kind, "peer %d: refused", i);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp))
		count += strstr(line, ": refused") != NULL;
	fclose(tmp);
	return count;
}

/* A burst of 100 gives AGENT_RL_BURST lines; another kind has its own
 * allowance; without a limiter every line goes out. (All within one
 * interval: 100 calls take microseconds.) */
static void test_burst(void **state)
{
	struct agent_ratelimit *rl = agent_ratelimit_new();

	(void)state;
	assert_non_null(rl);
	assert_int_equal(lines_out(rl, AGENT_RL_CONNS, 100), AGENT_RL_BURST);
	assert_int_equal(lines_out(rl, AGENT_RL_CONNS, 5), 0);
	assert_int_equal(lines_out(rl, AGENT_RL_HELLO, 100), AGENT_RL_BURST);
	assert_int_equal(lines_out(NULL, AGENT_RL_HELLO, 100), 100);
	agent_ratelimit_free(rl);
	agent_ratelimit_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst),
	};

	tsync_log_init("test_ratelimit", TSYNC_LOG_INFO, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
