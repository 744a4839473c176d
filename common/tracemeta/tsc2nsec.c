// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TSC to nanoseconds from a perf event's mmap page (see tsc2nsec.h).
 */
#include "common/tracemeta/tsc2nsec.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int tsync_tsc2nsec_read(struct tracedat_tsc2nsec *out)
{
	struct perf_event_attr pe;
	struct perf_event_mmap_page *pg;
	long psz = sysconf(_SC_PAGESIZE);
	int fd, ret = 0;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_CPU_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	fd = (int)syscall(__NR_perf_event_open, &pe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	pg = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!pg->cap_user_time || !pg->time_mult)
		ret = -EOPNOTSUPP;
	else
		*out = (struct tracedat_tsc2nsec){ pg->time_mult, pg->time_shift, 0 };
	munmap(pg, (size_t)psz);
	close(fd);
	return ret;
}
