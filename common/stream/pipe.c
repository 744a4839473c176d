// SPDX-License-Identifier: GPL-2.0-or-later
/* Pipe creation and sizing with step-by-step fallback; see pipe.h. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/stream/pipe.h"

/* Sizes the pipe @fd, halving on refusal; see pipe.h. */
long tsync_pipe_resize(int fd, size_t want)
{
	size_t size = want ? want : TSYNC_PIPE_DEFAULT_SIZE;
	int ret;

	if (size > 0x40000000)
		size = 0x40000000;
	for (; size >= TSYNC_PIPE_MIN_SIZE; size /= 2) {
		ret = fcntl(fd, F_SETPIPE_SZ, (int)size);
		if (ret > 0)
			return ret;
		/* EPERM: over pipe-max-size or the user's page budget;
		 * EBUSY: shrinking below what the pipe holds. Anything
		 * else will not get better with a smaller size either,
		 * but a smaller size is harmless to try. */
	}
	ret = fcntl(fd, F_GETPIPE_SZ);
	if (ret < 0)
		return -errno;
	return ret;
}

/* Creates and sizes a pipe; see pipe.h. */
long tsync_pipe_open(int fds[2], size_t want, const char *what)
{
	size_t asked = want ? want : TSYNC_PIPE_DEFAULT_SIZE;
	long got;

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	got = tsync_pipe_resize(fds[1], asked);
	if (got < 0) {
		close(fds[0]);
		close(fds[1]);
		fds[0] = fds[1] = -1;
		return got;
	}
	log_debug("%s: pipe of %ld bytes (asked %zu)%s", what ? what : "pipe",
		  got, asked, (size_t)got < asked ? ", kernel refused more" : "");
	return got;
}
