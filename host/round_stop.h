/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive sync rounds: when more probes can no longer improve a round's
 * estimate. Pure code: no I/O, no clocks, no globals.
 *
 * While a round runs the host only knows each probe's round-trip time (its
 * own send and receive stamps); the guest's stamps arrive after the round.
 * The robust estimate (host/estimate.h) is set by the fastest way out and
 * the fastest way back, so it stops improving once the smallest round trips
 * stop getting smaller: every leg then had many chances to come close to its
 * floor. The rule, checked after every probe:
 *
 *   - never stop before min_probes (the floor of a round);
 *   - stop at max_probes (the round's ceiling: 339 unless --loops);
 *   - stop ("converged") once at least `near` probes have a round trip
 *     within tol of the smallest one seen (tol = the larger of
 *     tol_permille/1000 of it and tol_min_ns), and the smallest one has not
 *     dropped by more than tol during the last `quiet` probes.
 *
 * A quiet machine converges after a few dozen probes. When probes get
 * preempted or queued (a loaded guest or host) round trips near the floor
 * are rare and the round runs longer, up to max_probes. Documentation/
 * protocol.md (SYNC_END) says how a round ends early on the wire.
 *
 * What the rule cannot see: with a busy loop on the CPUs of host and guest,
 * the fastest way out and the fastest way back trade places every few
 * milliseconds (their difference, the estimate's error, flips between
 * about +100 and -100 ns) while the round trips stay as fast. A short
 * round sits in one such phase; 339 probes span several and average them.
 * bench_06_adaptive measures it: there the median error is 2-2.6x that of
 * 339 probes (60-105 ns against 30-40 ns), all well inside the bound.
 *
 * Tried and not kept (bench_06 with the busy loops, the rule patched):
 * spreading the probes over time instead of adding probes. Bursts of 8
 * with a sleep of about 1 ms between them, 4 bursts needed at the floor:
 * the median error went 0.44-1.40x that of 339 probes in 6 runs of 100
 * rounds (the rule without bursts 0.89-1.56x in the same runs, a loaded
 * machine) and the worst up to 4.6x, the probes up to 0.33x. The first
 * probe after a sleep is lopsided (its way out up to 500 ns faster, or its
 * way back 700 ns faster, than any other probe of the round); one probe
 * per sleep made the median 3.6-4.5x worse; sleeps of 3-6 ms cost more
 * probes (0.3-0.43x) for no gain; the scheduling state mostly survived a
 * 1 ms sleep. The host spinning 0-20 or 0-60 us between probes: 1.3-1.7x.
 * Only probing through a change of the scheduling state helps, and that
 * takes milliseconds of probes.
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
