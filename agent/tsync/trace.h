/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The recording requests of a tsync control session (`tsync-host record`),
 * answered with the session's recording (agent/rec/record.h: its
 * instance "tsync-r<session id hex>-<pid>-<n>", streams and metadata).
 *
 * Control side (the session's thread):
 *   TRACE_START  -> agent_trace_start(): checks clock, buffer size (against
 *                   --max-buffer-kb) and events, creates the instance,
 *                   enables the events, turns tracing on, replies
 *                   TRACE_STARTED {ncpus}.
 *   SYNC_RESULT  -> agent_record_round(): a struct tsync_rec_round goes into
 *                   the instance's trace_marker_raw while it records.
 *   CLOCK_REQ    -> agent_record_clock(): likewise a struct tsync_rec_clock,
 *                   the time daemon's state as the answer says it.
 *   TRACE_STOP   -> agent_trace_stop(): tracing off, every stream flushes
 *                   its last pages and ends with EOF on its socket, then
 *                   TRACE_STOPPED {per CPU: bytes sent, entries recorded
 *                   (read + still buffered), overrun (incl. commit
 *                   overrun), dropped}.
 *   META_REQ     -> agent_trace_send_meta(): META_CHUNKs then META_END.
 *                   A "part" is the concatenation of consecutive chunks of
 *                   one kind up to the first with more == 0. HEADER_PAGE,
 *                   HEADER_EVENT, KALLSYMS, PRINTK, CMDLINES, UNAME and
 *                   TRACE_CLOCK are one part each (empty ones are not
 *                   sent); FTRACE_FORMAT and EVENT_FORMAT send one part per
 *                   format file, EVENT_FORMAT naming its system, the
 *                   formats of one system in a row.
 * Errors a host can cause (second TRACE_START, unknown clock or event, a
 * buffer over the limit, STOP or META_REQ without a trace) are answered
 * with ERROR and the session goes on.
 *
 * Data side (one connection thread per CPU, data.c): agent_trace_claim()
 * before the HELLO_REPLY (a refused data hello gets ERROR instead: unknown
 * session or wrong secret NO_SESSION, no active trace UNEXPECTED, CPU out
 * of range NO_CPU, CPU already streaming BUSY), then agent_trace_stream()
 * streams until TRACE_STOP or the session's end, and closes with EOF.
 */
#ifndef TSYNC_AGENT_TRACE_H
#define TSYNC_AGENT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/conn/control.h"

/* Each returns 0 when the session goes on, -errno when it must close. */
int agent_trace_start(struct agent_session *s, const struct tsync_trace_start *t);
int agent_trace_stop(struct agent_session *s);
int agent_trace_send_meta(struct agent_session *s);
/* Writes the round record of @r into the recorded instance (if any). */
int agent_record_round(struct agent_session *s, const struct tsync_sync_result *r);
/* Writes the clock record of @st (the answer to a CLOCK_REQ) into the
 * recorded instance, if one records; a failed write is logged. */
void agent_record_clock(struct agent_session *s, const struct tsync_clock_state *st);
/*
 * Stops the streams (waiting for their final flush) and removes the
 * recorded instance. The recording stays allocated for data connections
 * that may still look it up: free it with agent_trace_free() after
 * agent_registry_remove().
 */
void agent_trace_destroy(struct agent_session *s);
/* Frees the recording of @s (destroying it first if needed). Only once
 * no data connection can reach the session (after unregister). */
void agent_trace_free(struct agent_session *s);

/*
 * Claims @cpu of @s's active trace for a data connection. Returns 0, or
 * an ERROR code (> 0) with @why filled: no active trace UNEXPECTED, CPU
 * out of range NO_CPU, CPU already streaming BUSY.
 */
int agent_trace_claim(struct agent_session *s, uint32_t cpu, char *why, size_t whylen);
/*
 * Gives up the claim on @cpu before its stream started (the HELLO_REPLY
 * could not be sent, or the data connection failed AUTH): the CPU can be
 * claimed again, and the control side no longer waits for it.
 */
void agent_trace_unclaim(struct agent_session *s, uint32_t cpu);
/*
 * Streams claimed @cpu of @s into @fd until the session stops the trace
 * (then EOF), and releases the claim.
 */
void agent_trace_stream(struct agent_session *s, int fd, const struct tsync_peer *peer,
			uint32_t cpu);

#endif
