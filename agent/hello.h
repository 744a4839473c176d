/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The first exchange on every agent connection, and who may connect. */
#ifndef TSYNC_AGENT_HELLO_H
#define TSYNC_AGENT_HELLO_H

#include "agent/conn/context.h"
#include "common/net/transport.h"

struct agent_conn;

/*
 * Checks whether @peer, connected on @fd, may connect at all (allow
 * lists). Returns 0, or -EACCES after logging the refusal (rate-limited)
 * and telling the peer why in an ERROR PERMISSION; the caller closes @fd.
 */
int agent_check_peer(const struct agent_ctx *ctx, int fd, const struct tsync_peer *peer);

/*
 * Serves one accepted connection @c (agent/conn/conntab.h): waits for HELLO
 * (bounded by the idle timeout), negotiates the version, authenticates
 * the host where a key is required, then serves it as a control session
 * or a data stream. Returns when the connection is done; the caller
 * closes it.
 */
void agent_handle_connection(const struct agent_ctx *ctx, struct agent_conn *c);

#endif
