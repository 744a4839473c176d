// SPDX-License-Identifier: GPL-2.0-or-later
/* The TCP backend (IPv4 and IPv6): name resolution, TCP_NODELAY setup. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
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

/*
 * Sets TCP_NODELAY and reads it back. Request/response over TCP with Nagle
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
	return 0;
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
