// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A trace-cmd host's session on tsync-agent.
 *
 * Theory of operation
 * -------------------
 *   host (trace-cmd record -A)          agent (this file)
 *   TRACE_REQ {argv, protos}     --->   options parsed and applied as for
 *                                       tsync's own hosts (evsel.h, the
 *                                       recording of agent/rec/record.h);
 *                                       a refusal is NOT_SUPP with
 *                                       the reason as payload (trace-cmd
 *                                       prints "Failed to receive trace
 *                                       response")
 *                                       instance tsync-t<id>-..., events on,
 *                                       ports opened (tcmd_ports.c)
 *                                <---   TRACE_RESP {cpus, page size, trace
 *                                       id, "kvm" or "ptp", tsync port, the
 *                                       tag "tsync-agent" (trace-cmd skips
 *                                       it), CPU ports}
 *   connects the tsync port      --->   PTP server thread (tcmd_ptp.c)
 *                                <---   SEND_DATA... FIN_DATA: the trace.dat
 *                                       metadata, ending in its options
 *                                       tracing on
 *   connects each CPU port       --->   a streamer per CPU (splice)
 *   ... records ...
 *   CLOSE                        --->   tracing off, streams flushed, EOF
 *                                <---   CLOSE_RESP
 *   final PTP round, STOP        --->   PTP thread ends; all removed
 *
 * The session is counted like tsync's own (--max-sessions, the buffer
 * budget, --max-buffer-kb, --max-conns for every connection, the allow
 * lists for every connection); a host that cannot authenticate is refused
 * when the agent has --key-file, and trace-cmd sessions may hold at most
 * half of --max-sessions (agent/conn/registry.h), so that sessions left
 * silent cannot starve tsync's own hosts. Waits are bounded by the I/O
 * and idle timeouts, except the wait for CLOSE while recording (trace-cmd
 * sends nothing until then), which ends with CLOSE, the connection's
 * end, the transport declaring the host gone (TCP keepalive and
 * TCP_USER_TIMEOUT: within 50 s of its last sign of life,
 * common/net/tcp.c), or the agent's shutdown. A host that closes or
 * resets its connection before its data ports are connected ends the
 * session at once (tcmd_ports.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "agent/conn/control.h"
#include "agent/conn/conntab.h"
#include "agent/rec/evsel.h"
#include "agent/rec/record.h"
#include "agent/conn/ratelimit.h"
#include "agent/conn/registry.h"
#include "common/wire/tcmd_io.h"
#include "agent/tcmd/tcmd_ports.h"
#include "agent/tcmd/tcmd_ptp.h"
#include "agent/tcmd/tcmd_session.h"
#include "agent/conn/tracefs_check.h"
#include "common/tracefs/instance.h"
#include "common/base/log.h"
#include "common/cli/recopt.h"
#include "common/base/timeutil.h"
#include "common/tracedat/tracedat.h"
#include "common/tracemeta/tracemeta.h"

#define TCMD_INST_PREFIX "tsync-t"

struct tcmd_session {
	const struct agent_ctx *ctx;
	struct agent_session base;	/* what the registry counts */
	bool registered;
	int fd;
	const struct tsync_peer *peer;
	struct tsync_recopt opts;	/* the host's argv, parsed */
	bool ptp;			/* the host offered ptp */
	bool kvm;			/* the host offered kvm (taken: see take_kvm()) */
	uint64_t host_trace_id, trace_id;
	struct agent_rec *rec;		/* the recording (agent/rec/record.h) */
	struct tracemeta *meta;
	struct tcmd_ports *ports;	/* [0] tsync (if ptp), then the CPUs */
	struct tcmd_ptp *sync;
	struct tcmd_conn conn;		/* trace-cmd's messages on fd */
	uint8_t buf[TCMD_MSG_MAX];	/* what is sent */
};

/* Refuses the session: the reason in the log and in NOT_SUPP's payload. */
static void refuse(struct tcmd_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void refuse(struct tcmd_session *s, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: refused trace-cmd session: %s",
		      s->peer->name, why);
	tcmd_conn_send(&s->conn, s->buf, tcmd_enc_not_supp(s->buf, sizeof(s->buf), why),
		       NULL, 0);
}

/* Receives the TRACE_REQ and parses its options. Returns 0 or -errno
 * (refused, logged). */
static int recv_request(struct tcmd_session *s)
{
	const struct agent_cfg *cfg = s->ctx->cfg;
	struct tracedat_format fmt;
	const char **argv = NULL;
	struct tcmd_msg m;
	char err[300];
	const char *a;
	int ret, n = 0;

	ret = tcmd_conn_recv_idle(&s->conn, &m, tsync_deadline_ms(cfg->auth_timeout_ms),
				  err, sizeof(err));
	if (ret == -EBADMSG) {
		refuse(s, "%s", err);	/* logs it too */
		return ret;
	}
	if (ret) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_HELLO, "%s: refused trace-cmd "
			      "connection: %s", s->peer->name, err);
		return ret;
	}
	if (m.cmd != TCMD_TRACE_REQ) {
		refuse(s, "expected TRACE_REQ, got %s%s", tcmd_cmd_name(m.cmd),
		       m.cmd == TCMD_TRACE_PROXY ? " (proxies are not supported)" : "");
		return -EPROTO;
	}
	s->host_trace_id = m.req.trace_id;
	if (m.req.has_protos)
		for (a = tcmd_strs_next(&m.req.protos, NULL); a;
		     a = tcmd_strs_next(&m.req.protos, a)) {
			s->ptp |= !strcmp(a, TCMD_PROTO_PTP);
			s->kvm |= !strcmp(a, TCMD_PROTO_KVM);
		}
	argv = calloc(m.req.args.count + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	for (a = tcmd_strs_next(&m.req.args, NULL); a; a = tcmd_strs_next(&m.req.args, a))
		argv[n++] = a;
	ret = agent_recopt_words(n, argv, &s->opts, err, sizeof(err));
	free(argv);
	if (ret) {
		refuse(s, "%s", ret == -ENOMEM ? "out of memory" : err);
		return ret;
	}
	if (tracedat_format_from_args(s->opts.file_version, s->opts.compression, &fmt)) {
		refuse(s, "file version %d with compression %s: this agent writes "
		       "versions 6 and 7, compressed with none, zstd or zlib",
		       s->opts.file_version, s->opts.compression ? s->opts.compression : "-");
		return -EINVAL;
	}
	return 0;
}

/* Checks the limits and sets the recording up. Returns 0 or -errno
 * (refused, logged). */
static int setup(struct tcmd_session *s)
{
	struct agent_rec_req q = { .opt = &s->opts, .clock = s->opts.clock,
				   .buffer_kb = s->opts.inst.buffer_kb };
	struct tracemeta_events *ev = NULL;
	char prefix[TSYNC_INSTANCE_PREFIX_MAX], err[TSYNC_REASON_MAX];
	uint32_t code;
	int ret;

	ret = agent_rec_check_buffer(s->ctx, s->opts.inst.buffer_kb, err, sizeof(err));
	if (!ret && agent_events_resolve(&s->opts, &ev, err, sizeof(err)))
		ret = -EINVAL;
	if (ret) {
		refuse(s, "%s", err);
		return ret;
	}
	snprintf(prefix, sizeof(prefix), TCMD_INST_PREFIX "%" PRIx64, s->base.id);
	q.events = ev;
	ret = agent_rec_new(s->ctx, prefix, s->peer->name, &s->rec);
	if (!ret)
		ret = agent_rec_setup(s->rec, &q, &code, err, sizeof(err));
	if (ret)
		refuse(s, "%s", ret == -ENOMEM ? "out of memory" : err);
	tracemeta_events_free(ev);
	return ret;
}

/*
 * trace-cmd's agent takes the best-ranked method it knows of those
 * offered: kvm (rank 0) before ptp. tsync-agent takes kvm as it would,
 * when the session's clock is x86-tsc (the only clock KVM's offsets are
 * in; trace-cmd's host offers kvm only with it), and then sends its
 * marker stamps in trace-cmd's kvm exchange (tcmd_ptp.c). Says which.
 */
static void take_kvm(struct tcmd_session *s)
{
	const char *clock = s->opts.clock ? s->opts.clock : "local";

	if (s->kvm && strcmp(clock, "x86-tsc")) {
		log_info("%s: trace-cmd session: kvm time sync offered with clock %s, not "
			 "x86-tsc: ptp instead", s->peer->name, clock);
		s->kvm = false;
	}
	if (s->kvm)
		s->ptp = true;	/* one time-sync port, whichever protocol */
	if (s->ptp)
		log_info("%s: trace-cmd session: time sync %s", s->peer->name,
			 s->kvm ? TCMD_PROTO_KVM : TCMD_PROTO_PTP);
}

/* Collects the metadata, opens the ports and sends TRACE_RESP. Returns 0
 * or -errno. */
static int respond(struct tcmd_session *s)
{
	struct tracemeta_opts mo = { .kallsyms = true };
	struct tcmd_trace_resp r = { .cpus = (uint32_t)s->ctx->ncpus };
	int extra, ret;
	uint32_t *ports;
	ssize_t n;

	take_kvm(s);
	extra = s->ptp ? 1 : 0;
	ret = agent_rec_collect(s->rec, &mo, &s->meta);
	if (ret) {
		refuse(s, "cannot collect the trace metadata: %s", strerror(-ret));
		return ret;
	}
	ret = tcmd_ports_open(s->ctx, s->fd, s->peer, s->ctx->ncpus + extra, &s->ports);
	if (ret) {
		refuse(s, "cannot open the data ports: %s", strerror(-ret));
		return ret;
	}
	ports = calloc((size_t)s->ctx->ncpus, sizeof(*ports));
	if (!ports)
		return -ENOMEM;
	for (int i = 0; i < s->ctx->ncpus; i++)
		ports[i] = tcmd_ports_port(s->ports, i + extra);
	r.page_size = tracemeta_meta(s->meta)->page_size;
	r.trace_id = s->trace_id;
	if (s->ptp) {
		snprintf(r.proto, sizeof(r.proto), "%s", s->kvm ? TCMD_PROTO_KVM : TCMD_PROTO_PTP);
		r.tsync_port = tcmd_ports_port(s->ports, 0);
	}
	/* named in it, for tsync-host to speak tsync's protocol instead */
	n = tcmd_enc_trace_resp(s->buf, sizeof(s->buf), &r, ports);
	if (n > 0)
		n = tcmd_resp_tag(s->buf, sizeof(s->buf), (size_t)n);
	ret = tcmd_conn_send(&s->conn, s->buf, n, NULL, 0);
	free(ports);
	return ret;
}

/* Accepts the time-sync connection and starts the PTP server. */
static int start_sync(struct tcmd_session *s)
{
	struct tcmd_ptp_cfg c = {
		.clock = s->opts.clock ? s->opts.clock : "local",
		.peer = s->peer->name,
		.ncpus = s->ctx->ncpus,
		.io_timeout_ms = s->ctx->cfg->io_timeout_ms,
		.kvm = s->kvm,
	};
	char tag[TSYNC_STAMP_TAG_MAX + 1];
	uint32_t base;
	int fd, ret;

	if (!s->ptp)
		return 0;
	fd = tcmd_ports_accept(s->ports, 0, tsync_deadline_ms(s->ctx->cfg->idle_timeout_ms));
	if (fd < 0)
		return fd;
	/* a series base of its own: the host's markers carry it (tcmd_ptp.c) */
	if (getrandom(&base, sizeof(base), 0) != sizeof(base))
		base = (uint32_t)s->base.id << 16;
	snprintf(tag, sizeof(tag), "tp%" PRIx64, s->base.id);
	c.fd = fd;
	c.tag = tag;
	c.series = (base & 0x3fffffff) | 0x1000;
	ret = tcmd_ptp_start(&c, &s->sync);
	if (!ret)	/* its thread is new */
		agent_rec_hide_new(s->rec);
	return ret;
}

/* Sends the metadata as SEND_DATA chunks, then FIN_DATA. */
static int send_meta(struct tcmd_session *s)
{
	struct tracedat_opts o = {
		.has_traceid = 1, .traceid = s->trace_id, .version = "tsync-agent",
		.ts_offset = s->opts.ts_offset,	/* --ts-offset after -A, as trace-cmd's agent */
	};
	/* the host reads it only after its first time sync of every CPU */
	int64_t dl = tsync_deadline_ms(s->ctx->cfg->idle_timeout_ms);
	char chunk[TCMD_DATA_MAX];
	int fd, ret;
	off_t off = 0;
	ssize_t n;

	/* trace-cmd's agent writes its default format (version 7, zstd)
	 * unless the argv has --file-version or --compression (tsync-host's
	 * tcmd: mode sends --file-version 6); checked at TRACE_REQ */
	if (tracedat_format_from_args(s->opts.file_version, s->opts.compression,
				      &o.format))
		return -EINVAL;
	fd = memfd_create("tsync-tcmd-meta", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = tracedat_write_meta(fd, tracemeta_meta(s->meta), &o, s->ctx->ncpus);
	while (!ret && (n = pread(fd, chunk, sizeof(chunk), off)) > 0) {
		ret = tcmd_conn_send_by(&s->conn, s->buf,
					tcmd_enc_send_data(s->buf, sizeof(s->buf), chunk,
							   (size_t)n), dl, NULL, 0);
		off += n;
	}
	close(fd);
	if (!ret)
		ret = tcmd_conn_send_by(&s->conn, s->buf,
					tcmd_enc_simple(s->buf, sizeof(s->buf), TCMD_FIN_DATA),
					dl, NULL, 0);
	if (ret)
		log_warn("%s: trace-cmd metadata not sent: %s", s->peer->name, strerror(-ret));
	else
		log_info("%s: trace-cmd session: %lld bytes of metadata sent", s->peer->name,
			 (long long)off);
	return ret;
}

/* Waits for CLOSE (answering other messages with NOT_SUPP, as trace-cmd
 * does). Returns 0 at CLOSE or -errno. */
static int wait_close(struct tcmd_session *s)
{
	struct tcmd_msg m;
	char err[200];
	int ret, strays = 0;

	for (;;) {
		ret = tcmd_conn_recv_idle(&s->conn, &m, -1, err, sizeof(err));
		if (ret) {
			log_warn("%s: trace-cmd session ended without CLOSE: %s",
				 s->peer->name, err);
			return ret;
		}
		if (m.cmd == TCMD_CLOSE)
			return 0;
		if (++strays > 16)
			return -EPROTO;
		if (m.cmd != TCMD_NOT_SUPP)
			refuse(s, "%s is not expected while recording",
			       tcmd_cmd_name(m.cmd));
	}
}

/* Claims CPU @cpu of session @arg and streams it into @fd; a
 * tcmd_ports_accept_each() callback. */
static int stream_cpu(void *arg, int cpu, int fd)
{
	struct tcmd_session *s = arg;
	char why[TSYNC_REASON_MAX];

	if (agent_rec_claim(s->rec, (uint32_t)cpu, why, sizeof(why))) {
		log_err("%s: cpu %d: %s", s->peer->name, cpu, why);
		return -EPROTO;
	}
	return agent_rec_stream(s->rec, (uint32_t)cpu, fd, s->peer->name, false);
}

/* Records from the first data to CLOSE_RESP. */
static int record(struct tcmd_session *s)
{
	const struct agent_cfg *cfg = s->ctx->cfg;
	uint32_t n = agent_rec_ncpus(s->rec);
	struct tsync_cpu_stats *cs = calloc(n, sizeof(*cs));
	char err[TSYNC_REASON_MAX];
	uint64_t bytes = 0;
	int ret;

	if (!cs)
		return -ENOMEM;
	ret = agent_rec_start(s->rec, err, sizeof(err));
	if (ret) {
		log_err("%s: %s", s->peer->name, err);
		goto out;
	}
	ret = tcmd_ports_accept_each(s->ports, s->ptp ? 1 : 0,
				     tsync_deadline_ms(cfg->idle_timeout_ms), stream_cpu, s);
	if (ret)
		goto out;
	log_info("%s: trace-cmd session recording into %s (%d CPUs, clock %s)",
		 s->peer->name, agent_rec_name(s->rec), s->ctx->ncpus,
		 s->opts.clock ? s->opts.clock : "local");
	ret = wait_close(s);
	agent_rec_stop(s->rec, cs);	/* streams late: logged */
	if (ret)
		goto out;
	for (uint32_t cpu = 0; cpu < n; cpu++)
		bytes += cs[cpu].bytes;
	log_info("%s: trace-cmd session stopped: %llu bytes streamed", s->peer->name,
		 (unsigned long long)bytes);
	ret = tcmd_conn_send(&s->conn, s->buf,
			     tcmd_enc_simple(s->buf, sizeof(s->buf), TCMD_CLOSE_RESP), NULL, 0);
out:
	free(cs);
	return ret;
}

/* Removes what the session made. */
static void cleanup(struct tcmd_session *s)
{
	int samples;

	if (s->sync) {
		/* the host's final round runs after CLOSE: give it time */
		samples = tcmd_ptp_finish(s->sync, tsync_deadline_ms(s->ctx->cfg->idle_timeout_ms));
		if (samples >= 0)
			log_info("%s: trace-cmd time sync: %d samples", s->peer->name, samples);
		tcmd_ptp_free(s->sync);
	}
	agent_rec_free(s->rec);	/* streams ended before their connections close */
	tcmd_ports_close(s->ports);
	tracemeta_free(s->meta);
	tsync_recopt_free(&s->opts);
	if (s->registered)
		agent_registry_remove(s->ctx->reg, &s->base);
}

/* Registers the session (--max-sessions) and draws its trace id. */
static int enter(struct tcmd_session *s)
{
	int ret;

	if (s->ctx->cfg->key) {
		refuse(s, "this agent requires authentication (--key-file), which "
		       "trace-cmd cannot give: use tsync-host");
		return -EACCES;
	}
	if (!s->ctx->tracefs->usable) {
		refuse(s, "no tracefs on the guest: %s", s->ctx->tracefs->why);
		return -ENODEV;
	}
	ret = agent_registry_add_tcmd(s->ctx->reg, &s->base, &s->base.id);
	if (ret) {
		refuse(s, "%s", ret == -EBUSY ? "too many sessions (--max-sessions; "
		       "trace-cmd sessions may hold half of them)" :
		       "the agent is shutting down");
		return ret;
	}
	s->registered = true;
	if (getrandom(&s->trace_id, sizeof(s->trace_id), 0) != sizeof(s->trace_id))
		return -EIO;
	return 0;
}

/* Serves one trace-cmd session; see tcmd_session.h. */
void agent_tcmd_serve(const struct agent_ctx *ctx, struct agent_conn *c)
{
	struct tcmd_session *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return;
	tsync_recopt_init(&s->opts);
	s->ctx = ctx;
	s->fd = agent_conn_fd(c);
	s->peer = agent_conn_peer(c);
	/* the connection table owns the socket: never tcmd_conn_close()d */
	tcmd_conn_init(&s->conn, s->fd, "the host", false, ctx->cfg->io_timeout_ms);
	s->base.ctx = ctx;
	s->base.fd = s->fd;
	s->base.peer = s->peer;
	ret = recv_request(s);
	if (!ret)
		ret = enter(s);
	if (!ret) {
		agent_conntab_authenticated(ctx->conns, c);
		ret = setup(s);
	}
	if (!ret)
		ret = respond(s);
	if (!ret)
		ret = start_sync(s);
	if (!ret)
		ret = send_meta(s);
	if (!ret)
		ret = record(s);
	if (ret)
		log_info("%s: trace-cmd session ended: %s", s->peer->name, strerror(-ret));
	else
		log_info("%s: trace-cmd session done", s->peer->name);
	cleanup(s);
	free(s);
}
