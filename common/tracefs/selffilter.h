/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Event filters that leave the calling process's own threads out of the
 * scheduler events that name them in a field rather than as the task
 * that emits them: sched_switch (prev_pid, next_pid) and the wakeups
 * (sched_wakeup, sched_waking, sched_wakeup_new: pid). The kernel's
 * set_event_notrace_pid drops a sched_switch only when both tasks are
 * left out, and a wakeup only when the waker is; with these filters a
 * switch into or out of one of our threads, and the wakeup of one, are
 * gone too, as trace-cmd's common_pid filters mean to do with its own.
 *
 * The filter is a list of thread ids, read from /proc/self/task when it
 * is written: call tsync_instance_filter_self() (instance.h) again once
 * threads started later run. A user's filter on the same event (-f) is
 * kept: ours is joined to it with &&. The kernel takes a filter shorter
 * than a page: consecutive ids are written as one range.
 */
#ifndef TSYNC_SELFFILTER_H
#define TSYNC_SELFFILTER_H

#include <stddef.h>

struct tracefs_instance;
struct tsync_self_filter;

/*
 * Pure: writes to @buf an expression true for an event none of whose
 * @nfields fields holds one of the @n ids @tids (sorted in place; ties
 * and runs of consecutive ids merged into ranges), e.g. for fields
 * "prev_pid" and "next_pid" and ids 7, 9, 10:
 *   prev_pid!=7&&(prev_pid<9||prev_pid>10)&&next_pid!=7&&(next_pid<9||next_pid>10)
 * and, with @user non-NULL and not empty, "(USER)&&(" that ")". Returns
 * its length, -EINVAL (no id, no field, an id < 1) or -E2BIG (it does not
 * fit in @len bytes with its terminator).
 */
int tsync_self_filter_expr(int *tids, int n, const char *const *fields, int nfields,
			   const char *user, char *buf, size_t len);

/*
 * Writes the filters into @inst's enabled sched_switch, sched_wakeup,
 * sched_waking and sched_wakeup_new for the threads of /proc/self/task.
 * *@state keeps what the user's filters were when first called (NULL
 * before; freed by tsync_self_filter_free()). An event the expression
 * does not fit (too many threads) keeps its filter, with a warning.
 * Returns 0 or -errno (the first failure; the other events are tried).
 */
int tsync_self_filter_apply(struct tracefs_instance *inst, struct tsync_self_filter **state);

void tsync_self_filter_free(struct tsync_self_filter *state);

#endif
