/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU lists, pinning of the calling thread and its real-time class
 * during a sync round. CPU sets are sized at run
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

/* The SCHED_FIFO priority of a round's probe loop, host and guest: the
 * lowest, above every ordinary task and below interrupt threads. */
#define TSYNC_ROUND_RT_PRIO 1

/* A thread's scheduling class saved by tsync_cpu_rt_enter(). */
struct tsync_cpu_sched {
	int policy;		/* -1: nothing to restore */
	int priority;
};

/*
 * Moves the calling thread to SCHED_FIFO priority @prio (1..99) unless it
 * already runs at a real-time priority of at least @prio; saves the old
 * class in @old for tsync_cpu_rt_leave(). A sync round runs its probe
 * loop like this: a real-time thread that wakes up preempts ordinary
 * tasks at once, so every probe takes the same path through the scheduler
 * instead of one that depends on how long a busy task has run
 * (Documentation/design.md, The sync round). Returns 0, or -errno
 * (-EPERM without CAP_SYS_NICE or RLIMIT_RTPRIO; -EINVAL for a bad
 * @prio) with nothing changed.
 */
int tsync_cpu_rt_enter(int prio, struct tsync_cpu_sched *old);
/* Restores the class saved by tsync_cpu_rt_enter() (nothing if it did not
 * change it); returns 0 or -errno. */
int tsync_cpu_rt_leave(struct tsync_cpu_sched *old);

#endif
