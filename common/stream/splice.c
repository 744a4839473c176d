// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice forwarder with the corrected flush; see splice.h for the
 * contract and Documentation/design.md, The splice flush, for the
 * measurements behind it.
 *
 * State machine of one tsync_fwd_pump() round:
 *
 *   fill:  splice(src -> pipe). >0: data; 0: end of stream; EAGAIN: the
 *          source has nothing *or the pipe is full* - only the first if
 *          the pipe was empty when the splice was tried ("dry").
 *   drain: splice(pipe -> sink), with SPLICE_F_MORE when the sink is TCP
 *          and the last fill left the pipe >= 90% full (more data very
 *          likely follows). EAGAIN: the sink is full.
 *   then:  pipe empty and source ended     -> EOF
 *          pipe empty and source dry       -> flush if corked, IDLE
 *          pipe empty otherwise            -> fill again
 *          pipe not empty and sink full    -> BLOCKED
 *
 * "corked" is set when a write that moved data used MORE and cleared by
 * any data-moving write without it. The flush is setsockopt(TCP_NODELAY,
 * 1): it pushes out what MORE held back (a zero-length send does not).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "common/base/log.h"
#include "common/stream/pipe.h"
#include "common/stream/splice.h"
#include "common/base/timeutil.h"

#define FWD_COPY_DEFAULT	(64 * 1024)
/* Bytes moved by one pump before it yields (so a stop fd is noticed). */
#define FWD_BUDGET		(16u << 20)
/* Re-try interval of a source whose readiness proved spurious. */
#define FWD_SPURIOUS_MS		10

struct tsync_fwd {
	int src;
	int sink;
	int pipe[2];
	size_t pipe_size;
	size_t in_pipe;		/* bytes in the pipe */
	bool src_eof;
	bool sink_tcp;
	bool more_hint;		/* the last fill left the pipe >= 90% full */
	bool corked;		/* the last data-moving write used MORE */
	bool no_flush;
	bool copy;		/* read/write fallback active */
	bool spurious;		/* source readiness proved false (run) */
	bool return_when_idle;
	int src_retry_ms;
	char *buf;		/* copy fallback buffer, reused */
	size_t buf_size;
	size_t buf_off;
	size_t buf_len;
	struct tsync_fwd_stats st;
	char name[64];
};

/* Adds O_NONBLOCK to @fd's status flags; returns 0 or -errno. */
static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return -errno;
	return 0;
}

/* Returns true if @fd is a TCP socket. */
static bool is_tcp(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) || v != SOCK_STREAM)
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len))
		return false;
	return v == IPPROTO_TCP;
}

/* Creates a forwarder; see splice.h. */
int tsync_fwd_new(int src, int sink, const struct tsync_fwd_opts *opts,
		  struct tsync_fwd **out)
{
	struct tsync_fwd_opts def = { 0 };
	struct tsync_fwd *f;
	long got;
	int ret;

	if (src < 0 || sink < 0 || !out)
		return -EINVAL;
	if (!opts)
		opts = &def;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->src = src;
	f->sink = sink;
	f->pipe[0] = f->pipe[1] = -1;
	f->no_flush = opts->test_no_flush;
	f->src_retry_ms = opts->src_retry_ms;
	f->return_when_idle = opts->return_when_idle;
	f->buf_size = opts->copy_size ? opts->copy_size : FWD_COPY_DEFAULT;
	snprintf(f->name, sizeof(f->name), "%s", opts->name ? opts->name : "splice");

	ret = set_nonblock(src);
	if (!ret)
		ret = set_nonblock(sink);
	if (ret)
		goto fail;
	f->sink_tcp = is_tcp(sink);
	got = tsync_pipe_open(f->pipe, opts->pipe_size, f->name);
	if (got < 0) {
		ret = (int)got;
		goto fail;
	}
	f->pipe_size = (size_t)got;
	f->st.pipe_size = f->pipe_size;
	if (opts->test_force_copy) {
		f->buf = malloc(f->buf_size);
		if (!f->buf) {
			ret = -ENOMEM;
			goto fail;
		}
		f->copy = true;
		f->st.copy_mode = true;
	}
	*out = f;
	return 0;
fail:
	tsync_fwd_free(f);
	return ret;
}

/* Frees @f; see splice.h. */
void tsync_fwd_free(struct tsync_fwd *f)
{
	if (!f)
		return;
	if (f->pipe[0] >= 0)
		close(f->pipe[0]);
	if (f->pipe[1] >= 0)
		close(f->pipe[1]);
	free(f->buf);
	free(f);
}

/* Copies the counters; see splice.h. */
void tsync_fwd_get_stats(const struct tsync_fwd *f, struct tsync_fwd_stats *st)
{
	*st = f->st;
}

/*
 * The corrected flush: if the last data-moving write used MORE, set
 * TCP_NODELAY on the sink again, which sends what MORE held back. Returns 0
 * or -errno.
 */
static int flush(struct tsync_fwd *f)
{
	int one = 1;

	if (!f->corked || f->no_flush)
		return 0;
	if (setsockopt(f->sink, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return -errno;
	f->corked = false;
	f->st.flushes++;
	return 0;
}

/* Switches @f to read/write for good; returns 0 or -ENOMEM. */
static int go_copy(struct tsync_fwd *f, const char *who)
{
	if (!f->buf) {
		f->buf = malloc(f->buf_size);
		if (!f->buf)
			return -ENOMEM;
	}
	f->copy = true;
	f->st.copy_mode = true;
	log_debug("%s: the %s refuses splice (EINVAL); falling back to "
		  "read/write with a %zu-byte buffer", f->name, who, f->buf_size);
	return 0;
}

/* One splice from the source into the pipe: bytes, 0 at EOF, or -errno. */
static ssize_t fill(struct tsync_fwd *f)
{
	ssize_t n;

	do {
		n = splice(f->src, NULL, f->pipe[1], NULL, f->pipe_size,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* One splice from the pipe into the sink: bytes or -errno. */
static ssize_t drain(struct tsync_fwd *f, bool more)
{
	unsigned int flags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
	ssize_t n;

	if (more)
		flags |= SPLICE_F_MORE;
	do {
		n = splice(f->pipe[0], NULL, f->sink, NULL, f->in_pipe, flags);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return -EIO;	/* a sink that takes nothing and says nothing */
	return n < 0 ? -errno : n;
}

/* The read/write fallback of tsync_fwd_pump(); same results. */
static int pump_copy(struct tsync_fwd *f)
{
	uint64_t moved = 0;
	bool dry, sink_full;
	size_t want;
	ssize_t n;
	int rfd, ret;

	for (;;) {
		dry = sink_full = false;
		if (!f->buf_len && (f->in_pipe || !f->src_eof)) {
			/* what the splice path left in the pipe goes first */
			rfd = f->in_pipe ? f->pipe[0] : f->src;
			want = f->buf_size;
			if (f->in_pipe && want > f->in_pipe)
				want = f->in_pipe;
			do {
				n = read(rfd, f->buf, want);
			} while (n < 0 && errno == EINTR);
			if (n > 0) {
				f->buf_off = 0;
				f->buf_len = (size_t)n;
				if (rfd == f->pipe[0])
					f->in_pipe -= (size_t)n;
				else
					f->st.bytes_in += (uint64_t)n;
			} else if (n == 0 && rfd == f->src) {
				f->src_eof = true;
			} else if (n < 0 && errno == EAGAIN && rfd == f->src) {
				dry = true;
			} else {
				return n < 0 ? -errno : -EIO;
			}
		}
		if (f->buf_len) {
			n = send(f->sink, f->buf + f->buf_off, f->buf_len,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && errno == ENOTSOCK)
				n = write(f->sink, f->buf + f->buf_off, f->buf_len);
			if (n > 0) {
				f->buf_off += (size_t)n;
				f->buf_len -= (size_t)n;
				f->st.bytes_out += (uint64_t)n;
				moved += (uint64_t)n;
				f->corked = false;
			} else if (n < 0 && errno == EAGAIN) {
				sink_full = true;
			} else if (n < 0 && errno != EINTR) {
				return -errno;
			}
		}
		if (!f->buf_len && !f->in_pipe && (f->src_eof || dry)) {
			ret = flush(f);
			if (ret)
				return ret;
			return f->src_eof ? TSYNC_FWD_EOF : TSYNC_FWD_IDLE;
		}
		if (sink_full)
			return TSYNC_FWD_BLOCKED;
		if (moved >= FWD_BUDGET)
			return TSYNC_FWD_BUSY;
	}
}

/* Moves what can be moved now; see splice.h. */
int tsync_fwd_pump(struct tsync_fwd *f)
{
	uint64_t moved = 0;
	bool dry, sink_full, more;
	size_t before;
	ssize_t n;
	int ret;

	while (!f->copy) {
		dry = sink_full = false;
		if (!f->src_eof && f->in_pipe < f->pipe_size) {
			before = f->in_pipe;
			n = fill(f);
			if (n > 0) {
				f->in_pipe += (size_t)n;
				f->st.bytes_in += (uint64_t)n;
				f->st.splices++;
				moved += (uint64_t)n;
				f->more_hint = f->in_pipe >= f->pipe_size * 9 / 10;
			} else if (n == 0) {
				f->src_eof = true;
			} else if (n == -EAGAIN || (n == -EINVAL && before)) {
				/* Trust "nothing to read" only from an empty
				 * pipe; otherwise the pipe may just be full
				 * (EINVAL: no room for a whole tracefs page). */
				dry = before == 0;
			} else if (n == -EINVAL) {
				ret = go_copy(f, "source");
				if (ret)
					return ret;
				break;
			} else {
				return (int)n;
			}
		}
		if (f->in_pipe) {
			more = f->sink_tcp && f->more_hint && !f->src_eof;
			n = drain(f, more);
			if (n > 0) {
				f->in_pipe -= (size_t)n;
				f->st.bytes_out += (uint64_t)n;
				f->st.splices++;
				moved += (uint64_t)n;
				f->corked = more;
				if (more)
					f->st.more_writes++;
			} else if (n == -EAGAIN) {
				sink_full = true;
			} else if (n == -EINVAL) {
				ret = go_copy(f, "sink");
				if (ret)
					return ret;
				break;
			} else {
				return (int)n;
			}
		}
		if (!f->in_pipe && (f->src_eof || dry)) {
			ret = flush(f);
			if (ret)
				return ret;
			return f->src_eof ? TSYNC_FWD_EOF : TSYNC_FWD_IDLE;
		}
		if (f->in_pipe && sink_full)
			return TSYNC_FWD_BLOCKED;
		if (moved >= FWD_BUDGET)
			return TSYNC_FWD_BUSY;
	}
	return pump_copy(f);
}

/* Fills @pfd for waiting after @status; see splice.h. */
void tsync_fwd_pollfd(const struct tsync_fwd *f, int status,
		      struct pollfd *pfd)
{
	pfd->fd = -1;
	pfd->events = 0;
	pfd->revents = 0;
	if (status == TSYNC_FWD_IDLE) {
		pfd->fd = f->src;
		pfd->events = POLLIN;
	} else if (status == TSYNC_FWD_BLOCKED) {
		pfd->fd = f->sink;
		pfd->events = POLLOUT;
	}
}

/*
 * SIGPIPE guard: a splice into a socket whose peer is gone raises SIGPIPE
 * in this thread (splice has no MSG_NOSIGNAL). Blocked while forwarding,
 * and one raised by us is consumed before unblocking.
 */
struct sigpipe_guard {
	sigset_t old;
	bool was_pending;
};

/* Blocks SIGPIPE in the calling thread, remembering the old mask. */
static void sigpipe_block(struct sigpipe_guard *g)
{
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
	g->was_pending = !sigpending(&pend) && sigismember(&pend, SIGPIPE);
}

/* Consumes a SIGPIPE we raised (@ret is -EPIPE) and restores the mask. */
static void sigpipe_restore(struct sigpipe_guard *g, int ret)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	if (ret == -EPIPE && !g->was_pending) {
		sigemptyset(&set);
		sigaddset(&set, SIGPIPE);
		sigtimedwait(&set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* Returns the poll timeout for @deadline capped at @cap_ms (< 0: none). */
static int wait_ms(int64_t deadline, int cap_ms)
{
	int t = deadline < 0 ? -1 : tsync_remaining_ms(deadline);

	if (cap_ms >= 0 && (t < 0 || t > cap_ms))
		t = cap_ms;
	return t;
}

/* Forwards until EOF, stop, deadline or error; see splice.h. */
int tsync_fwd_run(struct tsync_fwd *f, int stop_fd, int64_t deadline)
{
	struct sigpipe_guard g;
	struct pollfd pfd[2];
	bool src_woke = false, moved = false;
	uint64_t before;
	int st, cap;

	if (stop_fd < 0 && deadline < 0)
		return -EINVAL;
	sigpipe_block(&g);
	for (;;) {
		before = f->st.bytes_in + f->st.bytes_out;
		st = tsync_fwd_pump(f);
		if (st < 0 || st == TSYNC_FWD_EOF)
			break;
		if (f->st.bytes_in + f->st.bytes_out != before) {
			f->spurious = false;
			moved = true;
		} else if (st == TSYNC_FWD_IDLE && src_woke)
			f->spurious = true;
		if (st == TSYNC_FWD_IDLE && moved && f->return_when_idle)
			break;

		pfd[0].fd = stop_fd;
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		tsync_fwd_pollfd(f, st, &pfd[1]);
		cap = -1;
		if (st == TSYNC_FWD_BUSY) {
			cap = 0;
		} else if (st == TSYNC_FWD_IDLE) {
			if (f->src_retry_ms > 0)
				cap = f->src_retry_ms;
			if (f->spurious) {
				pfd[1].fd = -1;
				if (cap < 0)
					cap = FWD_SPURIOUS_MS;
			}
		}
		if (poll(pfd, 2, wait_ms(deadline, cap)) < 0) {
			if (errno == EINTR)
				continue;
			st = -errno;
			break;
		}
		if (stop_fd >= 0 && pfd[0].revents) {
			st = TSYNC_FWD_STOPPED;
			break;
		}
		if (deadline >= 0 && tsync_now_ns() >= deadline) {
			st = -ETIMEDOUT;
			break;
		}
		src_woke = pfd[1].fd == f->src && (pfd[1].revents & POLLIN);
	}
	sigpipe_restore(&g, st);
	return st;
}

/* Drains what the source has now, then flushes; see splice.h. */
int tsync_fwd_drain(struct tsync_fwd *f, int64_t deadline)
{
	struct sigpipe_guard g;
	struct pollfd pfd;
	int st;

	sigpipe_block(&g);
	for (;;) {
		st = tsync_fwd_pump(f);
		if (st < 0 || st == TSYNC_FWD_EOF || st == TSYNC_FWD_IDLE)
			break;
		if (st == TSYNC_FWD_BUSY)
			continue;
		tsync_fwd_pollfd(f, st, &pfd);
		if (poll(&pfd, 1, wait_ms(deadline, -1)) < 0) {
			if (errno == EINTR)
				continue;
			st = -errno;
			break;
		}
		if (deadline >= 0 && tsync_now_ns() >= deadline) {
			st = -ETIMEDOUT;
			break;
		}
	}
	sigpipe_restore(&g, st);
	return st;
}
