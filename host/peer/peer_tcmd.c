// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd's dialect of the peer interface (host/peer/peer_priv.h): a
 * stock `trace-cmd agent`, driven through one trace-cmd guest
 * (host/peer/tcmd_guest.h). Its session starts recording as it opens and
 * sends the metadata before the data; its agent estimates each round
 * itself, always of 339 probes, and knows no authentication.
 *
 * A tsync-agent answers trace-cmd's protocol too, and names itself in its
 * TRACE_RESP (proto/tcmd.h, TCMD_TSYNC_TAG): the session is then ended
 * and the guest gets tsync's own protocol (tsync-host's estimate, not
 * trace-cmd's), said in one line. TSYNC_TCMD_KEEP=1 in the environment
 * keeps trace-cmd's protocol with it (the tests and benchmarks of that
 * pairing).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/base/log.h"
#include "host/peer/peer_priv.h"
#include "host/peer/tcmd_guest.h"
#include "proto/tcmd.h"

/* Keeps trace-cmd's protocol with a tsync-agent (see above). */
#define TCMD_KEEP_ENV "TSYNC_TCMD_KEEP"

struct peer_tcmd {
	struct peer peer;		/* first: the ops' struct peer is ours */
	struct tcmd_guest *t;
};

/* Returns the trace-cmd peer @p is. */
static struct peer_tcmd *tc(const struct peer *p)
{
	return (struct peer_tcmd *)p;
}

/* What trace-cmd's protocol cannot do; see peer.h. */
static int tc_check(const struct peer_opts *o, const struct round_opts *ro, char *err,
		    size_t errlen)
{
	if (o->key_file) {
		snprintf(err, errlen, "--key-file does not apply to a trace-cmd agent (its "
			 "protocol has no authentication)");
		return -EINVAL;
	}
	if (ro && ro->fixed_count) {
		snprintf(err, errlen, "--loops does not apply to a trace-cmd agent (its PTP "
			 "always sends %u probes)", TCMD_PTP_LOOP);
		return -EINVAL;
	}
	return 0;
}

/* Connects, requests the recording (or the least of one), connects time
 * sync; see peer.h. */
static int tc_open(const struct tsync_endpoint *ep, const struct peer_opts *o,
		   struct peer **out, char *err, size_t errlen)
{
	struct tcmd_guest_opts to = {
		.clock = o->clock, .source = o->source, .quickack = !o->no_quickack,
		.connect_timeout_ms = o->connect_timeout_ms, .io_timeout_ms = o->io_timeout_ms,
		.host_trace_id = o->host_trace_id, .record = o->record, .kvm = o->kvm,
		.argc = o->argc, .argv = o->argv,
	};
	struct peer_tcmd *p = calloc(1, sizeof(*p));
	char addr[160];
	int ret;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->peer.ops = &peer_tcmd_ops;
	to.keep_tsync_agent = getenv(TCMD_KEEP_ENV) != NULL;
	ret = tcmd_guest_open(ep, &to, &p->t, err, errlen);
	if (ret == -EPROTOTYPE) {
		free(p);
		tsync_endpoint_format(ep, addr, sizeof(addr));
		log_warn("%s: a tsync-agent, not a trace-cmd agent: tsync's own protocol "
			 "instead (AGENT without tcmd:)", addr);
		return peer_tsync_ops.open(ep, o, out, err, errlen);
	}
	if (ret) {
		free(p);
		return ret;
	}
	*out = &p->peer;
	return 0;
}

/* What TRACE_RESP said; see peer.h. */
static const char *tc_addr(const struct peer *p) { return tcmd_guest_addr(tc(p)->t); }
static const char *tc_host(const struct peer *p) { (void)p; return "trace-cmd agent"; }
/* tsync speaks trace-cmd's v3 messages and only its ptp time sync */
static void tc_version(const struct peer *p, char *buf, size_t len)
{
	(void)p;
	snprintf(buf, len, "v3, %s", TCMD_PROTO_PTP);
}
static uint32_t tc_ncpus(const struct peer *p) { return tcmd_guest_ncpus(tc(p)->t); }
static uint32_t tc_page_size(const struct peer *p) { return tcmd_guest_page_size(tc(p)->t); }
static uint64_t tc_trace_id(const struct peer *p) { return tcmd_guest_trace_id(tc(p)->t); }

/* trace-cmd's agent lists no clocks: its answer to -C tells. */
static uint32_t tc_clocks(const struct peer *p, const char (**names)[TSYNC_CLOCK_NAME_MAX])
{
	(void)p;
	*names = NULL;
	return 0;
}

/* trace-cmd's agent always records. */
static int tc_can_record(struct peer *p, const char *clock, char *err, size_t errlen)
{
	(void)p;
	(void)clock;
	(void)err;
	(void)errlen;
	return 0;
}

/* One PTP sample; see peer.h. */
static int tc_round(struct peer *p, uint32_t cpu, const struct round_opts *o,
		    struct round_result *res)
{
	return tcmd_guest_round(tc(p)->t, cpu, o, res);
}

/* trace-cmd's kvm time sync; see peer.h. */
static bool tc_kvm(const struct peer *p) { return tcmd_guest_kvm(tc(p)->t); }

static int tc_kvm_request(struct peer *p, uint32_t cpu, int64_t *guest_ts, char *err,
			  size_t errlen)
{
	return tcmd_guest_kvm_request(tc(p)->t, cpu, guest_ts, err, errlen);
}

static int tc_kvm_answer(struct peer *p, const struct peer_kvm_answer *a, char *err,
			 size_t errlen)
{
	struct tcmd_kvm_msg m = { .ts = a->guest_ts, .offset = a->offset,
				  .scaling = a->scaling, .frac = a->frac };

	return tcmd_guest_kvm_answer(tc(p)->t, &m, err, errlen);
}

/* It started recording with its TRACE_RESP: a stream per CPU. */
static int tc_trace_start(struct peer *p, const struct peer_trace_opts *o, uint32_t *nstreams,
			  char *err, size_t errlen)
{
	(void)o;
	(void)err;
	(void)errlen;
	*nstreams = tcmd_guest_ncpus(tc(p)->t);
	return 0;
}

/* The metadata, the streams and the stop; see peer.h. */
static int tc_meta(struct peer *p, struct tracemeta **out, char *err, size_t errlen)
{
	return tcmd_guest_meta(tc(p)->t, out, err, errlen);
}

static int tc_stream_open(struct peer *p, uint32_t cpu, int *fd, char *err, size_t errlen)
{
	return tcmd_guest_stream(tc(p)->t, cpu, fd, err, errlen);
}

static void tc_stream_close(struct peer *p, int fd)
{
	(void)p;
	close(fd);
}

/* CLOSE and STOP; trace-cmd's agent sends no statistics then. */
static int tc_trace_stop(struct peer *p, int timeout_ms, struct tsync_trace_stopped *st,
			 char *err, size_t errlen)
{
	(void)timeout_ms;
	*st = (struct tsync_trace_stopped){ 0 };
	return tcmd_guest_stop(tc(p)->t, err, errlen);
}

/* CLOSE_RESP; its metadata came before the data. */
static int tc_wait(struct peer *p, struct tracemeta **meta, char *err, size_t errlen)
{
	*meta = NULL;
	return tcmd_guest_wait_closed(tc(p)->t, err, errlen);
}

/* The end of a `sync` session; see tcmd_guest.h. */
static int tc_finish(struct peer *p, char *err, size_t errlen)
{
	return tcmd_guest_finish(tc(p)->t, err, errlen);
}

/* Closes every connection (ending a session that did not end). */
static void tc_free(struct peer *p)
{
	tcmd_guest_free(tc(p)->t);
	free(tc(p));
}

const struct peer_ops peer_tcmd_ops = {
	.name = "tcmd",
	.prefix = "tcmd:",
	.default_port = TCMD_VSOCK_PORT,
	.estimator = "trace-cmd",
	.fixed_probes = TCMD_PTP_LOOP,
	.traces_on_streams = true,	/* its recorders start once connected */
	.check = tc_check,
	.open = tc_open,
	.addr = tc_addr,
	.host = tc_host,
	.version = tc_version,
	.ncpus = tc_ncpus,
	.page_size = tc_page_size,
	.trace_id = tc_trace_id,
	.clocks = tc_clocks,
	.can_record = tc_can_record,
	.round = tc_round,
	.trace_start = tc_trace_start,
	.meta = tc_meta,
	.stream_open = tc_stream_open,
	.stream_close = tc_stream_close,
	.trace_stop = tc_trace_stop,
	.wait = tc_wait,
	.finish = tc_finish,
	.free = tc_free,
	.kvm = tc_kvm,
	.kvm_request = tc_kvm_request,
	.kvm_answer = tc_kvm_answer,
};
