/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace-cmd's agent protocol messages (proto/tcmd.h) on a socket, with
 * deadlines: one receive reads a whole message, one send is one write.
 */
#ifndef TSYNC_AGENT_TCMD_IO_H
#define TSYNC_AGENT_TCMD_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/tcmd.h"

/*
 * Receives one message into @buf (TCMD_MSG_MAX bytes) and decodes it into
 * @m (which points into @buf). The first byte must arrive by @first
 * (absolute CLOCK_MONOTONIC ns; -1: no limit), the rest within
 * @io_timeout_ms. Returns 0, or -errno (-ETIMEDOUT, -EPIPE on close,
 * -EBADMSG malformed) with a reason in @err.
 */
int tcmd_recv(int fd, uint8_t *buf, struct tcmd_msg *m, int64_t first,
	      int io_timeout_ms, char *err, size_t errlen);
/*
 * Sends @len bytes of an encoded message (@len < 0: the encoder's error,
 * returned as is) in one write by @deadline. Returns 0 or -errno.
 */
int tcmd_send(int fd, const uint8_t *buf, ssize_t len, int64_t deadline);

#endif
