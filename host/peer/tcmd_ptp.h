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
 * (common/stamp/stamp.h), pinned to one host CPU so that marker stamps can
 * be read back: the one it starts on, or, if the agent turns out to wait
 * for our ACKs before the sample's last stamp, the one its caller names
 * then (struct tcmd_ptp_cpu), the stamps taken before the move read back
 * from the first CPU, those after from the second. Every message is checked: the probe
 * numbers must count up from 1, at most 339 of them, and the OFFSET must
 * come within the connection's timeout.
 */
#ifndef TSYNC_HOST_TCMD_PTP_H
#define TSYNC_HOST_TCMD_PTP_H

#include <stdint.h>

#include "common/wire/tcmd_io.h"

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
 * The host CPU a sample stamps on: @cpu, and @move, if not NULL, asked
 * once, between a probe's arrival and its stamp, when the connection
 * first shows a peer that waits for our ACKs (tcmd_conn_tcp_nodelay_peer()
 * turns false) during the sample. @move gets @arg and the CPU the sample
 * is on and returns the CPU to go on with (the same: stay), or -errno,
 * which ends the sample. @cpu holds the CPU the stamps ended on after.
 */
struct tcmd_ptp_cpu {
	int cpu;
	int (*move)(void *arg, int from);
	void *arg;
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
