// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of the bias of trace-cmd's time-sync protocol, every pairing
 * side by side in one run, on one kernel (host and guest are one machine
 * over loopback, so the true offset is 0):
 *
 *   cc   trace-cmd host + trace-cmd agent (both under the NODELAY shim:
 *        without it a record takes minutes; the shim stands in for
 *        trace-cmd >= 3.3, which sets TCP_NODELAY itself)
 *   ct   trace-cmd host + tsync-agent                 (3.1.6, Nagle on)
 *   ctn  the same, trace-cmd under the NODELAY shim   (as >= 3.3)
 *   tc   tsync-host -A tcmd: + trace-cmd agent        (3.1.6, Nagle on)
 *   tcn  the same, trace-cmd under the NODELAY shim   (as >= 3.3)
 *   tt   tsync-host -A tcmd: + tsync-agent (tsync with tsync over
 *        trace-cmd's protocol)
 *   own  tsync-host + tsync-agent (tsync's own protocol): the reference
 *
 * Each row but cc and own runs twice: TCP_QUICKACK as tsync decides it
 * (re-armed only once the peer is seen waiting for an ACK) and
 * TSYNC_TCMD_QUICKACK=always (re-armed on every message, the old way).
 * Each run records `sleep 1` (-d -k --no-filter, sched_switch); the
 * offsets are the guest file's TIME_SHIFT (trace-cmd dump --options),
 * both CPUs, all samples. Prints per row the median and range of the
 * offsets, the median |offset| and its ratio to tsync's own protocol's.
 *
 * Environment: B (build dir, default build), BENCH10_REPS (records per
 * row, default 3). The shim is built at run time with cc into the
 * scratch directory (an LD_PRELOAD library setting TCP_NODELAY on every
 * TCP socket the process connects or accepts). Holds
 * /run/lock/tsync-trace-cmd.lock over the run. Skips (exit 0) without
 * trace-cmd, cc or tracefs. Numbers only: it never fails on them.
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

static const char shim_src[] =
	"#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <netinet/in.h>\n"
	"#include <netinet/tcp.h>\n#include <sys/socket.h>\n"
	"static void nd(int fd){int one=1;struct sockaddr_storage s;socklen_t l=sizeof(s);"
	"if(fd>=0&&!getsockname(fd,(struct sockaddr*)&s,&l)&&(s.ss_family==AF_INET||"
	"s.ss_family==AF_INET6))setsockopt(fd,IPPROTO_TCP,TCP_NODELAY,&one,sizeof(one));}\n"
	"int connect(int fd,const struct sockaddr*a,socklen_t l){static int(*r)(int,"
	"const struct sockaddr*,socklen_t);if(!r)r=dlsym(RTLD_NEXT,\"connect\");"
	"int x=r(fd,a,l);nd(fd);return x;}\n"
	"int accept(int fd,struct sockaddr*a,socklen_t*l){static int(*r)(int,struct sockaddr*,"
	"socklen_t*);if(!r)r=dlsym(RTLD_NEXT,\"accept\");int x=r(fd,a,l);nd(x);return x;}\n"
	"int accept4(int fd,struct sockaddr*a,socklen_t*l,int f){static int(*r)(int,"
	"struct sockaddr*,socklen_t*,int);if(!r)r=dlsym(RTLD_NEXT,\"accept4\");"
	"int x=r(fd,a,l,f);nd(x);return x;}\n";

struct row {
	const char *name;
	long long off[MAXOFF];
	int n, fails;
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

/* Puts the top instance back as trace-cmd leaves it. */
static void restore_tracefs(void)
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

/* A free loopback TCP port, or -1. */
static int free_port(void)
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

/* True once something listens on loopback @port. */
static bool listening(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sin, sizeof(sin));

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Starts an agent (@tcmd: trace-cmd's, else tsync's) on a free port with
 * @env; returns the pid (its own process group) and the port, or -1. */
static pid_t start_agent(const char *b, bool tcmd, char *const env[], const char *dir,
			 int *port)
{
	char ps[16], prog[PATH_MAX], log[PATH_MAX];
	char *targv[] = { "trace-cmd", "agent", "-N", "127.0.0.1", "-p", ps, NULL };
	char *sargv[] = { prog, "-N", "127.0.0.1", "-p", ps, NULL };
	pid_t pid;

	*port = free_port();
	snprintf(ps, sizeof(ps), "%d", *port);
	snprintf(prog, sizeof(prog), "%s/tsync-agent", b);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	pid = spawn(tcmd ? targv : sargv, "/tmp", log, env);
	for (int i = 0; pid > 0 && i < 1000; i++) {
		if (listening(*port)) {
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

/* One record by @host (trace-cmd, or @b/tsync-host) of the agent at
 * @port (@prefix before the address) with @env; offsets into @r. */
static void record_once(const char *b, const char *dir, bool tsync_host, const char *prefix,
			int port, char *const env[], struct row *r)
{
	char prog[PATH_MAX], ep[64], rdir[PATH_MAX], guest[PATH_MAX + 32], log[PATH_MAX + 32];
	char *argv[] = { prog, "record", "-d", "-k", "--no-filter", "-A", ep, "--name",
			 "localhost", "-d", "-k", "--no-filter", "-e", "sched:sched_switch",
			 "sleep", "1", NULL };
	int status = 0;
	pid_t pid;

	snprintf(prog, sizeof(prog), tsync_host ? "%s/tsync-host" : "trace-cmd", b);
	snprintf(ep, sizeof(ep), "%s127.0.0.1:%d", prefix, port);
	snprintf(rdir, sizeof(rdir), "%s/rec", dir);
	if (mkdir(rdir, 0755) && errno != EEXIST)
		return;
	snprintf(guest, sizeof(guest), "%s/trace-localhost.dat", rdir);
	snprintf(log, sizeof(log), "%s/record.log", rdir);
	unlink(guest);
	pid = spawn(argv, rdir, log, env);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (!tsync_host)
		restore_tracefs();
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		char cmd[PATH_MAX + 64];

		printf("  %s: a record failed:\n", r->name);
		fflush(stdout);
		snprintf(cmd, sizeof(cmd), "tail -3 %s", log);
		if (system(cmd))
			printf("  (no log)\n");
		r->fails++;
		return;
	}
	read_offsets(guest, r);
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

static void print_row(struct row *r, double ref)
{
	double ma = med_abs(r);

	if (!r->n) {
		printf("  %-50s no samples (%d failed)\n", r->name, r->fails);
		return;
	}
	qsort(r->off, (size_t)r->n, sizeof(r->off[0]), cmp);
	printf("  %-50s %5d %8.2f %8.2f..%-8.2f %8.2f  %6.1fx%s\n", r->name, r->n,
	       r->off[r->n / 2] / 1e3, r->off[0] / 1e3, r->off[r->n - 1] / 1e3, ma / 1e3,
	       ref > 0 ? ma / ref : 0.0, r->fails ? " (some failed)" : "");
}

int main(void)
{
	const char *b0 = getenv("B") ? getenv("B") : "build";
	int reps = getenv("BENCH10_REPS") ? atoi(getenv("BENCH10_REPS")) : 3;
	char b[PATH_MAX], dir[] = "/tmp/bench10.XXXXXX", shim[PATH_MAX + 16], pre[PATH_MAX + 32];
	char cmd[3 * PATH_MAX];
	static char always[] = "TSYNC_TCMD_QUICKACK=always";
	/* tcmd: to a tsync-agent keeps trace-cmd's protocol (host/peer/peer_tcmd.c) */
	static char keep[] = "TSYNC_TCMD_KEEP=1";
	char *none[] = { NULL }, *al[] = { always, NULL }, *sh[] = { pre, NULL },
	     *shal[] = { pre, always, NULL }, *kp[] = { keep, NULL }, *kpal[] = { keep, always, NULL };
	static struct row rows[] = {
		{ .name = "cc  trace-cmd host + trace-cmd agent (NODELAY shim)" },
		{ .name = "ct  trace-cmd 3.1.6 host + tsync-agent" },
		{ .name = "ct  ... QUICKACK always" },
		{ .name = "ctn trace-cmd host (NODELAY shim) + tsync-agent" },
		{ .name = "ctn ... QUICKACK always" },
		{ .name = "tc  tsync-host tcmd: + trace-cmd 3.1.6 agent" },
		{ .name = "tc  ... QUICKACK always" },
		{ .name = "tcn tsync-host tcmd: + trace-cmd agent (NODELAY shim)" },
		{ .name = "tcn ... QUICKACK always" },
		{ .name = "tt  tsync-host tcmd: + tsync-agent" },
		{ .name = "tt  ... QUICKACK always" },
		{ .name = "own tsync-host + tsync-agent (own protocol)" },
	};
	int lk, port;
	pid_t ag;
	double ref;

	if (system("command -v trace-cmd >/dev/null && command -v cc >/dev/null") ||
	    access("/sys/kernel/tracing/trace", F_OK)) {
		printf("bench_10_tcmd_bias: skipped (needs trace-cmd, cc and tracefs)\n");
		return 0;
	}
	if (!realpath(b0, b) || !mkdtemp(dir)) {
		perror("bench_10_tcmd_bias");
		return 1;
	}
	snprintf(shim, sizeof(shim), "%s/nodelay.so", dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", shim);
	snprintf(cmd, sizeof(cmd), "printf '%%s' '%s' | cc -shared -fPIC -O2 -x c -o %s - -ldl",
		 shim_src, shim);
	if (system(cmd)) {
		printf("bench_10_tcmd_bias: cannot build the NODELAY shim\n");
		return 1;
	}
	lk = open(LOCK, O_RDWR | O_CREAT, 0644);
	if (lk >= 0 && flock(lk, LOCK_EX))
		perror("lock");
	printf("bench_10_tcmd_bias: TimeShift offsets on one kernel (truth 0), %d records a "
	       "row, us\n", reps);
	/* rows against a trace-cmd agent: 3.1.6 as is, then under the shim */
	for (int shimmed = 0; shimmed < 2; shimmed++) {
		ag = start_agent(b, true, shimmed ? sh : none, dir, &port);
		if (ag < 0) {
			printf("  cannot start trace-cmd agent\n");
			continue;
		}
		for (int i = 0; i < reps; i++) {
			if (shimmed)
				record_once(b, dir, false, "", port, sh, &rows[0]);
			usleep(300000);
			record_once(b, dir, true, "tcmd:", port, none, &rows[shimmed ? 7 : 5]);
			usleep(300000);
			record_once(b, dir, true, "tcmd:", port, al, &rows[shimmed ? 8 : 6]);
			usleep(300000);
		}
		stop(ag);
	}
	/* rows against a tsync-agent: auto, then QUICKACK always */
	for (int alw = 0; alw < 2; alw++) {
		ag = start_agent(b, false, alw ? al : none, dir, &port);
		if (ag < 0) {
			printf("  cannot start tsync-agent\n");
			continue;
		}
		for (int i = 0; i < reps; i++) {
			record_once(b, dir, false, "", port, none, &rows[1 + alw]);
			record_once(b, dir, false, "", port, alw ? shal : sh, &rows[3 + alw]);
			record_once(b, dir, true, "tcmd:", port, alw ? kpal : kp, &rows[9 + alw]);
			if (!alw)
				record_once(b, dir, true, "", port, none, &rows[11]);
		}
		stop(ag);
	}
	if (lk >= 0)
		close(lk);
	ref = med_abs(&rows[11]);
	printf("  %-50s %5s %8s %18s %8s  %7s\n", "pairing", "n", "median", "range",
	       "med|off|", "/own");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		print_row(&rows[i], ref);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (!getenv("BENCH10_KEEP") && system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return 0;
}
