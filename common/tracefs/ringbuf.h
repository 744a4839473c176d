/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page size of a tracefs instance's ring buffer: the one place tsync
 * learns it. A page (a "sub-buffer") is what one read of
 * per_cpu/cpuN/trace_pipe_raw returns and what a trace.dat's page size
 * field and CPU data alignment are in; streamers read in it, stamps read
 * back their markers in it, the metadata collector writes it into the
 * file.
 *
 * Why here and why header_page: the page size is a property of the
 * instance, like its clock and buffer size, so it sits with the tracefs
 * layer every user of pages stands on (the collector, the streamers and
 * the stamps all sit above it). It is read from the instance's
 * events/header_page, whose data field ends where the page ends (offset
 * plus size): that is the text a trace.dat carries and by which readers
 * split its pages, so the size written and the header written cannot
 * disagree; and it is right on every kernel, showing the system page size
 * before the sub-buffer size could change (6.8) and each instance's own
 * sub-buffer size since. The alternatives each hold only part of the
 * time: buffer_subbuf_size_kb exists only since 6.8, and getpagesize() is
 * only what a fresh instance starts with (the top instance keeps whatever
 * it was set to).
 */
#ifndef TSYNC_RINGBUF_H
#define TSYNC_RINGBUF_H

#include <stddef.h>

struct tracefs_instance;

/*
 * Returns the ring-buffer page size of @inst (NULL = the top instance) in
 * bytes, from its events/header_page, or -errno (-EINVAL: a header_page
 * that gives no usable size).
 */
int tsync_ringbuf_page_size(struct tracefs_instance *inst);

/*
 * Returns the page size a header_page text of @len bytes describes (the
 * data field's offset plus size, a power of two), or -EINVAL (-ENOMEM).
 * Pure: for a header_page read elsewhere or received from a peer.
 */
int tsync_ringbuf_page_size_of(const char *header_page, size_t len);

/*
 * Opens per_cpu/cpu@cpu/trace_pipe_raw of @inst (NULL = the top
 * instance) read-only, non-blocking and close-on-exec: how every reader
 * of a CPU's pages opens it. Returns the descriptor or -errno.
 */
int tsync_ringbuf_open_cpu(struct tracefs_instance *inst, int cpu);

#endif
