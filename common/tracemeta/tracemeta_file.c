// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Whole-file reads and writes of tracefs files for the collector, the
 * stats reader and the event selection. See tracemeta_file.h.
 */
#include "common/tracemeta/tracemeta_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

/* Reads a whole file into a malloc'd NUL-terminated buffer. */
int tm_read_path(const char *path, char **out, size_t *outlen)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap), *nb;
	int fd, ret = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	if (outlen)
		*outlen = len;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* Reads @rel (relative to @inst's directory, or the top). 0 or -errno. */
int tm_inst_read(struct tracefs_instance *inst, const char *rel,
		 char **out, size_t *len)
{
	char *path = tracefs_instance_get_file(inst, rel);
	int ret;

	/* defined outputs on every path (the analyzers cannot know that a
	 * failed system call never leaves errno 0) */
	*out = NULL;
	if (len)
		*len = 0;
	if (!path)
		return -ENOMEM;
	ret = tm_read_path(path, out, len);
	tracefs_put_tracing_file(path);
	return ret;
}

/* Writes @str to @rel of @inst (truncating). Returns 0 or -errno. */
int tm_inst_write(struct tracefs_instance *inst, const char *rel,
		  const char *str)
{
	char *path = tracefs_instance_get_file(inst, rel);
	size_t len = strlen(str);
	ssize_t n;
	int fd, ret = 0;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	if (fd < 0)
		return -errno;
	n = write(fd, str, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}
