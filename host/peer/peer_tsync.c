// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync's dialect of the peer interface (host/peer/peer_priv.h): a
 * tsync-agent, driven through the client (host/peer/client.h), which
 * owns every exchange of tsync's protocol.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/peer/client.h"
#include "host/peer/peer_priv.h"

struct peer_tsync {
	struct peer peer;		/* first: the ops' struct peer is ours */
	struct tsync_client *c;
};

/* Returns the tsync peer @p is. */
static struct peer_tsync *ts(const struct peer *p)
{
	return (struct peer_tsync *)p;
}

/* Connects and opens a session; see peer.h. */
static int ts_open(const struct tsync_endpoint *ep, const struct peer_opts *o,
		   struct peer **out, char *err, size_t errlen)
{
	struct client_opts co = {
		.connect_timeout_ms = o->connect_timeout_ms, .io_timeout_ms = o->io_timeout_ms,
		.host_trace_id = o->host_trace_id, .host_name = o->host_name,
		.key_file = o->key_file, .cancel = o->cancel, .methods = o->methods,
	};
	struct peer_tsync *t = calloc(1, sizeof(*t));
	int ret;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->peer.ops = &peer_tsync_ops;
	ret = client_open(ep, &co, &t->c, err, errlen);
	if (ret) {
		free(t);
		return ret;
	}
	*out = &t->peer;
	return 0;
}

/* What the session reply says; see peer.h. */
static const char *ts_addr(const struct peer *p) { return client_peer(ts(p)->c); }
static const char *ts_host(const struct peer *p) { return client_session(ts(p)->c)->name; }
static void ts_version(const struct peer *p, char *buf, size_t len)
{
	snprintf(buf, len, "%u", client_version(ts(p)->c));
}
static uint32_t ts_ncpus(const struct peer *p) { return client_session(ts(p)->c)->ncpus; }
static uint32_t ts_page_size(const struct peer *p) { return client_session(ts(p)->c)->page_size; }
static uint64_t ts_trace_id(const struct peer *p) { return client_session(ts(p)->c)->trace_id; }

/* The clocks of the SESSION_REPLY; see peer.h. */
static uint32_t ts_clocks(const struct peer *p, const char (**names)[TSYNC_CLOCK_NAME_MAX])
{
	const struct tsync_session_reply *r = client_session(ts(p)->c);

	*names = (const char (*)[TSYNC_CLOCK_NAME_MAX])r->clocks;
	return r->nclocks < TSYNC_MAX_CLOCKS ? r->nclocks : TSYNC_MAX_CLOCKS;
}

/*
 * An agent announces no tracing (no CAP_TRACE) when it found at start that
 * it cannot use tracefs; its ERROR to a TRACE_START carries the reason and
 * the fix it found, so that is what the user is shown, before any other
 * complaint (the clock, say: such an agent offers only the clocks it
 * stamps without tracefs).
 */
static int ts_can_record(struct peer *p, const char *clock, char *err, size_t errlen)
{
	struct client_trace_opts to = { .clock = clock };
	uint32_t nstreams;
	int ret;

	if (client_session(ts(p)->c)->caps & TSYNC_CAP_TRACE)
		return 0;
	ret = client_trace_start(ts(p)->c, &to, &nstreams, err, errlen);
	if (ret)
		return ret;
	snprintf(err, errlen, "the agent cannot record: it announces no tracing (no CAP_TRACE "
		 "in its SESSION_REPLY)");
	return -EPROTO;
}

/* The agent's answer to the HELLO's sync method offer; see peer.h. */
static int ts_takes_method(const struct peer *p, const char *name, char *why, size_t whylen)
{
	uint8_t took;

	if (client_method(ts(p)->c, &took)) {
		snprintf(why, whylen, "the agent did not answer the sync method offer "
			 "(a tsync-agent older than it): probes");
		return -ENOTSUP;
	}
	if (strcmp(tsync_method_name(took), name)) {
		snprintf(why, whylen, "the agent took sync method %s, not %s",
			 tsync_method_name(took), name);
		return -ENOTSUP;
	}
	return 0;
}

/* One round; see peer.h. */
static int ts_round(struct peer *p, uint32_t cpu, const struct round_opts *o,
		    struct round_result *res)
{
	return client_sync_round(ts(p)->c, cpu, o, res);
}

/* CLOCK_REQ; see peer.h. */
static int ts_clock_state(struct peer *p, const char *clock, struct tsync_clock_state *out,
			  char *err, size_t errlen)
{
	return client_clock_state(ts(p)->c, clock, out, err, errlen);
}

/* TRACE_START; see peer.h. */
static int ts_trace_start(struct peer *p, const struct peer_trace_opts *o, uint32_t *nstreams,
			  char *err, size_t errlen)
{
	struct client_trace_opts to = { .clock = o->clock, .nargs = o->nargs,
					.args = o->args };

	return client_trace_start(ts(p)->c, &to, nstreams, err, errlen);
}

/* The metadata and the streams; see peer.h. */
static int ts_meta(struct peer *p, struct tracemeta **out, char *err, size_t errlen)
{
	return client_fetch_meta(ts(p)->c, out, err, errlen);
}

static int ts_stream_open(struct peer *p, uint32_t cpu, int *fd, char *err, size_t errlen)
{
	return client_stream_open(ts(p)->c, cpu, fd, err, errlen);
}

static void ts_stream_close(struct peer *p, int fd)
{
	client_stream_close(ts(p)->c, fd);
}

/* TRACE_STOP; see peer.h. */
static int ts_trace_stop(struct peer *p, int timeout_ms, struct tsync_trace_stopped *st,
			 char *err, size_t errlen)
{
	return client_trace_stop(ts(p)->c, timeout_ms, st, err, errlen);
}

/* The metadata again, now with the guest's statistics at its stop. */
static int ts_wait(struct peer *p, struct tracemeta **meta, char *err, size_t errlen)
{
	return client_fetch_meta(ts(p)->c, meta, err, errlen);
}

/* Nothing to end: BYE goes with the close. */
static int ts_finish(struct peer *p, char *err, size_t errlen)
{
	(void)p;
	(void)err;
	(void)errlen;
	return 0;
}

/* BYE, and frees the peer. */
static void ts_free(struct peer *p)
{
	client_close(ts(p)->c);
	free(ts(p));
}

const struct peer_ops peer_tsync_ops = {
	.name = "tsync",
	.prefix = "",
	.default_port = TSYNC_DEFAULT_PORT,
	.open = ts_open,
	.addr = ts_addr,
	.host = ts_host,
	.version = ts_version,
	.ncpus = ts_ncpus,
	.page_size = ts_page_size,
	.trace_id = ts_trace_id,
	.clocks = ts_clocks,
	.can_record = ts_can_record,
	.takes_method = ts_takes_method,
	.round = ts_round,
	.clock_state = ts_clock_state,
	.trace_start = ts_trace_start,
	.meta = ts_meta,
	.stream_open = ts_stream_open,
	.stream_close = ts_stream_close,
	.trace_stop = ts_trace_stop,
	.wait = ts_wait,
	.finish = ts_finish,
	.free = ts_free,
};
