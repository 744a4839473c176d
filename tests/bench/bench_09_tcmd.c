// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of trace-cmd interop, both directions, side by side in one
 * run on loopback TCP, 2 CPUs (this machine's; the guest is the same
 * kernel):
 *
 *   trace-cmd host + trace-cmd agent     Debian's trace-cmd 3.1.6 alone
 *   new trace-cmd host + its agent       trace-cmd >= 3.3 alone, when
 *                                        scripts/build-tcmd-new built it
 *                                        ($B/tcmd-new, or $TCMD_NEW)
 *   trace-cmd host + tsync-agent         direction 1
 *   new trace-cmd host + tsync-agent     the same with trace-cmd >= 3.3
 *   tsync-host + trace-cmd agent         direction 2 (AGENT tcmd:...)
 *   tsync-host + new trace-cmd agent     the same with trace-cmd >= 3.3
 *   tsync-host + trace-cmd agent, no ACK fix
 *                                        the same with TSYNC_TCMD_NO_QUICKACK=1
 *                                        (record) and --no-quickack (sync):
 *                                        TCP_QUICKACK not re-armed
 *   tsync-host + tsync-agent             the baseline of the ratios
 *
 * Table 1, a record: each host runs, in a scratch directory,
 *   HOST record -C local -d -k --no-filter -A 127.0.0.1:PORT --name 127.0.0.1
 *               -d -k --no-filter -e sched:sched_switch sleep 1
 * (trace-cmd's agent needs -d -k --no-filter on this kernel; tsync-host
 * takes the same command line; its AGENT gets tcmd: for trace-cmd's
 * agent). Columns:
 *   first sync  from the start until the first sync of every guest CPU is
 *               done: for trace-cmd, until trace-127.0.0.1.dat appears (it
 *               creates it after the first PTP round of every CPU: its
 *               setup_guest() runs after tracecmd_tsync_with_guest()'s
 *               barrier); for tsync-host, until it says "recording" (its
 *               first round of every guest CPU runs before it starts
 *               tracing)
 *   total       the whole record of the 1 s command
 *   spread      max - min of the TIME_SHIFT offsets in the guest file, read
 *               by `trace-cmd dump --options` (ns; host and guest are one
 *               kernel, so the truth is 0 and the spread is the scatter)
 *   samples     how many TIME_SHIFT samples the guest file has
 *
 * Table 2, tsync-host sync alone (`tsync-host sync -C local --rounds 2`):
 * "1st sync" until its rows for both guest CPUs are out (connect, one
 * sample of each CPU), "2nd sync" from then until the second round's rows
 * are (a sync of both CPUs on a running session), "sync" until it exits;
 * spread and mean of every offset of every run. The target is the
 * 1st sync against trace-cmd's agent within 3x of tsync-agent's.
 *
 * trace-cmd's agent sends its messages in two writes with Nagle on, which
 * costs a delayed ACK per probe unless the host acknowledges at once
 * (Documentation/trace-cmd-host.md, section 4); tsync-agent writes each
 * message once.
 *
 * Usage: bench_09_tcmd [REPS] (default 3): medians of REPS runs, except
 * the slow rows (trace-cmd + trace-cmd, no ACK fix: minutes each), which
 * run once. BENCH09_SKIP_SLOW=1 leaves the slow rows out; BENCH09_KEEP=1
 * keeps the scratch directories. Holds /run/lock/tsync-trace-cmd.lock
 * over the run (waiting for it 60 s at most). Skips (exit 0)
 * without trace-cmd or tracefs. Numbers only: a benchmark never fails on
 * timing.
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
#define MAXREPS 100
#define MAXOFF 4096
#define NCPU_ROWS 2	/* the guests here have this machine's 2 CPUs */

enum host_kind { HOST_TRACECMD, HOST_TCMD_NEW, HOST_TSYNC };

static const char *new_tcmd(const char *b, char *path, size_t len);

/* Table 1: the record runs of one host + agent pair. */
struct rec_row {
	const char *name;
	int n, fails;
	int64_t first_ns[MAXREPS], total_ns[MAXREPS];
	long long spread_ns[MAXREPS];
	int samples;
};

/* Table 2: the sync runs of tsync-host against one agent. */
struct sync_row {
	const char *name;
	int64_t sync_ns[MAXREPS], next_ns[MAXREPS], all_ns[MAXREPS];
	int nsync, nnext, nall;
	long long off[MAXOFF];
	int noff;
};

/* True if file @path contains @s (read whole, it is small). */
static bool file_has(const char *path, const char *s)
{
	char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, s) != NULL;
}

/* The TIME_SHIFT offsets of @file: spread into @spread, count returned. */
static int read_spread(const char *file, long long *spread)
{
	char cmd[512], line[512];
	long long off, mn = 0, mx = 0;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "trace-cmd dump --options -i %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "[offset * scaling") && sscanf(line, " %lld", &off) == 1) {
			mn = !n || off < mn ? off : mn;
			mx = !n || off > mx ? off : mx;
			n++;
		}
	pclose(p);
	*spread = mx - mn;
	return n;
}

/* Removes scratch directory @dir unless BENCH09_KEEP is set. */
static void remove_dir(const char *dir)
{
	char cmd[256];

	if (getenv("BENCH09_KEEP")) {
		fprintf(stderr, "kept %s\n", dir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/*
 * One record by @host (@b/tsync-host, or trace-cmd) of the agent at TCP
 * @port (@tcmd: a trace-cmd agent, for tsync-host's prefix; @nofix: the
 * quick-ACK fix off) into @r. Prints the log when it fails.
 */
static void record_once(const char *b, enum host_kind host, int port, bool tcmd, bool nofix,
			struct rec_row *r)
{
	char dir[] = "/tmp/bench09.XXXXXX", ep[64], prog[PATH_MAX + 16], guest[128], log[128];
	char *argv[] = { prog, "record", "-C", "local", "-d", "-k", "--no-filter", "-A", ep,
			 "--name", BENCH_TCMD_GUEST, "-d", "-k", "--no-filter", "-e",
			 "sched:sched_switch", "sleep", "1", NULL };
	int64_t t0, first = 0;
	struct stat st;
	int status;
	pid_t pid;

	snprintf(prog, sizeof(prog), "trace-cmd");
	if (host == HOST_TCMD_NEW && !new_tcmd(b, prog, sizeof(prog)))
		return;
	/* absolute: it runs in @dir */
	if (host == HOST_TSYNC && !realpath(b, prog))
		return;
	if (host == HOST_TSYNC)
		strncat(prog, "/tsync-host", sizeof(prog) - strlen(prog) - 1);
	if (r->n >= MAXREPS || !mkdtemp(dir))
		return;
	snprintf(ep, sizeof(ep), "%s127.0.0.1:%d", tcmd && host == HOST_TSYNC ? "tcmd:" : "",
		 port);
	snprintf(guest, sizeof(guest), "%s/trace-" BENCH_TCMD_GUEST ".dat", dir);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	t0 = tsync_now_ns();
	pid = bench_spawn(argv, dir, log, nofix ? "TSYNC_TCMD_NO_QUICKACK=1" : NULL);
	if (pid < 0)
		return;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (!first && (host != HOST_TSYNC ? !stat(guest, &st) :
			       file_has(log, "tsync-host record: recording")))
			first = tsync_now_ns();
		usleep(1000);
	}
	r->total_ns[r->n] = tsync_now_ns() - t0;
	r->first_ns[r->n] = first ? first - t0 : -1;
	if (host != HOST_TSYNC)
		bench_restore_tracefs();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char cmd[300];

		printf("  %s: a record failed:\n", r->name);
		snprintf(cmd, sizeof(cmd), "tail -5 %s", log);
		fflush(stdout);
		if (system(cmd))
			printf("  (no log)\n");
		r->fails++;
	} else {
		r->samples = read_spread(guest, &r->spread_ns[r->n]);
		r->n++;
	}
	remove_dir(dir);
}

/* Counts the table rows (lines starting with a CPU number) in @s. */
static int rows(const char *s)
{
	int n = 0;

	for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l;

		while (*p == ' ')
			p++;
		n += *p >= '0' && *p <= '9';
	}
	return n;
}

/*
 * Runs @argv (stdout into @out, stderr into a file shown when it fails);
 * returns its wall time in ns, or -1 when it failed. Sets @first to the
 * time until @nrows table rows had come out and @second to the time from
 * then until 2 * @nrows had (0 if they never did).
 */
static int64_t run_sync(char *const *argv, char *out, size_t cap, int nrows, int64_t *first,
			int64_t *second)
{
	char errf[] = "/tmp/bench09.err.XXXXXX";
	int ef = mkstemp(errf);
	int p[2], st;
	size_t len = 0;
	int64_t t0;
	ssize_t r;
	pid_t pid;

	if (ef < 0 || pipe(p))
		return -1;
	t0 = tsync_now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(ef, 2);
		close(p[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	*first = *second = 0;
	while (len + 1 < cap && (r = read(p[0], out + len, cap - 1 - len)) > 0) {
		len += (size_t)r;
		out[len] = '\0';
		if (!*first && rows(out) >= nrows)
			*first = tsync_now_ns() - t0;
		if (*first && !*second && rows(out) >= 2 * nrows)
			*second = tsync_now_ns() - t0 - *first;
	}
	close(p[0]);
	out[len] = '\0';
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		char e[2048];
		ssize_t n = pread(ef, e, sizeof(e) - 1, 0);

		e[n > 0 ? n : 0] = '\0';
		printf("  %s %s failed: %s", argv[0], argv[1], e);
		t0 = -1;
	}
	close(ef);
	unlink(errf);
	return t0 < 0 ? -1 : tsync_now_ns() - t0;
}

/* Collects the offset (third column) of every table row of @s into @r. */
static void offsets(struct sync_row *r, const char *s)
{
	for (const char *l = s; l && *l && r->noff < MAXOFF;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		long cpu, round;
		long long off;

		if (sscanf(l, " %ld %ld %lld", &cpu, &round, &off) == 3)
			r->off[r->noff++] = off;
	}
}

/* One `tsync-host sync` of agent @agent (@rounds rounds; @nofix: without
 * the quick-ACK fix) into @r. */
static void sync_once(const char *b, struct sync_row *r, const char *agent, int rounds,
		      bool nofix)
{
	static char out[1 << 20];
	char host[256], nr[16];
	/* line-buffered, so that each row shows when the CPU is synced */
	char *argv[] = { "/usr/bin/stdbuf", "-oL", host, "sync", "-C", "local", "--rounds", nr,
			 (char *)agent, NULL, NULL };
	int64_t t, first, second;

	if (r->nsync >= MAXREPS)
		return;
	snprintf(host, sizeof(host), "%s/tsync-host", b);
	snprintf(nr, sizeof(nr), "%d", rounds);
	if (nofix)
		argv[9] = "--no-quickack";
	t = run_sync(argv, out, sizeof(out), NCPU_ROWS, &first, &second);
	if (t < 0 || !first || (rounds > 1 && !second)) {
		printf("  %s: a sync failed\n", r->name);
		return;
	}
	r->sync_ns[r->nsync++] = first;
	if (rounds > 1)
		r->next_ns[r->nnext++] = second;
	r->all_ns[r->nall++] = t;
	offsets(r, out);
}

/* Returns true if a socket listens on TCP port @port (/proc/net/tcp). */
static bool listening(int port)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[256], want[32];
	bool yes = false;

	snprintf(want, sizeof(want), ":%04X ", port);
	while (f && !yes && fgets(line, sizeof(line), f))
		yes = strstr(line, want) && strstr(line, " 0A ");
	if (f)
		fclose(f);
	return yes;
}

/* Starts `@prog agent -N 127.0.0.1 -p PORT` (@prog: a trace-cmd) in its
 * own process group; returns its pid with the port in @port, or -1. */
static pid_t start_tcmd_agent(const char *prog, int *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char ps[16];
	char *argv[] = { (char *)prog, "agent", "-N", "127.0.0.1", "-p", ps, NULL };
	pid_t pid;

	/* a free port: bind to 0, read it back, let it go */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	close(fd);
	snprintf(ps, sizeof(ps), "%d", *port);
	pid = bench_spawn(argv, "/tmp", "/dev/null", NULL);
	/* ready when it listens (deadline 10 s) */
	for (int i = 0; pid > 0 && i < 1000; i++) {
		if (listening(*port))
			return pid;
		usleep(10000);
	}
	if (pid > 0) {
		kill(-pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

/* The trace-cmd >= 3.3 scripts/build-tcmd-new built under @b (or
 * $TCMD_NEW) into @path; NULL if there is none. */
static const char *new_tcmd(const char *b, char *path, size_t len)
{
	int n = getenv("TCMD_NEW") ? snprintf(path, len, "%s", getenv("TCMD_NEW"))
				   : snprintf(path, len, "%s/tcmd-new/prefix/bin/trace-cmd", b);

	if (n < 0 || (size_t)n >= len || access(path, X_OK))
		return NULL;
	if (path[0] != '/') {	/* it runs in a scratch directory */
		char abs[PATH_MAX];

		if (!realpath(path, abs) || strlen(abs) >= len)
			return NULL;
		strcpy(path, abs);
	}
	return path;
}

/* The rows against tsync-agent: tsync-host (record and sync) and
 * trace-cmd's host (record), and the new trace-cmd's host into @nt when
 * there is one. Returns 0 or 1. */
static int tsync_agent_rows(const char *b, int reps, struct rec_row *tt,
			    struct rec_row *ct, struct rec_row *nt, struct sync_row *st)
{
	char newtc[PATH_MAX + 64];

	char ep[128];
	pid_t ag = bench_start_agent(b, 0, ep, sizeof(ep));
	const char *colon = strrchr(ep, ':');

	if (ag < 0 || !colon) {
		fprintf(stderr, "bench_09_tcmd: cannot start tsync-agent from %s\n", b);
		return 1;
	}
	sync_once(b, st, ep, 2, false);	/* warm-up */
	st->nsync = st->nnext = st->nall = st->noff = 0;
	for (int i = 0; i < reps; i++) {
		sync_once(b, st, ep, 2, false);
		record_once(b, HOST_TSYNC, atoi(colon + 1), false, false, tt);
	}
	for (int i = 0; i < reps; i++)
		record_once(b, HOST_TRACECMD, atoi(colon + 1), false, false, ct);
	for (int i = 0; new_tcmd(b, newtc, sizeof(newtc)) && i < reps; i++)
		record_once(b, HOST_TCMD_NEW, atoi(colon + 1), false, false, nt);
	kill(ag, SIGTERM);
	waitpid(ag, NULL, 0);
	return 0;
}

/* The rows against one trace-cmd agent (@newtc, new_tcmd(): the new
 * trace-cmd's, else Debian's): tsync-host with the fix (@reps syncs and
 * records), or without it (@nofix: one of each), or trace-cmd's host
 * (@tracecmd_host: one record of Debian's against its own agent, @reps
 * of the new one against its own). Returns 0 or 1. */
static int tcmd_agent_rows(const char *b, int reps, struct rec_row *rec,
			   struct sync_row *st, bool nofix, bool tracecmd_host, const char *newtc)
{
	char ep[64];
	int port;
	pid_t tc;

	tc = start_tcmd_agent(newtc ? newtc : "trace-cmd", &port);
	if (tc < 0) {
		fprintf(stderr, "bench_09_tcmd: cannot start trace-cmd agent\n");
		return 1;
	}
	snprintf(ep, sizeof(ep), "tcmd:127.0.0.1:%d", port);
	if (newtc && tracecmd_host) {
		for (int i = 0; i < reps; i++) {
			bench_wait_no_child(tc);
			record_once(b, HOST_TCMD_NEW, port, true, false, rec);
		}
	} else if (tracecmd_host) {
		record_once(b, HOST_TRACECMD, port, true, false, rec);
	} else if (nofix) {
		sync_once(b, st, ep, 1, true);
		bench_wait_no_child(tc);
		record_once(b, HOST_TSYNC, port, true, true, rec);
	} else {
		sync_once(b, st, ep, 2, false);	/* warm-up */
		st->nsync = st->nnext = st->nall = st->noff = 0;
		for (int i = 0; i < reps; i++) {
			bench_wait_no_child(tc);
			sync_once(b, st, ep, 2, false);
			bench_wait_no_child(tc);
			record_once(b, HOST_TSYNC, port, true, false, rec);
		}
	}
	bench_wait_no_child(tc);
	kill(-tc, SIGTERM);
	waitpid(tc, NULL, 0);
	bench_restore_tracefs();
	return 0;
}

/* Sort helper. */
static int cmp64(const void *x, const void *y)
{
	int64_t u = *(const int64_t *)x, v = *(const int64_t *)y;

	return u < v ? -1 : u > v;
}

/* The median of @v[0..@n) in ms (sorts @v), or -1 for none. */
static double median_ms(int64_t *v, int n)
{
	if (n <= 0)
		return -1;
	qsort(v, (size_t)n, sizeof(*v), cmp64);
	return (double)v[n / 2] / 1e6;
}

/* The median of @v[0..@n), or -1 for none. */
static long long median_ll(const long long *v, int n)
{
	int64_t tmp[MAXREPS];

	if (n <= 0)
		return -1;
	for (int i = 0; i < n; i++)
		tmp[i] = v[i];
	qsort(tmp, (size_t)n, sizeof(*tmp), cmp64);
	return tmp[n / 2];
}

/* "%.1f" of @v into @buf, "-" when negative. */
static const char *ms(char *buf, size_t len, double v)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

/* "%.2fx" of @v / @base into @buf, "-" when either is missing. */
static const char *ratio(char *buf, size_t len, double v, double base)
{
	if (v < 0 || base <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2fx", v / base);
	return buf;
}

/* Prints a table 1 row; ratios to @bf (first sync) and @bt (total). */
static void print_rec(struct rec_row *r, double bf, double bt)
{
	double f = median_ms(r->first_ns, r->n), t = median_ms(r->total_ns, r->n);
	char a[32], b[32], c[32], d[32];

	if (!r->n && !r->fails)
		return;		/* not run */
	printf("  %-42s %3d/%-3d %10s %7s %10s %7s %10lld %7d\n", r->name, r->n, r->n + r->fails,
	       ms(a, sizeof(a), f), ratio(b, sizeof(b), f, bf), ms(c, sizeof(c), t),
	       ratio(d, sizeof(d), t, bt), median_ll(r->spread_ns, r->n), r->samples);
}

/* Prints a table 2 row; ratios to @bs (first sync) and @bn (second). */
static void print_sync(struct sync_row *r, double bs, double bn)
{
	double s = median_ms(r->sync_ns, r->nsync), n = median_ms(r->next_ns, r->nnext);
	double all = median_ms(r->all_ns, r->nall), mean = 0;
	char a[32], b[32], c[32], d[32], e[32];
	long long lo = 0, hi = 0;

	if (!r->nsync)
		return;
	for (int i = 0; i < r->noff; i++) {
		lo = !i || r->off[i] < lo ? r->off[i] : lo;
		hi = !i || r->off[i] > hi ? r->off[i] : hi;
		mean += (double)r->off[i] / r->noff;
	}
	printf("  %-42s %5d %10s %7s %10s %7s %10s %10lld %9.0f\n", r->name, r->nsync,
	       ms(a, sizeof(a), s), ratio(b, sizeof(b), s, bs), ms(c, sizeof(c), n),
	       ratio(d, sizeof(d), n, bn), ms(e, sizeof(e), all), hi - lo, mean);
}

int main(int argc, char **argv)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	int reps = argc > 1 ? atoi(argv[1]) : 3, lk, ret;
	char newtc[PATH_MAX + 64];
	bool slow = !getenv("BENCH09_SKIP_SLOW");
	static struct rec_row cc = { .name = "trace-cmd host + trace-cmd agent" },
			      ct = { .name = "trace-cmd host + tsync-agent" },
			      tc = { .name = "tsync-host + trace-cmd agent" },
			      nn = { .name = "new trace-cmd host + its agent" },
			      nt = { .name = "new trace-cmd host + tsync-agent" },
			      tw = { .name = "tsync-host + new trace-cmd agent" },
			      tn = { .name = "tsync-host + trace-cmd agent, no ACK fix" },
			      tt = { .name = "tsync-host + tsync-agent" };
	static struct sync_row sc = { .name = "tsync-host + trace-cmd agent" },
			       sw = { .name = "tsync-host + new trace-cmd agent" },
			       sn = { .name = "tsync-host + trace-cmd agent, no ACK fix" },
			       st = { .name = "tsync-host + tsync-agent" };

	if (reps < 1 || reps > MAXREPS) {
		fprintf(stderr, "usage: bench_09_tcmd [REPS]\n");
		return 2;
	}
	if (system("command -v trace-cmd >/dev/null 2>&1") ||
	    access("/sys/kernel/tracing/trace_marker_raw", W_OK)) {
		printf("bench_09_tcmd: skipped (no trace-cmd or no writable tracefs)\n");
		return 0;
	}
	lk = bench_lock(LOCK, 60);	/* the whole run, bounded: see bench_lib.h */
	ret = tsync_agent_rows(b, reps, &tt, &ct, &nt, &st);
	ret |= tcmd_agent_rows(b, reps, &tc, &sc, false, false, NULL);
	if (new_tcmd(b, newtc, sizeof(newtc))) {
		ret |= tcmd_agent_rows(b, reps, &nn, NULL, false, true, newtc);
		ret |= tcmd_agent_rows(b, reps, &tw, &sw, false, false, newtc);
	} else
		printf("  no new trace-cmd (scripts/build-tcmd-new builds one): its row left "
		       "out\n");
	if (slow) {
		ret |= tcmd_agent_rows(b, reps, &tn, &sn, true, false, NULL);
		ret |= tcmd_agent_rows(b, reps, &cc, NULL, false, true, NULL);
	}
	if (lk >= 0)
		close(lk);
	printf("record -A of `sleep 1`, 2 guest CPUs, loopback TCP, clock local; medians of "
	       "%d runs (no-fix and trace-cmd + trace-cmd rows: 1); ratios to tsync-host + "
	       "tsync-agent:\n", reps);
	printf("  %-42s %7s %10s %7s %10s %7s %10s %7s\n", "host + agent", "ok/runs",
	       "first ms", "ratio", "total ms", "ratio", "spread ns", "samples");
	{
		double bf = median_ms(tt.first_ns, tt.n), bt = median_ms(tt.total_ns, tt.n);

		print_rec(&cc, bf, bt);
		print_rec(&nn, bf, bt);
		print_rec(&ct, bf, bt);
		print_rec(&nt, bf, bt);
		print_rec(&tc, bf, bt);
		print_rec(&tw, bf, bt);
		print_rec(&tn, bf, bt);
		print_rec(&tt, bf, bt);
	}
	printf("tsync-host sync -C local --rounds 2 (no-fix row: --rounds 1), 2 guest CPUs; "
	       "medians; ratios to tsync-host + tsync-agent:\n");
	printf("  %-42s %5s %10s %7s %10s %7s %10s %10s %9s\n", "host + agent", "runs",
	       "1st ms", "ratio", "2nd ms", "ratio", "sync ms", "spread ns", "mean ns");
	{
		double bs = median_ms(st.sync_ns, st.nsync), bn = median_ms(st.next_ns, st.nnext);

		print_sync(&sc, bs, bn);
		print_sync(&sw, bs, bn);
		print_sync(&sn, bs, bn);
		print_sync(&st, bs, bn);
	}
	return ret;
}
