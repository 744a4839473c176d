// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The transport layer and the deadline I/O helpers on real sockets:
 * loopback TCP over IPv4 and IPv6, TCP_NODELAY read back on both ends,
 * timeouts, closed and reset peers, refused connects, vsock error paths
 * (this machine has no vsock loopback), and address formatting.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>
#include <cmocka.h>

#include "common/net/endpoint.h"
#include "common/base/io.h"
#include "common/base/timeutil.h"
#include "common/net/tcp.h"
#include "common/net/transport.h"

/*
 * A call with a deadline must not return before it (checked exactly) and
 * must not hang past it. The late side only tells "ended by the deadline"
 * from "hung" or "fell back to some default timeout": a loaded machine
 * can wake the caller late by a lot, so the margin is wide.
 */
#define LATE_MARGIN_MS 10000
/* "At once" (a refused connect, a closed peer) is checked against a
 * deadline far away: whatever the load, it must not be what ended it. */
#define FAR_DEADLINE_MS 60000
#define AT_ONCE_NS (10 * NSEC_PER_SEC)

/* A connected pair made through the transport layer. */
struct pair {
	struct tsync_listener *l;
	int cli, srv;
	struct tsync_peer cpeer, speer;
};

/* Parses @str (port 0 allowed) or fails the test. */
static void parse_ep(const char *str, struct tsync_endpoint *ep)
{
	char err[256];

	if (tsync_endpoint_parse(str, TSYNC_EP_ALLOW_PORT0, ep, err, sizeof(err)))
		fail_msg("parse '%s': %s", str, err);
}

/*
 * Listens on @listen_ep (port 0), connects to @host_fmt with the bound
 * port, accepts. Returns 0, or -errno from listen (for skips).
 */
static int make_pair(const char *listen_ep, const char *host_fmt, struct pair *p)
{
	struct tsync_endpoint ep;
	char err[256], str[128];
	int ret;

	memset(p, 0, sizeof(*p));
	p->cli = p->srv = -1;
	parse_ep(listen_ep, &ep);
	ret = tsync_listen(&ep, 8, &p->l, err, sizeof(err));
	if (ret)
		return ret;
	assert_true(tsync_listener_port(p->l) > 0);
	snprintf(str, sizeof(str), host_fmt, tsync_listener_port(p->l));
	parse_ep(str, &ep);
	p->cli = tsync_connect(&ep, 5000, &p->cpeer, err, sizeof(err));
	if (p->cli < 0)
		fail_msg("connect %s: %s", str, err);
	p->srv = tsync_accept(p->l, &p->speer);
	assert_true(p->srv >= 0);
	return 0;
}

/* Closes what make_pair() opened. */
static void free_pair(struct pair *p)
{
	if (p->cli >= 0)
		close(p->cli);
	if (p->srv >= 0)
		close(p->srv);
	tsync_listener_close(p->l);
}

/* Returns the local port of @fd. */
static unsigned int local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Sends one small header+body message with one writev and checks it. */
static void round_trip(int a, int b)
{
	struct { uint32_t type, len; } hdr = { 7, 5 }, rhdr;
	char body[5] = "hello", rbody[5];
	struct iovec iov[2] = {
		{ .iov_base = &hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = body, .iov_len = sizeof(body) },
	};

	assert_int_equal(tsync_writev_full(a, iov, 2, tsync_deadline_ms(2000)), 0);
	assert_int_equal(tsync_read_full(b, &rhdr, sizeof(rhdr), tsync_deadline_ms(2000)), 0);
	assert_int_equal(rhdr.type, 7);
	assert_int_equal(rhdr.len, 5);
	assert_int_equal(tsync_read_full(b, rbody, rhdr.len, tsync_deadline_ms(2000)), 0);
	assert_memory_equal(rbody, "hello", 5);
}

/* Checks the properties every connected fd must have. */
static void check_conn_fd(int fd)
{
	assert_int_equal(tsync_sock_get_nodelay(fd), 1);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
}

/* Runs the loopback checks over one address family. */
static void loopback_tcp(const char *listen_ep, const char *connect_fmt,
			 const char *name_prefix)
{
	struct tsync_peer from;
	struct pair p;
	char want[128];
	int one = 0;
	socklen_t len = sizeof(one);
	int ret;

	ret = make_pair(listen_ep, connect_fmt, &p);
	if (ret == -EAFNOSUPPORT || ret == -EADDRNOTAVAIL) {
		print_message("no %s here (%s), skipping\n", listen_ep, strerror(-ret));
		skip();
	}
	assert_int_equal(ret, 0);

	/* the listener: its name carries the real port, SO_REUSEADDR, cloexec */
	snprintf(want, sizeof(want), "%s%u", name_prefix, tsync_listener_port(p.l));
	assert_string_equal(tsync_listener_name(p.l), want);
	assert_int_equal(getsockopt(tsync_listener_fd(p.l), SOL_SOCKET, SO_REUSEADDR,
				    &one, &len), 0);
	assert_int_equal(one, 1);
	assert_true(fcntl(tsync_listener_fd(p.l), F_GETFD) & FD_CLOEXEC);

	/* TCP_NODELAY on both the connecting and the accepted socket */
	check_conn_fd(p.cli);
	check_conn_fd(p.srv);

	/* peer names: connect names the listener, accept names the client */
	assert_int_equal(p.cpeer.kind, TSYNC_EP_TCP);
	assert_string_equal(p.cpeer.name, want);
	assert_int_equal(p.speer.kind, TSYNC_EP_TCP);
	snprintf(want, sizeof(want), "%s%u", name_prefix, local_port(p.cli));
	assert_string_equal(p.speer.name, want);
	assert_int_equal(tsync_peer_from_fd(p.srv, &from), 0);
	assert_string_equal(from.name, want);
	assert_int_equal(tsync_peer_from_fd(p.cli, &from), 0);
	assert_string_equal(from.name, p.cpeer.name);

	round_trip(p.cli, p.srv);
	round_trip(p.srv, p.cli);
	free_pair(&p);
}

/* Loopback TCP over IPv4. */
static void test_tcp4_loopback(void **state)
{
	(void)state;
	loopback_tcp("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", "tcp:127.0.0.1:");
}

/* Loopback TCP over IPv6. */
static void test_tcp6_loopback(void **state)
{
	(void)state;
	loopback_tcp("tcp:[::1]:0", "tcp:[::1]:%u", "tcp:[::1]:");
}

/* A name that resolves (localhost) works for listen and connect. Where
 * "localhost" has no address (a minimal root without /etc/hosts and no
 * resolver that knows it), there is no name to test with: skip. */
static void test_tcp_name(void **state)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct pair p;
	int gai;

	(void)state;
	gai = getaddrinfo("localhost", NULL, &hints, &ai);
	if (gai) {
		print_message("'localhost' does not resolve here (%s; no /etc/hosts?): "
			      "skipped\n", gai_strerror(gai));
		skip();
	}
	freeaddrinfo(ai);
	assert_int_equal(make_pair("tcp:localhost:0", "tcp:localhost:%u", &p), 0);
	check_conn_fd(p.cli);
	check_conn_fd(p.srv);
	round_trip(p.cli, p.srv);
	free_pair(&p);
}

/* The NODELAY read-back can tell: a raw socket starts without it. */
static void test_nodelay_readback_discriminates(void **state)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(tsync_sock_get_nodelay(fd), 0);
	close(fd);
	/* and on something that is not TCP it is an error, not "off" */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_true(tsync_sock_get_nodelay(fd) < 0);
	close(fd);
}

struct echo_arg {
	int fd;
	size_t len;
	int ret;
};

/* Thread: reads @len bytes, then writes them back. */
static void *echo_big(void *arg)
{
	struct echo_arg *a = arg;
	char *buf = malloc(a->len);

	a->ret = -ENOMEM;
	if (buf) {
		a->ret = tsync_read_full(a->fd, buf, a->len, tsync_deadline_ms(10000));
		if (!a->ret)
			a->ret = tsync_write_full(a->fd, buf, a->len, tsync_deadline_ms(10000));
	}
	free(buf);
	return NULL;
}

/* A message larger than the socket buffers goes through short transfers. */
static void test_large_message(void **state)
{
	const size_t len = 8 << 20;
	char *out = malloc(len), *in = malloc(len);
	struct echo_arg arg;
	pthread_t th;
	struct pair p;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	for (size_t i = 0; i < len; i++)
		out[i] = (char)(i * 2654435761u >> 13);
	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	arg = (struct echo_arg){ .fd = p.srv, .len = len };
	assert_int_equal(pthread_create(&th, NULL, echo_big, &arg), 0);
	assert_int_equal(tsync_write_full(p.cli, out, len, tsync_deadline_ms(10000)), 0);
	assert_int_equal(tsync_read_full(p.cli, in, len, tsync_deadline_ms(10000)), 0);
	pthread_join(th, NULL);
	assert_int_equal(arg.ret, 0);
	assert_memory_equal(in, out, len);
	free_pair(&p);
	free(out);
	free(in);
}

/* Reads @len bytes from a silent peer with a @ms deadline; checks timing. */
static void expect_read_timeout(int fd, size_t len, int ms)
{
	char buf[64];
	int64_t t0 = tsync_now_ns(), dt_ms;

	assert_true(len <= sizeof(buf));
	assert_int_equal(tsync_read_full(fd, buf, len, tsync_deadline_ms(ms)), -ETIMEDOUT);
	dt_ms = (tsync_now_ns() - t0) / NSEC_PER_MSEC;
	print_message("read deadline %d ms -> -ETIMEDOUT after %lld ms\n", ms,
		      (long long)dt_ms);
	assert_true(dt_ms >= ms - 2);
	assert_true(dt_ms <= ms + LATE_MARGIN_MS);
}

/* A silent peer gives -ETIMEDOUT at the deadline, not before, not hung. */
static void test_read_timeout(void **state)
{
	struct pair p;

	(void)state;
	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	expect_read_timeout(p.cli, 8, 300);
	/* half a message, then silence */
	assert_int_equal(tsync_write_full(p.srv, "abc", 3, tsync_deadline_ms(1000)), 0);
	expect_read_timeout(p.cli, 8, 200);
	/* a deadline already past still returns at once */
	expect_read_timeout(p.cli, 8, 0);
	free_pair(&p);
}

/* A write to a peer that never reads times out once the buffers are full. */
static void test_write_timeout(void **state)
{
	const size_t len = 32 << 20;
	char *buf = calloc(1, len);
	int small = 4096;
	int64_t t0, dt_ms;
	struct pair p;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	setsockopt(p.cli, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(p.srv, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	t0 = tsync_now_ns();
	assert_int_equal(tsync_write_full(p.cli, buf, len, tsync_deadline_ms(300)),
			 -ETIMEDOUT);
	dt_ms = (tsync_now_ns() - t0) / NSEC_PER_MSEC;
	assert_true(dt_ms >= 298);
	assert_true(dt_ms <= 300 + LATE_MARGIN_MS);
	free_pair(&p);
	free(buf);
}

/* A peer that closes gives -EPIPE; one that resets gives -ECONNRESET. */
static void test_read_closed_peer(void **state)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char buf[8];
	int64_t t0;
	struct pair p;

	(void)state;
	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	assert_int_equal(tsync_write_full(p.srv, "ab", 2, tsync_deadline_ms(1000)), 0);
	close(p.srv);
	p.srv = -1;
	t0 = tsync_now_ns();
	assert_int_equal(tsync_read_full(p.cli, buf, 8, tsync_deadline_ms(FAR_DEADLINE_MS)),
			 -EPIPE);
	assert_true(tsync_now_ns() - t0 < AT_ONCE_NS);
	free_pair(&p);

	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	assert_int_equal(setsockopt(p.srv, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(p.srv);
	p.srv = -1;
	t0 = tsync_now_ns();
	assert_int_equal(tsync_read_full(p.cli, buf, 8, tsync_deadline_ms(FAR_DEADLINE_MS)),
			 -ECONNRESET);
	assert_true(tsync_now_ns() - t0 < AT_ONCE_NS);
	free_pair(&p);
}

/* Returns 1 if SIGPIPE is pending for this thread or process. */
static int sigpipe_pending(void)
{
	sigset_t set;

	sigpending(&set);
	return sigismember(&set, SIGPIPE) == 1;
}

/*
 * Writing to a closed peer is an error, not death by SIGPIPE (the default
 * disposition is restored first, so a SIGPIPE would kill this test).
 */
static void test_write_closed_peer(void **state)
{
	int64_t deadline = tsync_deadline_ms(FAR_DEADLINE_MS);
	struct iovec iov[2];
	char hdr[8] = "header", body[16] = "body";
	struct pollfd pfd;
	struct pair p;
	int ret = 0, fds[2];

	(void)state;
	signal(SIGPIPE, SIG_DFL);
	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	close(p.srv);
	p.srv = -1;
	/* The first write is still taken; the closed peer answers it with
	 * an RST, which raises POLLERR: wait for that, then write again. */
	while (!ret && tsync_now_ns() < deadline) {
		iov[0] = (struct iovec){ .iov_base = hdr, .iov_len = sizeof(hdr) };
		iov[1] = (struct iovec){ .iov_base = body, .iov_len = sizeof(body) };
		ret = tsync_writev_full(p.cli, iov, 2, tsync_deadline_ms(1000));
		if (!ret) {
			pfd = (struct pollfd){ .fd = p.cli, .events = 0 };
			poll(&pfd, 1, tsync_remaining_ms(deadline));
		}
	}
	if (ret != -EPIPE && ret != -ECONNRESET)
		fail_msg("write to a closed peer: %d (%s)", ret, strerror(-ret));
	free_pair(&p);

	/* a pipe has no MSG_NOSIGNAL: the helper must still not raise it */
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	assert_int_equal(tsync_write_full(fds[1], "x", 1, tsync_deadline_ms(1000)), -EPIPE);
	assert_false(sigpipe_pending());
	close(fds[1]);
}

/* Pipes work too, and a blocking pipe still honours the deadline. */
static void test_pipe_deadlines(void **state)
{
	char buf[PIPE_BUF * 3], got[sizeof(buf)];
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	memset(buf, 'q', sizeof(buf));
	assert_int_equal(tsync_write_full(fds[1], buf, sizeof(buf), tsync_deadline_ms(1000)), 0);
	assert_int_equal(tsync_read_full(fds[0], got, sizeof(got), tsync_deadline_ms(1000)), 0);
	assert_memory_equal(got, buf, sizeof(buf));
	/* empty blocking pipe: a read times out instead of blocking */
	expect_read_timeout(fds[0], 1, 150);
	/* a full pipe: a write times out instead of blocking */
	assert_int_equal(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
	{
		char *big = calloc(1, 1 << 20);

		assert_non_null(big);
		assert_int_equal(tsync_write_full(fds[1], big, 1 << 20, tsync_deadline_ms(150)),
				 -ETIMEDOUT);
		free(big);
	}
	close(fds[1]);
	/* writer gone: the rest is read, then -EPIPE */
	while (tsync_read_full(fds[0], got, 1, tsync_deadline_ms(1000)) == 0)
		;
	assert_int_equal(tsync_read_full(fds[0], got, 1, tsync_deadline_ms(1000)), -EPIPE);
	close(fds[0]);
}

/* A connect to a port nobody listens on fails at once with a clear reason. */
static void test_connect_refused(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	struct tsync_endpoint ep;
	char str[64], err[256], want[256];
	int64_t t0;
	int hold, ret;

	(void)state;
	/* a bound, non-listening socket keeps the port ours and closed */
	hold = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(hold >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(hold, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(hold, (struct sockaddr *)&sin, &len), 0);
	snprintf(str, sizeof(str), "tcp:127.0.0.1:%u", ntohs(sin.sin_port));
	parse_ep(str, &ep);
	t0 = tsync_now_ns();
	ret = tsync_connect(&ep, FAR_DEADLINE_MS, NULL, err, sizeof(err));
	assert_int_equal(ret, -ECONNREFUSED);
	assert_true(tsync_now_ns() - t0 < AT_ONCE_NS);
	snprintf(want, sizeof(want), "cannot connect to %s: Connection refused: no "
		 "tsync-agent listens on that address and port: is it running there "
		 "(tsync-agent -l tcp:0.0.0.0:8823)?", str);
	assert_string_equal(err, want);
	close(hold);
}

/*
 * A connect that gets no answer times out at its deadline. Loopback always
 * answers, so the listener's accept queue is filled (backlog 0, nothing
 * accepted): the kernel then drops new SYNs and the connect hangs.
 */
static void test_connect_timeout(void **state)
{
	struct tsync_listener *l;
	struct tsync_endpoint ep;
	char str[64], err[256], want[256];
	int fds[8], nfds = 0, ret = 0;
	int64_t t0 = 0, dt_ms;

	(void)state;
	parse_ep("tcp:127.0.0.1:0", &ep);
	assert_int_equal(tsync_listen(&ep, 0, &l, err, sizeof(err)), 0);
	snprintf(str, sizeof(str), "tcp:127.0.0.1:%u", tsync_listener_port(l));
	parse_ep(str, &ep);
	while (nfds < 8) {
		t0 = tsync_now_ns();
		ret = tsync_connect(&ep, 300, NULL, err, sizeof(err));
		if (ret < 0)
			break;
		fds[nfds++] = ret;
	}
	dt_ms = (tsync_now_ns() - t0) / NSEC_PER_MSEC;
	print_message("%d connects queued, then %d (%s) after %lld ms\n", nfds, ret,
		      err, (long long)dt_ms);
	if (ret >= 0) {
		print_message("the accept queue never filled; connect timeout untested\n");
		skip();
	}
	assert_int_equal(ret, -ETIMEDOUT);
	snprintf(want, sizeof(want), "cannot connect to %s: timed out: no answer from "
		 "that address: check it, and a firewall on the way", str);
	assert_string_equal(err, want);
	assert_true(dt_ms >= 298);
	assert_true(dt_ms <= 300 + LATE_MARGIN_MS);
	while (nfds)
		close(fds[--nfds]);
	tsync_listener_close(l);
}

/* Listen errors name the endpoint and the reason. */
static void test_listen_errors(void **state)
{
	struct tsync_listener *l, *l2;
	struct tsync_endpoint ep;
	char str[64], err[256], want[256];

	(void)state;
	/* TEST-NET-1: not an address of this machine */
	parse_ep("tcp:192.0.2.1:0", &ep);
	assert_int_equal(tsync_listen(&ep, 4, &l, err, sizeof(err)), -EADDRNOTAVAIL);
	assert_string_equal(err, "cannot listen on tcp:192.0.2.1:0: "
			    "Cannot assign requested address: no interface of this machine "
			    "has that address: use one it has, or 0.0.0.0 with --allow");

	/* a port in use by another listener */
	parse_ep("tcp:127.0.0.1:0", &ep);
	assert_int_equal(tsync_listen(&ep, 4, &l, err, sizeof(err)), 0);
	snprintf(str, sizeof(str), "tcp:127.0.0.1:%u", tsync_listener_port(l));
	parse_ep(str, &ep);
	assert_int_equal(tsync_listen(&ep, 4, &l2, err, sizeof(err)), -EADDRINUSE);
	snprintf(want, sizeof(want), "cannot listen on %s: Address already in use: another "
		 "program (another tsync-agent?) listens there: stop it, or choose another "
		 "port", str);
	assert_string_equal(err, want);
	tsync_listener_close(l);
	/* SO_REUSEADDR: the port is free again at once after close */
	assert_int_equal(tsync_listen(&ep, 4, &l, err, sizeof(err)), 0);
	tsync_listener_close(l);
	tsync_listener_close(NULL);

	/* no backend for an unknown kind */
	memset(&ep, 0, sizeof(ep));
	assert_null(tsync_transport_ops(0));
	assert_int_equal(tsync_listen(&ep, 4, &l, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unsupported endpoint kind");
	assert_int_equal(tsync_connect(&ep, 100, NULL, err, sizeof(err)), -EINVAL);
	assert_ptr_equal(tsync_transport_ops(TSYNC_EP_TCP), &tsync_tcp_ops);
	assert_ptr_equal(tsync_transport_ops(TSYNC_EP_VSOCK), &tsync_vsock_ops);
}

/* Returns 1 if this kernel can make vsock sockets, else prints why. */
static int have_vsock(void)
{
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		print_message("no vsock here: %s\n", strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

/* Listening on vsock:any on some port works; the name parses back. */
static void test_vsock_listen_any(void **state)
{
	struct tsync_listener *l = NULL;
	struct tsync_endpoint ep, back;
	char str[64], err[256];
	unsigned int port = 20000 + (unsigned int)getpid() % 30000;
	int ret = -EADDRINUSE;

	(void)state;
	if (!have_vsock())
		skip();
	for (int i = 0; i < 20 && ret == -EADDRINUSE; i++, port++) {
		snprintf(str, sizeof(str), "vsock:any:%u", port);
		parse_ep(str, &ep);
		ret = tsync_listen(&ep, 4, &l, err, sizeof(err));
	}
	if (ret)
		fail_msg("vsock listen: %s", err);
	assert_string_equal(tsync_listener_name(l), str);
	assert_int_equal(tsync_listener_port(l), port - 1);
	assert_true(tsync_listener_fd(l) >= 0);
	assert_int_equal(tsync_endpoint_parse(tsync_listener_name(l), 0, &back, err,
					      sizeof(err)), 0);
	assert_int_equal(back.kind, TSYNC_EP_VSOCK);
	assert_int_equal(back.cid, VMADDR_CID_ANY);
	/* no connection is waiting: a listener is not a peer */
	{
		struct tsync_peer peer;

		assert_int_equal(tsync_peer_from_fd(tsync_listener_fd(l), &peer), -ENOTCONN);
	}
	tsync_listener_close(l);
}

/* With vsock_port_any, port 0 is the kernel's choice: a real port, which
 * the listener reports in its port and name. */
static void test_vsock_listen_port_any(void **state)
{
	struct tsync_listener *l = NULL;
	struct tsync_endpoint ep;
	char str[64], err[256];

	(void)state;
	if (!have_vsock())
		skip();
	parse_ep("vsock:any:0", &ep);
	ep.vsock_port_any = true;
	if (tsync_listen(&ep, 4, &l, err, sizeof(err)))
		fail_msg("vsock listen on the kernel's port: %s", err);
	assert_true(tsync_listener_port(l) != 0);
	assert_true(tsync_listener_port(l) != VMADDR_PORT_ANY);
	snprintf(str, sizeof(str), "vsock:any:%u", tsync_listener_port(l));
	assert_string_equal(tsync_listener_name(l), str);
	tsync_listener_close(l);
}

/* vsock port 0 is refused with a reason; an address we lack fails cleanly. */
static void test_vsock_listen_errors(void **state)
{
	struct tsync_listener *l;
	struct tsync_endpoint ep;
	char err[256];
	int ret;

	(void)state;
	parse_ep("vsock:any:0", &ep);
	assert_int_equal(tsync_listen(&ep, 4, &l, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cannot listen on vsock:any:0: vsock has no free-port "
			    "choice in 1-65535, give a port number");
	if (!have_vsock())
		skip();
	/* CID 42 is not ours (a guest's own CID is set by its VMM) */
	parse_ep("vsock:42:40123", &ep);
	ret = tsync_listen(&ep, 4, &l, err, sizeof(err));
	assert_int_equal(ret, -EADDRNOTAVAIL);
	assert_string_equal(err, "cannot listen on vsock:42:40123: "
			    "Cannot assign requested address: that CID is not this "
			    "machine's: listen on vsock:any:PORT");
}

/*
 * Connecting to vsock:local fails cleanly: no vsock loopback here, so the
 * result is an error (which one depends on the transports loaded), within
 * the deadline.
 */
static void test_vsock_connect_local(void **state)
{
	static const int plausible[] = {
		ETIMEDOUT, ECONNRESET, ECONNREFUSED, ENODEV, ENETUNREACH,
		EHOSTUNREACH, EADDRNOTAVAIL, EAFNOSUPPORT, ESOCKTNOSUPPORT,
	};
	struct tsync_endpoint ep;
	char err[256];
	int64_t t0, dt_ms;
	int ret, ok = 0;

	(void)state;
	if (!have_vsock())
		skip();
	parse_ep("vsock:local:40124", &ep);
	t0 = tsync_now_ns();
	ret = tsync_connect(&ep, 400, NULL, err, sizeof(err));
	dt_ms = (tsync_now_ns() - t0) / NSEC_PER_MSEC;
	print_message("vsock:local connect: %d (%s) after %lld ms\n", ret, err,
		      (long long)dt_ms);
	if (ret >= 0) {
		close(ret);
		fail_msg("connected to vsock:local:40124 with nobody listening");
	}
	for (size_t i = 0; i < sizeof(plausible) / sizeof(plausible[0]); i++)
		ok |= ret == -plausible[i];
	if (!ok)
		fail_msg("unexpected error %d: %s", ret, err);
	assert_true(!strncmp(err, "cannot connect to vsock:1:40124: ", 33) ||
		    !strncmp(err, "cannot create vsock socket for vsock:1:40124: ", 46));
	assert_true(dt_ms <= 400 + LATE_MARGIN_MS);
}

#define VSOCK_HINT "this host has no vsock transport (modprobe vhost_vsock), " \
	"or this guest has no vsock device"

/*
 * vsock's "No such device" names the fix: the backend's hint, and the
 * whole message of a connect that meets it. Here the connect runs where a
 * guest CID has no transport (no vhost_vsock loaded, as in most
 * containers); elsewhere that part is skipped.
 */
static void test_vsock_no_device(void **state)
{
	struct tsync_endpoint ep = { .kind = TSYNC_EP_VSOCK, .cid = 3, .port = 8823 };
	char err[512];
	int ret;

	(void)state;
	assert_string_equal(tsync_vsock_ops.hint(ENODEV), VSOCK_HINT);
	assert_string_equal(tsync_vsock_ops.hint(ENXIO), VSOCK_HINT);
	assert_null(tsync_vsock_ops.hint(EINVAL));
	assert_null(tsync_tcp_ops.hint(ENODEV));
	ret = tsync_connect(&ep, 1000, NULL, err, sizeof(err));
	if (ret >= 0)
		close(ret);
	if (ret == -EAFNOSUPPORT) {
		assert_string_equal(err, "cannot create vsock socket for vsock:3:8823: "
				    "Address family not supported by protocol: " VSOCK_HINT);
		return;
	}
	if (ret != -ENODEV && ret != -ENXIO) {
		print_message("vsock CID 3 reachable here (%s): no 'No such device' case\n",
			      ret < 0 ? strerror(-ret) : "connected");
		skip();
	}
	assert_string_equal(err, ret == -ENODEV ?
			    "cannot connect to vsock:3:8823: No such device: " VSOCK_HINT :
			    "cannot connect to vsock:3:8823: No such device or address: " VSOCK_HINT);
}

/* The address formatters produce readable, parseable names. */
static void test_format_addresses(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_vm *vm = (struct sockaddr_vm *)&ss;
	char buf[TSYNC_PEER_NAME_MAX];

	(void)state;
	memset(&ss, 0, sizeof(ss));
	in->sin_family = AF_INET;
	in->sin_port = htons(65535);
	inet_pton(AF_INET, "192.0.2.7", &in->sin_addr);
	tsync_tcp_ops.format(&ss, sizeof(*in), buf, sizeof(buf));
	assert_string_equal(buf, "tcp:192.0.2.7:65535");

	memset(&ss, 0, sizeof(ss));
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(1);
	inet_pton(AF_INET6, "2001:db8::1", &in6->sin6_addr);
	tsync_tcp_ops.format(&ss, sizeof(*in6), buf, sizeof(buf));
	assert_string_equal(buf, "tcp:[2001:db8::1]:1");

	/* the longest IPv6 text fits */
	inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", &in6->sin6_addr);
	in6->sin6_port = htons(65535);
	tsync_tcp_ops.format(&ss, sizeof(*in6), buf, sizeof(buf));
	assert_string_equal(buf, "tcp:[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535");

	/* link-local: the zone is kept (lo is interface 1) */
	inet_pton(AF_INET6, "fe80::1", &in6->sin6_addr);
	in6->sin6_port = htons(80);
	in6->sin6_scope_id = 1;
	tsync_tcp_ops.format(&ss, sizeof(*in6), buf, sizeof(buf));
	assert_string_equal(buf, "tcp:[fe80::1%lo]:80");
	in6->sin6_scope_id = 999999;
	tsync_tcp_ops.format(&ss, sizeof(*in6), buf, sizeof(buf));
	assert_string_equal(buf, "tcp:[fe80::1%999999]:80");

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	tsync_tcp_ops.format(&ss, sizeof(ss), buf, sizeof(buf));
	assert_string_equal(buf, "tcp:?(family 1)");

	memset(&ss, 0, sizeof(ss));
	vm->svm_family = AF_VSOCK;
	vm->svm_cid = 3;
	vm->svm_port = 8823;
	tsync_vsock_ops.format(&ss, sizeof(*vm), buf, sizeof(buf));
	assert_string_equal(buf, "vsock:3:8823");
	vm->svm_cid = VMADDR_CID_ANY;
	tsync_vsock_ops.format(&ss, sizeof(*vm), buf, sizeof(buf));
	assert_string_equal(buf, "vsock:any:8823");
	/* truncation is safe */
	tsync_vsock_ops.format(&ss, sizeof(*vm), buf, 6);
	assert_string_equal(buf, "vsock");
}

/* tsync_peer_from_fd: names a TCP peer, refuses what it cannot name. */
static void test_peer_from_fd(void **state)
{
	struct tsync_peer peer;
	struct pair p;
	char want[64];
	int sv[2];

	(void)state;
	assert_int_equal(make_pair("tcp:127.0.0.1:0", "tcp:127.0.0.1:%u", &p), 0);
	assert_int_equal(tsync_peer_from_fd(p.srv, &peer), 0);
	assert_int_equal(peer.kind, TSYNC_EP_TCP);
	assert_int_equal(peer.addr.ss_family, AF_INET);
	snprintf(want, sizeof(want), "tcp:127.0.0.1:%u", local_port(p.cli));
	assert_string_equal(peer.name, want);
	free_pair(&p);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(tsync_peer_from_fd(sv[0], &peer), -EAFNOSUPPORT);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(tsync_peer_from_fd(sv[0], &peer), -EBADF);
}

/* A listening socket made outside the transport layer, as systemd makes
 * one: bound and listening, or (@listening 0) only bound. */
static int outside_socket(int family, int type, int listening, uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(family, type, 0);

	assert_true(fd >= 0);
	if (family != AF_INET)
		return fd;
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	if (port)
		*port = ntohs(sin.sin_port);
	return fd;
}

/* tsync_listener_adopt: an inherited listening TCP socket serves as any
 * listener; every other fd is refused with its reason and left open. */
static void test_listener_adopt(void **state)
{
	struct tsync_listener *l = NULL;
	struct tsync_endpoint ep;
	struct tsync_peer peer;
	char err[256], want[128], str[64];
	uint16_t port;
	int fd, cli, srv, p[2];

	(void)state;
	fd = outside_socket(AF_INET, SOCK_STREAM, 1, &port);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	assert_int_equal(tsync_listener_adopt(fd, &l, err, sizeof(err)), 0);
	assert_int_equal(tsync_listener_fd(l), fd);
	assert_int_equal(tsync_listener_port(l), port);
	assert_int_equal(tsync_listener_kind(l), TSYNC_EP_TCP);
	snprintf(want, sizeof(want), "tcp:127.0.0.1:%u", port);
	assert_string_equal(tsync_listener_name(l), want);
	assert_int_not_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	snprintf(str, sizeof(str), "tcp:127.0.0.1:%u", port);
	parse_ep(str, &ep);
	cli = tsync_connect(&ep, 5000, NULL, err, sizeof(err));
	assert_true(cli >= 0);
	srv = tsync_accept(l, &peer);
	assert_true(srv >= 0);
	assert_int_equal(tsync_sock_get_nodelay(srv), 1);
	close(srv);
	close(cli);
	tsync_listener_close(l);

	/* refusals: the fd stays the caller's */
	fd = outside_socket(AF_INET, SOCK_DGRAM, 0, NULL);
	assert_int_equal(tsync_listener_adopt(fd, &l, err, sizeof(err)), -ESOCKTNOSUPPORT);
	snprintf(want, sizeof(want), "fd %d is a datagram socket, not a stream socket", fd);
	assert_string_equal(err, want);
	assert_int_equal(fcntl(fd, F_GETFD), 0);
	close(fd);

	fd = outside_socket(AF_INET, SOCK_STREAM, 0, NULL);
	assert_int_equal(tsync_listener_adopt(fd, &l, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "fd %d is a tcp socket that is not listening", fd);
	assert_string_equal(err, want);
	close(fd);

	fd = outside_socket(AF_UNIX, SOCK_STREAM, 0, NULL);
	assert_int_equal(tsync_listener_adopt(fd, &l, err, sizeof(err)), -EAFNOSUPPORT);
	snprintf(want, sizeof(want), "fd %d is a socket of address family %d, not vsock, IPv4 "
		 "or IPv6", fd, AF_UNIX);
	assert_string_equal(err, want);
	close(fd);

	assert_int_equal(pipe(p), 0);
	assert_int_equal(tsync_listener_adopt(p[0], &l, err, sizeof(err)), -ENOTSOCK);
	snprintf(want, sizeof(want), "fd %d is not a socket", p[0]);
	assert_string_equal(err, want);
	close(p[0]);
	close(p[1]);
	assert_int_equal(tsync_listener_adopt(p[0], &l, err, sizeof(err)), -EBADF);
	snprintf(want, sizeof(want), "fd %d is not open", p[0]);
	assert_string_equal(err, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp4_loopback),
		cmocka_unit_test(test_tcp6_loopback),
		cmocka_unit_test(test_tcp_name),
		cmocka_unit_test(test_nodelay_readback_discriminates),
		cmocka_unit_test(test_large_message),
		cmocka_unit_test(test_read_timeout),
		cmocka_unit_test(test_write_timeout),
		cmocka_unit_test(test_read_closed_peer),
		cmocka_unit_test(test_write_closed_peer),
		cmocka_unit_test(test_pipe_deadlines),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test(test_listen_errors),
		cmocka_unit_test(test_vsock_listen_any),
		cmocka_unit_test(test_vsock_listen_port_any),
		cmocka_unit_test(test_vsock_listen_errors),
		cmocka_unit_test(test_vsock_connect_local),
		cmocka_unit_test(test_vsock_no_device),
		cmocka_unit_test(test_format_addresses),
		cmocka_unit_test(test_peer_from_fd),
		cmocka_unit_test(test_listener_adopt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
