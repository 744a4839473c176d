/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pipes for the splice path, sized as asked when the kernel allows it.
 *
 * F_SETPIPE_SZ fails with EPERM above fs.pipe-max-size (even for root
 * without CAP_SYS_RESOURCE) and, for a user over fs.pipe-user-pages-soft,
 * for any size larger than the 8 KiB such a user's new pipes come up with.
 * tsync_pipe_open() then halves the size step by step down to
 * TSYNC_PIPE_MIN_SIZE and keeps the first size the kernel grants (or the
 * pipe's own size if none is granted): a small pipe is slower, never wrong.
 */
#ifndef TSYNC_PIPE_H
#define TSYNC_PIPE_H

#include <stddef.h>

/* The size asked for when the configuration does not say (1 MiB). */
#define TSYNC_PIPE_DEFAULT_SIZE	(1024 * 1024)
/* The smallest size tried while falling back (one page). */
#define TSYNC_PIPE_MIN_SIZE	4096

/*
 * Creates a pipe (O_CLOEXEC | O_NONBLOCK on both ends) in @fds and sizes it
 * to @want bytes (0: TSYNC_PIPE_DEFAULT_SIZE), falling back by halving when
 * the kernel refuses. Logs the size obtained once at debug level, naming
 * @what (may be NULL). Returns the size obtained (> 0) or -errno (no pipe
 * is left open then).
 */
long tsync_pipe_open(int fds[2], size_t want, const char *what);

/*
 * Sets the size of the pipe @fd to @want bytes or, when refused, to the
 * largest of @want/2, @want/4, ... not below TSYNC_PIPE_MIN_SIZE that is
 * granted. Returns the size the pipe has afterwards (> 0) or -errno when
 * even its size cannot be read.
 */
long tsync_pipe_resize(int fd, size_t want);

#endif
