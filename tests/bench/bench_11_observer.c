// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of the recorder's observer effect and of the time it adds,
 * trace-cmd and tsync-host side by side in one run, runs alternating
 * (which tool goes first swaps every repetition):
 *
 *   host only    TOOL record [FLAGS] -e sched:sched_switch
 *                -e sched:sched_wakeup sleep 1
 *                on this (idle or shared) machine, twice per tool and
 *                repetition: with the tool's default filters and with
 *                --no-filter. trace-cmd gets -d -k (this kernel refuses
 *                the function tracer and set_ftrace_filter otherwise).
 *   one guest    TOOL record -A 127.0.0.1:PORT --name 127.0.0.1
 *                -e sched:sched_switch -e sched:sched_switch sleep 1:
 *                trace-cmd's host with trace-cmd's own agent, tsync-host
 *                with tsync-agent, a 2-CPU loopback guest (this kernel).
 *                trace-cmd gets -d -k --no-filter on both sides; Debian's
 *                3.1.6 runs under tests/shim/nodelay.so ($B/shim/, which
 *                sets TCP_NODELAY: standing in for trace-cmd >= 3.3;
 *                without it one record takes minutes, README,
 *                bench_09_tcmd). BENCH11_TCMD names
 *                another trace-cmd binary (then no shim); the table says
 *                which one ran.
 *
 * The recorder's threads are found in its trace (read with libtracecmd):
 * every pid from the recorder's own on that an event shows under the
 * recorder's name (the common pid's, prev/next of a switch, a wakeup's
 * target), except those an event shows as the command ("sleep": the
 * forked child carries the recorder's name until it becomes COMMAND).
 * The bench itself sleeps on a pidfd while the recorder runs, so none of
 * it is in the trace. So the machine must not start another process of
 * the recorder's name meanwhile (another test's), and pids must not wrap
 * during a run. In the --no-filter trace
 * (nothing of the recorder hidden) the bench counts the sched_switch
 * events whose prev_pid or next_pid is one of them and the sched_wakeup
 * events whose pid is; in the default trace, every event that names one
 * of them (what the user sees of the recorder). Recorder CPU is user +
 * sys of the recorder and its reaped children (wait4), the command's
 * included (sleep: ~1 ms). Wall is fork to exit (a pidfd wakes the
 * wait), against the command's own time (`sleep 1` alone) measured in the
 * same repetition. After every run the bench waits until no tsync-host
 * instance is left (tsync-host leaves the removal of its instance to a
 * process that outlives it by the kernel's 50-110 ms, and the next run
 * would otherwise start with its tail): that wait is printed as "its
 * instance outlives it" (trace-cmd records in the top instance: 0).
 *
 * Usage: bench_11_observer [REPS] (default 3); prints medians and ranges
 * (min-max). BENCH11_B2=DIR runs a second tsync build (DIR/tsync-host with
 * DIR/tsync-agent) beside the first in the same repetitions, the two
 * alternating, and prints its figures against the first's after the
 * table (a change measured against its baseline in one run). Holds
 * /run/lock/tsync-trace-cmd.lock over the trace-cmd runs (waiting for it
 * at most 10 s). Skips (exit 0) without trace-cmd or tracefs. Numbers
 * only: a benchmark never fails on timing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <trace-cmd.h>

#include "common/base/timeutil.h"
#include "tests/bench/bench_lib.h"

#define LOCK "/run/lock/tsync-trace-cmd.lock"
#define MAXREPS 50
#define MAXTIDS 256
#define COMM_LEN 15	/* of a task's name, without its NUL */

/* The recorder's tasks, as its trace names them: every pid from the
 * recorder's own on (@base) that an event shows under the recorder's name
 * (@comm), except those that an event shows as the command ("sleep"):
 * the forked child carries the recorder's name until it runs COMMAND. */
struct who {
	const char *comm;
	int base;
	int tid[MAXTIDS], n;
	int cmd[MAXTIDS], ncmd;
};

/* One measured figure over the repetitions. */
struct fig {
	double v[MAXREPS];
	int n;
};

/* The figures of one tool. */
struct tool {
	const char *name;
	struct fig sw, wk, left, cpu, wall, gwall, gone;
	int fails;
};

static void add(struct fig *f, double v)
{
	if (f->n < MAXREPS)
		f->v[f->n++] = v;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double med(struct fig *f)
{
	if (!f->n)
		return -1;
	qsort(f->v, (size_t)f->n, sizeof(f->v[0]), cmpd);
	return f->v[f->n / 2];
}

static bool has(const int *a, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (a[i] == x)
			return true;
	return false;
}

static void put(int *a, int *n, int x)
{
	if (!has(a, *n, x) && *n < MAXTIDS)
		a[(*n)++] = x;
}

/* Notes that an event shows task @pid named @comm. */
static void seen(struct who *w, const char *comm, int pid)
{
	if (!comm || pid < w->base)
		return;
	if (!strcmp(comm, "sleep"))
		put(w->cmd, &w->ncmd, pid);
	else if (!strncmp(comm, w->comm, COMM_LEN))	/* the kernel keeps 15 */
		put(w->tid, &w->n, pid);
}

/* True if @pid is one of the recorder's threads (not the command). */
static bool mine(const struct who *w, int pid)
{
	return has(w->tid, w->n, pid) && !has(w->cmd, w->ncmd, pid);
}

/* The figures counted by count_cb(). */
struct tally {
	struct who *w;
	bool second;	/* the counting pass; the first one finds the tasks */
	int sw, wk, left;
};

/* Field @name of @rec as a number, or -1. */
static int num(struct tep_event *ev, struct tep_record *rec, const char *name)
{
	unsigned long long v;

	return tep_get_field_val(NULL, ev, name, rec, &v, 0) ? -1 : (int)v;
}

/* Field @name of @rec as a string (a char array of the event), or NULL. */
static const char *str(struct tep_event *ev, struct tep_record *rec, const char *name,
		       char *buf, size_t cap)
{
	int len;
	const char *p = tep_get_field_raw(NULL, ev, name, rec, &len, 0);

	if (!p || len <= 0)
		return NULL;
	snprintf(buf, cap, "%.*s", len, p);
	return buf;
}

/* One event: notes its tasks (first pass) or counts it (second). */
static int count_cb(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct tep_event *ev = tep_find_event_by_record(tep, rec);
	struct tally *t = data;
	int cpid = tep_data_pid(tep, rec), hit = 0;
	char c1[32], c2[32];

	(void)cpu;
	if (!ev)
		return 0;
	if (!t->second) {
		seen(t->w, tep_data_comm_from_pid(tep, cpid), cpid);
		if (!strcmp(ev->name, "sched_switch")) {
			seen(t->w, str(ev, rec, "prev_comm", c1, sizeof(c1)),
			     num(ev, rec, "prev_pid"));
			seen(t->w, str(ev, rec, "next_comm", c2, sizeof(c2)),
			     num(ev, rec, "next_pid"));
		} else if (!strcmp(ev->name, "sched_wakeup")) {
			seen(t->w, str(ev, rec, "comm", c1, sizeof(c1)), num(ev, rec, "pid"));
		}
		return 0;
	}
	if (!strcmp(ev->name, "sched_switch")) {
		hit = mine(t->w, num(ev, rec, "prev_pid")) || mine(t->w, num(ev, rec, "next_pid"));
		t->sw += hit;
	} else if (!strcmp(ev->name, "sched_wakeup")) {
		hit = mine(t->w, num(ev, rec, "pid"));
		t->wk += hit;
	}
	t->left += hit || mine(t->w, cpid);
	return 0;
}

/* Counts in @file (read with libtracecmd) the switches and wakeups
 * involving the recorder's threads (@sw, @wk) and every event that names
 * one of them (@left). Returns 0, or -1 if @file cannot be read. */
static int count(const char *file, struct who *w, int *sw, int *wk, int *left)
{
	struct tally t = { .w = w };
	struct tracecmd_input *h;

	for (int pass = 0; pass < 2; pass++) {
		h = tracecmd_open(file, TRACECMD_FL_LOAD_NO_PLUGINS |
				  TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
		if (!h)
			return -1;
		t.second = pass;
		tracecmd_iterate_events(h, NULL, 0, count_cb, &t);
		tracecmd_close(h);
	}
	*sw = t.sw;
	*wk = t.wk;
	*left = t.left;
	return 0;
}

/* Takes the trace-cmd lock, waiting at most 10 s: a trace-cmd left running
 * by another run can hold it for good (an inherited descriptor); then the
 * bench goes on under the caller's lock only, and says so once. Returns
 * the descriptor to close, or -1. */
static int tcmd_lock(void)
{
	static bool said;
	int fd = open(LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

	for (int i = 0; fd >= 0 && i < 100; i++) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		usleep(100000);
	}
	if (!said)
		printf("  (%s is held by another process: going on without it)\n", LOCK);
	said = true;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Waits (at most 5 s) until no tsync-host instance is left in tracefs:
 * tsync-host leaves its removal to a process that outlives it, and the
 * kernel serializes instance changes, so the next run would start with
 * that removal's tail. Returns the seconds waited. */
static double wait_removed(void)
{
	int64_t t0 = tsync_now_ns();

	for (int i = 0; i < 1000; i++) {
		DIR *d = opendir("/sys/kernel/tracing/instances");
		struct dirent *e;
		bool left = false;

		while (d && (e = readdir(d)))
			left |= !strncmp(e->d_name, "tsync-host-", 11);
		if (d)
			closedir(d);
		if (!left)
			break;
		usleep(5000);
	}
	return (double)(tsync_now_ns() - t0) / 1e9;
}

/* Runs @argv in @dir to its end; wall (s, to its exit: a pidfd wakes
 * the wait), CPU (s), the threads seen and (@gone, may be NULL) how long
 * its instance outlived it. Returns 0, or -1 when it failed (its log
 * shown). */
static int run(char *const argv[], const char *dir, const char *env, double *wall,
	       double *cpu, pid_t *rpid, double *gone)
{
	double g;
	int pfd;
	char log[PATH_MAX];
	struct rusage ru;
	int status = 0;
	int64_t t0;
	pid_t pid, w;

	snprintf(log, sizeof(log), "%s/record.log", dir);
	t0 = tsync_now_ns();
	pid = bench_spawn(argv, dir, log, env);
	if (pid < 0)
		return -1;
	if (rpid)
		*rpid = pid;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while ((w = wait4(pid, &status, WNOHANG, &ru)) == 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };

		/* the bench sleeps while it runs: nothing of it in the trace */
		if (pfd < 0 || poll(&p, 1, -1) < 0)
			usleep(20000);
	}
	*wall = (double)(tsync_now_ns() - t0) / 1e9;
	if (pfd >= 0)
		close(pfd);
	g = wait_removed();
	if (gone)
		*gone = g;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	if (w != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		char cmd[PATH_MAX + 16];

		printf("  %s record failed:\n", argv[0]);
		fflush(stdout);
		snprintf(cmd, sizeof(cmd), "tail -4 %s", log);
		if (system(cmd))
			printf("  (no log)\n");
		return -1;
	}
	return 0;
}

/* One host-only record by @prog (@tcmd: trace-cmd) with or without
 * --no-filter into @tl. */
static void host_once(const char *prog, bool tcmd, bool nofilter, const char *dir,
		      struct tool *tl)
{
	char *argv[12], file[PATH_MAX];
	const char *slash = strrchr(prog, '/');
	struct who w = { .comm = slash ? slash + 1 : prog };
	double wall, cpu, gone;
	int n = 0, sw, wk, left, lock = -1;
	pid_t rpid = -1;

	argv[n++] = (char *)prog;
	argv[n++] = "record";
	if (tcmd) {
		argv[n++] = "-d";
		argv[n++] = "-k";
	}
	if (nofilter)
		argv[n++] = "--no-filter";
	argv[n++] = "-e";
	argv[n++] = "sched:sched_switch";
	argv[n++] = "-e";
	argv[n++] = "sched:sched_wakeup";
	argv[n++] = "sleep";
	argv[n++] = "1";
	argv[n] = NULL;
	snprintf(file, sizeof(file), "%s/trace.dat", dir);
	unlink(file);
	if (tcmd)
		lock = tcmd_lock();
	n = run(argv, dir, NULL, &wall, &cpu, &rpid, &gone);
	if (tcmd)
		bench_restore_tracefs();
	if (lock >= 0)
		close(lock);
	if (n) {
		tl->fails++;
		return;
	}
	w.base = rpid;
	if (count(file, &w, &sw, &wk, &left)) {
		printf("  %s: cannot read %s\n", prog, file);
		tl->fails++;
		return;
	}
	/* unfiltered, the recorder's switches are there: none found means
	 * the names did not match, not a recorder that never ran */
	if (nofilter && !w.n) {
		printf("  %s: none of its threads found in %s\n", prog, file);
		tl->fails++;
		return;
	}
	if (nofilter) {
		add(&tl->sw, sw);
		add(&tl->wk, wk);
	} else {
		add(&tl->left, left);
		add(&tl->cpu, cpu);
		add(&tl->wall, wall);
		add(&tl->gone, gone);
	}
}

/* Starts @agent (trace-cmd's when @tcmd) on a free loopback port. */
static pid_t start_agent(const char *agent, bool tcmd, const char *env, const char *dir,
			 int *port)
{
	char ps[16], log[PATH_MAX];
	char *targv[] = { (char *)agent, "agent", "-N", "127.0.0.1", "-p", ps, NULL };
	char *sargv[] = { (char *)agent, "-N", "127.0.0.1", "-p", ps, NULL };
	pid_t pid;

	*port = bench_free_port();
	snprintf(ps, sizeof(ps), "%d", *port);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	pid = bench_spawn(tcmd ? targv : sargv, "/tmp", log, env);
	for (int i = 0; pid > 0 && i < 1000; i++) {
		if (bench_listening(*port)) {
			usleep(100000);	/* trace-cmd's agent forks per connection */
			return pid;
		}
		usleep(10000);
	}
	if (pid > 0) {
		kill(-pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

/* One record of the loopback agent at @port by @prog into @tl. */
static void guest_once(const char *prog, bool tcmd, int port, const char *env,
		       const char *dir, struct tool *tl)
{
	char ep[64];
	char *targv[] = { (char *)prog, "record", "-d", "-k", "--no-filter", "-A", ep, "--name",
			  BENCH_TCMD_GUEST, "-d", "-k", "--no-filter", "-e", "sched:sched_switch",
			  "-e", "sched:sched_switch", "sleep", "1", NULL };
	char *sargv[] = { (char *)prog, "record", "-A", ep, "--name", BENCH_TCMD_GUEST,
			  "-e", "sched:sched_switch", "-e", "sched:sched_switch", "sleep", "1",
			  NULL };
	double wall, cpu;
	int lock = -1, ret;

	snprintf(ep, sizeof(ep), "127.0.0.1:%d", port);
	if (tcmd)
		lock = tcmd_lock();
	ret = run(tcmd ? targv : sargv, dir, env, &wall, &cpu, NULL, NULL);
	if (tcmd)
		bench_restore_tracefs();
	if (lock >= 0)
		close(lock);
	if (ret)
		tl->fails++;
	else
		add(&tl->gwall, wall);
}

/* The second build's runs of one repetition (BENCH11_B2): host only with
 * and without filters, then its loopback guest (agent @agent on @port). */
static void b2_runs(const char *host, pid_t agent, int port, const char *dir, struct tool *tl)
{
	host_once(host, false, false, dir, tl);
	host_once(host, false, true, dir, tl);
	if (agent > 0)
		guest_once(host, false, port, NULL, dir, tl);
}

/* "median unit (min-max)" of @f into @buf, or "-" without values. */
static void cell(struct fig *f, const char *unit, char *buf, size_t len)
{
	double m = med(f);

	if (!f->n)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3g%s (%.3g-%.3g)", m, unit, f->v[0], f->v[f->n - 1]);
}

/* One row: both tools, then tsync / trace-cmd, or both / @base. */
static void print_fig(const char *what, struct fig *a, struct fig *b, const char *unit,
		      double base)
{
	char ca[64], cb[64];
	double ma = med(a), mb = med(b);

	cell(a, unit, ca, sizeof(ca));
	cell(b, unit, cb, sizeof(cb));
	printf("  %-44s %-24s %-24s", what, ca, cb);
	if (base > 0 && a->n && b->n)
		printf(" %.2fx / %.2fx", ma / base, mb / base);
	else if (a->n && b->n && ma > 0)
		printf(" %.2fx", mb / ma);
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *b0 = getenv("B") ? getenv("B") : "build";
	const char *tcmd = getenv("BENCH11_TCMD") ? getenv("BENCH11_TCMD") : "trace-cmd";
	int reps = argc > 1 ? atoi(argv[1]) : 3;
	char b[PATH_MAX], host[PATH_MAX + 16], agent[PATH_MAX + 16], dir[] = "/tmp/bench11.XXXXXX";
	char shim[PATH_MAX + 16], pre[PATH_MAX + 32], cmd[PATH_MAX + 16];
	struct tool tc = { .name = "trace-cmd" }, ts = { .name = "tsync" }, t2 = { .name = "B2" };
	const char *b2 = getenv("BENCH11_B2");
	char host2[PATH_MAX + 16], agent2[PATH_MAX + 16], r2[PATH_MAX];
	struct fig own = { 0 };
	char *sleep_argv[] = { "sleep", "1", NULL };
	pid_t ta, sa, sa2 = -1;
	int tport, sport, sport2 = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (reps < 1 || reps > MAXREPS)
		reps = 3;
	if (access("/sys/kernel/tracing/trace", F_OK) || system("command -v trace-cmd >/dev/null")) {
		printf("bench_11_observer: skipped (needs tracefs and trace-cmd)\n");
		return 0;
	}
	if (!realpath(b0, b) || !mkdtemp(dir))
		return 1;
	snprintf(host, sizeof(host), "%s/tsync-host", b);
	snprintf(agent, sizeof(agent), "%s/tsync-agent", b);
	if (b2 && !realpath(b2, r2)) {
		printf("bench_11_observer: BENCH11_B2=%s: %s\n", b2, strerror(errno));
		return 1;
	}
	snprintf(host2, sizeof(host2), "%s/tsync-host", b2 ? r2 : b);
	snprintf(agent2, sizeof(agent2), "%s/tsync-agent", b2 ? r2 : b);
	pre[0] = '\0';
	snprintf(shim, sizeof(shim), "%s/shim/nodelay.so", b);
	if (!getenv("BENCH11_TCMD") && !access(shim, R_OK))
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", shim);
	else if (!getenv("BENCH11_TCMD"))
		printf("  (no %s: make build-tests builds it; trace-cmd's agent runs "
		       "without it)\n", shim);
	printf("bench_11_observer: %d repetitions, trace-cmd = %s%s\n", reps, tcmd,
	       pre[0] ? " (with its own agent under the NODELAY shim)" : "");
	snprintf(cmd, sizeof(cmd), "%s -h 2>&1 | grep -m1 version", tcmd);
	fflush(stdout);
	if (system(cmd))
		printf("  (version unknown)\n");
	ta = start_agent(tcmd, true, pre[0] ? pre : NULL, dir, &tport);
	sa = start_agent(agent, false, NULL, dir, &sport);
	if (b2) {
		printf("  second build (BENCH11_B2): %s\n", r2);
		sa2 = start_agent(agent2, false, NULL, dir, &sport2);
	}
	for (int r = 0; r < reps; r++) {
		double w, c;

		if (!run(sleep_argv, dir, NULL, &w, &c, NULL, NULL))
			add(&own, w);
		/* the second build first in every other repetition */
		if (b2 && r % 2 == 0)
			b2_runs(host2, sa2, sport2, dir, &t2);
		for (int k = 0; k < 2; k++) {
			bool first_tcmd = (r + k) % 2 == 0;

			host_once(first_tcmd ? tcmd : host, first_tcmd, false, dir,
				  first_tcmd ? &tc : &ts);
			host_once(first_tcmd ? tcmd : host, first_tcmd, true, dir,
				  first_tcmd ? &tc : &ts);
			if (first_tcmd && ta > 0)
				guest_once(tcmd, true, tport, pre[0] ? pre : NULL, dir, &tc);
			else if (!first_tcmd && sa > 0)
				guest_once(host, false, sport, NULL, dir, &ts);
		}
		if (b2 && r % 2)
			b2_runs(host2, sa2, sport2, dir, &t2);
	}
	if (ta > 0) {
		kill(-ta, SIGTERM);
		waitpid(ta, NULL, 0);
	}
	if (sa > 0) {
		kill(-sa, SIGTERM);
		waitpid(sa, NULL, 0);
	}
	if (sa2 > 0) {
		kill(-sa2, SIGTERM);
		waitpid(sa2, NULL, 0);
	}
	printf("\n  %-44s %-24s %-24s %s\n", "median (min-max)", "trace-cmd", "tsync",
	       "tsync / trace-cmd, or x the command");
	print_fig("switches involving the recorder's threads", &tc.sw, &ts.sw, "", 0);
	print_fig("wakeups of the recorder's threads", &tc.wk, &ts.wk, "", 0);
	print_fig("events naming them, default filters", &tc.left, &ts.left, "", 0);
	print_fig("recorder CPU (user+sys)", &tc.cpu, &ts.cpu, "s", 0);
	print_fig("wall, host only (x the command's own)", &tc.wall, &ts.wall, "s", med(&own));
	print_fig("wall, one loopback guest (x the command's)", &tc.gwall, &ts.gwall, "s",
		  med(&own));
	print_fig("its instance outlives it, host only", &tc.gone, &ts.gone, "s", 0);
	printf("  the command alone (sleep 1): %.3f s; failed runs: trace-cmd %d, tsync %d\n",
	       med(&own), tc.fails, ts.fails);
	if (b2) {
		printf("\n  %-44s %-24s %-24s %s\n", "median (min-max)", "tsync (BENCH11_B2)",
		       "tsync (B)", "B / B2, or x the command");
		print_fig("switches involving the recorder's threads", &t2.sw, &ts.sw, "", 0);
		print_fig("wakeups of the recorder's threads", &t2.wk, &ts.wk, "", 0);
		print_fig("events naming them, default filters", &t2.left, &ts.left, "", 0);
		print_fig("recorder CPU (user+sys)", &t2.cpu, &ts.cpu, "s", 0);
		print_fig("wall, host only (x the command's own)", &t2.wall, &ts.wall, "s",
			  med(&own));
		print_fig("wall, one loopback guest (x the command's)", &t2.gwall, &ts.gwall, "s",
			  med(&own));
		print_fig("its instance outlives it, host only", &t2.gone, &ts.gone, "s", 0);
		printf("  failed runs: BENCH11_B2 %d\n", t2.fails);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return 0;
}
