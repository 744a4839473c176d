/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tsync's private tracefs instances: the one module that creates,
 * configures (clock, buffer size, buffer_percent, events), starts, stops
 * and removes them, owns their trace_marker_raw fd, and removes the ones
 * left by processes that died. A recording's instance is made by one
 * recipe, tsync_instance_from_recipe(), for tsync-host and both session
 * types of the agent; its settings beyond clock, buffer size and events
 * are a plain struct, struct tsync_instance_opts (instance_opts.h).
 *
 * Names and owners
 * ----------------
 * An instance is named "<prefix>-<pid>-<n>" (the first n free), so a human
 * sees who made it. The pid is not how "dead" is decided: pids repeat
 * across PID namespaces (containers share tracefs), and an agent in one
 * must not take a live agent of another for dead. Instead the owner holds
 * an flock(2) on the instance's own directory for as long as the instance
 * lives, its removal included. tracefs has one set of inodes whatever
 * namespace or mount it is seen through, and the kernel drops the lock
 * when the owner dies, so a free lock proves the owner is gone.
 * tsync_instance_cleanup_stale() (stale.h) switches nothing off before it
 * holds that lock itself, and (for owners that never locked: older
 * versions, humans) before the pid in the name is gone from its own PID
 * namespace too. An open file blocks the rmdir of an instance, an open
 * directory does not: the lock stays held through the rmdir, and a
 * removal that meets a cleaner's brief look at tracing_on (EBUSY; the lock
 * of an earlier tsync) is retried for a few ms. The design is described in
 * Documentation/tracefs-instances.md.
 *
 * Threads: one instance is used by one thread at a time, except
 * tsync_instance_marker_fd() and tsync_instance_tracefs(), which only read.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/tracefs/
 *   instance.c, instance.h  tsync's private tracefs instances, owner locks
 *   instance_priv.h         what instance.c lends stale.c: the owner lock, removal
 *   stale.c, stale.h        removal of the instances whose owners died
 *   instance_opts.c, instance_opts.h  a recording's settings (a plain struct)
 *                           written to an instance
 *   topstate.c, topstate.h  the top instance's state around a borrow: in use
 *                           by someone, saved, cleaned, written back
 *   global.c, global.h      machine-wide settings (saved_cmdlines_size) with one
 *                           owner: the first saves, the last writes back
 *   ringbuf.c, ringbuf.h    the ring buffer's page size of an instance (header_page),
 *                           a CPU's trace_pipe_raw opened
 *   watermark.c, watermark.h  buffer_percent's wake-up armed before a recording
 *   selffilter.c, selffilter.h  event filters leaving our threads out of the
 *                           switches and wakeups that name them
 *   remover.c, remover.h    a stopped instance removed by a process of its own
 */
#ifndef TSYNC_INSTANCE_H
#define TSYNC_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/trace_clock.h"

/* What every tsync instance's name starts with, whichever program made
 * it: the one naming rule, and what tsync_instance_cleanup_all_stale()
 * looks for. */
#define TSYNC_INSTANCE_NAME_PREFIX "tsync-"
/* Longest prefix tsync_instance_create() accepts. */
#define TSYNC_INSTANCE_PREFIX_MAX 40
/* The per-CPU ring buffer of a new instance when no size is given: the
 * kernel's default (trace_buf_size), in KiB. */
#define TSYNC_INSTANCE_DEFAULT_BUFFER_KB 1408

struct tracefs_instance;
struct tracemeta_events;
struct tsync_instance;
struct tsync_instance_opts;

/*
 * Creates instance "<@prefix>-<pid>-<n>" (prefix: "tsync-" then letters,
 * digits, '_' or '-') and takes its owner lock. Tracing is off in it until
 * tsync_instance_start(). Returns 0 and *@out, or -errno (-EINVAL bad
 * prefix, -ENODEV no tracefs).
 */
int tsync_instance_create(const char *prefix, struct tsync_instance **out);

/*
 * Borrows the top tracefs instance, for what the kernel allows there only
 * (function_graph on kernels whose instances lack it, as Debian 12's 6.1;
 * blk: see tsync_instance_create_rec()). Takes the owner lock on the
 * tracing directory (one tsync recording at a time: -EBUSY; so does an
 * earlier tsync's lock on its tracing_on), refuses a top
 * instance someone else uses (tsync_topstate_in_use(), topstate.h:
 * -EADDRINUSE) unless @take_in_use, saves what tsync changes
 * (topstate.h's list, and CPU mask, buffer_percent, buffer size, clock,
 * tracing_on) and starts clean as trace-cmd does: tracing off, no event
 * enabled, nop tracer, no function or pid filters, the buffer emptied.
 * tsync_instance_destroy() cleans it the same way and writes everything
 * saved back. Returns 0 and *@out, or -errno with @why (may be NULL)
 * saying why it is busy or in use.
 */
int tsync_instance_create_top(bool take_in_use, struct tsync_instance **out, char *why,
			      size_t whylen);

/* Returns true if @ti is the borrowed top instance. */
bool tsync_instance_is_top(const struct tsync_instance *ti);

/*
 * Creates the instance for a recording with settings @o: a private one
 * (tsync_instance_create(@prefix)), or the top one
 * (tsync_instance_create_top(@take_in_use)) when @o asks for what this
 * kernel has in the top instance only: a tracer missing from the
 * instances' available_tracers (function_graph on Debian 12's 6.1, blk),
 * graph functions or a graph depth; trace-cmd records in the top instance
 * always. @self names the program in the message of a top instance in
 * use ("the agent", "tsync-host"). Returns 0 and *@out, or -errno
 * (-EBUSY: the top instance is in use by another tsync recording;
 * -EADDRINUSE: by someone else, and not @take_in_use) with @err saying
 * what failed, whole.
 */
int tsync_instance_create_rec(const char *prefix, const struct tsync_instance_opts *o,
			      bool take_in_use, const char *self, struct tsync_instance **out,
			      char *err, size_t errlen);

/*
 * Selects trace clock @clock (the kernel resets the buffer when it
 * changes, ~30 ms: nothing is written when it is selected already).
 * Returns 0, -EINVAL (not a clock of this kernel) or -errno.
 */
int tsync_instance_set_clock(struct tsync_instance *ti, const char *clock);

/*
 * Reads @file now (the kernel's top-level file when @global, else @ti's)
 * for tsync_instance_destroy() to write back, as trace-cmd restores what
 * it changed: call it before changing a setting that outlives @ti (a
 * trace option of the borrowed top instance, saved_cmdlines_size). A
 * private instance's own files go with it: nothing kept. A @global file
 * is kept by its one owner (global.h): written back when the last tsync
 * recording of the machine that kept it ends. Returns 0 or -errno.
 */
int tsync_instance_keep_setting(struct tsync_instance *ti, const char *file, bool global);

/*
 * The value to write back to tracefs @file read as @txt (modified; the
 * result points into it, or NULL): trace_clock's selected clock;
 * buffer_size_kb's size, which before the top buffer's first use the
 * kernel shows as "7 (expanded: 1408)" (1408 is the size it will have:
 * writing 7 back would make it 7 KiB for real); else the first word.
 */
char *tsync_instance_file_value(const char *file, char *txt);

/* Sets the ring buffer to @kb KiB per CPU. Returns 0 or -errno. */
int tsync_instance_set_buffer_kb(struct tsync_instance *ti, uint32_t kb);

/*
 * Wakes readers of trace_pipe_raw at @percent fill (kernel default 50).
 * Returns 0 or -errno.
 */
int tsync_instance_set_buffer_percent(struct tsync_instance *ti, int percent);

/*
 * Writes the settings of @o (tracing off): CPU mask, trace options,
 * follow_children (event-fork, function-fork), pids (set_event_pid,
 * set_ftrace_pid), function filters and graph depth, and cmdlines_size
 * (the kernel's saved_cmdlines_size). Events, clock, buffer size and the
 * tracer are set apart. Returns 0, or -errno with @err saying what the
 * kernel refused ("function tracer refused by this kernel: ...").
 */
int tsync_instance_apply_opts(struct tsync_instance *ti, const struct tsync_instance_opts *o,
			      char *err, size_t errlen);

/*
 * Selects the tracer of @o (read back: a tracer the kernel refuses
 * leaves nop). Call it after the pid filters (-F,
 * tsync_instance_hide_self()): pid files are written while the tracer is
 * still nop; and before anything opens the instance's trace_pipe_raw: the
 * kernel refuses a tracer change while a reader has it open (EBUSY).
 * Returns 0, or -errno with @err filled.
 */
int tsync_instance_apply_tracer(struct tsync_instance *ti,
				const struct tsync_instance_opts *o, char *err,
				size_t errlen);

/* Adds process @pid to the instance's set_event_pid (and set_ftrace_pid):
 * -F, the command. Returns 0 or -errno. */
int tsync_instance_filter_pid(struct tsync_instance *ti, int pid);

/*
 * Leaves the calling process's threads out of the instance's events and
 * function tracing, as trace-cmd does with its own (set_event_notrace_pid
 * and set_ftrace_notrace_pid get every thread of /proc/self/task, added
 * to the lists; set_ftrace_notrace_pid only while the tracer is nop).
 * With @follow_new the options event-fork and function-fork are set so
 * that threads started later are left out too; call again without it once
 * they all run (they also make -P follow children). The kernel drops a
 * sched_switch only when both tasks are left out, so the event filters of
 * tsync_instance_filter_self() are written too. Returns 0, -EOPNOTSUPP
 * (kernel older than 5.8) or -errno.
 */
int tsync_instance_hide_self(struct tsync_instance *ti, bool follow_new);

/*
 * Writes the filters of selffilter.h into @ti's enabled sched_switch and
 * wakeup events: a switch into or out of one of the calling process's
 * threads, and a wakeup of one, are not recorded (a user's filter is
 * kept, joined with &&). The threads are those running now: call it
 * again once threads started later run (event-fork does not reach
 * filters). Returns 0 or -errno.
 */
int tsync_instance_filter_self(struct tsync_instance *ti);

/*
 * A recording's instance, as tsync_instance_from_recipe() makes it, in
 * this order: created (tsync_instance_create_rec(): private, or the top
 * instance), trace clock, buffer size, buffer_percent 10, the settings of
 * @opt (tsync_instance_apply_opts()), -F's process, the caller's threads
 * left out, the tracer (after the pid files, see
 * tsync_instance_apply_tracer()), the events. Tracing stays off.
 */
struct tsync_instance_recipe {
	const char *prefix;		/* the name's (tsync_instance_create()) */
	const struct tsync_instance_opts *opt;	/* the settings (instance_opts.h) */
	const char *clock;		/* trace clock; NULL or "": the instance's */
	uint32_t buffer_kb;		/* per CPU; 0: TSYNC_INSTANCE_DEFAULT_BUFFER_KB */
	int only_pid;			/* > 0: only this process (-F) */
	/* tsync_instance_hide_self(follow_new) when hide_self; a failure is an
	 * error, or (hide_may_fail) a warning; a kernel without the files
	 * (-EOPNOTSUPP) is a warning either way */
	bool hide_self, follow_new, hide_may_fail;
	const char *self;		/* whose threads, in messages: "tsync-host" */
	/* borrow a top instance someone else uses (its tracer, events and
	 * filters are given back, its buffer is lost): --borrow-top-in-use */
	bool take_top_in_use;
	const char *log_as;		/* the log lines' prefix (a peer), or NULL */
	/*
	 * The events: the caller's selection and how to enable it in an
	 * instance (tracemeta_enable_events(): selections are the metadata
	 * collector's, which this layer does not include). NULL events: none.
	 */
	const struct tracemeta_events *events;
	int (*enable_events)(struct tracefs_instance *inst,
			     const struct tracemeta_events *events, char *err,
			     size_t errlen);
};

/* The step of a recipe that failed, for callers that answer with a code. */
enum tsync_recipe_step {
	TSYNC_RECIPE_CREATE,	/* -EBUSY, -EADDRINUSE: the top instance is in use */
	TSYNC_RECIPE_CLOCK,
	TSYNC_RECIPE_BUFFER,
	TSYNC_RECIPE_OPTS,	/* the settings of opt */
	TSYNC_RECIPE_PID,	/* -F */
	TSYNC_RECIPE_HIDE,
	TSYNC_RECIPE_TRACER,
	TSYNC_RECIPE_EVENTS,	/* a rejected filter: @err starts "filter " */
};

/*
 * Makes the instance of recipe @r (tracing off). Returns 0 and *@out, or
 * -errno with *@step (may be NULL) saying which step failed and @err what
 * the kernel refused; then nothing is left in tracefs.
 */
int tsync_instance_from_recipe(const struct tsync_instance_recipe *r,
			       struct tsync_instance **out, enum tsync_recipe_step *step,
			       char *err, size_t errlen);

/* Turns tracing on / off. Returns 0 or -errno. */
int tsync_instance_start(struct tsync_instance *ti);
int tsync_instance_stop(struct tsync_instance *ti);

/*
 * Returns the instance's trace_marker_raw, opened write-only on first
 * call and owned by @ti, or -errno.
 */
int tsync_instance_marker_fd(struct tsync_instance *ti);

/* Returns the libtracefs handle (for streamers, metadata, stats). */
struct tracefs_instance *tsync_instance_tracefs(const struct tsync_instance *ti);

/* Returns the instance's name. */
const char *tsync_instance_name(const struct tsync_instance *ti);

/*
 * Stops tracing, disables the events, closes the marker, removes the
 * instance (the top one: resets and writes back, see
 * tsync_instance_create_top()) and releases its lock; failures are
 * logged. NULL is fine.
 * Returns 0 or the -errno of the removal (-EBUSY: a file is still open).
 */
int tsync_instance_destroy(struct tsync_instance *ti);

/*
 * Like tsync_instance_destroy(), but the kernel's part (switching off and
 * the rmdir, which waits for RCU grace periods: 50-110 ms) is left to a
 * process of its own (remover.h) that outlives the caller: returns at
 * once. Files the caller still holds in the instance (trace_pipe_raw) are
 * best closed after the call, then *@go_fd: the remover has copies and
 * closes them only then, so that the last close, which waits for the
 * kernel's tracing lock while any instance is being removed (128 ms seen),
 * is the remover's. *@go_fd is -1 when the instance was removed here (the
 * top instance, no owner lock, no process to be had:
 * tsync_instance_destroy()); NULL: the remover goes on at once.
 * Returns 0, or -errno of what was written back (kept settings).
 */
int tsync_instance_destroy_detached(struct tsync_instance *ti, int *go_fd);

/*
 * Reads the clocks the kernel offers (top instance's trace_clock) into
 * @names (at most @max) and the selected one's index into *@selected (may
 * be NULL). Returns the count or -errno.
 */
int tsync_instance_clocks(char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max,
			  int *selected);

#endif
