/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record options a trace-cmd host sends its agent (TRACE_REQ ARGS),
 * parsed by common/recopt.h (scope AGENT) and reduced to what tsync-agent
 * applies. Everything else is refused with a reason, never ignored:
 * Documentation/tsync-agent.8.txt lists what is applied.
 */
#ifndef TSYNC_AGENT_TCMD_OPTS_H
#define TSYNC_AGENT_TCMD_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/* What a trace-cmd host asked for. */
struct tcmd_rec {
	char clock[TSYNC_CLOCK_NAME_MAX];	/* -C; "" for the default */
	uint32_t buffer_kb;			/* -b; 0 for the default */
	uint32_t nevents;
	struct tsync_trace_event *events;	/* -e/-f/-a, evsel.h's input */
};

/*
 * Parses @argc strings of @argv (the ARGS of a TRACE_REQ, no program
 * name) into @out. Returns 0, or -EINVAL with the reason in @err (what
 * the agent tells the host), or -ENOMEM. Free @out with tcmd_opts_free()
 * in both cases.
 */
int tcmd_opts_parse(int argc, const char *const *argv, struct tcmd_rec *out,
		    char *err, size_t errlen);
void tcmd_opts_free(struct tcmd_rec *r);

#endif
