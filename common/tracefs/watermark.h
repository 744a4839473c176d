/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arming buffer_percent's wake-up before a recording starts, so that a
 * reader sleeping in poll() on per_cpu/cpuN/trace_pipe_raw is woken when
 * its CPU's buffer is buffer_percent full, not as soon as one page is.
 *
 * Why: the kernel keeps, per CPU buffer, the smallest buffer_percent its
 * pollers asked for (shortest_full) and wakes them when that much is
 * dirty. A poll() records its percentage only if the buffer holds
 * something at that moment; on an empty buffer it leaves the value at 0,
 * which means "any page", so the first page that fills after such a poll
 * wakes the reader for nothing (seen on 6.18: one wake-up per CPU a page
 * into every recording, where the watermark is 140 KB away). The value
 * stays once set, until the kernel wakes the full waiters or resets the
 * buffer. A recorder's readers start on an empty buffer, so each pays
 * that wake-up, trace-cmd's too (it waits in the kernel the same way).
 *
 * tsync_watermark_arm() sets it before the streamers start: with the
 * instance's tracing on for a moment, one marker is written on each CPU
 * (the calling thread moved there), tracing goes off again, one poll()
 * per CPU now sees a buffer with something in it and records the
 * percentage, and reads then empty each buffer. The recording itself
 * starts later on an empty buffer whose wake-up is armed. Kernels that
 * record the percentage on every poll() are not affected by any of this.
 * Turning tracing off wakes every waiter and clears the value where
 * someone was waiting, which is why it happens before the poll() and why
 * the descriptors polled here must be the ones the streamers keep (a
 * close wakes the waiters too).
 */
#ifndef TSYNC_WATERMARK_H
#define TSYNC_WATERMARK_H

struct tracefs_instance;

/*
 * Arms the buffer_percent wake-up of @inst's CPU buffers for the
 * trace_pipe_raw descriptors @fds (@fds[cpu] for CPU cpu, -1 to skip one;
 * @n entries; see tsync_ringbuf_open_cpu()), which must stay open for the
 * recording. @inst must not be tracing (-EBUSY): what its buffers hold is
 * read and dropped, and counts in each CPU's "read events" (per_cpu/cpuN/
 * stats) from then on: a caller that reports them subtracts what they
 * were after this. The calling thread's CPU affinity is restored. Does
 * nothing when buffer_percent is 0 or missing (poll wakes on any data
 * there). Returns the number of CPUs armed (a marker written there and
 * the percentage recorded), or -errno.
 */
int tsync_watermark_arm(struct tracefs_instance *inst, const int *fds, int n);

#endif
