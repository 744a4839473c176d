/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host's record options on the agent: the option words of a TRACE_START
 * (tsync's protocol) or of a trace-cmd host's TRACE_REQ, parsed by the one
 * parser of trace-cmd record options (common/cli/recopt.h, agent scope),
 * and their event selection resolved against the kernel's events within
 * bounds: one request may not expand (globs, bare event names matched in
 * every system) beyond AGENT_MAX_SELECTIONS events or
 * AGENT_MAX_FILTER_BYTES of filter text, and repeated -e options count
 * once. Both protocols go this one way.
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
 * A TRACE_START: parses its option words (none without
 * TSYNC_TRACE_FL_ARGS) into @o (tsync_recopt_init()ed by the caller), and
 * copies @rq into @out with the clock the options give. Returns 0, or
 * BAD_REQUEST (INTERNAL: out of memory) with @err saying why (the
 * parser's message, an option only a trace-cmd host's agent takes, or
 * two clocks).
 */
int agent_trace_args(const struct tsync_trace_start *rq, struct tsync_recopt *o,
		     struct tsync_trace_start *out, char *err, size_t errlen);

/*
 * Resolves the -e options of @o (duplicates dropped; -v disables, -i
 * skips an event this kernel lacks). Returns 0 and the selection in @out
 * (tracemeta_events_free()), or an ERROR code (> 0) with a reason in
 * @err: NO_EVENT (unknown event), BAD_REQUEST (malformed), LIMIT (over
 * the bounds above), INTERNAL.
 */
int agent_events_resolve(const struct tsync_recopt *o, struct tracemeta_events **out,
			 char *err, size_t errlen);

#endif
