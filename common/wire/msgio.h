/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sending and receiving protocol messages (proto/proto.h) on a socket with
 * deadlines (common/base/io.h). The only I/O part of the protocol. Every message
 * sent or received is logged at debug level by name.
 *
 * Returns: 0, -errno for I/O failures (-ETIMEDOUT, -EPIPE when the peer
 * closed, ...), or a TSYNC_PERR_* code (tsync_perr_is_proto()) when the
 * peer sent something invalid; @err gets a reason either way.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/wire/
 *   msgio.c, msgio.h      tsync's protocol messages on a socket, with deadlines
 *   probeio.c, probeio.h  receiving sync probes on the hot path
 *   auth.c, auth.h        the shared-key HMAC challenge-response
 *   tcmd_io.c, tcmd_io.h  trace-cmd's agent-protocol messages on a socket
 *                         (both programs), with deadlines
 */
#ifndef TSYNC_MSGIO_H
#define TSYNC_MSGIO_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/* Sends @m (header and payload in one system call). */
int tsync_msg_send(int fd, const struct tsync_msg *m, int64_t deadline);
/*
 * Receives one message into @m: reads the header, checks it (and the
 * length against @ctx->max_payload) before allocating anything, reads the
 * payload and decodes it. Small messages (PROBE...) use no heap. On success
 * the caller owns @m (tsync_msg_free()); on failure @m holds nothing.
 */
int tsync_msg_recv(int fd, struct tsync_msg *m,
		   const struct tsync_decode_ctx *ctx, int64_t deadline,
		   char *err, size_t errlen);
/*
 * The two halves of tsync_msg_recv(), for receivers that read the header
 * themselves (the probe loop, common/wire/probeio.h). tsync_msg_recv_hdr()
 * decodes the 12 bytes in @hbuf into @hdr and checks them against @ctx
 * (type, length limits); tsync_msg_recv_payload() then reads the payload
 * @hdr announces and decodes it into @m (the caller owns @m on success).
 * @fd only names the connection in debug logs for the first.
 */
int tsync_msg_recv_hdr(int fd, const uint8_t hbuf[TSYNC_HDR_LEN],
		       const struct tsync_decode_ctx *ctx, struct tsync_hdr *hdr,
		       char *err, size_t errlen);
int tsync_msg_recv_payload(int fd, const struct tsync_hdr *hdr,
			   struct tsync_msg *m,
			   const struct tsync_decode_ctx *ctx, int64_t deadline,
			   char *err, size_t errlen);
/*
 * Receives one message on a connection that may stay silent between
 * messages: waits up to @idle_deadline for its first byte, then the whole
 * message must arrive within @io_ms of that, so a peer that stalls (or
 * trickles bytes) in the middle of a message is cut off after @io_ms
 * whatever the idle timeout. -ETIMEDOUT either way, with @err saying
 * which.
 */
int tsync_msg_recv_idle(int fd, struct tsync_msg *m,
			const struct tsync_decode_ctx *ctx, int64_t idle_deadline,
			int io_ms, char *err, size_t errlen);
/*
 * Receives a message that must be of @type: an ERROR from the peer gives
 * TSYNC_PERR_PEER_ERROR, another type TSYNC_PERR_UNEXPECTED (@m freed).
 */
int tsync_msg_recv_expect(int fd, uint8_t type, struct tsync_msg *m,
			  const struct tsync_decode_ctx *ctx, int64_t deadline,
			  char *err, size_t errlen);
/* Sends an ERROR with @code and a formatted reason. */
int tsync_msg_send_error(int fd, uint32_t code, int64_t deadline,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Hot path: sends a PROBE or PROBE_REPLY (@type) without building a msg. */
int tsync_probe_send(int fd, uint8_t type, uint32_t round_id, uint32_t seq,
		     int64_t deadline);

#endif
