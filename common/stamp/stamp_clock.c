// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The clock stamp source: clock_gettime() of the POSIX clock behind the
 * trace clock (mono, mono_raw, boot, tai), minus this process's
 * time-namespace offset of that clock unless TSYNC_STAMP_NS_CLOCK: the
 * kernel stamps trace events without it. Filled at once; see stamp.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/base/trace_clock.h"
#include "common/stamp/stamp_priv.h"

struct stamp_clock {
	struct tsync_stamper base;
	clockid_t clk;
	int64_t offset;		/* subtracted from each stamp */
};

/* Stamps the trace clocks user space reads with clock_gettime(). */
static bool clock_fits(const char *clock)
{
	clockid_t clk;

	return tsync_trace_clock_posix(clock, &clk) == 0;
}

/*
 * Reads this process's time-namespace offset of POSIX clock @clk into
 * *@off (ns): "monotonic" applies to CLOCK_MONOTONIC and _RAW, "boottime"
 * to CLOCK_BOOTTIME, nothing to CLOCK_TAI. No file (a kernel without time
 * namespaces) means no offset. The file shows the namespace this process's
 * children get, which is its own unless it called unshare(CLONE_NEWTIME)
 * itself, which tsync never does. Returns 0 or -errno.
 */
static int timens_offset(clockid_t clk, int64_t *off)
{
	const char *want = clk == CLOCK_BOOTTIME ? "boottime" :
			   clk == CLOCK_MONOTONIC || clk == CLOCK_MONOTONIC_RAW ?
			   "monotonic" : NULL;
	int want_id = clk == CLOCK_BOOTTIME ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
	long long sec, nsec;
	char name[32];
	FILE *f;

	*off = 0;
	if (!want)
		return 0;
	f = fopen("/proc/self/timens_offsets", "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	/* "monotonic <sec> <nsec>"; older kernels print the clock id */
	while (fscanf(f, "%31s %lld %lld", name, &sec, &nsec) == 3) {
		if (!strcmp(name, want) ||
		    (name[0] >= '0' && name[0] <= '9' && atoi(name) == want_id)) {
			*off = sec * NSEC_PER_SEC + nsec;
			break;
		}
	}
	fclose(f);
	if (*off)
		log_debug("stamp: time namespace offset %lld ns removed from clock %d",
			  (long long)*off, (int)clk);
	return 0;
}

/* Opens the clock source for @clock. */
static int clock_open(const char *clock, const char *tag, unsigned int flags,
		      struct tsync_stamper **out)
{
	struct stamp_clock *c = calloc(1, sizeof(*c));
	int ret;

	(void)tag;
	if (!c)
		return -ENOMEM;
	ret = tsync_trace_clock_posix(clock, &c->clk);
	if (!ret && !(flags & TSYNC_STAMP_NS_CLOCK))
		ret = timens_offset(c->clk, &c->offset);
	if (ret) {
		free(c);
		return ret;
	}
	*out = &c->base;
	return 0;
}

/* Reads the clock now. */
static int clock_take(struct tsync_stamper *s, uint32_t round, uint32_t seq, uint8_t dir,
		      uint32_t cpu, int64_t *ts)
{
	const struct stamp_clock *c = (const struct stamp_clock *)s;
	struct timespec t;

	(void)round;
	(void)seq;
	(void)dir;
	(void)cpu;
	if (clock_gettime(c->clk, &t))
		return -errno;
	*ts = (int64_t)t.tv_sec * NSEC_PER_SEC + t.tv_nsec - c->offset;
	return 0;
}

/* Frees the source. */
static void clock_close(struct tsync_stamper *s)
{
	free(s);
}

const struct stamp_source_ops stamp_clock_ops = {
	.what = "the clock",
	.fits = clock_fits,
	.open = clock_open,
	.take = clock_take,
	.close = clock_close,
};
