/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A control session on the agent (state machine described in session.c).
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): agent/tsync/
 *   session.c, session.h  a control session (state machine in session.c)
 *   round.c, round.h      the guest side of a sync round
 *   trace.c, trace.h      its recording requests (TRACE_START, TRACE_STOP,
 *                         META_REQ, round records), on agent/rec/record.h
 *   data.c, data.h        a data connection: one CPU streamed to the host
 */
#ifndef TSYNC_AGENT_SESSION_H
#define TSYNC_AGENT_SESSION_H

#include <stdint.h>

#include "agent/conn/context.h"
#include "common/net/transport.h"

/* Serves one authenticated control connection on @fd, which negotiated
 * protocol @version, until it ends (BYE, an error, the idle timeout or
 * shutdown); removes everything the session created. Closes nothing. */
void agent_serve_control(const struct agent_ctx *ctx, int fd,
			 const struct tsync_peer *peer, uint8_t version);

#endif
