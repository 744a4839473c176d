// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of `tsync-host record` (host only) against Debian's
 * `trace-cmd record` under the same heavy event load on every CPU.
 *
 * Load: per CPU, a pair of processes pinned to that CPU ping-pong one byte
 * over two pipes and write a marker to the recorder's trace_marker before
 * each hand-off, so every CPU produces a tight stream of ftrace:print plus
 * sched_switch/sched_waking/sched_wakeup events. The load writes its markers
 * into the recorder's own instance (tsync-host's tsync-host-PID, or the
 * instance trace-cmd records with -B), so both recorders see the same kind
 * of load; every loader counts the markers it wrote.
 *
 * Each run: start the recorder with `-e sched -b KB`, wait until it is
 * recording, run the load for SECONDS, stop the load, SIGINT the recorder
 * and wait4() it (its rusage covers its threads and the per-CPU reader
 * children trace-cmd forks and reaps). Then count the events in its file
 * with libtracecmd (all buffers), the pages the data marks as following a
 * loss, and read the per-CPU overrun/dropped counters the recorder stored
 * in the file (`trace-cmd report --stat`). Recorders alternate, REPS times
 * each, because the machine is shared; medians (losses: sums) and ratios
 * (tsync/trace-cmd per format, v7-zstd/v6 per recorder) are printed at
 * the end.
 *
 * The load's own numbers tell what the recorder does to the traced
 * workload: markers per second, the CPU time the loaders got (wait4), and
 * markers per loader CPU second. On the shared 2-CPU test machine the
 * per-CPU-second cost stayed equal under both recorders, but with the
 * kernel's default buffer_percent (50) the loaders got ~20% less CPU time
 * under tsync-host than under trace-cmd (whose readers wake every 1 ms);
 * with buffer_percent 10 the gap closed (BENCH05_TSYNC_BP below).
 *
 * trace-cmd runs as `trace-cmd record -d -k --no-filter` (Documentation/
 * design.md, Running trace-cmd beside tsync: plain record dies on
 * ftrace_enabled here). Both recorders run in each file format, version 6
 * (uncompressed, --file-version 6) and version 7 with zstd (the default
 * of both): recorder CPU, losses and file size per format, tsync against
 * trace-cmd, and each recorder's zstd file against its version 6 file.
 *
 * Usage: bench_05_record [SECONDS [REPS [KB]]]  (default 3 3 1024);
 * BENCH05_KEEP=1 keeps the files and logs; BENCH05_TSYNC_BP=N sets the
 * buffer_percent of tsync-host's instance once it records (the threshold at
 * which poll() wakes its streamers; kernel default 50) to study its effect.
 * `bench_05_record --load MARKER SECONDS` runs the load alone into the
 * trace_marker file MARKER and prints how many markers it wrote.
 * Skips (exit 0) without trace-cmd or a writable tracefs.
 * Numbers only: a benchmark never fails on timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace-cmd.h>
#include <tracefs.h>

#include "common/base/cpu.h"
#include "common/base/timeutil.h"

#define MAX_CPUS	64
#define MAX_REPS	9
#define TAG		"tsync-bench-05 "
#define READY_MS	15000
#define EXIT_MS		60000

/* Each recorder in each file format: version 6 (uncompressed) and
 * version 7 with zstd (both recorders' default). */
enum rec_kind { REC_TSYNC, REC_TC, REC_TSYNC_Z, REC_TC_Z, NKINDS };
static const char *const kind_name[NKINDS] = { "tsync-v6", "tc-v6", "tsync-v7z", "tc-v7z" };

/* Returns true for tsync-host's kinds. */
static bool is_tsync(enum rec_kind k)
{
	return k == REC_TSYNC || k == REC_TSYNC_Z;
}

/* Memory shared with the loaders. */
struct shared {
	_Atomic int stop;
	_Atomic uint64_t written[2 * MAX_CPUS];
	_Atomic uint64_t failed[2 * MAX_CPUS];
};

struct bench {
	char tsync_host[4096];
	char trace_cmd[4096];
	char dir[256];
	int ncpus;
	double seconds;
	int reps;
	unsigned int kb;
	bool keep;
	const char *tsync_bp;
	struct shared *sh;
};

struct result {
	bool ok;
	uint64_t events;	/* records in the file, all buffers */
	uint64_t markers;	/* our markers among them */
	uint64_t written;	/* markers the load wrote */
	uint64_t lost;		/* overrun + dropped, from the stored stats */
	bool have_stats;
	uint64_t loss_pages;	/* pages the data marks as following a loss */
	uint64_t file_bytes;
	double cpu_s, user_s, sys_s;
	double load_s;		/* how long the load ran */
	double load_cpu_s;	/* CPU time the load got */
	uint64_t load_nivcsw;	/* times the load was preempted */
	double stop_s;		/* SIGINT to exit */
};

/* Returns the seconds in @tv. */
static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Looks @name up in PATH into @out; returns true if found executable. */
static bool find_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
	char *dup = strdup(path), *save = NULL;
	bool found = false;

	for (char *d = strtok_r(dup, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", *d ? d : ".", name);
		found = access(out, X_OK) == 0;
	}
	free(dup);
	return found;
}

/* Sleeps @ms milliseconds. */
static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Reads the whole small file @path into @buf (NUL-terminated); returns
 * the length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Writes @val to the file @path; returns 0 or -1. */
static int write_small(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* Body of one loader process: pinned to @cpu, writes a marker to @mfd and
 * hands a byte over to its partner until told to stop. @first starts the
 * ping-pong and watches the stop flag; the other follows until EOF. */
static void __attribute__((noreturn)) loader(struct shared *sh, int slot, int cpu,
					     int mfd, int gate, int in, int out, bool first)
{
	static const char msg[] = TAG "ping-pong marker\n";
	uint64_t n = 0, bad = 0;
	char c = 'x';

	if (tsync_cpu_pin(cpu, NULL))
		_exit(3);
	if (read(gate, &c, 1) != 0)	/* released by EOF */
		_exit(4);
	for (;;) {
		if (first && atomic_load_explicit(&sh->stop, memory_order_relaxed))
			break;
		if (!first && read(in, &c, 1) != 1)
			break;
		if (write(mfd, msg, sizeof(msg) - 1) == (ssize_t)sizeof(msg) - 1)
			n++;
		else
			bad++;
		if (write(out, &c, 1) != 1)
			break;
		if (first && read(in, &c, 1) != 1)
			break;
	}
	atomic_store(&sh->written[slot], n);
	atomic_store(&sh->failed[slot], bad);
	_exit(0);
}

/* Runs the load into @marker for b->seconds; fills the marker counts and
 * the load time in @r. Returns 0 or -errno. */
static int run_load(const struct bench *b, const char *marker, struct result *r)
{
	pid_t pids[2 * MAX_CPUS];
	int gate[2], np = 0, mfd, ret = 0;
	int64_t t0;

	mfd = open(marker, O_WRONLY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	if (pipe2(gate, O_CLOEXEC)) {
		close(mfd);
		return -errno;
	}
	atomic_store(&b->sh->stop, 0);
	for (int cpu = 0; cpu < b->ncpus; cpu++) {
		int ab[2], ba[2];

		if (pipe2(ab, O_CLOEXEC))
			break;
		if (pipe2(ba, O_CLOEXEC)) {
			close(ab[0]);
			close(ab[1]);
			break;
		}
		for (int k = 0; k < 2; k++) {
			pid_t p = fork();

			if (p == 0) {
				close(gate[1]);
				if (k == 0) {
					close(ab[0]);
					close(ba[1]);
					loader(b->sh, 2 * cpu, cpu, mfd, gate[0], ba[0], ab[1], true);
				}
				close(ab[1]);
				close(ba[0]);
				loader(b->sh, 2 * cpu + 1, cpu, mfd, gate[0], ab[0], ba[1], false);
			}
			if (p > 0)
				pids[np++] = p;
		}
		close(ab[0]);
		close(ab[1]);
		close(ba[0]);
		close(ba[1]);
	}
	close(mfd);
	close(gate[0]);
	t0 = tsync_now_ns();
	close(gate[1]);		/* go */
	sleep_ms((int)(b->seconds * 1000));
	atomic_store(&b->sh->stop, 1);
	r->written = 0;
	for (int i = 0; i < np; i++) {
		struct rusage ru;
		int st;

		if (wait4(pids[i], &st, 0, &ru) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			ret = -EIO;
		else
		{
			r->load_cpu_s += tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
			r->load_nivcsw += (uint64_t)ru.ru_nivcsw;
		}
		r->written += atomic_load(&b->sh->written[i]);
	}
	r->load_s = (double)(tsync_now_ns() - t0) / 1e9;
	if (np != 2 * b->ncpus)
		ret = -EAGAIN;
	return ret;
}

/* Starts the recorder @kind writing @out, logging to @log; for trace-cmd
 * into instance @inst_name. Returns its pid or -1. */
static pid_t start_recorder(const struct bench *b, enum rec_kind kind, const char *out,
			    const char *log, const char *inst_name)
{
	char kb[32];
	pid_t p;

	snprintf(kb, sizeof(kb), "%u", b->kb);
	p = fork();
	if (p != 0)
		return p;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	/* the same file format for both: --file-version 6, or the default */
	if (kind == REC_TSYNC)
		/* --no-filter as trace-cmd's: both record their own threads */
		execl(b->tsync_host, "tsync-host", "record", "--no-filter", "--file-version", "6",
		      "-e", "sched", "-b", kb, "-o", out, (char *)NULL);
	else if (kind == REC_TSYNC_Z)
		execl(b->tsync_host, "tsync-host", "record", "--no-filter", "-e", "sched", "-b", kb,
		      "-o", out, (char *)NULL);
	else if (kind == REC_TC)
		execl(b->trace_cmd, "trace-cmd", "record", "-d", "-k", "--no-filter",
		      "--file-version", "6", "-B", inst_name, "-e", "sched", "-b", kb,
		      "-o", out, (char *)NULL);
	else
		execl(b->trace_cmd, "trace-cmd", "record", "-d", "-k", "--no-filter",
		      "-B", inst_name, "-e", "sched", "-b", kb, "-o", out, (char *)NULL);
	fprintf(stderr, "exec: %s\n", strerror(errno));
	_exit(127);
}

/* Waits until the recorder records: tsync-host says "recording", trace-cmd
 * turns on the instance it was given (created with tracing off). Returns
 * 0, or -1 if @pid exited or it took too long. */
static int wait_ready(enum rec_kind kind, pid_t pid, const char *log, const char *inst_dir)
{
	int64_t deadline = tsync_deadline_ms(READY_MS);
	char buf[8192], path[600];

	snprintf(path, sizeof(path), "%s/tracing_on", inst_dir);
	while (tsync_now_ns() < deadline) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		if (is_tsync(kind) && read_small(log, buf, sizeof(buf)) > 0 &&
		    strstr(buf, "recording"))
			return 0;
		if (!is_tsync(kind) && read_small(path, buf, sizeof(buf)) > 0 && buf[0] == '1')
			return 0;
		sleep_ms(2);
	}
	return -1;
}

/* Finds the instance tsync-host @pid records into ("tsync-host-PID" or
 * "tsync-host-PID-N") and puts its name in @name; returns 0 or -1. */
static int find_tsync_instance(pid_t pid, char *name, size_t len)
{
	char dir[512], prefix[64];
	struct dirent *e;
	size_t pl;
	DIR *d;
	int ret = -1;

	snprintf(dir, sizeof(dir), "%s/instances", tracefs_tracing_dir());
	pl = (size_t)snprintf(prefix, sizeof(prefix), "tsync-host-%d", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, pl) || (e->d_name[pl] && e->d_name[pl] != '-'))
			continue;
		if (strlen(e->d_name) >= len)
			continue;
		memcpy(name, e->d_name, strlen(e->d_name) + 1);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

/* SIGINTs @pid and reaps it with its rusage into @r; SIGKILL after
 * EXIT_MS. Returns 0 if it exited 0. */
static int stop_recorder(pid_t pid, struct result *r)
{
	int64_t t0 = tsync_now_ns(), deadline = tsync_deadline_ms(EXIT_MS);
	struct rusage ru;
	int st = 0;
	pid_t w;

	kill(pid, SIGINT);
	for (;;) {
		w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0)
			return -1;
		if (tsync_now_ns() > deadline) {
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, &ru);
			return -1;
		}
		sleep_ms(5);
	}
	r->stop_s = (double)(tsync_now_ns() - t0) / 1e9;
	r->user_s = tv_s(ru.ru_utime);
	r->sys_s = tv_s(ru.ru_stime);
	r->cpu_s = r->user_s + r->sys_s;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Event counters filled by count_cb(). */
struct counts {
	uint64_t events, markers, loss_pages;
};

/* Counts one record: all, ours, and the loss marks. */
static int count_cb(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	struct counts *c = data;

	(void)h;
	(void)cpu;
	c->events++;
	if (rec->missed_events)
		c->loss_pages++;
	if (rec->size >= (int)sizeof(TAG) - 1 &&
	    memmem(rec->data, (size_t)rec->size, TAG, sizeof(TAG) - 1))
		c->markers++;
	return 0;
}

/* Counts the events of every buffer of @file into @r; returns 0 or -1. */
static int count_events(const char *file, struct result *r)
{
	struct tracecmd_input *h = tracecmd_open(file, TRACECMD_FL_LOAD_NO_PLUGINS |
						 TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	struct counts c = { 0 };
	int nb;

	if (!h)
		return -1;
	tracecmd_iterate_events(h, NULL, 0, count_cb, &c);
	nb = tracecmd_buffer_instances(h);
	for (int i = 0; i < nb; i++) {
		struct tracecmd_input *bh = tracecmd_buffer_instance_handle(h, i);

		if (!bh)
			continue;
		tracecmd_iterate_events(bh, NULL, 0, count_cb, &c);
		tracecmd_close(bh);
	}
	tracecmd_close(h);
	r->events = c.events;
	r->markers = c.markers;
	r->loss_pages = c.loss_pages;
	return 0;
}

/* Sums the per-CPU "overrun:" and "dropped events:" the recorder stored in
 * @file (of the instance buffer when there are several) via `trace-cmd
 * report --stat`. Returns 0 or -1. */
static int read_stats(const struct bench *b, const char *file, struct result *r)
{
	char cmd[8192], line[512];
	uint64_t lost = 0, v;
	bool seen = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report --stat -i '%s' 2>/dev/null", b->trace_cmd, file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "Buffer:", 7)) {	/* instance stats follow */
			lost = 0;
			seen = false;
		} else if (sscanf(line, "overrun: %lu", &v) == 1 ||
			   sscanf(line, "dropped events: %lu", &v) == 1) {
			lost += v;
			seen = true;
		}
	}
	pclose(p);
	r->lost = lost;
	r->have_stats = seen;
	return seen ? 0 : -1;
}

/* One recording by @kind under the load; fills @r. */
static void run_once(const struct bench *b, enum rec_kind kind, int rep, struct result *r)
{
	struct tracefs_instance *inst = NULL;
	char out[512], log[512], name[64], idir[512], marker[600];
	struct stat sb;
	pid_t pid = -1;
	int load_err;

	memset(r, 0, sizeof(*r));
	name[0] = '\0';
	snprintf(out, sizeof(out), "%s/%s-%d.dat", b->dir, kind_name[kind], rep);
	snprintf(log, sizeof(log), "%s/%s-%d.log", b->dir, kind_name[kind], rep);
	if (!is_tsync(kind)) {
		snprintf(name, sizeof(name), "tsync-bench05-%d-%d", getpid(), rep);
		inst = tracefs_instance_create(name);
		if (!inst || tracefs_instance_file_write(inst, "tracing_on", "0") < 0) {
			fprintf(stderr, "bench_05_record: cannot create instance %s\n", name);
			goto out;
		}
	}
	pid = start_recorder(b, kind, out, log, name);
	if (pid < 0)
		goto out;
	snprintf(idir, sizeof(idir), "%s/instances/%s", tracefs_tracing_dir(), name);
	if (wait_ready(kind, pid, log, idir)) {
		fprintf(stderr, "bench_05_record: %s did not start recording (log %s)\n",
			kind_name[kind], log);
		stop_recorder(pid, r);
		goto out;
	}
	if (is_tsync(kind)) {
		if (find_tsync_instance(pid, name, sizeof(name))) {
			fprintf(stderr, "bench_05_record: no tracefs instance of tsync-host %d\n",
				pid);
			stop_recorder(pid, r);
			goto out;
		}
		snprintf(idir, sizeof(idir), "%s/instances/%s", tracefs_tracing_dir(), name);
	}
	if (is_tsync(kind) && b->tsync_bp) {
		/* investigation knob: BENCH05_TSYNC_BP=N sets tsync-host's
		 * instance buffer_percent (the wake-up threshold of its streamers) */
		snprintf(marker, sizeof(marker), "%s/buffer_percent", idir);
		if (write_small(marker, b->tsync_bp))
			fprintf(stderr, "bench_05_record: cannot set %s\n", marker);
	}
	snprintf(marker, sizeof(marker), "%s/trace_marker", idir);
	load_err = run_load(b, marker, r);
	if (load_err)
		fprintf(stderr, "bench_05_record: the load did not run cleanly: %s\n",
			strerror(-load_err));
	if (stop_recorder(pid, r)) {
		fprintf(stderr, "bench_05_record: %s failed (log %s)\n", kind_name[kind], log);
		goto out;
	}
	if (stat(out, &sb) == 0)
		r->file_bytes = (uint64_t)sb.st_size;
	if (count_events(out, r)) {
		fprintf(stderr, "bench_05_record: libtracecmd cannot open %s\n", out);
		goto out;
	}
	read_stats(b, out, r);
	r->ok = !load_err;
out:
	if (is_tsync(kind) && name[0]) {
		/* tsync-host removes its instance; make sure after a failure */
		struct tracefs_instance *left = tracefs_instance_alloc(NULL, name);

		if (left && tracefs_instance_exists(name)) {
			tracefs_instance_file_write(left, "events/enable", "0");
			tracefs_instance_destroy(left);
		}
		tracefs_instance_free(left);
	}
	if (inst) {
		tracefs_instance_file_write(inst, "events/enable", "0");
		tracefs_instance_destroy(inst);
		tracefs_instance_free(inst);
	}
	if (!b->keep) {
		unlink(out);
		unlink(log);
	}
}

/* Sorts the @n values at @v and returns their median. */
static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* Prints one result row. */
static void print_row(enum rec_kind kind, int rep, const struct result *r)
{
	char lost[32];

	if (!r->ok) {
		printf("  %-10s %d  (failed)\n", kind_name[kind], rep);
		return;
	}
	if (r->have_stats)
		snprintf(lost, sizeof(lost), "%llu", (unsigned long long)r->lost);
	else
		snprintf(lost, sizeof(lost), "?");
	printf("  %-10s %d %10llu %9s %6llu %10llu %10llu %7.3f %6.3f %6.3f %6.2f %7.1f\n",
	       kind_name[kind], rep, (unsigned long long)r->events, lost,
	       (unsigned long long)r->loss_pages, (unsigned long long)r->written,
	       (unsigned long long)r->markers, r->cpu_s, r->user_s, r->sys_s, r->stop_s,
	       (double)r->file_bytes / 1e6);
}

/* Fills @v with field @f of the successful results of @rs; returns how
 * many. */
static int collect(const struct result *rs, int n, int f, double *v)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		if (!r->ok)
			continue;
		switch (f) {
		case 0: v[k] = (double)r->events; break;
		case 1: v[k] = (double)r->lost; break;
		case 2: v[k] = (double)(r->written > r->markers ? r->written - r->markers : 0); break;
		case 3: v[k] = r->cpu_s; break;
		case 9: v[k] = (double)r->file_bytes / 1e6; break;
		case 10: v[k] = r->events ? (double)r->file_bytes / (double)r->events : 0; break;
		case 4: v[k] = r->events ? r->cpu_s * 1e6 / ((double)r->events / 1e3) : 0; break;
		case 5: v[k] = r->load_s > 0 ? (double)r->written / r->load_s : 0; break;
		case 6: v[k] = r->load_cpu_s; break;
		case 7: v[k] = r->load_cpu_s > 0 ? (double)r->written / r->load_cpu_s : 0; break;
		default: v[k] = r->stop_s; break;
		}
		k++;
	}
	return k;
}

/* Returns how many successful results of @rs have stored stats. */
static int collect_stats(const struct result *rs, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += rs[i].ok && rs[i].have_stats;
	return k;
}

/* Prints the medians of kinds @a and @b and the ratios a / b. */
static void print_summary(struct result rs[NKINDS][MAX_REPS], int reps, int a, int b)
{
	static const char *const what[] = {
		"events recorded", "events lost, sum of runs", "markers written - recorded, sum",
		"recorder CPU s (user+sys)", "CPU us per 1000 events",
		"load speed, markers/s", "load CPU s (of CPUs x seconds)",
		"load markers per load CPU s", "stop time s", "file MB", "file bytes per event",
	};
	double v[NKINDS][MAX_REPS], m[NKINDS];

	printf("medians over the runs, losses summed (ratio = %s / %s):\n", kind_name[a],
	       kind_name[b]);
	printf("  %-32s %14s %14s %8s\n", "", kind_name[a], kind_name[b], "ratio");
	for (int f = 0; f < 11; f++) {
		int n0 = collect(rs[a], reps, f, v[0]), n1 = collect(rs[b], reps, f, v[1]);

		if (!n0 || !n1)
			continue;
		if (f == 1 && (n0 != collect_stats(rs[a], reps) || n1 != collect_stats(rs[b], reps)))
			printf("  (some files had no per-CPU stats: their lost counts as 0)\n");
		if (f == 1 || f == 2) {	/* losses: the total, not the median */
			m[0] = m[1] = 0;
			for (int i = 0; i < n0; i++)
				m[0] += v[0][i];
			for (int i = 0; i < n1; i++)
				m[1] += v[1][i];
		} else {
			m[0] = median(v[0], n0);
			m[1] = median(v[1], n1);
		}
		printf("  %-32s %14.*f %14.*f ", what[f], m[0] >= 1000 ? 0 : 3, m[0],
		       m[1] >= 1000 ? 0 : 3, m[1]);
		if (m[1] > 0)
			printf("%7.2fx\n", m[0] / m[1]);
		else
			printf("%8s\n", m[0] > 0 ? "inf" : "-");
	}
}

int main(int argc, char **argv)
{
	struct bench b = { .seconds = 3, .reps = 3, .kb = 1024 };
	const char *bdir = getenv("B") ? getenv("B") : "build";
	static struct result rs[NKINDS][MAX_REPS];
	char top_on[16] = "", top_events[4096] = "", path[512];
	struct tracefs_instance *probe;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "--load")) {
		/* investigation aid: the load alone into MARKER for SECONDS */
		struct result r = { 0 };

		b.seconds = atof(argv[3]);
		b.ncpus = tsync_cpu_count() < MAX_CPUS ? tsync_cpu_count() : MAX_CPUS;
		b.sh = mmap(NULL, sizeof(*b.sh), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (b.sh == MAP_FAILED || run_load(&b, argv[2], &r))
			return 1;
		printf("%llu markers in %.3f s, %.3f CPU s, preempted %llu times\n",
		       (unsigned long long)r.written, r.load_s, r.load_cpu_s,
		       (unsigned long long)r.load_nivcsw);
		return 0;
	}
	if (argc > 1)
		b.seconds = atof(argv[1]);
	if (argc > 2)
		b.reps = atoi(argv[2]);
	if (argc > 3)
		b.kb = (unsigned int)atoi(argv[3]);
	if (b.seconds <= 0 || b.seconds > 60 || b.reps < 1 || b.reps > MAX_REPS || !b.kb) {
		fprintf(stderr, "usage: bench_05_record [SECONDS [REPS [KB]]]\n");
		return 2;
	}
	b.keep = getenv("BENCH05_KEEP") != NULL;
	b.tsync_bp = getenv("BENCH05_TSYNC_BP");
	b.ncpus = tsync_cpu_count();
	if (b.ncpus > MAX_CPUS)
		b.ncpus = MAX_CPUS;
	snprintf(b.tsync_host, sizeof(b.tsync_host), "%s/tsync-host", bdir);
	if (!find_in_path("trace-cmd", b.trace_cmd, sizeof(b.trace_cmd))) {
		printf("bench_05_record: SKIP: trace-cmd is not installed\n");
		return 0;
	}
	if (access(b.tsync_host, X_OK)) {
		printf("bench_05_record: SKIP: no %s (build first)\n", b.tsync_host);
		return 0;
	}
	probe = tracefs_instance_create("tsync-bench05-probe");
	if (!probe) {
		printf("bench_05_record: SKIP: cannot create tracefs instances (%s)\n",
		       strerror(errno));
		return 0;
	}
	tracefs_instance_destroy(probe);
	tracefs_instance_free(probe);
	snprintf(b.dir, sizeof(b.dir), "%s/bench05-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(b.dir)) {
		perror("bench_05_record: mkdtemp");
		return 1;
	}
	b.sh = mmap(NULL, sizeof(*b.sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (b.sh == MAP_FAILED) {
		perror("bench_05_record: mmap");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/tracing_on", tracefs_tracing_dir());
	read_small(path, top_on, sizeof(top_on));
	snprintf(path, sizeof(path), "%s/set_event", tracefs_tracing_dir());
	read_small(path, top_events, sizeof(top_events));

	printf("%d CPUs; load: per CPU 2 pinned processes ping-ponging over pipes, a marker\n"
	       "before each hand-off; events: -e sched; buffer -b %u KiB; load %.1f s per run;\n"
	       "%d runs each, in turn. trace-cmd record -d -k --no-filter -B INSTANCE; tsync-host\n"
	       "record into its own instance; each with --file-version 6 (v6) and by default\n"
	       "(v7z: version 7, zstd). CPU = wait4 rusage of the recorder (threads and reaped\n"
	       "children), whole run incl. start and file writing (compression included).\n",
	       b.ncpus, b.kb, b.seconds, b.reps);
	printf("  %-10s %s %10s %9s %6s %10s %10s %7s %6s %6s %6s %7s\n", "recorder", "#",
	       "events", "lost", "lossPg", "mk.written", "mk.record", "cpu s", "user", "sys",
	       "stop s", "file MB");
	for (int rep = 0; rep < b.reps; rep++) {
		for (int k = 0; k < NKINDS; k++) {
			/* alternate which recorder goes first */
			enum rec_kind kind = (enum rec_kind)((k + rep) % NKINDS);

			run_once(&b, kind, rep, &rs[kind][rep]);
			print_row(kind, rep, &rs[kind][rep]);
		}
	}
	/* tsync against trace-cmd in each format, then zstd against v6 */
	print_summary(rs, b.reps, REC_TSYNC, REC_TC);
	print_summary(rs, b.reps, REC_TSYNC_Z, REC_TC_Z);
	print_summary(rs, b.reps, REC_TSYNC_Z, REC_TSYNC);
	print_summary(rs, b.reps, REC_TC_Z, REC_TC);
	printf("lost = per-CPU overrun + dropped stored in the file; lossPg = records whose page\n"
	       "is flagged as following lost events; mk.written - mk.record = markers the load\n"
	       "wrote that are not in the file (lost, or written before/after the recording);\n"
	       "load speed = markers the load wrote per second: how much the recorder slows the\n"
	       "traced workload (both share the same CPUs); per load CPU s: the same per CPU\n"
	       "second the load got (the cost of one traced hand-off, whatever else ran).\n");

	/* trace-cmd may leave the top buffer off or with events set */
	snprintf(path, sizeof(path), "%s/tracing_on", tracefs_tracing_dir());
	if (top_on[0] != '0' && tracefs_instance_file_write(NULL, "tracing_on", "1") < 0)
		fprintf(stderr, "bench_05_record: cannot restore tracing_on\n");
	{
		char now[4096] = "";

		snprintf(path, sizeof(path), "%s/set_event", tracefs_tracing_dir());
		read_small(path, now, sizeof(now));
		if (!top_events[0] && now[0])
			tracefs_instance_file_write(NULL, "set_event", "");
	}
	if (!b.keep)
		rmdir(b.dir);
	else
		printf("files kept in %s\n", b.dir);
	return 0;
}
