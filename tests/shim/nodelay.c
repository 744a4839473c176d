// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD shim: TCP_NODELAY on every TCP socket the program connects or
 * accepts. Under it Debian's trace-cmd 3.1.6 sends as trace-cmd 3.3 and
 * later do (upstream "ptp-timesync: Turn off Nagle for TCP sockets"): its
 * messages never wait for the peer's delayed ACK. bench_10_tcmd_bias runs
 * 3.1.6's own pair under it, and tests/e2e/tcmd_host_cpu.sh an agent that
 * does not wait for ACKs. Built by the Makefile into $(B)/shim/nodelay.so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

int connect(int fd, const struct sockaddr *a, socklen_t l);
int accept(int fd, struct sockaddr *a, socklen_t *l);
int accept4(int fd, struct sockaddr *a, socklen_t *l, int flags);

/* TCP_NODELAY on @fd if it is a TCP socket. */
static void nodelay(int fd)
{
	struct sockaddr_storage s;
	socklen_t l = sizeof(s);
	int one = 1;

	if (fd >= 0 && !getsockname(fd, (struct sockaddr *)&s, &l) &&
	    (s.ss_family == AF_INET || s.ss_family == AF_INET6))
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int connect(int fd, const struct sockaddr *a, socklen_t l)
{
	static int (*real)(int, const struct sockaddr *, socklen_t);
	int ret;

	if (!real)
		real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT,
									     "connect");
	ret = real(fd, a, l);
	nodelay(fd);
	return ret;
}

int accept(int fd, struct sockaddr *a, socklen_t *l)
{
	static int (*real)(int, struct sockaddr *, socklen_t *);
	int ret;

	if (!real)
		real = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
	ret = real(fd, a, l);
	nodelay(ret);
	return ret;
}

int accept4(int fd, struct sockaddr *a, socklen_t *l, int flags)
{
	static int (*real)(int, struct sockaddr *, socklen_t *, int);
	int ret;

	if (!real)
		real = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT,
										"accept4");
	ret = real(fd, a, l, flags);
	nodelay(ret);
	return ret;
}
