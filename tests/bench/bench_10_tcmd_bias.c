// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of the bias of trace-cmd's time-sync protocol, every pairing
 * side by side in one run, on one kernel (host and guest are one machine
 * over loopback, so the true offset is 0). Two generations of trace-cmd:
 *
 *   old  Debian's trace-cmd 3.1.6 (Nagle on: it writes a message in two
 *        writes; against itself a record takes minutes, so its own pair
 *        runs under an LD_PRELOAD shim setting TCP_NODELAY)
 *   new  trace-cmd >= 3.3, which sets TCP_NODELAY itself: the one
 *        scripts/build-tcmd-new builds ($B/tcmd-new/prefix/bin/trace-cmd,
 *        or $TCMD_NEW); without it, 3.1.6 under the shim stands in, and
 *        the rows say so
 *
 * Rows (host + agent):
 *   cc    trace-cmd + trace-cmd (old under the shim; new as it is)
 *   ct    trace-cmd host + tsync-agent
 *   tc    tsync-host -A tcmd: + trace-cmd agent
 *   tt    tsync-host -A tcmd: + tsync-agent (tsync with tsync over
 *         trace-cmd's protocol)
 *   own   tsync-host + tsync-agent (tsync's own protocol): the reference
 *
 * Every row with a tsync side runs twice: TCP_QUICKACK as tsync decides
 * it (re-armed only once the peer is seen waiting for an ACK) and
 * TSYNC_TCMD_QUICKACK=always (re-armed on every message, the old way);
 * the "acks" column says how many of the row's runs had tsync decide to
 * re-arm (its debug line "waits for our ACKs", counted in the logs).
 * Each run records `sleep 1` (-C local -d -k --no-filter, sched_switch:
 * -C because trace-cmd's host, without it, stamps in whatever clock a
 * clock_synch-N instance left in tracefs has; one left with x86-tsc made
 * its offsets hours off); the
 * offsets are the guest file's TIME_SHIFT (Debian's trace-cmd dump
 * --options), both CPUs, all samples. Prints per row the median and range
 * of the offsets, the median |offset| and its ratio to tsync's own
 * protocol's, and last the mixed pairs against trace-cmd with itself.
 *
 * With BENCH10_B2 naming another build directory (say, of the code before
 * a change), its tsync-host and tsync-agent run as one more side, "tsync
 * (B2)", QUICKACK as it decides, in the mixed rows and with itself: a
 * before-and-after comparison in one run, each against the same
 * trace-cmd-with-itself rows.
 *
 * With BENCH10_NAGLE set, one row more: Debian's 3.1.6 with itself as it
 * ships (no shim, Nagle on both sides), which takes about 2 minutes a
 * record here, and the mixed pairs are also put against it: what a user
 * of 3.1.6 gets from trace-cmd alone.
 *
 * Environment: B (build dir, default build), BENCH10_REPS (records per
 * row, default 3), TCMD_NEW, BENCH10_B2, BENCH10_NAGLE, BENCH10_KEEP (keep
 * the scratch directory).
 * The shim is tests/shim/nodelay.c, which the Makefile builds. Holds
 * /run/lock/tsync-trace-cmd.lock over the run. Skips (exit 0) without
 * trace-cmd or tracefs. Numbers only: it never fails on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common/base/timeutil.h"
#include "tests/bench/bench_lib.h"

#define LOCK "/run/lock/tsync-trace-cmd.lock"
#define MAXOFF 8192

/* Who runs one side of a pairing. */
enum side {
	OLD,		/* Debian's trace-cmd 3.1.6 as it is */
	OLD_SHIM,	/* the same under the NODELAY shim */
	NEW,		/* trace-cmd >= 3.3 (or OLD_SHIM standing in) */
	TS,		/* tsync, TCP_QUICKACK as it decides */
	TS_ALWAYS,	/* tsync, TSYNC_TCMD_QUICKACK=always */
	TS_B2,		/* tsync from $BENCH10_B2, QUICKACK as it decides */
	NSIDES
};

struct row {
	const char *name;
	enum side host, agent;
	bool own;		/* tsync's own protocol (no tcmd: prefix) */
	bool b2;		/* runs with BENCH10_B2 only */
	bool nagle;		/* runs with BENCH10_NAGLE only */
	long long off[MAXOFF];
	int n, fails;
	const char *acks;	/* with a tsync side deciding: did it re-arm */
};

/* How a side runs: the trace-cmd program (NULL: tsync's), its
 * environment additions and, for tsync, another build directory than
 * the benchmark's (NULL: that one). */
struct runner {
	const char *tcmd;
	char **env;
	const char *b;
};

/* Runs @argv in @dir, output to @log, with @env (NULL-terminated
 * "NAME=VALUE" list) added; returns the pid or -1. */
static pid_t spawn(char *const argv[], const char *dir, const char *log, char *const env[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setpgid(0, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		if (dir && chdir(dir))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Adds the TIME_SHIFT offsets of @file to @r. */
static void read_offsets(const char *file, struct row *r)
{
	char cmd[PATH_MAX + 80], line[512];
	long long off;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "trace-cmd dump --options -i %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "[offset * scaling") && sscanf(line, " %lld", &off) == 1 &&
		    r->n < MAXOFF)
			r->off[r->n++] = off;
	pclose(p);
}

/* Starts the agent @r (a trace-cmd, or @b/tsync-agent with @extra as its
 * last argument if not NULL) on a free port, its log @dir/@log; returns
 * the pid (its own process group) and the port, or -1. */
static pid_t start_agent(const char *b, const struct runner *r, const char *extra,
			 const char *dir, const char *logname, int *port)
{
	char ps[16], prog[PATH_MAX], log[PATH_MAX];
	char *targv[] = { (char *)r->tcmd, "agent", "-N", "127.0.0.1", "-p", ps, NULL };
	char *sargv[] = { prog, "-N", "127.0.0.1", "-p", ps, (char *)extra, NULL };
	pid_t pid;

	*port = bench_free_port();
	snprintf(ps, sizeof(ps), "%d", *port);
	snprintf(prog, sizeof(prog), "%s/tsync-agent", r->b ? r->b : b);
	snprintf(log, sizeof(log), "%s/%s", dir, logname);
	pid = spawn(r->tcmd ? targv : sargv, "/tmp", log, r->env);
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

static void stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* One record by host @h (a trace-cmd, or @b/tsync-host with @verbose
 * and, unless @own, tcmd: before the address) of the agent at @port; its
 * log @dir/rec/record.log; offsets into @r (NULL: none kept). Returns 0,
 * or -1 if it failed. */
static int record_once(const char *b, const char *dir, const struct runner *h, bool own,
		       bool verbose, int port, struct row *r)
{
	char prog[PATH_MAX], ep[64], rdir[PATH_MAX], guest[PATH_MAX + 32], log[PATH_MAX + 32];
	char *argv[] = { prog, "record", verbose ? "--verbose=debug" : "-q", "-C", "local",
			 "-d", "-k", "--no-filter", "-A", ep, "--name", BENCH_TCMD_GUEST, "-d", "-k",
			 "--no-filter", "-e", "sched:sched_switch", "sleep", "1", NULL };
	int status = 0;
	pid_t pid;

	if (h->tcmd)
		snprintf(prog, sizeof(prog), "%s", h->tcmd);
	else
		snprintf(prog, sizeof(prog), "%s/tsync-host", h->b ? h->b : b);
	snprintf(ep, sizeof(ep), "%s127.0.0.1:%d", h->tcmd || own ? "" : "tcmd:", port);
	snprintf(rdir, sizeof(rdir), "%s/rec", dir);
	if (mkdir(rdir, 0755) && errno != EEXIST)
		return -1;
	snprintf(guest, sizeof(guest), "%s/trace-" BENCH_TCMD_GUEST ".dat", rdir);
	snprintf(log, sizeof(log), "%s/record.log", rdir);
	unlink(guest);
	pid = spawn(argv, rdir, log, h->env);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (h->tcmd)
		bench_restore_tracefs();
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		char cmd[PATH_MAX + 64];

		printf("  %s: a record failed:\n", r ? r->name : "a verbose run");
		fflush(stdout);
		snprintf(cmd, sizeof(cmd), "tail -3 %s", log);
		if (system(cmd))
			printf("  (no log)\n");
		if (r)
			r->fails++;
		return -1;
	}
	if (r)
		read_offsets(guest, r);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Median of |offset| of @r (sorted copy), or -1 without samples. */
static double med_abs(const struct row *r)
{
	static long long a[MAXOFF];

	if (!r->n)
		return -1;
	for (int i = 0; i < r->n; i++)
		a[i] = llabs(r->off[i]);
	qsort(a, (size_t)r->n, sizeof(a[0]), cmp);
	return (double)a[r->n / 2];
}

/* Median offset of @r (sorted copy), 0 without samples. */
static double med(const struct row *r)
{
	static long long a[MAXOFF];

	if (!r->n)
		return 0;
	memcpy(a, r->off, sizeof(a[0]) * (size_t)r->n);
	qsort(a, (size_t)r->n, sizeof(a[0]), cmp);
	return (double)a[r->n / 2];
}

/* True if the file @path has the line part @what. */
static bool log_has(const char *path, const char *what)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(path, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void print_row(struct row *r, double ref)
{
	double ma = med_abs(r);

	if (!r->n) {
		printf("  %-52s no samples (%d failed)\n", r->name, r->fails);
		return;
	}
	qsort(r->off, (size_t)r->n, sizeof(r->off[0]), cmp);
	printf("  %-52s %5d %8.2f %8.2f..%-8.2f %8.2f %6.1fx  %s%s\n", r->name, r->n,
	       r->off[r->n / 2] / 1e3, r->off[0] / 1e3, r->off[r->n - 1] / 1e3, ma / 1e3,
	       ref > 0 ? ma / ref : 0.0, r->acks ? r->acks : "-",
	       r->fails ? " (some failed)" : "");
}

/* The row with host @h and agent @a (not tsync's own protocol), or NULL. */
static struct row *find_row(struct row *rows, size_t n, enum side h, enum side a)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].host == h && rows[i].agent == a && !rows[i].own)
			return &rows[i];
	return NULL;
}

/* Runs every row whose agent is @a, @reps times interleaved. */
static void agent_rows(const char *b, const char *dir, const struct runner *run, enum side a,
		       struct row *rows, size_t nrows, int reps)
{
	bool any = false;
	int port;
	pid_t ag;

	for (size_t i = 0; i < nrows; i++)
		any |= rows[i].agent == a;
	if (!any)
		return;
	ag = start_agent(b, &run[a], NULL, dir, "agent.log", &port);
	if (ag < 0) {
		printf("  cannot start the agent of side %d\n", a);
		return;
	}
	for (int i = 0; i < reps; i++)
		for (size_t k = 0; k < nrows; k++)
			if (rows[k].agent == a) {
				bench_wait_no_child(ag);
				(void)record_once(b, dir, &run[rows[k].host], rows[k].own, false,
						  port, &rows[k]);
			}
	stop(ag);
}

/* One run more of row @r with tsync's deciding side(s) at debug level:
 * did they re-arm TCP_QUICKACK ("waits for our ACKs")? Into r->acks. */
static void ack_decision(const char *b, const char *dir, const struct runner *run,
			 struct row *r)
{
	char alog[PATH_MAX + 16], hlog[PATH_MAX + 32];
	bool hv = r->host == TS, av = r->agent == TS, ha, aa;
	int port;
	pid_t ag;

	if (r->own || (!hv && !av))
		return;
	ag = start_agent(b, &run[r->agent], av ? "-v" : NULL, dir, "agentv.log", &port);
	if (ag < 0)
		return;
	bench_wait_no_child(ag);
	if (record_once(b, dir, &run[r->host], false, hv, port, NULL)) {
		stop(ag);
		return;
	}
	stop(ag);
	snprintf(alog, sizeof(alog), "%s/agentv.log", dir);
	snprintf(hlog, sizeof(hlog), "%s/rec/record.log", dir);
	ha = hv && log_has(hlog, "waits for our ACKs");
	aa = av && log_has(alog, "waits for our ACKs");
	if (hv && av)
		r->acks = ha ? (aa ? "re-armed: host, agent" : "re-armed: host")
			     : (aa ? "re-armed: agent" : "not re-armed");
	else
		r->acks = (hv ? ha : aa) ? "re-armed" : "not re-armed";
}

/* The mixed pairs of generation @gen with tsync side @ts against
 * trace-cmd with itself as side @self runs it (3.1.6's under the shim,
 * or as it ships, Nagle on, with BENCH10_NAGLE: minutes a record). */
static void print_mixed(struct row *rows, size_t n, enum side gen, enum side self,
			enum side ts, const char *label)
{
	struct row *cc = find_row(rows, n, self, self), *ct = find_row(rows, n, gen, ts),
		   *tc = find_row(rows, n, ts, gen);
	double c = cc ? med_abs(cc) : -1;

	if (c <= 0)
		return;
	printf("  %s: trace-cmd with itself median %+.2f us, med|off| %.2f us; trace-cmd "
	       "host + %s-agent %+.2f us, %.3gx; %s-host + trace-cmd agent %+.2f us, %.3gx\n",
	       label, med(cc) / 1e3, c / 1e3, ts == TS_B2 ? "tsync (B2)" : "tsync",
	       ct ? med(ct) / 1e3 : 0.0, ct && ct->n ? med_abs(ct) / c : 0.0,
	       ts == TS_B2 ? "tsync (B2)" : "tsync", tc ? med(tc) / 1e3 : 0.0,
	       tc && tc->n ? med_abs(tc) / c : 0.0);
}

/* The trace-cmd >= 3.3 to compare with: $TCMD_NEW, else what
 * scripts/build-tcmd-new built under @b, else NULL. Its version into @ver. */
static const char *new_tcmd(const char *b, char *path, size_t len, char *ver, size_t vlen)
{
	char cmd[2 * PATH_MAX], abs[PATH_MAX];
	FILE *p;
	int n;

	/* absolute: the sides run in the scratch directory */
	if (getenv("TCMD_NEW"))
		n = realpath(getenv("TCMD_NEW"), abs) ? snprintf(path, len, "%s", abs) : -1;
	else
		n = snprintf(path, len, "%s/tcmd-new/prefix/bin/trace-cmd", b);
	if (n < 0 || (size_t)n >= len || access(path, X_OK))
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s --version 2>&1", path);
	snprintf(ver, vlen, "trace-cmd ?");
	p = popen(cmd, "r");
	while (p && fgets(cmd, sizeof(cmd), p)) {
		char *v = strstr(cmd, "version ");

		if (v) {
			v[8 + strcspn(v + 8, " \n")] = 0;
			snprintf(ver, vlen, "trace-cmd %s", v + 8);
			break;
		}
	}
	if (p)
		pclose(p);
	return path;
}

int main(void)
{
	const char *b0 = getenv("B") ? getenv("B") : "build", *nt;
	int reps = getenv("BENCH10_REPS") ? atoi(getenv("BENCH10_REPS")) : 3;
	char b[PATH_MAX], dir[] = "/tmp/bench10.XXXXXX", shim[PATH_MAX + 16], pre[PATH_MAX + 32];
	char cmd[3 * PATH_MAX], newpath[PATH_MAX + 64], ver[64], nl[64];
	static char always[] = "TSYNC_TCMD_QUICKACK=always";
	/* tcmd: to a tsync-agent keeps trace-cmd's protocol (host/peer/peer_tcmd.c) */
	static char keep[] = "TSYNC_TCMD_KEEP=1";
	static char *none[] = { NULL }, *kp[] = { keep, NULL }, *kpal[] = { keep, always, NULL };
	static char *sh[2];
	static struct row rows[] = {
		{ .host = OLD_SHIM, .agent = OLD_SHIM },
		{ .host = OLD, .agent = OLD, .nagle = true },
		{ .host = NEW, .agent = NEW },
		{ .host = OLD, .agent = TS },
		{ .host = OLD, .agent = TS_ALWAYS },
		{ .host = NEW, .agent = TS },
		{ .host = NEW, .agent = TS_ALWAYS },
		{ .host = TS, .agent = OLD },
		{ .host = TS_ALWAYS, .agent = OLD },
		{ .host = TS, .agent = NEW },
		{ .host = TS_ALWAYS, .agent = NEW },
		{ .host = TS, .agent = TS },
		{ .host = TS_ALWAYS, .agent = TS_ALWAYS },
		{ .host = TS, .agent = TS, .own = true },
		{ .host = OLD, .agent = TS_B2, .b2 = true },
		{ .host = NEW, .agent = TS_B2, .b2 = true },
		{ .host = TS_B2, .agent = OLD, .b2 = true },
		{ .host = TS_B2, .agent = NEW, .b2 = true },
		{ .host = TS_B2, .agent = TS_B2, .b2 = true },
	};
	const char *b2 = getenv("BENCH10_B2");
	const bool nagle = getenv("BENCH10_NAGLE") != NULL;
	struct row *own = NULL;
	size_t nrows = 0;
	char b2abs[PATH_MAX];
	static char names[sizeof(rows) / sizeof(rows[0])][96];
	struct runner run[NSIDES];
	const char *who[NSIDES];
	int lk;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (system("command -v trace-cmd >/dev/null") || access("/sys/kernel/tracing/trace", F_OK)) {
		printf("bench_10_tcmd_bias: skipped (needs trace-cmd and tracefs)\n");
		return 0;
	}
	if (!realpath(b0, b) || !mkdtemp(dir)) {
		perror("bench_10_tcmd_bias");
		return 1;
	}
	snprintf(shim, sizeof(shim), "%s/shim/nodelay.so", b);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", shim);
	sh[0] = pre;
	if (access(shim, R_OK)) {
		printf("bench_10_tcmd_bias: no %s (tests/shim/nodelay.c: make bench builds it)\n",
		       shim);
		return 1;
	}
	nt = new_tcmd(b, newpath, sizeof(newpath), ver, sizeof(ver));
	snprintf(nl, sizeof(nl), "%s", nt ? ver : "3.1.6+shim");
	run[OLD] = (struct runner){ "trace-cmd", none, NULL };
	run[OLD_SHIM] = (struct runner){ "trace-cmd", sh, NULL };
	run[NEW] = nt ? (struct runner){ nt, none, NULL } : run[OLD_SHIM];
	run[TS] = (struct runner){ NULL, kp, NULL };
	run[TS_ALWAYS] = (struct runner){ NULL, kpal, NULL };
	run[TS_B2] = (struct runner){ NULL, kp, b2 && realpath(b2, b2abs) ? b2abs : NULL };
	who[OLD] = "trace-cmd 3.1.6";
	who[OLD_SHIM] = "3.1.6+shim";
	who[NEW] = nl;
	who[TS] = who[TS_ALWAYS] = "tsync";
	who[TS_B2] = "tsync (B2)";
	/* the rows this run has, in order, at the front */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if ((!rows[i].b2 || b2) && (!rows[i].nagle || nagle)) {
			if (nrows != i)
				rows[nrows] = rows[i];
			nrows++;
		}
	for (size_t i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		if (r->own) {
			snprintf(names[i], sizeof(names[i]), "own protocol: tsync + tsync");
			own = r;
		} else if (r->nagle) {
			snprintf(names[i], sizeof(names[i]), "%s + itself as it ships (Nagle)",
				 who[OLD]);
		} else
			snprintf(names[i], sizeof(names[i]), "%s + %s%s", who[r->host],
				 who[r->agent], r->host == TS_ALWAYS || r->agent == TS_ALWAYS
				 ? ", QUICKACK always" : "");
		r->name = names[i];
	}
	lk = bench_lock(LOCK, 60);
	printf("bench_10_tcmd_bias: TimeShift offsets on one kernel (truth 0), host + agent, "
	       "%d records a row, us; new trace-cmd: %s\n", reps,
	       nt ? nt : "none built (scripts/build-tcmd-new): 3.1.6 under the NODELAY shim");
	for (int a = 0; a < NSIDES; a++)
		agent_rows(b, dir, run, (enum side)a, rows, nrows, reps);
	for (size_t i = 0; i < nrows; i++)
		ack_decision(b, dir, run, &rows[i]);
	if (lk >= 0)
		close(lk);
	printf("  %-52s %5s %8s %18s %8s %7s  %s\n", "pairing (host + agent)", "n", "median",
	       "range", "med|off|", "/own", "tsync's QUICKACK (auto)");
	for (size_t i = 0; i < nrows; i++)
		print_row(&rows[i], own ? med_abs(own) : -1);
	printf("  mixed pairs against trace-cmd with itself (median offset; median |offset| "
	       "as a ratio to trace-cmd with itself's):\n");
	print_mixed(rows, nrows, OLD, OLD_SHIM, TS, "3.1.6 (its own pair under the shim)");
	if (nagle)
		print_mixed(rows, nrows, OLD, OLD, TS, "3.1.6 (its own pair as it ships)");
	if (nt)
		print_mixed(rows, nrows, NEW, NEW, TS, ver);
	if (b2) {
		print_mixed(rows, nrows, OLD, OLD_SHIM, TS_B2, "3.1.6, B2");
		if (nt)
			print_mixed(rows, nrows, NEW, NEW, TS_B2, "new, B2");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (!getenv("BENCH10_KEEP") && system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return 0;
}
