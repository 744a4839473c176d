/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the peer interface (host/peer/peer.h): what a dialect implements.
 * A dialect is one struct peer_ops and the object it opens, which starts
 * with a struct peer (so that the ops get their own back by a cast). The
 * functions of peer.h check nothing and dispatch; each op has the
 * contract of the peer.h function of its name. The dialects are listed in
 * host/peer/peer.c; a new one is an ops table in its own file and a row
 * there. Nothing but the dialects and peer.c includes this.
 */
#ifndef TSYNC_HOST_PEER_PRIV_H
#define TSYNC_HOST_PEER_PRIV_H

#include "host/peer/peer.h"

struct peer {
	const struct peer_ops *ops;
};

struct peer_ops {
	const char *name;		/* "tsync": `sync` prints it as the protocol */
	const char *prefix;		/* before the AGENT ("tcmd:"), "" for none */
	uint16_t default_port;		/* of an AGENT given without one */
	const char *estimator;		/* NULL: the host estimates (peer_estimator()) */
	uint32_t fixed_probes;		/* 0: the host's choice (peer_fixed_probes()) */
	bool traces_on_streams;		/* the agent turns tracing on only once
					 * every stream is open (trace-cmd's):
					 * peer_traces_on_streams() */

	/* may be NULL: everything applies */
	int (*check)(const struct peer_opts *o, const struct round_opts *ro, char *err,
		     size_t errlen);
	int (*open)(const struct tsync_endpoint *ep, const struct peer_opts *o,
		    struct peer **out, char *err, size_t errlen);
	const char *(*addr)(const struct peer *p);
	const char *(*host)(const struct peer *p);
	void (*version)(const struct peer *p, char *buf, size_t len);
	uint32_t (*ncpus)(const struct peer *p);
	uint32_t (*page_size)(const struct peer *p);
	uint64_t (*trace_id)(const struct peer *p);
	uint32_t (*clocks)(const struct peer *p, const char (**names)[TSYNC_CLOCK_NAME_MAX]);
	int (*can_record)(struct peer *p, const char *clock, char *err, size_t errlen);
	/* may be NULL: the dialect's hello negotiates no sync method */
	int (*takes_method)(const struct peer *p, const char *name, char *why, size_t whylen);
	int (*round)(struct peer *p, uint32_t cpu, const struct round_opts *o,
		     struct round_result *res);
	/* NULL: the dialect cannot tell (peer_clock_state()) */
	int (*clock_state)(struct peer *p, const char *clock, struct tsync_clock_state *out,
			   char *err, size_t errlen);
	int (*trace_start)(struct peer *p, const struct peer_trace_opts *o, uint32_t *nstreams,
			   char *err, size_t errlen);
	int (*meta)(struct peer *p, struct tracemeta **out, char *err, size_t errlen);
	int (*stream_open)(struct peer *p, uint32_t cpu, int *fd, char *err, size_t errlen);
	void (*stream_close)(struct peer *p, int fd);
	int (*trace_stop)(struct peer *p, int timeout_ms, struct tsync_trace_stopped *st,
			  char *err, size_t errlen);
	int (*wait)(struct peer *p, struct tracemeta **meta, char *err, size_t errlen);
	int (*finish)(struct peer *p, char *err, size_t errlen);
	void (*free)(struct peer *p);
	/* may be NULL: the dialect has no kvm exchange (peer_kvm_exchange()) */
	bool (*kvm)(const struct peer *p);
	int (*kvm_request)(struct peer *p, uint32_t cpu, int64_t *guest_ts, char *err,
			   size_t errlen);
	int (*kvm_answer)(struct peer *p, const struct peer_kvm_answer *a, char *err,
			  size_t errlen);
};

/* The dialects (host/peer/peer.c lists them). */
extern const struct peer_ops peer_tsync_ops;	/* host/peer/peer_tsync.c */
extern const struct peer_ops peer_tcmd_ops;	/* host/peer/peer_tcmd.c */

#endif
