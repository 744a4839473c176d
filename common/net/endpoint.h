/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Endpoint strings: tcp:HOST:PORT, vsock:CID:PORT and hvsock:PATH:PORT
 * (a guest's vsock port behind a Firecracker or cloud-hypervisor Unix
 * socket; connect only, a tsync extension: trace-cmd has no such form).
 */
#ifndef TSYNC_ENDPOINT_H
#define TSYNC_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* The port tsync-agent listens on by default (vsock and TCP). */
#define TSYNC_DEFAULT_PORT 8823

enum tsync_ep_kind {
	TSYNC_EP_TCP = 1,
	TSYNC_EP_VSOCK = 2,
	TSYNC_EP_HVSOCK = 3,
};

#define TSYNC_EP_HOST_MAX 256
/* A Unix socket path with its NUL: sizeof(struct sockaddr_un.sun_path). */
#define TSYNC_EP_PATH_MAX 108

struct tsync_endpoint {
	enum tsync_ep_kind kind;
	char host[TSYNC_EP_HOST_MAX];	/* TCP: name or address, no brackets */
	uint32_t cid;			/* vsock */
	char path[TSYNC_EP_PATH_MAX];	/* hvsock: the VMM's Unix socket */
	uint16_t port;			/* hvsock: the guest's vsock port */
	/*
	 * vsock, listening on port 0: let the kernel choose (VMADDR_PORT_ANY;
	 * the port it picks may be above 65535, so no endpoint string can
	 * name it). Never set by the parser: only for listeners whose port is
	 * reported to the peer, never typed (trace-cmd sessions' data ports).
	 */
	bool vsock_port_any;
	/*
	 * vsock and hvsock, connecting: a port above 65535 that a peer
	 * reported (a trace-cmd agent's data and time-sync ports are
	 * VMADDR_PORT_ANY picks), used instead of @port; 0: none. Never set
	 * by the parser.
	 */
	uint32_t vsock_port32;
};

/* Flags for tsync_endpoint_parse(). */
enum {
	/* Port 0 is allowed (listen on an ephemeral port). */
	TSYNC_EP_ALLOW_PORT0 = 1 << 0,
	/* Agent shorthand: "N" is vsock CID N on the default port and
	 * "HOST:PORT" is TCP. */
	TSYNC_EP_AGENT_SHORTHAND = 1 << 1,
	/* The endpoint is to listen on: the connect-only form (hvsock) is
	 * refused, and the forms named in a reason are the listening ones. */
	TSYNC_EP_LISTEN = 1 << 2,
};

/*
 * Parses @str into @ep. Returns 0, or -EINVAL with a one-line reason naming
 * the problem and the offending value in @err (if @err is not NULL).
 */
int tsync_endpoint_parse(const char *str, unsigned int flags,
			 struct tsync_endpoint *ep, char *err, size_t errlen);

/* True if @str starts with a scheme the parser knows (tcp:, vsock:,
 * hvsock:), so that it is an endpoint string and no other form. */
bool tsync_endpoint_has_scheme(const char *str);

/* True if @ep's ports are vsock's (vsock, hvsock): 32 bits wide, so that
 * a port a peer reports above 65535 goes in @vsock_port32. */
bool tsync_endpoint_vsock_ports(const struct tsync_endpoint *ep);

/* Formats @ep as an endpoint string (IPv6 in brackets); returns @buf. */
char *tsync_endpoint_format(const struct tsync_endpoint *ep, char *buf,
			    size_t len);

#endif
