/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The removal of tsync instances whose owners died (killed, crashed):
 * the owner lock instance.h describes decides, not the pid in the name.
 * Documentation/tracefs-instances.md, "Who owns an instance, and when it
 * is stale", has the rule and its cost.
 */
#ifndef TSYNC_STALE_H
#define TSYNC_STALE_H

/*
 * Removes every instance named "<@prefix>..." whose owner is known dead
 * (its owner lock could be taken and no process of the pid in its name
 * lives here); only then is its tracing switched off. Live owners'
 * instances, in whatever PID namespace, are left. Failures to
 * remove are logged. Returns the number removed, or -errno (-EINVAL:
 * @prefix does not start with "tsync-").
 */
int tsync_instance_cleanup_stale(const char *prefix);
/*
 * The one stale cleanup every program runs (tsync-agent at start,
 * tsync-host before it opens a guest of either protocol): every
 * instance named TSYNC_INSTANCE_NAME_PREFIX..., whatever program or
 * session made it, by tsync_instance_cleanup_stale()'s rule, and the
 * machine-wide settings a killed recording left changed
 * (tsync_global_cleanup()). Returns the
 * number removed, or -errno (-ENODEV: no tracefs).
 */
int tsync_instance_cleanup_all_stale(void);

#endif
