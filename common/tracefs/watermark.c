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

/* Writes one marker on every CPU of @fds the thread may run on, noting
 * them in @marked, then restores its affinity from @saved. Returns 0 or
 * -errno. */
static int mark_each_cpu(int marker, const int *fds, int n, const cpu_set_t *saved,
			 cpu_set_t *marked)
{
	int ret = 0;

	CPU_ZERO(marked);
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
		CPU_SET(cpu, marked);
	}
	if (sched_setaffinity(0, sizeof(*saved), saved) && !ret)
		ret = -errno;
	return ret;
}

/*
 * Reads @fd empty, at most @max pages. Each read asks for exactly one
 * page: that keeps the descriptor's position on a page boundary, which
 * the streamer's splice() of the same descriptor requires.
 */
static void drain(int fd, void *page, size_t len, long max)
{
	for (long i = 0; i < max && read(fd, page, len) > 0; i++)
		;
}

int tsync_watermark_arm(struct tracefs_instance *inst, const int *fds, int n)
{
	long long percent = 0, kb = 0;
	int marker = -1, page, on, ret, armed = 0;
	cpu_set_t saved, marked;
	long max_pages;
	char *buf;

	if (!inst || !fds || n <= 0)
		return -EINVAL;
	on = tracefs_trace_is_on(inst);
	if (on)
		return on > 0 ? -EBUSY : -EIO;
	if (tracefs_instance_file_read_number(inst, "buffer_percent", &percent) || percent <= 0)
		return 0;
	page = tsync_ringbuf_page_size(inst);
	if (page < 0)
		return page;
	/* the drain's bound: the buffer's pages and some (a tracing_off
	 * that failed would let events flow on) */
	if (tracefs_instance_file_read_number(inst, "buffer_size_kb", &kb) || kb <= 0)
		kb = 1 << 20;
	max_pages = (long)(kb * 1024 / page) + 4;
	buf = malloc((size_t)page);
	if (!buf)
		return -ENOMEM;
	if (sched_getaffinity(0, sizeof(saved), &saved)) {
		ret = -errno;
		goto out;
	}
	errno = 0;
	marker = tracefs_instance_file_open(inst, "trace_marker", O_WRONLY | O_CLOEXEC);
	if (marker < 0) {
		ret = errno ? -errno : -ENOENT;
		goto out;
	}
	if (tracefs_trace_on(inst)) {
		ret = -EIO;
		goto out;
	}
	ret = mark_each_cpu(marker, fds, n, &saved, &marked);
	/* off before the poll: turning it off wakes the waiters and clears
	 * the value of a buffer someone waits on. The kernel does that from
	 * an irq_work, which runs before the write returns where it is a
	 * hard interrupt (not on PREEMPT_RT: there a late one can undo the
	 * arming, and the reader gets the kernel's one early wake-up) */
	if (tracefs_trace_off(inst) && !ret)
		ret = -EIO;
	for (int cpu = 0; !ret && cpu < n && cpu < CPU_SETSIZE; cpu++) {
		struct pollfd p = { .fd = fds[cpu], .events = POLLIN };

		/* not ready with a buffer that holds our marker: recorded */
		if (CPU_ISSET(cpu, &marked) && poll(&p, 1, 0) == 0)
			armed++;
	}
	for (int cpu = 0; cpu < n; cpu++)
		if (fds[cpu] >= 0)
			drain(fds[cpu], buf, (size_t)page, max_pages);
out:
	if (marker >= 0)
		close(marker);
	free(buf);
	return ret ? ret : armed;
}
