// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The host side of a sync round (host/peer/client.h: client_sync_round()).
 *
 * Theory of operation of a sync round (host side; see agent/tsync/round.c for the
 * guest side): the host pins its thread to one host CPU for the whole
 * round, sends SYNC_START and waits for SYNC_READY (the guest thread is
 * pinned to the guest CPU by then). For each probe it stamps t1 right
 * before writing PROBE and t4 right after reading PROBE_REPLY. After the
 * last probe it sends SYNC_END, receives the guest's (seq, t2, t3) list in
 * one SYNC_STAMPS message, resolves its own marker stamps if it used
 * markers, and estimates (common/sync/estimate.c). It then tells the agent the
 * result (SYNC_RESULT) so that the guest trace can carry it too.
 *
 * One probe is in flight at a time: a probe's t1..t4 must not include
 * queueing behind another probe, or delay and offset both degrade.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/wire/probeio.h"
#include "common/stamp/stamp_round.h"
#include "common/base/timeutil.h"
#include "proto/tsync_record.h"
#include "host/peer/client.h"
#include "host/peer/client_priv.h"
#include "common/sync/round_stop.h"

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
 * says more probes would not help; the round trips it got go to @keep
 * (or NULL). Returns 0 with the probes sent in *@sent, or error. */
static int probe_loop(struct tsync_client *c, uint32_t round, uint32_t cpu,
		      uint32_t n, bool busy, struct tsync_stopper *stop,
		      struct tsync_probe_stamps *hp, struct round_probes *keep, uint32_t *sent,
		      char *err, size_t errlen)
{
	struct tsync_msg other;
	uint32_t rr, seq;
	int64_t t0, rtt;
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
		ret = tsync_probe_send(c->fd, TSYNC_MSG_PROBE, round, i, client_io_deadline(c));
		if (ret) {
			snprintf(err, errlen, "sending probe %u: %s", i, strerror(-ret));
			return ret;
		}
		ret = tsync_probe_recv(c->fd, TSYNC_MSG_PROBE_REPLY, busy, client_io_deadline(c),
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
		rtt = tsync_now_ns() - t0;
		if (keep && i < keep->cap)
			keep->rtt_ns[i] = rtt;
		if (tsync_stopper_add(stop, rtt))
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
	bool rt;			/* the probe loop runs at a real-time priority */
	struct tsync_probe_stamps *hp;	/* [o->nprobes] host stamps (t1, t4) */
	struct tsync_stopper *stop;	/* when to end the probe loop */
	uint32_t sent;			/* probes sent (<= o->nprobes) */
};

/* Sends @m of the round; a failure is fatal for the session. */
static int round_send(struct tsync_client *c, const struct tsync_msg *m,
		      struct round_result *res)
{
	int ret = tsync_msg_send(c->fd, m, client_io_deadline(c));

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
		  (rc->o->ns_clock ? TSYNC_SYNC_F_NS_CLOCK : 0) |
		  (rc->rt ? TSYNC_SYNC_F_RT : 0);
	m.sync_start.round_id = rc->round;
	m.sync_start.cpu = rc->cpu;
	m.sync_start.nprobes = rc->o->nprobes;
	m.sync_start.source = (uint8_t)rc->o->source;
	snprintf(m.sync_start.clock, sizeof(m.sync_start.clock), "%s", rc->o->clock);
	ret = round_send(c, &m, res);
	if (!ret)
		ret = tsync_msg_recv_expect(c->fd, TSYNC_MSG_SYNC_READY, &m, &c->dctx,
					    client_io_deadline(c), res->error, sizeof(res->error));
	if (ret)
		return ret;
	if (m.sync_ready.status) {
		round_fail(res, -EIO, "agent cannot run round on CPU %u: %s", rc->cpu,
			   tsync_err_name(m.sync_ready.status));
		return 1;
	}
	return 0;
}

/* Copies a round's stamps into @k (see struct round_probes). */
static void keep_probes(struct round_probes *k, const struct tsync_probe_stamps *hp,
			uint32_t sent, const struct tsync_sync_stamps *st)
{
	k->nhost = sent < k->cap ? sent : k->cap;
	k->nguest = st->count < k->cap ? st->count : k->cap;
	memcpy(k->host, hp, k->nhost * sizeof(*hp));
	memcpy(k->guest, st->stamps, k->nguest * sizeof(*st->stamps));
}

/* Estimates the round from the host stamps and the agent's SYNC_STAMPS
 * @st. Returns 0, 1 for a round-level failure (res->status set), or a
 * fatal error. */
static int round_estimate(struct tsync_client *c, const struct round_ctx *rc,
			  const struct tsync_sync_stamps *st, struct round_result *res)
{
	int ret;

	ret = tsync_stamp_resolve_probes(c->stamps.stamper, rc->host_cpu, rc->round, rc->hp,
					 rc->sent, TSYNC_DIR_HOST_SEND, TSYNC_DIR_HOST_RECV);
	if (ret) {
		round_fail(res, ret, "host timestamps of round %u lost: %s", rc->round,
			   strerror(-ret));
		return 1;
	}
	if (rc->o->keep)
		keep_probes(rc->o->keep, rc->hp, rc->sent, st);
	ret = tsync_estimate_round(rc->hp, rc->sent, st->stamps, st->count, rc->o->estimator,
				   &res->est);
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
					    client_io_deadline(c), res->error, sizeof(res->error));
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
	struct tsync_cpu_sched sch = { .policy = -1 };
	int ret = tsync_probe_prepare(c->fd, c->opts.io_timeout_ms);

	if (ret) {
		snprintf(res->error, sizeof(res->error), "SO_RCVTIMEO: %s", strerror(-ret));
		return ret;
	}
	/* A sleeping probe loop runs at a real-time priority on both ends when
	 * the host may (root): see common/base/cpu.h. Without it the guest stays at
	 * its priority too, or the ends of a loopback round, on one CPU,
	 * would take lopsided paths. */
	rc->rt = false;
	if (!rc->busy && !rc->o->normal_prio) {
		ret = tsync_cpu_rt_enter(TSYNC_ROUND_RT_PRIO, &sch);
		rc->rt = !ret;
		if (ret && !c->rt_warned) {
			/* measured: 0.7-1.7x the error of 339 fixed probes
			 * on a busy machine (bench_06_adaptive's normal rows) */
			log_warn("%s: sync probes at normal priority (SCHED_FIFO: %s): offsets "
				 "lose accuracy on a busy machine; run as root, or give it "
				 "CAP_SYS_NICE or `ulimit -r %d`", c->peer.name, strerror(-ret),
				 TSYNC_ROUND_RT_PRIO);
			c->rt_warned = true;
		}
	}
	ret = round_start(c, rc, res);
	if (!ret) {
		ret = probe_loop(c, rc->round, rc->cpu, rc->o->nprobes, rc->busy, rc->stop,
				 rc->hp, rc->o->keep, &rc->sent, res->error, sizeof(res->error));
		res->stop = tsync_stopper_reason(rc->stop);
		log_debug("%s: round %u CPU %u: %u probes (%s), round trips from %lld ns",
			  c->peer.name, rc->round, rc->cpu, rc->sent,
			  tsync_stop_reason_name(res->stop),
			  (long long)tsync_stopper_floor(rc->stop));
	}
	tsync_cpu_rt_leave(&sch);
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
				.host_cpu = round_host_cpu(o, cpu, nhost, 0),
				.busy = o->busy > 0 };
	int64_t start = tsync_now_ns();
	char tag[32], why[160];
	struct tsync_cpu_mask old = { 0 };
	int ret;

	memset(res, 0, sizeof(*res));
	res->round_id = rc.round;
	res->cpu = cpu;
	res->host_cpu = rc.host_cpu;
	if (cpu >= c->session.ncpus)
		return round_fail(res, -EINVAL, "guest CPU %u does not exist (%u CPUs)",
				  cpu, c->session.ncpus);
	if (tsync_stamp_peer_check(o->source, c->session.caps, why, sizeof(why)))
		return round_fail(res, -EOPNOTSUPP, "%s", why);
	snprintf(tag, sizeof(tag), "h%d", c->fd);
	/* the host exits soon after its last round: the marker instance's
	 * removal is not waited for */
	ret = tsync_stamp_cache_get(&c->stamps, o->source, o->clock,
				    (o->ns_clock ? TSYNC_STAMP_NS_CLOCK : 0) |
				    TSYNC_STAMP_DETACHED_CLOSE, tag);
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
	if (o->cpu_locks)
		pthread_mutex_lock(&o->cpu_locks[rc.host_cpu]);
	ret = tsync_cpu_pin(rc.host_cpu, &old);
	if (ret) {
		if (o->cpu_locks)
			pthread_mutex_unlock(&o->cpu_locks[rc.host_cpu]);
		free(rc.hp);
		tsync_stopper_free(rc.stop);
		return round_fail(res, ret, "cannot pin the host thread to CPU %d: %s",
				  rc.host_cpu, strerror(-ret));
	}
	ret = round_run(c, &rc, res, start);
	if (ret)
		res->status = ret;
	tsync_cpu_unpin(&old);
	if (o->cpu_locks)
		pthread_mutex_unlock(&o->cpu_locks[rc.host_cpu]);
	tsync_stopper_free(rc.stop);
	free(rc.hp);
	return ret;
}
