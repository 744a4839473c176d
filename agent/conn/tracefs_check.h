/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether the agent can use tracefs, checked once at start.
 *
 * Without tracefs (not root, not mounted and not mountable, something else
 * mounted over it, access refused to root by kernel lockdown or a security
 * module) the agent still serves what needs none: sync rounds of the trace
 * clocks that user space can read itself (mono, mono_raw, boot, tai, and
 * x86-tsc where the TSC stamp source exists) with the clock and tsc stamp
 * sources. Recording and marker stamps need tracefs; the agent refuses
 * them with an ERROR that carries the reason and the fix found here
 * (Documentation/tsync-agent.8.txt, WITHOUT TRACEFS).
 */
#ifndef TSYNC_AGENT_TRACEFS_CHECK_H
#define TSYNC_AGENT_TRACEFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Where tracefs belongs when libtracefs finds none (the fix names it). */
#define AGENT_TRACEFS_DIR "/sys/kernel/tracing"

/* What the check saw (filled by agent_tracefs_check(), or by a test). */
struct agent_tracefs_facts {
	const char *dir;	/* libtracefs's tracing dir; NULL: none found
				 * or mounted */
	int find_err;		/* with dir NULL: errno of that (0: unknown) */
	bool is_tracefs;	/* dir is a tracefs mount (statfs) */
	int read_err;		/* errno reading trace_clock, 0: read */
	int write_err;		/* errno of write access to instances/, 0: ok */
	uid_t euid;
};

/* The verdict. */
struct agent_tracefs {
	bool usable;
	uint32_t code;		/* wire code refusals carry: PERMISSION or
				 * UNSUPPORTED */
	char why[200];		/* what is wrong, for a log line or ERROR */
	char fix[160];		/* what to do about it */
	char clocks[100];	/* what works without it: "mono, ..., x86-tsc" */
};

/* Looks at tracefs as this process can see it and fills @t (with the
 * clocks that work without it). */
void agent_tracefs_check(struct agent_tracefs *t);

/* Pure: judges @f into @t. */
void agent_tracefs_judge(const struct agent_tracefs_facts *f, struct agent_tracefs *t);

#endif
