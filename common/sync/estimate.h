/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Offset estimation for one sync round, and drift over rounds. Pure code:
 * no I/O, no clocks, no globals; safe to call from any thread.
 *
 * For probe i the host stamps t1 (send) and t4 (receive), the guest t2
 * (receive) and t3 (reply), all int64 nanoseconds in the chosen trace clock
 * of each side. If the host clock reads guest + theta (theta = host minus
 * guest), causality gives, for every probe whose stamps were taken in order,
 *
 *     lo_i = t1 - t2  <=  theta  <=  t4 - t3 = hi_i
 *
 * so each probe is an interval of width delay_i = hi_i - lo_i, centred on
 * offset_i = ((t1-t2)+(t4-t3))/2. All arithmetic is done on differences with
 * overflow checks; a probe whose differences do not fit int64 is dropped.
 *
 * Estimators (selected by name, see tsync_estimator_parse()):
 *   fastest    the offset of the probe with the smallest delay (trace-cmd's
 *              default). error = that probe's delay / 2.
 *   histogram  trace-cmd's alternative: histogram of the probe offsets with
 *              as many bins as probes over [min, max]; the estimate is the
 *              median offset of the fullest bin (trace-cmd takes one probe of
 *              it, and bins |offset|, which folds signs: we bin signed values).
 *   robust     (default) Marzullo-style intersection of the probe
 *              intervals: the region covered by the most intervals. With
 *              honest stamps that is [max lo, min hi]; its two bounds usually
 *              come from *different* probes (the fastest way out and the
 *              fastest way back), so it is tighter than any single probe, and
 *              probes whose stamps broke causality (they contradict the rest)
 *              are left out. The estimate is the middle of the region.
 *
 * Error bound (all estimators): the smallest r such that [est-r, est+r]
 * contains the intersection of the intervals of the probes that set the
 * estimate (fastest: that probe; histogram: the probes of the fullest bin;
 * robust: the region). It covers the truth whenever the stamps respect causality
 * (for robust: of the probes it used), also with asymmetric
 * delays that no estimator can see. Drift during the round is not included:
 * add |ppm| x span_ns if it matters. When the intervals do not intersect
 * (stamp noise), r still spans them all.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/sync/
 *   estimate.c, estimate.h            a round's offset estimators, drift over rounds
 *   kvm_tsc.c, kvm_tsc.h              KVM's TSC map, trace-cmd's kvm answer, cuts at changes
 *   kvm_window.c, kvm_window.h        a vCPU's cuts between readings, at confirmed tracepoint events
 *   round_stop.c, round_stop.h        the adaptive stopping rule of a round
 *   sync_interval.c, sync_interval.h  the adaptive sync interval of a guest CPU
 *   tcmd_ptp_calc.c, tcmd_ptp_calc.h  trace-cmd's PTP arithmetic (guest side)
 */
#ifndef TSYNC_ESTIMATE_H
#define TSYNC_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"	/* struct tsync_probe_stamps */

/* Most probes accepted per side in one round. */
#define TSYNC_EST_MAX_PROBES 65536

enum tsync_estimator {
	TSYNC_EST_ROBUST = 0,	/* default */
	TSYNC_EST_FASTEST,
	TSYNC_EST_HISTOGRAM,
};

/* Result of one round. */
struct tsync_estimate {
	int64_t offset_ns;	/* host minus guest */
	int64_t error_ns;	/* bound on |offset_ns - truth|, see above */
	int64_t delay_ns;	/* smallest round-trip delay of the valid probes */
	int64_t guest_ts;	/* guest time at which offset_ns holds */
	int64_t span_ns;	/* guest-time span of the probes that set it */
	uint32_t used;		/* probes the estimator used */
	uint32_t valid;		/* probes matched and sane */
	uint32_t sent;		/* host probes given */
};

/* One TIME_SHIFT sample: at guest time guest_ts, host = guest + offset. */
struct tsync_shift_sample {
	int64_t guest_ts;
	int64_t offset_ns;
};

/*
 * Parses an estimator name ("robust", "fastest", "histogram"; NULL or ""
 * means the default) into @est. Returns 0 or -EINVAL.
 */
int tsync_estimator_parse(const char *name, enum tsync_estimator *est);

/* Returns the name of @est ("?" if unknown). */
const char *tsync_estimator_name(enum tsync_estimator est);

/*
 * Estimates the offset of one round from @nh host probes (their seq, t1
 * and t4) and @ng guest probes (seq, t2 and t3: SYNC_STAMPS as decoded),
 * in any order. Probes are matched by seq; a seq that is missing on
 * one side or appears twice on a side, a zero stamp, t4 < t1, t3 < t2, a
 * negative delay or an overflowing difference drops that probe.
 * Returns 0 and fills @out, -ENODATA if no probe survives, or -EINVAL (bad
 * arguments, unknown estimator, more than TSYNC_EST_MAX_PROBES a side),
 * -ENOMEM. @out is left untouched on error.
 */
int tsync_estimate_round(const struct tsync_probe_stamps *host, size_t nh,
			 const struct tsync_probe_stamps *guest, size_t ng,
			 enum tsync_estimator est, struct tsync_estimate *out);

/* Fills @s with the TIME_SHIFT sample of @e. Returns 0 or -EINVAL. */
int tsync_estimate_shift_sample(const struct tsync_estimate *e,
				struct tsync_shift_sample *s);

/*
 * Least-squares fit of offset against guest time over @n samples (in any
 * order): *ppm = slope * 1e6 (how much faster the host clock runs than the
 * guest's, in parts per million of guest time); if @offset_at_mean is not
 * NULL, the fitted offset at the mean guest time *@mean_ts (may be NULL).
 * Returns 0, or -EINVAL with fewer than two distinct guest times.
 */
int tsync_drift_fit(const struct tsync_shift_sample *s, size_t n, double *ppm,
		    int64_t *mean_ts, int64_t *offset_at_mean);

#endif
