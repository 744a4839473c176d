/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One recording on the agent, the same for both session types (tsync's
 * TRACE_START, agent/tsync/trace.c; a trace-cmd host's TRACE_REQ,
 * agent/tcmd/tcmd_session.c): the buffers it takes from the agent's
 * budget (--max-buffer-kb, --max-trace-mb), its instance (the recipe,
 * common/tracefs/instance.h), its per-CPU streams, the stop with each
 * CPU's figures, and its metadata.
 *
 *   state    what holds                         leaves by
 *   IDLE     no instance                        agent_rec_setup() -> READY
 *   READY    the instance, tracing off          agent_rec_start() -> ACTIVE
 *   ACTIVE   recording: CPUs can be claimed     agent_rec_stop()  -> STOPPED
 *            and streamed
 *   STOPPED  tracing off, streams ended; the    agent_rec_setup() (clears
 *            instance kept for its metadata     first) -> READY
 *   any      agent_rec_clear() -> IDLE: streams stopped, instance removed,
 *            buffers given back
 *
 * Threads: one control thread drives the states; streams may be driven
 * by threads of their own (agent_rec_stream() with @wait: a data
 * connection's thread) or by the control thread alone (without @wait: the
 * stop ends them). The threads and lifetimes are described at the top of
 * record.c.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): agent/rec/
 *   record.c, record.h      one recording on the agent, for both session
 *                           types: budget, instance, streams, stop, metadata
 *   budget.c, budget.h      the total trace buffer budget (--max-trace-mb)
 *   evsel.c, evsel.h        a host's record option words parsed, their events resolved (bounded)
 *   instopts.c, instopts.h  the agent's own threads left out of an instance
 */
#ifndef TSYNC_AGENT_RECORD_H
#define TSYNC_AGENT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/conn/context.h"

/* Prefix of the recording instances of tsync's sessions, named
 * tsync-r<sid hex>-<pid>-<n> by common/tracefs/instance.h. */
#define AGENT_RECORD_INST_PREFIX "tsync-r"

struct agent_rec;
struct tracemeta;
struct tracemeta_events;
struct tracemeta_opts;
struct tsync_cpu_stats;
struct tsync_recopt;

/* What a recording asks for. */
struct agent_rec_req {
	const struct tsync_recopt *opt;		/* the host's record options */
	const char *clock;			/* NULL or "": the instance's */
	uint32_t buffer_kb;			/* per CPU; 0: the default */
	const struct tracemeta_events *events;	/* resolved (evsel.h) */
};

/*
 * Creates an idle recording of @ctx's CPUs whose instance will be named
 * after @prefix ("tsync-r<sid hex>"), logging as @peer (a string that
 * outlives it). Returns 0 and *@out, or -ENOMEM.
 */
int agent_rec_new(const struct agent_ctx *ctx, const char *prefix, const char *peer,
		  struct agent_rec **out);
/* Clears @r and frees it (NULL is fine): only once no thread can reach
 * it. */
void agent_rec_free(struct agent_rec *r);

/* Checks a per-CPU buffer of @kb KiB against --max-buffer-kb. Returns 0,
 * or -EINVAL with the reason in @err. */
int agent_rec_check_buffer(const struct agent_ctx *ctx, uint32_t kb, char *err,
			   size_t errlen);

/*
 * Sets up the recording @q asks for (from IDLE or STOPPED: a STOPPED one
 * is cleared first): checks its buffer size, sets its buffers aside from
 * the budget, makes its instance (tracing off). Returns 0 (READY), or
 * -errno with the ERROR code a tsync host gets in *@code and the reason
 * in @err: -EBUSY UNEXPECTED (not idle), -EINVAL LIMIT (--max-buffer-kb),
 * -ENOSPC LIMIT (--max-trace-mb), else the recipe's step: BUSY (the top
 * instance is in use), LIMIT (buffer size), PERMISSION, UNSUPPORTED or
 * BAD_REQUEST (options, tracer), BAD_REQUEST (a filter), INTERNAL. On
 * failure nothing is left in tracefs or taken from the budget.
 */
int agent_rec_setup(struct agent_rec *r, const struct agent_rec_req *q, uint32_t *code,
		    char *err, size_t errlen);
/* Turns tracing on (READY -> ACTIVE). Returns 0, or -errno with @err
 * filled (then cleared: IDLE). */
int agent_rec_start(struct agent_rec *r, char *err, size_t errlen);
/*
 * Stops an ACTIVE recording: tracing off, every stream flushes its last
 * pages and ends with EOF (within the I/O timeout and a margin), then
 * each CPU's figures go to @cs (@ncpus entries, may be NULL: logged
 * only). Returns 0, -ENOENT (not ACTIVE) or -ETIMEDOUT (logged; STOPPED
 * all the same).
 */
int agent_rec_stop(struct agent_rec *r, struct tsync_cpu_stats *cs);
/* Stops the streams (waiting for their final flush), removes the
 * instance, gives the buffers back: IDLE. */
void agent_rec_clear(struct agent_rec *r);

/* Returns true if @r records (ACTIVE). */
bool agent_rec_active(const struct agent_rec *r);
/* Returns the instance's name ("" when idle). */
const char *agent_rec_name(const struct agent_rec *r);
/* Returns how many CPUs @r records. */
uint32_t agent_rec_ncpus(const struct agent_rec *r);

/*
 * Claims @cpu for a stream. Returns 0, or an ERROR code (> 0) with @why
 * filled: not ACTIVE UNEXPECTED, CPU out of range NO_CPU, CPU already
 * claimed BUSY.
 */
int agent_rec_claim(struct agent_rec *r, uint32_t cpu, char *why, size_t whylen);
/* Gives up the claim on @cpu before its stream started: it can be claimed
 * again, and the stop no longer waits for it. */
void agent_rec_unclaim(struct agent_rec *r, uint32_t cpu);
/*
 * Streams claimed @cpu into @fd (a connection of @peer, which must
 * outlive the stream). With @wait, on the caller's thread until the
 * recording stops, then flushes and ends the stream (EOF) itself, so that
 * all CPUs flush at once; without, returns once the stream runs, and the
 * stop ends it. Returns 0, or -errno when the stream could not start
 * (logged; @fd shut down, the claim released).
 */
int agent_rec_stream(struct agent_rec *r, uint32_t cpu, int fd, const char *peer,
		     bool wait);
/* Leaves threads the agent started since out of the instance, as the
 * options said (its threads are left out unless --no-filter). */
void agent_rec_hide_new(struct agent_rec *r);

/* Returns the instance's trace_marker_raw (opened on the first call), or
 * -errno (-ENOENT: no instance). Control thread only. */
int agent_rec_marker(struct agent_rec *r);
/* Collects the instance's metadata (tracemeta_collect()). Returns 0 and
 * *@out, or -ENOENT (no instance) or -errno. */
int agent_rec_collect(struct agent_rec *r, const struct tracemeta_opts *o,
		      struct tracemeta **out);
/*
 * The instance's metadata for a META_REQ: collected at the recording's
 * first call (tracemeta_collect()), kept, and at later calls only read
 * again where a recording changes it (tracemeta_refresh(): printk
 * formats, cmdlines, CPU stats), so that the final one, at the stop, does
 * not read kallsyms and every format again. Pass the same @o every time.
 * Returns 0 and *@out (owned by @r, valid until the instance goes:
 * agent_rec_setup(), agent_rec_clear()), or -ENOENT (no instance) or
 * -errno. Control thread only.
 */
int agent_rec_meta(struct agent_rec *r, const struct tracemeta_opts *o,
		   const struct tracemeta **out);

#endif
