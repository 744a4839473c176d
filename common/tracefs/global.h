/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Machine-wide tracefs settings (a top-level file that is the kernel's,
 * not an instance's: saved_cmdlines_size) with one owner across every
 * tsync recording of the machine, in one process or many: the first to
 * change a setting saves the original, the last to finish writes it back,
 * whatever order the recordings end in.
 *
 * How: each user holds a shared flock(2) on the setting's own tracefs file
 * for as long as it may have changed it (tracefs has one inode whatever
 * namespace sees it, and the kernel drops a dead holder's lock); a user
 * that can turn its lock exclusive is the only one. The original value is
 * kept in TSYNC_GLOBAL_DIR/<file> (tmpfs: it goes at boot with the
 * setting), written by the first user, read and removed by the last. Each
 * step holds an exclusive flock on the file TSYNC_GLOBAL_DIR/lock.
 *
 * Covered: recordings ending in any order, in one agent or in several
 * processes; a killed user that was not the last (its lock goes with it);
 * a killed last user: the original stays in TSYNC_GLOBAL_DIR, the next
 * tsync_global_cleanup() (every program's stale cleanup) writes it back
 * when nobody holds the setting, and a user taking it meanwhile keeps that
 * original rather than the changed value. Not covered: users that do not
 * take part (trace-cmd, a human) changing the setting meanwhile; programs
 * in containers with a /run of their own sharing tracefs (each keeps its
 * own original: the last of a container restores the value it first
 * saw); a machine where TSYNC_GLOBAL_DIR cannot be made (then each user
 * writes back what it saw, in the order they end).
 */
#ifndef TSYNC_GLOBAL_H
#define TSYNC_GLOBAL_H

#define TSYNC_GLOBAL_DIR "/run/tsync"

struct tsync_global;

/*
 * Takes part in top-level tracefs @file before changing it: saves its
 * value as the original when nobody else does. Returns 0 and *@out, or
 * -errno (-ENOENT: no such file).
 */
int tsync_global_take(const char *file, struct tsync_global **out);

/*
 * Ends @g's part (NULL is fine): the last user writes the original back
 * (logged on failure). Returns 0 or -errno of the write back.
 */
int tsync_global_release(struct tsync_global *g);

/*
 * Writes back the originals of settings whose last user was killed (no
 * holder, an original kept). Returns the number written back, or -errno.
 */
int tsync_global_cleanup(void);

#endif
