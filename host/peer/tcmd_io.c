// SPDX-License-Identifier: GPL-2.0-or-later
/* Message I/O with a stock trace-cmd agent; see tcmd_io.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "common/base/io.h"
#include "common/base/timeutil.h"
#include "host/peer/tcmd_io.h"
#include "proto/proto.h"

/* Re-arms TCP_QUICKACK (a no-op on sockets that are not TCP, e.g. vsock).
 * Setting it also sends an ACK that is pending right now. */
static void quickack(const struct tcmd_conn *c)
{
	int one = 1;

	if (c->quickack)
		(void)setsockopt(c->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

/* Sets up a connection; see tcmd_io.h. */
int tcmd_conn_init(struct tcmd_conn *c, int fd, bool quickack_on, int timeout_ms)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	int one = 1;

	c->fd = fd;
	c->quickack = quickack_on;
	c->timeout_ms = timeout_ms;
	if (!quickack_on || getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
		c->quickack = false;
		return 0;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one)))
		return -errno;
	return 0;
}

/* Closes the socket; see tcmd_io.h. */
void tcmd_conn_close(struct tcmd_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Sends one message; see tcmd_io.h. */
int tcmd_conn_send(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err, size_t errlen)
{
	int ret;

	if (len < 0) {
		snprintf(err, errlen, "cannot encode a message: %s", strerror((int)-len));
		return (int)len;
	}
	ret = tsync_write_full(c->fd, msg, (size_t)len, tsync_deadline_ms(c->timeout_ms));
	if (ret)
		snprintf(err, errlen, "sending %s: %s", tcmd_cmd_name(msg[7]), strerror(-ret));
	return ret;
}

/* Reads @len bytes into @p before @deadline, re-arming the quick ACK after
 * every read. Returns 0 or -errno. */
static int read_acked(struct tcmd_conn *c, uint8_t *p, size_t len, int64_t deadline)
{
	while (len) {
		ssize_t n;
		int ret = tsync_wait_readable(c->fd, deadline);

		if (ret < 0)
			return ret;
		if (!ret)
			return -ETIMEDOUT;
		n = recv(c->fd, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EPIPE;
		quickack(c);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Receives one message; see tcmd_io.h. */
int tcmd_conn_recv(struct tcmd_conn *c, struct tcmd_msg *m, char *err, size_t errlen)
{
	int64_t deadline = tsync_deadline_ms(c->timeout_ms);
	struct tcmd_err e = { { 0 } };
	struct tcmd_hdr h;
	int ret;

	ret = read_acked(c, c->buf, TCMD_HDR_LEN, deadline);
	if (!ret && ((uint32_t)c->buf[0] << 24 | (uint32_t)c->buf[1] << 16 |
		     (uint32_t)c->buf[2] << 8 | c->buf[3]) == TSYNC_MAGIC) {
		snprintf(err, errlen, "the agent speaks tsync's protocol, not trace-cmd's: "
			 "address it without the tcmd: prefix");
		return -EPROTO;
	}
	if (!ret && tcmd_hdr_decode(c->buf, &h, &e)) {
		snprintf(err, errlen, "bad message from the trace-cmd agent: %s", e.reason);
		return -EBADMSG;
	}
	if (!ret)
		ret = read_acked(c, c->buf + TCMD_HDR_LEN, h.size - TCMD_HDR_LEN, deadline);
	if (ret == -ETIMEDOUT) {
		snprintf(err, errlen, "the trace-cmd agent sent nothing for %d ms", c->timeout_ms);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "reading from the trace-cmd agent: %s",
			 ret == -EPIPE ? "connection closed" : strerror(-ret));
		return ret;
	}
	if (tcmd_decode(c->buf, h.size, m, &e)) {
		snprintf(err, errlen, "bad %s message from the trace-cmd agent: %s",
			 tcmd_cmd_name(h.cmd), e.reason);
		return -EBADMSG;
	}
	return 0;
}

/* Receives one TIME_SYNC message of a given kind; see tcmd_io.h. */
int tcmd_conn_recv_tsync(struct tcmd_conn *c, const char *proto, uint32_t id,
		    struct tcmd_msg *m, char *err, size_t errlen)
{
	int ret = tcmd_conn_recv(c, m, err, errlen);

	if (ret)
		return ret;
	if (m->cmd != TCMD_TIME_SYNC) {
		snprintf(err, errlen, "the trace-cmd agent sent %s during time sync",
			 tcmd_cmd_name(m->cmd));
		return -EPROTO;
	}
	if (strcmp(m->ts.proto, proto) || m->ts.id != id) {
		snprintf(err, errlen, "the trace-cmd agent sent time-sync message %.15s/%u, "
			 "expected %s/%u", m->ts.proto, m->ts.id, proto, id);
		return -EPROTO;
	}
	return 0;
}
