/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the host's thread stamps a trace-cmd agent's PTP probes: the
 * choice between two host CPUs from what each showed in one sample.
 * Pure arithmetic, no I/O (host/peer/tcmd_ptp.c measures, this decides).
 *
 * trace-cmd's agent keeps the probe whose round trip it saw fastest and
 * takes the midpoint; the host cannot see the agent's stamps, only when
 * each probe arrives. The time from one probe's arrival to the next one's
 * (a "loop") is the echo's way to the agent, the agent's turn-around and
 * the next probe's way back: the fastest loop bounds the fastest round
 * trip the agent can find, and a placement whose loops are higher and
 * wider has more switch and wake-up delay in the path, which is where an
 * asymmetry that the agent's midpoint cannot see comes from. Which host
 * CPU gives the faster loops depends on the kernel and on where the
 * agent's thread runs: over loopback on one kernel (6.18, 2 CPUs), a host
 * thread on the agent's own CPU looped in 34-48 us at the fastest and
 * gave offsets of -1.5 us sample after sample, one on the other CPU in
 * 43-75 us and offsets scattered over -12..+3 us; on another kernel the
 * other CPU gave the better offsets (host/peer/round.h has the figures).
 * So a sample tries both and the caller keeps the faster.
 */
#ifndef TSYNC_HOST_TCMD_PLACE_H
#define TSYNC_HOST_TCMD_PLACE_H

#include <stdint.h>

/* Loops a sample times on each of the two CPUs it tries (it stamps this
 * many probes on the first and one more on the second, the one that
 * moves: host/peer/tcmd_ptp.h; of the 339 a trace-cmd agent sends):
 * enough that the fastest of each is near its placement's floor, few
 * enough that most of the sample is stamped where it is kept. */
#define TCMD_PLACE_TRIAL 40

/* What one placement's loops showed. */
struct tcmd_place_loops {
	uint32_t n;		/* loops */
	int64_t min;		/* the fastest, ns */
	int64_t median;		/* ns */
};

/* The loops between @n consecutive arrival times @arrival (ns, any
 * clock, non-decreasing), @n - 1 of them but at most the first
 * 2 * TCMD_PLACE_TRIAL, into @out (all 0 below 2). */
void tcmd_place_loops(const int64_t *arrival, uint32_t n, struct tcmd_place_loops *out);

/*
 * Which of two placements to keep: 0 for @a, 1 for @b. The one with the
 * faster fastest loop; when the two fastest are within 1/32 of each
 * other (no real difference), the one with the lower median; when those
 * tie too, or either saw no loop, @a.
 */
int tcmd_place_pick(const struct tcmd_place_loops *a, const struct tcmd_place_loops *b);

#endif
