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
 * (common/stamp/stamp.h), pinned to one host CPU for the whole sample so that
 * marker stamps can be read back. Every message is checked: the probe
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
	int host_cpu;		/* host CPU the stamps were taken on */
	int64_t ts;		/* guest time of the sample */
	int64_t offset;		/* host - guest, ns of the trace clock */
	uint32_t probes;	/* probes exchanged */
	int64_t round_ns;	/* how long the sample took */
};

/*
 * Takes one sample of guest CPU @cpu over the time-sync connection @c,
 * stamping with @st pinned to host CPU @host_cpu; @round numbers the
 * marker records (unique per stamper). Returns 0 and @r, or -errno with a
 * reason in @err. An OFFSET with ts or offset 0 (which trace-cmd drops)
 * gives -ERANGE.
 */
int tcmd_ptp_sample(struct tcmd_conn *c, struct tsync_stamper *st, uint32_t round,
		    uint32_t cpu, int host_cpu, struct tcmd_host_sample *r,
		    char *err, size_t errlen);
/* Ends time sync (TIME_SYNC none/STOP); the agent then closes the
 * connection. Returns 0 or -errno. */
int tcmd_ptp_stop(struct tcmd_conn *c, char *err, size_t errlen);

#endif
