/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The first exchange on every agent connection, and who may connect. */
#ifndef TSYNC_AGENT_HELLO_H
#define TSYNC_AGENT_HELLO_H

#include "agent/agent.h"

/*
 * Checks whether @peer may connect at all (allow lists). Returns 0, or
 * -EACCES after logging the refusal with the peer's address.
 */
int agent_check_peer(struct agent *a, const struct tsync_peer *peer);

/*
 * Serves one accepted connection: waits for HELLO (bounded by the idle
 * timeout), negotiates the version, then serves it as a control session or
 * a data stream. Returns when the connection is done; the caller closes
 * @fd.
 */
void agent_handle_connection(struct agent *a, int fd,
			     const struct tsync_peer *peer);

#endif
