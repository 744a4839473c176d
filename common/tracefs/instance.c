// SPDX-License-Identifier: GPL-2.0-or-later
/* tsync's private tracefs instances and their owner locks; see instance.h. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include <tracefs.h>

#include "common/base/errbuf.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/instance_priv.h"
#include "common/base/log.h"
#include "common/tracefs/global.h"
#include "common/tracefs/remover.h"
#include "common/tracefs/selffilter.h"
#include "common/tracefs/topstate.h"

/* How many "-<n>" suffixes tsync_instance_create() tries. */
#define INSTANCE_TRIES 10000
/* rmdir of an instance someone has a file of open: retries, pause. */
#define RMDIR_TRIES 100
#define RMDIR_WAIT_US 1000

/* The top instance's settings tsync_instance_create_top() saves and
 * tsync_instance_destroy() writes back, in this order (tracing_on last). */
static const char *const top_saved_files[] = {
	"tracing_cpumask", "buffer_percent", "buffer_size_kb", "trace_clock",
	"tracing_on",
};
#define TOP_SAVED (sizeof(top_saved_files) / sizeof(top_saved_files[0]))

struct tsync_instance {
	struct tracefs_instance *inst;	/* NULL: the top instance */
	char name[TSYNC_INSTANCE_PREFIX_MAX + 32];
	int lock_fd;		/* its directory, flock'd: the owner lock */
	int marker_fd;		/* trace_marker_raw, -1 until asked for */
	bool top;		/* the top instance, borrowed */
	char *saved[TOP_SAVED];	/* top: the values of top_saved_files */
	struct tsync_topstate *state;	/* top: its tracer, events, filters */
	struct kept {		/* tsync_instance_keep_setting(), in order */
		char *file, *val;
		bool global;	/* the kernel's file, not the instance's */
	} *kept;
	size_t nkept;
	/* machine-wide settings kept: global.h's owner decides who writes
	 * them back */
	struct tsync_global *globals[4];
	char global_files[4][64];
	int nglobals;
	struct tsync_self_filter *self_filter;	/* tsync_instance_filter_self() */
};

/* Returns true if @prefix is "tsync-" followed by [A-Za-z0-9_-]. */
static bool prefix_ok(const char *prefix)
{
	size_t n = prefix ? strlen(prefix) : 0;

	if (n < 6 || n > TSYNC_INSTANCE_PREFIX_MAX || strncmp(prefix, "tsync-", 6))
		return false;
	return strspn(prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			      "0123456789_-") == n;
}

/* flock()s @fd without waiting; returns @fd, or -errno with @fd closed
 * (-EWOULDBLOCK: someone holds the lock). */
static int flock_now(int fd)
{
	int ret;

	if (fd < 0)
		return errno ? -errno : -ENOENT;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * Takes the owner lock of @inst without waiting: an flock on its
 * directory, which, unlike any file in it, does not keep the instance from
 * being removed, so the owner holds it until the instance is gone. Returns
 * the fd (the lock lives while it is open), or -EWOULDBLOCK (someone holds
 * it) or -errno (-ENOENT: instance gone).
 */
static int lock_take(struct tracefs_instance *inst)
{
	char *dir = tracefs_instance_get_dir(inst);
	int fd;

	if (!dir)
		return errno ? -errno : -ENOENT;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tracefs_put_tracing_file(dir);
	return flock_now(fd);
}

/* Returns true if an owner of an earlier tsync, which locked the
 * instance's tracing_on file instead of its directory, holds @inst (NULL:
 * the top instance). */
static bool old_lock_held(struct tracefs_instance *inst)
{
	int fd = flock_now(tracefs_instance_file_open(inst, "tracing_on",
						      O_RDONLY | O_CLOEXEC));

	if (fd < 0)
		return fd == -EWOULDBLOCK;
	close(fd);	/* before the rmdir, which an open file blocks */
	return false;
}

/* lock_take() of an instance an earlier tsync may own; see instance_priv.h. */
int tsync_instance_lock_take_any(struct tracefs_instance *inst)
{
	int fd = lock_take(inst);

	if (fd >= 0 && old_lock_held(inst)) {
		close(fd);
		return -EWOULDBLOCK;
	}
	return fd;
}

/* Removes instance @inst, waiting out a cleaner's brief look at a file
 * (old_lock_held()); see instance_priv.h. */
int tsync_instance_rmdir(struct tracefs_instance *inst)
{
	for (int i = 0; i < RMDIR_TRIES; i++) {
		if (!tracefs_instance_destroy(inst) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		usleep(RMDIR_WAIT_US);
	}
	return errno ? -errno : -EIO;
}

/*
 * Tries to create instance @ti->name and take its lock. Returns 0, 1 when
 * the name is taken (try the next one) or -errno.
 */
static int try_create(struct tsync_instance *ti)
{
	if (tracefs_instance_exists(ti->name))
		return 1;	/* another owner's, or a dead one's */
	ti->inst = tracefs_instance_create(ti->name);
	if (!ti->inst)
		return errno ? -errno : -ENODEV;
	if (!tracefs_instance_is_new(ti->inst))	/* lost a race */
		goto taken;
	ti->lock_fd = lock_take(ti->inst);
	if (ti->lock_fd >= 0)
		return 0;
	/* EWOULDBLOCK: a cleaner in another PID namespace took our fresh
	 * instance for dead in the instant before we locked it and is
	 * removing it; ENOENT: it has done so. Both: use another name. */
	if (ti->lock_fd == -EWOULDBLOCK || ti->lock_fd == -ENOENT)
		goto taken;
	tsync_instance_rmdir(ti->inst);
	tracefs_instance_free(ti->inst);
	ti->inst = NULL;
	return ti->lock_fd;
taken:
	tracefs_instance_free(ti->inst);
	ti->inst = NULL;
	ti->lock_fd = -1;
	return 1;
}

/* Allocates an instance handle with no fd open, after checking that
 * tracefs is there; returns 0 and *@out, -ENODEV or -ENOMEM. */
static int inst_alloc(struct tsync_instance **out)
{
	struct tsync_instance *ti;

	if (!tracefs_tracing_dir())
		return -ENODEV;
	ti = calloc(1, sizeof(*ti));
	if (!ti)
		return -ENOMEM;
	ti->lock_fd = ti->marker_fd = -1;
	*out = ti;
	return 0;
}

/* Creates an instance; see instance.h. */
int tsync_instance_create(const char *prefix, struct tsync_instance **out)
{
	struct tsync_instance *ti;
	int ret = -EEXIST;

	if (!prefix_ok(prefix) || !out)
		return -EINVAL;
	ret = inst_alloc(&ti);
	if (ret)
		return ret;
	ret = -EEXIST;
	for (int n = 0; n < INSTANCE_TRIES; n++) {
		snprintf(ti->name, sizeof(ti->name), "%s-%d-%d", prefix, (int)getpid(), n);
		ret = try_create(ti);
		if (ret <= 0)
			break;
		ret = -EEXIST;
	}
	if (ret) {
		free(ti);
		return ret;
	}
	/* a new instance records at once: off until it is configured */
	if (tracefs_trace_off(ti->inst)) {
		ret = errno ? -errno : -EIO;
		tsync_instance_destroy(ti);
		return ret;
	}
	*out = ti;
	return 0;
}

/* The value to write back to tracefs @file read as @txt; see instance.h. */
char *tsync_instance_file_value(const char *file, char *txt)
{
	static const char expanded[] = "(expanded: ";
	char *p, *end;

	if (!strcmp(file, "trace_clock")) {
		p = strchr(txt, '[');
		end = p ? strchr(p, ']') : NULL;
		if (!end)
			return NULL;
		*end = '\0';
		return p + 1;
	}
	p = strstr(txt, expanded);
	if (p && !strcmp(file, "buffer_size_kb"))
		txt = p + sizeof(expanded) - 1;
	p = txt + strspn(txt, " ");
	p[strcspn(p, " )\n")] = '\0';
	return p;
}

/* Saves the top instance's settings tsync changes into @ti->saved. */
static int top_save(struct tsync_instance *ti)
{
	for (size_t i = 0; i < TOP_SAVED; i++) {
		char *txt = tracefs_instance_file_read(NULL, top_saved_files[i], NULL);
		char *val = txt ? tsync_instance_file_value(top_saved_files[i], txt) : NULL;

		ti->saved[i] = val ? strdup(val) : NULL;
		free(txt);
		if (!ti->saved[i])
			return -ENOMEM;
	}
	return 0;
}

/* Disables every event of @inst (NULL: the top instance): one write of
 * events/enable; a failure is harmless (what follows reports what
 * matters). */
static void events_off(struct tracefs_instance *inst)
{
	tracefs_instance_file_write(inst, "events/enable", "0");
}

/* Remembers a setting to write back; see instance.h. */
int tsync_instance_keep_setting(struct tsync_instance *ti, const char *file, bool global)
{
	struct tracefs_instance *inst = global ? NULL : ti->inst;
	struct kept *k;
	char *txt, *val;
	int ret;

	if (!global && !ti->top)
		return 0;	/* removed with the instance */
	if (global) {
		for (int i = 0; i < ti->nglobals; i++)
			if (!strcmp(ti->global_files[i], file))
				return 0;
		if (ti->nglobals >= (int)(sizeof(ti->globals) / sizeof(ti->globals[0])))
			return -ENOSPC;
		ret = tsync_global_take(file, &ti->globals[ti->nglobals]);
		if (!ret)
			snprintf(ti->global_files[ti->nglobals++], sizeof(ti->global_files[0]),
				 "%s", file);
		return ret;
	}
	txt = tracefs_instance_file_read(inst, file, NULL);
	if (!txt)
		return errno ? -errno : -EIO;
	val = tsync_instance_file_value(file, txt);
	k = val ? realloc(ti->kept, (ti->nkept + 1) * sizeof(*k)) : NULL;
	if (!k) {
		free(txt);
		return val ? -ENOMEM : -EINVAL;
	}
	ti->kept = k;
	k += ti->nkept;
	k->file = strdup(file);
	k->val = strdup(val);
	k->global = global;
	free(txt);
	if (!k->file || !k->val) {
		free(k->file);
		free(k->val);
		return -ENOMEM;
	}
	ti->nkept++;
	return 0;
}

/* Writes back what tsync_instance_keep_setting() kept (of the instance's
 * own files too when @own), last kept first: a file kept twice gets its
 * first value. Frees the list. Returns 0 or the first -errno. */
static int kept_restore(struct tsync_instance *ti, bool own)
{
	int ret = 0;

	while (ti->nkept--) {
		struct kept *k = &ti->kept[ti->nkept];

		errno = 0;
		if ((own || k->global) &&
		    tracefs_instance_file_write(k->global ? NULL : ti->inst, k->file,
						k->val) < 0 && !ret) {
			ret = errno ? -errno : -EIO;
			log_err("cannot write back %s: %s", k->file, strerror(-ret));
		}
		free(k->file);
		free(k->val);
	}
	free(ti->kept);
	ti->kept = NULL;
	ti->nkept = 0;
	return ret;
}

/* Ends @ti's part in the machine-wide settings it kept (global.h: the
 * last user writes each back). Returns 0 or the first -errno. */
static int globals_release(struct tsync_instance *ti)
{
	int ret = 0;

	while (ti->nglobals) {
		int r = tsync_global_release(ti->globals[--ti->nglobals]);

		if (r && !ret)
			ret = r;
	}
	return ret;
}

/* Frees a top handle whose settings were not changed yet. */
static void top_free(struct tsync_instance *ti)
{
	for (size_t i = 0; i < TOP_SAVED; i++)
		free(ti->saved[i]);
	tsync_topstate_free(ti->state);
	tsync_self_filter_free(ti->self_filter);
	close(ti->lock_fd);
	free(ti);
}

/* Creates the top-instance handle; see instance.h. */
int tsync_instance_create_top(bool take_in_use, struct tsync_instance **out, char *why,
			      size_t whylen)
{
	struct tsync_instance *ti;
	int ret;

	if (!out)
		return -EINVAL;
	ret = inst_alloc(&ti);
	if (ret)
		return ret;
	ti->top = true;
	snprintf(ti->name, sizeof(ti->name), "top");
	ti->lock_fd = tsync_instance_lock_take_any(NULL);
	if (ti->lock_fd < 0) {
		ret = ti->lock_fd == -EWOULDBLOCK ? -EBUSY : ti->lock_fd;
		tsync_set_err(why, whylen, "another tsync recording has it");
		free(ti);
		return ret;
	}
	/* someone's tracer, filters, events or data: theirs, not ours to
	 * wipe, unless we are told to */
	if (tsync_topstate_in_use(why, whylen) && !take_in_use) {
		top_free(ti);
		return -EADDRINUSE;
	}
	ret = top_save(ti);
	if (!ret)
		ret = tsync_topstate_save(&ti->state);
	if (ret) {
		top_free(ti);
		return ret;
	}
	/* start clean, as trace-cmd does (what was saved is written back at
	 * the end) */
	tsync_topstate_clean();
	*out = ti;
	return 0;
}

/* Returns true if @ti is the top instance. */
bool tsync_instance_is_top(const struct tsync_instance *ti)
{
	return ti->top;
}

/* Selects the trace clock; see instance.h. */
int tsync_instance_set_clock(struct tsync_instance *ti, const char *clock)
{
	char *cur = tracefs_get_clock(ti->inst);
	bool same = cur && clock && !strcmp(cur, clock);

	free(cur);
	if (!clock || !*clock)
		return -EINVAL;
	if (same)
		return 0;
	if (tracefs_instance_file_write(ti->inst, "trace_clock", clock) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* Sets the buffer size; see instance.h. */
int tsync_instance_set_buffer_kb(struct tsync_instance *ti, uint32_t kb)
{
	if (tracefs_instance_set_buffer_size(ti->inst, kb, -1) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* Sets buffer_percent; see instance.h. */
int tsync_instance_set_buffer_percent(struct tsync_instance *ti, int percent)
{
	char val[16];

	if (percent < 0 || percent > 100)
		return -EINVAL;
	snprintf(val, sizeof(val), "%d", percent);
	if (tracefs_instance_file_write(ti->inst, "buffer_percent", val) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* Logs a warning of recipe @r, after its log_as prefix. */
static void __attribute__((format(printf, 2, 3)))
recipe_warn(const struct tsync_instance_recipe *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warn("%s%s%s", r->log_as ? r->log_as : "", r->log_as ? ": " : "", msg);
}

/* Leaves the caller's threads out of @ti as recipe @r says. Returns 0 or
 * -errno with @err filled. */
static int recipe_hide(const struct tsync_instance_recipe *r, struct tsync_instance *ti,
		       char *err, size_t errlen)
{
	int ret = r->hide_self ? tsync_instance_hide_self(ti, r->follow_new) : 0;

	if (ret == -EOPNOTSUPP)
		recipe_warn(r, "this kernel has no set_event_notrace_pid: %s's own threads "
			    "are recorded too", r->self);
	else if (ret && r->hide_may_fail)
		recipe_warn(r, "%s's threads stay in %s: %s", r->self, ti->name,
			    strerror(-ret));
	else if (ret)
		return tsync_set_err(err, errlen, "leaving %s's threads out: %s", r->self,
				     strerror(-ret)), ret;
	return 0;
}

/* The steps of recipe @r on @ti, from the clock on; see instance.h. */
static int recipe_steps(const struct tsync_instance_recipe *r, struct tsync_instance *ti,
			enum tsync_recipe_step *step, char *err, size_t errlen)
{
	int ret;

	*step = TSYNC_RECIPE_CLOCK;
	ret = r->clock && *r->clock ? tsync_instance_set_clock(ti, r->clock) : 0;
	if (ret)
		return tsync_set_err(err, errlen, "trace clock '%s': %s", r->clock,
				     ret == -EINVAL ? "not a clock of this kernel" :
				     strerror(-ret)), ret;
	*step = TSYNC_RECIPE_BUFFER;
	ret = r->buffer_kb ? tsync_instance_set_buffer_kb(ti, r->buffer_kb) : 0;
	if (ret)
		return tsync_set_err(err, errlen, "cannot set a %u KiB buffer: %s",
				     r->buffer_kb, strerror(-ret)), ret;
	/* Wake the streamers at 10% fill, not the kernel's 50%: a streamer
	 * that is late then still has 90% of the buffer before events are
	 * lost (measured by bench_05_record on a loaded machine). */
	if (tsync_instance_set_buffer_percent(ti, 10))
		recipe_warn(r, "cannot set buffer_percent of %s", ti->name);
	*step = TSYNC_RECIPE_OPTS;
	ret = tsync_instance_apply_opts(ti, r->opt, err, errlen);
	if (ret)
		return ret;
	/* -F: the process exists already, held before exec: only it from
	 * the first event on */
	*step = TSYNC_RECIPE_PID;
	ret = r->only_pid > 0 ? tsync_instance_filter_pid(ti, r->only_pid) : 0;
	if (ret)
		return tsync_set_err(err, errlen, "-F: cannot trace process %d: %s",
				     r->only_pid, strerror(-ret)), ret;
	*step = TSYNC_RECIPE_HIDE;
	ret = recipe_hide(r, ti, err, errlen);
	if (ret)
		return ret;
	/* the tracer last: after the pid files, and before anything opens
	 * trace_pipe_raw, which makes the kernel refuse a tracer change */
	*step = TSYNC_RECIPE_TRACER;
	ret = tsync_instance_apply_tracer(ti, r->opt, err, errlen);
	if (ret)
		return ret;
	*step = TSYNC_RECIPE_EVENTS;
	ret = r->events ? r->enable_events(ti->inst, r->events, err, errlen) : 0;
	/* the switches and wakeups that name our threads: filters on the
	 * events now on (a user's -f kept) */
	if (!ret && r->hide_self && tsync_instance_filter_self(ti))
		recipe_warn(r, "switches and wakeups of %s's threads stay in %s", r->self,
			    ti->name);
	return ret;
}

/* Makes a recording's instance; see instance.h. */
int tsync_instance_from_recipe(const struct tsync_instance_recipe *r,
			       struct tsync_instance **out, enum tsync_recipe_step *step,
			       char *err, size_t errlen)
{
	enum tsync_recipe_step dummy;
	struct tsync_instance *ti;
	int ret;

	if (!step)
		step = &dummy;
	*step = TSYNC_RECIPE_CREATE;
	if (r->events && !r->enable_events)
		return -EINVAL;
	ret = tsync_instance_create_rec(r->prefix, r->opt, r->take_top_in_use, r->self, &ti,
					err, errlen);
	if (ret)
		return ret;
	ret = recipe_steps(r, ti, step, err, errlen);
	if (ret) {
		tsync_instance_destroy(ti);
		return ret;
	}
	*out = ti;
	return 0;
}

/* Turns tracing on; see instance.h. */
int tsync_instance_start(struct tsync_instance *ti)
{
	return tracefs_trace_on(ti->inst) ? (errno ? -errno : -EIO) : 0;
}

/* Turns tracing off; see instance.h. */
int tsync_instance_stop(struct tsync_instance *ti)
{
	return tracefs_trace_off(ti->inst) ? (errno ? -errno : -EIO) : 0;
}

/* Returns the marker fd; see instance.h. */
int tsync_instance_marker_fd(struct tsync_instance *ti)
{
	if (ti->marker_fd < 0)
		ti->marker_fd = tracefs_instance_file_open(ti->inst, "trace_marker_raw",
							   O_WRONLY | O_CLOEXEC);
	return ti->marker_fd >= 0 ? ti->marker_fd : (errno ? -errno : -ENOENT);
}

/* Returns the libtracefs handle; see instance.h. */
struct tracefs_instance *tsync_instance_tracefs(const struct tsync_instance *ti)
{
	return ti->inst;
}

/* Leaves our threads out of the events that name them; see instance.h. */
int tsync_instance_filter_self(struct tsync_instance *ti)
{
	return tsync_self_filter_apply(ti->inst, &ti->self_filter);
}

/* Returns the name; see instance.h. */
const char *tsync_instance_name(const struct tsync_instance *ti)
{
	return ti->name;
}

/* Switches @inst off before its removal; see instance_priv.h. */
void tsync_instance_switch_off(struct tracefs_instance *inst)
{
	tracefs_trace_off(inst);
	events_off(inst);
}

/* Resets the top instance as trace-cmd leaves it after a recording
 * (tsync_topstate_clean()), writes back its tracer, events and filters
 * (tsync_topstate_restore()) and what @ti->saved holds; returns 0 or the
 * first -errno of a write back. */
static int top_restore(struct tsync_instance *ti)
{
	int ret, r;

	tsync_topstate_clean();
	ret = kept_restore(ti, true);
	r = globals_release(ti);
	if (r && !ret)
		ret = r;
	r = tsync_topstate_restore(ti->state);
	ti->state = NULL;
	if (r && !ret)
		ret = r;
	for (size_t i = 0; i < TOP_SAVED; i++) {
		if (!ti->saved[i])
			continue;
		errno = 0;
		if (tracefs_instance_file_write(NULL, top_saved_files[i], ti->saved[i]) < 0 &&
		    !ret) {
			ret = errno ? -errno : -EIO;
			log_err("cannot write back %s of the top tracefs instance: %s",
				top_saved_files[i], strerror(-ret));
		}
		free(ti->saved[i]);
	}
	return ret;
}

/* Removes an instance; see instance.h. */
int tsync_instance_destroy(struct tsync_instance *ti)
{
	int ret;

	if (!ti)
		return 0;
	if (ti->marker_fd >= 0)
		close(ti->marker_fd);
	if (ti->top) {
		ret = top_restore(ti);
		close(ti->lock_fd);
		log_debug("gave back the top tracefs instance");
		tsync_self_filter_free(ti->self_filter);
		free(ti);
		return ret;
	}
	tsync_instance_switch_off(ti->inst);
	ret = tsync_instance_rmdir(ti->inst);	/* holding the lock: no cleaner meddles */
	if (ti->lock_fd >= 0)
		close(ti->lock_fd);
	if (ret)
		log_err("cannot remove tracefs instance %s: %s", ti->name, strerror(-ret));
	else
		log_debug("removed tracefs instance %s", ti->name);
	if ((kept_restore(ti, false) || globals_release(ti)) && !ret)
		ret = -EIO;
	tracefs_instance_free(ti->inst);
	tsync_self_filter_free(ti->self_filter);
	free(ti);
	return ret;
}

/* Removes an instance by a process of its own; see instance.h. */
int tsync_instance_destroy_detached(struct tsync_instance *ti, int *go_fd)
{
	char *dir;
	int pid;

	if (go_fd)
		*go_fd = -1;
	if (!ti || ti->top || ti->lock_fd < 0)
		return tsync_instance_destroy(ti);
	dir = tracefs_instance_get_dir(ti->inst);
	if (!dir)
		return tsync_instance_destroy(ti);
	pid = tsync_remover_spawn(dir, ti->lock_fd, go_fd);
	tracefs_put_tracing_file(dir);
	if (pid < 0) {
		log_debug("no remover process for %s (%s): removing it now", ti->name,
			  strerror(-pid));
		return tsync_instance_destroy(ti);
	}
	log_debug("tracefs instance %s is removed by process %d", ti->name, pid);
	/* after the fork: the remover's copies make these closes no last
	 * close, which waits for the kernel's tracing lock while any
	 * instance is being removed (seen: 128 ms) */
	if (ti->marker_fd >= 0)
		close(ti->marker_fd);
	ti->marker_fd = -1;
	close(ti->lock_fd);	/* the remover holds the lock now */
	ti->lock_fd = -1;
	pid = kept_restore(ti, false) || globals_release(ti) ? -EIO : 0;
	tracefs_instance_free(ti->inst);
	tsync_self_filter_free(ti->self_filter);
	free(ti);
	return pid;
}

/* Reads the kernel's clocks; see instance.h. */
int tsync_instance_clocks(char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int max,
			  int *selected)
{
	char *txt = tracefs_instance_file_read(NULL, "trace_clock", NULL);
	int n;

	if (!txt)
		return errno ? -errno : -ENOENT;
	n = tsync_trace_clock_list(txt, names, max, selected);
	free(txt);
	return n;
}
