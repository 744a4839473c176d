// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_08_disturb: what syncing costs the guest during `tsync-host record`.
 *
 * The "guest" is a loopback tsync-agent in its own time namespace, started
 * fresh for every run so that wait4() on it returns exactly that run's CPU
 * time (user + system, every thread) and context switches. Each run records
 * for SECONDS with no events (the streams carry next to nothing, so the
 * agent's cost is the sync's) while a CPU-bound workload spins on CPU 0 and
 * counts its iterations; the workload is the recorded COMMAND, so the
 * recording lasts as long as it does. Three sync settings, alternated REPS
 * times:
 *
 *   two samples  --tsync-interval 3600000: one round per CPU at the start,
 *                one at the end (trace-cmd's default: two TIME_SHIFT samples)
 *   adaptive     the default (host/sync_interval.h), adaptive rounds
 *   every 1 s    --tsync-interval 1000, the old default
 *
 * Per setting it prints the agent's CPU time and context switches per
 * second of recording, the part of that above "two samples" as a share of
 * the guest's CPU capacity (SECONDS x CPUs), and the workload's iterations
 * per second relative to "two samples". Medians over the runs. Numbers only:
 * it never fails on timing (the workload's rate moves with whatever else
 * the machine runs).
 *
 * Usage: bench_08_disturb [SECONDS [REPS]]  (default 6 3). Needs root.
 * bench_08_disturb --spin SECONDS FILE is the workload.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "common/cpu.h"
#include "common/timeutil.h"
#include "tests/bench/bench_lib.h"

#define NSET 3
#define MAXREPS 50

static const char *const set_name[NSET] = { "two samples", "adaptive", "every 1 s" };
static const char *const set_interval[NSET] = { "3600000", NULL, "1000" };

/* The workload: spins on CPU 0 for @secs, writes the iteration count. */
static int spin(double secs, const char *file)
{
	int64_t end = tsync_now_ns() + (int64_t)(secs * 1e9);
	unsigned long long n = 0;
	FILE *f;

	tsync_cpu_pin(0, NULL);
	while (tsync_now_ns() < end)
		for (int i = 0; i < 1000; i++) {
			__asm__ volatile("" ::: "memory");
			n++;
		}
	f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%llu\n", n);
	return fclose(f) ? 1 : 0;
}

struct run {
	double cpu_ms_s;	/* agent CPU ms per second of recording */
	double csw_s;		/* agent context switches per second */
	double rate;		/* workload iterations per second */
};

/* One recording with setting @s; 0 or -1. */
static int one_run(const char *b, const char *self, int s, double secs, struct run *out)
{
	char ep[256], agentarg[300], host[256], secstr[32], dir[] = "/tmp/bench08.XXXXXX";
	char outf[300], cnt[300], tmp[512];
	const char *argv[20];
	struct rusage ru;
	unsigned long long n = 0;
	int c = 0, st;
	pid_t wrap, rec;
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	wrap = bench_start_agent(b, 12345678901LL, ep, sizeof(ep));
	if (wrap < 0)
		return -1;
	snprintf(host, sizeof(host), "%s/tsync-host", b);
	snprintf(agentarg, sizeof(agentarg), "%s@g", ep);
	snprintf(outf, sizeof(outf), "%s/trace.dat", dir);
	snprintf(cnt, sizeof(cnt), "%s/count", dir);
	snprintf(secstr, sizeof(secstr), "%.3f", secs);
	argv[c++] = host;
	argv[c++] = "record";
	argv[c++] = "-o";
	argv[c++] = outf;
	if (set_interval[s]) {
		argv[c++] = "--tsync-interval";
		argv[c++] = set_interval[s];
	}
	argv[c++] = "-A";
	argv[c++] = agentarg;
	argv[c++] = "--";
	argv[c++] = self;
	argv[c++] = "--spin";
	argv[c++] = secstr;
	argv[c++] = cnt;
	argv[c] = NULL;
	rec = fork();
	if (rec == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(host, (char **)argv);
		_exit(127);
	}
	st = -1;
	if (rec > 0)
		waitpid(rec, &st, 0);
	kill(wrap, SIGTERM);
	/* timens_exec reaps the agent: its children's rusage is the agent's */
	if (wait4(wrap, NULL, 0, &ru) != wrap)
		memset(&ru, 0, sizeof(ru));
	f = fopen(cnt, "r");
	if (!f || fscanf(f, "%llu", &n) != 1)
		n = 0;
	if (f)
		fclose(f);
	snprintf(tmp, sizeof(tmp), "rm -rf '%s'", dir);
	if (system(tmp))
		fprintf(stderr, "bench_08_disturb: could not remove %s\n", dir);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || !n)
		return -1;
	/* wait4 on the wrapper: RUSAGE of the wrapper plus its reaped agent */
	out->cpu_ms_s = ((double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3) / secs;
	out->csw_s = (double)(ru.ru_nvcsw + ru.ru_nivcsw) / secs;
	out->rate = (double)n / secs;
	return 0;
}

/* Sort helper. */
static int cmpd(const void *x, const void *y)
{
	double u = *(const double *)x, v = *(const double *)y;

	return u < v ? -1 : u > v;
}

/* Returns the median of @n values (sorts them). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmpd);
	return n ? v[n / 2] : 0;
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	double secs = 6, cpu[NSET][MAXREPS], csw[NSET][MAXREPS], rate[NSET][MAXREPS];
	double mc[NSET], ms[NSET], mr[NSET];
	int reps = 3, nok[NSET] = { 0 }, ncpu = tsync_cpu_count();
	char self[512];
	ssize_t len;

	if (argc == 4 && !strcmp(argv[1], "--spin"))
		return spin(atof(argv[2]), argv[3]);
	if (argc > 1)
		secs = atof(argv[1]);
	if (argc > 2)
		reps = atoi(argv[2]);
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (secs < 1 || secs > 3600 || reps < 1 || reps > MAXREPS || len <= 0) {
		fprintf(stderr, "usage: bench_08_disturb [SECONDS [REPS]]\n");
		return 2;
	}
	self[len] = '\0';
	for (int r = 0; r < reps; r++) {
		for (int k = 0; k < NSET; k++) {
			int s = (k + r) % NSET;
			struct run x;

			if (one_run(b, self, s, secs, &x)) {
				printf("  %s: a run failed\n", set_name[s]);
				continue;
			}
			cpu[s][nok[s]] = x.cpu_ms_s;
			csw[s][nok[s]] = x.csw_s;
			rate[s][nok[s]] = x.rate;
			nok[s]++;
		}
	}
	printf("record of a loopback agent in a time namespace, no events, %.0f s with a\n"
	       "CPU-bound workload on CPU 0, %d runs per setting, %d guest CPUs; medians:\n",
	       secs, reps, ncpu);
	printf("  %-12s %14s %12s %22s %16s\n", "sync", "agent CPU ms/s", "ctxsw/s",
	       "above two samples", "workload rate");
	for (int s = 0; s < NSET; s++) {
		mc[s] = median(cpu[s], nok[s]);
		ms[s] = median(csw[s], nok[s]);
		mr[s] = median(rate[s], nok[s]);
	}
	for (int s = 0; s < NSET; s++) {
		if (!nok[s] || !nok[0])
			continue;
		printf("  %-12s %14.3f %12.1f %14.4f%% of CPU %15.3fx\n", set_name[s], mc[s], ms[s],
		       (mc[s] - mc[0]) / (1000.0 * ncpu) * 100, mr[0] ? mr[s] / mr[0] : 0);
	}
	return 0;
}
