/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The transport layer: listen, accept and connect for TCP (v4/v6), vsock
 * and hybrid vsock (Firecracker's and cloud-hypervisor's Unix socket,
 * connect only) behind one small ops table per backend, in the manner of
 * linuxptp's transport.h. Connections are plain file descriptors so that the splice
 * path and poll() work on them directly.
 *
 * The generic part (transport.c) knows no address family: everything
 * family-specific (resolving, socket options, ports, names) is an op of
 * the backend (tcp.c, vsock.c), found by endpoint kind or by the address
 * family of a socket. A backend whose connections open with an exchange
 * of their own (hvsock's CONNECT/OK) does it in ->handshake, before the
 * caller's first byte. Adding a backend: its file, its ops here and in
 * transport.c's list, its kind and form in endpoint.h and endpoint.c.
 *
 * Every socket a backend creates or accepts goes through its ->setup op
 * before it carries a byte; for TCP that sets TCP_NODELAY and fails the
 * whole operation if it cannot (Documentation/protocol.md, section 1).
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/net/
 *   transport.c, transport.h  listen, accept, connect with deadlines, behind the backends' ops
 *   tcp.c, tcp.h              the TCP backend (IPv4, IPv6; TCP_NODELAY)
 *   vsock.c                   the vsock backend
 *   hvsock.c                  the hybrid vsock backend (Firecracker, cloud-hypervisor)
 *   endpoint.c, endpoint.h    endpoint strings (tcp:HOST:PORT, vsock:CID:PORT,
 *                             hvsock:PATH:PORT)
 */
#ifndef TSYNC_TRANSPORT_H
#define TSYNC_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/net/endpoint.h"

/* Room for the longest name: hvsock: with a 107-byte path and a port. */
#define TSYNC_PEER_NAME_MAX 128

/* Who is at the other end of a connection. */
struct tsync_peer {
	enum tsync_ep_kind kind;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	/* "tcp:[::1]:41234", "vsock:3:1024", "hvsock:/run/v.sock:8823" */
	char name[TSYNC_PEER_NAME_MAX];
};

struct tsync_transport_ops {
	enum tsync_ep_kind kind;
	const char *name;
	/* Resolves @ep into socket addresses: fills up to @max entries of
	 * @addrs/@lens and their families, returns how many or -errno. */
	int (*resolve)(const struct tsync_endpoint *ep, int passive,
		       struct sockaddr_storage *addrs, socklen_t *lens,
		       int *families, int max, char *err, size_t errlen);
	/* Per-socket setup applied to every socket before its first byte;
	 * returns 0 or -errno. */
	int (*setup)(int fd);
	/* Options a listening socket needs before bind() (TCP:
	 * SO_REUSEADDR); NULL if none. Returns 0 or -errno. */
	int (*listen_setup)(int fd);
	/* Formats a socket address of this family for logs. */
	void (*format)(const struct sockaddr_storage *addr, socklen_t len,
		       char *buf, size_t buflen);
	/* Returns 1 if sockets of address @family belong to this backend. */
	int (*has_family)(int family);
	/* Returns the port of a bound or peer address of this backend. */
	uint32_t (*port)(const struct sockaddr_storage *addr);
	/* Returns what to do about a socket() or connect() failure with
	 * errno @err (vsock's "No such device": no transport), or NULL. */
	const char *(*hint)(int err);
	/* Runs on a connected socket before the caller's first byte: the
	 * backend's own opening exchange with @ep (hvsock: CONNECT, then OK),
	 * within @deadline (the connect's). NULL if there is none. Returns 0
	 * or -errno with a reason in @err. */
	int (*handshake)(int fd, const struct tsync_endpoint *ep, int64_t deadline,
			 char *err, size_t errlen);
	/* Connections are named by their endpoint string, not by their
	 * address (hvsock: a socket path names no guest port). */
	bool name_by_endpoint;
};

extern const struct tsync_transport_ops tsync_tcp_ops;
extern const struct tsync_transport_ops tsync_vsock_ops;
extern const struct tsync_transport_ops tsync_hvsock_ops;

/* Returns the ops of the backend for @kind, or NULL. */
const struct tsync_transport_ops *tsync_transport_ops(enum tsync_ep_kind kind);

struct tsync_listener;

/*
 * Listens on @ep (SO_REUSEADDR, close-on-exec). Returns 0 and a listener in
 * @out, or -errno with a reason in @err.
 */
int tsync_listen(const struct tsync_endpoint *ep, int backlog,
		 struct tsync_listener **out, char *err, size_t errlen);
/*
 * Takes over @fd, a listening socket someone else made (systemd's socket
 * activation): it must be a stream socket (SO_TYPE), listening
 * (SO_ACCEPTCONN), of a backend's address family (SO_DOMAIN). Sets it
 * close-on-exec and through the backend's setup. Returns 0 and a
 * listener in @out that owns @fd from then on, or -errno with a one-line
 * reason in @err and @fd left to the caller: -EBADF (not open), -ENOTSOCK,
 * -ESOCKTNOSUPPORT (not a stream), -EAFNOSUPPORT (no backend's family),
 * -EINVAL (not listening).
 */
int tsync_listener_adopt(int fd, struct tsync_listener **out, char *err, size_t errlen);
/* Returns the listening file descriptor (for poll). */
int tsync_listener_fd(const struct tsync_listener *l);
/* Returns the bound endpoint as a string, with the real port if 0 was
 * asked for. */
const char *tsync_listener_name(const struct tsync_listener *l);
/* Returns the bound port. */
uint32_t tsync_listener_port(const struct tsync_listener *l);
/* Returns the kind of endpoint @l listens on. */
enum tsync_ep_kind tsync_listener_kind(const struct tsync_listener *l);
/* Closes and frees @l (NULL is fine). */
void tsync_listener_close(struct tsync_listener *l);

/*
 * Accepts one connection, set up by the backend (TCP_NODELAY for TCP).
 * Returns the connected fd (close-on-exec, blocking) or -errno; @peer is
 * filled in if not NULL. A connection whose setup fails is closed and
 * -errno returned.
 */
int tsync_accept(struct tsync_listener *l, struct tsync_peer *peer);

/*
 * Connects to @ep, giving up after @timeout_ms (the backend's handshake
 * included). Returns the connected fd (close-on-exec, blocking, set up by
 * the backend) or -errno with a reason in @err: -ETIMEDOUT, -ECONNREFUSED,
 * and from a handshake -ECONNRESET or -EPROTO too.
 */
int tsync_connect(const struct tsync_endpoint *ep, int timeout_ms,
		  struct tsync_peer *peer, char *err, size_t errlen);

/* Fills @peer from a connected @fd's remote address; returns 0 or -errno. */
int tsync_peer_from_fd(int fd, struct tsync_peer *peer);

#endif
