/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What instance.c lends stale.c: taking an instance's owner lock and
 * removing an instance, so that an owner's removal and a cleaner's follow
 * one rule. Not for use outside common/tracefs/.
 */
#ifndef TSYNC_INSTANCE_PRIV_H
#define TSYNC_INSTANCE_PRIV_H

struct tracefs_instance;

/*
 * Takes the owner lock of @inst (NULL: the top instance) without waiting,
 * as an owner does, and refuses it also while an earlier tsync, which
 * locked the instance's tracing_on file instead of its directory, holds
 * that. Returns the fd (the lock lives while it is open), -EWOULDBLOCK
 * (someone holds it) or -errno (-ENOENT: the instance is gone).
 */
int tsync_instance_lock_take_any(struct tracefs_instance *inst);

/*
 * Switches @inst off and disables its events (failures are harmless: the
 * removal that follows reports what matters).
 */
void tsync_instance_switch_off(struct tracefs_instance *inst);

/*
 * Removes instance @inst, which must have no open file of ours: an open
 * file makes rmdir fail with EBUSY, so a cleaner's brief look at a file
 * at this moment is waited for (a few ms at most). The caller holds the
 * owner lock throughout. Returns 0 (also when it is gone already) or
 * -errno.
 */
int tsync_instance_rmdir(struct tracefs_instance *inst);

#endif
