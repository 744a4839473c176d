/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's own threads left out of a session's instance. Both
 * protocols (tsync's TRACE_START option words, trace.c; a trace-cmd
 * host's TRACE_REQ argv, tcmd_session.c) parse a host's words with
 * agent_recopt_words() and resolve their -e with agent_events_resolve()
 * (evsel.h); the recording (record.c) gives the instance its settings by
 * the shared recipe (common/tracefs/instance.h), which leaves the agent's
 * threads out as struct agent_hide says, so that both accept and refuse
 * the same options (tsync-agent(8) lists them). Threads the agent starts
 * later (the streamers) are left out here.
 */
#ifndef TSYNC_AGENT_INSTOPTS_H
#define TSYNC_AGENT_INSTOPTS_H

#include <stdbool.h>

struct tsync_instance;

/* Whether and how the agent's own threads are left out of an instance. */
struct agent_hide {
	bool self;		/* left out (no --no-filter) */
	bool follow_new;	/* by event-fork and function-fork too (no -P without -c) */
};

/* Leaves threads the agent started since out of @ti as @hide says (a
 * failure is logged for @peer). */
void agent_instopts_hide_new(struct tsync_instance *ti, const struct agent_hide *hide,
			     const char *peer);

#endif
