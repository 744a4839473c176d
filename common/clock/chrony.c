// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chronyd through `chronyc -c -n -h SERVER tracking`, spawned with its
 * output on a pipe and killed at the read's deadline; its line is parsed
 * by chrony_parse.c. chronyc speaks chronyd's command protocol, which
 * changes between chrony's versions: the program that comes with the
 * daemon is the one to ask.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/clock/chrony_parse.h"
#include "common/clock/clock.h"
#include "common/base/timeutil.h"

extern char **environ;

/* Starts chronyc with its stdout on a pipe; returns 0 with @pid and the
 * read end in @fd, or -errno. */
static int start(const struct agent_clock_cfg *cfg, pid_t *pid, int *fd)
{
	char *argv[] = { (char *)cfg->chronyc, "-c", "-n", "-h", (char *)cfg->chrony_server,
			 "tracking", NULL };
	posix_spawn_file_actions_t fa;
	int p[2], ret;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	ret = -posix_spawn_file_actions_init(&fa);
	if (ret)
		goto fail;
	ret = -posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	if (!ret)
		ret = -posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!ret)
		ret = -posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (!ret)
		ret = -posix_spawnp(pid, cfg->chronyc, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		goto fail;
	close(p[1]);
	*fd = p[0];
	return 0;
fail:
	close(p[0]);
	close(p[1]);
	return ret;
}

/* Reads @fd into @buf (@cap bytes, NUL-terminated) until EOF or
 * @deadline. Returns 0 or -ETIMEDOUT / -errno. */
static int collect(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = tsync_remaining_ms(deadline);
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!p.revents)
			continue;
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		len += (size_t)n;
		buf[len] = '\0';
		if (!n || len == cap - 1)
			return 0;
	}
}

static int chrony_read(const struct agent_clock_cfg *cfg, int64_t deadline,
		       struct tsync_clock_state *out)
{
	char buf[1024];
	int fd = -1, st = 0, ret;
	pid_t pid = 0;

	ret = start(cfg, &pid, &fd);
	if (ret) {
		snprintf(out->detail, sizeof(out->detail), "chrony: cannot run %s: %s",
			 cfg->chronyc, strerror(-ret));
		return ret;
	}
	ret = collect(fd, buf, sizeof(buf), deadline);
	close(fd);
	if (ret)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (ret) {
		snprintf(out->detail, sizeof(out->detail), "chrony: %s tracking: %s",
			 cfg->chronyc, ret == -ETIMEDOUT ? "no answer by the deadline" :
			 strerror(-ret));
		return ret;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(out->detail, sizeof(out->detail),
			 "chrony: %s -h %s tracking failed (is chronyd running there?)",
			 cfg->chronyc, cfg->chrony_server);
		return -ECONNREFUSED;
	}
	return chrony_parse_tracking(buf, out);
}

const struct clock_daemon_ops clock_chrony_ops = {
	.name = "chrony",
	.read = chrony_read,
};
