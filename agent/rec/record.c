// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One recording on the agent; the states are described in record.h.
 *
 * Threads and lifetimes
 * ---------------------
 * The session's control thread owns the recording (struct agent_rec) and
 * drives its states. Streams are the other threads' business:
 *
 *  - tsync's data connections (agent/tsync/data.c) each have their own
 *    thread (server.c). Before it answers the HELLO, that thread finds the
 *    session (a registry reference that keeps it alive) and claims its CPU
 *    here under the lock (agent_rec_claim()); a refusal is an ERROR in
 *    place of the HELLO_REPLY. After the reply, agent_rec_stream(@wait)
 *    starts a streamer (common/stream/streamer.h: its own thread moves the
 *    pages) and sleeps until the control side asks the streams to stop. It
 *    then stops its streamer itself, so that all CPUs flush in parallel,
 *    shuts the socket's sending side (EOF: the host knows the stream is
 *    complete), records its result and wakes the control side.
 *  - a trace-cmd session's CPU connections are accepted by the control
 *    thread (agent/tcmd/tcmd_ports.c), which claims and starts each
 *    stream without waiting; the stop ends those streams the same way, one
 *    after the other, on the control thread.
 *
 * The control side waits for every claimed CPU to be done before it
 * reports the stop or removes the instance. Because a data thread may
 * look the recording up while it holds its session reference, a session
 * clears its recording when it ends (agent_rec_clear()) and frees it only
 * once no data connection can reach it (after agent_registry_remove()).
 * On shutdown the server shuts every socket down: the control thread's
 * wait fails, its cleanup asks the streams to stop, and streams whose
 * socket is gone end at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "agent/conn/config.h"
#include "agent/rec/budget.h"
#include "agent/rec/instopts.h"
#include "agent/rec/record.h"
#include "common/base/log.h"
#include "common/base/timeutil.h"
#include "common/cli/recopt.h"
#include "common/stream/streamer.h"
#include "common/tracefs/instance.h"
#include "common/tracemeta/tracemeta.h"
#include "proto/proto.h"

/* Margin on top of the streams' own flush deadline before the control
 * side gives up waiting for them. */
#define STOP_MARGIN_MS	5000

enum rec_state {
	REC_IDLE,	/* no instance */
	REC_READY,	/* instance made, tracing off */
	REC_ACTIVE,	/* recording; streams are accepted */
	REC_STOPPED,	/* stopped (instance kept for the metadata) */
};

struct rec_cpu {
	bool claimed;		/* a stream belongs to this CPU */
	bool waited;		/* its caller's thread ends it (agent_rec_stream()) */
	bool done;		/* its stream ended */
	int result;		/* 0 or the -errno that ended it */
	uint64_t bytes;		/* bytes sent on it */
	struct tsync_streamer *st;	/* while it streams */
	int fd;
	const char *peer;	/* whose connection @fd is */
};

struct agent_rec {
	const struct agent_ctx *ctx;
	char prefix[TSYNC_INSTANCE_PREFIX_MAX];
	const char *peer;		/* for the log */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* state changes (CLOCK_MONOTONIC) */
	enum rec_state state;
	bool stop_req;			/* streams must stop */
	struct tsync_instance *ti;	/* NULL when idle */
	const char *name;		/* ti's name, "" when idle */
	uint32_t ncpus;
	int nclaimed, ndone;
	struct rec_cpu *cpus;
	uint64_t reserved_kb;		/* of the agent's budget (--max-trace-mb) */
	struct agent_hide hide;		/* the agent's threads left out? */
	struct tracemeta *meta;		/* agent_rec_meta()'s, of this instance */
};

/* Creates an idle recording; see record.h. */
int agent_rec_new(const struct agent_ctx *ctx, const char *prefix, const char *peer,
		  struct agent_rec **out)
{
	struct agent_rec *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;

	if (!r)
		return -ENOMEM;
	r->ncpus = (uint32_t)ctx->ncpus;
	r->cpus = calloc(r->ncpus, sizeof(*r->cpus));
	if (!r->cpus) {
		free(r);
		return -ENOMEM;
	}
	r->ctx = ctx;
	r->peer = peer;
	r->name = "";
	snprintf(r->prefix, sizeof(r->prefix), "%s", prefix);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	*out = r;
	return 0;
}

/* Waits on @r->cond until @deadline (CLOCK_MONOTONIC ns); lock held.
 * Returns 0 or ETIMEDOUT. */
static int timed_wait(struct agent_rec *r, int64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};

	return pthread_cond_timedwait(&r->cond, &r->lock, &ts);
}

/* Marks claimed @cpu of @r done after @bytes with @result; wakes the
 * control side. */
static void release_cpu(struct agent_rec *r, uint32_t cpu, uint64_t bytes, int result)
{
	pthread_mutex_lock(&r->lock);
	r->cpus[cpu].st = NULL;
	r->cpus[cpu].bytes = bytes;
	r->cpus[cpu].result = result;
	r->cpus[cpu].done = true;
	r->ndone++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Ends stream @st of @cpu into @fd of @peer (tracing is off): flushes the
 * last pages, then EOF; releases the CPU. Lock not held. */
static void end_stream(struct agent_rec *r, uint32_t cpu, struct tsync_streamer *st,
		       int fd, const char *peer)
{
	int ret = tsync_streamer_stop(st);
	uint64_t bytes = tsync_streamer_bytes(st);

	tsync_streamer_free(st);
	shutdown(fd, SHUT_WR);
	if (ret)
		log_warn("%s: stream of cpu %u ended: %s after %llu bytes", peer, cpu,
			 strerror(-ret), (unsigned long long)bytes);
	else
		log_info("%s: stream of cpu %u complete: %llu bytes", peer, cpu,
			 (unsigned long long)bytes);
	release_cpu(r, cpu, bytes, ret);
}

/*
 * Asks the streams to stop, ends those no thread of their own waits on,
 * and waits until every claimed CPU is done or @timeout_ms passed. Lock
 * held (dropped while a stream is ended). Returns 0 or -ETIMEDOUT.
 */
static int stop_streams(struct agent_rec *r, int timeout_ms)
{
	int64_t deadline = tsync_deadline_ms(timeout_ms);

	r->stop_req = true;
	pthread_cond_broadcast(&r->cond);
	for (uint32_t cpu = 0; cpu < r->ncpus; cpu++) {
		struct rec_cpu *c = &r->cpus[cpu];
		struct tsync_streamer *st = c->st;
		const char *peer = c->peer;
		int fd = c->fd;

		if (!st || c->waited || c->done)
			continue;
		c->st = NULL;
		pthread_mutex_unlock(&r->lock);
		end_stream(r, cpu, st, fd, peer);
		pthread_mutex_lock(&r->lock);
	}
	while (r->ndone < r->nclaimed)
		if (timed_wait(r, deadline) == ETIMEDOUT)
			return -ETIMEDOUT;
	return 0;
}

/* How long the control side waits for the streams at a stop. */
static int stop_timeout_ms(const struct agent_rec *r)
{
	return r->ctx->cfg->io_timeout_ms + STOP_MARGIN_MS;
}

/* Removes @r's instance (events off first), gives its buffers back and
 * resets it to idle; the streams must be done. Lock held. */
static void remove_instance(struct agent_rec *r)
{
	tracemeta_free(r->meta);
	r->meta = NULL;
	tsync_instance_destroy(r->ti);	/* logs a failure */
	agent_budget_release(r->ctx->budget, r->reserved_kb);
	r->reserved_kb = 0;
	r->ti = NULL;
	r->name = "";
	r->state = REC_IDLE;
	r->stop_req = false;
	r->nclaimed = r->ndone = 0;
	memset(r->cpus, 0, r->ncpus * sizeof(*r->cpus));
}

/* Stops the streams and removes the instance; lock held. */
static void clear_locked(struct agent_rec *r)
{
	if (r->ti)
		tsync_instance_stop(r->ti);
	if (stop_streams(r, stop_timeout_ms(r)))
		log_err("%s: streams did not finish in time; removing anyway", r->name);
	remove_instance(r);
}

/* Clears the recording; see record.h. */
void agent_rec_clear(struct agent_rec *r)
{
	pthread_mutex_lock(&r->lock);
	clear_locked(r);
	pthread_mutex_unlock(&r->lock);
}

/* Frees the recording; see record.h. */
void agent_rec_free(struct agent_rec *r)
{
	if (!r)
		return;
	agent_rec_clear(r);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r->cpus);
	free(r);
}

/* Checks a buffer size against --max-buffer-kb; see record.h. */
int agent_rec_check_buffer(const struct agent_ctx *ctx, uint32_t kb, char *err,
			   size_t errlen)
{
	if (kb <= ctx->cfg->max_buffer_kb)
		return 0;
	snprintf(err, errlen, "buffer of %u KiB per CPU above the agent's limit of %u KiB "
		 "(--max-buffer-kb)", kb, ctx->cfg->max_buffer_kb);
	return -EINVAL;
}

/* Sets aside @buffer_kb KiB per CPU (0: the default) from the agent's
 * budget. Returns 0, or -ENOSPC with @err filled. Lock held. */
static int reserve_buffers(struct agent_rec *r, uint32_t buffer_kb, char *err,
			   size_t errlen)
{
	struct agent_budget *b = r->ctx->budget;
	uint64_t kb = (uint64_t)(buffer_kb ? buffer_kb : TSYNC_INSTANCE_DEFAULT_BUFFER_KB) *
		      r->ncpus, free_kb = 0;

	if (agent_budget_reserve(b, kb, &free_kb)) {
		snprintf(err, errlen, "%llu KiB of trace buffers (%u CPUs) would take the "
			 "agent over its budget of %llu MiB for all sessions "
			 "(--max-trace-mb): %llu KiB free", (unsigned long long)kb, r->ncpus,
			 (unsigned long long)(agent_budget_total(b) / 1024),
			 (unsigned long long)free_kb);
		return -ENOSPC;
	}
	r->reserved_kb = kb;
	return 0;
}

/* The ERROR code for a recipe that failed at @step with @ret, @err. */
static uint32_t recipe_code(enum tsync_recipe_step step, int ret, const char *err)
{
	switch (step) {
	case TSYNC_RECIPE_CREATE:
		return ret == -EBUSY || ret == -EADDRINUSE ? TSYNC_ERR_BUSY : TSYNC_ERR_INTERNAL;
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

/* Makes the instance of @q (the recipe, common/tracefs/instance.h).
 * Returns 0 or -errno with *@code and @err. Lock held. */
static int make_instance(struct agent_rec *r, const struct agent_rec_req *q,
			 uint32_t *code, char *err, size_t errlen)
{
	const struct tsync_recopt *o = q->opt;
	struct tsync_instance_recipe rp = {
		.prefix = r->prefix, .opt = &o->inst, .clock = q->clock, .buffer_kb = q->buffer_kb,
		.hide_self = !o->no_filter,
		/* event-fork leaves the threads the agent starts later out at
		 * once; it would also make -P follow children, which only -c
		 * asks for */
		.follow_new = !o->inst.npids || o->inst.follow_children,
		.hide_may_fail = true, .self = "the agent", .log_as = r->peer,
		.take_top_in_use = r->ctx->cfg->borrow_top_in_use,
		.events = q->events, .enable_events = tracemeta_enable_events,
	};
	enum tsync_recipe_step step;
	int ret = tsync_instance_from_recipe(&rp, &r->ti, &step, err, errlen);

	if (ret) {
		*code = recipe_code(step, ret, err);
		return ret;
	}
	r->name = tsync_instance_name(r->ti);
	r->hide = (struct agent_hide){ .self = rp.hide_self, .follow_new = rp.follow_new };
	return 0;
}

/* Sets a recording up; see record.h. */
int agent_rec_setup(struct agent_rec *r, const struct agent_rec_req *q, uint32_t *code,
		    char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	if (r->state == REC_STOPPED)	/* the previous recording */
		clear_locked(r);
	*code = TSYNC_ERR_LIMIT;
	if (r->state != REC_IDLE) {
		snprintf(err, errlen, "a trace is already active in this session");
		*code = TSYNC_ERR_UNEXPECTED;
		ret = -EBUSY;
	} else {
		ret = agent_rec_check_buffer(r->ctx, q->buffer_kb, err, errlen);
	}
	if (!ret)
		ret = reserve_buffers(r, q->buffer_kb, err, errlen);
	if (!ret) {
		ret = make_instance(r, q, code, err, errlen);
		if (ret)
			remove_instance(r);	/* the buffers go back */
	}
	if (!ret)
		r->state = REC_READY;
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* Turns tracing on; see record.h. */
int agent_rec_start(struct agent_rec *r, char *err, size_t errlen)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&r->lock);
	if (r->state == REC_READY)
		ret = tsync_instance_start(r->ti);
	if (ret) {
		snprintf(err, errlen, "cannot turn tracing on in %s: %s", r->name,
			 strerror(-ret));
		if (r->state == REC_READY)
			remove_instance(r);
	} else {
		r->state = REC_ACTIVE;
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* The figures of @cpu into @cs (may be NULL), warnings logged. Lock held. */
static void cpu_stats(struct agent_rec *r, uint32_t cpu, struct tsync_cpu_stats *cs)
{
	struct tsync_cpu_stats c = { .cpu = cpu, .bytes = r->cpus[cpu].bytes };
	struct tracemeta_stats st;

	if (tracemeta_read_stats(tsync_instance_tracefs(r->ti), (int)cpu, &st, NULL)) {
		log_debug("%s: no stats for cpu %u", r->name, cpu);
	} else {
		c.entries = st.entries + st.read_events;
		c.overrun = st.overrun + st.commit_overrun;
		c.dropped = st.dropped_events;
		if (!r->cpus[cpu].claimed && c.entries)
			log_warn("%s: cpu %u: %llu events recorded but never streamed (no data connection)",
				 r->name, cpu, (unsigned long long)c.entries);
		if (c.overrun || c.dropped)
			log_warn("%s: cpu %u lost events: %llu overrun, %llu dropped",
				 r->name, cpu, (unsigned long long)c.overrun,
				 (unsigned long long)c.dropped);
	}
	if (cs)
		*cs = c;
}

/* Stops the recording; see record.h. */
int agent_rec_stop(struct agent_rec *r, struct tsync_cpu_stats *cs)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	if (r->state != REC_ACTIVE) {
		pthread_mutex_unlock(&r->lock);
		return -ENOENT;
	}
	tsync_instance_stop(r->ti);
	ret = stop_streams(r, stop_timeout_ms(r));
	r->state = REC_STOPPED;
	for (uint32_t cpu = 0; cpu < r->ncpus; cpu++)
		cpu_stats(r, cpu, cs ? &cs[cpu] : NULL);
	pthread_mutex_unlock(&r->lock);
	if (ret)
		log_err("%s: streams did not finish in time", r->name);
	return ret;
}

/* Returns true if recording; see record.h. */
bool agent_rec_active(const struct agent_rec *r)
{
	return r->state == REC_ACTIVE;
}

/* Returns the instance's name; see record.h. */
const char *agent_rec_name(const struct agent_rec *r)
{
	return r->name;
}

/* Returns the CPU count; see record.h. */
uint32_t agent_rec_ncpus(const struct agent_rec *r)
{
	return r->ncpus;
}

/* Claims @cpu for a stream; see record.h. */
int agent_rec_claim(struct agent_rec *r, uint32_t cpu, char *why, size_t whylen)
{
	int code = 0;

	pthread_mutex_lock(&r->lock);
	if (r->state != REC_ACTIVE) {
		snprintf(why, whylen, "no trace is active in this session");
		code = TSYNC_ERR_UNEXPECTED;
	} else if (cpu >= r->ncpus) {
		snprintf(why, whylen, "cpu %u out of range (%u CPUs)", cpu, r->ncpus);
		code = TSYNC_ERR_NO_CPU;
	} else if (r->cpus[cpu].claimed) {
		snprintf(why, whylen, "cpu %u already has a stream", cpu);
		code = TSYNC_ERR_BUSY;
	} else {
		r->cpus[cpu].claimed = true;
		r->nclaimed++;
	}
	pthread_mutex_unlock(&r->lock);
	return code;
}

/* Gives up a claim before its stream started; see record.h. */
void agent_rec_unclaim(struct agent_rec *r, uint32_t cpu)
{
	pthread_mutex_lock(&r->lock);
	if (cpu < r->ncpus && r->cpus[cpu].claimed && !r->cpus[cpu].done) {
		r->cpus[cpu].claimed = false;
		r->nclaimed--;
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
}

/* Streams a claimed CPU; see record.h and the top of this file. */
int agent_rec_stream(struct agent_rec *r, uint32_t cpu, int fd, const char *peer,
		     bool wait)
{
	/* the kernel wakes the streamer at buffer_percent; it also looks
	 * once a second, so that a lightly loaded CPU's data still flows */
	struct tsync_streamer_opts opts = {
		.poll_ms = TSYNC_STREAMER_LOOK_MS,
		.stop_timeout_ms = r->ctx->cfg->io_timeout_ms,
	};
	struct tsync_streamer *st = NULL;
	int ret;

	/* the instance stays until every claimed CPU is released */
	pthread_mutex_lock(&r->lock);
	ret = tsync_streamer_start(tsync_instance_tracefs(r->ti), (int)cpu, fd, &opts, &st);
	if (ret) {
		pthread_mutex_unlock(&r->lock);
		log_err("%s: cannot stream cpu %u of %s: %s", peer, cpu, r->name,
			strerror(-ret));
		shutdown(fd, SHUT_RDWR);
		release_cpu(r, cpu, 0, ret);
		return ret;
	}
	r->cpus[cpu].st = st;
	r->cpus[cpu].fd = fd;
	r->cpus[cpu].peer = peer;
	r->cpus[cpu].waited = wait;
	/* the streamer thread is new: left out like the others */
	agent_instopts_hide_new(r->ti, &r->hide, peer);
	log_info("%s: streaming cpu %u of %s", peer, cpu, r->name);
	if (!wait) {
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	while (!r->stop_req)
		pthread_cond_wait(&r->cond, &r->lock);
	r->cpus[cpu].st = NULL;
	pthread_mutex_unlock(&r->lock);
	/* tracing is off now: flush the last pages, then EOF */
	end_stream(r, cpu, st, fd, peer);
	return 0;
}

/* Leaves the agent's newer threads out; see record.h. */
void agent_rec_hide_new(struct agent_rec *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->ti)
		agent_instopts_hide_new(r->ti, &r->hide, r->peer);
	pthread_mutex_unlock(&r->lock);
}

/* Returns the marker fd; see record.h. */
int agent_rec_marker(struct agent_rec *r)
{
	return r->ti ? tsync_instance_marker_fd(r->ti) : -ENOENT;
}

/* Collects the metadata; see record.h. */
int agent_rec_collect(struct agent_rec *r, const struct tracemeta_opts *o,
		      struct tracemeta **out)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&r->lock);
	if (r->ti)
		ret = tracemeta_collect(tsync_instance_tracefs(r->ti), o, out);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* The metadata for a META_REQ, collected once and then refreshed; see
 * record.h. */
int agent_rec_meta(struct agent_rec *r, const struct tracemeta_opts *o,
		   const struct tracemeta **out)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&r->lock);
	if (r->ti && r->meta) {
		ret = tracemeta_refresh(r->meta, tsync_instance_tracefs(r->ti), o);
	} else if (r->ti) {
		ret = tracemeta_collect(tsync_instance_tracefs(r->ti), o, &r->meta);
		if (ret)
			r->meta = NULL;
	}
	*out = ret ? NULL : r->meta;
	pthread_mutex_unlock(&r->lock);
	return ret;
}
