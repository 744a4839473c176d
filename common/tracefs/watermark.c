// SPDX-License-Identifier: GPL-2.0-or-later
/* Arming buffer_percent's wake-up; see watermark.h for why and how. */
#include "common/tracefs/watermark.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/base/cpu.h"
#include "common/tracefs/ringbuf.h"

/* What each CPU's buffer holds for a moment; read and dropped. */
static const char ARM_MARK[] = "tsync: arming buffer_percent\n";

/* Writes one marker on every CPU of @fds the thread may run on, noting
 * them in @marked (@n entries), then gives the thread its affinity
 * back. Returns 0 or -errno. */
static int mark_each_cpu(int marker, const int *fds, int n, bool *marked)
{
	struct tsync_cpu_mask old = { 0 };
	int ret = 0, back;

	for (int cpu = 0; cpu < n; cpu++) {
		if (fds[cpu] < 0)
			continue;
		/* the first pin saves the affinity; one that fails (offline,
		 * not allowed) leaves that CPU unarmed */
		if (tsync_cpu_pin(cpu, old.set ? NULL : &old))
			continue;
		if (write(marker, ARM_MARK, sizeof(ARM_MARK) - 1) < 0) {
			ret = -errno;
			break;
		}
		marked[cpu] = true;
	}
	back = tsync_cpu_unpin(&old);
	return ret ? ret : back;
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
	bool *marked = NULL;
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
	marked = calloc((size_t)n, sizeof(*marked));
	if (!buf || !marked) {
		ret = -ENOMEM;
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
	ret = mark_each_cpu(marker, fds, n, marked);
	/* off before the poll: turning it off wakes the waiters and clears
	 * the value of a buffer someone waits on. The kernel does that from
	 * an irq_work, which runs before the write returns where it is a
	 * hard interrupt (not on PREEMPT_RT: there a late one can undo the
	 * arming, and the reader gets the kernel's one early wake-up) */
	if (tracefs_trace_off(inst) && !ret)
		ret = -EIO;
	for (int cpu = 0; !ret && cpu < n; cpu++) {
		struct pollfd p = { .fd = fds[cpu], .events = POLLIN };

		/* not ready with a buffer that holds our marker: recorded */
		if (marked[cpu] && poll(&p, 1, 0) == 0)
			armed++;
	}
	for (int cpu = 0; cpu < n; cpu++)
		if (fds[cpu] >= 0)
			drain(fds[cpu], buf, (size_t)page, max_pages);
out:
	if (marker >= 0)
		close(marker);
	free(marked);
	free(buf);
	return ret ? ret : armed;
}
