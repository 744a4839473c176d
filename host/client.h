/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The host's connection to one agent: hello, session, sync rounds. */
#ifndef TSYNC_HOST_CLIENT_H
#define TSYNC_HOST_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/endpoint.h"
#include "host/estimate.h"
#include "proto/proto.h"

struct tsync_client;

struct client_opts {
	int connect_timeout_ms;
	int io_timeout_ms;
	uint64_t host_trace_id;
	const char *host_name;
	const char *key_file;	/* shared key (common/auth.h); NULL: none */
};

/* Result of one round on one guest CPU. */
struct round_result {
	uint32_t round_id;
	uint32_t cpu;
	int status;			/* 0 or -errno / TSYNC_PERR_* */
	char error[200];		/* why, when status != 0 */
	struct tsync_estimate est;
	int64_t round_ns;		/* wall time of the round */
	int host_cpu;			/* where the host thread ran */
};

struct round_opts {
	const char *clock;		/* trace clock name */
	unsigned int source;		/* enum tsync_stamp_source */
	uint32_t nprobes;
	enum tsync_estimator estimator;
	int host_cpu;			/* -1: same number as the guest CPU */
	int busy;			/* -1 auto, 0 sleep, 1 busy-poll */
};

/*
 * Connects to @ep, says hello and sets up a control session. Returns 0 and
 * the client in @out, or -errno / TSYNC_PERR_* with a reason in @err.
 */
int client_open(const struct tsync_endpoint *ep, const struct client_opts *o,
		struct tsync_client **out, char *err, size_t errlen);
/* Returns the agent's SESSION_REPLY (CPU count, clocks, ids, secret). */
const struct tsync_session_reply *client_session(const struct tsync_client *c);
/* Returns the control socket. */
int client_fd(const struct tsync_client *c);
/* Returns the agent's name for logs ("tcp:127.0.0.1:8823"). */
const char *client_peer(const struct tsync_client *c);
/* Returns the decode context for this session. */
const struct tsync_decode_ctx *client_dctx(const struct tsync_client *c);
/* Returns the I/O timeout in ms. */
int client_io_timeout(const struct tsync_client *c);

/*
 * Runs one sync round on guest CPU @cpu. Returns 0 with @res filled (and
 * res->status 0), a round-level failure in res->status with 0 returned when
 * the session can go on, or -errno when the connection is unusable.
 */
int client_sync_round(struct tsync_client *c, uint32_t cpu,
		      const struct round_opts *o, struct round_result *res);

/* Sends BYE (best effort), closes and frees @c (NULL is fine). */
void client_close(struct tsync_client *c);

/* Returns the trace clock's stamp source: marker, clock or tsc. */
unsigned int client_default_source(const char *clock);

#endif
