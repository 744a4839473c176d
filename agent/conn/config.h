/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tsync-agent's limits and policy, filled from the command line by main. */
#ifndef TSYNC_AGENT_CONFIG_H
#define TSYNC_AGENT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/conn/acl.h"
#include "common/wire/auth.h"
#include "common/net/endpoint.h"

#define AGENT_MAX_LISTEN 8

struct tsync_listener;

/* Limits and policy, from the command line. */
struct agent_cfg {
	struct tsync_endpoint listen[AGENT_MAX_LISTEN];
	int nlisten;
	bool tcmd_listen_set;	/* --tcmd-listen given (none: no default) */
	/* Sockets systemd passed (LISTEN_FDS; agent/listenfds.h): how many,
	 * known before the options are read (with them, -l's and
	 * --tcmd-listen's defaults do not apply), then the listeners main
	 * made of them and their names ("" if none). agent_create takes the
	 * listeners over, and closes them if it fails. */
	int listen_fds;
	struct tsync_listener *inherited[AGENT_MAX_LISTEN];
	const char *inherited_name[AGENT_MAX_LISTEN];
	int ninherited;
	int max_sessions;	/* concurrent control sessions */
	int max_conns;		/* concurrent connections of any kind */
	int idle_timeout_ms;	/* a peer that sends nothing for this long */
	int io_timeout_ms;	/* deadline of one message once it started */
	int auth_timeout_ms;	/* from accept to authenticated (hello.c) */
	uint32_t max_probes;	/* per sync round */
	uint32_t max_buffer_kb;	/* per-CPU buffer a host may ask for */
	uint32_t max_trace_mb;	/* trace buffers of all sessions; 0: RAM / 4 */
	uint32_t max_msg_kb;	/* largest message payload a host may send */
	struct tsync_acl *acl;	/* who may connect (agent/conn/acl.h); owned by main */
	struct tsync_key *key;	/* --key-file (common/wire/auth.h) or NULL; owned by main */
	bool daemonize;
	const char *pidfile;
	int log_level;		/* enum tsync_log_level: -v, --verbose[=LEVEL] */
	const char *tcmd_client;	/* trace-cmd agent's -N HOST, or NULL */
	uint32_t tcmd_port;	/* trace-cmd agent's -p (default 823) */
	bool tcmd_port_set;	/* -p given */
	/* The time daemon CLOCK_REQ reads (common/clock/clock.h). */
	const char *clock_daemon;	/* --clock-daemon */
	const char *ptp4l_socket;	/* --ptp4l-socket */
	const char *chrony_socket;	/* --chrony-socket */
	int clock_timeout_ms;		/* --clock-timeout */
	bool borrow_top_in_use;	/* --borrow-top-in-use */
};

#endif
