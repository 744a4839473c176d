// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of host/cmd/rec_signals.c: COMMAND's exit ends
 * rec_signals_wait() with its status, also when it exited before its pid
 * was given, and (where the kernel has pidfds) without waking the watcher
 * thread: its exit costs the trace one wake-up of tsync-host, not two.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "common/base/timeutil.h"
#include "host/cmd/rec_signals.h"

/* The one thread of this process besides the caller (the watcher). */
static int other_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = -1;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != gettid())
			tid = atoi(e->d_name);
	closedir(d);
	return tid;
}

/* Field @key of /proc/self/task/@tid/status ("State:" gives the letter). */
static long task_field(int tid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			const char *p = line + strlen(key);

			while (*p == ' ' || *p == '\t')
				p++;
			v = !strcmp(key, "State:") ? *p : strtol(p, NULL, 10);
		}
	fclose(f);
	return v;
}

/* Waits (at most 5 s) until thread @tid sleeps; returns its voluntary
 * context switches then. */
static long asleep_switches(int tid)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };

	for (int i = 0; i < 2500 && task_field(tid, "State:") != 'S'; i++)
		nanosleep(&pause, NULL);
	assert_int_equal(task_field(tid, "State:"), 'S');
	return task_field(tid, "voluntary_ctxt_switches:");
}

/* Forks a child that exits with @code once @gate's write end closes. */
static pid_t child_at_gate(int gate[2], int code)
{
	pid_t pid;
	char c;

	assert_int_equal(pipe(gate), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(gate[1]);
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(code);
	}
	close(gate[0]);
	return pid;
}

/* The exit ends the wait with its status, the watcher sleeping on. */
static void test_exit_wakes_waiter(void **state)
{
	struct rec_signals *s;
	int gate[2], tid, pfd;
	long before;
	pid_t pid;

	(void)state;
	assert_int_equal(rec_signals_start(NULL, &s), 0);
	rec_signals_phase(s, REC_RECORDING);
	tid = other_tid();
	assert_true(tid > 0);
	pid = child_at_gate(gate, 3);
	before = asleep_switches(tid);
	rec_signals_child(s, pid);
	close(gate[1]);
	assert_false(rec_signals_wait(s, tsync_now_ns() + 5 * NSEC_PER_SEC));
	assert_true(WIFEXITED(rec_signals_child_status(s)));
	assert_int_equal(WEXITSTATUS(rec_signals_child_status(s)), 3);
	pfd = pidfd_open(getpid(), 0);
	if (pfd >= 0) {
		/* neither the pid's arrival nor the exit woke the watcher */
		close(pfd);
		assert_int_equal(asleep_switches(tid), before);
	}
	rec_signals_free(s);
}

/* A COMMAND that exited before its pid was given ends the wait at once. */
static void test_exited_before(void **state)
{
	struct rec_signals *s;
	int gate[2];
	siginfo_t si;
	pid_t pid;

	(void)state;
	assert_int_equal(rec_signals_start(NULL, &s), 0);
	rec_signals_phase(s, REC_RECORDING);
	pid = child_at_gate(gate, 5);
	close(gate[1]);
	/* gone, not reaped: it is a zombie when its pid arrives */
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	rec_signals_child(s, pid);
	assert_false(rec_signals_wait(s, tsync_now_ns() + 5 * NSEC_PER_SEC));
	assert_int_equal(WEXITSTATUS(rec_signals_child_status(s)), 5);
	rec_signals_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_wakes_waiter),
		cmocka_unit_test(test_exited_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
