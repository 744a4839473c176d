/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host's trace-cmd record options applied to a session's instance: the
 * one applier behind both protocols (tsync's TRACE_START option words,
 * record.c; a trace-cmd host's TRACE_REQ argv, tcmd_session.c). Both
 * parse the words with agent_recopt_words() (evsel.h) into a struct
 * tsync_recopt, resolve its -e with agent_events_resolve(), and give
 * the instance its settings here, so that both accept and refuse the same
 * options (tsync-agent(8) lists them).
 */
#ifndef TSYNC_AGENT_INSTOPTS_H
#define TSYNC_AGENT_INSTOPTS_H

#include <stdbool.h>
#include <stddef.h>

struct tsync_instance;
struct tsync_recopt;

/* Whether and how the agent's own threads are left out of an instance. */
struct agent_hide {
	bool self;		/* left out (no --no-filter) */
	bool follow_new;	/* by event-fork and function-fork too (no -P without -c) */
};

/*
 * Applies @o's instance settings (common/tracefs/instance_opts.h: function filters,
 * pids, trace options, CPU mask, cmdlines size) to @ti, leaves the
 * agent's threads out unless --no-filter (a failure there is logged for
 * @peer, not fatal), then selects the tracer (after the pid files: see
 * tsync_instance_apply_tracer()). Returns 0 and *@hide, or the -errno of
 * tsync_instance_apply_opts() or _apply_tracer() with the reason in @err: -EPERM/-EACCES
 * (the kernel refused, e.g. the function tracer), -ENOENT (not on this
 * kernel), others (a bad value).
 */
int agent_instopts_apply(struct tsync_instance *ti, const struct tsync_recopt *o,
			 const char *peer, struct agent_hide *hide, char *err,
			 size_t errlen);

/* Leaves threads the agent started since out of @ti as @hide says (a
 * failure is logged for @peer). */
void agent_instopts_hide_new(struct tsync_instance *ti, const struct agent_hide *hide,
			     const char *peer);

#endif
