/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The extra connections of one trace-cmd session: its time-sync port and
 * one port per CPU, each an ephemeral listener on the address the host
 * reached the agent on. A connection counts only if it comes from the
 * session's host (same address, or same CID) and the allow lists admit
 * it; it is then held in the agent's connection table (--max-conns).
 */
#ifndef TSYNC_AGENT_TCMD_PORTS_H
#define TSYNC_AGENT_TCMD_PORTS_H

#include <stdint.h>

#include "agent/conn/context.h"
#include "common/net/transport.h"

struct tcmd_ports;
struct tracefs_instance;

/*
 * Listens on @nports ephemeral ports beside the local address of control
 * connection @fd, for the host @host. Returns 0 and *@out, or -errno
 * (logged).
 */
int tcmd_ports_open(const struct agent_ctx *ctx, int fd, const struct tsync_peer *host,
		    int nports, struct tcmd_ports **out);
/* Returns the port number of listener @i. */
uint32_t tcmd_ports_port(const struct tcmd_ports *p, int i);
/*
 * Accepts the host's connection on listener @i by @deadline (CLOCK_MONOTONIC
 * ns); connections from anyone else are closed. Returns the fd (owned by
 * @p) or -errno (logged).
 */
int tcmd_ports_accept(struct tcmd_ports *p, int i, int64_t deadline);
/*
 * Accepts the connections of listeners @first.. and starts a streamer of
 * CPU (i - @first) of @inst on each, every poll_ms ms (0: default), by
 * @deadline. Returns 0 or -errno (logged; streams started so far go on).
 */
int tcmd_ports_stream(struct tcmd_ports *p, int first, struct tracefs_instance *inst,
		      int poll_ms, int64_t deadline);
/*
 * Stops the streamers (each flushes its last pages), then ends each
 * stream with EOF. Returns the bytes sent on all of them.
 */
uint64_t tcmd_ports_stop_streams(struct tcmd_ports *p);
/* Stops what runs, closes everything; NULL is fine. */
void tcmd_ports_close(struct tcmd_ports *p);

#endif
