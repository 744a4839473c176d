// SPDX-License-Identifier: GPL-2.0-or-later
/* Full-read/full-write helpers with deadlines; see io.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/io.h"
#include "common/base/timeutil.h"

/* Polls @fd for @events until @deadline: 1 ready, 0 timeout, -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	for (;;) {
		ret = poll(&pfd, 1, tsync_remaining_ms(deadline));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return tsync_now_ns() >= deadline ? 0 : 1;
		return 1;
	}
}

/* Waits for @fd to be readable; see io.h. */
int tsync_wait_readable(int fd, int64_t deadline)
{
	return wait_fd(fd, POLLIN, deadline);
}

/*
 * After a socket call on @fd failed with @sock_errno: returns -errno for a
 * real error (-EAGAIN for "would block"), or, when @fd is not a socket
 * (pipes and files in tests and callers), 0 once poll() says it is ready
 * for @events now and -EAGAIN if not, so the plain read/write that follows
 * cannot block.
 */
static int nonsock_ready(int fd, short events, int sock_errno)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	if (sock_errno != ENOTSOCK)
		return sock_errno == EWOULDBLOCK ? -EAGAIN : -sock_errno;
	ret = poll(&pfd, 1, 0);
	if (ret < 0)
		return -errno;
	return ret ? 0 : -EAGAIN;
}

/*
 * One read of at most @len bytes that never blocks: recv(MSG_DONTWAIT) on a
 * socket; on anything else (pipes, files) read() only once poll() says it
 * is readable, so a blocking pipe cannot hang past the deadline. Returns the
 * bytes read, 0 at end of file, -EAGAIN when nothing is there yet, -errno.
 */
static ssize_t read_some(int fd, void *p, size_t len)
{
	ssize_t n;
	int ret;

	n = recv(fd, p, len, MSG_DONTWAIT);
	if (n >= 0)
		return n;
	ret = nonsock_ready(fd, POLLIN, errno);
	if (ret)
		return ret;
	n = read(fd, p, len);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

/* Reads exactly @len bytes; see io.h. */
int tsync_read_full(int fd, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = read_some(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (n == -EINTR)
			continue;
		if (n != -EAGAIN)
			return (int)n;
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * writev() for descriptors that are not sockets (MSG_NOSIGNAL does not
 * exist there): SIGPIPE is blocked in this thread for the call and a
 * SIGPIPE it raised is consumed, so a closed pipe gives -EPIPE and never
 * kills the process. Returns the bytes written or -errno.
 */
static ssize_t writev_nosigpipe(int fd, const struct iovec *iov, int iovcnt)
{
	static const struct timespec zero;
	sigset_t pipe_set, old, pending;
	bool was_pending;
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old))
		return -EINVAL;
	was_pending = !sigpending(&pending) && sigismember(&pending, SIGPIPE) == 1;
	n = writev(fd, iov, iovcnt);
	if (n < 0)
		n = -errno;
	if (n == -EPIPE && !was_pending) {
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

/*
 * One write of (a prefix of) @iov that never blocks and never raises
 * SIGPIPE: sendmsg(MSG_DONTWAIT | MSG_NOSIGNAL), the whole message in one
 * call, on a socket. On a pipe, once poll() says it is writable, at most
 * PIPE_BUF bytes of the first buffer (which a writable pipe always takes
 * without blocking); on a file, everything. Returns the bytes written,
 * -EAGAIN when the descriptor is not writable yet, or -errno.
 */
static ssize_t write_some(int fd, struct iovec *iov, int iovcnt)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
	struct iovec one;
	struct stat st;
	ssize_t n;
	int ret;

	n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n >= 0)
		return n;
	ret = nonsock_ready(fd, POLLOUT, errno);
	if (ret)
		return ret;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISFIFO(st.st_mode)) {
		one.iov_base = iov[0].iov_base;
		one.iov_len = iov[0].iov_len < PIPE_BUF ? iov[0].iov_len : PIPE_BUF;
		return writev_nosigpipe(fd, &one, 1);
	}
	return writev_nosigpipe(fd, iov, iovcnt);
}

/* Writes all of @iov; see io.h. */
int tsync_writev_full(int fd, struct iovec *iov, int iovcnt, int64_t deadline)
{
	ssize_t n;
	int ret;

	while (iovcnt > 0) {
		if (!iov->iov_len) {
			iov++;
			iovcnt--;
			continue;
		}
		n = write_some(fd, iov, iovcnt);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN) {
			ret = wait_fd(fd, POLLOUT, deadline);
			if (ret < 0)
				return ret;
			if (ret == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return (int)n;
		while (n > 0 && iovcnt > 0) {
			if ((size_t)n >= iov->iov_len) {
				n -= (ssize_t)iov->iov_len;
				iov->iov_len = 0;
				iov++;
				iovcnt--;
			} else {
				iov->iov_base = (char *)iov->iov_base + n;
				iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return 0;
}

/* Writes exactly @len bytes; see io.h. */
int tsync_write_full(int fd, const void *buf, size_t len, int64_t deadline)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return tsync_writev_full(fd, &iov, 1, deadline);
}
