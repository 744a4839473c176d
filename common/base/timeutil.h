/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Time helpers: monotonic now, deadlines. */
#ifndef TSYNC_TIMEUTIL_H
#define TSYNC_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC  1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define NSEC_PER_USEC 1000LL

/* Returns @clk now in nanoseconds (0 if the clock cannot be read). */
static inline int64_t tsync_clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Returns CLOCK_MONOTONIC now in nanoseconds: the base of all deadlines. */
static inline int64_t tsync_now_ns(void)
{
	return tsync_clock_ns(CLOCK_MONOTONIC);
}

/* Returns an absolute deadline @ms milliseconds from now. */
static inline int64_t tsync_deadline_ms(int64_t ms)
{
	return tsync_now_ns() + ms * NSEC_PER_MSEC;
}

/*
 * Returns the milliseconds left until @deadline for poll(), rounded up so
 * that a poll never returns early and spins; 0 once it has passed.
 */
static inline int tsync_remaining_ms(int64_t deadline)
{
	int64_t left = deadline - tsync_now_ns();

	if (left <= 0)
		return 0;
	left = (left + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

#endif
