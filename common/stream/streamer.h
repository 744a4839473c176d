/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-CPU trace streamer: one thread per traced CPU moving
 * whole ring-buffer pages from per_cpu/cpuN/trace_pipe_raw of a tracefs
 * instance to that CPU's data connection with splice, and on stop flushing
 * the last partial page so that nothing recorded is lost. The theory of
 * operation is at the top of streamer.c.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/stream/
 *   streamer.c, streamer.h  one thread per traced CPU moving its ring buffer out
 *   splice.c, splice.h      the splice forwarder with the corrected flush
 *   pipe.c, pipe.h          pipes for the splice path, sized with fallback
 */
#ifndef TSYNC_STREAMER_H
#define TSYNC_STREAMER_H

#include <stddef.h>
#include <stdint.h>

struct tracefs_instance;
struct tsync_streamer;

#define TSYNC_STREAMER_NO_POLL	(-1)
/* How often the recorders look for data besides the kernel's wake-up at
 * buffer_percent, when not told (tsync-host's -s, the agent's streams):
 * a quiet CPU costs one wake-up a second, and the live status line and
 * -m's trimming lag by at most that (a light load never fills 10%). */
#define TSYNC_STREAMER_LOOK_MS	1000

struct tsync_streamer_opts {
	size_t pipe_size;	/* 0: TSYNC_PIPE_DEFAULT_SIZE */
	/* How often filled pages are looked for when poll() says nothing
	 * (trace_pipe_raw wakes pollers only at buffer_percent). 0: 50;
	 * TSYNC_STREAMER_NO_POLL: never, the thread sleeps until the kernel
	 * wakes it at buffer_percent or it is stopped (no timer wake-ups). */
	int poll_ms;
	/* How long the final flush may wait for the socket. 0: 5000. */
	int stop_timeout_ms;
	/* trace-cmd's -m for a file sink: only the newest half to all of
	 * max_kb KiB is kept (common/base/maxkb.h), what is older is given back
	 * to the file system as the file grows. 0: everything is kept. */
	uint32_t max_kb;
};

/*
 * Opens per_cpu/cpu@cpu/trace_pipe_raw of @inst and starts a thread that
 * streams it to @sock: a connected socket (switched to O_NONBLOCK) or a
 * file. The caller keeps owning @sock and closes it after
 * tsync_streamer_free(). @opts may be NULL. Returns 0 and the streamer in
 * @out, or -errno.
 */
int tsync_streamer_start(struct tracefs_instance *inst, int cpu, int sock,
			 const struct tsync_streamer_opts *opts,
			 struct tsync_streamer **out);

/*
 * tsync_streamer_start() with @trace_fd, per_cpu/cpu@cpu/trace_pipe_raw
 * of @inst already open (tsync_ringbuf_open_cpu(); armed by
 * tsync_watermark_arm()), which the streamer takes over: it closes it
 * when freed, or here on failure.
 */
int tsync_streamer_start_fd(struct tracefs_instance *inst, int cpu, int trace_fd, int sock,
			    const struct tsync_streamer_opts *opts,
			    struct tsync_streamer **out);

/*
 * Stops the streamer: the thread moves the filled pages still in the ring
 * buffer, then the last partial page(s), pushes everything out of the
 * socket and ends; waits for it. Stop tracing first for a clean cut.
 * Returns 0, or the -errno that ended the stream (e.g. -EPIPE when the
 * peer went away, -ETIMEDOUT when the socket did not take the tail in
 * time). Calling it again returns the same result.
 */
int tsync_streamer_stop(struct tsync_streamer *s);

/* Returns the bytes sent to the socket so far (updated whenever data
 * moved while running; exact after tsync_streamer_stop()). */
uint64_t tsync_streamer_bytes(const struct tsync_streamer *s);

/* Where the data kept in the file sink starts (max_kb; 0 without it):
 * the file's data is from there to tsync_streamer_bytes(). */
uint64_t tsync_streamer_keep_from(const struct tsync_streamer *s);

/* Stops @s if needed and frees it (NULL is fine). */
void tsync_streamer_free(struct tsync_streamer *s);

#endif
