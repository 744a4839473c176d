// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The TCP backend (IPv4 and IPv6): name resolution, socket setup
 * (TCP_NODELAY; keepalive and TCP_USER_TIMEOUT).
 *
 * Gone peers: a trace-cmd host's control connection, and a recording's,
 * may rightly be silent for hours, so silence cannot tell a quiet peer
 * from one that lost power or its network. The transport tells: every
 * TCP socket has keepalive, TCP_KEEPIDLE 30 s, TCP_KEEPINTVL 5 s,
 * TCP_KEEPCNT 4, and TCP_USER_TIMEOUT 50 s, so a peer that answers
 * nothing, neither keepalive probes nor data, is declared gone (the
 * socket fails with ETIMEDOUT and wakes every poll) within 50 s of its
 * last sign of life, whatever the program was waiting for. A live peer's
 * kernel answers the probes: a quiet recording goes on. The environment
 * variable TSYNC_TCP_KEEPALIVE=IDLE,INTVL,CNT (seconds; the tests use
 * 1,1,2) sets other values, the user timeout then IDLE + INTVL * CNT.
 * vsock has no keepalive, and needs none for this: its other end is this
 * guest's own hypervisor host (or a guest of it), whose kernel resets the
 * connection when the process at that end dies, and a host that loses
 * power takes the guest with it; what vsock cannot tell is a live but
 * hung process, which is indistinguishable from a quiet one anywhere.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "common/net/tcp.h"
#include "common/net/transport.h"

/* Resolves a TCP endpoint with getaddrinfo; returns the count or -errno. */
static int tcp_resolve(const struct tsync_endpoint *ep, int passive,
		       struct sockaddr_storage *addrs, socklen_t *lens,
		       int *families, int max, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = passive ? AI_PASSIVE : 0,
	};
	struct addrinfo *res, *ai;
	char port[8];
	int n = 0, ret;

	snprintf(port, sizeof(port), "%u", ep->port);
	ret = getaddrinfo(ep->host, port, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "cannot resolve host '%s': %s: check the name, or give "
			 "its address", ep->host, gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai && n < max; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(addrs[n]))
			continue;
		memcpy(&addrs[n], ai->ai_addr, ai->ai_addrlen);
		lens[n] = ai->ai_addrlen;
		families[n] = ai->ai_family;
		n++;
	}
	freeaddrinfo(res);
	if (!n) {
		snprintf(err, errlen, "no usable address for host '%s'", ep->host);
		return -EHOSTUNREACH;
	}
	return n;
}

/* Reads TCP_NODELAY back from @fd; see tcp.h. */
int tsync_sock_get_nodelay(int fd)
{
	int val = 0;
	socklen_t len = sizeof(val);

	if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &val, &len))
		return -errno;
	return val ? 1 : 0;
}

/* Keepalive defaults (seconds); see the top of this file. */
#define KEEPIDLE_S	30
#define KEEPINTVL_S	5
#define KEEPCNT		4

/* Turns keepalive on with a user timeout; see the top of this file. */
static int tcp_keepalive(int fd)
{
	const char *env = getenv("TSYNC_TCP_KEEPALIVE");
	int idle = KEEPIDLE_S, intvl = KEEPINTVL_S, cnt = KEEPCNT, one = 1;
	int a, b, c;
	unsigned int user;

	if (env && sscanf(env, "%d,%d,%d", &a, &b, &c) == 3 && a > 0 && b > 0 && c > 0 &&
	    a <= 3600 && b <= 3600 && c <= 100) {
		idle = a;
		intvl = b;
		cnt = c;
	}
	user = (unsigned int)(idle + intvl * cnt) * 1000u;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof(user)))
		return -errno;
	return 0;
}

/*
 * Sets TCP_NODELAY and reads it back, and keepalive (gone peers). Request/response over TCP with Nagle
 * on stalls for a delayed ACK on every exchange (Documentation/protocol.md,
 * section 1), so a socket that cannot have it is refused.
 */
static int tcp_setup(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return -errno;
	if (tsync_sock_get_nodelay(fd) != 1)
		return -EPROTO;
	return tcp_keepalive(fd);
}

/* Lets a restarted listener bind its port again at once. */
static int tcp_listen_setup(int fd)
{
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		return -errno;
	return 0;
}

/* IPv4 and IPv6 addresses are TCP's. */
static int tcp_has_family(int family)
{
	return family == AF_INET || family == AF_INET6;
}

/* Returns the port of an IPv4/IPv6 address. */
static uint32_t tcp_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* Formats an IPv4/IPv6 address as tcp:A.B.C.D:P or tcp:[V6%ZONE]:P. */
static void tcp_format(const struct sockaddr_storage *ss, socklen_t len,
		       char *buf, size_t buflen)
{
	char host[INET6_ADDRSTRLEN];

	(void)len;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, buflen, "tcp:%s:%u", host, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		char zone[IF_NAMESIZE + 2] = "";

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		/* link-local peers need their interface to be reachable again */
		if (in6->sin6_scope_id) {
			char ifname[IF_NAMESIZE];

			if (if_indextoname(in6->sin6_scope_id, ifname))
				snprintf(zone, sizeof(zone), "%%%s", ifname);
			else
				snprintf(zone, sizeof(zone), "%%%u", in6->sin6_scope_id);
		}
		snprintf(buf, buflen, "tcp:[%s%s]:%u", host, zone, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, buflen, "tcp:?(family %d)", ss->ss_family);
	}
}

/* What to check after a refused or unanswered TCP connect. */
static const char *tcp_hint(int err)
{
	if (err == ECONNREFUSED)
		return "no tsync-agent listens on that address and port: is it running "
		       "there (tsync-agent -l tcp:0.0.0.0:8823)?";
	if (err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH)
		return "no answer from that address: check it, and a firewall on the way";
	return NULL;
}

const struct tsync_transport_ops tsync_tcp_ops = {
	.kind = TSYNC_EP_TCP,
	.name = "tcp",
	.resolve = tcp_resolve,
	.setup = tcp_setup,
	.listen_setup = tcp_listen_setup,
	.format = tcp_format,
	.has_family = tcp_has_family,
	.port = tcp_port,
	.hint = tcp_hint,
};
