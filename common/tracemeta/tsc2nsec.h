/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How this machine's kernel converts TSC counts to nanoseconds, as
 * trace-cmd reads it for its TSC2NSEC option: the time_mult and time_shift
 * of a perf event's mmap page (ns = (tsc * mult) >> shift). Files traced
 * with the x86-tsc clock carry them, so that `trace-cmd report` prints
 * nanoseconds instead of raw counts.
 */
#ifndef TSYNC_COMMON_TSC2NSEC_H
#define TSYNC_COMMON_TSC2NSEC_H

#include "common/tracedat/tracedat.h"

/*
 * Reads the conversion into @out (offset 0). Returns 0, -EOPNOTSUPP when
 * the kernel offers none (no user-space TSC time: a VM without a stable
 * TSC, or not x86), or -errno from perf_event_open/mmap.
 */
int tsync_tsc2nsec_read(struct tracedat_tsc2nsec *out);

#endif
