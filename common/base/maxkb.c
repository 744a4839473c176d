// SPDX-License-Identifier: GPL-2.0-or-later
/* trace-cmd's -m for per-CPU data files; see maxkb.h. */
#include <errno.h>
#include <fcntl.h>

#include "common/base/maxkb.h"

uint64_t tsync_maxkb_half(uint32_t max_kb, size_t page_size)
{
	uint64_t kb_per_page, pages;

	if (!max_kb || page_size < 1024 || page_size % 1024)
		return 0;
	kb_per_page = page_size / 1024;
	/* trace-cmd: max = KB / KB-per-page pages, "keep max half" */
	pages = (max_kb / kb_per_page) >> 1;
	if (!pages)
		pages = 1;
	return pages * page_size;
}

uint64_t tsync_maxkb_keep_from(uint64_t end, uint64_t half)
{
	uint64_t k;

	if (!half)
		return 0;
	k = end / half;
	return k ? (k - 1) * half : 0;
}

int tsync_maxkb_trim(int fd, uint64_t end, uint64_t half, uint64_t *done)
{
	uint64_t from = tsync_maxkb_keep_from(end, half);

	if (from <= *done)
		return 0;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)*done,
		      (off_t)(from - *done)))
		return -errno;
	*done = from;
	return 0;
}
