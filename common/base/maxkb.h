/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace-cmd record's -m KB: each per-CPU data file keeps only its newest
 * data, between half of KB and KB.
 *
 * trace-cmd writes a CPU's pages into one of two files and, when that one
 * holds KB/2 (rounded down to whole pages, at least one page), empties
 * the other and writes there; at the end it joins the older file and the
 * current one. With one page per write, the data kept is the half
 * [(k-1)H, kH) before the half being written, [kH, end), where H is the
 * half's size and k = end / H. Here the pages go into one file and the
 * bytes before (k-1)H are given back to the file system (a punched hole);
 * the file's data then starts at tsync_maxkb_keep_from(). The result is
 * the same bytes, and the disk holds no more than KB per CPU plus what
 * arrives between two trims.
 */
#ifndef TSYNC_COMMON_MAXKB_H
#define TSYNC_COMMON_MAXKB_H

#include <stddef.h>
#include <stdint.h>

/* The size of one half in bytes for -m @max_kb and pages of @page_size
 * bytes, as trace-cmd computes it (whole pages, at least one); 0 for
 * @max_kb 0 (no limit) or an invalid @page_size. */
uint64_t tsync_maxkb_half(uint32_t max_kb, size_t page_size);

/* Where the data kept of a file written up to @end starts, for halves of
 * @half bytes (0: everything is kept, 0 is returned). */
uint64_t tsync_maxkb_keep_from(uint64_t end, uint64_t half);

/*
 * Gives back the blocks of @fd before tsync_maxkb_keep_from(@end, @half)
 * that were not given back yet: *@done is where the last call stopped (0
 * at first) and is moved on. The file's size does not change. Returns 0,
 * or -errno from fallocate (-EOPNOTSUPP: the file system cannot punch
 * holes; the data kept is still right, the disk is not freed).
 */
int tsync_maxkb_trim(int fd, uint64_t end, uint64_t half, uint64_t *done);

#endif
