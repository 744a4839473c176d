// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host's connection to one agent: every exchange of the protocol on
 * the host side. Hello (the same code for the control and the data
 * connections), authentication, session setup, sync rounds, trace start
 * and stop, stream hellos and the metadata transfer, each with a
 * deadline; callers (host/guest.c, host/sync_cmd.c) never see a message.
 *
 * Theory of operation of a sync round (host side; see agent/round.c for the
 * guest side): the host pins its thread to one host CPU for the whole
 * round, sends SYNC_START and waits for SYNC_READY (the guest thread is
 * pinned to the guest CPU by then). For each probe it stamps t1 right
 * before writing PROBE and t4 right after reading PROBE_REPLY. After the
 * last probe it sends SYNC_END, receives the guest's (seq, t2, t3) list in
 * one SYNC_STAMPS message, resolves its own marker stamps if it used
 * markers, and estimates (host/estimate.c). It then tells the agent the
 * result (SYNC_RESULT) so that the guest trace can carry it too.
 *
 * One probe is in flight at a time: a probe's t1..t4 must not include
 * queueing behind another probe, or delay and offset both degrade.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "common/auth.h"
#include "common/errbuf.h"
#include "common/cpu.h"
#include "common/instance.h"
#include "common/log.h"
#include "common/msgio.h"
#include "common/probeio.h"
#include "common/stamp_round.h"
#include "common/timeutil.h"
#include "common/transport.h"
#include "common/tracemeta.h"
#include "proto/tsync_record.h"
#include "host/cancel.h"
#include "host/client.h"
#include "host/round_stop.h"

struct tsync_client {
	int fd;
	struct tsync_endpoint ep;	/* data connections go there too */
	struct tsync_peer peer;
	struct client_opts opts;
	struct tsync_session_reply session;
	struct tsync_decode_ctx dctx;
	uint32_t next_round;

	struct tsync_stamp_cache stamps;	/* host stamps, kept across rounds */
};

/* Accessors; see client.h. */
const struct tsync_session_reply *client_session(const struct tsync_client *c)
{
	return &c->session;
}

const char *client_peer(const struct tsync_client *c)
{
	return c->peer.name;
}

/* Returns the deadline of one message exchange. */
static int64_t io_deadline(const struct tsync_client *c)
{
	return tsync_deadline_ms(c->opts.io_timeout_ms);
}

/* Sends @m on @fd; on failure says which message in @err. */
static int send_msg(const struct tsync_client *c, int fd, const struct tsync_msg *m,
		    char *err, size_t errlen)
{
	int ret = tsync_msg_send(fd, m, io_deadline(c));

	if (ret)
		tsync_set_err(err, errlen, "%s: sending %s: %s", c->peer.name,
			      tsync_msg_name(m->type), strerror(-ret));
	return ret;
}

/* Receives a message of @type on @fd by @deadline into @m; on failure the
 * reason in @err names the agent. */
static int recv_msg(const struct tsync_client *c, int fd, uint8_t type, struct tsync_msg *m,
		    int64_t deadline, char *err, size_t errlen)
{
	char why[256];
	int ret = tsync_msg_recv_expect(fd, type, m, &c->dctx, deadline, why, sizeof(why));

	if (ret)
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
	return ret;
}

/* Checks the agent's answer to our nonce @hnonce in @r and sends ours to
 * its nonce. Returns 0, or -EACCES / -errno with the reason in @err. */
static int client_auth(struct tsync_client *c, const struct tsync_key *key,
		       const uint8_t *hnonce, const struct tsync_hello_reply *r,
		       char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	if (!(r->caps & TSYNC_CAP_AUTH_HMAC)) {
		tsync_set_err(err, errlen, "%s: the agent does not authenticate itself (it has no "
			      "--key-file) but we were given a key: refusing it", c->peer.name);
		return -EACCES;
	}
	if (!tsync_auth_check(key, TSYNC_AUTH_AGENT, hnonce, r->nonce, r->mac)) {
		tsync_set_err(err, errlen, "%s: authentication failed: the agent's key differs "
			      "from --key-file", c->peer.name);
		return -EACCES;
	}
	tsync_msg_init(&m, TSYNC_MSG_AUTH);
	ret = tsync_auth_mac(key, TSYNC_AUTH_HOST, hnonce, r->nonce, m.auth.mac);
	if (ret) {
		tsync_set_err(err, errlen, "%s: AUTH: %s", c->peer.name, strerror(-ret));
		return ret;
	}
	return send_msg(c, c->fd, &m, err, errlen);
}

/*
 * Says HELLO on @fd (a control connection when @data is NULL, else the
 * data connection of CPU *@data) and checks the HELLO_REPLY, which is
 * returned in @reply. The one hello of both kinds of connection.
 */
static int say_hello(struct tsync_client *c, int fd, const uint32_t *data,
		     const uint8_t *nonce, struct tsync_hello_reply *reply,
		     char *err, size_t errlen)
{
	struct tsync_msg m;
	char why[256];
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_HELLO);
	m.hello.ver_min = TSYNC_PROTO_VERSION_MIN;
	m.hello.ver_max = TSYNC_PROTO_VERSION_MAX;
	m.hello.kind = data ? TSYNC_CONN_DATA : TSYNC_CONN_CONTROL;
	m.hello.caps = TSYNC_CAP_TRACE | (nonce ? TSYNC_CAP_AUTH_HMAC : 0);
	if (nonce)
		memcpy(m.hello.nonce, nonce, TSYNC_NONCE_LEN);
	if (data) {
		m.hello.session_id = c->session.session_id;
		m.hello.cpu = *data;
		memcpy(m.hello.secret, c->session.secret, TSYNC_SECRET_LEN);
	}
	ret = send_msg(c, fd, &m, err, errlen);
	if (!ret)
		ret = recv_msg(c, fd, TSYNC_MSG_HELLO_REPLY, &m, io_deadline(c), err, errlen);
	if (ret)
		return ret;
	*reply = m.hello_reply;
	ret = tsync_proto_check_choice(TSYNC_PROTO_VERSION_MIN, TSYNC_PROTO_VERSION_MAX,
				       reply, why, sizeof(why));
	if (ret) {
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
		return ret;
	}
	/* from now on the control connection refuses other versions */
	if (!data)
		c->dctx.version = reply->version;
	return 0;
}

/* SESSION_REQ / SESSION_REPLY: fills c->session and checks its CPU count. */
static int open_session(struct tsync_client *c, char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
	m.session_req.trace_id = c->opts.host_trace_id;
	snprintf(m.session_req.name, sizeof(m.session_req.name), "%s",
		 c->opts.host_name ? c->opts.host_name : "host");
	ret = send_msg(c, c->fd, &m, err, errlen);
	if (!ret)
		ret = recv_msg(c, c->fd, TSYNC_MSG_SESSION_REPLY, &m, io_deadline(c), err, errlen);
	if (ret)
		return ret;
	c->session = m.session_reply;
	tsync_msg_free(&m);
	if (!c->session.ncpus || c->session.ncpus > TSYNC_MAX_CPUS) {
		tsync_set_err(err, errlen, "%s: agent reports %u CPUs", c->peer.name,
			      c->session.ncpus);
		return -EPROTO;
	}
	c->dctx.ncpus = c->session.ncpus;
	log_debug("%s: session %llx, %u CPUs, clock %s", c->peer.name,
		  (unsigned long long)c->session.session_id, c->session.ncpus,
		  c->session.clock);
	return 0;
}

/* Hello (and authentication with @key) on the control connection. */
static int control_hello(struct tsync_client *c, const struct tsync_key *key,
			 char *err, size_t errlen)
{
	uint8_t hnonce[TSYNC_NONCE_LEN] = { 0 };
	struct tsync_hello_reply r;
	int ret;

	if (key) {
		ret = tsync_auth_nonce(hnonce);
		if (ret) {
			tsync_set_err(err, errlen, "nonce: %s", strerror(-ret));
			return ret;
		}
	}
	ret = say_hello(c, c->fd, NULL, key ? hnonce : NULL, &r, err, errlen);
	if (!ret && key)
		ret = client_auth(c, key, hnonce, &r, err, errlen);
	return ret;
}

/* Connects, says hello, sets up the session; see client.h. */
int client_open(const struct tsync_endpoint *ep, const struct client_opts *o,
		struct tsync_client **out, char *err, size_t errlen)
{
	struct tsync_client *c = calloc(1, sizeof(*c));
	struct tsync_key *key = NULL;
	int ret;

	if (!c)
		return -ENOMEM;
	c->opts = *o;
	c->ep = *ep;
	if (!c->opts.connect)
		c->opts.connect = tsync_connect;
	if (c->opts.meta_timeout_ms <= 0)
		c->opts.meta_timeout_ms = CLIENT_META_DEADLINE_MS;
	if (!c->opts.meta_max_chunks)
		c->opts.meta_max_chunks = CLIENT_META_MAX_CHUNKS;
	c->next_round = 1;
	c->dctx.max_payload = TSYNC_MSG_MAX;
	c->fd = -1;
	if (o->key_file) {
		ret = tsync_key_load(o->key_file, &key, err, errlen);
		if (ret)
			goto fail;
	}
	/* Marker instances of host processes that were killed. */
	if (tsync_instance_cleanup_stale("tsync-h") > 0)
		log_debug("removed stale host marker instances");
	c->fd = c->opts.connect(ep, o->connect_timeout_ms, &c->peer, err, errlen);
	if (c->fd < 0) {
		ret = c->fd;
		goto fail;
	}
	ret = host_cancel_add(o->cancel, c->fd);
	if (ret) {
		tsync_set_err(err, errlen, "%s: %s", c->peer.name, strerror(-ret));
		close(c->fd);
		c->fd = -1;
		goto fail;
	}
	ret = control_hello(c, key, err, errlen);
	if (!ret)
		ret = open_session(c, err, errlen);
	if (ret)
		goto fail;
	tsync_key_free(key);
	*out = c;
	return 0;
fail:
	tsync_key_free(key);
	if (c->fd >= 0) {
		host_cancel_remove(o->cancel, c->fd);
		close(c->fd);
	}
	free(c);
	return ret;
}

/* Sets a round-level failure in @res; returns 0 (the session goes on). */
static int round_fail(struct round_result *res, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int round_fail(struct round_result *res, int status, const char *fmt, ...)
{
	va_list ap;

	res->status = status;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	return 0;
}

/* The probe loop: up to @n probes, stamping t1/t4 into @hp, until @stop
 * says more probes would not help. Returns 0 with the probes sent in
 * *@sent, or error. */
static int probe_loop(struct tsync_client *c, uint32_t round, uint32_t cpu,
		      uint32_t n, bool busy, struct tsync_stopper *stop,
		      struct tsync_host_probe *hp, uint32_t *sent, char *err, size_t errlen)
{
	struct tsync_msg other;
	uint32_t rr, seq;
	int64_t t0;
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		hp[i].seq = i;
		/* the stamps may be resolved only after the round: the stopping
		 * rule gets its round trips from the monotonic clock */
		t0 = tsync_now_ns();
		ret = tsync_stamp_take(c->stamps.stamper, round, i, TSYNC_DIR_HOST_SEND, cpu, &hp[i].t1);
		if (ret) {
			snprintf(err, errlen, "timestamp: %s", strerror(-ret));
			return ret;
		}
		ret = tsync_probe_send(c->fd, TSYNC_MSG_PROBE, round, i, io_deadline(c));
		if (ret) {
			snprintf(err, errlen, "sending probe %u: %s", i, strerror(-ret));
			return ret;
		}
		ret = tsync_probe_recv(c->fd, TSYNC_MSG_PROBE_REPLY, busy, io_deadline(c),
				       &rr, &seq, &other, &c->dctx, err, errlen);
		if (ret == 1) {
			ret = tsync_msg_expect(&other, TSYNC_MSG_PROBE_REPLY, err, errlen);
			tsync_msg_free(&other);
			return ret ? ret : -EPROTO;
		}
		if (ret)
			return ret;
		ret = tsync_stamp_take(c->stamps.stamper, round, i, TSYNC_DIR_HOST_RECV, cpu, &hp[i].t4);
		if (ret) {
			snprintf(err, errlen, "timestamp: %s", strerror(-ret));
			return ret;
		}
		if (rr != round || seq != i) {
			snprintf(err, errlen, "reply %u of round %u to probe %u of round %u",
				 seq, rr, i, round);
			return -EPROTO;
		}
		*sent = i + 1;
		if (tsync_stopper_add(stop, tsync_now_ns() - t0))
			break;
	}
	return 0;
}

/* One round in progress. */
struct round_ctx {
	const struct round_opts *o;
	uint32_t round, cpu;
	int host_cpu;
	bool busy;
	struct tsync_host_probe *hp;	/* [o->nprobes] host stamps */
	struct tsync_stopper *stop;	/* when to end the probe loop */
	uint32_t sent;			/* probes sent (<= o->nprobes) */
};

/* Sends @m of the round; a failure is fatal for the session. */
static int round_send(struct tsync_client *c, const struct tsync_msg *m,
		      struct round_result *res)
{
	int ret = tsync_msg_send(c->fd, m, io_deadline(c));

	if (ret)
		snprintf(res->error, sizeof(res->error), "sending %s: %s",
			 tsync_msg_name(m->type), strerror(-ret));
	return ret;
}

/* SYNC_START and SYNC_READY. Returns 0, 1 when the agent refused the
 * round (res->status set), or a fatal error. */
static int round_start(struct tsync_client *c, const struct round_ctx *rc,
		       struct round_result *res)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_START);
	m.flags = (rc->busy ? TSYNC_SYNC_F_BUSY : 0) |
		  (rc->o->ns_clock ? TSYNC_SYNC_F_NS_CLOCK : 0);
	m.sync_start.round_id = rc->round;
	m.sync_start.cpu = rc->cpu;
	m.sync_start.nprobes = rc->o->nprobes;
	m.sync_start.source = (uint8_t)rc->o->source;
	snprintf(m.sync_start.clock, sizeof(m.sync_start.clock), "%s", rc->o->clock);
	ret = round_send(c, &m, res);
	if (!ret)
		ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_SYNC_READY, &m, &c->dctx,
					    io_deadline(c), res->error, sizeof(res->error));
	if (ret)
		return ret;
	if (m.sync_ready.status) {
		round_fail(res, -EIO, "agent cannot run round on CPU %u: %s", rc->cpu,
			   tsync_err_name(m.sync_ready.status));
		return 1;
	}
	return 0;
}

/* Estimates the round from the host stamps and the agent's SYNC_STAMPS
 * @st. Returns 0, 1 for a round-level failure (res->status set), or a
 * fatal error. */
static int round_estimate(struct tsync_client *c, const struct round_ctx *rc,
			  const struct tsync_sync_stamps *st, struct round_result *res)
{
	struct tsync_guest_probe *gp;
	int ret;

	ret = TSYNC_STAMP_RESOLVE_PAIRS(c->stamps.stamper, rc->host_cpu, rc->round, rc->hp,
					rc->sent, t1, TSYNC_DIR_HOST_SEND,
					t4, TSYNC_DIR_HOST_RECV);
	if (ret) {
		round_fail(res, ret, "host timestamps of round %u lost: %s", rc->round,
			   strerror(-ret));
		return 1;
	}
	gp = calloc(st->count ? st->count : 1, sizeof(*gp));
	if (!gp)
		return -ENOMEM;
	for (uint32_t i = 0; i < st->count; i++)
		gp[i] = (struct tsync_guest_probe){ st->stamps[i].seq, st->stamps[i].t2,
						    st->stamps[i].t3 };
	ret = tsync_estimate_round(rc->hp, rc->sent, gp, st->count, rc->o->estimator,
				   &res->est);
	free(gp);
	if (ret) {
		round_fail(res, ret, "no usable probe in round %u: %s", rc->round,
			   ret == -ENODATA ? "all probes invalid" : strerror(-ret));
		return 1;
	}
	return 0;
}

/* SYNC_END, SYNC_STAMPS and the estimate. Returns 0, 1 for a round-level
 * failure (res->status set), or a fatal error. */
static int round_finish(struct tsync_client *c, const struct round_ctx *rc,
			struct round_result *res)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_END);
	m.sync_end.round_id = rc->round;
	ret = round_send(c, &m, res);
	if (!ret)
		ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_SYNC_STAMPS, &m, &c->dctx,
					    io_deadline(c), res->error, sizeof(res->error));
	if (ret)
		return ret;
	if (m.sync_stamps.round_id != rc->round || m.sync_stamps.cpu != rc->cpu) {
		snprintf(res->error, sizeof(res->error), "stamps of round %u CPU %u, expected %u CPU %u",
			 m.sync_stamps.round_id, m.sync_stamps.cpu, rc->round, rc->cpu);
		ret = -EPROTO;
	} else {
		ret = round_estimate(c, rc, &m.sync_stamps, res);
	}
	tsync_msg_free(&m);
	return ret;
}

/* Tells the agent the round's result (SYNC_RESULT). */
static int round_report(struct tsync_client *c, const struct round_ctx *rc,
			struct round_result *res)
{
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_RESULT);
	m.sync_result.round_id = rc->round;
	m.sync_result.cpu = rc->cpu;
	m.sync_result.offset_ns = res->est.offset_ns;
	m.sync_result.error_ns = (uint64_t)res->est.error_ns;
	m.sync_result.delay_ns = (uint64_t)res->est.delay_ns;
	m.sync_result.used = res->est.used;
	m.sync_result.sent = res->est.sent;
	return round_send(c, &m, res);
}

/* The pinned part of a round: start, probes, finish, report. Returns 0
 * (res->status may say the round failed) or a fatal error. */
static int round_run(struct tsync_client *c, struct round_ctx *rc,
		     struct round_result *res, int64_t start)
{
	int ret = tsync_probe_prepare(c->fd, c->opts.io_timeout_ms);

	if (ret) {
		snprintf(res->error, sizeof(res->error), "SO_RCVTIMEO: %s", strerror(-ret));
		return ret;
	}
	ret = round_start(c, rc, res);
	if (!ret) {
		ret = probe_loop(c, rc->round, rc->cpu, rc->o->nprobes, rc->busy, rc->stop,
				 rc->hp, &rc->sent, res->error, sizeof(res->error));
		res->stop = tsync_stopper_reason(rc->stop);
		log_debug("%s: round %u CPU %u: %u probes (%s), round trips from %lld ns",
			  c->peer.name, rc->round, rc->cpu, rc->sent,
			  tsync_stop_reason_name(res->stop),
			  (long long)tsync_stopper_floor(rc->stop));
	}
	if (!ret) {
		ret = round_finish(c, rc, res);
		res->round_ns = tsync_now_ns() - start;
	}
	if (!ret)
		ret = round_report(c, rc, res);
	return ret > 0 ? 0 : ret;
}

/* Runs one round on guest CPU @cpu; see client.h. */
int client_sync_round(struct tsync_client *c, uint32_t cpu,
		      const struct round_opts *o, struct round_result *res)
{
	int nhost = tsync_cpu_count();
	struct round_ctx rc = { .o = o, .round = c->next_round++, .cpu = cpu,
				.host_cpu = o->host_cpu >= 0 ? o->host_cpu : (int)(cpu % (uint32_t)nhost),
				.busy = o->busy > 0 };
	int64_t start = tsync_now_ns();
	char tag[32];
	struct tsync_cpu_mask old = { 0 };
	int ret;

	memset(res, 0, sizeof(*res));
	res->round_id = rc.round;
	res->cpu = cpu;
	res->host_cpu = rc.host_cpu;
	if (cpu >= c->session.ncpus)
		return round_fail(res, -EINVAL, "guest CPU %u does not exist (%u CPUs)",
				  cpu, c->session.ncpus);
	if (o->source == TSYNC_STAMP_TSC && !(c->session.caps & TSYNC_CAP_STAMP_TSC))
		return round_fail(res, -EOPNOTSUPP, "the agent cannot stamp with the TSC "
				  "(it does not announce the capability): use --stamp marker");
	snprintf(tag, sizeof(tag), "h%d", c->fd);
	ret = tsync_stamp_cache_get(&c->stamps, o->source, o->clock,
				    o->ns_clock ? TSYNC_STAMP_NS_CLOCK : 0, tag);
	if (ret)
		return round_fail(res, ret, "host timestamps for clock %s (%s): %s", o->clock,
				  tsync_stamp_source_name(o->source), strerror(-ret));
	rc.hp = calloc(o->nprobes, sizeof(*rc.hp));
	if (!rc.hp)
		return -ENOMEM;
	ret = tsync_stopper_new(o->stop, o->nprobes, o->fixed_count, &rc.stop);
	if (ret) {
		free(rc.hp);
		return round_fail(res, ret, "stopping rule: %s", strerror(-ret));
	}
	ret = tsync_cpu_pin(rc.host_cpu, &old);
	if (ret) {
		free(rc.hp);
		tsync_stopper_free(rc.stop);
		return round_fail(res, ret, "cannot pin the host thread to CPU %d: %s",
				  rc.host_cpu, strerror(-ret));
	}
	ret = round_run(c, &rc, res, start);
	if (ret)
		res->status = ret;
	tsync_cpu_unpin(&old);
	tsync_stopper_free(rc.stop);
	free(rc.hp);
	return ret;
}

/* Starts tracing on the agent; see client.h. */
int client_trace_start(struct tsync_client *c, const struct client_trace_opts *o,
		       uint32_t *nstreams, char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "%s", o->clock);
	m.trace_start.buffer_kb = o->buffer_kb;
	m.trace_start.nevents = o->nevents;
	/* encoding only reads the events */
	m.trace_start.events = (struct tsync_trace_event *)o->events;
	ret = send_msg(c, c->fd, &m, err, errlen);
	/* Creating the instance and enabling events takes the agent a while. */
	if (!ret)
		ret = recv_msg(c, c->fd, TSYNC_MSG_TRACE_STARTED, &m,
			       tsync_deadline_ms(c->opts.io_timeout_ms + 10000), err, errlen);
	if (!ret)
		*nstreams = m.trace_started.ncpus;
	return ret;
}

/* Opens the data connection of @cpu; see client.h. */
int client_stream_open(struct tsync_client *c, uint32_t cpu, int *fd,
		       char *err, size_t errlen)
{
	struct tsync_hello_reply r;
	char why[256];
	int sock, ret;

	sock = c->opts.connect(&c->ep, c->opts.io_timeout_ms, NULL, why, sizeof(why));
	if (sock < 0) {
		tsync_set_err(err, errlen, "%s: data connection for CPU %u: %s", c->peer.name,
			      cpu, why);
		return sock;
	}
	ret = host_cancel_add(c->opts.cancel, sock);
	if (ret) {
		snprintf(why, sizeof(why), "%s", strerror(-ret));
		close(sock);
		sock = -1;
	} else {
		ret = say_hello(c, sock, &cpu, NULL, &r, why, sizeof(why));
	}
	if (ret) {
		tsync_set_err(err, errlen, "data connection for CPU %u: %s", cpu, why);
		if (sock >= 0)
			client_stream_close(c, sock);
		return ret;
	}
	*fd = sock;
	return 0;
}

/* Closes a stream socket; see client.h. */
void client_stream_close(struct tsync_client *c, int fd)
{
	host_cancel_remove(c->opts.cancel, fd);
	close(fd);
}

/* Stops tracing; see client.h. */
int client_trace_stop(struct tsync_client *c, int timeout_ms,
		      struct tsync_trace_stopped *st, char *err, size_t errlen)
{
	struct tsync_msg m;
	int ret;

	tsync_msg_init(&m, TSYNC_MSG_TRACE_STOP);
	ret = send_msg(c, c->fd, &m, err, errlen);
	if (!ret)
		ret = recv_msg(c, c->fd, TSYNC_MSG_TRACE_STOPPED, &m, tsync_deadline_ms(timeout_ms),
			       err, errlen);
	if (!ret)
		*st = m.trace_stopped;	/* the caller owns m's array now */
	return ret;
}

/*
 * Receives the META_CHUNKs up to META_END into @tm, all by @deadline and
 * within the CLIENT_META_* limits: a lying agent can send chunks of kinds
 * we skip, or empty ones, without end.
 */
static int meta_receive(struct tsync_client *c, struct tracemeta *tm, int64_t deadline,
			char *err, size_t errlen)
{
	uint64_t bytes = 0;
	uint32_t chunks = 0;
	struct tsync_msg m;
	char why[256];
	int ret;

	for (;;) {
		int64_t io = io_deadline(c) + 10000 * NSEC_PER_MSEC;

		ret = tsync_msg_recv(c->fd, &m, &c->dctx, io < deadline ? io : deadline,
				     why, sizeof(why));
		if (ret) {
			if (ret == -ETIMEDOUT && tsync_now_ns() >= deadline)
				tsync_set_err(err, errlen, "%s: metadata not complete after %d ms: "
					      "giving up", c->peer.name, c->opts.meta_timeout_ms);
			else
				tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
			return ret;
		}
		if (m.type == TSYNC_MSG_META_END)
			return 0;
		if (m.type != TSYNC_MSG_META_CHUNK) {
			ret = tsync_msg_expect(&m, TSYNC_MSG_META_CHUNK, why, sizeof(why));
			tsync_msg_free(&m);
			tsync_set_err(err, errlen, "%s: %s", c->peer.name, why);
			return ret ? ret : -EPROTO;
		}
		bytes += m.meta_chunk.len;
		if (++chunks > c->opts.meta_max_chunks || bytes > CLIENT_META_MAX_BYTES) {
			tsync_msg_free(&m);
			tsync_set_err(err, errlen, "%s: metadata over the limit of %u chunks or "
				      "%u MiB: refusing it", c->peer.name, c->opts.meta_max_chunks,
				      CLIENT_META_MAX_BYTES >> 20);
			return -E2BIG;
		}
		ret = tracemeta_add_part(tm, m.meta_chunk.kind, m.meta_chunk.system,
					 m.meta_chunk.data, m.meta_chunk.len, m.meta_chunk.more);
		if (ret)
			tsync_set_err(err, errlen, "%s: bad metadata (%s part): %s", c->peer.name,
				      tsync_meta_kind_name(m.meta_chunk.kind), strerror(-ret));
		tsync_msg_free(&m);
		if (ret)
			return ret;
	}
}

/* Fetches the guest's metadata; see client.h. */
int client_fetch_meta(struct tsync_client *c, struct tracemeta **out,
		      char *err, size_t errlen)
{
	struct tracemeta *tm = tracemeta_new();
	struct tsync_msg m;
	int ret;

	if (!tm)
		return -ENOMEM;
	tsync_msg_init(&m, TSYNC_MSG_META_REQ);
	ret = send_msg(c, c->fd, &m, err, errlen);
	if (!ret)
		ret = meta_receive(c, tm, tsync_deadline_ms(c->opts.meta_timeout_ms), err, errlen);
	if (!ret) {
		ret = tracemeta_finish(tm, c->session.page_size);
		if (ret)
			tsync_set_err(err, errlen, "%s: incomplete metadata: %s", c->peer.name,
				      strerror(-ret));
	}
	if (ret) {
		tracemeta_free(tm);
		return ret;
	}
	*out = tm;
	return 0;
}

/* Shuts the connection down so that every call fails at once. */
void client_abort(struct tsync_client *c)
{
	if (c)
		shutdown(c->fd, SHUT_RDWR);
}

/* Says goodbye and frees @c. */
void client_close(struct tsync_client *c)
{
	struct tsync_msg m;

	if (!c)
		return;
	tsync_msg_init(&m, TSYNC_MSG_BYE);
	tsync_msg_send(c->fd, &m, tsync_deadline_ms(500));
	tsync_stamp_cache_close(&c->stamps);
	host_cancel_remove(c->opts.cancel, c->fd);
	close(c->fd);
	free(c);
}
