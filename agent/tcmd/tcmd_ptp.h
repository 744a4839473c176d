/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guest side of trace-cmd's time sync, on the time-sync connection of
 * one trace-cmd session (Documentation/protocol.md, 10.3): its PTP, or
 * its kvm exchange (cfg.kvm: a marker's stamp sent per sample, the host
 * answering with KVM's values).
 */
#ifndef TSYNC_AGENT_TCMD_PTP_H
#define TSYNC_AGENT_TCMD_PTP_H

#include <stdbool.h>
#include <stdint.h>

struct tcmd_ptp;

/* How one PTP server was set up. */
struct tcmd_ptp_cfg {
	int fd;			/* the time-sync connection (owned by the caller) */
	const char *clock;	/* the session's trace clock */
	const char *tag;	/* names the marker instance: unique per session */
	const char *peer;	/* for logs */
	uint32_t series;	/* first series id - 1 (unique per session) */
	int ncpus;
	int io_timeout_ms;
	bool kvm;		/* trace-cmd's kvm exchange instead of PTP */
};

/*
 * Opens the timestamp source for @cfg->clock (common/stamp/stamp.h: markers in
 * a private instance, or the clock itself) and starts the thread that
 * answers the host: one sample per none/PROBE(cpu), pinned to that CPU,
 * until STOP. Returns 0 and *@out, or -errno (logged).
 */
int tcmd_ptp_start(const struct tcmd_ptp_cfg *cfg, struct tcmd_ptp **out);
/*
 * Waits until the host's STOP ended the thread or @deadline (CLOCK_MONOTONIC
 * ns) passes, then shuts the connection down and joins. Returns the number
 * of samples sent, or -errno if the exchange failed.
 */
int tcmd_ptp_finish(struct tcmd_ptp *p, int64_t deadline);
/* Finishes @p at once if needed and frees it (NULL is fine). */
void tcmd_ptp_free(struct tcmd_ptp *p);

#endif
