// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A trace-cmd session's extra ports: see tcmd_ports.h. trace-cmd's host
 * sends nothing on these connections (it reads the streams, or runs the
 * time sync), so which session a connection belongs to can only be told
 * by the port it arrives on: each session has its own listeners, closed
 * once their connection arrived.
 *
 * While it waits for those connections the session's control connection
 * is watched too: a host that closed or reset it (or whose transport
 * declared it gone), or sent CLOSE on it before the time sync began
 * (tsync-host does, abandoning a session), ends the session at once, freeing its slot, instance,
 * buffers and metadata, instead of holding them until the idle timeout.
 * Other bytes that arrive there meanwhile are left for the session to read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>

#include "agent/conn/conntab.h"
#include "agent/conn/ratelimit.h"
#include "agent/tcmd/tcmd_ports.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "proto/tcmd.h"

struct tcmd_port {
	struct tsync_listener *l;
	struct agent_conn *conn;	/* the accepted connection */
};

struct tcmd_ports {
	const struct agent_ctx *ctx;
	struct tsync_peer host;
	int ctl_fd;			/* the session's control connection */
	bool ctl_quiet;			/* bytes wait on it: no longer watched */
	int n;
	struct tcmd_port *port;
};

/* Makes the endpoint for ephemeral listeners beside socket @fd's local
 * address: on vsock, the kernel's choice of port, as trace-cmd's own agent
 * takes (the port goes to the host in TRACE_RESP). Returns 0 or -errno. */
static int local_endpoint(int fd, struct tsync_endpoint *ep)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	char addr[INET6_ADDRSTRLEN], str[INET6_ADDRSTRLEN + 16];
	int ret;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -errno;
	if (ss.ss_family == AF_VSOCK)
		snprintf(str, sizeof(str), "vsock:any:0");
	else if (ss.ss_family == AF_INET &&
		 inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr,
			   sizeof(addr)))
		snprintf(str, sizeof(str), "tcp:%s:0", addr);
	else if (ss.ss_family == AF_INET6 &&
		 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr,
			   sizeof(addr)))
		snprintf(str, sizeof(str), "tcp:[%s]:0", addr);
	else
		return -EAFNOSUPPORT;
	ret = tsync_endpoint_parse(str, TSYNC_EP_ALLOW_PORT0, ep, NULL, 0);
	ep->vsock_port_any = ss.ss_family == AF_VSOCK;
	return ret;
}

/* Listens on the session's ports; see tcmd_ports.h. */
int tcmd_ports_open(const struct agent_ctx *ctx, int fd, const struct tsync_peer *host,
		    int nports, struct tcmd_ports **out)
{
	struct tsync_endpoint ep;
	struct tcmd_ports *p;
	char err[256];
	int ret;

	ret = local_endpoint(fd, &ep);
	if (ret) {
		log_err("%s: no local address for trace-cmd's ports: %s", host->name,
			strerror(-ret));
		return ret;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->port = calloc((size_t)nports, sizeof(*p->port)))) {
		free(p);
		return -ENOMEM;
	}
	p->ctx = ctx;
	p->host = *host;
	p->ctl_fd = fd;
	p->n = nports;
	for (int i = 0; i < nports; i++) {
		ret = tsync_listen(&ep, 4, &p->port[i].l, err, sizeof(err));
		if (ret) {
			log_err("%s: trace-cmd session: %s", host->name, err);
			tcmd_ports_close(p);
			return ret;
		}
	}
	*out = p;
	return 0;
}

/* Returns listener @i's port. */
uint32_t tcmd_ports_port(const struct tcmd_ports *p, int i)
{
	return tsync_listener_port(p->port[i].l);
}

/* Returns true if @peer is the session's host (address or CID). */
static bool same_host(const struct tsync_peer *a, const struct tsync_peer *b)
{
	if (a->addr.ss_family != b->addr.ss_family)
		return false;
	switch (a->addr.ss_family) {
	case AF_INET:
		return !memcmp(&((const struct sockaddr_in *)&a->addr)->sin_addr,
			       &((const struct sockaddr_in *)&b->addr)->sin_addr,
			       sizeof(struct in_addr));
	case AF_INET6:
		return !memcmp(&((const struct sockaddr_in6 *)&a->addr)->sin6_addr,
			       &((const struct sockaddr_in6 *)&b->addr)->sin6_addr,
			       sizeof(struct in6_addr));
	case AF_VSOCK:
		return ((const struct sockaddr_vm *)&a->addr)->svm_cid ==
		       ((const struct sockaddr_vm *)&b->addr)->svm_cid;
	}
	return false;
}

/* Takes one pending connection on listener @i; returns 1 when it is the
 * host's and now held, 0 when it was someone else's (closed), -errno. */
static int take_one(struct tcmd_ports *p, int i)
{
	struct tsync_peer peer;
	char why[128];
	int fd, ret;

	fd = tsync_accept(p->port[i].l, &peer);
	if (fd < 0)
		return fd == -EAGAIN || fd == -ECONNABORTED ? 0 : fd;
	if (!same_host(&peer, &p->host)) {
		log_warn("%s: refused on a trace-cmd session port of %s", peer.name,
			 p->host.name);
		close(fd);
		return 0;
	}
	if (!tsync_acl_allows(p->ctx->cfg->acl, (const struct sockaddr *)&peer.addr,
			      peer.addrlen, why, sizeof(why))) {
		agent_rl_warn(p->ctx->rl, AGENT_RL_ACL, "%s: refused: %s", peer.name, why);
		close(fd);
		return 0;
	}
	ret = agent_conntab_add(p->ctx->conns, fd, &peer, &p->port[i].conn);
	if (ret)
		return ret;	/* closed by the table */
	agent_conntab_authenticated(p->ctx->conns, p->port[i].conn);
	/* the port served its purpose: nobody else may connect to it */
	tsync_listener_close(p->port[i].l);
	p->port[i].l = NULL;
	return 1;
}

/* Fills @pfd to watch the control connection (fd -1 once bytes wait). */
static void ctl_watch(const struct tcmd_ports *p, struct pollfd *pfd)
{
	*pfd = (struct pollfd){ .fd = p->ctl_quiet ? -1 : p->ctl_fd,
				.events = POLLIN | POLLRDHUP };
}

/* Checks what poll() said of the control connection: -ECONNRESET when
 * the host closed or reset it, or, with @close_ends (a session whose
 * time sync never began), sent CLOSE (logged); else 0 (other bytes
 * waiting: left for the session, the connection no longer watched). A
 * sync-only host sends CLOSE after its time sync, before it connects and
 * closes the CPU ports: the session reads that CLOSE itself. */
static int ctl_check(struct tcmd_ports *p, short revents, bool close_ends)
{
	uint8_t buf[TCMD_HDR_LEN];
	struct tcmd_hdr h;
	struct tcmd_err e;
	ssize_t n;

	if (!revents)
		return 0;
	if (!(revents & (POLLHUP | POLLERR | POLLRDHUP))) {
		n = recv(p->ctl_fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
		if (close_ends && n == (ssize_t)sizeof(buf) && !tcmd_hdr_decode(buf, &h, &e) &&
		    h.cmd == TCMD_CLOSE) {
			log_warn("%s: trace-cmd host sent CLOSE before it connected its time "
				 "sync port: session ended", p->host.name);
			return -ECONNRESET;
		}
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) {
			p->ctl_quiet = n > 0;
			return 0;
		}
	}
	log_warn("%s: trace-cmd host closed its control connection before it "
		 "connected its data ports: session ended", p->host.name);
	return -ECONNRESET;
}

/* Accepts the host's connection on listener @i; see tcmd_ports.h. */
int tcmd_ports_accept(struct tcmd_ports *p, int i, int64_t deadline)
{
	int ret;

	while (!p->port[i].conn) {
		struct pollfd pfd[2] = { { .fd = tsync_listener_fd(p->port[i].l),
					   .events = POLLIN } };

		ctl_watch(p, &pfd[1]);
		ret = poll(pfd, 2, tsync_remaining_ms(deadline));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret == 0) {
			log_warn("%s: trace-cmd host did not connect to port %u in time",
				 p->host.name, tcmd_ports_port(p, i));
			return -ETIMEDOUT;
		}
		if (ret < 0)
			return -errno;
		ret = ctl_check(p, pfd[1].revents, true);
		if (!ret && (pfd[0].revents & POLLIN))
			ret = take_one(p, i);
		if (ret < 0)
			return ret;
	}
	return agent_conn_fd(p->port[i].conn);
}

/* Accepts the CPU ports and hands each connection over; see tcmd_ports.h. */
int tcmd_ports_accept_each(struct tcmd_ports *p, int first, int64_t deadline,
			   int (*take)(void *arg, int i, int fd), void *arg)
{
	int ret, left = p->n - first;

	while (left) {
		struct pollfd pfd[p->n + 1];
		int idx[p->n], k = 0;

		for (int i = first; i < p->n; i++)
			if (p->port[i].l) {
				pfd[k] = (struct pollfd){ .fd = tsync_listener_fd(p->port[i].l),
							  .events = POLLIN };
				idx[k++] = i;
			}
		ctl_watch(p, &pfd[k]);
		ret = poll(pfd, (nfds_t)k + 1, tsync_remaining_ms(deadline));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			log_warn("%s: trace-cmd host connected %d of %d CPU streams in time",
				 p->host.name, p->n - first - left, p->n - first);
			return ret ? -errno : -ETIMEDOUT;
		}
		ret = ctl_check(p, pfd[k].revents, false);
		if (ret)
			return ret;
		for (int j = 0; j < k; j++) {
			if (!(pfd[j].revents & POLLIN))
				continue;
			ret = take_one(p, idx[j]);
			if (ret < 0)
				return ret;
			if (ret == 0)
				continue;
			left--;
			ret = take(arg, idx[j] - first, agent_conn_fd(p->port[idx[j]].conn));
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Closes everything; see tcmd_ports.h. */
void tcmd_ports_close(struct tcmd_ports *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		tsync_listener_close(p->port[i].l);
		if (p->port[i].conn)
			agent_conntab_remove(p->ctx->conns, p->port[i].conn);
	}
	free(p->port);
	free(p);
}
