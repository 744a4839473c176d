// SPDX-License-Identifier: GPL-2.0-or-later
/* CPU lists and pinning of the calling thread. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cpu.h"

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

/* Parses "0-3,6" into @set; see cpu.h. */
int tsync_cpu_list_parse(const char *str, int ncpus, cpu_set_t *set,
			 char *err, size_t errlen)
{
	const char *p = str;
	int count = 0;

	CPU_ZERO(set);
	if (!*p) {
		snprintf(err, errlen, "empty CPU list");
		return -EINVAL;
	}
	while (*p) {
		long lo = parse_num(&p), hi;

		if (lo < 0) {
			snprintf(err, errlen, "bad CPU list '%s': expected a number at '%s'", str, p);
			return -EINVAL;
		}
		hi = lo;
		if (*p == '-') {
			p++;
			hi = parse_num(&p);
			if (hi < lo) {
				snprintf(err, errlen, "bad CPU range in '%s'", str);
				return -EINVAL;
			}
		}
		if (hi >= ncpus || hi >= CPU_SETSIZE) {
			snprintf(err, errlen, "CPU %ld in '%s' does not exist (%d CPUs)", hi, str, ncpus);
			return -EINVAL;
		}
		for (long c = lo; c <= hi; c++) {
			if (!CPU_ISSET(c, set))
				count++;
			CPU_SET(c, set);
		}
		if (*p == ',')
			p++;
		else if (*p) {
			snprintf(err, errlen, "bad CPU list '%s': junk at '%s'", str, p);
			return -EINVAL;
		}
	}
	return count;
}

/* Pins the calling thread to @cpu and verifies it; see cpu.h. */
int tsync_cpu_pin(int cpu, cpu_set_t *old)
{
	cpu_set_t set;
	int ret;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	if (old) {
		ret = pthread_getaffinity_np(pthread_self(), sizeof(*old), old);
		if (ret)
			return -ret;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret)
		return -ret;
	/* The migration happens before setaffinity returns for the caller,
	 * but check: a round measured on the wrong CPU is worse than none. */
	if (sched_getcpu() != cpu) {
		sched_yield();
		if (sched_getcpu() != cpu)
			return -EIO;
	}
	return 0;
}

/* Restores a saved affinity mask. */
int tsync_cpu_unpin(const cpu_set_t *old)
{
	int ret = pthread_setaffinity_np(pthread_self(), sizeof(*old), old);

	return -ret;
}
