/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every connection thread of the agent shares: the configuration and
 * the tables the server owns. Set up by server.c before the first thread
 * starts; the pointers never change afterwards.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): agent/conn/
 *   context.h                         what every connection thread shares
 *   config.h                          the agent's limits and policy
 *   acl.c, acl.h                      allow lists of IP networks and vsock CIDs
 *   conntab.c, conntab.h              the table of open connections (--max-conns)
 *   ratelimit.c, ratelimit.h          rate-limited warnings
 *   registry.c, registry.h            the session registry
 *   tracefs_check.c, tracefs_check.h  whether the agent can use tracefs
 *   control.c, control.h              a control session's state, sending on its connection
 */
#ifndef TSYNC_AGENT_CONTEXT_H
#define TSYNC_AGENT_CONTEXT_H

#include "agent/conn/config.h"

struct agent_budget;
struct agent_conntab;
struct agent_ratelimit;
struct agent_registry;
struct agent_tracefs;

struct agent_ctx {
	const struct agent_cfg *cfg;
	int ncpus;			/* the guest's CPUs */
	struct agent_conntab *conns;	/* agent/conn/conntab.h */
	struct agent_registry *reg;	/* agent/conn/registry.h */
	struct agent_budget *budget;	/* agent/rec/budget.h */
	struct agent_ratelimit *rl;	/* agent/conn/ratelimit.h */
	const struct agent_tracefs *tracefs;	/* usable? agent/conn/tracefs_check.h */
};

#endif
