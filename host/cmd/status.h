/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `tsync-host record` tells the user about its numbers: the live
 * status line (refreshed about once a second on a terminal by
 * host/cmd/status_live.c) and the legend printed under the end summary.
 * Pure: formatting only, tested with synthetic numbers.
 *
 * The status line, one source after the other (the host, then each
 * guest), cut to the terminal's width:
 *
 *   0:01:23 | host 12.3 MiB 45.6k ev lost 0 | vm1 3.2 MiB 10.1k ev lost 0 off -1234 ns ±56
 *
 * bytes and events recorded so far, events lost so far (host: overwritten
 * or dropped in its ring buffers; guest: what its pages report missed,
 * "N+" when some pages only flagged a loss without counting it),
 * and for a guest the offset (host clock minus guest clock) and error
 * bound of its last successful sync round ("off -" before the first).
 */
#ifndef TSYNC_HOST_STATUS_H
#define TSYNC_HOST_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One source's numbers at a tick. */
struct status_src {
	const char *name;		/* "host" or the guest's name */
	uint64_t bytes, events, lost;
	bool lost_min;			/* lost is a minimum: shown "N+" */
	bool guest;			/* has the sync numbers below */
	uint32_t rounds;		/* successful sync rounds so far */
	int64_t offset_ns;		/* of the last one */
	int64_t error_ns;
};

/*
 * Formats the status line for @n sources @src, @elapsed_ns after the
 * start, into @buf (NUL-terminated, no newline), cut to @width columns
 * when @width > 0. Returns its length.
 */
size_t status_format(char *buf, size_t len, int64_t elapsed_ns, const struct status_src *src,
		     int n, int width);

/* Prints the legend of the end summary's columns to @f. */
void status_print_legend(FILE *f);

#endif
