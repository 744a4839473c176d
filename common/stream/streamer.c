// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-CPU trace streamer; see streamer.h.
 *
 * Theory of operation
 * -------------------
 * A per-CPU ring buffer is a list of sub-buffers ("pages", 4 KiB unless
 * buffer_subbuf_size_kb says otherwise; their size comes from
 * common/tracefs/ringbuf.h). The kernel writes events into the page under
 * its write head; a page is "full" once the writer has moved on to the
 * next one. per_cpu/cpuN/trace_pipe_raw offers the buffer two ways:
 *
 *  - splice() hands over *full pages only*, by reference, without a copy:
 *    the page leaves the ring buffer and travels through our pipe into the
 *    socket. The page under the write head is never spliced: splice says
 *    EAGAIN while it is the only page with data.
 *  - read() of one page size copies out whatever is there, *including the
 *    partial page under the write head* (zero-padded, with its commit
 *    length in the page header) and consumes those events, so a later
 *    splice or read never returns them twice.
 *
 * While running, the thread uses the forwarder of common/stream/splice.c
 * (trace_pipe_raw -> pipe -> socket), which moves every full page as soon
 * as it sees one. poll() on trace_pipe_raw only reports readable once the
 * buffer is buffer_percent full (50 by default) - or, with buffer_percent
 * 0, as soon as there is any data, even a partial page splice cannot
 * take - so readiness is a hint: the forwarder re-tries the splice at
 * least every poll_ms and stops trusting readiness that led to nothing.
 * With TSYNC_STREAMER_NO_POLL it does not re-try on a timer: the thread
 * sleeps until buffer_percent (or the stop), as trace-cmd's recorders do
 * in their blocking splice, and costs no wake-ups while a CPU is quiet;
 * the pages under buffer_percent wait for the final flush. That holds
 * from the first page on only where the caller armed the wake-up before
 * the thread first sleeps (tsync_streamer_start_fd() with a descriptor
 * tsync_watermark_arm() armed; common/tracefs/watermark.h): else the
 * kernel wakes the thread once, a page into the recording.
 *
 * On stop there are two flushes, in this order:
 *
 *  1. The ring-buffer flush. tsync_fwd_drain() first splices every full
 *     page still in the ring buffer (until splice says EAGAIN with our
 *     pipe empty, so EAGAIN cannot mean "our pipe is full"). Then read()
 *     of one page at a time, until EAGAIN, takes the partial page(s) under
 *     the write head. Each read returns a whole page image, so the receiver
 *     still sees a sequence of whole pages. libtracefs' tracefs_cpu_flush()
 *     reads the same way but only one page, and tracefs_cpu_flush_write()
 *     does one write() that a non-blocking socket may cut short; here the
 *     loop reads until empty and writes with a deadline until all is sent.
 *  2. The TCP flush. While pages stream, the forwarder passes
 *     SPLICE_F_MORE when the pipe was nearly full; if the last spliced
 *     write used MORE and nothing followed, TCP would hold that tail for
 *     ~200 ms. The forwarder re-sets TCP_NODELAY when its pipe is drained
 *     and the source is dry (Documentation/design.md, The splice flush), and
 *     the partial page goes out with a plain send, which pushes at once.
 *
 * So the last event recorded before stop reaches the peer within the time
 * of one splice and one read/send after the stop request, not ~200 ms
 * later, and no event is lost or sent twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <tracefs.h>

#include "common/stream/streamer.h"
#include "common/base/io.h"
#include "common/base/log.h"
#include "common/base/maxkb.h"
#include "common/stream/splice.h"
#include "common/base/timeutil.h"
#include "common/tracefs/ringbuf.h"

#define STREAMER_POLL_MS	50
#define STREAMER_STOP_MS	5000

struct tsync_streamer {
	int trace_fd;		/* per_cpu/cpuN/trace_pipe_raw, O_NONBLOCK */
	int sock;
	int stop_fd;		/* eventfd: stop requested */
	size_t page_size;	/* ring-buffer sub-buffer size */
	int poll_ms;
	int stop_timeout_ms;
	struct tsync_fwd *fwd;
	pthread_t thr;
	bool joined;
	int result;
	uint64_t half;		/* -m: a half's bytes (common/base/maxkb.h), or 0 */
	uint64_t trimmed;	/* -m: the bytes given back so far */
	bool trim_failed;
	_Atomic uint64_t bytes;
	char name[48];
};

/* Publishes the forwarder's byte count plus @extra for other threads. */
static void publish(struct tsync_streamer *s, uint64_t extra)
{
	struct tsync_fwd_stats st;

	tsync_fwd_get_stats(s->fwd, &st);
	atomic_store(&s->bytes, st.bytes_out + extra);
}

/* -m: gives back to the file system what is older than the data kept. */
static void keep_newest(struct tsync_streamer *s)
{
	int ret;

	if (!s->half || s->trim_failed)
		return;
	ret = tsync_maxkb_trim(s->sock, atomic_load(&s->bytes), s->half, &s->trimmed);
	if (ret) {
		s->trim_failed = true;
		log_warn("%s: -m: cannot give the older data back (%s): the file keeps only "
			 "the newest, the disk holds it all", s->name, strerror(-ret));
	}
}

/*
 * The final flush (see the theory of operation): full pages by splice,
 * then the partial page(s) by read, all pushed out of the socket before
 * @deadline. Returns 0 or -errno.
 */
static int final_flush(struct tsync_streamer *s, int64_t deadline)
{
	uint64_t tail = 0;
	char *page;
	ssize_t n;
	int ret;

	ret = tsync_fwd_drain(s->fwd, deadline);
	if (ret < 0)
		return ret;
	ret = 0;
	page = malloc(s->page_size);
	if (!page)
		return -ENOMEM;
	for (;;) {
		n = read(s->trace_fd, page, s->page_size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		ret = tsync_write_full(s->sock, page, (size_t)n, deadline);
		if (ret)
			break;
		tail += (uint64_t)n;
	}
	free(page);
	publish(s, tail);
	log_debug("%s: final flush: %llu bytes of partial pages", s->name,
		  (unsigned long long)tail);
	return ret;
}

/* The streamer thread: forwards until stopped, then flushes. */
static void *streamer_main(void *arg)
{
	struct tsync_streamer *s = arg;
	sigset_t set;
	int ret;

	/* our own thread: a write to a vanished peer must be -EPIPE, not a
	 * process-killing SIGPIPE */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		ret = tsync_fwd_run(s->fwd, s->stop_fd, s->poll_ms < 0 ? -1 :
				    tsync_deadline_ms(s->poll_ms));
		publish(s, 0);
		keep_newest(s);
		if (ret != -ETIMEDOUT && ret != TSYNC_FWD_IDLE)
			break;
	}
	if (ret == TSYNC_FWD_STOPPED || ret == TSYNC_FWD_EOF)
		ret = final_flush(s, tsync_deadline_ms(s->stop_timeout_ms));
	keep_newest(s);
	if (ret)
		log_warn("%s: stream ended: %s", s->name, strerror(-ret));
	s->result = ret;
	return NULL;
}

/* Starts a streamer on an open trace_pipe_raw; see streamer.h. */
int tsync_streamer_start_fd(struct tracefs_instance *inst, int cpu, int trace_fd, int sock,
			    const struct tsync_streamer_opts *opts,
			    struct tsync_streamer **out)
{
	struct tsync_streamer_opts def = { 0 };
	struct tsync_fwd_opts fo = { 0 };
	struct tsync_streamer *s;
	int ret;

	if (cpu < 0 || trace_fd < 0 || sock < 0 || !out) {
		if (trace_fd >= 0)
			close(trace_fd);
		return -EINVAL;
	}
	if (!opts)
		opts = &def;
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(trace_fd);
		return -ENOMEM;
	}
	s->sock = sock;
	s->trace_fd = trace_fd;
	s->stop_fd = -1;
	s->joined = true;
	s->poll_ms = opts->poll_ms ? opts->poll_ms : STREAMER_POLL_MS;
	if (s->poll_ms < 0)
		s->poll_ms = TSYNC_STREAMER_NO_POLL;
	s->stop_timeout_ms = opts->stop_timeout_ms > 0 ? opts->stop_timeout_ms :
			     STREAMER_STOP_MS;
	snprintf(s->name, sizeof(s->name), "stream cpu%d", cpu);
	ret = tsync_ringbuf_page_size(inst);
	if (ret < 0) {
		log_err("%s: cannot learn the ring buffer's page size: %s", s->name,
			strerror(-ret));
		goto fail;
	}
	s->page_size = (size_t)ret;
	s->half = tsync_maxkb_half(opts->max_kb, s->page_size);

	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0) {
		ret = -errno;
		goto fail;
	}
	fo.pipe_size = opts->pipe_size;
	fo.src_retry_ms = s->poll_ms > 0 ? s->poll_ms : 0;
	fo.return_when_idle = true;
	fo.name = s->name;
	ret = tsync_fwd_new(s->trace_fd, sock, &fo, &s->fwd);
	if (ret)
		goto fail;
	ret = -pthread_create(&s->thr, NULL, streamer_main, s);
	if (ret)
		goto fail;
	s->joined = false;
	*out = s;
	return 0;
fail:
	tsync_streamer_free(s);
	return ret;
}

/* Opens the CPU's trace_pipe_raw and starts a streamer; see streamer.h. */
int tsync_streamer_start(struct tracefs_instance *inst, int cpu, int sock,
			 const struct tsync_streamer_opts *opts,
			 struct tsync_streamer **out)
{
	int fd;

	if (cpu < 0 || sock < 0 || !out)
		return -EINVAL;
	fd = tsync_ringbuf_open_cpu(inst, cpu);
	if (fd < 0) {
		log_err("stream cpu%d: cannot open per_cpu/cpu%d/trace_pipe_raw: %s", cpu, cpu,
			strerror(-fd));
		return fd;
	}
	return tsync_streamer_start_fd(inst, cpu, fd, sock, opts, out);
}

/* Stops the streamer and waits for it; see streamer.h. */
int tsync_streamer_stop(struct tsync_streamer *s)
{
	uint64_t one = 1;

	if (s->joined)
		return s->result;
	if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("%s: cannot signal stop: %s", s->name, strerror(errno));
	pthread_join(s->thr, NULL);
	s->joined = true;
	return s->result;
}

/* Returns the bytes sent so far; see streamer.h. */
uint64_t tsync_streamer_bytes(const struct tsync_streamer *s)
{
	return atomic_load(&((struct tsync_streamer *)s)->bytes);
}

/* Where the kept data starts; see streamer.h. */
uint64_t tsync_streamer_keep_from(const struct tsync_streamer *s)
{
	return tsync_maxkb_keep_from(tsync_streamer_bytes(s), s->half);
}

/* Stops and frees @s; see streamer.h. */
void tsync_streamer_free(struct tsync_streamer *s)
{
	if (!s)
		return;
	tsync_streamer_stop(s);
	tsync_fwd_free(s->fwd);
	if (s->trace_fd >= 0)
		close(s->trace_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	free(s);
}
