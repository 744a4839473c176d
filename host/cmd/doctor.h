/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `tsync-host doctor [GUEST]...`: what would stop a recording, found
 * before one starts. Each check gives one finding: ok, warn (works, but
 * worse: no kvm method, no real-time priority) or fail (a recording
 * cannot work), what was seen and the fix. The host's checks are judged
 * from facts (struct doctor_host_facts) by doctor_judge_host(), pure and
 * unit-tested; doctor_host_facts() gathers them from this machine. A
 * guest's checks (doctor_guest.c) go through the same code `sync` and
 * `record` use: the peer's opening (host/peer/peer.h), the clock
 * preflight (host/cmd/preflight.h), the sync method choice and one round
 * per CPU (host/sync/sync.h).
 */
#ifndef TSYNC_HOST_DOCTOR_H
#define TSYNC_HOST_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/trace_clock.h"
#include "host/guest/agent_arg.h"

struct json_object;

enum doctor_status { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

#define DOCTOR_MAX_FINDINGS 12
#define DOCTOR_TEXT_MAX 1024

/* One check's result. */
struct doctor_finding {
	const char *check;		/* "tracefs", "reach", ... */
	enum doctor_status status;
	char detail[DOCTOR_TEXT_MAX];	/* what was seen */
	char fix[DOCTOR_TEXT_MAX];	/* what to do; "" for ok */
};

/* The findings of one machine: the host, or one guest. */
struct doctor_report {
	struct doctor_finding f[DOCTOR_MAX_FINDINGS];
	int n;
};

/* Free space below which a recording fails at once / soon. */
#define DOCTOR_DISK_FAIL_BYTES (64ull << 20)
#define DOCTOR_DISK_WARN_BYTES (1ull << 30)

/* What the host checks are judged from. */
struct doctor_host_facts {
	unsigned int uid;		/* effective uid */
	const char *tracefs_dir;	/* NULL: not found */
	int tracefs;			/* 0 instances writable, else -errno */
	const char *clock;		/* -C */
	int nclocks;			/* the host's trace clocks, or -errno */
	const char (*clocks)[TSYNC_TRACE_CLOCK_NAME_MAX];
	int debugfs;			/* 0 mounted at /sys/kernel/debug, -errno */
	bool kvm_dir;			/* debugfs has kvm/ */
	bool vhost_vsock;		/* module vhost_vsock loaded */
	bool vhost_dev;			/* /dev/vhost-vsock exists */
	const char *out_dir;		/* where the output goes */
	int disk;			/* 0: free_bytes known, else -errno */
	uint64_t free_bytes;
	int rtprio;			/* 0: SCHED_FIFO allowed, else -errno */
	long rlimit_rtprio;		/* RLIMIT_RTPRIO's soft limit; -1 unlimited */
};

/* Adds a finding to @r (a full report keeps its last slot for it). */
void doctor_add(struct doctor_report *r, const char *check, enum doctor_status st,
		const char *fix, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Judges the host facts @f into @r: root, tracefs, clock, kvm, vsock,
 * disk, rtprio, in that order. Pure. */
void doctor_judge_host(const struct doctor_host_facts *f, struct doctor_report *r);

/* Gathers the facts of this machine for trace clock @clock and output
 * directory @out_dir into @f (@clocks: room for TSYNC_MAX_CLOCKS names). */
void doctor_host_facts(struct doctor_host_facts *f, const char *clock, const char *out_dir,
		       char (*clocks)[TSYNC_TRACE_CLOCK_NAME_MAX]);

/* What one guest is checked with. */
struct doctor_guest_opts {
	const char *clock;
	const char *key_file;
	int timeout_ms;			/* connect and each reply */
};

/*
 * Checks guest @a into @r: reach (over which transport), protocol (which,
 * its version), clocks, tracefs, method (kvm or probes, and why not kvm)
 * and sync (one round per CPU: the round-trip floor and the error bound).
 * Returns its JSON object (name, agent, transport, protocol, version,
 * clocks, method, fallback, delay_ns, error_ns; no checks yet), NULL
 * when it cannot be allocated.
 */
struct json_object *doctor_guest(const struct host_agent_arg *a,
				 const struct doctor_guest_opts *o, struct doctor_report *r);

/* Returns "ok", "warn" or "fail". */
const char *doctor_status_name(enum doctor_status st);

#endif
