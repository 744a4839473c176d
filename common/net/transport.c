// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Backend-independent part of the transport layer: the listener, accept and
 * connect with a deadline. It knows no address family: backends resolve
 * addresses, set up sockets, read ports and format addresses through their
 * ops; every socket passes through ->setup here, in one place, before it
 * carries a byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"

#define MAX_ADDRS 16

struct tsync_listener {
	int fd;
	const struct tsync_transport_ops *ops;
	uint32_t port;
	char name[TSYNC_PEER_NAME_MAX];
};

/* The backends, asked in turn by endpoint kind or address family. */
static const struct tsync_transport_ops *const backends[] = {
	&tsync_tcp_ops,
	&tsync_vsock_ops,
	&tsync_hvsock_ops,
};

#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

/* Returns the ops table for @kind, or NULL. */
const struct tsync_transport_ops *tsync_transport_ops(enum tsync_ep_kind kind)
{
	for (size_t i = 0; i < NBACKENDS; i++)
		if (backends[i]->kind == kind)
			return backends[i];
	return NULL;
}

/* Returns the ops for a socket address family, or NULL. */
static const struct tsync_transport_ops *ops_for_family(int family)
{
	for (size_t i = 0; i < NBACKENDS; i++)
		if (backends[i]->has_family(family))
			return backends[i];
	return NULL;
}

/* Returns the backend's advice for errno @e, or NULL. */
static const char *hint_of(const struct tsync_transport_ops *ops, int e)
{
	return ops->hint ? ops->hint(e) : NULL;
}

/* What to do when bind() or listen() failed with errno @e. */
static const char *listen_hint(const struct tsync_transport_ops *ops, int e)
{
	const char *h;

	switch (e) {
	case EADDRINUSE:
		return "another program (another tsync-agent?) listens there: stop it, or "
		       "choose another port";
	case EACCES:
		return "ports below 1024 need root (or CAP_NET_BIND_SERVICE): choose another, "
		       "such as the default 8823";
	case EADDRNOTAVAIL:
		return ops->kind == TSYNC_EP_TCP ?
		       "no interface of this machine has that address: use one it has, or "
		       "0.0.0.0 with --allow" :
		       "that CID is not this machine's: listen on vsock:any:PORT";
	}
	h = hint_of(ops, e);
	return h ? h : "check the endpoint";
}

/* Fills @l from its bound socket @fd; 0 or -errno with a reason. */
static int bound_name(struct tsync_listener *l, int fd, const struct tsync_transport_ops *ops,
		      char *err, size_t errlen)
{
	struct sockaddr_storage bound = { 0 };
	socklen_t blen = sizeof(bound);

	if (getsockname(fd, (struct sockaddr *)&bound, &blen)) {
		int e = errno;

		snprintf(err, errlen, "getsockname on fd %d: %s", fd, strerror(e));
		return -e;
	}
	l->fd = fd;
	l->ops = ops;
	l->port = ops->port(&bound);
	ops->format(&bound, blen, l->name, sizeof(l->name));
	return 0;
}

/* Listens on @ep; see transport.h. */
int tsync_listen(const struct tsync_endpoint *ep, int backlog,
		 struct tsync_listener **out, char *err, size_t errlen)
{
	const struct tsync_transport_ops *ops = tsync_transport_ops(ep->kind);
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t lens[MAX_ADDRS];
	int fams[MAX_ADDRS], n, fd = -1, ret;
	struct tsync_listener *l;
	char epstr[300];

	tsync_endpoint_format(ep, epstr, sizeof(epstr));
	if (!ops) {
		snprintf(err, errlen, "unsupported endpoint kind");
		return -EINVAL;
	}
	n = ops->resolve(ep, 1, addrs, lens, fams, MAX_ADDRS, err, errlen);
	if (n < 0)
		return n;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;

	ret = -EADDRNOTAVAIL;
	for (int i = 0; i < n; i++) {
		fd = socket(fams[i], SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot create %s socket for %s: %s",
				 ops->name, epstr, strerror(errno));
			continue;
		}
		if (ops->listen_setup) {
			ret = ops->listen_setup(fd);
			if (ret) {
				snprintf(err, errlen, "listening socket setup for %s: %s",
					 epstr, strerror(-ret));
				goto next;
			}
		}
		/* Accepted sockets may inherit this; accept sets it again. */
		ret = ops->setup(fd);
		if (ret) {
			snprintf(err, errlen, "socket setup for %s: %s", epstr, strerror(-ret));
			goto next;
		}
		if (bind(fd, (struct sockaddr *)&addrs[i], lens[i]) ||
		    listen(fd, backlog)) {
			ret = -errno;
			snprintf(err, errlen, "cannot listen on %s: %s: %s", epstr, strerror(-ret),
				 listen_hint(ops, -ret));
			goto next;
		}
		break;
next:
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		goto fail;

	ret = bound_name(l, fd, ops, err, errlen);
	if (ret) {
		close(fd);
		goto fail;
	}
	*out = l;
	return 0;
fail:
	free(l);
	return ret;
}

/* Reads the int socket option @opt of @fd into @val; 0 or -errno. */
static int sockopt_int(int fd, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	*val = 0;
	return getsockopt(fd, SOL_SOCKET, opt, val, &len) ? -errno : 0;
}

/* Takes over an inherited listening socket; see transport.h. */
int tsync_listener_adopt(int fd, struct tsync_listener **out, char *err, size_t errlen)
{
	const struct tsync_transport_ops *ops;
	struct tsync_listener *l;
	int type, family, listening, ret;

	ret = sockopt_int(fd, SO_TYPE, &type);
	if (ret == -EBADF || ret == -ENOTSOCK) {
		snprintf(err, errlen, "fd %d is %s", fd, ret == -EBADF ? "not open" :
			 "not a socket");
		return ret;
	}
	if (!ret)
		ret = sockopt_int(fd, SO_DOMAIN, &family);
	if (!ret)
		ret = sockopt_int(fd, SO_ACCEPTCONN, &listening);
	if (ret) {
		snprintf(err, errlen, "fd %d: getsockopt: %s", fd, strerror(-ret));
		return ret;
	}
	if (type != SOCK_STREAM) {
		snprintf(err, errlen, "fd %d is a %s socket, not a stream socket", fd,
			 type == SOCK_DGRAM ? "datagram" : type == SOCK_SEQPACKET ?
			 "seqpacket" : "non-stream");
		return -ESOCKTNOSUPPORT;
	}
	ops = ops_for_family(family);
	if (!ops) {
		snprintf(err, errlen, "fd %d is a socket of address family %d, not vsock, "
			 "IPv4 or IPv6", fd, family);
		return -EAFNOSUPPORT;
	}
	if (!listening) {
		snprintf(err, errlen, "fd %d is a %s socket that is not listening", fd, ops->name);
		return -EINVAL;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		ret = -errno;
		snprintf(err, errlen, "fd %d: close-on-exec: %s", fd, strerror(errno));
		return ret;
	}
	ret = ops->setup(fd);
	if (ret) {
		snprintf(err, errlen, "socket setup for fd %d: %s", fd, strerror(-ret));
		return ret;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	ret = bound_name(l, fd, ops, err, errlen);
	if (ret) {
		free(l);
		return ret;
	}
	*out = l;
	return 0;
}

/* Returns the listening fd. */
int tsync_listener_fd(const struct tsync_listener *l)
{
	return l->fd;
}

/* Returns the bound address as an endpoint string. */
const char *tsync_listener_name(const struct tsync_listener *l)
{
	return l->name;
}

/* Returns the bound port. */
uint32_t tsync_listener_port(const struct tsync_listener *l)
{
	return l->port;
}

/* Returns the kind of endpoint a listener listens on. */
enum tsync_ep_kind tsync_listener_kind(const struct tsync_listener *l)
{
	return l->ops->kind;
}

/* Closes and frees a listener. */
void tsync_listener_close(struct tsync_listener *l)
{
	if (!l)
		return;
	close(l->fd);
	free(l);
}

/* Fills @peer from the remote address of @fd. */
int tsync_peer_from_fd(int fd, struct tsync_peer *peer)
{
	const struct tsync_transport_ops *ops;

	memset(peer, 0, sizeof(*peer));
	peer->addrlen = sizeof(peer->addr);
	if (getpeername(fd, (struct sockaddr *)&peer->addr, &peer->addrlen))
		return -errno;
	ops = ops_for_family(peer->addr.ss_family);
	if (!ops)
		return -EAFNOSUPPORT;
	peer->kind = ops->kind;
	ops->format(&peer->addr, peer->addrlen, peer->name, sizeof(peer->name));
	return 0;
}

/* Accepts one connection and sets it up; see transport.h. */
int tsync_accept(struct tsync_listener *l, struct tsync_peer *peer)
{
	struct tsync_peer tmp;
	int fd, ret;

	if (!peer)
		peer = &tmp;
	memset(peer, 0, sizeof(*peer));
	peer->addrlen = sizeof(peer->addr);
	do {
		fd = accept4(l->fd, (struct sockaddr *)&peer->addr,
			     &peer->addrlen, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	peer->kind = l->ops->kind;
	l->ops->format(&peer->addr, peer->addrlen, peer->name, sizeof(peer->name));
	ret = l->ops->setup(fd);
	if (ret) {
		log_err("setting up connection from %s: %s", peer->name, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * Connects @fd to @addr, waiting at most until @deadline. Returns 0 or
 * -errno. The socket is left blocking.
 */
static int connect_deadline(int fd, const struct sockaddr_storage *addr,
			    socklen_t len, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int flags = fcntl(fd, F_GETFL), soerr = 0, ret;
	socklen_t slen = sizeof(soerr);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		return -errno;
	if (connect(fd, (const struct sockaddr *)addr, len) == 0)
		goto done;
	if (errno != EINPROGRESS && errno != EINTR)
		return -errno;
	for (;;) {
		ret = poll(&pfd, 1, tsync_remaining_ms(deadline));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
		break;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &slen))
		return -errno;
	if (soerr)
		return -soerr;
done:
	if (fcntl(fd, F_SETFL, flags))
		return -errno;
	return 0;
}

/* Connects to @ep with a deadline; see transport.h. */
int tsync_connect(const struct tsync_endpoint *ep, int timeout_ms,
		  struct tsync_peer *peer, char *err, size_t errlen)
{
	const struct tsync_transport_ops *ops = tsync_transport_ops(ep->kind);
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t lens[MAX_ADDRS];
	int fams[MAX_ADDRS], n, fd, ret = -EHOSTUNREACH;
	int64_t deadline = tsync_deadline_ms(timeout_ms);
	const char *hint;
	char epstr[300];

	tsync_endpoint_format(ep, epstr, sizeof(epstr));
	if (!ops) {
		snprintf(err, errlen, "unsupported endpoint kind");
		return -EINVAL;
	}
	n = ops->resolve(ep, 0, addrs, lens, fams, MAX_ADDRS, err, errlen);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		fd = socket(fams[i], SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = -errno;
			hint = hint_of(ops, errno);
			snprintf(err, errlen, "cannot create %s socket for %s: %s%s%s", ops->name,
				 epstr, strerror(errno), hint ? ": " : "", hint ? hint : "");
			continue;
		}
		/* Before connect(): not even the handshake goes out without it. */
		ret = ops->setup(fd);
		if (ret) {
			snprintf(err, errlen, "socket setup for %s: %s", epstr, strerror(-ret));
			close(fd);
			return ret;
		}
		ret = connect_deadline(fd, &addrs[i], lens[i], deadline);
		if (!ret && ops->handshake) {
			char why[256];

			/* the peer answered: its reason is the whole story */
			ret = ops->handshake(fd, ep, deadline, why, sizeof(why));
			if (ret) {
				snprintf(err, errlen, "cannot connect to %s: %s", epstr, why);
				close(fd);
				return ret;
			}
		}
		if (!ret) {
			if (peer) {
				memset(peer, 0, sizeof(*peer));
				peer->kind = ops->kind;
				peer->addr = addrs[i];
				peer->addrlen = lens[i];
				if (ops->name_by_endpoint)
					tsync_endpoint_format(ep, peer->name,
							      sizeof(peer->name));
				else
					ops->format(&addrs[i], lens[i], peer->name,
						    sizeof(peer->name));
			}
			return fd;
		}
		hint = hint_of(ops, -ret);
		snprintf(err, errlen, "cannot connect to %s: %s%s%s", epstr,
			 ret == -ETIMEDOUT ? "timed out" : strerror(-ret), hint ? ": " : "",
			 hint ? hint : "");
		close(fd);
		if (ret == -ETIMEDOUT)
			break;
	}
	return ret;
}
