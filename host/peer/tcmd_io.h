/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Message I/O with a stock trace-cmd agent (the host side): one message
 * read or written at a time over a connected socket, each wait bounded by
 * a deadline, every message checked by the codec (proto/tcmd.h).
 *
 * Delayed ACK: trace-cmd's agent writes each message in two write()s
 * (header and command struct, then the payload) with Nagle on. The second
 * write waits until the first is acknowledged, and a Linux receiver in
 * "pingpong" mode delays that ACK up to 40 ms: every PTP probe pays it.
 * With @quickack the connection re-arms TCP_QUICKACK after every read
 * (the kernel clears it again on its own), so the first part is ACKed at
 * once and the second part follows. Documentation/trace-cmd-host.md has the
 * measurement; tests/bench/bench_09_tcmd.c repeats it.
 */
#ifndef TSYNC_HOST_TCMD_IO_H
#define TSYNC_HOST_TCMD_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/tcmd.h"

struct tcmd_conn {
	int fd;
	bool quickack;		/* re-arm TCP_QUICKACK after every read */
	int timeout_ms;		/* per message */
	uint8_t buf[TCMD_MSG_MAX];	/* the last message received */
};

/* Sets up @c over connected socket @fd (taken over: tcmd_conn_close()).
 * Returns 0 or -errno (TCP_QUICKACK not settable). */
int tcmd_conn_init(struct tcmd_conn *c, int fd, bool quickack, int timeout_ms);
/* Closes the socket (fd -1 is fine). */
void tcmd_conn_close(struct tcmd_conn *c);
/* Writes the @len bytes of one encoded message in one call. Returns 0 or
 * -errno with a reason in @err. */
int tcmd_conn_send(struct tcmd_conn *c, const uint8_t *msg, ssize_t len, char *err, size_t errlen);
/*
 * Reads one whole message into c->buf and decodes it into @m (valid until
 * the next read). Returns 0, or -errno with a reason in @err: -ETIMEDOUT
 * (silent peer), -EPIPE (closed), -EBADMSG (malformed).
 */
int tcmd_conn_recv(struct tcmd_conn *c, struct tcmd_msg *m, char *err, size_t errlen);
/* Reads one message and checks it is TIME_SYNC of protocol @proto with id
 * @id; else -EPROTO with what came instead in @err. */
int tcmd_conn_recv_tsync(struct tcmd_conn *c, const char *proto, uint32_t id,
		    struct tcmd_msg *m, char *err, size_t errlen);

#endif
