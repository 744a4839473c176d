// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What several benchmarks share; see bench_lib.h.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/wait.h>

#include "tests/bench/bench_lib.h"

/* Starts the agent under timens_exec; see bench_lib.h. */
pid_t bench_start_agent(const char *b, long long shift_ns, char *ep, size_t eplen)
{
	char agent[256], helper[256], shift[32], line[256];
	int p[2];
	pid_t pid;
	FILE *f = NULL;

	snprintf(agent, sizeof(agent), "%s/tsync-agent", b);
	snprintf(helper, sizeof(helper), "%s/helpers/timens_exec", b);
	snprintf(shift, sizeof(shift), "%lld", shift_ns);
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(helper, helper, shift, "0", agent, "-l", "tcp:127.0.0.1:0",
		      "--allow", "127.0.0.1", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0)
		f = fdopen(p[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "listening on ", 13))
		goto fail;
	/* the agent writes nothing else to stdout: the pipe can go */
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	snprintf(ep, eplen, "%s", line + 13);
	return pid;
fail:
	if (f)
		fclose(f);
	else
		close(p[0]);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

/* Starts the agent and parses its endpoint; see bench_lib.h. */
pid_t bench_start_agent_ep(const char *b, long long shift_ns, struct tsync_endpoint *ep)
{
	char text[256], err[256];
	pid_t pid = bench_start_agent(b, shift_ns, text, sizeof(text));

	if (pid < 0)
		return -1;
	if (tsync_endpoint_parse(text, 0, ep, err, sizeof(err))) {
		fprintf(stderr, "agent endpoint %s: %s\n", text, err);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Waits for @parent to have no child; see bench_lib.h. */
void bench_wait_no_child(pid_t parent)
{
	for (int i = 0; i < 1000; i++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		bool busy = false;

		while (d && !busy && (e = readdir(d))) {
			char path[300], buf[512];
			FILE *f;

			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			f = fopen(path, "r");
			if (f && fgets(buf, sizeof(buf), f)) {
				const char *rp = strrchr(buf, ')');
				int ppid = 0;

				if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == parent)
					busy = true;
			}
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
		if (!busy)
			return;
		usleep(10000);
	}
}

/* Takes a lock with a bounded wait; see bench_lib.h. */
int bench_lock(const char *path, int secs)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < secs * 10; i++) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		usleep(100000);
	}
	printf("  (%s still held after %d s by a process outside this run: going on "
	       "without it)\n", path, secs);
	close(fd);
	return -1;
}

/* Sort helper. */
static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @q-quantile; see bench_lib.h. */
int64_t bench_quant(int64_t *v, int n, double q)
{
	int i = (int)(q * (n - 1) + 0.5);

	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp64);
	return v[i];
}

/* The mean; see bench_lib.h. */
double bench_mean(const int64_t *v, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += (double)v[i];
	return n > 0 ? s / n : 0;
}

/* Busy loops; see bench_lib.h. */
int bench_start_busy(pid_t *pids, int ncpu)
{
	int n = 0;

	for (int i = 0; i < ncpu && i < BENCH_MAX_BUSY; i++) {
		pid_t p = fork();

		if (p == 0) {
			volatile unsigned long x = 0;

			for (;;)
				x++;
		}
		if (p > 0)
			pids[n++] = p;
	}
	return n;
}

/* Stops the busy loops; see bench_lib.h. */
void bench_stop_busy(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
}

/* Puts the top instance back as trace-cmd leaves it broken; see bench_lib.h. */
void bench_restore_tracefs(void)
{
	int fd = open("/sys/kernel/tracing/tracing_on", O_WRONLY);

	if (fd >= 0 && write(fd, "1", 1) != 1)
		perror("tracing_on");
	if (fd >= 0)
		close(fd);
	fd = open("/sys/kernel/tracing/set_event", O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

/* A free loopback TCP port; see bench_lib.h. */
int bench_free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)) &&
	    !getsockname(fd, (struct sockaddr *)&sin, &sl))
		port = ntohs(sin.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Whether loopback @port listens; see bench_lib.h. */
bool bench_listening(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sin, sizeof(sin));

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Runs a program in its own process group; see bench_lib.h. */
pid_t bench_spawn(char *const argv[], const char *dir, const char *log, const char *env)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setpgid(0, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (env)
			putenv((char *)env);
		if (dir && chdir(dir))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}
