/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Receiving sync probes on the hot path, blocking or busy-polling. */
#ifndef TSYNC_PROBEIO_H
#define TSYNC_PROBEIO_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

/*
 * Prepares @fd for the probe loop: a receive timeout of @timeout_ms bounds
 * the blocking receives of sleeping mode (msgio's receives do not block and
 * are unaffected). Returns 0 or -errno.
 */
int tsync_probe_prepare(int fd, int timeout_ms);

/*
 * Receives one message, expected to be a PROBE or PROBE_REPLY (@type).
 * With @busy the socket is polled without sleeping (for the few ms a round
 * lasts, when both ends run on different CPUs this halves the round trip);
 * otherwise the thread sleeps in poll(). Returns 0 with @round_id and @seq
 * set; 1 when another valid message arrived instead (in @other, which the
 * caller frees); -errno or a TSYNC_PERR_* code with @err set.
 */
int tsync_probe_recv(int fd, uint8_t type, bool busy, int64_t deadline,
		     uint32_t *round_id, uint32_t *seq, struct tsync_msg *other,
		     const struct tsync_decode_ctx *ctx, char *err, size_t errlen);

#endif
