// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of the bulk data path (common/stream/splice.c), all over loopback:
 *
 *  1. 1 GiB sender -> forwarder -> receiver through the splice forwarder
 *     with 64 KiB and 1 MiB pipes, through the forwarder's own read/write
 *     fallback, and through a plain read/write copy loop with a 64 KiB
 *     buffer (the baseline), plus sender -> receiver directly. Prints MB/s
 *     and CPU seconds per GiB (getrusage: the forwarding thread alone, and
 *     the whole process) and the ratios against the copy loop.
 *  2. The stall sweep as a latency table: messages of k * 8192 + r bytes
 *     through an 8 KiB pipe, max tail latency per length over several
 *     passes, with the corrected flush and without it.
 *
 * Numbers only: a benchmark never fails on timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/base/log.h"
#include "common/stream/splice.h"
#include "common/base/timeutil.h"
#include "tests/helpers/splice_rig.h"

#define TOTAL		(1ull << 30)
#define CHUNK		(1 << 20)
#define REPS		3
#define SWEEP_PASSES	3

struct result {
	double mbps;
	double fwd_cpu;		/* forwarding thread, s per GiB */
	double all_cpu;		/* whole process, s per GiB */
	int err;
	struct tsync_fwd_stats st;	/* forwarder runs */
};

/* Returns the process's CPU time (user + system) in ns. */
static int64_t process_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * NSEC_PER_USEC;
}

/* Sender thread: TOTAL bytes to a blocking socket, then SHUT_WR. */
static void *sender_main(void *arg)
{
	int fd = *(int *)arg;
	static const char zero[CHUNK];
	uint64_t left = TOTAL;
	ssize_t n;

	fcntl(fd, F_SETFL, 0);
	while (left) {
		n = send(fd, zero, left < CHUNK ? left : CHUNK, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		left -= (uint64_t)n;
	}
	shutdown(fd, SHUT_WR);
	return NULL;
}

/* Receives until EOF from a blocking socket; returns the byte count. */
static uint64_t receive_all(int fd, char *buf)
{
	uint64_t got = 0;
	ssize_t n;

	fcntl(fd, F_SETFL, 0);
	for (;;) {
		n = recv(fd, buf, CHUNK, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		got += (uint64_t)n;
	}
}

/* The baseline forwarder: a blocking read/write copy loop. */
struct copier {
	int in, out;
	int64_t cpu_ns;
	pthread_t thr;
};

/* The copy loop thread body with a 64 KiB buffer. */
static void *copier_main(void *arg)
{
	struct copier *c = arg;
	int64_t c0 = splice_thread_cpu_ns();
	static char buf[65536];
	ssize_t n, w, off;

	for (;;) {
		n = read(c->in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (off = 0; off < n; off += w) {
			w = send(c->out, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0)
				goto out;
		}
	}
out:
	shutdown(c->out, SHUT_WR);
	c->cpu_ns = splice_thread_cpu_ns() - c0;
	return NULL;
}

/* Fills @r from a transfer of @got bytes over @ns with the CPU used. */
static void account(struct result *r, uint64_t got, int64_t ns,
		    int64_t fwd_cpu, int64_t all_cpu)
{
	double gib = (double)got / (double)TOTAL;

	r->err = got == TOTAL ? 0 : -EIO;
	r->mbps = (double)got / 1e6 / ((double)ns / NSEC_PER_SEC);
	r->fwd_cpu = (double)fwd_cpu / NSEC_PER_SEC / gib;
	r->all_cpu = (double)all_cpu / NSEC_PER_SEC / gib;
}

/* 1 GiB through the splice forwarder (or its copy mode) with @pipe. */
static struct result run_fwd(size_t pipe, bool copy, char *buf)
{
	struct tsync_fwd_opts o = { .pipe_size = pipe, .name = "bench",
				    .test_force_copy = copy, .copy_size = 65536 };
	struct result res = { .err = -EIO };
	struct splice_rig r;
	int64_t t0, c0;
	pthread_t snd;
	uint64_t got;

	if (splice_rig_start(&r, &o))
		return res;
	c0 = process_cpu_ns();
	t0 = tsync_now_ns();
	pthread_create(&snd, NULL, sender_main, &r.snd);
	got = receive_all(r.rcv, buf);
	pthread_join(snd, NULL);
	splice_rig_join(&r);
	account(&res, got, tsync_now_ns() - t0, r.cpu_ns, process_cpu_ns() - c0);
	tsync_fwd_get_stats(r.fwd, &res.st);
	if (r.result != TSYNC_FWD_EOF)
		res.err = r.result < 0 ? r.result : -EPROTO;
	splice_rig_stop(&r);
	return res;
}

/* 1 GiB through the plain copy loop. */
static struct result run_copy(char *buf)
{
	struct result res = { .err = -EIO };
	int snd, a, b, rcv;
	struct copier c;
	int64_t t0, c0;
	pthread_t st;
	uint64_t got;

	if (splice_tcp_pair(&snd, &a) || splice_tcp_pair(&b, &rcv))
		return res;
	c.in = a;
	c.out = b;
	c0 = process_cpu_ns();
	t0 = tsync_now_ns();
	pthread_create(&c.thr, NULL, copier_main, &c);
	pthread_create(&st, NULL, sender_main, &snd);
	got = receive_all(rcv, buf);
	pthread_join(st, NULL);
	pthread_join(c.thr, NULL);
	account(&res, got, tsync_now_ns() - t0, c.cpu_ns, process_cpu_ns() - c0);
	close(snd);
	close(a);
	close(b);
	close(rcv);
	return res;
}

/* 1 GiB sender -> receiver directly (no forwarder). */
static struct result run_direct(char *buf)
{
	struct result res = { .err = -EIO };
	int64_t t0, c0;
	int snd, rcv;
	pthread_t st;
	uint64_t got;

	if (splice_tcp_pair(&snd, &rcv))
		return res;
	c0 = process_cpu_ns();
	t0 = tsync_now_ns();
	pthread_create(&st, NULL, sender_main, &snd);
	got = receive_all(rcv, buf);
	pthread_join(st, NULL);
	account(&res, got, tsync_now_ns() - t0, 0, process_cpu_ns() - c0);
	close(snd);
	close(rcv);
	return res;
}

/* Orders results by MB/s for the median. */
static int cmp_mbps(const void *a, const void *b)
{
	double x = ((const struct result *)a)->mbps;
	double y = ((const struct result *)b)->mbps;

	return (x > y) - (x < y);
}

/* Orders doubles. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Runs configuration @i once. */
static struct result run_one(int i, char *buf)
{
	switch (i) {
	case 0: return run_direct(buf);
	case 1: return run_copy(buf);
	case 2: return run_fwd(65536, true, buf);
	case 3: return run_fwd(65536, false, buf);
	default: return run_fwd(1 << 20, false, buf);
	}
}

/* Returns the median of @n results, each metric on its own. */
static struct result median(struct result *rs, int n)
{
	double f[REPS] = { 0 }, c[REPS] = { 0 };
	struct result m;

	for (int k = 0; k < n; k++) {
		f[k] = rs[k].fwd_cpu;
		c[k] = rs[k].all_cpu;
	}
	qsort(rs, n, sizeof(rs[0]), cmp_mbps);
	qsort(f, n, sizeof(f[0]), cmp_dbl);
	qsort(c, n, sizeof(c[0]), cmp_dbl);
	m = rs[n / 2];
	m.fwd_cpu = f[n / 2];
	m.all_cpu = c[n / 2];
	for (int k = 0; k < n; k++)
		if (rs[k].err)
			m.err = rs[k].err;
	return m;
}

/* Part 1: throughput and CPU table. */
static void throughput(void)
{
	static const char *names[] = {
		"direct, no forwarder",
		"read/write copy loop, 64 KiB buf",
		"forwarder copy mode, 64 KiB buf",
		"splice forwarder, 64 KiB pipe",
		"splice forwarder, 1 MiB pipe",
	};
	struct result all[5][REPS], r[5];
	char *buf = malloc(CHUNK);

	if (!buf)
		return;
	/* interleaved, so that load from elsewhere hits every path alike */
	for (int k = 0; k < REPS; k++)
		for (int i = 0; i < 5; i++)
			all[i][k] = run_one(i, buf);
	for (int i = 0; i < 5; i++)
		r[i] = median(all[i], REPS);
	free(buf);
	printf("1 GiB over loopback, median of %d interleaved runs each\n", REPS);
	printf("%-34s %9s %12s %12s %9s %9s\n", "path", "MB/s",
	       "fwd CPU s/GiB", "all CPU s/GiB", "MB/s÷copy", "CPU÷copy");
	for (int i = 0; i < 5; i++) {
		printf("%-34s %9.0f ", names[i], r[i].mbps);
		if (i == 0)
			printf("%12s ", "-");
		else
			printf("%12.3f ", r[i].fwd_cpu);
		printf("%12.3f %9.2f ", r[i].all_cpu, r[i].mbps / r[1].mbps);
		if (i == 0)
			printf("%9s", "-");
		else
			printf("%9.2f", r[i].fwd_cpu / r[1].fwd_cpu);
		if (r[i].err)
			printf("  (error: %s)", strerror(-r[i].err));
		printf("\n");
	}
	for (int i = 2; i < 5; i++)
		printf("%-34s pipe %zu: %llu splices, %llu MORE writes, %llu "
		       "flushes\n", names[i], r[i].st.pipe_size,
		       (unsigned long long)r[i].st.splices,
		       (unsigned long long)r[i].st.more_writes,
		       (unsigned long long)r[i].st.flushes);
	printf("(reference on this machine kind: direct ~1800, copy ~910, "
	       "splice 64 KiB ~956, 1 MiB ~1140 MB/s)\n\n");
}

/* Part 2: the stall sweep as a max-latency table, flush on and off. */
static void sweep_table(void)
{
	int64_t lat[SPLICE_SWEEP_K][SPLICE_SWEEP_NR];
	int64_t mx[2][SPLICE_SWEEP_K][SPLICE_SWEEP_NR];
	struct tsync_fwd_opts o = { .pipe_size = 8192, .name = "sweep" };
	int stalls[2] = { 0, 0 };

	memset(mx, 0, sizeof(mx));
	for (int off = 0; off < 2; off++) {
		o.test_no_flush = off;
		for (int p = 0; p < SWEEP_PASSES; p++) {
			if (splice_sweep(&o, 8192, 3000, lat, NULL))
				return;
			for (int k = 0; k < SPLICE_SWEEP_K; k++)
				for (int i = 0; i < SPLICE_SWEEP_NR; i++)
					if (lat[k][i] < 0 || lat[k][i] > mx[off][k][i])
						mx[off][k][i] = lat[k][i] < 0 ?
							INT64_MAX : lat[k][i];
		}
	}
	printf("stall sweep, 8 KiB pipe, max tail latency of %d passes (ms)\n",
	       SWEEP_PASSES);
	printf("%8s %12s %12s\n", "length", "flush on", "flush off");
	for (int k = 0; k < SPLICE_SWEEP_K; k++) {
		for (int i = 0; i < SPLICE_SWEEP_NR; i++) {
			printf("%8zu", k * 8192 + splice_sweep_r[i]);
			for (int off = 0; off < 2; off++) {
				if (mx[off][k][i] == INT64_MAX)
					printf(" %12s", "error");
				else
					printf(" %12.3f", (double)mx[off][k][i] /
					       NSEC_PER_MSEC);
				stalls[off] += mx[off][k][i] > 50 * NSEC_PER_MSEC;
			}
			printf("\n");
		}
	}
	printf("lengths over 50 ms: flush on %d, flush off %d (of %d)\n",
	       stalls[0], stalls[1], SPLICE_SWEEP_K * SPLICE_SWEEP_NR);
}

/* Runs both parts; "throughput" or "sweep" as the argument runs one. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	tsync_log_init("bench_03_splice", TSYNC_LOG_WARN, false);
	if (strcmp(only, "sweep"))
		throughput();
	if (strcmp(only, "throughput"))
		sweep_table();
	return 0;
}
