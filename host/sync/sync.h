/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host/sync/: how the host learns the offset between its trace clock and
 * a guest's, per guest CPU, whatever the way. A sync method is one ops
 * table (host/sync/sync_priv.h); the ones there are ranked by accuracy,
 * and a guest is synced by the best one usable with it and the clock
 * (sync_method_open()), named in `sync`'s output and `record`'s summary.
 * The methods: "kvm", the guest's TSC offset and scaling read from KVM's
 * debugfs (rank 0, with clock x86-tsc and a known QEMU process), and
 * "probes", a probe round through the guest's peer (host/peer/peer.h), in
 * whichever protocol its agent speaks. When a better-ranked method is not
 * usable, sync_method_fallback() says why in one line, which `sync` and
 * `record` print. Another method (a paravirtual PTP clock in the guest)
 * is another ops table: Documentation/design.md, "Peers and sync methods".
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): host/sync/
 *   sync.c, sync.h, sync_priv.h  the interface: method list, choice, dispatch, struct sync_method_ops
 *   kvm.c                        the kvm method: KVM's TSC offset and scaling from debugfs
 *   probes.c                     the probe method: a probe round through the peer
 *   external.c                   the external method: the time daemons' bound, probes as a check
 *
 * A sync result says where the guest clock is against the host's, in the
 * terms of trace-cmd's TIME_SHIFT, from guest time guest_ts on:
 *
 *     host = ((guest * scaling) >> frac) + offset_ns
 *
 * (scaling 1 and frac 0 for probes: offset_ns is then host minus guest).
 * Times are in the trace clock's units (ns, except for x86-tsc and
 * counter). How a method reports its error bound: error_ns is the r of
 * an interval [offset_ns - r, offset_ns + r] that holds the true offset at
 * guest_ts whenever the method's own premise holds (probes: stamps that
 * respect causality; a value read from the hypervisor: that it is the
 * one the guest runs with), drift after guest_ts not included; a method
 * that learns no bound says SYNC_UNKNOWN. Users take an unknown bound as
 * 0 where one is needed (the adaptive interval, the live status line) and
 * write no round record for it.
 */
#ifndef TSYNC_HOST_SYNC_H
#define TSYNC_HOST_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/net/endpoint.h"
#include "common/sync/round_stop.h"
#include "host/peer/peer.h"

/* An error bound (or a probe round's delay) a method does not learn. */
#define SYNC_UNKNOWN ROUND_UNKNOWN

struct sync_method;

/* The guest a method syncs. host/guest/agent_arg.h's host_agent_target()
 * fills it, the one place that knows who a guest is (its agent, its local
 * VM). */
struct sync_target {
	struct peer *peer;		/* its session */
	const struct tsync_endpoint *ep;	/* where its agent listens */
	const char *name;		/* its name, for messages */
	pid_t vm_pid;			/* its local VM's process (QEMU); 0: none known */
	int nvcpu;			/* its CPUs, as its agent says; 0: unknown */
	const char *protocol;		/* its agent's, when not connected yet
					 * (peer NULL): "tsync", "tcmd"; NULL */
};

/* The most cuts one sample carries (kvm: two per offset change). */
#define SYNC_CUT_MAX 32

/* One sample placed before a sample's own (struct sync_result.cut). */
struct sync_cut {
	int64_t guest_ts;
	int64_t offset_ns;
};

/* A method's count of the guest's clock relation rewritten. */
struct sync_changes {
	uint32_t at_event;	/* cut at the moment the host's tracing put it */
	uint32_t at_reading;	/* cut at the sample after it */
	uint32_t unconfirmed;	/* announced writes its source never showed: unused */
};

/* A probe method's round: what its probes were (sent 0: no probes). */
struct sync_probes {
	int64_t delay_ns;		/* smallest round trip; SYNC_UNKNOWN */
	uint32_t used;			/* probes the estimate used; 0: unknown */
	uint32_t valid;			/* probes matched and sane; 0: unknown */
	uint32_t sent;
	enum tsync_stop_reason stop;	/* why the probing ended */
};

/* One sample of one guest CPU. */
struct sync_result {
	uint32_t round;			/* numbers a method's samples (a probe
					 * round's id) */
	uint32_t cpu;			/* guest CPU */
	int host_cpu;			/* host CPU it was taken on; -1: none */
	int status;			/* 0 or -errno / TSYNC_PERR_* */
	char error[TSYNC_REASON_MAX + 64];	/* why, when status != 0 */
	int64_t guest_ts;		/* guest time it holds from */
	int64_t offset_ns;		/* see above */
	uint64_t scaling;		/* see above: 1 for probes */
	uint32_t frac;			/* see above: 0 for probes */
	int64_t error_ns;		/* see above, or SYNC_UNKNOWN */
	int64_t round_ns;		/* how long it took */
	struct sync_probes probes;
	/* Changes this sample saw (kvm: the vCPU's offset rewritten since
	 * the CPU's last sample), as samples to place before it: each in
	 * order drops the CPU's samples at or after its guest time (the old
	 * relation's that a change overtook, or a cut a later one replaces)
	 * and is appended; then the sample itself (host = guest + offset_ns,
	 * scaling 1, fraction 0). */
	uint32_t ncut;
	struct sync_cut cut[SYNC_CUT_MAX];
	/* The host's time daemon as this sample read it (external), for the
	 * host file's clock record; has_host_clock false: not read. */
	bool has_host_clock;
	struct tsync_clock_state host_clock;
};

/* What a method says of itself for `sync`'s header and JSON; NULL or 0
 * where it does not apply. */
struct sync_info {
	const char *stamp;		/* the host's stamp source */
	const char *estimator;		/* who turns the probes into an offset */
	uint32_t probes;		/* per round (at most, when adaptive) */
	bool adaptive;
};

/*
 * Opens the best-ranked method usable with target @t and the clock of @o
 * (struct round_opts, host/peer/round.h: the clock, host CPU and its locks
 * for every method, probes, estimator and stamps for the probe method).
 * Returns 0 and the method in @out, or -errno with a reason in @err (when
 * none is usable: each method's reason).
 */
int sync_method_open(const struct sync_target *t, const struct round_opts *o,
		     struct sync_method **out, char *err, size_t errlen);
/* Returns the name of method @m ("kvm", "probes"). */
const char *sync_method_name(const struct sync_method *m);
/* Returns why the methods ranked better than @m were not usable, one
 * line ("kvm: clock local is not x86-tsc: ..."), or why the one it ran
 * first stopped ("kvm: stopped: ..."; sync_method_sample() then goes on
 * with the next usable one), or "" when @m is the best there is. */
const char *sync_method_fallback(const struct sync_method *m);
/* Fills @info for @m asked with @o. */
void sync_method_info(const struct sync_method *m, const struct round_opts *o,
		      struct sync_info *info);
/*
 * Takes one sample of guest CPU @cpu. Returns 0 with @res filled (and
 * res->status 0), a failure of this sample in res->status with 0 returned
 * when the method can go on, or -errno (also in res->status, the reason in
 * res->error) when it cannot (the guest's connection broke).
 */
int sync_method_sample(struct sync_method *m, uint32_t cpu, const struct round_opts *o,
		       struct sync_result *res);
/*
 * The trace clock a method of its own clock wants for target @t (whose
 * peer may be NULL: before connecting): the clock of the best-ranked
 * method that needs one (kvm: x86-tsc) and is usable with it, or NULL
 * with the last such method's reason in @why. What `record` runs with
 * when no -C is given, as trace-cmd does for its kvm method.
 */
const char *sync_method_clock(const struct sync_target *t, char *why, size_t whylen);

/*
 * The sync methods besides probes that the host can serve target @t
 * (before connecting: peer NULL) with @o's clock, as TSYNC_METHOD_BIT()s
 * of the methods of proto/proto.h's TSYNC_SYNC_METHODS: what tsync's
 * HELLO offers (peer_opts.methods), the agent then taking one.
 */
uint32_t sync_method_offer(const struct sync_target *t, const struct round_opts *o);

/* Fills @c with how many times @m saw the guest's clock relation
 * rewritten between two samples of a CPU (kvm: a vCPU's TSC offset or
 * scaling), and where it cut them; zeros for a method that cannot tell
 * (probes). */
void sync_method_changes(const struct sync_method *m, struct sync_changes *c);

/* Returns one line of what @m knows beyond its samples (external: the
 * time daemons' state on both sides), or "". */
const char *sync_method_detail(const struct sync_method *m);

/* Returns true if @name is one of the methods (--tsync-method's choices
 * other than auto). */
bool sync_method_named(const char *name);

/* Returns the longest wait between two samples of a CPU with which @m's
 * samples stay exact (kvm: a scaled vCPU's, kvm_tsc_max_interval_ns()),
 * INT64_MAX for no limit: a recording's sync interval, adaptive or
 * fixed, is capped at it. */
int64_t sync_method_max_interval_ns(const struct sync_method *m);

/* Closes @m (NULL is fine); the target's peer stays open. */
void sync_method_close(struct sync_method *m);

#endif
