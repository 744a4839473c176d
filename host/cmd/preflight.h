/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Checks tsync-host makes before it connects to any agent, so that what
 * cannot work is a one-line usage error naming the problem, the value and
 * the fix, not a failure of every round:
 *
 *   - a --stamp source that cannot stamp the chosen trace clock;
 *   - tracefs not usable (not root, not mounted) when the host needs it:
 *     `record` always (the host's own instance), `sync` only when its
 *     stamps are trace markers (clocks user space cannot read: local,
 *     global, ...); `sync -C mono` stamps with clock_gettime() and runs
 *     as any user;
 *   - a trace clock the host's kernel does not offer (its trace_clock
 *     list, read when tracefs can be read);
 *   - after the session opened, a clock the guest does not offer (the
 *     list it sent: host/peer/peer.h, peer_clocks()).
 *
 * preflight_decide() and preflight_guest_clock() are pure (tested with
 * synthetic facts); host_preflight() gathers the facts from this machine,
 * host_preflight_guest() from the guest's session.
 */
#ifndef TSYNC_HOST_PREFLIGHT_H
#define TSYNC_HOST_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/trace_clock.h"
#include "proto/proto.h"

struct peer;

/* What a command needs and what this machine has. */
struct preflight_facts {
	const char *cmd;		/* "record" or "sync": named in the fix */
	bool record;			/* records: needs a host instance */
	const char *clock;		/* -C */
	unsigned int source;		/* enum tsync_stamp_source in use */
	bool stamp_forced;		/* --stamp given */
	const char *tracefs_dir;	/* where tracefs is (or would be) */
	int tracefs;			/* 0 usable, -EACCES/-EPERM, -ENODEV... */
	unsigned int uid;		/* effective uid */
	int nclocks;			/* the host's clocks, or -errno */
	const char (*clocks)[TSYNC_TRACE_CLOCK_NAME_MAX];
};

/*
 * Decides from @f whether the command can run. Returns 0, or -EINVAL
 * (usage), -EACCES (tracefs not accessible) or -ENODEV (no tracefs) with
 * one line in @err: the problem, the value, the fix.
 */
int preflight_decide(const struct preflight_facts *f, char *err, size_t errlen);

/*
 * Gathers the facts of this machine for command @cmd ("sync" or
 * "record"; @record when it records) with trace clock @clock and stamp
 * source @source (@stamp_forced: given with --stamp), and decides as
 * preflight_decide() does.
 */
int host_preflight(const char *cmd, bool record, const char *clock, unsigned int source,
		   bool stamp_forced, char *err, size_t errlen);

/*
 * Checks that the guest whose @nclocks trace clocks are @clocks offers
 * trace clock @clock (a guest that lists none passes; more than
 * TSYNC_MAX_CLOCKS are read as that many). Returns 0, or -EINVAL with the
 * guest's clocks in @err.
 */
int preflight_guest_clock(const char (*clocks)[TSYNC_CLOCK_NAME_MAX], uint32_t nclocks,
			  const char *clock, char *err, size_t errlen);

/* preflight_guest_clock() with the clocks the guest of @p sent; when the
 * clock is missing because the agent cannot use tracefs, says that (the
 * agent's reason and fix, asked with peer_can_record()). */
int host_preflight_guest(struct peer *p, const char *clock, char *err, size_t errlen);

#endif
