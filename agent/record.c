// SPDX-License-Identifier: GPL-2.0-or-later
/* Tracing on the agent (placeholder until record lands). */
#include <errno.h>

#include "agent/record.h"
#include "common/log.h"

/* Refuses tracing: not implemented in this build. */
int agent_trace_start(struct agent_session *s, const struct tsync_trace_start *t)
{
	(void)t;
	return agent_session_error(s, TSYNC_ERR_UNSUPPORTED, "tracing not supported yet");
}

/* Refuses tracing: not implemented in this build. */
int agent_trace_stop(struct agent_session *s)
{
	return agent_session_error(s, TSYNC_ERR_UNSUPPORTED, "tracing not supported yet");
}

/* Refuses metadata: not implemented in this build. */
int agent_trace_send_meta(struct agent_session *s)
{
	return agent_session_error(s, TSYNC_ERR_UNSUPPORTED, "tracing not supported yet");
}

/* Logs a round result at debug level; nothing is recorded yet. */
int agent_record_round(struct agent_session *s, const struct tsync_sync_result *r)
{
	log_debug("%s: round %u cpu %u offset %lld ns err %llu ns", s->peer->name,
		  r->round_id, r->cpu, (long long)r->offset_ns,
		  (unsigned long long)r->error_ns);
	return 0;
}

/* Nothing to tear down yet. */
void agent_trace_destroy(struct agent_session *s)
{
	s->trace = NULL;
}

/* Refuses data streams: not implemented in this build. */
void agent_serve_data(struct agent *a, int fd, const struct tsync_peer *peer,
		      uint64_t session_id, uint32_t cpu, const uint8_t *secret)
{
	(void)a; (void)fd; (void)secret;
	log_warn("%s: data stream for session %llx cpu %u refused: not supported",
		 peer->name, (unsigned long long)session_id, cpu);
}
