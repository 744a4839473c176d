// SPDX-License-Identifier: GPL-2.0-or-later
/* Full-read/full-write helpers with deadlines; see io.h. */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/io.h"
#include "common/timeutil.h"

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

/* Reads exactly @len bytes; see io.h. */
int tsync_read_full(int fd, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno == ENOTSOCK) {
			/* pipes and files in tests */
			n = read(fd, p, len);
			if (n > 0) {
				p += n;
				len -= (size_t)n;
				continue;
			}
			if (n == 0)
				return -EPIPE;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

/* Writes all of @iov; see io.h. */
int tsync_writev_full(int fd, struct iovec *iov, int iovcnt, int64_t deadline)
{
	struct msghdr msg = { 0 };
	ssize_t n;
	int ret;

	while (iovcnt > 0) {
		if (!iov->iov_len) {
			iov++;
			iovcnt--;
			continue;
		}
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)iovcnt;
		n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = writev(fd, iov, iovcnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			ret = wait_fd(fd, POLLOUT, deadline);
			if (ret < 0)
				return ret;
			if (ret == 0)
				return -ETIMEDOUT;
			continue;
		}
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
