/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU lists and pinning of the calling thread. CPU sets are sized at run
 * time (CPU_ALLOC), so machines with more CPUs than glibc's fixed
 * cpu_set_t holds (CPU_SETSIZE, 1024) work too; the protocol allows 8192.
 */
#ifndef TSYNC_CPU_H
#define TSYNC_CPU_H

#include <stdbool.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* Returns the number of configured CPUs (at least 1). */
int tsync_cpu_count(void);

/*
 * Parses a CPU list such as "0-3,6" of CPUs below @ncpus into *@cpus:
 * each CPU once, in ascending order (free() it). Returns the number of
 * CPUs or -EINVAL (-ENOMEM) with a reason in @err.
 */
int tsync_cpu_list_parse(const char *str, uint32_t ncpus, uint32_t **cpus,
			 char *err, size_t errlen);

/* A thread's affinity saved by tsync_cpu_pin(). */
struct tsync_cpu_mask {
	cpu_set_t *set;
	size_t size;
};

/*
 * Pins the calling thread to @cpu and checks with sched_getcpu() that it
 * now runs there. Saves the previous mask in @old (if not NULL) for
 * tsync_cpu_unpin(). Returns 0 or -errno (-EINVAL if @cpu is offline or
 * not allowed, -EIO if the thread is not running on it afterwards).
 */
int tsync_cpu_pin(int cpu, struct tsync_cpu_mask *old);
/* Restores the affinity saved by tsync_cpu_pin() and frees it; returns 0
 * or -errno. */
int tsync_cpu_unpin(struct tsync_cpu_mask *old);

#endif
