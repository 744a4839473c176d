/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bulk data path: a forwarder moving bytes from a source fd (a socket,
 * a pipe, or a tracefs per_cpu/cpuN/trace_pipe_raw file) through a pipe to
 * a sink fd (a socket or a file) with splice(2), never through user space.
 *
 * Two rules make it correct for every transfer size (Documentation/
 * design.md, The splice flush):
 *
 *  - The corrected flush. The forwarder passes SPLICE_F_MORE to the write
 *    into a TCP sink while more data is expected (the last read nearly
 *    filled the pipe). If none follows, TCP holds the tail for ~200 ms. So
 *    it remembers whether the last write that moved data used MORE, and
 *    when the pipe is drained and the source has nothing more for now, it
 *    sets TCP_NODELAY on the sink again, which pushes the held data out.
 *  - "Source drained" is believed only when the source reports EAGAIN with
 *    the pipe empty: a splice into a full pipe gives EAGAIN too, and a
 *    forwarder that takes that for "no data" can wait forever.
 *
 * The forwarder sets O_NONBLOCK on the source and the sink. It never closes
 * them. Writes to a socket whose peer is gone raise SIGPIPE in the writing
 * thread: tsync_fwd_run() and tsync_fwd_drain() block and swallow it;
 * callers of tsync_fwd_pump() must ignore or block SIGPIPE themselves.
 *
 * Where splice is refused (EINVAL: a file system without splice support, a
 * file opened O_APPEND), the forwarder falls back for good to read/write
 * with one reused buffer, and says so in a debug line.
 */
#ifndef TSYNC_SPLICE_H
#define TSYNC_SPLICE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tsync_fwd;

struct tsync_fwd_opts {
	size_t pipe_size;	/* pipe size asked; 0: TSYNC_PIPE_DEFAULT_SIZE */
	size_t copy_size;	/* read/write fallback buffer; 0: 64 KiB */
	/* When > 0, the source's poll readiness is not trusted (tracefs
	 * trace_pipe_raw: readable by buffer_percent, spliceable by whole
	 * pages): tsync_fwd_run() re-tries it at least every src_retry_ms. */
	int src_retry_ms;
	/* tsync_fwd_run() returns TSYNC_FWD_IDLE once it moved data and the
	 * source has nothing more for now, so that the caller can look at the
	 * counters without waking on a timer; it is called again to go on. */
	bool return_when_idle;
	const char *name;	/* for log lines; may be NULL */
	/* Tests only: never flush (reproduces the ~200 ms stall). */
	bool test_no_flush;
	/* Tests and benchmarks only: use read/write from the start. */
	bool test_force_copy;
};

/* Non-negative results of the calls below; errors are -errno. */
enum tsync_fwd_status {
	TSYNC_FWD_EOF = 0,	/* source ended, everything written */
	TSYNC_FWD_IDLE,		/* source has nothing now, all written (and
				 * flushed); wait for the source */
	TSYNC_FWD_BLOCKED,	/* sink full; wait for it to be writable */
	TSYNC_FWD_BUSY,		/* work budget used up; call again */
	TSYNC_FWD_STOPPED,	/* tsync_fwd_run(): the stop fd fired */
};

struct tsync_fwd_stats {
	uint64_t bytes_in;	/* taken from the source */
	uint64_t bytes_out;	/* written to the sink */
	uint64_t splices;	/* data-moving splice calls (both sides) */
	uint64_t more_writes;	/* writes that used SPLICE_F_MORE */
	uint64_t flushes;	/* corrected flushes done */
	size_t pipe_size;	/* size of the pipe obtained */
	bool copy_mode;		/* fell back to read/write */
};

/*
 * Creates a forwarder from @src to @sink (both left open and owned by the
 * caller; both are switched to O_NONBLOCK). @opts may be NULL. Returns 0
 * and the forwarder in @out, or -errno.
 */
int tsync_fwd_new(int src, int sink, const struct tsync_fwd_opts *opts,
		  struct tsync_fwd **out);
/* Frees @f and its pipe (NULL is fine); does not close src and sink. */
void tsync_fwd_free(struct tsync_fwd *f);

/*
 * Moves what can be moved now without blocking. Returns a status (EOF,
 * IDLE, BLOCKED or BUSY) or -errno (-EPIPE/-ECONNRESET: sink gone).
 */
int tsync_fwd_pump(struct tsync_fwd *f);
/*
 * Fills @pfd with the fd and events to wait for after a pump that returned
 * @status (IDLE: the source readable; BLOCKED: the sink writable; others:
 * fd -1).
 */
void tsync_fwd_pollfd(const struct tsync_fwd *f, int status,
		      struct pollfd *pfd);

/*
 * Forwards until the source ends (TSYNC_FWD_EOF), @stop_fd becomes readable
 * (TSYNC_FWD_STOPPED; nothing is read from it), data moved and the source
 * is idle again (TSYNC_FWD_IDLE, with return_when_idle only), @deadline passes
 * (-ETIMEDOUT) or an error (-errno). @stop_fd < 0: none; @deadline < 0:
 * none (but one of the two is required: -EINVAL otherwise).
 * After STOPPED or -ETIMEDOUT, bytes already taken from the source may
 * still sit in the pipe: call tsync_fwd_drain() (or run again) to deliver
 * them; freeing the forwarder drops them.
 */
int tsync_fwd_run(struct tsync_fwd *f, int stop_fd, int64_t deadline);

/*
 * Drain then finish: moves what the source has now and what the pipe holds
 * to the sink, until the source reports EAGAIN with the pipe empty (or
 * ends), then flushes. Waits for the sink until @deadline. Returns
 * TSYNC_FWD_IDLE or TSYNC_FWD_EOF, or -ETIMEDOUT / -errno.
 */
int tsync_fwd_drain(struct tsync_fwd *f, int64_t deadline);

/* Copies the counters of @f into @st. */
void tsync_fwd_get_stats(const struct tsync_fwd *f, struct tsync_fwd_stats *st);

#endif
