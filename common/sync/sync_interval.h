/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive sync interval during a recording, per guest CPU. Pure code: no
 * I/O, no clocks, no globals.
 *
 * Every round gives a TIME_SHIFT sample (guest time, offset) and an error
 * bound. Between samples the offset is interpolated, which is only as good
 * as the drift is steady. So: once a few samples are in, each new one is
 * checked against the drift fitted over the previous ones (common/sync/estimate.h,
 * tsync_drift_fit()). If the fit predicted the new offset within the new
 * round's error bound plus the prediction's own (how far the errors of
 * the samples it was fitted to, each within its round's bound, can move
 * it), the drift is steady and the interval doubles, up to max_ns. A
 * round that came out wide (a loaded machine) thus widens the tolerance
 * of the predictions it takes part in instead of making the next precise
 * round look like a step. If not (the guest clock was stepped or slewed, the drift
 * changed), the interval drops back to base_ns and the fit starts over from
 * that sample.
 */
#ifndef TSYNC_SYNC_INTERVAL_H
#define TSYNC_SYNC_INTERVAL_H

#include <stdint.h>

#include "common/sync/estimate.h"

/* Samples the fit looks back on (the older ones say little about now). */
#define TSYNC_IV_WINDOW 8

struct tsync_interval_cfg {
	int64_t base_ns;	/* first and tightened interval */
	int64_t max_ns;		/* longest interval */
	uint32_t fit_samples;	/* samples before the fit is trusted, >= 2 */
};

enum tsync_interval_why {
	TSYNC_IV_LEARN = 0,	/* too few samples for a fit yet */
	TSYNC_IV_GROW,		/* predicted within the bound: longer */
	TSYNC_IV_HOLD,		/* predicted within the bound, at max_ns */
	TSYNC_IV_TIGHTEN,	/* outside the bound: back to base_ns */
};

struct tsync_interval_stats {
	uint32_t rounds;	/* samples added */
	uint32_t grown;		/* times the interval grew */
	uint32_t tightened;	/* times a sample fell outside the prediction */
	int64_t longest_ns;	/* longest interval used */
	int64_t worst_miss_ns;	/* largest |sample - prediction| of a tightening */
};

struct tsync_interval;

/* Fills @cfg: base 1 s, max 16 s, fit after 3 samples. */
void tsync_interval_cfg_default(struct tsync_interval_cfg *cfg);

/* Starts a CPU's interval. Returns 0, -EINVAL (base_ns < 1, max_ns <
 * base_ns, fit_samples < 2 or above TSYNC_IV_WINDOW) or -ENOMEM. */
int tsync_interval_new(const struct tsync_interval_cfg *cfg, struct tsync_interval **out);

/*
 * Adds the sample @s of a round whose error bound is @bound_ns and returns
 * the interval until the next round (ns); @why (may be NULL) says why.
 */
int64_t tsync_interval_add(struct tsync_interval *iv, const struct tsync_shift_sample *s,
			   int64_t bound_ns, enum tsync_interval_why *why);

/* Returns the current interval (base_ns before the first sample). */
int64_t tsync_interval_now(const struct tsync_interval *iv);

/* Fills @st with what happened so far. */
void tsync_interval_stats(const struct tsync_interval *iv, struct tsync_interval_stats *st);

/* Frees @iv (NULL is fine). */
void tsync_interval_free(struct tsync_interval *iv);

/*
 * The wait (ms, for poll()) until a recording's next sync: @fixed_ms when
 * the user fixed it (-1: none until the last one), else @adaptive_ns (the
 * CPUs' shortest tsync_interval_now(); INT64_MAX: none yet, 1 s), and
 * either capped at @cap_ns, the sync method's longest exact wait
 * (INT64_MAX: none), rounded down to whole ms but at least 1.
 */
int tsync_interval_wait_ms(int fixed_ms, int64_t adaptive_ns, int64_t cap_ns);

/* Returns "learn", "grow", "hold", "tighten" ("?" if unknown). */
const char *tsync_interval_why_name(enum tsync_interval_why why);

#endif
