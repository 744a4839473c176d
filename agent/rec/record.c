// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tracing on the agent for `tsync-host record`; the protocol side is
 * described in record.h.
 *
 * Threads and lifetimes
 * ---------------------
 * The session's control thread owns the recording state (struct
 * agent_trace, one per session, allocated at the first TRACE_START) and
 * the instance. Each data connection has its own thread (server.c). Before
 * it answers the HELLO (hello.c), data.c finds the session with
 * agent_registry_get() - a reference that keeps the session alive, because
 * agent_registry_remove() waits for it - checks its secret, and
 * agent_trace_claim() claims the CPU under the state's lock; a refusal is
 * an ERROR in place of HELLO_REPLY. After the reply, agent_trace_stream()
 * starts a streamer
 * (common/stream/streamer.h: its own thread moves the pages) and sleeps until the
 * control side asks the streams to stop. It then stops its streamer
 * itself, so all CPUs flush in parallel, shuts the socket's sending side
 * (EOF: the host knows the stream is complete), records its result and
 * wakes the control side, which waits for every claimed CPU before it
 * answers TRACE_STOPPED or removes the instance.
 *
 * Because a data thread may look the state up at any time while it holds
 * its session reference, the state is never freed while the session is
 * registered: agent_trace_destroy() (session cleanup) stops and removes
 * everything, agent_trace_free() (after agent_registry_remove()) frees the
 * memory.
 * On shutdown the server shuts every socket down: the control thread's
 * wait fails, its cleanup asks the streams to stop, and streams whose
 * socket is gone end at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>


#include "agent/rec/budget.h"
#include "agent/rec/evsel.h"
#include "agent/rec/instopts.h"
#include "agent/conn/ratelimit.h"
#include "agent/rec/record.h"
#include "common/stream/streamer.h"
#include "common/tracefs/instance.h"
#include "common/base/log.h"
#include "common/wire/msgio.h"
#include "common/cli/recopt.h"
#include "common/base/timeutil.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/tsync_record.h"

/* Margin on top of the streams' own flush deadline before the control
 * side gives up waiting for them. */
#define STOP_MARGIN_MS	5000

enum trace_state {
	TR_IDLE,	/* no instance */
	TR_ACTIVE,	/* recording; data connections are accepted */
	TR_STOPPED,	/* stopped (instance kept for META_REQ) */
};

struct trace_cpu {
	bool claimed;		/* a data connection streams this CPU */
	bool done;		/* its stream ended */
	int result;		/* 0 or the -errno that ended it */
	uint64_t bytes;		/* bytes sent on it */
};

struct agent_trace {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* state changes (CLOCK_MONOTONIC) */
	enum trace_state state;
	bool stop_req;			/* streams must stop */
	struct tsync_instance *ti;	/* NULL when idle */
	const char *name;		/* ti's name, "" when idle */
	uint32_t ncpus;
	int nclaimed, ndone;
	struct trace_cpu *cpus;
	struct agent_budget *budget;	/* the agent's (--max-trace-mb) */
	uint64_t reserved_kb;		/* of it, for this instance */
	struct agent_hide hide;		/* the agent's threads left out? */
};

/* Returns @s's recording state (NULL before the first TRACE_START). */
static struct agent_trace *trace_of(struct agent_session *s)
{
	return __atomic_load_n(&s->trace, __ATOMIC_ACQUIRE);
}

/* Waits on @t->cond until @deadline (CLOCK_MONOTONIC ns); lock held.
 * Returns 0 or ETIMEDOUT. */
static int timed_wait(struct agent_trace *t, int64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};

	return pthread_cond_timedwait(&t->cond, &t->lock, &ts);
}

/* Allocates an idle recording state for @ncpus CPUs, its buffers taken
 * from @budget; NULL on ENOMEM. */
static struct agent_trace *trace_alloc(uint32_t ncpus, struct agent_budget *budget)
{
	struct agent_trace *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (!t)
		return NULL;
	t->cpus = calloc(ncpus, sizeof(*t->cpus));
	if (!t->cpus) {
		free(t);
		return NULL;
	}
	t->ncpus = ncpus;
	t->budget = budget;
	t->name = "";
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

/*
 * Asks the streams to stop and waits until every claimed CPU is done or
 * @timeout_ms passed. Lock held. Returns 0 or -ETIMEDOUT.
 */
static int stop_streams(struct agent_trace *t, int timeout_ms)
{
	int64_t deadline = tsync_deadline_ms(timeout_ms);

	t->stop_req = true;
	pthread_cond_broadcast(&t->cond);
	while (t->ndone < t->nclaimed)
		if (timed_wait(t, deadline) == ETIMEDOUT)
			return -ETIMEDOUT;
	return 0;
}

/* Removes @t's instance (events off first) and resets it to idle; the
 * streams must be done. Lock held. */
static void remove_instance(struct agent_trace *t)
{
	tsync_instance_destroy(t->ti);	/* logs a failure */
	agent_budget_release(t->budget, t->reserved_kb);
	t->reserved_kb = 0;
	t->ti = NULL;
	t->name = "";
	t->state = TR_IDLE;
	t->stop_req = false;
	t->nclaimed = t->ndone = 0;
	memset(t->cpus, 0, t->ncpus * sizeof(*t->cpus));
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

/* The ERROR code for a recipe that failed at @step with @ret, @err. */
static int recipe_code(enum tsync_recipe_step step, int ret, const char *err)
{
	switch (step) {
	case TSYNC_RECIPE_CREATE:
		return ret == -EBUSY ? TSYNC_ERR_BUSY : TSYNC_ERR_INTERNAL;
	case TSYNC_RECIPE_BUFFER:
		return TSYNC_ERR_LIMIT;
	case TSYNC_RECIPE_OPTS:
	case TSYNC_RECIPE_TRACER:
		if (ret == -EPERM || ret == -EACCES)
			return TSYNC_ERR_PERMISSION;	/* "function tracer refused ..." */
		return ret == -ENOENT ? TSYNC_ERR_UNSUPPORTED : TSYNC_ERR_BAD_REQUEST;
	case TSYNC_RECIPE_EVENTS:
		/* the kernel rejects a bad filter with various errnos; the
		 * message says which case it is */
		return !strncmp(err, "filter ", 7) ? TSYNC_ERR_BAD_REQUEST :
		       TSYNC_ERR_INTERNAL;
	default:
		return TSYNC_ERR_INTERNAL;
	}
}

/*
 * Creates and configures the instance of @t for request @rq, options @o,
 * events @ev (the recipe, common/tracefs/instance.h); turns tracing on
 * last. Returns 0, or an ERROR code (> 0) with @err filled; on failure
 * nothing is left in tracefs. Lock held.
 */
static int setup_instance(struct agent_session *s, struct agent_trace *t,
			  const struct tsync_trace_start *rq, const struct tsync_recopt *o,
			  const struct tracemeta_events *ev, char *err, size_t errlen)
{
	char prefix[TSYNC_INSTANCE_PREFIX_MAX];
	struct tsync_instance_recipe rp = {
		.prefix = prefix, .opt = o, .clock = rq->clock, .buffer_kb = rq->buffer_kb,
		.hide_self = !o->no_filter,
		/* event-fork leaves the threads the agent starts later out at
		 * once; it would also make -P follow children, which only -c
		 * asks for */
		.follow_new = !o->npids || o->follow_children,
		.hide_may_fail = true, .self = "the agent", .log_as = s->peer->name,
		.events = ev, .enable_events = tracemeta_enable_events,
	};
	enum tsync_recipe_step step;
	int ret;

	snprintf(prefix, sizeof(prefix), AGENT_RECORD_INST_PREFIX "%llx",
		 (unsigned long long)s->id);
	ret = tsync_instance_from_recipe(&rp, &t->ti, &step, err, errlen);
	if (ret) {
		ret = recipe_code(step, ret, err);
		goto fail;	/* the buffers reserved for it go back */
	}
	t->name = tsync_instance_name(t->ti);
	t->hide = (struct agent_hide){ .self = rp.hide_self, .follow_new = rp.follow_new };
	if (tsync_instance_marker_fd(t->ti) < 0)
		log_warn("%s: no trace_marker_raw in %s: round records will be missing",
			 s->peer->name, t->name);
	if (tsync_instance_start(t->ti)) {
		snprintf(err, errlen, "cannot turn tracing on in %s", t->name);
		ret = TSYNC_ERR_INTERNAL;
		goto fail;
	}
	return 0;
fail:
	remove_instance(t);
	return ret;
}

/* Checks what TRACE_START @rq asks for against the session's state and
 * the agent's limits. Returns 0, or 1 after refusing it (the send's
 * result in *@ret). */
static int check_request(struct agent_session *s, const struct tsync_trace_start *rq,
			 int *ret)
{
	const struct agent_cfg *cfg = agent_session_cfg(s);
	static const uint8_t zero[TSYNC_SECRET_LEN];
	struct agent_trace *t = trace_of(s);
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
	} else if (t && t->state == TR_ACTIVE) {
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
	} else if (rq->buffer_kb > cfg->max_buffer_kb) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: refused TRACE_START: %u KiB buffer over the limit %u",
			      s->peer->name, rq->buffer_kb, cfg->max_buffer_kb);
		*ret = agent_session_error(s, TSYNC_ERR_LIMIT,
					   "buffer of %u KiB per CPU above the agent's limit of %u KiB (--max-buffer-kb)",
					   rq->buffer_kb, cfg->max_buffer_kb);
	} else {
		return 0;
	}
	return 1;
}

/* Sets aside the buffers @rq asks for from the agent's budget for @t.
 * Returns 0, or LIMIT with @err filled. Lock held. */
static int reserve_buffers(struct agent_trace *t, const struct tsync_trace_start *rq,
			   char *err, size_t errlen)
{
	uint64_t kb = (uint64_t)(rq->buffer_kb ? rq->buffer_kb :
				 TSYNC_INSTANCE_DEFAULT_BUFFER_KB) *
		      t->ncpus, free_kb = 0;

	if (agent_budget_reserve(t->budget, kb, &free_kb)) {
		snprintf(err, errlen, "%llu KiB of trace buffers (%u CPUs) would take the "
			 "agent over its budget of %llu MiB for all sessions "
			 "(--max-trace-mb): %llu KiB free", (unsigned long long)kb, t->ncpus,
			 (unsigned long long)(agent_budget_total(t->budget) / 1024),
			 (unsigned long long)free_kb);
		return TSYNC_ERR_LIMIT;
	}
	t->reserved_kb = kb;
	return 0;
}

/* Returns @s's recording state, allocated at the first TRACE_START; NULL
 * on ENOMEM. */
static struct agent_trace *trace_get(struct agent_session *s)
{
	struct agent_trace *t = trace_of(s);

	if (!t) {
		t = trace_alloc((uint32_t)s->ctx->ncpus, s->ctx->budget);
		if (t)
			__atomic_store_n(&s->trace, t, __ATOMIC_RELEASE);
	}
	return t;
}

/* Answers TRACE_START; see record.h. */
int agent_trace_start(struct agent_session *s, const struct tsync_trace_start *rq)
{
	struct tracemeta_events *ev = NULL;
	char err[TSYNC_REASON_MAX] = "", have[64];
	struct tsync_trace_start req = *rq;
	struct tsync_recopt o;
	struct agent_trace *t;
	struct tsync_msg m;
	int code, ret;

	tsync_recopt_init(&o);
	code = rq->flags & TSYNC_TRACE_FL_ARGS ?
	       agent_trace_args(rq, &o, &req, err, sizeof(err)) : 0;
	if (code)
		goto refuse;
	if (check_request(s, &req, &ret)) {
		tsync_recopt_free(&o);
		return ret;
	}
	code = req.flags & TSYNC_TRACE_FL_ARGS ?
	       agent_events_resolve_opts(&o, &ev, err, sizeof(err)) :
	       agent_events_resolve(req.events, req.nevents, &ev, err, sizeof(err));
	if (code)
		goto refuse;
	t = trace_get(s);
	if (!t) {
		tracemeta_events_free(ev);
		tsync_recopt_free(&o);
		return -ENOMEM;
	}
	pthread_mutex_lock(&t->lock);
	if (t->state == TR_STOPPED)	/* the previous trace of this session */
		remove_instance(t);
	code = reserve_buffers(t, &req, err, sizeof(err));
	if (!code)
		code = setup_instance(s, t, &req, &o, ev, err, sizeof(err));
	if (!code)
		t->state = TR_ACTIVE;
	pthread_mutex_unlock(&t->lock);
	tracemeta_events_free(ev);
	if (code)
		goto refuse;
	tsync_recopt_free(&o);

	snprintf(have, sizeof(have), "%u KiB/CPU", req.buffer_kb);
	log_info("%s: recording into %s: %u event selection(s), %u option word(s), clock %s, "
		 "buffer %s", s->peer->name, t->name, req.nevents, req.nargs,
		 req.clock[0] ? req.clock : "default", req.buffer_kb ? have : "default");
	tsync_msg_init(&m, TSYNC_MSG_TRACE_STARTED);
	m.trace_started.ncpus = t->ncpus;
	return agent_session_send(s, &m);
refuse:
	tsync_recopt_free(&o);
	agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: refused TRACE_START: %s",
		      s->peer->name, err);
	return agent_session_error(s, (uint32_t)code, "%s", err);
}

/* Answers TRACE_STOP; see record.h. */
int agent_trace_stop(struct agent_session *s)
{
	const struct agent_cfg *cfg = agent_session_cfg(s);
	struct agent_trace *t = trace_of(s);
	struct tsync_cpu_stats *cs;
	struct tsync_msg m;
	int ret;

	if (!t || t->state != TR_ACTIVE) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION,
			      "%s: TRACE_STOP without an active trace", s->peer->name);
		return agent_session_error(s, TSYNC_ERR_UNEXPECTED, "no trace is active");
	}
	cs = calloc(t->ncpus, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	pthread_mutex_lock(&t->lock);
	tsync_instance_stop(t->ti);
	ret = stop_streams(t, cfg->io_timeout_ms + STOP_MARGIN_MS);
	t->state = TR_STOPPED;
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		struct tracemeta_stats st;

		cs[cpu].cpu = cpu;
		cs[cpu].bytes = t->cpus[cpu].bytes;
		if (tracemeta_read_stats(tsync_instance_tracefs(t->ti), (int)cpu, &st,
					 NULL)) {
			log_debug("%s: no stats for cpu %u", t->name, cpu);
			continue;
		}
		cs[cpu].entries = st.entries + st.read_events;
		cs[cpu].overrun = st.overrun + st.commit_overrun;
		cs[cpu].dropped = st.dropped_events;
		if (!t->cpus[cpu].claimed && cs[cpu].entries)
			log_warn("%s: cpu %u: %llu events recorded but never streamed (no data connection)",
				 t->name, cpu, (unsigned long long)cs[cpu].entries);
		if (cs[cpu].overrun || cs[cpu].dropped)
			log_warn("%s: cpu %u lost events: %llu overrun, %llu dropped",
				 t->name, cpu, (unsigned long long)cs[cpu].overrun,
				 (unsigned long long)cs[cpu].dropped);
	}
	pthread_mutex_unlock(&t->lock);
	if (ret)
		log_err("%s: streams did not finish in time", t->name);

	tsync_msg_init(&m, TSYNC_MSG_TRACE_STOPPED);
	m.trace_stopped.count = t->ncpus;
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

/* Answers META_REQ; see record.h. */
int agent_trace_send_meta(struct agent_session *s)
{
	struct tracemeta_opts opts = { .kallsyms = true, .cpustat = true };
	struct agent_trace *t = trace_of(s);
	struct tracemeta *tm = NULL;
	struct tsync_msg m;
	int ret = -ENOENT;

	if (t) {
		pthread_mutex_lock(&t->lock);
		if (t->ti)
			ret = tracemeta_collect(tsync_instance_tracefs(t->ti), &opts, &tm);
		pthread_mutex_unlock(&t->lock);
	}
	if (ret == -ENOENT && !tm) {
		agent_rl_warn(s->ctx->rl, AGENT_RL_SESSION, "%s: META_REQ without a trace",
			      s->peer->name);
		return agent_session_error(s, TSYNC_ERR_UNEXPECTED,
					   "no trace to describe: META_REQ needs TRACE_START first");
	}
	if (ret) {
		log_err("%s: cannot collect metadata of %s: %s", s->peer->name,
			t->name, strerror(-ret));
		return agent_session_error(s, TSYNC_ERR_INTERNAL,
					   "cannot collect trace metadata: %s", strerror(-ret));
	}
	ret = tracemeta_foreach_part(tm, TSYNC_META_CHUNK_MAX, send_chunk, s);
	tracemeta_free(tm);
	if (ret)
		return ret;
	tsync_msg_init(&m, TSYNC_MSG_META_END);
	return agent_session_send(s, &m);
}

/* Writes a round record into the recorded instance; see record.h. */
int agent_record_round(struct agent_session *s, const struct tsync_sync_result *r)
{
	struct agent_trace *t = trace_of(s);
	struct tsync_rec_round rec;
	int fd;
	ssize_t n;

	log_debug("%s: round %u cpu %u offset %lld ns err %llu ns", s->peer->name,
		  r->round_id, r->cpu, (long long)r->offset_ns,
		  (unsigned long long)r->error_ns);
	if (!t || t->state != TR_ACTIVE)
		return 0;
	fd = tsync_instance_marker_fd(t->ti);
	if (fd < 0)
		return 0;
	memset(&rec, 0, sizeof(rec));
	tsync_rec_hdr_init(&rec.hdr, TSYNC_REC_ROUND, sizeof(rec));
	rec.round = r->round_id;
	rec.cpu = r->cpu;
	rec.offset_ns = r->offset_ns;
	rec.error_ns = r->error_ns;
	rec.delay_ns = r->delay_ns;
	rec.used = r->used;
	rec.sent = r->sent;
	memcpy(rec.peer, s->host_name,
	       strnlen(s->host_name, sizeof(rec.peer) - 1));	/* NUL-padded */
	n = write(fd, &rec, sizeof(rec));
	if (n != (ssize_t)sizeof(rec))
		log_warn("%s: round record not written to %s: %s", s->peer->name,
			 t->name, n < 0 ? strerror(errno) : "short write");
	return 0;
}

/* Stops the streams and removes the instance; see record.h. */
void agent_trace_destroy(struct agent_session *s)
{
	const struct agent_cfg *cfg = agent_session_cfg(s);
	struct agent_trace *t = trace_of(s);

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	if (t->ti)
		tsync_instance_stop(t->ti);
	if (stop_streams(t, cfg->io_timeout_ms + STOP_MARGIN_MS))
		log_err("%s: streams did not finish in time; removing anyway", t->name);
	remove_instance(t);
	pthread_mutex_unlock(&t->lock);
}

/* Frees the recording state; see record.h. */
void agent_trace_free(struct agent_session *s)
{
	struct agent_trace *t = trace_of(s);

	if (!t)
		return;
	agent_trace_destroy(s);
	__atomic_store_n(&s->trace, NULL, __ATOMIC_RELEASE);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t->cpus);
	free(t);
}

/*
 * Claims @cpu of @t for a stream. Lock held. Returns 0, or an ERROR code
 * (> 0) with @why filled.
 */
static int claim_cpu(struct agent_trace *t, uint32_t cpu, char *why, size_t whylen)
{
	if (t->state != TR_ACTIVE) {
		snprintf(why, whylen, "no trace is active in this session");
		return TSYNC_ERR_UNEXPECTED;
	}
	if (cpu >= t->ncpus) {
		snprintf(why, whylen, "cpu %u out of range (%u CPUs)", cpu, t->ncpus);
		return TSYNC_ERR_NO_CPU;
	}
	if (t->cpus[cpu].claimed) {
		snprintf(why, whylen, "cpu %u already has a stream", cpu);
		return TSYNC_ERR_BUSY;
	}
	t->cpus[cpu].claimed = true;
	t->nclaimed++;
	return 0;
}

/* Claims @cpu of @s's trace for a data connection; see record.h. */
int agent_trace_claim(struct agent_session *s, uint32_t cpu, char *why, size_t whylen)
{
	struct agent_trace *t = trace_of(s);
	int code;

	if (!t) {
		snprintf(why, whylen, "no trace is active in this session");
		return TSYNC_ERR_UNEXPECTED;
	}
	pthread_mutex_lock(&t->lock);
	code = claim_cpu(t, cpu, why, whylen);
	pthread_mutex_unlock(&t->lock);
	return code;
}

/* Gives up the claim on @cpu before its stream started; see record.h. */
void agent_trace_unclaim(struct agent_session *s, uint32_t cpu)
{
	struct agent_trace *t = trace_of(s);

	pthread_mutex_lock(&t->lock);
	if (cpu < t->ncpus && t->cpus[cpu].claimed && !t->cpus[cpu].done) {
		t->cpus[cpu].claimed = false;
		t->nclaimed--;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
}

/* Marks claimed @cpu of @t done after @bytes with @result; wakes the
 * control side. */
static void release_cpu(struct agent_trace *t, uint32_t cpu, uint64_t bytes,
			int result)
{
	pthread_mutex_lock(&t->lock);
	t->cpus[cpu].bytes = bytes;
	t->cpus[cpu].result = result;
	t->cpus[cpu].done = true;
	t->ndone++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* Streams a claimed CPU; see record.h and the top of this file. */
void agent_trace_stream(struct agent_session *s, int fd, const struct tsync_peer *peer,
			uint32_t cpu)
{
	struct tsync_streamer_opts opts = {
		.stop_timeout_ms = agent_session_cfg(s)->io_timeout_ms,
	};
	struct agent_trace *t = trace_of(s);
	struct tsync_streamer *st = NULL;
	uint64_t bytes;
	int ret = -EPIPE;

	/* the instance stays until every claimed CPU is released */
	pthread_mutex_lock(&t->lock);
	ret = tsync_streamer_start(tsync_instance_tracefs(t->ti), (int)cpu, fd,
				   &opts, &st);
	if (ret) {
		pthread_mutex_unlock(&t->lock);
		log_err("%s: cannot stream cpu %u of %s: %s", peer->name, cpu, t->name,
			strerror(-ret));
		shutdown(fd, SHUT_RDWR);
		release_cpu(t, cpu, 0, ret);
		return;
	}
	/* the streamer thread is new: left out like the others */
	agent_instopts_hide_new(t->ti, &t->hide, peer->name);
	log_info("%s: streaming cpu %u of %s", peer->name, cpu, t->name);
	while (!t->stop_req)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);

	/* tracing is off now: flush the last pages, then EOF */
	ret = tsync_streamer_stop(st);
	bytes = tsync_streamer_bytes(st);
	tsync_streamer_free(st);
	shutdown(fd, SHUT_WR);
	if (ret)
		log_warn("%s: stream of cpu %u ended: %s after %llu bytes", peer->name,
			 cpu, strerror(-ret), (unsigned long long)bytes);
	else
		log_info("%s: stream of cpu %u complete: %llu bytes", peer->name, cpu,
			 (unsigned long long)bytes);
	release_cpu(t, cpu, bytes, ret);
}

/* Removes stale recording instances; see record.h. */
int agent_record_cleanup_stale(void)
{
	return tsync_instance_cleanup_stale(AGENT_RECORD_INST_PREFIX);
}
