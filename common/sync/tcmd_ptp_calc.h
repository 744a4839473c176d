/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The offset of one trace-cmd PTP sample, from the guest's stamps and the
 * host's PROBES (pure logic, no I/O; agent/tcmd/tcmd_ptp.c does the exchange).
 *
 * Two things the host may send must not become a sample:
 *  - stamps it did not find: trace-cmd's host does not clear its PROBES
 *    buffer (a stack variable) between samples, so a probe whose marker it
 *    missed (for one, another trace-cmd on the same host shares its
 *    clock_synch-* instance and reads the markers away) carries the stamp
 *    of an earlier sample under the right probe number. A host stamp not
 *    later than every host stamp of the session's earlier samples is such
 *    a stale one and is skipped.
 *  - nothing: trace-cmd's host drops a sample whose offset or time is 0,
 *    and its TIME_SHIFT writer then garbles the option of a file whose
 *    CPUs hold different sample counts (it writes the last CPU's count for
 *    every CPU), which leaves `trace-cmd report` showing no events. So
 *    every sample gets a non-zero offset: measured if any probe is usable,
 *    else the last measured offset of that CPU (or of any CPU), at the
 *    midpoint of the guest's fastest probe; a measured offset of exactly 0
 *    (common with the global clock, which repeats its last value while a
 *    CPU's clock lags, so a probe's stamps can be equal) goes out as 1 ns. Only when there is nothing to repeat does the
 *    sample fail (the host then writes no TIME_SHIFT at all, which leaves
 *    the file readable).
 */
#ifndef TSYNC_AGENT_TCMD_PTP_CALC_H
#define TSYNC_AGENT_TCMD_PTP_CALC_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"
#include "proto/tcmd.h"

/* What a session's earlier samples leave for the next ones. */
struct tcmd_ptp_est;

/* One sample's answer. */
struct tcmd_ptp_result {
	int64_t ts;		/* guest time (the fastest probe's midpoint) */
	int64_t offset;		/* host - guest, never 0 */
	int used;		/* probes with fresh stamps on both sides */
	int stale;		/* host stamps skipped as stale */
	bool repeated;		/* no usable probe: an earlier offset repeated */
};

/* Returns the state for a session of @ncpus CPUs, or NULL (no memory). */
struct tcmd_ptp_est *tcmd_ptp_est_new(int ncpus);
void tcmd_ptp_est_free(struct tcmd_ptp_est *e);

/*
 * Computes the sample of @cpu (< ncpus) from the guest's stamps @guest
 * (TCMD_PTP_LOOP probes, probe n at n-1: t3 when the guest sent it
 * (GUEST_SEND), t2 when the host's echo arrived (GUEST_RECV); 0 = not
 * found) and the host's PROBES @probes, and remembers it.
 * Returns 0 and *@r, or -ENODATA when there is nothing to send (see the
 * top of the file), or -EINVAL for a CPU out of range.
 */
int tcmd_ptp_est_sample(struct tcmd_ptp_est *e, uint32_t cpu,
			const struct tsync_probe_stamps *guest,
			const struct tcmd_time_sync *probes, struct tcmd_ptp_result *r);

#endif
