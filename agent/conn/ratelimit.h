/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rate-limited warnings: what a peer can make the agent log (refusals,
 * evictions) is at most AGENT_RL_BURST lines per second per kind, so a
 * flood of bad connections cannot flood the log. The first line allowed
 * after a suppressed run says how many were left out. Thread-safe.
 */
#ifndef TSYNC_AGENT_RATELIMIT_H
#define TSYNC_AGENT_RATELIMIT_H

#include <stdint.h>

#define AGENT_RL_BURST		20
#define AGENT_RL_INTERVAL_MS	1000

/* The kinds of line limited separately. */
enum agent_rl_kind {
	AGENT_RL_ACL,		/* peer not allowed */
	AGENT_RL_CONNS,		/* --max-conns: refused or evicted */
	AGENT_RL_SILENT,	/* no hello (or AUTH) in time: the idle floods */
	AGENT_RL_HELLO,		/* a bad hello, a stall inside it */
	AGENT_RL_AUTH,		/* failed authentication */
	AGENT_RL_DATA,		/* data stream refused */
	AGENT_RL_SESSION,	/* session refused */
	AGENT_RL_KINDS
};

struct agent_ratelimit;

/* Creates the limiters (one per kind); NULL on ENOMEM. */
struct agent_ratelimit *agent_ratelimit_new(void);
/* Frees @rl (NULL is fine). */
void agent_ratelimit_free(struct agent_ratelimit *rl);
/* Logs a warning of @kind unless over the rate; @rl NULL: always. */
void agent_rl_warn(struct agent_ratelimit *rl, enum agent_rl_kind kind,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
