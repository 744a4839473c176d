// SPDX-License-Identifier: GPL-2.0-or-later
/* CPU lists, pinning and the real-time class of the calling thread. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/base/cpu.h"

/* Returns the number of configured CPUs. */
int tsync_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

/* Parses one decimal CPU number at *@p, advancing it; -1 on error. */
static long parse_num(const char **p)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno || v > 100000)
		return -1;
	*p = end;
	return v;
}

/* Returns how many CPUs a set must hold for CPU @cpu and for the
 * kernel's masks (its nr_cpu_ids may exceed the configured count). */
static int set_cpus(int cpu)
{
	int conf = tsync_cpu_count();

	return (cpu >= conf ? cpu + 1 : conf) + 64;
}

/* Parses one "A" or "A-B" item of @str at *@p into @lo/@hi. */
static int parse_item(const char *str, const char **p, uint32_t ncpus, long *lo, long *hi,
		      char *err, size_t errlen)
{
	*lo = parse_num(p);
	if (*lo < 0) {
		snprintf(err, errlen, "bad CPU list '%s': expected a number at '%s'", str, *p);
		return -EINVAL;
	}
	*hi = *lo;
	if (**p == '-') {
		(*p)++;
		*hi = parse_num(p);
		if (*hi < *lo) {
			snprintf(err, errlen, "bad CPU range in '%s'", str);
			return -EINVAL;
		}
	}
	if (*hi >= (long)ncpus) {
		snprintf(err, errlen, "CPU %ld in '%s' does not exist (%u CPUs)", *hi, str, ncpus);
		return -EINVAL;
	}
	if (**p == ',') {
		(*p)++;
	} else if (**p) {
		snprintf(err, errlen, "bad CPU list '%s': junk at '%s'", str, *p);
		return -EINVAL;
	}
	return 0;
}

/* Parses "0-3,6" into a sorted list; see cpu.h. */
int tsync_cpu_list_parse(const char *str, uint32_t ncpus, uint32_t **cpus,
			 char *err, size_t errlen)
{
	size_t size = CPU_ALLOC_SIZE(ncpus ? ncpus : 1);
	cpu_set_t *set = CPU_ALLOC(ncpus ? ncpus : 1);
	const char *p = str;
	uint32_t count = 0, *list;
	int ret = 0;

	*cpus = NULL;
	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	if (!*p) {
		snprintf(err, errlen, "empty CPU list");
		ret = -EINVAL;
	}
	while (!ret && *p) {
		long lo, hi;

		ret = parse_item(str, &p, ncpus, &lo, &hi, err, errlen);
		for (long c = lo; !ret && c <= hi; c++)
			CPU_SET_S((size_t)c, size, set);
	}
	list = ret ? NULL : calloc((size_t)CPU_COUNT_S(size, set), sizeof(*list));
	if (!ret && !list)
		ret = -ENOMEM;
	for (uint32_t c = 0; !ret && c < ncpus; c++)
		if (CPU_ISSET_S(c, size, set))
			list[count++] = c;
	CPU_FREE(set);
	if (ret)
		return ret;
	*cpus = list;
	return (int)count;
}

/* Pins the calling thread to @cpu and verifies it; see cpu.h. */
int tsync_cpu_pin(int cpu, struct tsync_cpu_mask *old)
{
	int n = set_cpus(cpu);
	size_t size = CPU_ALLOC_SIZE(n);
	cpu_set_t *set;
	int ret;

	if (cpu < 0 || cpu > 100000)
		return -EINVAL;
	if (old) {
		old->size = size;
		old->set = CPU_ALLOC(n);
		if (!old->set)
			return -ENOMEM;
		ret = -pthread_getaffinity_np(pthread_self(), size, old->set);
		if (ret)
			goto fail;
	}
	set = CPU_ALLOC(n);
	if (!set) {
		ret = -ENOMEM;
		goto fail;
	}
	CPU_ZERO_S(size, set);
	CPU_SET_S((size_t)cpu, size, set);
	ret = -pthread_setaffinity_np(pthread_self(), size, set);
	CPU_FREE(set);
	if (ret)
		goto fail;
	/* The migration happens before setaffinity returns for the caller,
	 * but check: a round measured on the wrong CPU is worse than none. */
	if (sched_getcpu() != cpu) {
		sched_yield();
		if (sched_getcpu() != cpu) {
			tsync_cpu_unpin(old);
			return -EIO;
		}
	}
	return 0;
fail:
	if (old) {
		CPU_FREE(old->set);
		old->set = NULL;
	}
	return ret;
}

/* Restores a saved affinity mask and frees it. */
int tsync_cpu_unpin(struct tsync_cpu_mask *old)
{
	int ret;

	if (!old || !old->set)
		return 0;
	ret = pthread_setaffinity_np(pthread_self(), old->size, old->set);
	CPU_FREE(old->set);
	old->set = NULL;
	return -ret;
}

/* Raises the calling thread to SCHED_FIFO @prio; see cpu.h. */
int tsync_cpu_rt_enter(int prio, struct tsync_cpu_sched *old)
{
	struct sched_param sp = { 0 };
	int policy, ret;

	old->policy = -1;
	/* Linux's SCHED_FIFO range: asking for it costs two system calls a round */
	if (prio < 1 || prio > 99)
		return -EINVAL;
	ret = pthread_getschedparam(pthread_self(), &policy, &sp);
	if (ret)
		return -ret;
	if ((policy == SCHED_FIFO || policy == SCHED_RR) && sp.sched_priority >= prio)
		return 0;
	old->policy = policy;
	old->priority = sp.sched_priority;
	sp.sched_priority = prio;
	ret = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (ret)
		old->policy = -1;
	return -ret;
}

/* Restores the class saved by tsync_cpu_rt_enter(); see cpu.h. */
int tsync_cpu_rt_leave(struct tsync_cpu_sched *old)
{
	struct sched_param sp = { .sched_priority = old->priority };
	int ret;

	if (old->policy < 0)
		return 0;
	ret = pthread_setschedparam(pthread_self(), old->policy, &sp);
	old->policy = -1;
	return -ret;
}
