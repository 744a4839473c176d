/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A probe round on one guest CPU, in every dialect (host/peer/peer.h):
 * what the host asks for (struct round_opts) and what it gets back
 * (struct round_result). tsync's protocol runs the round and estimates on
 * the host (host/peer/client_round.c); trace-cmd's agent estimates itself
 * and says only the offset and when it holds (host/peer/tcmd_ptp.h).
 */
#ifndef TSYNC_HOST_ROUND_H
#define TSYNC_HOST_ROUND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/sync/estimate.h"
#include "common/sync/round_stop.h"
#include "proto/proto.h"

/*
 * Result of one round on one guest CPU. A dialect whose agent estimates
 * (trace-cmd's PTP) fills only est.offset_ns, est.guest_ts and est.sent:
 * est.error_ns and est.delay_ns are ROUND_UNKNOWN and est.used, est.valid 0.
 */
struct round_result {
	uint32_t round_id;
	uint32_t cpu;
	int status;			/* 0 or -errno / TSYNC_PERR_* */
	char error[TSYNC_REASON_MAX + 64];	/* why, when status != 0: a peer's
					 * ERROR reason whole */
	struct tsync_estimate est;
	int64_t round_ns;		/* wall time of the round */
	int host_cpu;			/* where the host thread ran */
	enum tsync_stop_reason stop;	/* why the probing ended */
};

/* An error bound or delay the dialect does not learn. */
#define ROUND_UNKNOWN (-1)

/* Probes of a round unless told otherwise (sync's --loops): the ceiling of an
 * adaptive round, and trace-cmd's PTP_SYNC_LOOP. */
#define ROUND_DEFAULT_PROBES 339

/* A round's probes as the host saw them, kept for study when
 * round_opts.keep is set: bench_06_adaptive replays stopping rules on the
 * same probes. Up to cap entries of each array are filled. */
struct round_probes {
	uint32_t cap;				/* entries of each array */
	uint32_t nhost, nguest;			/* entries filled */
	struct tsync_probe_stamps *host;	/* seq, t1, t4 */
	struct tsync_probe_stamps *guest;	/* seq, t2, t3 */
	int64_t *rtt_ns;			/* [nhost] what the stopping rule got */
};

struct agent_clock_cfg;

struct round_opts {
	const char *clock;		/* trace clock name */
	enum tsync_stamp_source source;
	uint32_t nprobes;		/* probes per round (adaptive: at most) */
	bool fixed_count;		/* always nprobes (--loops); else stop when
					 * more probes cannot help (round_stop.h) */
	const struct tsync_stop_cfg *stop;	/* that rule; NULL: the default */
	enum tsync_estimator estimator;
	int host_cpu;			/* -1: the dialect's default (round_host_cpu()) */
	int busy;			/* -1 auto, 0 sleep, 1 busy-poll */
	/* probe loops of both ends at normal priority even when the host may
	 * raise its own (common/base/cpu.h; bench_06_adaptive compares) */
	bool normal_prio;
	/* clock source: stamp the clocks as each side's time namespace
	 * shows them (`--stamp clock` given), not in trace clock terms */
	bool ns_clock;
	/* [host CPUs], or NULL: held by a round for its host CPU, so that
	 * rounds of several guests (record's sync threads) run in parallel
	 * only on different host CPUs and do not spoil each other */
	pthread_mutex_t *cpu_locks;
	struct round_probes *keep;	/* or NULL: see struct round_probes */
	/* --tsync-method: the only sync method to use; NULL or "auto": the
	 * best usable (host/sync/sync.h) */
	const char *method;
	/* the host's own time daemon, for the external method
	 * (common/clock/clock.h); NULL: its defaults */
	const struct agent_clock_cfg *host_clock;
};

/*
 * The host CPU a round of guest CPU @cpu pins the host's thread to, of
 * @nhost CPUs: @o->host_cpu if given, else the guest CPU's number plus
 * @apart, modulo @nhost. tsync's protocol uses @apart 0: its estimator
 * keeps the probes no switch delayed, and on one kernel its rounds on the
 * agent's own CPU were the tighter (median |offset| 16-28 ns against
 * 51-63 ns apart, `sync --host-cpu`, 30 rounds each). trace-cmd's agent
 * estimates from the host's stamps without such a filter, and which CPU
 * is better changes with the kernel (`sync --host-cpu`, median offsets,
 * truth 0): on one, trace-cmd 3.4's agent gave -1.13 and -1.12 us with
 * the host thread on its CPU, -0.21 and -0.27 us apart (30 rounds each),
 * 3.1.6's +0.50 and +0.43 us on its CPU, +2.85 and +2.94 us apart (20
 * each); on another (6.18), 3.4's gave -1.5 us sample after sample on its
 * CPU and -12..+3 us apart. So over TCP its dialect tries @apart 0 and 1
 * in each guest CPU's first sample and keeps the one whose probes loop
 * the faster (host/peer/tcmd_place.h, host/peer/tcmd_guest.c); over
 * vsock it uses 0.
 */
static inline int round_host_cpu(const struct round_opts *o, uint32_t cpu, int nhost,
				 uint32_t apart)
{
	if (o->host_cpu >= 0)
		return o->host_cpu;
	return nhost > 0 ? (int)((cpu + apart) % (uint32_t)nhost) : 0;
}

#endif
