/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cancelling the host's connections from another thread (a signal
 * watcher): connections are registered while open; firing shuts every
 * one of them down, so that whatever waits on them (a reply, a stream)
 * fails at once instead of running into its timeout, and refuses new
 * ones. Thread-safe.
 */
#ifndef TSYNC_HOST_CANCEL_H
#define TSYNC_HOST_CANCEL_H

#include <stdbool.h>

struct host_cancel;

/* Returns a new, unfired canceller or NULL (ENOMEM). */
struct host_cancel *host_cancel_new(void);
/* Frees @hc (NULL is fine); nothing may use it any more. */
void host_cancel_free(struct host_cancel *hc);
/* Registers @fd; returns 0, or -ECANCELED (fired already: @fd is shut
 * down) or -ENOMEM. @hc may be NULL (nothing to do). */
int host_cancel_add(struct host_cancel *hc, int fd);
/* Unregisters @fd; call before closing it. */
void host_cancel_remove(struct host_cancel *hc, int fd);
/* Shuts down every registered connection, for good. */
void host_cancel_fire(struct host_cancel *hc);
/* Returns whether host_cancel_fire() was called. */
bool host_cancel_fired(struct host_cancel *hc);

#endif
