// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_07_agents: `tsync-host sync` of many agents at once, N = 1, 2, 4, 8
 * and 16, each agent in its own time namespace with a different known
 * CLOCK_MONOTONIC shift (k seconds + k*1111 ns for agent k), so every
 * offset has a truth.
 *
 * After one warm-up run of all agents, each run is the real command, `tsync-host
 * sync -C mono --stamp clock --json -A EP@gK ...` (adaptive rounds), timed
 * from fork to exit; its CPU time (user + system) comes from wait4(). Per N
 * it prints the median wall time to a full sync of every CPU of every
 * agent, its ratio to N = 1 and that ratio divided by N, the host CPU per
 * guest, and the worst |offset - truth| over all agents, CPUs and runs.
 * sync runs the agents in parallel (rounds that share a host CPU take
 * turns); the baseline "one by one" is the same N agents synced by N
 * commands of one agent each, back to back, in the same run.
 * The goal is a time growing no faster than guest CPUs / host
 * CPUs: a ratio / N of at most 1 / host CPUs here (every agent has as many
 * CPUs as the host, and one agent's CPUs are synced one after the other).
 *
 * Then `tsync-host record` of the same N agents (--duration 0.2): the time
 * from fork to its "recording" line, i.e. every guest connected, checked,
 * synced on every CPU and tracing, against N = 1 (ratio / N; guests
 * start in parallel), and the worst TIME_SHIFT offset (truth 0 there:
 * record stamps in trace clock terms). BENCH07_BASE_HOST=PATH times
 * another tsync-host the same way in the same run (a baseline build).
 *
 * Usage: bench_07_agents [REPS]  (runs per N, default 5). Needs root (time
 * namespaces, tracefs). Never fails on timing; exits non-zero only when it cannot
 * run.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "common/base/cpu.h"
#include "common/base/timeutil.h"
#include "tests/bench/bench_lib.h"

#define MAXA 16
#define SHIFT(k) ((long long)(k) * 1000000000LL + (long long)(k) * 1111LL)

struct agent {
	pid_t pid;
	int id;			/* K of its shift and name gK */
	char ep[256];
};

/* Checks every offset of agent gK (K the id of each of the @n agents @a)
 * in @json against -SHIFT(K); returns the worst |error| (ns), or -1 when
 * an agent or CPU is missing. */
static long long worst_error(const char *json, const struct agent *a, int n, int ncpus)
{
	long long worst = 0;

	for (int i = 0; i < n; i++) {
		int k = a[i].id;
		char key[32];
		const char *p, *end;
		int count = 0;

		snprintf(key, sizeof(key), "\"name\": \"g%d\"", k);
		p = strstr(json, key);
		if (!p)
			return -1;
		end = strstr(p + 1, "\"name\": \"");
		for (const char *q = strstr(p, "\"offset_ns\": "); q && (!end || q < end);
		     q = strstr(q + 1, "\"offset_ns\": ")) {
			long long e = llabs(strtoll(q + 13, NULL, 10) + SHIFT(k));

			worst = e > worst ? e : worst;
			count++;
		}
		if (count < ncpus)
			return -1;
	}
	return worst;
}

/* Runs one sync of @n agents from @a; fills wall and CPU time (ns) and
 * the worst error. Returns 0 or -1. */
static int run_sync(const char *b, const struct agent *a, int n, int64_t *wall,
		    int64_t *cpu, long long *worst)
{
	char host[256], *argv[8 + 2 * MAXA], names[MAXA][288];
	static char out[1 << 20];
	struct rusage ru;
	size_t len = 0;
	int p[2], st, c = 0;
	int64_t t0;
	ssize_t r;
	pid_t pid;

	snprintf(host, sizeof(host), "%s/tsync-host", b);
	argv[c++] = host;
	argv[c++] = (char *)"sync";
	argv[c++] = (char *)"-C";
	argv[c++] = (char *)"mono";
	argv[c++] = (char *)"--stamp";
	argv[c++] = (char *)"clock";
	argv[c++] = (char *)"--json";
	for (int k = 0; k < n; k++) {
		snprintf(names[k], sizeof(names[k]), "%s@g%d", a[k].ep, a[k].id);
		argv[c++] = (char *)"-A";
		argv[c++] = names[k];
	}
	argv[c] = NULL;
	if (pipe(p))
		return -1;
	t0 = tsync_now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv(host, argv);
		_exit(127);
	}
	close(p[1]);
	while ((r = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	close(p[0]);
	out[len] = '\0';
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*wall = tsync_now_ns() - t0;
	*cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	*worst = worst_error(out, a, n, tsync_cpu_count());
	return *worst < 0 ? -1 : 0;
}

/* Returns the worst |offset| of the "A..B" offset ranges in @out (record's
 * summaries), or -1 when there are fewer than @want. */
static long long worst_range(const char *out, int want)
{
	long long worst = 0, lo, hi;
	int count = 0;

	for (const char *p = strstr(out, ".."); p; p = strstr(p + 2, "..")) {
		const char *q = p;

		while (q > out && (q[-1] == '-' || (q[-1] >= '0' && q[-1] <= '9')))
			q--;
		if (sscanf(q, "%lld..%lld", &lo, &hi) != 2)
			continue;
		worst = llabs(lo) > worst ? llabs(lo) : worst;
		worst = llabs(hi) > worst ? llabs(hi) : worst;
		count++;
	}
	return count < want ? -1 : worst;
}

/* Runs `@host record -C mono --duration 0.2` of @n agents from @a, timing
 * fork to its "recording" line (every guest connected, synced and
 * tracing); fills that start time (ns) and the worst offset of the
 * TIME_SHIFT samples (truth 0: record stamps in trace clock terms).
 * Returns 0 or -1. */
static int run_record(const char *host, const struct agent *a, int n, int64_t *start,
		      long long *worst)
{
	char *argv[12 + 2 * MAXA], names[MAXA][288], dir[] = "/tmp/bench07.XXXXXX";
	char outf[64], line[1024], rm[96];
	static char out[1 << 16];
	int pe[2], po[2], st, c = 0;
	size_t len = 0;
	int64_t t0;
	ssize_t r;
	FILE *f;
	pid_t pid;

	if (!mkdtemp(dir) || pipe(pe))
		return -1;
	if (pipe(po)) {
		close(pe[0]);
		close(pe[1]);
		return -1;
	}
	snprintf(outf, sizeof(outf), "%s/trace.dat", dir);
	argv[c++] = (char *)host;
	argv[c++] = (char *)"record";
	argv[c++] = (char *)"-C";
	argv[c++] = (char *)"mono";
	argv[c++] = (char *)"-o";
	argv[c++] = outf;
	argv[c++] = (char *)"--duration";
	argv[c++] = (char *)"0.2";
	for (int k = 0; k < n; k++) {
		snprintf(names[k], sizeof(names[k]), "%s@g%d", a[k].ep, a[k].id);
		argv[c++] = (char *)"-A";
		argv[c++] = names[k];
	}
	argv[c] = NULL;
	*start = 0;
	t0 = tsync_now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execv(host, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	f = fdopen(pe[0], "r");
	while (f && fgets(line, sizeof(line), f))
		if (!*start && strstr(line, "tsync-host record: recording"))
			*start = tsync_now_ns() - t0;
	if (f)
		fclose(f);
	else
		close(pe[0]);
	while ((r = read(po[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	close(po[0]);
	out[len] = '\0';
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	if (system(rm))
		fprintf(stderr, "bench_07_agents: could not remove %s\n", dir);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) ||
	    !*start)
		return -1;
	/* one range per CPU of the host's own and of every guest's summary:
	 * the guests' are the ones with samples */
	*worst = worst_range(out, n * tsync_cpu_count());
	return *worst < 0 ? -1 : 0;
}

/* Sort helper. */
static int cmp64(const void *x, const void *y)
{
	int64_t u = *(const int64_t *)x, v = *(const int64_t *)y;

	return u < v ? -1 : u > v;
}

/* Prints, per N, the median time `record` takes to start N guests, its
 * ratios, the worst offset, and the same for BENCH07_BASE_HOST (another
 * tsync-host, e.g. one that starts guests one after the other) in the
 * same run when set. Returns 0 or 1. */
static int record_starts(const char *b, const struct agent *a, int reps)
{
	static const int ns[] = { 1, 2, 4, 8, 16 };
	const char *base_host = getenv("BENCH07_BASE_HOST");
	char host[256];
	double base = 0;

	snprintf(host, sizeof(host), "%s/tsync-host", b);
	printf("tsync-host record of N agents (-C mono, --duration 0.2), %d runs per N;\n"
	       "start = fork to \"recording\" (every guest connected, synced, tracing), medians:\n",
	       reps);
	printf("  %3s %10s %9s %11s %12s", "N", "start ms", "ratio", "ratio / N", "worst err ns");
	if (base_host)
		printf(" %14s %9s", "base start ms", "/ base");
	printf("\n");
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int64_t t[1000], tb[1000], x;
		long long worst = 0, w;
		int ok = 0, okb = 0;

		for (int r = 0; r < reps; r++) {
			if (!run_record(host, a, ns[i], &x, &w)) {
				t[ok++] = x;
				worst = w > worst ? w : worst;
			}
			if (base_host && !run_record(base_host, a, ns[i], &x, &w))
				tb[okb++] = x;
		}
		if (ok < reps)
			printf("  N=%d: %d of %d records failed or lacked an offset\n", ns[i],
			       reps - ok, reps);
		if (!ok)
			return 1;
		qsort(t, (size_t)ok, sizeof(t[0]), cmp64);
		qsort(tb, (size_t)okb, sizeof(tb[0]), cmp64);
		if (ns[i] == 1)
			base = (double)t[ok / 2];
		printf("  %3d %10.1f %8.2fx %10.2fx %12lld", ns[i], t[ok / 2] / 1e6,
		       base ? t[ok / 2] / base : 0, base ? t[ok / 2] / base / ns[i] : 0, worst);
		if (base_host && okb)
			printf(" %14.1f %8.2fx", tb[okb / 2] / 1e6,
			       (double)t[ok / 2] / (double)tb[okb / 2]);
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	int reps = argc > 1 ? atoi(argv[1]) : 5, started = 0, ret = 0;
	static const int ns[] = { 1, 2, 4, 8, 16 };
	struct agent a[MAXA];
	double base = 0;

	if (reps < 1 || reps > 1000) {
		fprintf(stderr, "usage: bench_07_agents [REPS]\n");
		return 2;
	}
	for (; started < MAXA; started++) {
		a[started].id = started;
		a[started].pid = bench_start_agent(b, SHIFT(started), a[started].ep,
						   sizeof(a[started].ep));
		if (a[started].pid < 0) {
			fprintf(stderr, "bench_07_agents: cannot start agent %d from %s\n",
				started, b);
			ret = 1;
			goto out;
		}
	}
	{	/* warm-up: caches, the agents' first sessions */
		int64_t w, c;
		long long e;

		run_sync(b, a, MAXA, &w, &c, &e);
	}
	printf("tsync-host sync of N agents (each %d CPUs, own time namespace), adaptive\n"
	       "rounds, %d runs per N, on %d host CPUs; medians:\n", tsync_cpu_count(), reps,
	       tsync_cpu_count());
	printf("  %3s %10s %9s %11s %14s %12s %14s %10s\n", "N", "wall ms", "ratio", "ratio / N",
	       "host CPU/guest", "worst err ns", "one by one ms", "/ parallel");
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int64_t wall[1000], cpu[1000], seq[1000];
		long long worst = 0, w;
		int ok = 0, nseq = 0;

		for (int r = 0; r < reps; r++) {
			int64_t sw = 0, x, c;
			int k;

			if (run_sync(b, a, ns[i], &wall[ok], &cpu[ok], &w)) {
				printf("  N=%d: a run failed or lacked an offset\n", ns[i]);
				continue;
			}
			worst = w > worst ? w : worst;
			ok++;
			/* the baseline: the same agents, one command each */
			for (k = 0; k < ns[i] && !run_sync(b, &a[k], 1, &x, &c, &w); k++) {
				sw += x;
				worst = w > worst ? w : worst;
			}
			if (k == ns[i])
				seq[nseq++] = sw;
		}
		if (!ok)
			continue;
		qsort(wall, (size_t)ok, sizeof(wall[0]), cmp64);
		qsort(cpu, (size_t)ok, sizeof(cpu[0]), cmp64);
		qsort(seq, (size_t)nseq, sizeof(seq[0]), cmp64);
		if (ns[i] == 1)
			base = (double)wall[ok / 2];
		printf("  %3d %10.2f %8.2fx %10.2fx %11.2f ms %12lld %14.2f %9.2fx\n", ns[i],
		       wall[ok / 2] / 1e6, base ? wall[ok / 2] / base : 0,
		       base ? wall[ok / 2] / base / ns[i] : 0, cpu[ok / 2] / 1e6 / ns[i], worst,
		       nseq ? seq[nseq / 2] / 1e6 : 0,
		       nseq ? (double)seq[nseq / 2] / (double)wall[ok / 2] : 0);
	}
	ret = record_starts(b, a, reps);
out:
	for (int k = 0; k < started; k++)
		kill(a[k].pid, SIGTERM);
	for (int k = 0; k < started; k++)
		waitpid(a[k].pid, NULL, 0);
	return ret;
}
