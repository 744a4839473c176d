/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host/peer/: the host's connection to one agent, whatever protocol the
 * agent speaks. The rest of tsync-host drives a guest through struct peer
 * and the functions below, and never sees a message or a dialect. Each
 * dialect is one ops table (host/peer/peer_priv.h), picked once, from the
 * AGENT argument's prefix (peer_dialect()): "tcmd:" for a stock
 * `trace-cmd agent`, none for tsync-agent.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): host/peer/
 *   peer.c, peer.h, peer_priv.h        the peer interface: dialect table, dispatch, struct peer_ops
 *   round.h                            a probe round's options and result, every dialect's
 *   peer_tsync.c                       tsync's dialect: the client behind the ops
 *   client.c, client.h, client_priv.h  tsync's protocol, host side: every exchange with an agent
 *   client_round.c                     the host side of a sync round
 *   peer_tcmd.c                        trace-cmd's dialect: tcmd_guest behind the ops
 *   tcmd_guest.c, tcmd_guest.h         one trace-cmd agent's session, time sync and data
 *   tcmd_session.c, tcmd_session.h     trace-cmd's agent protocol, host side
 *   tcmd_meta.c, tcmd_meta.h           a trace-cmd agent's metadata into a tracemeta
 *   tcmd_ptp.c, tcmd_ptp.h             trace-cmd's PTP, host side
 *   tcmd_place.c, tcmd_place.h         which host CPU stamps those probes (pure)
 *   cancel.c, cancel.h                 cancelling the connections from another thread
 *   client_clock.c                     the agent's time daemon state (CLOCK_REQ)
 *
 * Every call returns 0 or -errno (or a TSYNC_PERR_* code of tsync's
 * protocol), with a reason in @err that names the agent. A peer is used
 * by one thread at a time; the data streams it opens are their owners'
 * (peer_stream_close() from any thread).
 */
#ifndef TSYNC_HOST_PEER_H
#define TSYNC_HOST_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/net/endpoint.h"
#include "host/peer/round.h"
#include "proto/proto.h"

struct peer;
struct peer_ops;	/* a dialect */
struct tracemeta;
struct host_cancel;

/* How a session is opened. */
struct peer_opts {
	int connect_timeout_ms;
	int io_timeout_ms;
	uint64_t host_trace_id;
	const char *host_name;		/* how the host names itself ("host") */
	const char *key_file;		/* shared key (common/wire/auth.h); NULL: none */
	/* where the connections are registered so that another thread can
	 * cut them all (host/peer/cancel.h); NULL: none */
	struct host_cancel *cancel;
	const char *clock;		/* the session's trace clock */
	enum tsync_stamp_source source;	/* the host's stamps */
	/* false: `sync` only, nothing is recorded (an agent that syncs only
	 * while it records, trace-cmd's, records the least it can) */
	bool record;
	/* the guest's trace-cmd record option words (after "record"), for a
	 * dialect that takes them when the session opens; 0: none */
	int argc;
	char *const *argv;
	/* the sync methods the host can serve this guest with besides probes
	 * (TSYNC_METHOD_BIT()s of proto/proto.h; sync_method_offer()), which
	 * a dialect that negotiates them offers its agent; 0: probes only */
	uint32_t methods;
	/* trace-cmd's: TCP_QUICKACK not re-armed (common/wire/tcmd_io.h), only
	 * to measure the fix */
	bool no_quickack;
	/* the host can serve KVM's exact sync to this guest (host/sync: the
	 * kvm method usable with the session's clock): a dialect that agrees
	 * on it with the agent (trace-cmd's) offers it */
	bool kvm;
};

/* The host's answer in trace-cmd's kvm exchange (its struct
 * kvm_clock_offset_msg): the guest's stamp echoed, -tsc-offset, the
 * scaling ratio (or 1) and its fraction bits (or 0). */
struct peer_kvm_answer {
	int64_t guest_ts, offset, scaling, frac;
};

/* What tracing is started with (peer_trace_start()). */
struct peer_trace_opts {
	const char *clock;
	/* the guest's trace-cmd record options (events, buffer size and the
	 * rest); 0: none */
	uint32_t nargs;
	char *const *args;
};

/*
 * Returns the dialect that the AGENT string @arg names by its prefix
 * ("tcmd:3": trace-cmd's), and in @rest what follows the prefix.
 */
const struct peer_ops *peer_dialect(const char *arg, const char **rest);
/* Returns the name of dialect @d: "tsync" or "tcmd". */
const char *peer_dialect_name(const struct peer_ops *d);
/* Returns the port of dialect @d's agents when an AGENT gives none. */
uint16_t peer_dialect_port(const struct peer_ops *d);
/*
 * Before connecting: refuses what dialect @d cannot do of @o, and of @ro
 * (may be NULL: no sync rounds asked for), in one line in @err naming the
 * option ("--key-file does not apply to a trace-cmd agent (...)").
 * Returns 0 or -EINVAL.
 */
int peer_check(const struct peer_ops *d, const struct peer_opts *o, const struct round_opts *ro,
	       char *err, size_t errlen);

/* Connects to the agent of dialect @d at @ep and sets up a session. */
int peer_open(const struct peer_ops *d, const struct tsync_endpoint *ep,
	      const struct peer_opts *o, struct peer **out, char *err, size_t errlen);
/* Returns the name of @p's dialect (peer_dialect_name()). */
const char *peer_name(const struct peer *p);
/* Returns the agent's address for messages ("tcp:127.0.0.1:8823"). */
const char *peer_addr(const struct peer *p);
/* Returns what the agent says it is: its machine's name, or the kind
 * of agent when the protocol does not tell ("trace-cmd agent"). */
const char *peer_host(const struct peer *p);
/* Writes the protocol version the session speaks to @buf ("2" for tsync's
 * negotiated version; "v3, ptp" for trace-cmd's messages and time sync). */
void peer_version(const struct peer *p, char *buf, size_t len);
/* The guest's CPU count (>= 1), ring-buffer page size and trace id. */
uint32_t peer_ncpus(const struct peer *p);
uint32_t peer_page_size(const struct peer *p);
uint64_t peer_trace_id(const struct peer *p);
/* Returns how many trace clocks the guest said it offers, their names in
 * @names; 0 when it said none (nothing to check against). */
uint32_t peer_clocks(const struct peer *p, const char (**names)[TSYNC_CLOCK_NAME_MAX]);
/*
 * Who estimates a round's offset: NULL when the host does (with
 * round_opts.estimator), else the agent's own rule ("trace-cmd").
 */
const char *peer_estimator(const struct peer *p);
/*
 * Whether the agent took sync method @name ("kvm") when the session
 * opened (tsync's HELLO offers the methods peer_opts.methods names):
 * 0 when it did, or its dialect negotiates none; else -ENOTSUP with the
 * reason in @why (it took another one, or predates the offer).
 */
int peer_takes_method(const struct peer *p, const char *name, char *why, size_t whylen);
/* Returns the probes per round the protocol fixes, or 0: the host's choice. */
uint32_t peer_fixed_probes(const struct peer *p);

/* Before a recording: 0 when the agent can record with @clock, or -errno
 * with its reason. */
int peer_can_record(struct peer *p, const char *clock, char *err, size_t errlen);
/*
 * Runs one probe round on guest CPU @cpu. Returns 0 with @res filled (and
 * res->status 0), a round-level failure in res->status with 0 returned when
 * the session can go on, or -errno (also in res->status, the reason in
 * res->error) when the connection is unusable.
 */
int peer_round(struct peer *p, uint32_t cpu, const struct round_opts *o,
	       struct round_result *res);
/* Starts tracing; 0 and the number of streams the agent opens in
 * @nstreams. (An agent that started with the session only counts.) */
/* Asks the agent for its time daemon's state and @clock against
 * CLOCK_REALTIME; -EOPNOTSUPP for an agent (or dialect) that cannot tell. */
int peer_clock_state(struct peer *p, const char *clock, struct tsync_clock_state *out,
		     char *err, size_t errlen);
int peer_trace_start(struct peer *p, const struct peer_trace_opts *o, uint32_t *nstreams,
		     char *err, size_t errlen);
/* Fetches the guest's metadata, rebuilt and checked (tracemeta_free()). */
int peer_meta(struct peer *p, struct tracemeta **out, char *err, size_t errlen);
/* Opens the data stream of guest CPU @cpu: 0 and a socket in @fd whose
 * bytes are the CPU's raw ring-buffer pages. */
int peer_stream_open(struct peer *p, uint32_t cpu, int *fd, char *err, size_t errlen);
/* Closes a stream from peer_stream_open() (@p NULL: only closes @fd);
 * safe from any thread (a stream's receiver). */
void peer_stream_close(struct peer *p, int fd);
/* Stops tracing, waiting up to @timeout_ms; 0 and the agent's per-CPU
 * statistics in @st when it sends them (free st->cpus; else count 0). */
int peer_trace_stop(struct peer *p, int timeout_ms, struct tsync_trace_stopped *st,
		    char *err, size_t errlen);
/*
 * After peer_trace_stop() and the streams' end: waits for the agent to
 * end its recording. 0 and, when the dialect sends it then, the final
 * metadata in @meta (else *@meta is NULL: the first one stands).
 */
int peer_wait(struct peer *p, struct tracemeta **meta, char *err, size_t errlen);
/* Ends a session that recorded nothing (`sync`) in order, so that the
 * agent serves the next one; 0 or -errno. */
int peer_finish(struct peer *p, char *err, size_t errlen);
/* Returns true when @p's agent turns its tracing on only once the host
 * has opened every data stream (trace-cmd's agent), false when it traces
 * from trace_start on (tsync's): until then, a COMMAND would run
 * untraced on that guest. */
bool peer_traces_on_streams(const struct peer *p);

/*
 * A session whose agent syncs by KVM's values through an exchange of its
 * own (trace-cmd's kvm time sync, offered with peer_opts.kvm): true if
 * the agent took it. Each sample is then peer_kvm_request(), which asks
 * guest CPU @cpu for its stamp (the guest's trace clock when it wrote its
 * marker) into *@guest_ts, and peer_kvm_answer() with KVM's values; the
 * session runs no probe rounds (peer_round() fails). 0 or -errno with
 * @err; -EOPNOTSUPP from a session without the exchange.
 */
bool peer_kvm_exchange(const struct peer *p);
int peer_kvm_request(struct peer *p, uint32_t cpu, int64_t *guest_ts, char *err,
		     size_t errlen);
int peer_kvm_answer(struct peer *p, const struct peer_kvm_answer *a, char *err,
		    size_t errlen);
/* Closes everything and frees @p (NULL is fine). */
void peer_free(struct peer *p);

#endif
