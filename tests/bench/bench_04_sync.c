// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_04_sync: what a sync round costs and how accurate it is, in one run.
 *
 *  1. The floor: 339 request/response round trips of 20-byte messages on a
 *     plain TCP_NODELAY loopback pair, both ends pinned to the same CPU
 *     (the placement tsync's rounds use on one machine) and, for
 *     reference, to different CPUs, sleeping and busy-polling.
 *  2. Real rounds: a tsync-agent started in a time namespace whose
 *     CLOCK_MONOTONIC is shifted by a known amount, and `sync` rounds on
 *     every CPU through the host library with the clock source (-C mono,
 *     truth = the namespace shift) and the marker source (-C mono markers:
 *     trace buffers are not namespaced, truth = 0), ROUNDS rounds each.
 *
 * Prints per-CPU median round time, its ratio to the same-CPU floor, and
 * the median and worst offset error against the truth. Never fails on
 * timing; exits non-zero only when it cannot run.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "common/base/cpu.h"
#include "common/net/endpoint.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "host/peer/client.h"
#include "tests/bench/bench_lib.h"

#define PROBES 339
#define ROUNDS 20
#define SHIFT_NS 12345678901LL

struct echo_arg {
	int fd;
	int cpu;
	int busy;
};

/* Reads exactly @len bytes, spinning if @busy. 0 or -1. */
static int rd(int fd, char *buf, size_t len, int busy)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, busy ? MSG_DONTWAIT : 0);

		if (n > 0)
			got += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
	return 0;
}

/* Echo side of the floor measurement. */
static void *echo_thread(void *p)
{
	struct echo_arg *a = p;
	char buf[20];

	tsync_cpu_pin(a->cpu, NULL);
	for (int i = 0; i < PROBES; i++) {
		if (rd(a->fd, buf, sizeof(buf), a->busy) ||
		    send(a->fd, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf))
			break;
	}
	return NULL;
}

/* Measures 339 round trips with the two ends on @c1 and @c2; returns ns. */
static int64_t floor_ns(int c1, int c2, int busy)
{
	struct tsync_endpoint ep;
	struct tsync_listener *l;
	struct echo_arg a;
	pthread_t th;
	char err[256], buf[20] = { 0 };
	int fd, sfd;
	int64_t t0, t;
	struct tsync_cpu_mask old = { 0 };

	tsync_endpoint_parse("tcp:127.0.0.1:0", TSYNC_EP_ALLOW_PORT0, &ep, err, sizeof(err));
	if (tsync_listen(&ep, 4, &l, err, sizeof(err)))
		return -1;
	ep.port = (uint16_t)tsync_listener_port(l);
	fd = tsync_connect(&ep, 1000, NULL, err, sizeof(err));
	sfd = tsync_accept(l, NULL);
	if (fd < 0 || sfd < 0)
		return -1;
	a = (struct echo_arg){ sfd, c2, busy };
	pthread_create(&th, NULL, echo_thread, &a);
	tsync_cpu_pin(c1, &old);
	t0 = tsync_now_ns();
	for (int i = 0; i < PROBES; i++) {
		if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf) ||
		    rd(fd, buf, sizeof(buf), busy))
			break;
	}
	t = tsync_now_ns() - t0;
	tsync_cpu_unpin(&old);
	pthread_join(th, NULL);
	close(fd);
	close(sfd);
	tsync_listener_close(l);
	return t;
}

/* Returns the median of @n values (sorts them). */
static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp64);
	return v[n / 2];
}

/* Runs ROUNDS rounds per CPU with @source; prints a table. Each round is
 * preceded by a floor measurement on the same CPU, so the ratio compares
 * the two under the same machine load. */
static void run_rounds(struct tsync_client *c, const char *label, unsigned int source,
		       int64_t truth)
{
	uint32_t ncpus = client_session(c)->ncpus;
	/* the clock source measures the namespace shift, as `--stamp clock`
	 * given explicitly does */
	struct round_opts o = { .clock = "mono", .source = source, .nprobes = PROBES,
				.fixed_count = true,
				.estimator = TSYNC_EST_ROBUST, .host_cpu = -1, .busy = -1,
				.ns_clock = source == TSYNC_STAMP_CLOCK };
	struct round_result r;

	/* one warm-up round per CPU (a marker instance is created once) */
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		client_sync_round(c, cpu, &o, &r);
	for (uint32_t cpu = 0; cpu < ncpus; cpu++) {
		int64_t t[ROUNDS], e[ROUNDS], fl[ROUNDS], ratio[ROUNDS], worst = 0;
		int n = 0;

		for (int i = 0; i < ROUNDS; i++) {
			int64_t f = floor_ns((int)cpu, (int)cpu, 0);

			if (client_sync_round(c, cpu, &o, &r) || r.status) {
				printf("  %s cpu %u: round failed: %s\n", label, cpu, r.error);
				continue;
			}
			t[n] = r.round_ns;
			fl[n] = f;
			ratio[n] = f > 0 ? r.round_ns * 1000 / f : 0;
			e[n] = llabs(r.est.offset_ns - truth);
			if (e[n] > worst)
				worst = e[n];
			n++;
		}
		if (!n)
			continue;
		int64_t tm = median(t, n), em = median(e, n), fm = median(fl, n);
		int64_t rm = median(ratio, n);

		printf("  %-6s cpu %u: round %6.3f ms, floor %6.3f ms, ratio %.2fx   error median %4lld ns, worst %5lld ns  (%d rounds)\n",
		       label, cpu, tm / 1e6, fm / 1e6, rm / 1000.0, (long long)em,
		       (long long)worst, n);
	}
}

int main(void)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	int ncpu = tsync_cpu_count();
	int64_t same[7], cross[7], cross_busy[7], fs, fc, fcb;
	struct client_opts co = { .connect_timeout_ms = 2000, .io_timeout_ms = 5000,
				  .host_name = "bench" };
	struct tsync_client *c;
	struct tsync_endpoint ep;
	char err[256];
	pid_t agent;

	signal(SIGPIPE, SIG_IGN);
	tsync_log_init("bench_04_sync", TSYNC_LOG_WARN, false);
	for (int i = 0; i < 7; i++) {
		same[i] = floor_ns(0, 0, 0);
		cross[i] = ncpu > 1 ? floor_ns(0, 1, 0) : 0;
		cross_busy[i] = ncpu > 1 ? floor_ns(0, 1, 1) : 0;
	}
	fs = median(same, 7);
	fc = median(cross, 7);
	fcb = median(cross_busy, 7);
	printf("floor: %d request/response round trips, NODELAY loopback (median of 7)\n", PROBES);
	printf("  same CPU, sleeping:        %7.3f ms\n", fs / 1e6);
	printf("  different CPUs, sleeping:  %7.3f ms\n", fc / 1e6);
	printf("  different CPUs, busy-poll: %7.3f ms\n", fcb / 1e6);

	agent = bench_start_agent_ep(b, SHIFT_NS, &ep);
	if (agent < 0) {
		fprintf(stderr, "bench_04_sync: cannot start the agent from %s\n", b);
		return 1;
	}
	if (client_open(&ep, &co, &c, err, sizeof(err))) {
		fprintf(stderr, "bench_04_sync: %s\n", err);
		kill(agent, SIGTERM);
		return 1;
	}
	printf("sync rounds, %d probes, host and guest thread on the same CPU, agent in a\n"
	       "time namespace (mono shifted by %lld ns); medians over the rounds, the\n"
	       "ratio is each round over a same-CPU floor measured just before it:\n",
	       PROBES, SHIFT_NS);
	run_rounds(c, "clock", TSYNC_STAMP_CLOCK, -SHIFT_NS);
	run_rounds(c, "marker", TSYNC_STAMP_MARKER, 0);
	client_close(c);
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
	return 0;
}
