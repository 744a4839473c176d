/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A control session's state, shared by the modules that serve its
 * requests (agent/tsync: session.c, round.c, trace.c) and its data
 * connections (data.c), and sending on its control connection.
 */
#ifndef TSYNC_AGENT_CONTROL_H
#define TSYNC_AGENT_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/conn/context.h"
#include "common/stamp/stamp_round.h"
#include "common/net/transport.h"
#include "proto/proto.h"

struct agent_rec;

struct agent_session {
	const struct agent_ctx *ctx;
	int fd;				/* control connection */
	const struct tsync_peer *peer;
	uint64_t id;
	uint8_t secret[TSYNC_SECRET_LEN];
	uint64_t host_trace_id;
	uint64_t trace_id;		/* guest trace id */
	bool set_up;			/* SESSION_REQ answered (once only) */
	bool no_busy;			/* busy-polling turned off (round.c) */
	char host_name[TSYNC_NAME_MAX];
	struct tsync_decode_ctx dctx;

	/* Timestamp source of the last rounds, kept for the session because
	 * creating a marker instance costs milliseconds (Documentation/
	 * design.md, Instance and marker costs). */
	struct tsync_stamp_cache stamps;

	struct agent_rec *rec;		/* its recording (agent/rec/record.h),
					 * NULL until the first TRACE_START */
};

/* Returns the agent's configuration. */
static inline const struct agent_cfg *agent_session_cfg(const struct agent_session *s)
{
	return s->ctx->cfg;
}

/* Sends @m on the control connection with the I/O deadline. */
int agent_session_send(struct agent_session *s, const struct tsync_msg *m);
/* Sends an ERROR; returns the send result. */
int agent_session_error(struct agent_session *s, uint32_t code,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
