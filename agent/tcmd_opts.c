// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd record options for tsync-agent: see tcmd_opts.h. The one
 * parser (common/recopt.c) knows every trace-cmd option; this file decides
 * which of the instance options tsync-agent applies for a trace-cmd host
 * and names the others in its refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tcmd_opts.h"
#include "common/recopt.h"

/* Names the first option of @o that the agent does not apply, or NULL. */
static const char *unsupported(const struct tsync_recopt *o)
{
	if (o->tracer)
		return "-p (tracers)";
	if (o->funcs.n || o->notrace_funcs.n || o->graph_funcs.n || o->module)
		return "-l/-n/-g/--module (function filters)";
	if (o->max_graph_depth >= 0)
		return "--max-graph-depth";
	if (o->npids || o->follow_children)
		return "-P/-c (process filters)";
	if (o->options.n)
		return "-O/-T (trace options)";
	if (o->cpumask)
		return "-M (CPU mask)";
	if (o->ignore_missing)
		return "-i";
	if (o->cmdlines_size)
		return "--cmdlines-size (it is the whole guest's setting)";
	if (o->rt_prio)
		return "-r";
	for (int i = 0; i < o->nevents; i++)
		if (o->events[i].negate)
			return "-v (events to leave out)";
	return NULL;
}

/* Copies the events of @o into @r. Returns 0, -EINVAL or -ENOMEM. */
static int copy_events(const struct tsync_recopt *o, struct tcmd_rec *r,
		       char *err, size_t errlen)
{
	if (!o->nevents) {
		snprintf(err, errlen, "no events to record: give -e after -A");
		return -EINVAL;
	}
	r->events = calloc((size_t)o->nevents, sizeof(*r->events));
	if (!r->events)
		return -ENOMEM;
	for (int i = 0; i < o->nevents; i++) {
		struct tsync_trace_event *e = &r->events[r->nevents];

		if (strlen(o->events[i].name) >= sizeof(e->name)) {
			snprintf(err, errlen, "event name too long: %.40s...",
				 o->events[i].name);
			return -EINVAL;
		}
		snprintf(e->name, sizeof(e->name), "%s", o->events[i].name);
		if (o->events[i].filter) {
			e->filter = strdup(o->events[i].filter);
			if (!e->filter)
				return -ENOMEM;
		}
		r->nevents++;
	}
	return 0;
}

/* Parses a TRACE_REQ's options; see tcmd_opts.h. */
int tcmd_opts_parse(int argc, const char *const *argv, struct tcmd_rec *out,
		    char *err, size_t errlen)
{
	struct tsync_recopt o;
	const char *what;
	char **av;
	int ret;

	memset(out, 0, sizeof(*out));
	av = calloc((size_t)argc + 2, sizeof(*av));
	if (!av)
		return -ENOMEM;
	av[0] = (char *)"trace-cmd";	/* skipped by the parser */
	for (int i = 0; i < argc; i++)
		av[i + 1] = (char *)argv[i];
	memset(&o, 0, sizeof(o));
	tsync_recopt_init(&o);
	ret = tsync_recopt_parse(&o, TSYNC_RECOPT_AGENT, argc + 1, av, NULL, err,
				 errlen);
	free(av);
	if (ret < 0) {
		ret = -EINVAL;
		goto out;
	}
	what = unsupported(&o);
	if (what) {
		snprintf(err, errlen, "option %s is not supported by tsync-agent", what);
		ret = -EINVAL;
		goto out;
	}
	if (o.clock && strlen(o.clock) >= sizeof(out->clock)) {
		snprintf(err, errlen, "clock name too long: %.40s...", o.clock);
		ret = -EINVAL;
		goto out;
	}
	if (o.clock)
		snprintf(out->clock, sizeof(out->clock), "%s", o.clock);
	out->buffer_kb = o.buffer_kb;
	ret = copy_events(&o, out, err, errlen);
out:
	tsync_recopt_free(&o);
	return ret;
}

/* Frees what tcmd_opts_parse() allocated. */
void tcmd_opts_free(struct tcmd_rec *r)
{
	for (uint32_t i = 0; i < r->nevents; i++)
		free(r->events[i].filter);
	free(r->events);
	memset(r, 0, sizeof(*r));
}
