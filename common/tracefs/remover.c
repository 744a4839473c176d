// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tracefs instance removed by a process of its own; see remover.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/tracefs/remover.h"

/* How long the remover sleeps between two tries of a busy instance. */
#define REMOVER_RETRY_NS (2 * 1000 * 1000)

/* The paths the remover needs, made before the fork. */
struct rm_paths {
	char dir[PATH_MAX];
	char on[PATH_MAX];
	char ev[PATH_MAX];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes "0" to tracefs file @path; a failure is harmless (the removal
 * that follows is what matters). */
static void write_zero(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "0", 1) != 1) {
			/* nothing to do: the rmdir disables what is left */
		}
		close(fd);
	}
}

/* The remover: async-signal-safe calls only (remover.h). Waits for EOF on
 * @go (unless -1) before it closes its copies of the caller's files.
 * Never returns. */
static void __attribute__((noreturn)) remover(const struct rm_paths *p, int lock_fd, int go)
{
	struct timespec pause = { 0, REMOVER_RETRY_NS };
	long long deadline = now_ms() + TSYNC_REMOVER_DEADLINE_MS;
	sigset_t none;
	int fd;

	setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open("/dev/null", O_RDWR);
	for (int i = 0; fd >= 0 && i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
	write_zero(p->on);
	/* the caller closes its copies of the instance's files first: ours
	 * are then the last closes, which wait for the kernel's tracing lock */
	if (go >= 0) {
		struct pollfd pfd = { .fd = go, .events = POLLIN };
		long long left;

		while ((left = deadline - now_ms()) > 0 &&
		       poll(&pfd, 1, (int)left) < 0 && errno == EINTR)
			;
	}
	/* every fd but 0-2 and the lock: the caller's files in the instance
	 * would block the rmdir, and its pipes and locks are not ours */
	if (lock_fd > 3)
		close_range(3, (unsigned int)lock_fd - 1, 0);
	close_range((unsigned int)lock_fd + 1, ~0U, 0);
	write_zero(p->ev);
	/* the lock (the instance's directory, which does not block the
	 * rmdir) is held until the instance is gone: no cleaner takes it
	 * for stale meanwhile, and it is dropped as the remover exits */
	for (;;) {
		if (!rmdir(p->dir) || errno == ENOENT)
			_exit(0);
		if (errno != EBUSY || now_ms() >= deadline)
			_exit(1);
		nanosleep(&pause, NULL);
	}
}

/* Starts a remover; see remover.h. */
int tsync_remover_spawn(const char *dir, int lock_fd, int *go_fd)
{
	struct rm_paths p;	/* the child's copy is the remover's */
	int pipefd[2], go[2] = { -1, -1 }, status, ret;
	pid_t child, remover_pid = -1;

	if (lock_fd < 3 || !dir ||
	    snprintf(p.dir, sizeof(p.dir), "%s", dir) >= (int)sizeof(p.dir) ||
	    snprintf(p.on, sizeof(p.on), "%s/tracing_on", dir) >= (int)sizeof(p.on) ||
	    snprintf(p.ev, sizeof(p.ev), "%s/events/enable", dir) >= (int)sizeof(p.ev))
		return -EINVAL;
	if (go_fd && pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(pipefd, O_CLOEXEC)) {
		ret = -errno;
		goto close_go;
	}
	child = fork();
	if (child < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		goto close_go;
	}
	if (child == 0) {
		pid_t g = fork();

		if (g == 0) {
			close(pipefd[0]);
			close(pipefd[1]);
			if (go[1] >= 0)
				close(go[1]);	/* EOF comes when the caller's closes */
			remover(&p, lock_fd, go[0]);
		}
		/* tell the parent who removes (or that nobody does), then go */
		if (write(pipefd[1], &g, sizeof(g)) != (ssize_t)sizeof(g))
			_exit(1);
		_exit(g > 0 ? 0 : 1);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &remover_pid, sizeof(remover_pid)) != (ssize_t)sizeof(remover_pid))
		remover_pid = -1;
	close(pipefd[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	ret = remover_pid > 0 ? remover_pid : -EAGAIN;
	if (ret > 0 && go_fd) {
		*go_fd = go[1];
		go[1] = -1;
	}
close_go:
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	return ret;
}
