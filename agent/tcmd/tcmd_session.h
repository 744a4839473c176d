/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tsync-agent answering trace-cmd's agent protocol (`trace-cmd record -A`
 * on the host): one session per connection. hello.c hands a connection
 * over when its first byte is not tsync's (Documentation/protocol.md,
 * section 10).
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): agent/tcmd/
 *   tcmd_session.c, tcmd_session.h  a trace-cmd host's session
 *   tcmd_ports.c, tcmd_ports.h      its time-sync and per-CPU connections
 *   tcmd_ptp.c, tcmd_ptp.h          trace-cmd's PTP, guest side
 */
#ifndef TSYNC_AGENT_TCMD_SESSION_H
#define TSYNC_AGENT_TCMD_SESSION_H

#include <stdbool.h>

#include "agent/conn/context.h"

struct agent_conn;

/* Returns true if @first, a connection's first byte, starts a trace-cmd
 * message (a size below 8192 starts with 0) rather than tsync's magic. */
static inline bool agent_tcmd_first_byte(unsigned char first)
{
	return first == 0;
}

/* Serves trace-cmd session @c until CLOSE or a failure; the caller closes
 * the connection. */
void agent_tcmd_serve(const struct agent_ctx *ctx, struct agent_conn *c);

#endif
