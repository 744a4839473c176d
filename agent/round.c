// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest side of a sync round.
 *
 * Theory of operation
 * -------------------
 * The host asks for a round on guest CPU N with SYNC_START (round id, number
 * of probes, trace clock, timestamp source). This thread pins itself to N
 * and checks with sched_getcpu() that it runs there: a round measured on
 * another CPU would silently give that CPU's offset, so a failed pin is
 * reported (SYNC_READY with a status) instead. Then, for every PROBE:
 *
 *     host                         guest (this code)
 *     t1 = stamp; send PROBE  --->  recv; t2 = stamp
 *                                   t3 = stamp; send PROBE_REPLY
 *     recv; t4 = stamp        <---
 *
 * t2 is taken right after the message is read and t3 right before the reply
 * is written, so the guest's own processing time falls between them and
 * drops out of delay = (t4-t1)-(t3-t2). The guest does not compute
 * anything: after SYNC_END it sends every (seq, t2, t3) in one SYNC_STAMPS
 * message and the host estimates.
 *
 * Stamps are in the requested trace clock. The clock source reads it
 * directly; the marker source writes a probe record into the session's
 * private tracefs instance (whose trace_clock is that clock) and reads the
 * kernel's timestamps of those records back after the round, from that
 * CPU's buffer only. The instance lives as long as the session: creating
 * one costs milliseconds, a marker write a fraction of a microsecond.
 *
 * Waiting: the host may set TSYNC_SYNC_F_BUSY in SYNC_START's header flags
 * when it knows both ends run on different CPUs; the guest then polls its
 * socket without sleeping for the few milliseconds of the round, which
 * saves a wake-up per probe. Every wait still has a deadline.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/round.h"
#include "common/cpu.h"
#include "common/log.h"
#include "common/msgio.h"
#include "common/probeio.h"
#include "common/stamp_round.h"
#include "common/timeutil.h"
#include "proto/tsync_record.h"

/* Sends SYNC_READY with @status. */
static int send_ready(struct agent_session *s, const struct tsync_sync_start *st,
		      uint32_t status)
{
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_READY);
	m.sync_ready.round_id = st->round_id;
	m.sync_ready.cpu = st->cpu;
	m.sync_ready.status = status;
	return agent_session_send(s, &m);
}

/* Runs the probe loop until SYNC_END; fills @stamps, returns the count or
 * -errno / TSYNC_PERR_*. */
static int probe_loop(struct agent_session *s, const struct tsync_sync_start *st,
		      bool busy, struct tsync_stamp *stamps)
{
	const struct agent_cfg *cfg = agent_session_cfg(s);
	uint32_t count = 0, round, seq;
	struct tsync_msg other;
	char err[256];
	int ret;

	for (;;) {
		int64_t t2 = 0, t3 = 0;

		ret = tsync_probe_recv(s->fd, TSYNC_MSG_PROBE, busy,
				       tsync_deadline_ms(cfg->io_timeout_ms),
				       &round, &seq, &other, &s->dctx, err, sizeof(err));
		if (ret == 0) {
			ret = tsync_stamp_take(s->stamps.stamper, st->round_id, seq,
						 TSYNC_DIR_GUEST_RECV, st->cpu, &t2);
			if (ret)
				return ret;
			if (round != st->round_id || count >= st->nprobes) {
				log_warn("%s: probe %u of round %u in round %u (%u/%u)",
					 s->peer->name, seq, round, st->round_id, count,
					 st->nprobes);
				agent_session_error(s, TSYNC_ERR_PROTOCOL,
						    "unexpected probe %u of round %u", seq, round);
				return -EPROTO;
			}
			ret = tsync_stamp_take(s->stamps.stamper, st->round_id, seq,
						 TSYNC_DIR_GUEST_SEND, st->cpu, &t3);
			if (ret)
				return ret;
			ret = tsync_probe_send(s->fd, TSYNC_MSG_PROBE_REPLY, round, seq,
					       tsync_deadline_ms(cfg->io_timeout_ms));
			if (ret)
				return ret;
			stamps[count++] = (struct tsync_stamp){ .seq = seq, .t2 = t2, .t3 = t3 };
			continue;
		}
		if (ret < 0) {
			log_warn("%s: round %u: %s", s->peer->name, st->round_id, err);
			return ret;
		}
		if (other.type == TSYNC_MSG_SYNC_END && other.sync_end.round_id == st->round_id) {
			tsync_msg_free(&other);
			return (int)count;
		}
		log_warn("%s: round %u: unexpected %s", s->peer->name, st->round_id,
			 tsync_msg_name(other.type));
		tsync_msg_free(&other);
		return -EPROTO;
	}
}

/* Runs the guest side of a round; see round.h. */
int agent_sync_round(struct agent_session *s, const struct tsync_msg *start)
{
	const struct tsync_sync_start *st = &start->sync_start;
	bool busy = start->flags & TSYNC_SYNC_F_BUSY;
	struct tsync_stamp *stamps = NULL;
	struct tsync_msg m;
	cpu_set_t old;
	int ret, n;

	{
		char tag[32];

		snprintf(tag, sizeof(tag), "a%llx", (unsigned long long)s->id);
		ret = tsync_stamp_cache_get(&s->stamps, st->source, st->clock,
					    start->flags & TSYNC_SYNC_F_NS_CLOCK ?
					    TSYNC_STAMP_NS_CLOCK : 0, tag);
	}
	if (ret) {
		log_warn("%s: round %u: clock %s with source %s: %s", s->peer->name,
			 st->round_id, st->clock, tsync_stamp_source_name(st->source),
			 strerror(-ret));
		return send_ready(s, st, TSYNC_ERR_BAD_REQUEST);
	}
	stamps = calloc(st->nprobes, sizeof(*stamps));
	if (!stamps)
		return send_ready(s, st, TSYNC_ERR_INTERNAL);
	ret = tsync_cpu_pin((int)st->cpu, &old);
	if (ret) {
		log_warn("%s: round %u: cannot run on CPU %u: %s", s->peer->name,
			 st->round_id, st->cpu, strerror(-ret));
		free(stamps);
		return send_ready(s, st, TSYNC_ERR_NO_CPU);
	}
	ret = tsync_probe_prepare(s->fd, agent_session_cfg(s)->io_timeout_ms);
	if (!ret)
		ret = send_ready(s, st, 0);
	if (ret)
		goto out;

	n = probe_loop(s, st, busy, stamps);
	if (n < 0) {
		ret = n;
		goto out;
	}
	ret = TSYNC_STAMP_RESOLVE_PAIRS(s->stamps.stamper, (int)st->cpu, st->round_id,
					stamps, (size_t)n, t2, TSYNC_DIR_GUEST_RECV,
					t3, TSYNC_DIR_GUEST_SEND);
	if (ret) {
		log_warn("%s: round %u: reading timestamps back: %s", s->peer->name,
			 st->round_id, strerror(-ret));
		agent_session_error(s, TSYNC_ERR_INTERNAL, "timestamps of round %u lost: %s",
				    st->round_id, strerror(-ret));
		goto out;
	}
	tsync_msg_init(&m, TSYNC_MSG_SYNC_STAMPS);
	m.sync_stamps.round_id = st->round_id;
	m.sync_stamps.cpu = st->cpu;
	m.sync_stamps.count = (uint32_t)n;
	m.sync_stamps.stamps = stamps;
	ret = agent_session_send(s, &m);
out:
	tsync_cpu_unpin(&old);
	free(stamps);
	return ret;
}
