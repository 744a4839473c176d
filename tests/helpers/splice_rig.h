/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test and benchmark rig for the splice forwarder, all on loopback TCP:
 *
 *   snd --TCP--> a | forwarder thread: a -> pipe -> b | b --TCP--> rcv
 *
 * Every socket has TCP_NODELAY, as tsync's own sockets do, so a held tail
 * can only come from SPLICE_F_MORE. Header-only (static inline) so that
 * both tests/unit/common/stream/test_splice.c and tests/bench/bench_03_splice.c use it.
 */
#ifndef TSYNC_TESTS_SPLICE_RIG_H
#define TSYNC_TESTS_SPLICE_RIG_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common/stream/splice.h"
#include "common/base/timeutil.h"

struct splice_rig {
	int snd;		/* sender end */
	int a;			/* forwarder source */
	int b;			/* forwarder sink */
	int rcv;		/* receiver end */
	int stop_fd;		/* eventfd: stops the forwarder thread */
	struct tsync_fwd *fwd;
	pthread_t thr;
	bool running;
	int result;		/* what tsync_fwd_run() returned */
	int64_t cpu_ns;		/* CPU time of the forwarder thread */
};

/* The message tails of the regression sweep (bytes past k * 8 KiB). */
static const size_t splice_sweep_r[] = { 1, 4096, 7371, 7372, 7800, 8191, 8192 };
#define SPLICE_SWEEP_NR 7
#define SPLICE_SWEEP_K 4

/* Returns true when tail @r of the sweep is one the 90% MORE rule stalls
 * with an 8 KiB pipe and no flush (7372..8191). */
static inline bool splice_sweep_stalls(size_t r)
{
	return r >= 7372 && r <= 8191;
}

/* Sets TCP_NODELAY on @fd; returns 0 or -errno. */
static inline int splice_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ?
	       -errno : 0;
}

/* Connects a loopback TCP pair (both NODELAY); returns 0 or -errno. */
static inline int splice_tcp_pair(int *client, int *server)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int l, c = -1, s = -1, ret = 0;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sin, &len)) {
		ret = -errno;
		goto out;
	}
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sin, sizeof(sin))) {
		ret = -errno;
		goto out;
	}
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0) {
		ret = -errno;
		goto out;
	}
	ret = splice_nodelay(c);
	if (!ret)
		ret = splice_nodelay(s);
out:
	close(l);
	if (ret) {
		if (c >= 0)
			close(c);
		if (s >= 0)
			close(s);
		return ret;
	}
	*client = c;
	*server = s;
	return 0;
}

/* Returns the calling thread's CPU time (user + system) in ns. */
static inline int64_t splice_thread_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * NSEC_PER_USEC;
}

/* The forwarder thread: runs until EOF or stop, then ends the sink. */
static inline void *splice_rig_thread(void *arg)
{
	struct splice_rig *r = arg;
	int64_t c0 = splice_thread_cpu_ns();

	r->result = tsync_fwd_run(r->fwd, r->stop_fd, -1);
	if (r->result == TSYNC_FWD_EOF)
		shutdown(r->b, SHUT_WR);
	r->cpu_ns = splice_thread_cpu_ns() - c0;
	return NULL;
}

/* Closes every fd of @r that is open and marks it closed. */
static inline void splice_rig_close(struct splice_rig *r)
{
	int *fds[] = { &r->snd, &r->a, &r->b, &r->rcv, &r->stop_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/*
 * Builds the rig and starts the forwarder thread with @opts. The sender
 * and receiver ends are non-blocking. Returns 0 or -errno.
 */
static inline int splice_rig_start(struct splice_rig *r,
				   const struct tsync_fwd_opts *opts)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->snd = r->a = r->b = r->rcv = r->stop_fd = -1;
	ret = splice_tcp_pair(&r->snd, &r->a);
	if (!ret)
		ret = splice_tcp_pair(&r->b, &r->rcv);
	if (ret)
		goto fail;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_fd < 0 ||
	    fcntl(r->snd, F_SETFL, O_NONBLOCK) ||
	    fcntl(r->rcv, F_SETFL, O_NONBLOCK)) {
		ret = -errno;
		goto fail;
	}
	ret = tsync_fwd_new(r->a, r->b, opts, &r->fwd);
	if (ret)
		goto fail;
	ret = -pthread_create(&r->thr, NULL, splice_rig_thread, r);
	if (ret)
		goto fail;
	r->running = true;
	return 0;
fail:
	tsync_fwd_free(r->fwd);
	r->fwd = NULL;
	splice_rig_close(r);
	return ret;
}

/* Stops the forwarder thread if it runs and waits for it; returns what
 * the forwarder returned. */
static inline int splice_rig_join(struct splice_rig *r)
{
	uint64_t one = 1;

	if (r->running) {
		if (write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
			perror("eventfd write");
		pthread_join(r->thr, NULL);
		r->running = false;
	}
	return r->result;
}

/* Stops the forwarder thread (if running), frees and closes everything.
 * Returns what the forwarder returned. */
static inline int splice_rig_stop(struct splice_rig *r)
{
	splice_rig_join(r);
	tsync_fwd_free(r->fwd);
	r->fwd = NULL;
	splice_rig_close(r);
	return r->result;
}

/* The byte at offset @i of message @tag. */
static inline uint8_t splice_pat(uint32_t tag, size_t i)
{
	return (uint8_t)(tag * 131u + i * 7u + (i >> 8));
}

/*
 * Sends one message of @len bytes through the rig and receives it whole,
 * checking every byte. Returns the tail latency in ns (last byte received
 * minus last byte sent), -ETIMEDOUT after @timeout_ms, -EBADMSG on a wrong
 * byte, or -errno.
 */
static inline int64_t splice_rig_msg(struct splice_rig *r, size_t len,
				     uint32_t tag, int timeout_ms)
{
	int64_t deadline = tsync_deadline_ms(timeout_ms), t_sent = 0, ret;
	uint8_t *sbuf = malloc(len), *rbuf = malloc(len);
	size_t sent = 0, got = 0, i;
	struct pollfd pfd[2];
	ssize_t n;

	if (!sbuf || !rbuf) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < len; i++)
		sbuf[i] = splice_pat(tag, i);
	while (got < len) {
		if (sent < len) {
			n = send(r->snd, sbuf + sent, len - sent, MSG_NOSIGNAL);
			if (n > 0) {
				sent += (size_t)n;
				if (sent == len)
					t_sent = tsync_now_ns();
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				ret = -errno;
				goto out;
			}
		}
		n = recv(r->rcv, rbuf + got, len - got, 0);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0) {
			ret = -EPIPE;
			goto out;
		}
		if (errno != EAGAIN && errno != EINTR) {
			ret = -errno;
			goto out;
		}
		pfd[0].fd = sent < len ? r->snd : -1;
		pfd[0].events = POLLOUT;
		pfd[1].fd = r->rcv;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, tsync_remaining_ms(deadline)) < 0 && errno != EINTR) {
			ret = -errno;
			goto out;
		}
		if (tsync_now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			goto out;
		}
	}
	ret = tsync_now_ns() - t_sent;
	for (i = 0; i < len; i++) {
		if (rbuf[i] != sbuf[i]) {
			fprintf(stderr, "message %u len %zu: byte %zu is %02x, "
				"expected %02x\n", tag, len, i, rbuf[i], sbuf[i]);
			ret = -EBADMSG;
			break;
		}
	}
out:
	free(sbuf);
	free(rbuf);
	return ret;
}

/*
 * Runs the regression sweep through one rig with @opts: messages of
 * k * @unit + r * @unit / 8192 bytes for k = 0..3 and r of splice_sweep_r.
 * Fills @lat_ns[k][i] with each tail latency (or -errno). Returns 0, or
 * -errno if the rig could not be built.
 */
static inline int splice_sweep(const struct tsync_fwd_opts *opts, size_t unit,
			       int timeout_ms,
			       int64_t lat_ns[SPLICE_SWEEP_K][SPLICE_SWEEP_NR],
			       struct tsync_fwd_stats *st)
{
	struct splice_rig r;
	uint32_t tag = 1;
	int ret;

	ret = splice_rig_start(&r, opts);
	if (ret)
		return ret;
	for (int k = 0; k < SPLICE_SWEEP_K; k++)
		for (int i = 0; i < SPLICE_SWEEP_NR; i++)
			lat_ns[k][i] = splice_rig_msg(&r, k * unit +
				splice_sweep_r[i] * (unit / 8192), tag++,
				timeout_ms);
	splice_rig_join(&r);
	if (st)
		tsync_fwd_get_stats(r.fwd, st);
	splice_rig_stop(&r);
	return 0;
}

#endif
