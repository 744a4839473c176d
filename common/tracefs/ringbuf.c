// SPDX-License-Identifier: GPL-2.0-or-later
/* The page size of a tracefs instance's ring buffer; see ringbuf.h. */
#include "common/tracefs/ringbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <tracefs.h>

int tsync_ringbuf_page_size_of(const char *header_page, size_t len)
{
	struct tep_handle *tep;
	char *copy;
	int ret;

	if (!header_page || !len)
		return -EINVAL;
	/* libtraceevent's parser takes a writable, NUL-terminated text */
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, header_page, len);
	copy[len] = '\0';
	tep = tep_alloc();
	if (!tep) {
		free(copy);
		return -ENOMEM;
	}
	if (tep_parse_header_page(tep, copy, len, (int)sizeof(long)))
		ret = -EINVAL;
	else
		ret = tep_get_sub_buffer_size(tep);
	tep_free(tep);
	free(copy);
	if (ret == 0 || (ret > 0 && (ret & (ret - 1))))
		ret = -EINVAL;	/* not a usable page size */
	return ret;
}

int tsync_ringbuf_page_size(struct tracefs_instance *inst)
{
	char *hp;
	int len = 0, ret;

	errno = 0;
	hp = tracefs_instance_file_read(inst, "events/header_page", &len);
	if (!hp)
		return errno ? -errno : -ENOENT;
	ret = len > 0 ? tsync_ringbuf_page_size_of(hp, (size_t)len) : -EINVAL;
	free(hp);
	return ret;
}

int tsync_ringbuf_open_cpu(struct tracefs_instance *inst, int cpu)
{
	char path[64];
	int fd;

	if (cpu < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	errno = 0;
	fd = tracefs_instance_file_open(inst, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return fd >= 0 ? fd : errno ? -errno : -ENOENT;
}
