/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A data connection on the agent: one CPU of a session's trace streamed
 * to the host (the stream itself is agent/rec/record.c's). Two steps
 * around the HELLO_REPLY, so that a refusal is an ERROR in its place.
 */
#ifndef TSYNC_AGENT_DATA_H
#define TSYNC_AGENT_DATA_H

#include "agent/conn/context.h"
#include "common/net/transport.h"
#include "proto/proto.h"

struct agent_session;

/*
 * Checks data hello @h (its session exists, its secret matches, a trace
 * is active, its CPU exists and has no stream yet) and claims the CPU.
 * Returns the session with a reference taken, or NULL after logging the
 * reason and sending ERROR on @fd.
 */
struct agent_session *agent_data_claim(const struct agent_ctx *ctx, int fd,
				       const struct tsync_peer *peer,
				       const struct tsync_hello *h);
/* Streams the claimed CPU @cpu of @s into @fd until the session stops
 * the trace, then releases the claim and the reference. */
void agent_data_serve(const struct agent_ctx *ctx, int fd,
		      const struct tsync_peer *peer, struct agent_session *s,
		      uint32_t cpu);
/* Releases the claim on @cpu of @s and the reference without streaming
 * (the hello did not complete). */
void agent_data_release(const struct agent_ctx *ctx, struct agent_session *s,
			uint32_t cpu);

#endif
