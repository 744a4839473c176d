/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The settings a recording gives its instance beyond clock, buffer size
 * and events: tracer, function filters, process filters, CPU mask, trace
 * options, the per-CPU buffer size asked for, saved_cmdlines size.
 * instance_opts.c writes them (tsync_instance_create_rec(),
 * tsync_instance_apply_opts(), tsync_instance_apply_tracer(), declared in
 * instance.h with the recipe that calls them).
 *
 * struct tsync_instance_opts is a plain struct: whoever fills it owns
 * what it points to. tsync-host and tsync-agent fill it from trace-cmd
 * record options (common/cli/recopt.h holds one as the instance part of
 * its parse result); this layer knows nothing of options or words.
 */
#ifndef TSYNC_INSTANCE_OPTS_H
#define TSYNC_INSTANCE_OPTS_H

#include <stdbool.h>
#include <stdint.h>

/* A list of strings (function globs, trace option names), in order. */
struct tsync_instance_list {
	char **v;
	int n;
};

/* What an instance is given; zero (and max_graph_depth -1) leaves the
 * kernel's setting. */
struct tsync_instance_opts {
	char *tracer;				/* or NULL: nop */
	struct tsync_instance_list funcs;	/* set_ftrace_filter */
	struct tsync_instance_list notrace_funcs; /* set_ftrace_notrace */
	struct tsync_instance_list graph_funcs;	/* set_graph_function */
	int max_graph_depth;			/* -1: unset */
	int *pids;				/* set_event_pid, set_ftrace_pid */
	int npids;
	bool follow_children;			/* event-fork, function-fork */
	struct tsync_instance_list options;	/* trace options; "noX" clears X */
	char *cpumask;				/* tracing_cpumask (hex), or NULL */
	uint32_t buffer_kb;			/* per CPU; 0: the kernel's size */
	int cmdlines_size;			/* saved_cmdlines_size; 0: unset */
};

#endif
