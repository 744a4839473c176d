// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_08_disturb: what syncing costs the guest during `tsync-host record`.
 *
 * The "guest" is a loopback tsync-agent in its own time namespace, started
 * fresh for every run so that wait4() on it returns exactly that run's CPU
 * time (user + system, every thread) and context switches. Each run records
 * for SECONDS with no events (the streams carry next to nothing, so the
 * agent's cost is the sync's) while a workload runs on CPU 0 and counts
 * what it got done; the workload is the recorded COMMAND, so the
 * recording lasts as long as it does. Two workloads:
 *
 *   cpu-bound    one process spinning (iterations per second)
 *   wake-ups     two processes passing a byte back and forth over pipes,
 *                both on CPU 0 (round trips per second, two wake-ups each):
 *                every sync probe on CPU 0 must slip in between them
 *
 * Three sync settings, alternated REPS times per workload:
 *
 *   two samples  --tsync-interval 3600000: one round per CPU at the start,
 *                one at the end (trace-cmd's default: two TIME_SHIFT samples)
 *   adaptive     the default (common/sync/sync_interval.h), adaptive rounds
 *   every 1 s    --tsync-interval 1000, the old default
 *
 * With BENCH08_BASE=DIR a fourth, "adaptive/base", runs the adaptive
 * setting with DIR/tsync-host and DIR/tsync-agent (another build; the
 * agent under DIR/helpers/timens_exec) in the same run, and the adaptive
 * setting's cost above two samples is printed as a ratio to it.
 *
 * "Two samples" is the baseline: its rounds run before the workload
 * starts and after it ends, so it is the recording without sync while the
 * workload runs (trace-cmd's default).
 *
 * Per workload and setting it prints, per second of recording, the agent's
 * CPU time, its wake-ups (voluntary context switches: it slept and was
 * woken) and preemptions (involuntary ones), the workload's preemptions,
 * the agent's CPU above "two samples" as a share of the guest's CPU
 * capacity (SECONDS x CPUs), and the workload's rate relative to "two
 * samples". Medians over the runs. Numbers only: it never fails on timing
 * (rates move with whatever else the machine runs).
 *
 * Usage: bench_08_disturb [SECONDS [REPS]]  (default 20 2: long enough for
 * the adaptive interval to grow). Needs root.
 * bench_08_disturb --spin|--pingpong SECONDS FILE is a workload.
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

#include "common/base/cpu.h"
#include "common/base/timeutil.h"
#include "tests/bench/bench_lib.h"

#define NSET 4
#define NLOAD 2
#define MAXREPS 50

/* The last runs only with BENCH08_BASE: the adaptive setting against the
 * agent of another build. */
static const char *const set_name[NSET] = { "two samples", "adaptive", "every 1 s",
					    "adaptive/base" };
static const char *const set_interval[NSET] = { "3600000", NULL, "1000", NULL };
static const char *const load_name[NLOAD] = { "cpu-bound", "wake-ups" };
static const char *const load_arg[NLOAD] = { "--spin", "--pingpong" };

/* Writes a workload's result: @n done, its involuntary context switches
 * (@ru plus @child's, may be NULL). Returns 0 or 1. */
static int put_result(const char *file, unsigned long long n, const struct rusage *child)
{
	struct rusage ru;
	long preempt;
	FILE *f;

	getrusage(RUSAGE_SELF, &ru);
	preempt = ru.ru_nivcsw + (child ? child->ru_nivcsw : 0);
	f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%llu %ld\n", n, preempt);
	return fclose(f) ? 1 : 0;
}

/* The CPU-bound workload: spins on CPU 0 for @secs. */
static int spin(double secs, const char *file)
{
	int64_t end = tsync_now_ns() + (int64_t)(secs * 1e9);
	unsigned long long n = 0;

	tsync_cpu_pin(0, NULL);
	while (tsync_now_ns() < end)
		for (int i = 0; i < 1000; i++) {
			__asm__ volatile("" ::: "memory");
			n++;
		}
	return put_result(file, n, NULL);
}

/* The wake-up-heavy workload: a byte back and forth between two processes
 * on CPU 0 over two pipes for @secs; counts round trips. */
static int pingpong(double secs, const char *file)
{
	int64_t end = tsync_now_ns() + (int64_t)(secs * 1e9);
	unsigned long long n = 0;
	struct rusage cru;
	int a[2], b[2];
	char c = 0;
	pid_t pid;

	tsync_cpu_pin(0, NULL);
	if (pipe(a) || pipe(b))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* echo until the parent closes its end */
		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1 && write(b[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	while (tsync_now_ns() < end)
		for (int i = 0; i < 64; i++, n++)
			if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
				return 1;
	close(a[1]);
	if (wait4(pid, NULL, 0, &cru) != pid)
		memset(&cru, 0, sizeof(cru));
	return put_result(file, n, &cru);
}

struct run {
	double cpu_ms_s;	/* agent CPU ms */
	double wake_s;		/* agent voluntary context switches (wake-ups) */
	double agent_pre_s;	/* agent involuntary context switches */
	double load_pre_s;	/* workload involuntary context switches */
	double rate;		/* workload iterations or round trips */
};

/* One recording of workload @w with setting @s; 0 or -1. */
static int one_run(const char *b, const char *self, int w, int s, double secs,
		   struct run *out)
{
	char ep[256], agentarg[300], host[256], secstr[32], dir[] = "/tmp/bench08.XXXXXX";
	char outf[300], cnt[300], tmp[512];
	const char *argv[20];
	struct rusage ru;
	unsigned long long n = 0;
	long preempt = 0;
	int c = 0, st;
	pid_t wrap, rec;
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	/* the last setting: host and agent of BENCH08_BASE */
	if (s == NSET - 1)
		b = getenv("BENCH08_BASE");
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
	argv[c++] = load_arg[w];
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
	if (!f || fscanf(f, "%llu %ld", &n, &preempt) != 2)
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
	out->wake_s = (double)ru.ru_nvcsw / secs;
	out->agent_pre_s = (double)ru.ru_nivcsw / secs;
	out->load_pre_s = (double)preempt / secs;
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

/* The runs of one workload and setting. */
struct series {
	int n;
	double cpu[MAXREPS], wake[MAXREPS], apre[MAXREPS], lpre[MAXREPS], rate[MAXREPS];
};

/* Prints the medians of workload @w's series @x[NSET]. */
static void report(int w, struct series *x, double secs, int reps, int ncpu)
{
	double m[NSET][5];

	printf("%s workload on CPU 0, %.0f s recordings, %d runs per setting, %d guest CPUs;\n"
	       "per second of recording, medians:\n", load_name[w], secs, reps, ncpu);
	printf("  %-13s %9s %9s %9s %9s %20s %9s\n", "sync", "agent CPU", "agent", "agent",
	       "workload", "agent CPU above", "workload");
	printf("  %-13s %9s %9s %9s %9s %20s %9s\n", "", "ms/s", "wake-ups", "preempt",
	       "preempt", "two samples", "rate");
	for (int s = 0; s < NSET; s++) {
		m[s][0] = median(x[s].cpu, x[s].n);
		m[s][1] = median(x[s].wake, x[s].n);
		m[s][2] = median(x[s].apre, x[s].n);
		m[s][3] = median(x[s].lpre, x[s].n);
		m[s][4] = median(x[s].rate, x[s].n);
	}
	for (int s = 0; s < NSET; s++) {
		if (!x[s].n || !x[0].n)
			continue;
		printf("  %-13s %9.3f %9.1f %9.1f %9.1f %11.4f%% of CPU %8.3fx\n", set_name[s],
		       m[s][0], m[s][1], m[s][2], m[s][3],
		       (m[s][0] - m[0][0]) / (1000.0 * ncpu) * 100,
		       m[0][4] ? m[s][4] / m[0][4] : 0);
	}
	if (x[0].n && x[1].n && x[NSET - 1].n && m[NSET - 1][0] != m[0][0] &&
	    m[NSET - 1][1] != m[0][1])
		printf("  adaptive / adaptive/base, above two samples: agent CPU %.2fx, "
		       "wake-ups %.2fx\n", (m[1][0] - m[0][0]) / (m[NSET - 1][0] - m[0][0]),
		       (m[1][1] - m[0][1]) / (m[NSET - 1][1] - m[0][1]));
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	static struct series x[NLOAD][NSET];
	double secs = 20;
	int reps = 2, ncpu = tsync_cpu_count();
	char self[512];
	ssize_t len;

	if (argc == 4 && !strcmp(argv[1], "--spin"))
		return spin(atof(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "--pingpong"))
		return pingpong(atof(argv[2]), argv[3]);
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
	printf("record of a loopback agent in a time namespace, no events\n");
	for (int w = 0; w < NLOAD; w++) {
		for (int r = 0; r < reps; r++) {
			for (int k = 0; k < NSET; k++) {
				int s = (k + r) % NSET;
				struct series *y = &x[w][s];
				struct run o;

				if (s == NSET - 1 && !getenv("BENCH08_BASE"))
					continue;

				if (one_run(b, self, w, s, secs, &o)) {
					printf("  %s, %s: a run failed\n", load_name[w], set_name[s]);
					continue;
				}
				y->cpu[y->n] = o.cpu_ms_s;
				y->wake[y->n] = o.wake_s;
				y->apre[y->n] = o.agent_pre_s;
				y->lpre[y->n] = o.load_pre_s;
				y->rate[y->n] = o.rate;
				y->n++;
			}
		}
		report(w, x[w], secs, reps, ncpu);
	}
	return 0;
}
