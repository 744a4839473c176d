/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `tsync-host sync` against a stock `trace-cmd agent` (AGENT tcmd:...):
 * trace-cmd's PTP samples (host/peer/tcmd_ptp.h), one per CPU and round,
 * printed as a table or JSON. The session asks the agent for the
 * smallest recording trace-cmd accepts (the nop tracer) because its agent
 * only syncs while it records; the recording is discarded.
 */
#ifndef TSYNC_HOST_TCMD_SYNC_H
#define TSYNC_HOST_TCMD_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "host/guest/agent_arg.h"

struct tcmd_sync_opts {
	const char *clock;
	unsigned int source;		/* enum tsync_stamp_source */
	const char *cpus;		/* --cpus, or NULL: all */
	int rounds;
	int interval_ms;
	int host_cpu;			/* -1: the guest CPU's number */
	bool json;
	bool quickack;			/* common/wire/tcmd_io.h; off only to measure */
	int connect_timeout_ms, io_timeout_ms;
	uint64_t host_trace_id;
};

/* Syncs agent @a; prints the results. Returns 0, 1 when it failed (said
 * why on stderr) or 2 for a --cpus the guest lacks. */
int tcmd_sync_agent(const struct host_agent_arg *a, const struct tcmd_sync_opts *o);

#endif
