// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of trace-cmd interop, direction 1: Debian's `trace-cmd record
 * -A` on the host against (a) Debian's `trace-cmd agent` and (b)
 * tsync-agent, both on loopback TCP, side by side in one run.
 *
 * Each run: `trace-cmd record -d -k --no-filter -A 127.0.0.1:PORT --name
 * localhost -d -k --no-filter -e sched:sched_switch sleep 1` (trace-cmd's
 * agent records with the options after -A, and on this kernel needs
 * -d -k --no-filter) in a scratch directory, under
 * the shared trace-cmd lock. Columns:
 *   first sync  from the start until trace-localhost.dat appears: trace-cmd
 *               creates it after the first PTP round of every CPU (its
 *               setup_guest() runs after tracecmd_tsync_with_guest()'s
 *               barrier), so this is the time to the first sync
 *   total       the whole record of a 1 s command, 2 CPUs here
 *   spread      max - min of the TIME_SHIFT offsets in the guest file (ns;
 *               host and guest are the same kernel, so the truth is 0 and
 *               the spread is the sync's scatter)
 * and the ratio of the totals. trace-cmd's agent sends its messages in two
 * writes with Nagle on and no quick ACKs, which costs a delayed ACK per
 * probe (the issue measured 120.9 s); tsync-agent writes each message once
 * and re-arms TCP_QUICKACK (agent/tcmd_ptp.c).
 *
 * Usage: bench_09_tcmd [REPS] (default 1; a trace-cmd agent run takes
 * about two minutes). BENCH09_SKIP_TCMD_AGENT=1 runs only tsync-agent.
 * Skips (exit 0) without trace-cmd or tracefs. Numbers only: a benchmark
 * never fails on timing. Columns for direction 2 (tsync-host against a
 * trace-cmd agent) belong beside these.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common/timeutil.h"
#include "tests/bench/bench_lib.h"

#define LOCK "/run/lock/tsync-trace-cmd.lock"
#define TCMD_PORT 47909

struct result {
	double first_s, total_s;
	long long spread_ns;
	int nsamples;
	int ok;
};

/* Runs argv with stdout/stderr to @log; returns the pid or -1. */
static pid_t spawn(char *const argv[], const char *dir, const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (dir && chdir(dir))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Puts the top instance back as trace-cmd leaves it broken. */
static void restore_tracefs(void)
{
	int fd = open("/sys/kernel/tracing/tracing_on", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			perror("tracing_on");
		close(fd);
	}
	fd = open("/sys/kernel/tracing/set_event", O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

/* Reads the TIME_SHIFT offsets of @file: spread and count into @r. */
static void read_spread(const char *dir, struct result *r)
{
	char cmd[512], line[512];
	long long off, mn = 0, mx = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "trace-cmd dump --options -i %s/trace-localhost.dat 2>/dev/null",
		 dir);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "[offset * scaling") && sscanf(line, " %lld", &off) == 1) {
			if (!r->nsamples++ || off < mn)
				mn = off;
			if (r->nsamples == 1 || off > mx)
				mx = off;
		}
	pclose(p);
	r->spread_ns = mx - mn;
}

/* One record against the agent on @port; fills @r. */
static void record_once(int port, struct result *r)
{
	char dir[] = "/tmp/bench09.XXXXXX", ep[64], guest[128], log[128];
	char *argv[] = { "trace-cmd", "record", "-d", "-k", "--no-filter", "-A", ep,
			 "--name", "localhost", "-d", "-k", "--no-filter",
			 "-e", "sched:sched_switch", "sleep", "1", NULL };
	int64_t t0, first = 0;
	struct stat st;
	int status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!mkdtemp(dir))
		return;
	snprintf(ep, sizeof(ep), "127.0.0.1:%d", port);
	snprintf(guest, sizeof(guest), "%s/trace-localhost.dat", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	t0 = tsync_now_ns();
	pid = spawn(argv, dir, log);
	if (pid < 0)
		return;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (!first && !stat(guest, &st))
			first = tsync_now_ns();
		usleep(1000);
	}
	r->total_s = (double)(tsync_now_ns() - t0) / 1e9;
	r->first_s = first ? (double)(first - t0) / 1e9 : -1;
	r->ok = WIFEXITED(status) && !WEXITSTATUS(status);
	restore_tracefs();
	read_spread(dir, r);
	if (!getenv("BENCH09_KEEP")) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	} else {
		fprintf(stderr, "kept %s\n", dir);
	}
}

/* Returns true once something listens on TCP @port (/proc/net/tcp). */
static int listening(int port)
{
	char line[256], want[16];
	FILE *f = fopen("/proc/net/tcp", "r");
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), ":%04X ", port);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && strstr(line, " 0A "))
			found = 1;
	fclose(f);
	return found;
}

/* Runs the trace-cmd agent column. */
static void run_tcmd_agent(struct result *r)
{
	char port[16];
	char *argv[] = { "trace-cmd", "agent", "-N", "127.0.0.1", "-p", port, NULL };
	pid_t pid;

	snprintf(port, sizeof(port), "%d", TCMD_PORT);
	pid = spawn(argv, "/tmp", "/tmp/bench09-agent.log");
	for (int i = 0; i < 5000 && !listening(TCMD_PORT); i++)
		usleep(1000);
	record_once(TCMD_PORT, r);
	/* its session handler (a forked child) has exited with the session */
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Runs the tsync-agent column. */
static void run_tsync_agent(const char *b, struct result *r)
{
	char ep[128];
	pid_t pid = bench_start_agent(b, 0, ep, sizeof(ep));
	const char *colon = strrchr(ep, ':');

	memset(r, 0, sizeof(*r));
	if (pid < 0 || !colon)
		return;
	record_once(atoi(colon + 1), r);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Prints one row. */
static void row(const char *name, const struct result *r)
{
	printf("%-34s %-4s %10.3f %9.3f %12lld %8d\n", name, r->ok ? "ok" : "FAIL",
	       r->first_s, r->total_s, r->spread_ns, r->nsamples);
	fflush(stdout);	/* rows as they come: a trace-cmd agent run takes minutes */
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	int reps = argc > 1 ? atoi(argv[1]) : 1, lock;
	int skip_tcmd = getenv("BENCH09_SKIP_TCMD_AGENT") != NULL;
	struct result tc = { 0 }, ts = { 0 };

	if (system("command -v trace-cmd >/dev/null 2>&1") ||
	    access("/sys/kernel/tracing/trace_marker_raw", W_OK)) {
		printf("bench_09_tcmd: skipped (no trace-cmd or no writable tracefs)\n");
		return 0;
	}
	lock = open(LOCK, O_RDWR | O_CREAT, 0644);
	printf("%-34s %-4s %10s %9s %12s %8s\n", "trace-cmd record -A against", "run",
	       "first s", "total s", "spread ns", "samples");
	for (int i = 0; i < (reps > 0 ? reps : 1); i++) {
		/* the lock per run, so other users wait minutes at most */
		if (lock >= 0)
			flock(lock, LOCK_EX);
		run_tsync_agent(b, &ts);
		if (lock >= 0)
			flock(lock, LOCK_UN);
		row("tsync-agent", &ts);
		if (skip_tcmd)
			continue;
		if (lock >= 0)
			flock(lock, LOCK_EX);
		run_tcmd_agent(&tc);
		if (lock >= 0)
			flock(lock, LOCK_UN);
		row("trace-cmd agent", &tc);
		if (ts.total_s > 0 && tc.total_s > 0)
			printf("ratio total (trace-cmd agent / tsync-agent): %.1fx\n",
			       tc.total_s / ts.total_s);
	}
	if (lock >= 0)
		close(lock);
	return 0;
}
