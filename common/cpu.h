/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CPU lists and pinning of the calling thread. */
#ifndef TSYNC_CPU_H
#define TSYNC_CPU_H

#include <stdbool.h>
#include <sched.h>
#include <stddef.h>

/* Returns the number of configured CPUs (at least 1). */
int tsync_cpu_count(void);

/*
 * Parses a CPU list such as "0-3,6" into @set, accepting CPUs below @ncpus.
 * Returns the number of CPUs in the set or -EINVAL with a reason in @err.
 */
int tsync_cpu_list_parse(const char *str, int ncpus, cpu_set_t *set,
			 char *err, size_t errlen);

/*
 * Pins the calling thread to @cpu and checks with sched_getcpu() that it
 * now runs there. Saves the previous mask in @old (if not NULL) for
 * tsync_cpu_unpin(). Returns 0 or -errno (-EINVAL if @cpu is offline or
 * not allowed, -EIO if the thread is not running on it afterwards).
 */
int tsync_cpu_pin(int cpu, cpu_set_t *old);
/* Restores the affinity saved by tsync_cpu_pin(); returns 0 or -errno. */
int tsync_cpu_unpin(const cpu_set_t *old);

#endif
