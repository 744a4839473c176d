/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tsync-agent's server (agent/server.c): what main() needs to run the
 * agent.
 *
 * Modules of agent/ and which way calls go (never back up):
 *
 *   main.c      options, signals, daemon, sockets from systemd
 *    -> listenfds.c the socket activation variables (pure)
 *    -> server.c    listeners, accept loop, one thread per connection,
 *                   shutdown; owns the tables below (agent/conn/context.h)
 *        -> conntab.c   the table of open connections (limit, eviction)
 *        -> registry.c  sessions by id, with references
 *        -> budget.c    trace buffer memory of all sessions
 *        -> hello.c     the first exchange on a connection: HELLO,
 *                       authentication, then control or data
 *            -> session.c   the control session's state machine
 *                -> round.c     a sync round
 *                -> trace.c     its recording requests (TRACE_START...)
 *                    -> record.c    a recording: budget, instance,
 *                                   streams, stop, metadata (both
 *                                   session types)
 *                    -> evsel.c     the host's record options, their event
 *                                   selection bounded (both session types)
 *            -> data.c      a data connection: finds its session,
 *                           streams one CPU (through record.c)
 *   control.c   a session's state and its control connection (send,
 *               error), used by session.c, round.c, trace.c, data.c
 *   ratelimit.c rate-limited warnings for what peers can trigger
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): agent/
 *   main.c            tsync-agent's command line and main()
 *   listenfds.c, listenfds.h  systemd's socket activation variables (LISTEN_FDS)
 *   agent.h           what main() needs to run the server
 *   server.c          listeners, the accept loop, a thread per connection
 *   hello.c, hello.h  the first exchange of a connection: which session type it is
 *   conn/             what every connection and session type shares
 *   rec/              a recording on the agent
 *   tsync/            tsync's own session, rounds and data connections
 *   tcmd/             trace-cmd's session, ports and PTP
 */
#ifndef TSYNC_AGENT_H
#define TSYNC_AGENT_H

#include "agent/conn/config.h"

struct agent;

/* Creates the agent: takes over the listeners from systemd in @cfg,
 * listens on every configured endpoint, removes stale instances. Returns
 * 0 and the agent in @out, or -errno (logged). @cfg must outlive the
 * agent. */
int agent_create(const struct agent_cfg *cfg, struct agent **out);
/* Prints one "listening on ENDPOINT" line per listener to @fd (readiness
 * signal for scripts and tests). */
void agent_announce(const struct agent *a, int fd);
/* Serves until SIGTERM/SIGINT (delivered through @sigfd, a signalfd).
 * Returns 0 or -errno. */
int agent_run(struct agent *a, int sigfd);
/* Stops every connection, waits for their threads, frees @a. */
void agent_destroy(struct agent *a);

#endif
