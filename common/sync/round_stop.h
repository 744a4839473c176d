/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive sync rounds: when more probes can no longer improve a round's
 * estimate. Pure code: no I/O, no clocks, no globals.
 *
 * While a round runs the host only knows each probe's round-trip time (its
 * own send and receive stamps); the guest's stamps arrive after the round.
 * The robust estimate (common/sync/estimate.h) is set by the fastest way out and
 * the fastest way back, so it stops improving once the smallest round trips
 * stop getting smaller: every leg then had many chances to come close to its
 * floor. The rule, checked after every probe:
 *
 *   - never stop before min_probes (the floor of a round);
 *   - stop at max_probes (the round's ceiling: 339 unless --loops);
 *   - stop ("converged") once at least `near` probes have a round trip
 *     within tol of the smallest one seen (tol = the larger of
 *     tol_permille/1000 of it and tol_min_ns, times n / widen_after once
 *     n, the probes sent, passes widen_after), and the smallest one has not
 *     dropped by more than tol during the last `quiet` probes.
 *
 * `near` probes within tol of the floor say the floor is dense: more
 * probes would lower it by about tol / near (the spacing of the smallest
 * round trips), which is what a round still stands to gain. A quiet
 * machine converges after 20-40 probes. When the fast path is taken by a
 * minority of the probes (another task woken on the CPU between rounds,
 * a terminal reading sync's rows: 5-20% of the probes within 10% of the
 * floor, measured by bench_12_stop_replay), a fixed tol ran a round to the
 * ceiling, 339 probes, for a gain of a few ns. So the gain a round waits
 * for grows with what it has spent: from widen_after probes on, tol grows
 * in proportion to n (twice as wide at 2 x widen_after). A round still
 * goes to max_probes when the floor keeps dropping by more than tol. Documentation/
 * protocol.md (SYNC_END) says how a round ends early on the wire.
 *
 * Under load the rule needs probe loops at a real-time priority on both
 * ends (common/base/cpu.h, Documentation/design.md, The sync round). At normal
 * priority, with a busy loop on the CPUs of host and guest, the fastest
 * way out and the fastest way back took different scheduler paths for
 * milliseconds at a time while the round trips stayed as fast: a short
 * round sat on one path (its median error 1.4-2.5x that of 339 probes,
 * which spanned several) and no stopping rule could see it. Tried then and
 * not kept: bursts of probes with sleeps of 1-6 ms between them (0.44-
 * 1.40x the median error, worst up to 4.6x, 0.33x the probes; a sleeper
 * keeps its place in the scheduler, so the path survived the sleep), the
 * host spinning 0-200 us between probes (1.3-7.8x), 85 or 120 probes
 * back to back (1.2-2.6x). bench_06_adaptive prints both priorities.
 */
#ifndef TSYNC_ROUND_STOP_H
#define TSYNC_ROUND_STOP_H

#include <stdbool.h>
#include <stdint.h>

/* Most probes counted as near the floor (bounds the state). */
#define TSYNC_STOP_MAX_NEAR 64

struct tsync_stop_cfg {
	uint32_t min_probes;	/* never stop before this many probes */
	uint32_t near;		/* probes needed near the smallest round trip */
	uint32_t quiet;		/* probes the smallest must hold still for */
	uint32_t tol_permille;	/* "near": within this fraction of it ... */
	int64_t tol_min_ns;	/* ... or within this many ns, the larger */
	uint32_t widen_after;	/* from this many probes on, tol grows in
				 * proportion to the probes sent (0: never) */
};

enum tsync_stop_reason {
	TSYNC_STOP_NO = 0,	/* go on probing */
	TSYNC_STOP_CONVERGED,	/* more probes would not help */
	TSYNC_STOP_MAX,		/* the ceiling (or a fixed count) was reached */
};

struct tsync_stopper;

/* Fills @cfg with the default rule. */
void tsync_stop_cfg_default(struct tsync_stop_cfg *cfg);

/*
 * Starts a round of at most @max_probes probes under rule @cfg (NULL: the
 * default), or of exactly @max_probes when @fixed (`--loops`). A
 * min_probes above @max_probes means @max_probes. Returns 0 and the state
 * in @out, -EINVAL (max_probes 0, near 0 or above TSYNC_STOP_MAX_NEAR,
 * tol_permille > 1000, tol_min_ns < 0) or -ENOMEM.
 */
int tsync_stopper_new(const struct tsync_stop_cfg *cfg, uint32_t max_probes, bool fixed,
		      struct tsync_stopper **out);

/*
 * Adds the round-trip time of the next probe (ns; a value <= 0, e.g. from a
 * clock that stepped, counts as a probe but not as a round trip) and says
 * whether the round should stop now. After a stop it keeps returning it.
 */
enum tsync_stop_reason tsync_stopper_add(struct tsync_stopper *s, int64_t rtt_ns);

/* Returns the probes added so far. */
uint32_t tsync_stopper_count(const struct tsync_stopper *s);

/* Returns why the round stopped (TSYNC_STOP_NO while it runs). */
enum tsync_stop_reason tsync_stopper_reason(const struct tsync_stopper *s);

/* Returns the smallest round trip added so far (0 if none). */
int64_t tsync_stopper_floor(const struct tsync_stopper *s);

/* Frees @s (NULL is fine). */
void tsync_stopper_free(struct tsync_stopper *s);

/* Returns "running", "converged", "max" ("?" if unknown). */
const char *tsync_stop_reason_name(enum tsync_stop_reason r);

#endif
