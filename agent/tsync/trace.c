// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recording requests of a tsync control session; the protocol side is
 * described in trace.h, the recording (instance, streams, stop, metadata)
 * is agent/rec/record.h's. A session's recording is made at its first
 * TRACE_START and kept until the session ends: data connections look it
 * up through the session (s->rec, read with acquire, written once).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/conn/ratelimit.h"
#include "agent/rec/evsel.h"
#include "agent/rec/record.h"
#include "agent/tsync/trace.h"
#include "common/base/log.h"
#include "common/cli/recopt.h"
#include "common/tracefs/instance.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/tsync_record.h"

/* Returns @s's recording (NULL before the first TRACE_START). */
static struct agent_rec *rec_of(struct agent_session *s)
{
	return __atomic_load_n(&s->rec, __ATOMIC_ACQUIRE);
}

/* Returns @s's recording, made at the first TRACE_START; NULL on ENOMEM. */
static struct agent_rec *rec_get(struct agent_session *s)
{
	struct agent_rec *r = rec_of(s);
	char prefix[TSYNC_INSTANCE_PREFIX_MAX];

	if (!r) {
		snprintf(prefix, sizeof(prefix), AGENT_RECORD_INST_PREFIX "%llx",
			 (unsigned long long)s->id);
		if (agent_rec_new(s->ctx, prefix, s->peer->name, &r))
			return NULL;
		__atomic_store_n(&s->rec, r, __ATOMIC_RELEASE);
	}
	return r;
}

/* Returns 0 if @clock is one of the kernel's trace clocks; else -EINVAL
 * with the list in @have. */
static int check_clock(const char *clock, char *have, size_t havelen)
{
	char names[TSYNC_MAX_CLOCKS][TSYNC_TRACE_CLOCK_NAME_MAX];
	int n = tsync_instance_clocks(names, TSYNC_MAX_CLOCKS, NULL);
	size_t off = 0;
	int ret = -EINVAL;

	if (n < 0)
		return n;
	have[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (!strcmp(names[i], clock))
			ret = 0;
		if (off < havelen)
			off += (size_t)snprintf(have + off, havelen - off, "%s%s",
						i ? " " : "", names[i]);
	}
	return ret;
}

/* Checks what TRACE_START @rq (its options @o) asks for against the
 * session's state and the agent's limits. Returns 0, or 1 after refusing
 * it (the send's result in *@ret). */
static int check_request(struct agent_session *s, const struct tsync_trace_start *rq,
			 const struct tsync_recopt *o, int *ret)
{
	uint32_t kb = o->inst.buffer_kb;
	const struct agent_cfg *cfg = agent_session_cfg(s);
	static const uint8_t zero[TSYNC_SECRET_LEN];
	struct agent_rec *r = rec_of(s);
	char have[256];

	if (!memcmp(s->secret, zero, sizeof(zero))) {
		*ret = agent_session_error(s, TSYNC_ERR_UNEXPECTED,
					   "TRACE_START before SESSION_REQ");
	} else if (rq->flags & ~TSYNC_TRACE_FL_ARGS) {
		/* unknown flags (Documentation/protocol.md, 6.14): refused,
		 * never silently ignored */
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused TRACE_START: unknown flags %#x", s->peer->name,
			      rq->flags);
		*ret = agent_session_error(s, TSYNC_ERR_UNSUPPORTED,
					   "TRACE_START flags %#x: this agent knows only %#x",
					   rq->flags, TSYNC_TRACE_FL_ARGS);
	} else if (r && agent_rec_active(r)) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused TRACE_START: a trace is already active",
			      s->peer->name);
		*ret = agent_session_error(s, TSYNC_ERR_UNEXPECTED,
					   "a trace is already active in this session");
	} else if (rq->clock[0] && check_clock(rq->clock, have, sizeof(have))) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused TRACE_START: unknown clock %s", s->peer->name,
			      rq->clock);
		*ret = agent_session_error(s, TSYNC_ERR_BAD_REQUEST,
					   "unknown trace clock '%s' (have: %s)",
					   rq->clock, have);
	} else if (agent_rec_check_buffer(s->ctx, kb, have, sizeof(have))) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused TRACE_START: %u KiB buffer over the limit %u",
			      s->peer->name, kb, cfg->max_buffer_kb);
		*ret = agent_session_error(s, TSYNC_ERR_LIMIT, "%s", have);
	} else {
		return 0;
	}
	return 1;
}

/* Sets up and starts @s's recording of @rq, options @o, events @ev.
 * Returns 0, or an ERROR code (> 0) with @err filled. */
static uint32_t start_recording(struct agent_session *s, const struct tsync_trace_start *rq,
				const struct tsync_recopt *o,
				const struct tracemeta_events *ev, char *err, size_t errlen)
{
	struct agent_rec_req q = { .opt = o, .clock = rq->clock, .buffer_kb = o->inst.buffer_kb,
				   .events = ev };
	struct agent_rec *r = rec_get(s);
	uint32_t code = TSYNC_ERR_INTERNAL;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return TSYNC_ERR_INTERNAL;
	}
	if (agent_rec_setup(r, &q, &code, err, errlen))
		return code;
	if (agent_rec_marker(r) < 0)
		log_warn("%s: no trace_marker_raw in %s: round records will be missing",
			 s->peer->name, agent_rec_name(r));
	return agent_rec_start(r, err, errlen) ? TSYNC_ERR_INTERNAL : 0;
}

/* Answers TRACE_START; see trace.h. */
int agent_trace_start(struct agent_session *s, const struct tsync_trace_start *rq)
{
	struct tracemeta_events *ev = NULL;
	char err[TSYNC_REASON_MAX] = "", have[64];
	struct tsync_trace_start req = *rq;
	struct tsync_recopt o;
	struct tsync_msg m;
	int code, ret;

	tsync_recopt_init(&o);
	code = agent_trace_args(rq, &o, &req, err, sizeof(err));
	if (code)
		goto refuse;
	if (check_request(s, &req, &o, &ret)) {
		tsync_recopt_free(&o);
		return ret;
	}
	code = agent_events_resolve(&o, &ev, err, sizeof(err));
	if (!code)
		code = (int)start_recording(s, &req, &o, ev, err, sizeof(err));
	tracemeta_events_free(ev);
	if (code)
		goto refuse;
	snprintf(have, sizeof(have), "%u KiB/CPU", o.inst.buffer_kb);
	log_info("%s: recording into %s: %d event selection(s), %u option word(s), clock %s, "
		 "buffer %s", s->peer->name, agent_rec_name(rec_of(s)), o.nevents, req.nargs,
		 req.clock[0] ? req.clock : "default", o.inst.buffer_kb ? have : "default");
	tsync_recopt_free(&o);
	tsync_msg_init(&m, TSYNC_MSG_TRACE_STARTED);
	m.trace_started.ncpus = agent_rec_ncpus(rec_of(s));
	return agent_session_send(s, &m);
refuse:
	tsync_recopt_free(&o);
	agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: refused TRACE_START: %s",
		      s->peer->name, err);
	return agent_session_error(s, (uint32_t)code, "%s", err);
}

/* Answers TRACE_STOP; see trace.h. */
int agent_trace_stop(struct agent_session *s)
{
	struct agent_rec *r = rec_of(s);
	struct tsync_cpu_stats *cs;
	struct tsync_msg m;
	int ret;

	if (!r || !agent_rec_active(r)) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: TRACE_STOP without an active trace", s->peer->name);
		return agent_session_error(s, TSYNC_ERR_UNEXPECTED, "no trace is active");
	}
	cs = calloc(agent_rec_ncpus(r), sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	agent_rec_stop(r, cs);	/* streams late: logged, the figures go all the same */
	tsync_msg_init(&m, TSYNC_MSG_TRACE_STOPPED);
	m.trace_stopped.count = agent_rec_ncpus(r);
	m.trace_stopped.cpus = cs;
	ret = agent_session_send(s, &m);
	free(cs);
	return ret;
}

/* Sends one metadata chunk as a META_CHUNK; tracemeta_foreach_part()
 * callback with the session as @ctx. Part kinds are proto's META kinds. */
static int send_chunk(void *ctx, unsigned int kind, const char *system,
		      const void *data, size_t len, bool more)
{
	struct agent_session *s = ctx;
	struct tsync_msg m;

	_Static_assert((int)TRACEMETA_HEADER_PAGE == (int)TSYNC_META_HEADER_PAGE &&
		       (int)TRACEMETA_EVENT_FORMAT == (int)TSYNC_META_EVENT_FORMAT &&
		       (int)TRACEMETA_TRACE_CLOCK == (int)TSYNC_META_TRACE_CLOCK,
		       "tracemeta parts are the wire's META kinds");
	tsync_msg_init(&m, TSYNC_MSG_META_CHUNK);
	m.meta_chunk.kind = (uint8_t)kind;
	snprintf(m.meta_chunk.system, sizeof(m.meta_chunk.system), "%s", system);
	m.meta_chunk.more = more;
	m.meta_chunk.len = (uint32_t)len;
	m.meta_chunk.data = (uint8_t *)data;
	return agent_session_send(s, &m);
}

/* Answers META_REQ; see trace.h. */
int agent_trace_send_meta(struct agent_session *s)
{
	struct tracemeta_opts opts = { .kallsyms = true, .cpustat = true };
	struct agent_rec *r = rec_of(s);
	const struct tracemeta *tm = NULL;
	struct tsync_msg m;
	/* the first META_REQ collects it all; the one after the stop reads
	 * again only what the recording changed */
	int ret = r ? agent_rec_meta(r, &opts, &tm) : -ENOENT;

	if (ret == -ENOENT && !tm) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: META_REQ without a trace",
			      s->peer->name);
		return agent_session_error(s, TSYNC_ERR_UNEXPECTED,
					   "no trace to describe: META_REQ needs TRACE_START first");
	}
	if (ret) {
		log_err("%s: cannot collect metadata of %s: %s", s->peer->name,
			agent_rec_name(r), strerror(-ret));
		return agent_session_error(s, TSYNC_ERR_INTERNAL,
					   "cannot collect trace metadata: %s", strerror(-ret));
	}
	ret = tracemeta_foreach_part(tm, TSYNC_META_CHUNK_MAX, send_chunk, s);
	if (ret)
		return ret;
	tsync_msg_init(&m, TSYNC_MSG_META_END);
	return agent_session_send(s, &m);
}

/* Writes a round record into the recorded instance; see trace.h. */
int agent_record_round(struct agent_session *s, const struct tsync_sync_result *rs)
{
	struct agent_rec *r = rec_of(s);
	struct tsync_rec_round rec;
	int fd;
	ssize_t n;

	log_debug("%s: round %u cpu %u offset %lld ns err %llu ns", s->peer->name,
		  rs->round_id, rs->cpu, (long long)rs->offset_ns,
		  (unsigned long long)rs->error_ns);
	if (!r || !agent_rec_active(r))
		return 0;
	fd = agent_rec_marker(r);
	if (fd < 0)
		return 0;
	memset(&rec, 0, sizeof(rec));
	tsync_rec_hdr_init(&rec.hdr, TSYNC_REC_ROUND, sizeof(rec));
	rec.round = rs->round_id;
	rec.cpu = rs->cpu;
	rec.offset_ns = rs->offset_ns;
	rec.error_ns = rs->error_ns;
	rec.delay_ns = rs->delay_ns;
	rec.used = rs->used;
	rec.sent = rs->sent;
	memcpy(rec.peer, s->host_name,
	       strnlen(s->host_name, sizeof(rec.peer) - 1));	/* NUL-padded */
	n = write(fd, &rec, sizeof(rec));
	if (n != (ssize_t)sizeof(rec))
		log_warn("%s: round record not written to %s: %s", s->peer->name,
			 agent_rec_name(r), n < 0 ? strerror(errno) : "short write");
	return 0;
}

/* Writes a clock record into the recorded instance; see trace.h. */
void agent_record_clock(struct agent_session *s, const struct tsync_clock_state *st)
{
	struct agent_rec *r = rec_of(s);
	struct tsync_rec_clock rec;
	ssize_t n;
	int fd;

	if (!r || !agent_rec_active(r))
		return;
	fd = agent_rec_marker(r);
	if (fd < 0)
		return;
	tsync_rec_clock_init(&rec, st, s->host_name);
	n = write(fd, &rec, sizeof(rec));
	if (n != (ssize_t)sizeof(rec))
		log_warn("%s: clock record not written to %s: %s", s->peer->name,
			 agent_rec_name(r), n < 0 ? strerror(errno) : "short write");
}

/* Stops the streams and removes the instance; see trace.h. */
void agent_trace_destroy(struct agent_session *s)
{
	struct agent_rec *r = rec_of(s);

	if (r)
		agent_rec_clear(r);
}

/* Frees the recording; see trace.h. */
void agent_trace_free(struct agent_session *s)
{
	struct agent_rec *r = rec_of(s);

	__atomic_store_n(&s->rec, NULL, __ATOMIC_RELEASE);
	agent_rec_free(r);
}

/* Claims @cpu of @s's trace for a data connection; see trace.h. */
int agent_trace_claim(struct agent_session *s, uint32_t cpu, char *why, size_t whylen)
{
	struct agent_rec *r = rec_of(s);

	if (!r) {
		snprintf(why, whylen, "no trace is active in this session");
		return TSYNC_ERR_UNEXPECTED;
	}
	return agent_rec_claim(r, cpu, why, whylen);
}

/* Gives up the claim on @cpu before its stream started; see trace.h. */
void agent_trace_unclaim(struct agent_session *s, uint32_t cpu)
{
	agent_rec_unclaim(rec_of(s), cpu);
}

/* Streams a claimed CPU; see trace.h. */
void agent_trace_stream(struct agent_session *s, int fd, const struct tsync_peer *peer,
			uint32_t cpu)
{
	agent_rec_stream(rec_of(s), cpu, fd, peer->name, true);
}
