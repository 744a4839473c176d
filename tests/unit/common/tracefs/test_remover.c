// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/tracefs/remover.c, through
 * tsync_instance_destroy_detached(), against the real tracefs at
 * /sys/kernel/tracing (skipped, exit 77, where instances cannot be made).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/tracefs/instance.h"
#include "common/tracefs/stale.h"
#include "common/tracefs/remover.h"

#define INSTANCES "/sys/kernel/tracing/instances"

static bool exists(const char *name, const char *file)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), INSTANCES "/%s%s%s", name, file ? "/" : "", file ? file : "");
	return stat(path, &st) == 0;
}

static char first_char(const char *name, const char *file)
{
	char path[512], c = '?';
	int fd;

	snprintf(path, sizeof(path), INSTANCES "/%s/%s", name, file);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '?';
		close(fd);
	}
	return c;
}

static void write_file(const char *name, const char *file, const char *val)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), INSTANCES "/%s/%s", name, file);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, val, strlen(val)), (ssize_t)strlen(val));
	close(fd);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to @ms for @file of @name to read '0' (true). */
static bool wait_zero(const char *name, const char *file, int ms)
{
	long long end = now_ms() + ms;
	struct timespec pause = { 0, 5 * 1000 * 1000 };

	while (first_char(name, file) != '0') {
		if (now_ms() >= end)
			return false;
		nanosleep(&pause, NULL);
	}
	return true;
}

/* Waits up to @ms for @name to be gone (true). */
static bool wait_gone(const char *name, int ms)
{
	long long end = now_ms() + ms;
	struct timespec pause = { 0, 5 * 1000 * 1000 };

	while (exists(name, NULL)) {
		if (now_ms() >= end)
			return false;
		nanosleep(&pause, NULL);
	}
	return true;
}

/*
 * The instance is left to a process of its own: the call returns while a
 * file of ours still keeps the instance (so it cannot be gone yet), the
 * remover switches tracing off, is not our child, keeps its copy of our
 * file (so our close is not the last) until we close the go pipe, then
 * does not hold a pipe we passed it and removes the instance.
 */
static void test_detached(void **state)
{
	struct tsync_instance *ti;
	struct pollfd pfd;
	char prefix[64], name[128], path[512], buf[8];
	int p[2], held, go;

	(void)state;
	snprintf(prefix, sizeof(prefix), "tsync-tr%d", (int)getpid());
	assert_int_equal(tsync_instance_create(prefix, &ti), 0);
	snprintf(name, sizeof(name), "%s", tsync_instance_name(ti));
	write_file(name, "events/sched/sched_switch/enable", "1");
	assert_int_equal(tsync_instance_start(ti), 0);
	assert_int_equal(first_char(name, "tracing_on"), '1');

	/* a pipe as a harness capturing our output has it (inherited, not
	 * close-on-exec), and a file of the instance still open */
	assert_int_equal(pipe(p), 0);
	snprintf(path, sizeof(path), INSTANCES "/%s/trace", name);
	held = open(path, O_RDONLY);
	assert_true(held >= 0);

	assert_int_equal(tsync_instance_destroy_detached(ti, &go), 0);
	assert_true(go >= 0);
	assert_true(exists(name, NULL));	/* our file keeps it */
	assert_true(wait_zero(name, "tracing_on", 5000));	/* switched off */

	/* nobody's child: nothing of it to reap here */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);

	/* our file closed, the remover's copy still keeps the instance: it
	 * waits for the go pipe (events stay enabled until then) */
	close(held);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	close(p[1]);
	assert_int_equal(poll(&pfd, 1, 100), 0);	/* it holds our pipe too */
	assert_true(exists(name, NULL));
	assert_int_equal(first_char(name, "events/sched/sched_switch/enable"), '1');

	/* go: it closes its copies (the pipe reads EOF) and removes it */
	close(go);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(read(p[0], buf, sizeof(buf)), 0);
	close(p[0]);
	assert_true(wait_gone(name, TSYNC_REMOVER_DEADLINE_MS));
}

/* Without a go pipe the remover goes on at once; a file of ours still
 * open keeps the instance until we close it. */
static void test_detached_now(void **state)
{
	struct tsync_instance *ti;
	char prefix[64], name[128], path[512];
	int held;

	(void)state;
	snprintf(prefix, sizeof(prefix), "tsync-tr%d", (int)getpid());
	assert_int_equal(tsync_instance_create(prefix, &ti), 0);
	snprintf(name, sizeof(name), "%s", tsync_instance_name(ti));
	write_file(name, "events/sched/sched_switch/enable", "1");
	snprintf(path, sizeof(path), INSTANCES "/%s/trace", name);
	held = open(path, O_RDONLY);
	assert_true(held >= 0);
	assert_int_equal(tsync_instance_destroy_detached(ti, NULL), 0);
	assert_true(wait_zero(name, "events/sched/sched_switch/enable", 5000));
	assert_true(exists(name, NULL));	/* our file keeps it */
	close(held);
	assert_true(wait_gone(name, TSYNC_REMOVER_DEADLINE_MS));
}

/* Runs tsync_instance_cleanup_stale(@prefix) with our stderr in a file;
 * returns what it printed (malloc'd) and its result in *@ret. */
static char *cleanup_said(const char *prefix, int *ret)
{
	char tmpl[] = "/tmp/tsync-test-remover-XXXXXX", *out;
	int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO);
	off_t len;

	assert_true(fd >= 0 && saved >= 0);
	unlink(tmpl);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	*ret = tsync_instance_cleanup_stale(prefix);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	len = lseek(fd, 0, SEEK_END);
	assert_true(len >= 0);
	out = calloc(1, (size_t)len + 1);
	assert_non_null(out);
	assert_int_equal(pread(fd, out, (size_t)len, 0), (ssize_t)len);
	close(fd);
	return out;
}

/*
 * An instance whose owner has exited while its remover is at work is not
 * stale: a cleaner (the next tsync program) leaves it alone and says
 * nothing, however long the removal takes. Here the removal waits for a
 * file we hold, as it waits for the kernel's tracing lock while another
 * instance is being removed; the owner, a child of ours, is gone.
 */
static void test_removing_not_stale(void **state)
{
	struct tsync_instance *ti;
	char prefix[64], name[128], path[512], *said;
	int up[2], down[2], held, n, status;
	pid_t child;

	(void)state;
	snprintf(prefix, sizeof(prefix), "tsync-tr%d", (int)getpid());
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char go;

		if (tsync_instance_create(prefix, &ti) ||
		    write(up[1], tsync_instance_name(ti), strlen(tsync_instance_name(ti)) + 1) <= 0 ||
		    read(down[0], &go, 1) != 1 || tsync_instance_destroy_detached(ti, NULL))
			_exit(1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	n = (int)read(up[0], name, sizeof(name) - 1);
	close(up[0]);
	assert_true(n > 1);
	name[n] = '\0';
	snprintf(path, sizeof(path), INSTANCES "/%s/trace", name);
	held = open(path, O_RDONLY);
	assert_true(held >= 0);
	assert_int_equal(write(down[1], "g", 1), 1);
	close(down[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the owner is gone; its remover waits for our file */
	assert_true(wait_zero(name, "events/enable", 5000));
	assert_true(exists(name, NULL));

	said = cleanup_said(prefix, &n);
	assert_int_equal(n, 0);
	if (strstr(said, name)) {
		close(held);
		fail_msg("the cleaner took a removal at work for stale: %s", said);
	}
	free(said);
	assert_true(exists(name, NULL));

	close(held);
	assert_true(wait_gone(name, TSYNC_REMOVER_DEADLINE_MS));
}

/* A bad directory or lock is refused before anything is forked. */
static void test_spawn_refused(void **state)
{
	int go = 5;

	(void)state;
	assert_int_equal(tsync_remover_spawn(NULL, 5, NULL), -EINVAL);
	assert_int_equal(tsync_remover_spawn(INSTANCES "/none", 2, &go), -EINVAL);
	assert_int_equal(go, 5);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	/* NULL: nothing to remove, no pipe */
	assert_int_equal(tsync_instance_destroy_detached(NULL, &go), 0);
	assert_int_equal(go, -1);
}

/* Group teardown: removes instances a failed test left (ours by pid). */
static int remove_leftovers(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "for d in " INSTANCES "/tsync-tr%d*; do [ -d \"$d\" ] && "
		 "echo 0 > \"$d/events/enable\" && rmdir \"$d\" && "
		 "echo \"left behind: $d\"; done; true", (int)getpid());
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detached),
		cmocka_unit_test(test_detached_now),
		cmocka_unit_test(test_removing_not_stale),
		cmocka_unit_test(test_spawn_refused),
	};
	struct stat st;

	if (stat(INSTANCES, &st) || access(INSTANCES, W_OK)) {
		fprintf(stderr, "no writable tracefs instances at " INSTANCES "\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, remove_leftovers);
}
