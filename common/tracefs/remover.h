/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The removal of a stopped tracefs instance by a process of its own, so
 * that its owner does not wait for the kernel: an instance's rmdir waits
 * for RCU grace periods (50-110 ms measured on 6.18, whatever its size;
 * more with set_event_notrace_pid set), which would otherwise be the
 * last thing a `record` waits for before it exits.
 *
 * The remover is a grandchild: the caller's child forks it and exits at
 * once (reaped here), so it is nobody's child and leaves no zombie. It
 * starts a session of its own (a terminal's Ctrl-C, or a signal to the
 * caller's process group, does not cut it short), has /dev/null for fds
 * 0-2 (a pipe the caller wrote into is not held open after the caller
 * exits) and closes every other fd but the owner lock. Holding that lock
 * (an flock on the instance's directory, which does not block the rmdir)
 * it switches the instance off (tracing_on, events/enable) and removes
 * the instance, so no cleaner takes it for stale meanwhile. The remover's copies of the caller's
 * files of the instance (trace_pipe_raw, trace_marker_raw) are closed
 * only once the caller has closed its own (EOF on a pipe, or the
 * caller's exit): the last close of such a file waits for the kernel's
 * tracing lock, which every instance's removal holds for its tens of
 * ms, and it is the remover's then, not the caller's. EBUSY (a file of the instance its former
 * owner still holds until it exits, a cleaner's brief probe) is retried
 * until TSYNC_REMOVER_DEADLINE_MS. A remover that is killed before its
 * rmdir leaves the instance with a free lock: the next cleanup
 * (tsync_instance_cleanup_stale()) removes it as stale.
 *
 * After fork() in a threaded process only async-signal-safe calls are
 * allowed: the child uses open, write, close, close_range, setsid,
 * sigprocmask, poll, rmdir, nanosleep, clock_gettime and _exit, on paths
 * made before the fork.
 */
#ifndef TSYNC_REMOVER_H
#define TSYNC_REMOVER_H

/* How long a remover retries an instance that is still busy. */
#define TSYNC_REMOVER_DEADLINE_MS 5000

/*
 * Starts a remover for the instance directory @dir, whose owner lock is
 * @lock_fd (an flock'd fd; the remover's copy keeps the lock held until it
 * removes the instance). The caller still has its own @lock_fd to close.
 * With @go_fd, *@go_fd gets a pipe's write end: the caller closes it once
 * it has closed its files of the instance (at most
 * TSYNC_REMOVER_DEADLINE_MS later); NULL: the remover goes on at once.
 * Returns the remover's pid, or -errno when none could be started (the
 * caller then removes the instance itself).
 */
int tsync_remover_spawn(const char *dir, int lock_fd, int *go_fd);

#endif
