/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace-cmd's PTP time sync, host side (the PTP client), for one guest
 * CPU: one sample as trace-cmd's host takes it, so a stock `trace-cmd
 * agent` cannot tell tsync-host from trace-cmd.
 *
 * Theory of operation (byte layouts: Documentation/protocol.md, section 10):
 *
 *   host                                guest (trace-cmd agent)
 *   TIME_SYNC none/PROBE (u16 cpu)  ->  pins itself to that vCPU
 *                                   <-  ptp/START (series, flags)
 *   ptp/START echoed                ->
 *                                   <-  ptp/PROBE n      (guest stamps 's')
 *   stamp n, ptp/PROBE n echoed     ->                   (guest stamps 'r')
 *      ... 339 times ...
 *                                   <-  ptp/END
 *   ptp/PROBES: the host stamps     ->  the guest picks the fastest probe:
 *                                   <-  ptp/OFFSET (ts = guest midpoint,
 *                                                   offset = host - guest)
 *
 * The guest does the arithmetic; the host only stamps each probe it
 * receives, in the trace clock, with tsync's stamp sources
 * (common/stamp/stamp.h), pinned to one host CPU at a time so that marker
 * stamps can be read back from that CPU's buffer. Which host CPU is
 * measured (host/peer/tcmd_place.h): a sample given a second CPU stamps
 * its first TCMD_PLACE_TRIAL probes on the first, the next
 * TCMD_PLACE_TRIAL + 1 on the second, and the rest on the one whose
 * probes came in the faster, each run of stamps read back from the CPU
 * it was taken on:
 *
 *   probes stamped on   the first: 1..T    the second: T+1..2T+1
 *                       the one kept: 2T+2..END
 *   loops timed         the first's: arrivals 1..T+1
 *                       the second's: arrivals T+2..2T+2
 *
 * (a loop is the time from one probe's arrival to the next's; the one
 * from T+1 to T+2 holds the move and counts for neither). A sample
 * without a second CPU stamps on the first from start to END.
 *
 * Every message is checked: the probe
 * numbers must count up from 1, at most 339 of them, and the OFFSET must
 * come within the connection's timeout.
 */
#ifndef TSYNC_HOST_TCMD_PTP_H
#define TSYNC_HOST_TCMD_PTP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/wire/tcmd_io.h"
#include "host/peer/tcmd_place.h"

struct tsync_stamper;

/* One PTP sample of one guest CPU, as the host took it (the guest side's
 * arithmetic answers in common/sync/tcmd_ptp_calc.h's struct tcmd_ptp_result). */
struct tcmd_host_sample {
	uint32_t cpu;		/* guest CPU */
	int host_cpu;		/* host CPU the stamps were taken on (the last) */
	int64_t ts;		/* guest time of the sample */
	int64_t offset;		/* host - guest, ns of the trace clock */
	uint32_t probes;	/* probes exchanged */
	int64_t round_ns;	/* how long the sample took */
};

/*
 * The host CPU a sample stamps on: @cpu, or, with @alt a CPU other than
 * @cpu, both in turn and then the faster (see the table above), which
 * @kept holds after (-1: no trial, or the sample ended before the trial
 * did, or @alt's hold was busy: the next sample tries again). A move
 * first takes a hold on the CPU it goes to with @trylock (if not NULL;
 * called with @arg, false: busy, and the sample stays where it is, never
 * waiting with the agent's probe in flight), then gives up the one it
 * left with @unlock. An @alt the thread cannot be pinned to is given up
 * for good (@kept is @cpu). After the sample, @cpu holds the CPU the
 * stamps ended on (whose hold the caller has) and, with a full trial,
 * @seen the loops of @cpu's first value and of @alt.
 */
struct tcmd_ptp_cpu {
	int cpu;
	int alt;
	bool (*trylock)(void *arg, int cpu);
	void (*unlock)(void *arg, int cpu);
	void *arg;
	int kept;
	struct tcmd_place_loops seen[2];
};

/*
 * Takes one sample of guest CPU @cpu over the time-sync connection @c,
 * stamping with @st pinned to host CPU @hc (see struct tcmd_ptp_cpu),
 * which @r->host_cpu holds too after; @round numbers the
 * marker records (unique per stamper). Returns 0 and @r, or -errno with a
 * reason in @err. An OFFSET with ts or offset 0 (which trace-cmd drops)
 * gives -ERANGE.
 */
int tcmd_ptp_sample(struct tcmd_conn *c, struct tsync_stamper *st, uint32_t round,
		    uint32_t cpu, struct tcmd_ptp_cpu *hc, struct tcmd_host_sample *r,
		    char *err, size_t errlen);
/* Ends time sync (TIME_SYNC none/STOP); the agent then closes the
 * connection. Returns 0 or -errno. */
int tcmd_ptp_stop(struct tcmd_conn *c, char *err, size_t errlen);

#endif
