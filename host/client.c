// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host's connection to one agent: hello and version negotiation,
 * session setup, and the host side of sync rounds.
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

#include "common/auth.h"
#include "common/cpu.h"
#include "common/log.h"
#include "common/msgio.h"
#include "common/probeio.h"
#include "common/stamp_round.h"
#include "common/timeutil.h"
#include "common/transport.h"
#include "common/tsync_record.h"
#include "host/client.h"

struct tsync_client {
	int fd;
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

int client_fd(const struct tsync_client *c)
{
	return c->fd;
}

const char *client_peer(const struct tsync_client *c)
{
	return c->peer.name;
}

const struct tsync_decode_ctx *client_dctx(const struct tsync_client *c)
{
	return &c->dctx;
}

int client_io_timeout(const struct tsync_client *c)
{
	return c->opts.io_timeout_ms;
}

/* Returns the deadline of one message exchange. */
static int64_t io_deadline(const struct tsync_client *c)
{
	return tsync_deadline_ms(c->opts.io_timeout_ms);
}

/* Picks the stamp source for a trace clock; see client.h. */
unsigned int client_default_source(const char *clock)
{
	static const char *const direct[] = { "mono", "mono_raw", "boot", "tai" };

	for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++)
		if (!strcmp(clock, direct[i]))
			return TSYNC_STAMP_CLOCK;
	if (!strcmp(clock, "x86-tsc"))
		return TSYNC_STAMP_TSC;
	return TSYNC_STAMP_MARKER;
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
		snprintf(err, errlen, "%s: the agent does not authenticate itself (it has no "
			 "--key-file) but we were given a key: refusing it", c->peer.name);
		return -EACCES;
	}
	if (!tsync_auth_check(key, TSYNC_AUTH_AGENT, hnonce, r->nonce, r->mac)) {
		snprintf(err, errlen, "%s: authentication failed: the agent's key differs "
			 "from --key-file", c->peer.name);
		return -EACCES;
	}
	tsync_msg_init(&m, TSYNC_MSG_AUTH);
	ret = tsync_auth_mac(key, TSYNC_AUTH_HOST, hnonce, r->nonce, m.auth.mac);
	if (!ret)
		ret = tsync_msg_send(c->fd, &m, io_deadline(c));
	if (ret)
		snprintf(err, errlen, "%s: sending AUTH: %s", c->peer.name, strerror(-ret));
	return ret;
}

/* Connects, says hello, sets up the session; see client.h. */
int client_open(const struct tsync_endpoint *ep, const struct client_opts *o,
		struct tsync_client **out, char *err, size_t errlen)
{
	struct tsync_client *c = calloc(1, sizeof(*c));
	uint8_t hnonce[TSYNC_NONCE_LEN] = { 0 };
	struct tsync_key *key = NULL;
	struct tsync_msg m;
	char why[256];
	int ret;

	if (!c)
		return -ENOMEM;
	if (o->key_file) {
		ret = tsync_key_load(o->key_file, &key, err, errlen);
		if (!ret)
			ret = tsync_auth_nonce(hnonce);
		if (ret) {
			tsync_key_free(key);
			free(c);
			return ret;
		}
	}
	c->opts = *o;
	c->next_round = 1;
	c->dctx.max_payload = TSYNC_MSG_MAX;
	/* Marker instances of host processes that were killed. */
	if (tsync_stamp_cleanup_stale("tsync-h") > 0)
		log_debug("removed stale host marker instances");
	c->fd = tsync_connect(ep, o->connect_timeout_ms, &c->peer, err, errlen);
	if (c->fd < 0) {
		ret = c->fd;
		tsync_key_free(key);
		free(c);
		return ret;
	}

	tsync_msg_init(&m, TSYNC_MSG_HELLO);
	m.hello.ver_min = TSYNC_PROTO_VERSION_MIN;
	m.hello.ver_max = TSYNC_PROTO_VERSION_MAX;
	m.hello.kind = TSYNC_CONN_CONTROL;
	m.hello.caps = TSYNC_CAP_TRACE | (key ? TSYNC_CAP_AUTH_HMAC : 0);
	memcpy(m.hello.nonce, hnonce, sizeof(hnonce));
	ret = tsync_msg_send(c->fd, &m, io_deadline(c));
	if (ret) {
		snprintf(err, errlen, "%s: sending HELLO: %s", c->peer.name, strerror(-ret));
		goto fail;
	}
	ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_HELLO_REPLY, &m, &c->dctx,
				    io_deadline(c), why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: %s", c->peer.name, why);
		goto fail;
	}
	if (m.hello_reply.version < TSYNC_PROTO_VERSION_MIN ||
	    m.hello_reply.version > TSYNC_PROTO_VERSION_MAX) {
		snprintf(err, errlen, "%s: agent chose protocol version %u, we speak %u-%u",
			 c->peer.name, m.hello_reply.version, (unsigned int)TSYNC_PROTO_VERSION_MIN,
			 (unsigned int)TSYNC_PROTO_VERSION_MAX);
		ret = TSYNC_PERR_NO_COMMON_VERSION;
		goto fail;
	}
	if (key) {
		ret = client_auth(c, key, hnonce, &m.hello_reply, err, errlen);
		if (ret)
			goto fail;
	}

	tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
	m.session_req.trace_id = o->host_trace_id;
	snprintf(m.session_req.name, sizeof(m.session_req.name), "%s",
		 o->host_name ? o->host_name : "host");
	ret = tsync_msg_send(c->fd, &m, io_deadline(c));
	if (ret) {
		snprintf(err, errlen, "%s: sending SESSION_REQ: %s", c->peer.name, strerror(-ret));
		goto fail;
	}
	ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_SESSION_REPLY, &m, &c->dctx,
				    io_deadline(c), why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: %s", c->peer.name, why);
		goto fail;
	}
	c->session = m.session_reply;
	tsync_msg_free(&m);
	if (!c->session.ncpus || c->session.ncpus > TSYNC_MAX_CPUS) {
		snprintf(err, errlen, "%s: agent reports %u CPUs", c->peer.name, c->session.ncpus);
		ret = -EPROTO;
		goto fail;
	}
	c->dctx.ncpus = c->session.ncpus;
	log_debug("%s: session %llx, %u CPUs, clock %s", c->peer.name,
		  (unsigned long long)c->session.session_id, c->session.ncpus,
		  c->session.clock);
	tsync_key_free(key);
	*out = c;
	return 0;
fail:
	tsync_key_free(key);
	close(c->fd);
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

/* The probe loop: @n probes, stamping t1/t4 into @hp. Returns 0 or error. */
static int probe_loop(struct tsync_client *c, uint32_t round, uint32_t cpu,
		      uint32_t n, bool busy, struct tsync_host_probe *hp,
		      char *err, size_t errlen)
{
	struct tsync_msg other;
	uint32_t rr, seq;
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		hp[i].seq = i;
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
	}
	return 0;
}

/* Runs one round on guest CPU @cpu; see client.h. */
int client_sync_round(struct tsync_client *c, uint32_t cpu,
		      const struct round_opts *o, struct round_result *res)
{
	int nhost = tsync_cpu_count();
	int host_cpu = o->host_cpu >= 0 ? o->host_cpu : (int)(cpu % (uint32_t)nhost);
	bool busy = o->busy > 0;
	struct tsync_host_probe *hp = NULL;
	struct tsync_guest_probe *gp = NULL;
	uint32_t round = c->next_round++;
	int64_t start = tsync_now_ns();
	struct tsync_msg m;
	cpu_set_t old;
	int ret;

	memset(res, 0, sizeof(*res));
	res->round_id = round;
	res->cpu = cpu;
	res->host_cpu = host_cpu;
	if (cpu >= c->session.ncpus)
		return round_fail(res, -EINVAL, "guest CPU %u does not exist (%u CPUs)",
				  cpu, c->session.ncpus);
	{
		char tag[32];

		snprintf(tag, sizeof(tag), "h%d", c->fd);
		ret = tsync_stamp_cache_get(&c->stamps, o->source, o->clock, tag);
	}
	if (ret)
		return round_fail(res, ret, "host timestamps for clock %s (%s): %s", o->clock,
				  tsync_stamp_source_name(o->source), strerror(-ret));
	hp = calloc(o->nprobes, sizeof(*hp));
	if (!hp)
		return -ENOMEM;
	ret = tsync_cpu_pin(host_cpu, &old);
	if (ret) {
		free(hp);
		return round_fail(res, ret, "cannot pin the host thread to CPU %d: %s",
				  host_cpu, strerror(-ret));
	}

	ret = tsync_probe_prepare(c->fd, c->opts.io_timeout_ms);
	if (ret) {
		snprintf(res->error, sizeof(res->error), "SO_RCVTIMEO: %s", strerror(-ret));
		goto fatal;
	}
	tsync_msg_init(&m, TSYNC_MSG_SYNC_START);
	m.flags = busy ? TSYNC_SYNC_F_BUSY : 0;
	m.sync_start.round_id = round;
	m.sync_start.cpu = cpu;
	m.sync_start.nprobes = o->nprobes;
	m.sync_start.source = (uint8_t)o->source;
	snprintf(m.sync_start.clock, sizeof(m.sync_start.clock), "%s", o->clock);
	ret = tsync_msg_send(c->fd, &m, io_deadline(c));
	if (ret) {
		snprintf(res->error, sizeof(res->error), "sending SYNC_START: %s", strerror(-ret));
		goto fatal;
	}
	ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_SYNC_READY, &m, &c->dctx,
				    io_deadline(c), res->error, sizeof(res->error));
	if (ret)
		goto fatal;
	if (m.sync_ready.status) {
		round_fail(res, -EIO, "agent cannot run round on CPU %u: %s", cpu,
			   tsync_err_name(m.sync_ready.status));
		ret = 0;
		goto out;
	}

	ret = probe_loop(c, round, cpu, o->nprobes, busy, hp, res->error, sizeof(res->error));
	if (ret)
		goto fatal;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_END);
	m.sync_end.round_id = round;
	ret = tsync_msg_send(c->fd, &m, io_deadline(c));
	if (ret) {
		snprintf(res->error, sizeof(res->error), "sending SYNC_END: %s", strerror(-ret));
		goto fatal;
	}
	ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_SYNC_STAMPS, &m, &c->dctx,
				    io_deadline(c), res->error, sizeof(res->error));
	if (ret)
		goto fatal;
	if (m.sync_stamps.round_id != round || m.sync_stamps.cpu != cpu) {
		snprintf(res->error, sizeof(res->error), "stamps of round %u CPU %u, expected %u CPU %u",
			 m.sync_stamps.round_id, m.sync_stamps.cpu, round, cpu);
		tsync_msg_free(&m);
		ret = -EPROTO;
		goto fatal;
	}
	ret = TSYNC_STAMP_RESOLVE_PAIRS(c->stamps.stamper, host_cpu, round, hp,
					o->nprobes, t1, TSYNC_DIR_HOST_SEND,
					t4, TSYNC_DIR_HOST_RECV);
	if (ret) {
		tsync_msg_free(&m);
		round_fail(res, ret, "host timestamps of round %u lost: %s", round, strerror(-ret));
		ret = 0;
		goto out;
	}
	gp = calloc(m.sync_stamps.count ? m.sync_stamps.count : 1, sizeof(*gp));
	if (!gp) {
		tsync_msg_free(&m);
		ret = -ENOMEM;
		goto fatal;
	}
	for (uint32_t i = 0; i < m.sync_stamps.count; i++)
		gp[i] = (struct tsync_guest_probe){ m.sync_stamps.stamps[i].seq,
						    m.sync_stamps.stamps[i].t2,
						    m.sync_stamps.stamps[i].t3 };
	ret = tsync_estimate_round(hp, o->nprobes, gp, m.sync_stamps.count,
				   o->estimator, &res->est);
	tsync_msg_free(&m);
	res->round_ns = tsync_now_ns() - start;
	if (ret) {
		round_fail(res, ret, "no usable probe in round %u: %s", round,
			   ret == -ENODATA ? "all probes invalid" : strerror(-ret));
		ret = 0;
		goto out;
	}

	tsync_msg_init(&m, TSYNC_MSG_SYNC_RESULT);
	m.sync_result.round_id = round;
	m.sync_result.cpu = cpu;
	m.sync_result.offset_ns = res->est.offset_ns;
	m.sync_result.error_ns = (uint64_t)res->est.error_ns;
	m.sync_result.delay_ns = (uint64_t)res->est.delay_ns;
	m.sync_result.used = res->est.used;
	m.sync_result.sent = res->est.sent;
	ret = tsync_msg_send(c->fd, &m, io_deadline(c));
	if (ret) {
		snprintf(res->error, sizeof(res->error), "sending SYNC_RESULT: %s", strerror(-ret));
		goto fatal;
	}
	goto out;
fatal:
	res->status = ret;
out:
	tsync_cpu_unpin(&old);
	free(hp);
	free(gp);
	return res->status && ret ? ret : 0;
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
	close(c->fd);
	free(c);
}
