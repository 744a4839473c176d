// SPDX-License-Identifier: GPL-2.0-or-later
/* Arming buffer_percent's wake-up; see watermark.h for why and how. */
#include "common/tracefs/watermark.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/tracefs/ringbuf.h"

/* What each CPU's buffer holds for a moment; read and dropped. */
static const char ARM_MARK[] = "tsync: arming buffer_percent\n";

/* Writes one marker on every CPU of @fds the thread may run on, then
 * restores its affinity from @saved. Returns 0 or -errno. */
static int mark_each_cpu(int marker, const int *fds, int n, const cpu_set_t *saved)
{
	int ret = 0;

	for (int cpu = 0; cpu < n && cpu < CPU_SETSIZE; cpu++) {
		cpu_set_t one;

		if (fds[cpu] < 0 || !CPU_ISSET(cpu, saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		/* returns once the thread runs on @cpu */
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;	/* offline since: that CPU is not armed */
		if (write(marker, ARM_MARK, sizeof(ARM_MARK) - 1) < 0) {
			ret = -errno;
			break;
		}
	}
	if (sched_setaffinity(0, sizeof(*saved), saved) && !ret)
		ret = -errno;
	return ret;
}

int tsync_watermark_arm(struct tracefs_instance *inst, const int *fds, int n)
{
	long long percent = 0;
	int marker = -1, page, ret, armed = 0;
	cpu_set_t saved;
	char *buf;

	if (!inst || !fds || n <= 0)
		return -EINVAL;
	if (tracefs_trace_is_on(inst) != 0)
		return -EBUSY;
	if (tracefs_instance_file_read_number(inst, "buffer_percent", &percent) || percent <= 0)
		return 0;
	page = tsync_ringbuf_page_size(inst);
	if (page < 0)
		return page;
	buf = malloc((size_t)page);
	if (!buf)
		return -ENOMEM;
	if (sched_getaffinity(0, sizeof(saved), &saved)) {
		ret = -errno;
		goto out;
	}
	marker = tracefs_instance_file_open(inst, "trace_marker", O_WRONLY | O_CLOEXEC);
	if (marker < 0) {
		ret = errno ? -errno : -ENOENT;
		goto out;
	}
	if (tracefs_trace_on(inst)) {
		ret = -EIO;
		goto out;
	}
	ret = mark_each_cpu(marker, fds, n, &saved);
	/* off before the poll: turning it off wakes the waiters and clears
	 * the value of a buffer someone waits on */
	if (tracefs_trace_off(inst) && !ret)
		ret = -EIO;
	if (ret)
		goto drain;
	for (int cpu = 0; cpu < n; cpu++) {
		struct pollfd p = { .fd = fds[cpu], .events = POLLIN };

		/* not ready with a buffer that holds something: recorded */
		if (fds[cpu] >= 0 && poll(&p, 1, 0) == 0)
			armed++;
	}
drain:
	for (int cpu = 0; cpu < n; cpu++)
		while (fds[cpu] >= 0 && read(fds[cpu], buf, (size_t)page) > 0)
			;
out:
	if (marker >= 0)
		close(marker);
	free(buf);
	return ret ? ret : armed;
}
