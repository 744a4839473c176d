/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the machine's time daemon says of its clock, for the external
 * sync method: the agent's answer to CLOCK_REQ (proto/proto.h, struct
 * tsync_clock_state), and the host's own side of it. A daemon is one struct clock_daemon_ops; "auto"
 * asks each in turn and keeps the first that says it is synchronized
 * (else the first that answered). Every read has a deadline.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/clock/
 *   clock.c, clock.h                the daemons' table, the choice, the trace clock against CLOCK_REALTIME
 *   ptpmgmt.c, ptpmgmt.h            linuxptp's management messages (pure)
 *   ptp4l.c                         ptp4l through its management socket
 *   chrony_parse.c, chrony_parse.h  `chronyc -c tracking`'s line (pure)
 *   chrony.c                        chronyd through chronyc, spawned with a deadline
 */
#ifndef TSYNC_COMMON_CLOCK_H
#define TSYNC_COMMON_CLOCK_H

#include <stdint.h>

#include "proto/proto.h"

/* The agent's options for it (--clock-daemon and the sockets). */
struct agent_clock_cfg {
	const char *daemon;		/* "auto", "ptp4l", "chrony" or "none" */
	const char *ptp4l_socket;	/* ptp4l's uds_address */
	const char *chrony_server;	/* chronyc -h: a socket path or address */
	const char *chronyc;		/* the chronyc program */
	int timeout_ms;			/* one read's deadline */
};

/* The defaults of the options that fill it, on the agent and the host:
 * where Debian's ptp4l and chronyd listen unless configured otherwise. */
#define CLOCK_DEF_DAEMON	"auto"
#define CLOCK_DEF_PTP4L_SOCKET	"/var/run/ptp4l"
#define CLOCK_DEF_CHRONY_SOCKET	"/var/run/chrony/chronyd.sock"
#define CLOCK_DEF_CHRONYC	"chronyc"
#define CLOCK_DEF_TIMEOUT_MS	1000

/* Fills @c with the defaults above, then takes each of @daemon,
 * @ptp4l_socket, @chrony_socket that is not NULL and @timeout_ms if > 0. */
void agent_clock_cfg_init(struct agent_clock_cfg *c, const char *daemon, const char *ptp4l_socket,
			  const char *chrony_socket, int timeout_ms);

/* The choices of --clock-daemon, NULL-terminated. */
extern const char *const agent_clock_daemons[];

/* One daemon. read() fills the daemon part of @out (source, synced,
 * offset, bound, stratum, master, detail) by @deadline (CLOCK_MONOTONIC
 * ns); returns 0, or -errno with why in out->detail. */
struct clock_daemon_ops {
	const char *name;
	int (*read)(const struct agent_clock_cfg *cfg, int64_t deadline,
		    struct tsync_clock_state *out);
};

extern const struct clock_daemon_ops clock_ptp4l_ops;	/* common/clock/ptp4l.c */
extern const struct clock_daemon_ops clock_chrony_ops;	/* common/clock/chrony.c */

/*
 * Fills @out: the daemon's state as @cfg asks (source 0 for "none"; a
 * failed read leaves synced 0 with the -errno in out->status and why in
 * out->detail), and trace clock @trace_clock read against CLOCK_REALTIME
 * in the kernel's terms (read_ns 0 when it cannot be read).
 */
void agent_clock_state(const struct agent_clock_cfg *cfg, const char *trace_clock,
		       struct tsync_clock_state *out);

#endif
