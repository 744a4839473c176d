/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The signals of `tsync-host record`, handled in every phase by a thread
 * of their own (so that no wait of the main thread can make one wait):
 *
 *   setting up (connect, sync, start)  SIGINT or SIGTERM aborts
 *   recording                          the first SIGINT or SIGTERM stops
 *                                      (SIGINT with a COMMAND: once the
 *                                      command, sent SIGTERM, has exited);
 *                                      a second one aborts
 *   stopping (final sync, drain, meta) SIGINT or SIGTERM aborts
 *
 * Aborting fires the run's canceller (host/peer/cancel.h): every connection is
 * shut down, so the main thread's waits fail at once and it exits without
 * writing files. COMMAND's exit stops the recording too: a pidfd of it
 * wakes rec_signals_wait() itself (SIGCHLD to the watcher where the
 * kernel has no pidfd), so that its exit costs one wake-up of tsync-host.
 */
#ifndef TSYNC_HOST_REC_SIGNALS_H
#define TSYNC_HOST_REC_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct host_cancel;
struct rec_signals;

enum rec_phase {
	REC_SETUP,
	REC_RECORDING,
	REC_STOPPING,
};

/*
 * Blocks SIGINT, SIGTERM and SIGCHLD in the calling thread (call it before
 * starting other threads, which inherit the mask) and starts the watcher.
 * Returns 0 and the watcher in @out, or -errno.
 */
int rec_signals_start(struct host_cancel *hc, struct rec_signals **out);
/* The signals the watcher handles: what a child must unblock. */
const sigset_t *rec_signals_mask(const struct rec_signals *s);
/* Enters phase @p. */
void rec_signals_phase(struct rec_signals *s, enum rec_phase p);
/* Sets the COMMAND's pid (recording phase: its exit stops); call it from
 * the thread that forked @child (where the kernel has pidfds, that thread
 * stops blocking SIGCHLD, whose default action is to ignore it). */
void rec_signals_child(struct rec_signals *s, pid_t child);
/*
 * Waits until the recording should stop: a signal, COMMAND's exit, or
 * @deadline (CLOCK_MONOTONIC ns; < 0: none). Returns true if it was an
 * abort.
 */
bool rec_signals_wait(struct rec_signals *s, int64_t deadline);
/* Returns whether the run was aborted. */
bool rec_signals_aborted(struct rec_signals *s);
/* Returns COMMAND's wait status, once it has exited (else 0). */
int rec_signals_child_status(struct rec_signals *s);
/* Stops the watcher and frees it (NULL is fine). */
void rec_signals_free(struct rec_signals *s);

#endif
