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

/*
 * Listens on @nports ephemeral ports beside the local address of control
 * connection @fd, for the host @host; the accepts below watch @fd too and
 * return -ECONNRESET (logged) as soon as the host closed or reset it.
 * Returns 0 and *@out, or -errno (logged).
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
 * Accepts the host's connections on listeners @first.. by @deadline and
 * hands each to @take(@arg, i - @first, fd) as it arrives (the fd stays
 * owned by @p). Returns 0, or -errno (logged) or what @take returned;
 * connections taken so far stay.
 */
int tcmd_ports_accept_each(struct tcmd_ports *p, int first, int64_t deadline,
			   int (*take)(void *arg, int i, int fd), void *arg);
/* Closes every listener and connection; NULL is fine. */
void tcmd_ports_close(struct tcmd_ports *p);

#endif
