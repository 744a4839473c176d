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
 * one costs milliseconds, a marker write a fraction of a microsecond
 * (Documentation/design.md, Instance and marker costs).
 *
 * Waiting: the host may set TSYNC_SYNC_F_BUSY in SYNC_START's header flags
 * when it knows both ends run on different CPUs; the guest then polls its
 * socket without sleeping for the few milliseconds of the round, which
 * saves a wake-up per probe. Every wait still has a deadline, and a busy
 * wait spins at most BUSY_SPIN_MAX_MS without a message: then the round
 * sleeps, and so do the session's later rounds (a host that lets the
 * guest spin is not busy-polling itself; spinning for it only burns a
 * CPU it chose). The round as a whole must be over within twice the I/O
 * timeout, however the host spaces its probes.
 *
 * Priority: when the host's probe loop runs at a real-time priority it sets
 * TSYNC_SYNC_F_RT, and this thread sleeps through its probe loop at
 * SCHED_FIFO too (common/base/cpu.h says why; not when busy-polling, which
 * would starve the CPU's other tasks). If it may not, the round goes on at
 * normal priority.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/tsync/round.h"
#include "agent/conn/ratelimit.h"
#include "common/base/cpu.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/wire/probeio.h"
#include "common/stamp/stamp_round.h"
#include "common/base/timeutil.h"
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

/* How long a busy-polling wait may spin without a message before the
 * round goes on sleeping: a host that busy-polls sends its next probe
 * within microseconds of our reply. */
#define BUSY_SPIN_MAX_MS 10

/* The waiting side of one round. */
struct round_wait {
	bool busy;		/* spin instead of sleeping */
	bool tight;		/* receive timeout cut to the round's end */
	int64_t deadline;	/* of the whole round */
};

/* Spins until @fd has something to read (or an error or EOF to report)
 * or @until passes; returns false in the latter case. */
static bool spin_readable(int fd, int64_t until)
{
	unsigned int spins = 0;
	char b;

	for (;;) {
		ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return true;
		/* Check the clock only now and then: it is not free. */
		if (++spins % 256 == 0 && tsync_now_ns() > until)
			return false;
	}
}

/*
 * Receives the next probe (or another message into @other) within the
 * I/O timeout and the round's deadline. A busy wait that spins for
 * BUSY_SPIN_MAX_MS without a message turns busy-polling off for the rest
 * of the session. Returns what tsync_probe_recv() returns.
 */
static int next_probe(struct agent_session *s, const struct tsync_sync_start *st,
		      struct round_wait *w, uint32_t *round, uint32_t *seq,
		      struct tsync_msg *other, char *err, size_t errlen)
{
	int io_ms = agent_session_cfg(s)->io_timeout_ms;
	int64_t deadline = tsync_deadline_ms(io_ms), spin;

	if (tsync_now_ns() >= w->deadline) {
		snprintf(err, errlen, "round over time");
		return -ETIMEDOUT;
	}
	if (deadline > w->deadline) {
		deadline = w->deadline;
		/* a sleeping receive blocks up to its SO_RCVTIMEO (I/O
		 * timeout, tsync_probe_prepare()): cut it to the round's end
		 * (the next round sets it back) */
		if (!w->tight && !tsync_probe_prepare(s->fd, tsync_remaining_ms(deadline) + 1))
			w->tight = true;
	}
	if (w->busy) {
		spin = tsync_deadline_ms(BUSY_SPIN_MAX_MS);
		if (!spin_readable(s->fd, spin < deadline ? spin : deadline)) {
			w->busy = false;
			s->no_busy = true;
			log_info("%s: round %u: no probe within %d ms of busy-polling: "
				 "this session's rounds sleep from now on", s->peer->name,
				 st->round_id, BUSY_SPIN_MAX_MS);
		}
	}
	return tsync_probe_recv(s->fd, TSYNC_MSG_PROBE, w->busy, deadline, round, seq,
				other, &s->dctx, err, errlen);
}

/* Stamps and answers probe @seq of round @round; @count answered so far.
 * Returns 0 with the stamps in @out, or -errno (the peer told). */
static int answer_probe(struct agent_session *s, const struct tsync_sync_start *st,
			uint32_t round, uint32_t seq, uint32_t count,
			struct tsync_probe_stamps *out)
{
	bool deferred = tsync_stamp_deferred(s->stamps.stamper);
	int64_t t2 = 0, t3 = 0;
	int ret;

	ret = tsync_stamp_take(s->stamps.stamper, st->round_id, seq,
			       TSYNC_DIR_GUEST_RECV, st->cpu, &t2);
	if (ret)
		return ret;
	if (round != st->round_id || count >= st->nprobes) {
		log_warn("%s: probe %u of round %u in round %u (%u/%u)", s->peer->name,
			 seq, round, st->round_id, count, st->nprobes);
		agent_session_error(s, TSYNC_ERR_PROTOCOL, "unexpected probe %u of round %u",
				    seq, round);
		return -EPROTO;
	}
	/* A deferred (marker) stamp is a write into the trace buffer: a
	 * second one for t3 would only cost the guest another system call,
	 * as what lies between the two stamps would be that write itself.
	 * So t3 = t2 (resolve_stamps()). */
	if (!deferred)
		ret = tsync_stamp_take(s->stamps.stamper, st->round_id, seq,
				       TSYNC_DIR_GUEST_SEND, st->cpu, &t3);
	if (ret)
		return ret;
	ret = tsync_probe_send(s->fd, TSYNC_MSG_PROBE_REPLY, round, seq,
			       tsync_deadline_ms(agent_session_cfg(s)->io_timeout_ms));
	/* @out is inside the round's array only once the checks above passed */
	*out = (struct tsync_probe_stamps){ .seq = seq, .t2 = t2, .t3 = t3 };
	return ret;
}

/* Reads back the deferred (marker) stamps of @n probes (other sources:
 * nothing to do); such a probe has one stamp, its t2, which is its t3 too
 * (answer_probe()). Returns 0 or -errno. */
static int resolve_stamps(struct agent_session *s, const struct tsync_sync_start *st,
			  struct tsync_probe_stamps *stamps, size_t n)
{
	int ret;

	if (!tsync_stamp_deferred(s->stamps.stamper))
		return 0;
	ret = tsync_stamp_resolve_probes(s->stamps.stamper, (int)st->cpu, st->round_id,
					 stamps, n, TSYNC_DIR_GUEST_RECV, 0);
	for (size_t i = 0; i < n; i++)
		stamps[i].t3 = stamps[i].t2;
	return ret;
}

/* The host ended the session inside round @st with @m (BYE or ERROR). */
static void host_ended(const struct agent_session *s, const struct tsync_sync_start *st,
		       const struct tsync_msg *m)
{
	if (m->type == TSYNC_MSG_ERROR)
		log_warn("%s: round %u: host error %s: %s", s->peer->name, st->round_id,
			 tsync_err_name(m->error.code), m->error.reason);
	else
		log_info("%s: round %u: BYE: the session ends inside the round",
			 s->peer->name, st->round_id);
}

/* Reports why the probe loop of round @st ended with @ret (< 0). */
static int loop_failed(struct agent_session *s, const struct tsync_sync_start *st,
		       const struct round_wait *w, int ret, const char *err)
{
	if (ret == -ETIMEDOUT && tsync_now_ns() >= w->deadline) {
		int ms = 2 * agent_session_cfg(s)->io_timeout_ms;

		log_warn("%s: round %u: not over within %d ms (twice --io-timeout)",
			 s->peer->name, st->round_id, ms);
		agent_session_error(s, TSYNC_ERR_TIMEOUT,
				    "round %u not over within %d ms", st->round_id, ms);
		return ret;
	}
	log_warn("%s: round %u: %s", s->peer->name, st->round_id, err);
	if (tsync_perr_is_proto(ret))
		agent_session_error(s, TSYNC_ERR_PROTOCOL, "%s", err);
	return ret;
}

/*
 * Runs the probe loop until SYNC_END; fills @stamps, returns the count or
 * -errno / TSYNC_PERR_*. Every wait is bounded by the I/O timeout, the
 * round as a whole by twice the I/O timeout.
 */
static int probe_loop(struct agent_session *s, const struct tsync_sync_start *st,
		      bool busy, struct tsync_probe_stamps *stamps)
{
	struct round_wait w = {
		.busy = busy && !s->no_busy,
		.deadline = tsync_deadline_ms(2 * (int64_t)agent_session_cfg(s)->io_timeout_ms),
	};
	uint32_t count = 0, round, seq;
	struct tsync_msg other;
	char err[256];
	int ret;

	for (;;) {
		ret = next_probe(s, st, &w, &round, &seq, &other, err, sizeof(err));
		if (ret == 0) {
			ret = answer_probe(s, st, round, seq, count, &stamps[count]);
			if (ret)
				return ret;
			count++;
			continue;
		}
		if (ret < 0)
			return loop_failed(s, st, &w, ret, err);
		if (other.type == TSYNC_MSG_SYNC_END && other.sync_end.round_id == st->round_id) {
			tsync_msg_free(&other);
			return (int)count;
		}
		if (other.type == TSYNC_MSG_BYE || other.type == TSYNC_MSG_ERROR) {
			/* the session's end, as outside a round (protocol.md) */
			host_ended(s, st, &other);
			tsync_msg_free(&other);
			return -ECANCELED;
		}
		log_warn("%s: round %u: unexpected %s", s->peer->name, st->round_id,
			 tsync_msg_name(other.type));
		agent_session_error(s, TSYNC_ERR_UNEXPECTED, "unexpected %s in round %u",
				    tsync_msg_name(other.type), st->round_id);
		tsync_msg_free(&other);
		return -EPROTO;
	}
}

/* Runs the guest side of a round; see round.h. */
int agent_sync_round(struct agent_session *s, const struct tsync_msg *start)
{
	const struct tsync_sync_start *st = &start->sync_start;
	bool busy = start->flags & TSYNC_SYNC_F_BUSY;
	struct tsync_probe_stamps *stamps = NULL;
	struct tsync_msg m;
	struct tsync_cpu_mask old = { 0 };
	struct tsync_cpu_sched sch = { .policy = -1 };
	int ret, n;

	{
		char tag[32];

		snprintf(tag, sizeof(tag), "a%llx", (unsigned long long)s->id);
		ret = tsync_stamp_cache_get(&s->stamps, st->source, st->clock,
					    start->flags & TSYNC_SYNC_F_NS_CLOCK ?
					    TSYNC_STAMP_NS_CLOCK : 0, tag);
	}
	if (ret) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: round %u: clock %s with source %s: %s", s->peer->name,
			      st->round_id, st->clock, tsync_stamp_source_name(st->source),
			      strerror(-ret));
		/* -EOPNOTSUPP: a source this machine lacks (tsc off x86) */
		return send_ready(s, st, ret == -EOPNOTSUPP ? TSYNC_ERR_UNSUPPORTED :
				  TSYNC_ERR_BAD_REQUEST);
	}
	stamps = calloc(st->nprobes, sizeof(*stamps));
	if (!stamps)
		return send_ready(s, st, TSYNC_ERR_INTERNAL);
	ret = tsync_cpu_pin((int)st->cpu, &old);
	if (ret) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: round %u: cannot run on CPU %u: %s", s->peer->name,
			      st->round_id, st->cpu, strerror(-ret));
		free(stamps);
		return send_ready(s, st, TSYNC_ERR_NO_CPU);
	}
	ret = tsync_probe_prepare(s->fd, agent_session_cfg(s)->io_timeout_ms);
	if (!ret && (start->flags & TSYNC_SYNC_F_RT) && !busy &&
	    tsync_cpu_rt_enter(TSYNC_ROUND_RT_PRIO, &sch))
		log_debug("%s: round %u: probes at normal priority", s->peer->name,
			  st->round_id);
	if (!ret)
		ret = send_ready(s, st, 0);
	if (ret)
		goto out;

	n = probe_loop(s, st, busy, stamps);
	tsync_cpu_rt_leave(&sch);
	if (n < 0) {
		ret = n == -ECANCELED ? AGENT_ROUND_HOST_ENDED : n;
		goto out;
	}
	ret = resolve_stamps(s, st, stamps, (size_t)n);
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
	tsync_cpu_rt_leave(&sch);
	tsync_cpu_unpin(&old);
	free(stamps);
	return ret;
}
