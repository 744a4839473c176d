/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What several benchmarks share: starting a real tsync-agent in a time
 * namespace of its own, so that its CLOCK_MONOTONIC is off the host's by a
 * known shift (the truth a sync is checked against).
 */
#ifndef TSYNC_BENCH_LIB_H
#define TSYNC_BENCH_LIB_H

#include <stddef.h>
#include <sys/types.h>

#include "common/net/endpoint.h"

/* Starts @b/tsync-agent under @b/helpers/timens_exec with CLOCK_MONOTONIC
 * shifted by @shift_ns, listening on a free loopback TCP port for 127.0.0.1
 * only, and waits for its "listening on" line. Returns the wrapper's pid
 * (kill it to stop the agent) with the announced endpoint in @ep, or -1
 * with nothing left running. */
pid_t bench_start_agent(const char *b, long long shift_ns, char *ep, size_t eplen);

/* bench_start_agent() with the endpoint parsed into @ep. */
pid_t bench_start_agent_ep(const char *b, long long shift_ns, struct tsync_endpoint *ep);

#endif
