/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One lock per host CPU, held by a sync round for the host CPU its thread
 * is pinned to (struct round_opts, cpu_locks): rounds of several guests
 * run in parallel only on different host CPUs, so that they do not spoil
 * each other's round trips. Used by `record` (a sync thread per guest) and
 * `sync` (a thread per agent).
 */
#ifndef TSYNC_HOST_CPU_LOCKS_H
#define TSYNC_HOST_CPU_LOCKS_H

#include <pthread.h>

/*
 * Makes a lock for each host CPU in @out. Returns how many (the host's CPU
 * count) or -ENOMEM.
 */
int host_cpu_locks_new(pthread_mutex_t **out);

/* Destroys and frees @n locks from host_cpu_locks_new() (NULL is fine). */
void host_cpu_locks_free(pthread_mutex_t *locks, int n);

#endif
