// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tsc stamp source: rdtsc, for trace clock x86-tsc, on x86 only.
 * Filled at once; see stamp.h.
 */
#include <errno.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "common/base/trace_clock.h"
#include "common/stamp/stamp_priv.h"

/* Whether this machine has a TSC to read. */
static bool tsc_available(void)
{
	return HAVE_TSC;
}

/* Stamps the clock that counts TSC cycles. */
static bool tsc_fits(const char *clock)
{
	return tsync_trace_clock_is_tsc(clock);
}

/* Opens the tsc source: nothing to keep. */
static int tsc_open(const char *clock, const char *tag, unsigned int flags,
		    struct tsync_stamper **out)
{
	(void)clock;
	(void)tag;
	(void)flags;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* Returns the TSC now, ordered after earlier loads (as rdtsc_ordered). */
static int tsc_take(struct tsync_stamper *s, uint32_t round, uint32_t seq, uint8_t dir,
		    uint32_t cpu, int64_t *ts)
{
	(void)s;
	(void)round;
	(void)seq;
	(void)dir;
	(void)cpu;
#if HAVE_TSC
	_mm_lfence();
	*ts = (int64_t)__rdtsc();
	return 0;
#else
	*ts = 0;
	return -EOPNOTSUPP;
#endif
}

/* Frees the source. */
static void tsc_close(struct tsync_stamper *s)
{
	free(s);
}

const struct stamp_source_ops stamp_tsc_ops = {
	.what = "the TSC",
	.only_on = "x86",
	.available = tsc_available,
	.fits = tsc_fits,
	.open = tsc_open,
	.take = tsc_take,
	.close = tsc_close,
};
