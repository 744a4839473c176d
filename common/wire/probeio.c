// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Receiving sync probes on the hot path. A probe is a 20-byte message; the
 * first recv() normally returns all of it. Anything else that arrives in its
 * place (an ERROR, SYNC_END) is read and decoded as a normal message.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/base/io.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/wire/probeio.h"
#include "common/base/timeutil.h"

/* Reads @len bytes, spinning on recv (busy) or sleeping in poll. */
static int read_spin(int fd, uint8_t *buf, size_t len, bool busy,
		     int64_t deadline)
{
	size_t got = 0;
	unsigned int spins = 0;

	while (got < len) {
		/* Sleeping: a blocking recv() bounded by SO_RCVTIMEO (set by
		 * tsync_probe_prepare()) is one system call per message where
		 * recv + poll + recv would be three. */
		ssize_t n = recv(fd, buf + got, len - got, busy ? MSG_DONTWAIT : 0);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (busy) {
			/* Check the clock only now and then: it is not free. */
			if (++spins % 1024 == 0 && tsync_now_ns() > deadline)
				return -ETIMEDOUT;
			continue;
		}
		/* SO_RCVTIMEO fired, or the socket is non-blocking: wait for
		 * what is left of the deadline. */
		n = tsync_wait_readable(fd, deadline);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/* Sets the receive timeout that bounds blocking probe receives. */
int tsync_probe_prepare(int fd, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

/* Receives one probe or another message; see probeio.h. */
int tsync_probe_recv(int fd, uint8_t type, bool busy, int64_t deadline,
		     uint32_t *round_id, uint32_t *seq, struct tsync_msg *other,
		     const struct tsync_decode_ctx *ctx, char *err, size_t errlen)
{
	struct tsync_proto_err perr;
	struct tsync_hdr hdr;
	struct tsync_msg m;
	uint8_t small[TSYNC_PROBE_MSG_LEN];
	int ret;

	ret = read_spin(fd, small, TSYNC_HDR_LEN, busy, deadline);
	if (ret) {
		snprintf(err, errlen, "waiting for %s: %s", tsync_msg_name(type),
			 ret == -EPIPE ? "peer closed the connection" : strerror(-ret));
		return ret;
	}
	ret = tsync_msg_recv_hdr(fd, small, ctx, &hdr, err, errlen);
	if (ret)
		return ret;
	if (hdr.type != type || hdr.len != TSYNC_PROBE_LEN) {
		/* not the probe: an ERROR, SYNC_END..., read as usual */
		ret = tsync_msg_recv_payload(fd, &hdr, other, ctx, deadline, err, errlen);
		return ret ? ret : 1;
	}
	/* the hot path: 8 more bytes, spinning if busy, no heap */
	ret = read_spin(fd, small + TSYNC_HDR_LEN, TSYNC_PROBE_LEN, busy, deadline);
	if (ret) {
		snprintf(err, errlen, "reading %s: %s", tsync_msg_name(type), strerror(-ret));
		return ret;
	}
	ret = tsync_msg_decode(&hdr, small + TSYNC_HDR_LEN, TSYNC_PROBE_LEN, ctx, &m, &perr);
	if (ret) {
		snprintf(err, errlen, "%s", perr.reason);
		return ret;
	}
	*round_id = m.probe.round_id;
	*seq = m.probe.seq;
	return 0;
}
