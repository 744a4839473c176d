/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tracing on the agent for `tsync-host record`: instance, streams, meta. */
#ifndef TSYNC_AGENT_RECORD_H
#define TSYNC_AGENT_RECORD_H

#include "agent/session.h"

/* Each returns 0 when the session goes on, -errno when it must close. */
int agent_trace_start(struct agent_session *s, const struct tsync_trace_start *t);
int agent_trace_stop(struct agent_session *s);
int agent_trace_send_meta(struct agent_session *s);
/* Writes the round record of @r into the recorded instance (if any). */
int agent_record_round(struct agent_session *s, const struct tsync_sync_result *r);
/* Stops streams and removes the recorded instance. */
void agent_trace_destroy(struct agent_session *s);

#endif
