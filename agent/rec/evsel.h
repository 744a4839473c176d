/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event selection of a host's TRACE_START, resolved against the
 * kernel's events within bounds: one request may not expand (globs, bare
 * event names matched in every system) beyond AGENT_MAX_SELECTIONS events
 * or AGENT_MAX_FILTER_BYTES of filter text, and repeated entries count
 * once.
 */
#ifndef TSYNC_AGENT_EVSEL_H
#define TSYNC_AGENT_EVSEL_H

#include <stddef.h>

#include "common/tracemeta/tracemeta.h"
#include "proto/proto.h"

/* More than 3x the 2305 events of a distribution kernel: every event, one
 * by one, with room to spare. */
#define AGENT_MAX_SELECTIONS	8192
/* Filters are compiled by the kernel, per event: 256 KiB of them take it
 * a few tenths of a second. */
#define AGENT_MAX_FILTER_BYTES	(256 * 1024)

/*
 * Resolves the @n events of a TRACE_START (duplicates dropped). Returns 0
 * and the selection in @out (tracemeta_events_free()), or an ERROR code
 * (> 0) with a reason in @err: NO_EVENT (unknown event), BAD_REQUEST
 * (malformed), LIMIT (over the bounds above), INTERNAL.
 */
int agent_events_resolve(const struct tsync_trace_event *events, uint32_t n,
			 struct tracemeta_events **out, char *err, size_t errlen);

struct tsync_recopt;

/*
 * Parses @n record option words @words (a TRACE_START's ARGS, or the argv
 * of a trace-cmd host's TRACE_REQ; no program name) with the one parser
 * of trace-cmd record options (common/recopt, agent scope) into @o
 * (tsync_recopt_init()ed by the caller; tsync_recopt_free() it in every
 * case). Returns 0, -EINVAL with the parser's reason in @err, or -ENOMEM.
 */
int agent_recopt_words(int n, const char *const *words, struct tsync_recopt *o,
		       char *err, size_t errlen);

/*
 * A TRACE_START with TSYNC_TRACE_FL_ARGS: parses its option words with
 * the one parser of trace-cmd record options (common/recopt, agent scope)
 * into @o (tsync_recopt_init()ed by the caller), and copies @rq into @out
 * with the buffer size and clock the options give. Returns 0, or
 * BAD_REQUEST with @err saying why (the parser's message, or events or a
 * buffer size given both ways).
 */
int agent_trace_args(const struct tsync_trace_start *rq, struct tsync_recopt *o,
		     struct tsync_trace_start *out, char *err, size_t errlen);

/* agent_events_resolve() for the -e options of @o: -v disables, -i skips
 * an event this kernel lacks. */
int agent_events_resolve_opts(const struct tsync_recopt *o, struct tracemeta_events **out,
			      char *err, size_t errlen);

#endif
