// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * timens_exec MONO_NS BOOT_NS CMD [ARGS...]
 *
 * Runs CMD in a new time namespace whose CLOCK_MONOTONIC is shifted by
 * MONO_NS and CLOCK_BOOTTIME by BOOT_NS nanoseconds (signed). util-linux's
 * unshare --time only takes whole seconds; the sync accuracy tests need a
 * known offset with nanoseconds, so this writes /proc/self/timens_offsets
 * itself. The offsets apply to children of the unsharing process, so it
 * forks, and the child execs CMD. SIGTERM, SIGINT and SIGHUP are passed on
 * to CMD, so stopping the wrapper stops what it runs. Exit status is CMD's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Writes one "clock secs nsecs" line for @ns to the offsets file. */
static int write_offset(int fd, const char *clock, long long ns)
{
	long long sec = ns / 1000000000LL, nsec = ns % 1000000000LL;
	char line[96];
	int len;

	if (nsec < 0) {		/* nanoseconds must be in [0, 1e9) */
		nsec += 1000000000LL;
		sec -= 1;
	}
	len = snprintf(line, sizeof(line), "%s %lld %lld", clock, sec, nsec);
	if (write(fd, line, (size_t)len) != len)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	long long mono, boot;
	int fd, status, sig;
	sigset_t set;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: timens_exec MONO_NS BOOT_NS CMD [ARGS...]\n");
		return 2;
	}
	mono = strtoll(argv[1], NULL, 10);
	boot = strtoll(argv[2], NULL, 10);
	if (unshare(CLONE_NEWTIME)) {
		fprintf(stderr, "timens_exec: unshare(CLONE_NEWTIME): %s\n", strerror(errno));
		return 77;
	}
	fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (fd < 0 || write_offset(fd, "monotonic", mono) || write_offset(fd, "boottime", boot)) {
		fprintf(stderr, "timens_exec: writing timens_offsets: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	/* Signals to pass on are taken synchronously (sigwait) below. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "timens_exec: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	for (;;) {
		if (sigwait(&set, &sig))
			return 1;
		if (sig != SIGCHLD) {
			kill(pid, sig);
			continue;
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
