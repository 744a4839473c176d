// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd's agent protocol on a socket: see tcmd_io.h. The header is
 * read and checked before the rest, so a peer announcing a bad size is
 * refused without reading on.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "common/wire/tcmd_io.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"

/* Waits until @fd is readable (or closed, or shut down by the agent's
 * shutdown): the wait for a peer that may rightly be silent for hours. */
static int wait_forever(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Receives one message; see tcmd_io.h. */
int tcmd_recv(int fd, uint8_t *buf, struct tcmd_msg *m, int64_t first,
	      int io_timeout_ms, char *err, size_t errlen)
{
	struct tcmd_err e;
	struct tcmd_hdr h;
	int64_t io;
	int ret;

	if (first < 0) {
		ret = wait_forever(fd);
		if (ret) {
			snprintf(err, errlen, "%s", strerror(-ret));
			return ret;
		}
	} else {
		ret = tsync_wait_readable(fd, first);
		if (ret == 0) {
			snprintf(err, errlen, "idle: no message in time");
			return -ETIMEDOUT;
		}
		if (ret < 0) {
			snprintf(err, errlen, "%s", strerror(-ret));
			return ret;
		}
	}
	io = tsync_deadline_ms(io_timeout_ms);
	ret = tsync_read_full(fd, buf, TCMD_HDR_LEN, io);
	if (ret) {
		snprintf(err, errlen, "%s", ret == -EPIPE ? "connection closed" :
			 strerror(-ret));
		return ret;
	}
	ret = tcmd_hdr_decode(buf, &h, &e);
	if (ret) {
		snprintf(err, errlen, "%s", e.reason);
		return ret;
	}
	io = tsync_deadline_ms(io_timeout_ms);
	ret = tsync_read_full(fd, buf + TCMD_HDR_LEN, h.size - TCMD_HDR_LEN, io);
	if (ret) {
		snprintf(err, errlen, "%s: %s", tcmd_cmd_name(h.cmd),
			 ret == -ETIMEDOUT ? "rest of the message not in time" :
			 strerror(-ret));
		return ret;
	}
	ret = tcmd_decode(buf, h.size, m, &e);
	if (ret) {
		snprintf(err, errlen, "%s", e.reason);
		return ret;
	}
	log_debug("tcmd: received %s (%u bytes)", tcmd_cmd_name(m->cmd), h.size);
	return 0;
}

/* Sends one encoded message; see tcmd_io.h. */
int tcmd_send(int fd, const uint8_t *buf, ssize_t len, int64_t deadline)
{
	if (len < 0)
		return (int)len;
	return tsync_write_full(fd, buf, (size_t)len, deadline);
}
