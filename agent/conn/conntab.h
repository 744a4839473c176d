/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's table of open connections: enforces --max-conns and makes
 * room by evicting a connection that has not authenticated yet (see
 * conntab.c for the policy). Thread-safe.
 */
#ifndef TSYNC_AGENT_CONNTAB_H
#define TSYNC_AGENT_CONNTAB_H

#include <stdint.h>

#include "common/net/transport.h"

struct agent_conntab;
struct agent_conn;

struct agent_ratelimit;

/* Creates a table for at most @max_conns connections, its refusals and
 * evictions logged through @rl; NULL on ENOMEM. */
struct agent_conntab *agent_conntab_new(int max_conns, struct agent_ratelimit *rl);
/* Frees @t; it must be empty. */
void agent_conntab_free(struct agent_conntab *t);

/*
 * Adds the accepted connection @fd from @peer, evicting an unauthenticated
 * one if the table is full. Returns 0 and the entry in @out, -EBUSY when
 * there is no room (logged), -ESHUTDOWN when the agent stops, -ENOMEM.
 * The table owns @fd from then on (closed by agent_conntab_remove()).
 */
int agent_conntab_add(struct agent_conntab *t, int fd,
		      const struct tsync_peer *peer, struct agent_conn **out);
/* Removes @c, closes its fd and frees it. */
void agent_conntab_remove(struct agent_conntab *t, struct agent_conn *c);

/* Returns the socket of @c. */
int agent_conn_fd(const struct agent_conn *c);
/* Returns the peer of @c. */
const struct tsync_peer *agent_conn_peer(const struct agent_conn *c);

/* Marks @c authenticated (see hello.c): it is no longer evicted to make
 * room. */
void agent_conntab_authenticated(struct agent_conntab *t, struct agent_conn *c);

/* Refuses new connections and shuts every open one down (their threads
 * then end on their own). */
void agent_conntab_shutdown(struct agent_conntab *t);
/* Waits until the table is empty or @deadline (CLOCK_MONOTONIC ns)
 * passes; returns how many connections are still open. */
int agent_conntab_wait_empty(struct agent_conntab *t, int64_t deadline);

#endif
