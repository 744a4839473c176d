/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running one job per guest at once: `record` connects, checks and syncs
 * its guests in parallel (and starts their tracing), so that starting N
 * guests takes about as long as the slowest one instead of their sum.
 * Every job must end by itself: the guests' I/O has deadlines.
 */
#ifndef TSYNC_HOST_PAR_H
#define TSYNC_HOST_PAR_H

/*
 * Runs @fn(@ctx, i) for every i in [0, @n) at once, a thread each (in the
 * calling thread when a thread cannot be made), and waits for all of them.
 * Stores what each returned in @rets[i]. Returns how many returned
 * non-zero, or -EINVAL (@n < 0, @fn or @rets NULL).
 */
int host_par_run(int n, int (*fn)(void *ctx, int i), void *ctx, int *rets);

#endif
