/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's connection to one agent. The client owns every exchange of
 * the protocol (Documentation/protocol.md): hello and authentication,
 * session setup, sync rounds, trace start and stop, the per-CPU data
 * streams' hellos and the metadata. Its callers orchestrate and never see
 * a message.
 *
 * Every call returns 0, -errno (I/O: -ETIMEDOUT, -EPIPE...) or a
 * TSYNC_PERR_* code (the agent sent something wrong or an ERROR), with a
 * reason in @err that names the agent.
 */
#ifndef TSYNC_HOST_CLIENT_H
#define TSYNC_HOST_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/net/endpoint.h"
#include "common/net/transport.h"
#include "host/peer/round.h"
#include "proto/proto.h"

struct tsync_client;
struct tracemeta;
struct host_cancel;

/* Opens a connection to @ep (tsync_connect()'s contract). */
typedef int (*client_connect_fn)(const struct tsync_endpoint *ep, int timeout_ms,
				 struct tsync_peer *peer, char *err, size_t errlen);

struct client_opts {
	int connect_timeout_ms;
	int io_timeout_ms;
	uint64_t host_trace_id;
	const char *host_name;
	const char *key_file;	/* shared key (common/wire/auth.h); NULL: none */
	int meta_timeout_ms;	/* whole metadata transfer; 0: CLIENT_META_DEADLINE_MS */
	uint32_t meta_max_chunks;	/* 0: CLIENT_META_MAX_CHUNKS */
	/* How connections are made; NULL: tsync_connect() (tests pass
	 * their own to speak over socketpairs). */
	client_connect_fn connect;
	/* Where the connections are registered so that another thread can
	 * cut them all (host/peer/cancel.h); NULL: none. */
	struct host_cancel *cancel;
	/* The sync methods (TSYNC_METHOD_BIT()s) the control HELLO offers
	 * besides probes, which it always offers. */
	uint32_t methods;
};

/* What TRACE_START asks for. */
struct client_trace_opts {
	const char *clock;
	/* the guest's trace-cmd record options (common/cli/recopt.h: events,
	 * buffer size and the rest), sent with TSYNC_TRACE_FL_ARGS; 0: none */
	uint32_t nargs;
	char *const *args;
};

/* Limits of one metadata transfer: a lying agent cannot keep it going. */
#define CLIENT_META_DEADLINE_MS	60000		/* default: the whole transfer */
#define CLIENT_META_MAX_CHUNKS	(1u << 18)	/* META_CHUNK messages */
#define CLIENT_META_MAX_BYTES	(320u << 20)	/* their data, all kinds */

/*
 * Connects to @ep, says hello (authenticating with the key file if one is
 * given) and sets up a control session. Returns 0 and the client in @out.
 */
int client_open(const struct tsync_endpoint *ep, const struct client_opts *o,
		struct tsync_client **out, char *err, size_t errlen);
/* Returns the agent's SESSION_REPLY (CPU count, clocks, ids, secret). */
const struct tsync_session_reply *client_session(const struct tsync_client *c);
/* The sync method the agent took from the HELLO's offer: 0 and its
 * TSYNC_METHOD_* id in @method, or -ENOENT when its HELLO_REPLY did not
 * answer the offer (an agent older than the field: probes). */
int client_method(const struct tsync_client *c, uint8_t *method);
/* Returns the protocol version negotiated with the agent. */
unsigned int client_version(const struct tsync_client *c);
/* Returns the agent's name for logs ("tcp:127.0.0.1:8823"). */
const char *client_peer(const struct tsync_client *c);

/*
 * Runs one sync round on guest CPU @cpu. Returns 0 with @res filled (and
 * res->status 0), a round-level failure in res->status with 0 returned when
 * the session can go on, or -errno when the connection is unusable.
 */
int client_sync_round(struct tsync_client *c, uint32_t cpu,
		      const struct round_opts *o, struct round_result *res);

/*
 * Starts tracing on the agent (TRACE_START, TRACE_STARTED). Returns 0 with
 * the number of streams the agent will open in @nstreams.
 */
int client_trace_start(struct tsync_client *c, const struct client_trace_opts *o,
		       uint32_t *nstreams, char *err, size_t errlen);
/*
 * Opens the data connection of guest CPU @cpu (a data HELLO with the
 * session's secret). Returns 0 and the connected socket in @fd (the
 * caller's to close), whose bytes are the CPU's raw ring-buffer pages.
 */
int client_stream_open(struct tsync_client *c, uint32_t cpu, int *fd,
		       char *err, size_t errlen);
/* Closes a stream socket from client_stream_open() (@c NULL: a socket
 * that is no client's, only closed). */
void client_stream_close(struct tsync_client *c, int fd);
/*
 * Stops tracing (TRACE_STOP), waiting up to @timeout_ms for TRACE_STOPPED.
 * Returns 0 and the agent's per-CPU statistics in @st (free st->cpus).
 */
int client_trace_stop(struct tsync_client *c, int timeout_ms,
		      struct tsync_trace_stopped *st, char *err, size_t errlen);
/*
 * Fetches the guest's metadata (META_REQ, META_CHUNKs, META_END), rebuilt
 * and checked by tracemeta, within the CLIENT_META_* limits. Returns 0
 * and the metadata in @out (tracemeta_free()).
 */
int client_fetch_meta(struct tsync_client *c, struct tracemeta **out,
		      char *err, size_t errlen);

/*
 * Asks the agent for its time daemon's state and trace clock @clock
 * against CLOCK_REALTIME (CLOCK_REQ, CLOCK_STATE: host/peer/client_clock.c).
 * Returns 0 and the answer in @out, -EOPNOTSUPP when the agent does not
 * announce CAP_CLOCK_STATE, or -errno.
 */
int client_clock_state(struct tsync_client *c, const char *clock, struct tsync_clock_state *out,
		       char *err, size_t errlen);

/*
 * Makes every call in progress or to come on @c fail at once (the
 * connection is shut down); safe from another thread, for aborting on a
 * signal. client_close() is still needed.
 */
void client_abort(struct tsync_client *c);
/* Sends BYE (best effort), closes and frees @c (NULL is fine). */
void client_close(struct tsync_client *c);


#endif
