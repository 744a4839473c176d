// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_01_nagle: request/response round trips of small messages over
 * loopback TCP, the traffic pattern of a sync round (Documentation/
 * design.md, Nagle and delayed ACK).
 *
 *   tsync:  the transport layer (tsync_listen/tsync_connect/tsync_accept,
 *           so TCP_NODELAY on both ends), each message one
 *           tsync_writev_full() call: header and body in one sendmsg.
 *   naive:  raw sockets made here with Nagle left on, each message sent
 *           as two writes (header, then body), as trace-cmd did before its
 *           fix: the body waits for the peer's delayed ACK.
 *
 * Both run with the two ends pinned to one CPU and to different CPUs,
 * because placement changes the wake-up cost by an order of magnitude.
 * Prints numbers and ratios; never fails on timing.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/net/endpoint.h"
#include "common/base/io.h"
#include "common/base/timeutil.h"
#include "common/net/tcp.h"
#include "common/net/transport.h"

#define ROUNDS_TSYNC 339	/* PTP_SYNC_LOOP: probes per CPU in a sync round */
#define ROUNDS_NAIVE 40		/* ~88 ms each: 339 would take ~30 s per run */
#define IO_TIMEOUT_MS 5000

/* A probe-sized message: trace-cmd's 32-byte header and a small body. */
struct msg_hdr {
	uint32_t type;
	uint32_t len;
	uint64_t seq;
	uint8_t pad[16];
};
#define BODY_LEN 8

enum mode { MODE_TSYNC, MODE_NAIVE };

/* One run: the mode, the CPUs of both ends, and the results. */
struct run {
	enum mode mode;
	int cli_cpu, srv_cpu;	/* -1: not pinned */
	int rounds;
	int listen_fd;		/* naive: raw listening socket */
	struct tsync_listener *l; /* tsync: transport listener */
	int srv_ret;
	int nodelay_cli, nodelay_srv;
	int64_t *rtt_ns;
	int64_t total_ns;
};

/* Pins the calling thread to @cpu (if >= 0); returns 0 or -errno. */
static int pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * Sends one message. tsync: one writev for header and body. naive: two
 * plain writes, header then body, as naive code does.
 */
static int send_msg(enum mode mode, int fd, uint64_t seq)
{
	struct msg_hdr hdr = { .type = 1, .len = BODY_LEN, .seq = seq };
	uint8_t body[BODY_LEN] = { 0 };
	struct iovec iov[2] = {
		{ .iov_base = &hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = body, .iov_len = sizeof(body) },
	};
	int64_t deadline = tsync_deadline_ms(IO_TIMEOUT_MS);
	int ret;

	memcpy(body, &seq, sizeof(seq));
	if (mode == MODE_TSYNC)
		return tsync_writev_full(fd, iov, 2, deadline);
	ret = tsync_write_full(fd, &hdr, sizeof(hdr), deadline);
	if (ret)
		return ret;
	return tsync_write_full(fd, body, sizeof(body), deadline);
}

/* Receives one message and checks its sequence number. */
static int recv_msg(int fd, uint64_t seq)
{
	int64_t deadline = tsync_deadline_ms(IO_TIMEOUT_MS);
	uint8_t body[BODY_LEN];
	struct msg_hdr hdr;
	int ret;

	ret = tsync_read_full(fd, &hdr, sizeof(hdr), deadline);
	if (!ret && (hdr.len != BODY_LEN || hdr.seq != seq))
		ret = -EPROTO;
	if (!ret)
		ret = tsync_read_full(fd, body, sizeof(body), deadline);
	return ret;
}

/* Server thread: accepts one connection and echoes rounds + 1 messages. */
static void *server(void *arg)
{
	struct run *r = arg;
	int fd, ret;

	ret = pin(r->srv_cpu);
	if (ret)
		goto out;
	if (r->mode == MODE_TSYNC)
		fd = tsync_accept(r->l, NULL);
	else
		fd = accept(r->listen_fd, NULL, NULL);
	if (fd < 0) {
		ret = r->mode == MODE_TSYNC ? fd : -errno;
		goto out;
	}
	r->nodelay_srv = tsync_sock_get_nodelay(fd);
	for (int i = 0; i <= r->rounds && !ret; i++) {
		ret = recv_msg(fd, (uint64_t)i);
		if (!ret)
			ret = send_msg(r->mode, fd, (uint64_t)i);
	}
	close(fd);
out:
	r->srv_ret = ret;
	return NULL;
}

/* Makes a raw listening socket on 127.0.0.1, Nagle untouched; -errno. */
static int raw_listen(uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len)) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/* Connects a raw socket to 127.0.0.1:@port, Nagle untouched; fd or -errno. */
static int raw_connect(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

/* Runs one configuration; returns 0 or -errno with a reason printed. */
static int run_one(struct run *r)
{
	struct tsync_endpoint ep;
	char err[256], str[64];
	cpu_set_t saved;
	pthread_t th;
	uint16_t port = 0;
	int fd = -1, ret;
	int64_t t0, t1;

	r->l = NULL;
	r->listen_fd = -1;
	if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved))
		return -EINVAL;
	if (r->mode == MODE_TSYNC) {
		tsync_endpoint_parse("tcp:127.0.0.1:0", TSYNC_EP_ALLOW_PORT0, &ep, err,
				     sizeof(err));
		ret = tsync_listen(&ep, 4, &r->l, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "bench_01_nagle: %s\n", err);
			return ret;
		}
		port = (uint16_t)tsync_listener_port(r->l);
	} else {
		r->listen_fd = raw_listen(&port);
		if (r->listen_fd < 0) {
			fprintf(stderr, "bench_01_nagle: raw listen: %s\n", strerror(-r->listen_fd));
			return r->listen_fd;
		}
	}
	ret = -pthread_create(&th, NULL, server, r);
	if (ret)
		goto out;
	ret = pin(r->cli_cpu);
	if (!ret && r->mode == MODE_TSYNC) {
		snprintf(str, sizeof(str), "tcp:127.0.0.1:%u", port);
		tsync_endpoint_parse(str, 0, &ep, err, sizeof(err));
		fd = tsync_connect(&ep, IO_TIMEOUT_MS, NULL, err, sizeof(err));
		if (fd < 0)
			fprintf(stderr, "bench_01_nagle: %s\n", err);
	} else if (!ret) {
		fd = raw_connect(port);
	}
	if (fd < 0) {
		ret = ret ? ret : fd;
		/* unblock the server's accept */
		shutdown(r->mode == MODE_TSYNC ? tsync_listener_fd(r->l) : r->listen_fd,
			 SHUT_RDWR);
		pthread_join(th, NULL);
		goto out;
	}
	r->nodelay_cli = tsync_sock_get_nodelay(fd);
	/* one warm-up exchange, not counted */
	ret = send_msg(r->mode, fd, 0);
	if (!ret)
		ret = recv_msg(fd, 0);
	t0 = tsync_now_ns();
	for (int i = 1; i <= r->rounds && !ret; i++) {
		t1 = tsync_now_ns();
		ret = send_msg(r->mode, fd, (uint64_t)i);
		if (!ret)
			ret = recv_msg(fd, (uint64_t)i);
		r->rtt_ns[i - 1] = tsync_now_ns() - t1;
	}
	r->total_ns = tsync_now_ns() - t0;
	close(fd);
	pthread_join(th, NULL);
	if (!ret)
		ret = r->srv_ret;
	if (ret)
		fprintf(stderr, "bench_01_nagle: exchange failed: %s\n", strerror(-ret));
out:
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	if (r->l)
		tsync_listener_close(r->l);
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	return ret;
}

/* qsort comparator for int64_t. */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Returns the @p-th percentile (nearest rank) of sorted @v. */
static int64_t percentile(const int64_t *v, int n, double p)
{
	int k = (int)(p / 100.0 * n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* Formats @ns as microseconds or milliseconds into @buf. */
static const char *fmt_time(int64_t ns, char *buf, size_t len)
{
	if (ns < 10 * NSEC_PER_MSEC)
		snprintf(buf, len, "%.1f us", (double)ns / NSEC_PER_USEC);
	else
		snprintf(buf, len, "%.1f ms", (double)ns / NSEC_PER_MSEC);
	return buf;
}

struct result {
	char placement[32];
	struct run run;
	int64_t median, p99;
	int ok;
};

/* Runs @res's configuration and prints one table row. */
static void measure(struct result *res)
{
	struct run *r = &res->run;
	char a[32], b[32], c[32];

	r->rtt_ns = calloc((size_t)r->rounds, sizeof(int64_t));
	if (!r->rtt_ns)
		return;
	res->ok = run_one(r) == 0;
	if (res->ok) {
		qsort(r->rtt_ns, (size_t)r->rounds, sizeof(int64_t), cmp_i64);
		res->median = percentile(r->rtt_ns, r->rounds, 50);
		res->p99 = percentile(r->rtt_ns, r->rounds, 99);
		printf("%-16s %-34s %4d %10s %10s %10s  %d/%d\n", res->placement,
		       r->mode == MODE_TSYNC ? "tsync: NODELAY, 1 writev/msg" :
		       "naive: Nagle on, 2 writes/msg",
		       r->rounds, fmt_time(res->median, a, sizeof(a)),
		       fmt_time(res->p99, b, sizeof(b)),
		       fmt_time(r->total_ns, c, sizeof(c)), r->nodelay_cli, r->nodelay_srv);
	} else {
		printf("%-16s %-34s failed\n", res->placement,
		       r->mode == MODE_TSYNC ? "tsync" : "naive");
	}
	fflush(stdout);
	free(r->rtt_ns);
	r->rtt_ns = NULL;
}

/* Prints the ratio of two medians, if both were measured. */
static void ratio(const char *what, const struct result *num, const struct result *den)
{
	if (num->ok && den->ok && den->median > 0)
		printf("  %-52s x%.0f\n", what, (double)num->median / (double)den->median);
}

int main(void)
{
	cpu_set_t avail;
	int cpus[2] = { -1, -1 }, n = 0, failed = 0;
	struct result res[4];

	if (sched_getaffinity(0, sizeof(avail), &avail) == 0)
		for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
			if (CPU_ISSET(c, &avail))
				cpus[n++] = c;
	if (n < 1) {
		fprintf(stderr, "bench_01_nagle: no usable CPU found\n");
		return 1;
	}
	printf("bench_01_nagle: request/response round trips over loopback TCP, "
	       "%zu-byte header + %d-byte body per message\n", sizeof(struct msg_hdr), BODY_LEN);
	printf("(tsync runs %d round trips = one sync round; naive runs only %d, "
	       "since each costs ~88 ms)\n\n", ROUNDS_TSYNC, ROUNDS_NAIVE);
	printf("%-16s %-34s %4s %10s %10s %10s  %s\n", "placement", "sender", "n", "median",
	       "p99", "total", "TCP_NODELAY cli/srv");

	memset(res, 0, sizeof(res));
	for (int i = 0; i < 4; i++) {
		struct run *r = &res[i].run;

		if (i < 2)
			snprintf(res[i].placement, sizeof(res[i].placement), "same CPU %d",
				 cpus[0]);
		else
			snprintf(res[i].placement, sizeof(res[i].placement), "CPUs %d and %d",
				 cpus[0], cpus[1]);
		r->mode = i % 2 ? MODE_NAIVE : MODE_TSYNC;
		r->rounds = i % 2 ? ROUNDS_NAIVE : ROUNDS_TSYNC;
		r->cli_cpu = cpus[0];
		r->srv_cpu = i < 2 ? cpus[0] : cpus[1];
	}
	for (int i = 0; i < 4; i++) {
		if (i >= 2 && n < 2) {
			printf("%-16s only one CPU available: skipped\n", res[i].placement);
			continue;
		}
		measure(&res[i]);
		failed |= !res[i].ok;
	}

	printf("\nratios of medians:\n");
	ratio("naive / tsync, same CPU", &res[1], &res[0]);
	ratio("naive / tsync, different CPUs", &res[3], &res[2]);
	ratio("tsync: different CPUs / same CPU", &res[2], &res[0]);
	if (res[1].ok)
		printf("  naive, same CPU: a %d-probe round would take ~%.1f s (median x %d)\n",
		       ROUNDS_TSYNC, (double)res[1].median * ROUNDS_TSYNC / NSEC_PER_SEC,
		       ROUNDS_TSYNC);
	if (res[0].ok)
		printf("  tsync, same CPU: the %d-probe round took %.1f ms\n", ROUNDS_TSYNC,
		       (double)res[0].run.total_ns / NSEC_PER_MSEC);
	printf("(timing varies with load; other processes share these CPUs. "
	       "p99 of %d samples is their maximum.)\n", ROUNDS_NAIVE);
	return failed ? 1 : 0;
}
