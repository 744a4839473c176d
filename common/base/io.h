/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Full-read/full-write helpers with deadlines. Deadlines are absolute
 * CLOCK_MONOTONIC nanoseconds (tsync_deadline_ms()). A silent peer gives
 * -ETIMEDOUT, a closed one -EPIPE (orderly close) or -ECONNRESET, never a
 * hang; writes never raise SIGPIPE (MSG_NOSIGNAL on sockets; on pipes it
 * is blocked and consumed around the write). Pipes and files work too.
 */
#ifndef TSYNC_IO_H
#define TSYNC_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Reads exactly @len bytes into @buf. Returns 0 or -errno. */
int tsync_read_full(int fd, void *buf, size_t len, int64_t deadline);
/* Writes exactly @len bytes. Returns 0 or -errno. */
int tsync_write_full(int fd, const void *buf, size_t len, int64_t deadline);
/*
 * Writes all of @iov (modified) in as few system calls as the socket allows:
 * one sendmsg for a message that fits the send buffer. Returns 0 or -errno.
 */
int tsync_writev_full(int fd, struct iovec *iov, int iovcnt, int64_t deadline);
/*
 * Waits until @fd is readable or @deadline passes. Returns 1 when readable,
 * 0 on timeout, -errno on error.
 */
int tsync_wait_readable(int fd, int64_t deadline);

#endif
