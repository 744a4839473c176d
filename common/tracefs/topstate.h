/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The top tracefs instance's state, as a borrow (tsync_instance_create_top())
 * finds it and gives it back: whether someone else uses it, what is saved
 * before tsync changes anything, the clean start, and the write back.
 *
 * Saved and written back: the tracer (current_tracer), the enabled
 * events (set_event), the function and graph filters (set_ftrace_filter,
 * set_ftrace_notrace, set_graph_function, set_graph_notrace,
 * max_graph_depth), the pid files (set_event_pid, set_ftrace_pid and
 * their notrace lists), options/event-fork and options/function-fork,
 * tracing_cpumask, buffer_percent, buffer_size_kb, trace_clock and
 * tracing_on (last). Not saved: the events in the buffer (a borrow
 * empties it, at the start and at the end), event filters and triggers,
 * trace options (those tsync sets are kept by
 * tsync_instance_keep_setting()).
 */
#ifndef TSYNC_TOPSTATE_H
#define TSYNC_TOPSTATE_H

#include <stdbool.h>
#include <stddef.h>

struct tsync_topstate;

/*
 * Returns true if the top instance is in use by someone: a tracer other
 * than nop, an event enabled, a function, graph or pid filter set, or
 * events in its buffer; @why (may be NULL) then says which, in words
 * ("tracer function is set", "3 events enabled (sched:sched_switch, ...)",
 * "its buffer holds 12 events"). A file the kernel lacks or will not let
 * us read counts as unused.
 */
bool tsync_topstate_in_use(char *why, size_t whylen);

/* Reads the state above into *@out. Returns 0 or -ENOMEM. */
int tsync_topstate_save(struct tsync_topstate **out);

/*
 * Puts the top instance in the state trace-cmd records from and leaves
 * it in: tracing off, no event enabled, nop tracer, no function, graph or
 * pid filters, no fork options, the buffer emptied. A file the kernel
 * lacks or refuses is skipped.
 */
void tsync_topstate_clean(void);

/*
 * Writes @st back (filters and pids, then the tracer, the events, the
 * buffer settings and the clock, tracing_on last) and frees it; NULL is
 * fine. Failures are logged. Returns 0 or the first -errno.
 */
int tsync_topstate_restore(struct tsync_topstate *st);

/* Frees @st without writing anything back; NULL is fine. */
void tsync_topstate_free(struct tsync_topstate *st);

#endif
