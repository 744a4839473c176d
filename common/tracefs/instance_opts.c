// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A recording's settings written to its instance: tracer, function
 * filters, process filters, CPU mask, trace options (instance_opts.h),
 * and tsync's own threads left out (instance.h).
 *
 * Each write is checked: the kernel may refuse a setting (a tracer it was
 * built without, or one it forbids, as a lockdown kernel does with the
 * function tracer), and a refused setting must stop the recording with a
 * message rather than record something else.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "common/base/errbuf.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/instance_opts.h"
#include "common/base/log.h"

/* Writes @val to @file of @ti's instance (truncating). 0 or -errno. */
static int inst_write(struct tsync_instance *ti, const char *file, const char *val)
{
	errno = 0;
	if (tracefs_instance_file_write(tsync_instance_tracefs(ti), file, val) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* Appends @val to @file (set_ftrace_filter and the pid files add up). */
static int inst_append(struct tsync_instance *ti, const char *file, const char *val)
{
	errno = 0;
	if (tracefs_instance_file_append(tsync_instance_tracefs(ti), file, val) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* Appends @val to the ftrace pid file @file where there is one: a kernel
 * that refuses the function tracer refuses these too (EPERM), and then
 * there is no function tracing for them to restrict. */
static int ftrace_pid_append(struct tsync_instance *ti, const char *file, const char *val);

/* True if @file exists in the instance. */
static bool inst_has(struct tsync_instance *ti, const char *file)
{
	return tracefs_file_exists(tsync_instance_tracefs(ti), file);
}

/* True if tracer @name is in the available_tracers of @inst (NULL: top). */
static bool tracer_listed(struct tracefs_instance *inst, const char *name)
{
	char *avail = tracefs_instance_file_read(inst, "available_tracers", NULL);
	char *save = NULL;
	bool known = false;

	for (char *t = avail ? strtok_r(avail, " \n", &save) : NULL; t;
	     t = strtok_r(NULL, " \n", &save))
		known = known || !strcmp(t, name);
	free(avail);
	return known;
}

/* -p: selects the tracer and reads it back (a refused tracer leaves nop). */
static int set_tracer(struct tsync_instance *ti, const char *name, char *err, size_t errlen)
{
	char *cur = NULL, *nl;
	int ret = 0;

	if (!tracer_listed(tsync_instance_tracefs(ti), name)) {
		tsync_set_err(err, errlen, "tracer '%s' is not available in this kernel "
			      "(available_tracers lists the others)", name);
		return -ENOENT;
	}
	ret = inst_write(ti, "current_tracer", name);
	if (ret) {
		tsync_set_err(err, errlen, "%s tracer refused by this kernel: writing "
			      "current_tracer: %s", name, strerror(-ret));
		return ret;
	}
	cur = tracefs_instance_file_read(tsync_instance_tracefs(ti), "current_tracer", NULL);
	if (cur && (nl = strchr(cur, '\n')))
		*nl = '\0';
	if (!cur || strcmp(cur, name)) {
		tsync_set_err(err, errlen, "%s tracer refused by this kernel: current_tracer "
			      "stays '%s'", name, cur ? cur : "?");
		ret = -EPERM;
	}
	free(cur);
	return ret;
}

/* Writes each function glob of @l to @file ("" first to clear). */
static int set_funcs(struct tsync_instance *ti, const char *file,
		     const struct tsync_instance_list *l, char *err, size_t errlen)
{
	int ret;

	for (int i = 0; i < l->n; i++) {
		if (!inst_has(ti, file)) {
			tsync_set_err(err, errlen, "function filters: %s is not in this kernel's "
				      "instances", file);
			return -ENOENT;
		}
		ret = inst_append(ti, file, l->v[i]);
		if (ret == -EPERM || ret == -EACCES) {
			tsync_set_err(err, errlen, "function tracer refused by this kernel: "
				      "writing '%s' to %s: %s", l->v[i], file, strerror(-ret));
			return ret;
		}
		if (ret) {
			tsync_set_err(err, errlen, "no function matches '%s' (%s: %s)", l->v[i],
				      file, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int ftrace_pid_append(struct tsync_instance *ti, const char *file, const char *val)
{
	int ret;

	if (!inst_has(ti, file))
		return 0;
	ret = inst_append(ti, file, val);
	return ret == -EPERM ? 0 : ret;
}

/* -P: the processes to trace (events and function tracing). */
static int set_pids(struct tsync_instance *ti, const int *pids, int n, char *err,
		    size_t errlen)
{
	char buf[16];
	int ret;

	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%d ", pids[i]);
		ret = inst_append(ti, "set_event_pid", buf);
		if (!ret)
			ret = ftrace_pid_append(ti, "set_ftrace_pid", buf);
		if (ret) {
			tsync_set_err(err, errlen, "cannot trace process %d: %s", pids[i],
				      strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* -O / -T: trace options in order ("noX" clears X). */
static int set_options(struct tsync_instance *ti, const struct tsync_instance_list *l,
		       char *err, size_t errlen)
{
	char path[128];
	int ret;

	for (int i = 0; i < l->n; i++) {
		const char *o = l->v[i];
		bool off = !strncmp(o, "no", 2);

		snprintf(path, sizeof(path), "options/%s", off ? o + 2 : o);
		if (!inst_has(ti, path) && off) {	/* an option named "no..." */
			snprintf(path, sizeof(path), "options/%s", o);
			off = false;
		}
		if (!inst_has(ti, path)) {
			tsync_set_err(err, errlen, "no trace option '%s' in this kernel", o);
			return -ENOENT;
		}
		ret = tsync_instance_keep_setting(ti, path, false);
		if (!ret)
			ret = inst_write(ti, path, off ? "0" : "1");
		if (ret) {
			tsync_set_err(err, errlen, "trace option '%s' refused: %s", o,
				      strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* --max-graph-depth, -g: function_graph's files, where the instance has them. */
static int set_graph(struct tsync_instance *ti, const struct tsync_instance_opts *o, char *err,
		     size_t errlen)
{
	char buf[16];
	int ret;

	if (o->max_graph_depth >= 0) {
		if (!inst_has(ti, "max_graph_depth")) {
			tsync_set_err(err, errlen, "--max-graph-depth: this kernel has no "
				      "max_graph_depth in its instances");
			return -ENOENT;
		}
		snprintf(buf, sizeof(buf), "%d", o->max_graph_depth);
		ret = inst_write(ti, "max_graph_depth", buf);
		if (ret) {
			tsync_set_err(err, errlen, "--max-graph-depth refused: %s", strerror(-ret));
			return ret;
		}
	}
	return set_funcs(ti, "set_graph_function", &o->graph_funcs, err, errlen);
}

/* True if the top instance has @file and @ti's has not. */
static bool only_top_has(struct tsync_instance *ti, const char *file)
{
	return !inst_has(ti, file) && tracefs_file_exists(NULL, file);
}

/* True if @o asks for what the kernel has in its top instance only. */
static bool needs_top(struct tsync_instance *ti, const struct tsync_instance_opts *o)
{
	if (o->tracer && strcmp(o->tracer, "nop") &&
	    !tracer_listed(tsync_instance_tracefs(ti), o->tracer) &&
	    tracer_listed(NULL, o->tracer))
		return true;
	return (o->graph_funcs.n && only_top_has(ti, "set_graph_function")) ||
	       (o->max_graph_depth >= 0 && only_top_has(ti, "max_graph_depth"));
}

/*
 * Without -b, gives the borrowed top instance @def_kb KiB per CPU (a new
 * instance's size) when it has less: a kernel that marks every buffer
 * expanded once any instance is used (Debian 12's 6.1) leaves the unused
 * top buffer at its boot size, 7 KiB, which loses nearly every event
 * (check-vm's function_graph recording: 1200 of them on one CPU in 2 s).
 * The top buffer's size is written back at the end.
 */
static void top_default_size(struct tsync_instance *top, ssize_t def_kb)
{
	ssize_t kb = tracefs_instance_get_buffer_size(NULL, 0);

	if (def_kb <= 0 || kb < 0 || kb >= def_kb)
		return;
	if (tsync_instance_set_buffer_kb(top, (uint32_t)def_kb))
		log_warn("the top tracefs buffer is %zd KiB and cannot grow to %zd: events "
			 "will be lost (-b sets it)", kb, def_kb);
	else
		log_info("the top tracefs buffer was %zd KiB (left so since boot): recording "
			 "with a new instance's %zd KiB (-b sets it)", kb, def_kb);
}

/* Creates the recording's instance, private or top; see instance.h. */
int tsync_instance_create_rec(const char *prefix, const struct tsync_instance_opts *o,
			      bool take_in_use, const char *self, struct tsync_instance **out,
			      char *err, size_t errlen)
{
	struct tsync_instance *ti;
	const char *what;
	char why[256] = "";
	ssize_t def_kb;
	int ret = tsync_instance_create(prefix, &ti);

	if (ret) {
		tsync_set_err(err, errlen, "cannot create tracefs instance %s-*: %s", prefix,
			      strerror(-ret));
		return ret;
	}
	if (!needs_top(ti, o)) {
		*out = ti;
		return 0;
	}
	what = o->max_graph_depth >= 0 || o->graph_funcs.n ? "function_graph's files" :
	       o->tracer;
	/* a new instance's buffer has the kernel's default size */
	def_kb = tracefs_instance_get_buffer_size(tsync_instance_tracefs(ti), 0);
	tsync_instance_destroy(ti);
	ret = tsync_instance_create_top(take_in_use, out, why, sizeof(why));
	if (ret == -EBUSY)
		tsync_set_err(err, errlen, "the top tracefs instance, where this kernel has "
			      "%s, is in use by another tsync recording", what);
	else if (ret == -EADDRINUSE)
		tsync_set_err(err, errlen, "the top tracefs instance, where this kernel has "
			      "%s, is in use (%s): %s takes it only with --borrow-top-in-use",
			      what, why, self ? self : "tsync");
	else if (ret)
		tsync_set_err(err, errlen, "cannot borrow the top tracefs instance: %s",
			      strerror(-ret));
	if (ret)
		return ret;
	if (*why)
		log_warn("recording in the top tracefs instance, which was in use (%s): its "
			 "buffer is dropped; tracer, events and filters are given back at "
			 "the end", why);
	else
		log_info("recording in the top tracefs instance: this kernel has %s there "
			 "only", what);
	if (!o->buffer_kb)
		top_default_size(*out, def_kb);
	return 0;
}

/* Selects the tracer of @o; see instance.h. */
int tsync_instance_apply_tracer(struct tsync_instance *ti, const struct tsync_instance_opts *o,
				char *err, size_t errlen)
{
	if (!o->tracer || !strcmp(o->tracer, "nop"))
		return 0;
	return set_tracer(ti, o->tracer, err, errlen);
}

/* True if a tracer other than nop is selected in @ti. */
static bool tracer_live(struct tsync_instance *ti)
{
	char *cur = tracefs_instance_file_read(tsync_instance_tracefs(ti), "current_tracer",
					       NULL);
	bool live = cur && strncmp(cur, "nop", 3);

	free(cur);
	return live;
}

/* Writes the settings of @o; see instance.h. */
int tsync_instance_apply_opts(struct tsync_instance *ti, const struct tsync_instance_opts *o,
			      char *err, size_t errlen)
{
	char buf[32];
	int ret;

	if (o->cpumask) {
		ret = inst_write(ti, "tracing_cpumask", o->cpumask);
		if (ret) {
			tsync_set_err(err, errlen, "CPU mask '%s' refused: %s", o->cpumask,
				      strerror(-ret));
			return ret;
		}
	}
	ret = set_options(ti, &o->options, err, errlen);
	if (!ret && o->follow_children)
		ret = inst_write(ti, "options/event-fork", "1");
	if (!ret && o->follow_children && inst_has(ti, "options/function-fork"))
		ret = inst_write(ti, "options/function-fork", "1");
	if (!ret)
		ret = set_pids(ti, o->pids, o->npids, err, errlen);
	/* the filters before the tracer: nothing but them is ever traced */
	if (!ret)
		ret = set_funcs(ti, "set_ftrace_filter", &o->funcs, err, errlen);
	if (!ret)
		ret = set_funcs(ti, "set_ftrace_notrace", &o->notrace_funcs, err, errlen);
	if (!ret)
		ret = set_graph(ti, o, err, errlen);
	if (ret || !o->cmdlines_size)
		return ret;
	/* saved_cmdlines is the kernel's, not an instance's (trace-cmd sets it
	 * the same way) */
	snprintf(buf, sizeof(buf), "%d", o->cmdlines_size);
	ret = tsync_instance_keep_setting(ti, "saved_cmdlines_size", true);
	errno = 0;
	if (ret || tracefs_instance_file_write(NULL, "saved_cmdlines_size", buf) < 0) {
		ret = ret ? ret : errno ? -errno : -EIO;
		tsync_set_err(err, errlen, "--cmdlines-size %d refused: %s", o->cmdlines_size,
			      strerror(-ret));
	}
	return ret;
}

int tsync_instance_filter_pid(struct tsync_instance *ti, int pid)
{
	char buf[16];
	int ret;

	snprintf(buf, sizeof(buf), "%d ", pid);
	ret = inst_append(ti, "set_event_pid", buf);
	if (!ret)
		ret = ftrace_pid_append(ti, "set_ftrace_pid", buf);
	return ret;
}

int tsync_instance_hide_self(struct tsync_instance *ti, bool follow_new)
{
	char *list = NULL;
	size_t len = 0;
	struct dirent *d;
	FILE *f;
	DIR *dir;
	int ret;

	if (!inst_has(ti, "set_event_notrace_pid"))
		return -EOPNOTSUPP;
	dir = opendir("/proc/self/task");
	f = open_memstream(&list, &len);
	if (!dir || !f) {
		ret = -errno;
		goto out;
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			fprintf(f, "%s ", d->d_name);
	if (fclose(f)) {
		f = NULL;
		ret = -ENOMEM;
		goto out;
	}
	f = NULL;
	/* appended, never truncated: opening a pid file with O_TRUNC empties
	 * the list until the write, and our threads would be traced then */
	ret = inst_append(ti, "set_event_notrace_pid", list);
	log_debug("%s: not traced: %s(event-fork %d): %d", tsync_instance_name(ti), list,
		  follow_new, ret);
	/* set_ftrace_notrace_pid only while the tracer is nop: a write makes
	 * the kernel repatch every traced call site, which with function_graph
	 * running crashed the check-vm guest's 6.1 kernel (a double fault in
	 * the int3 handler); threads started later are left out of function
	 * tracing by function-fork instead */
	if (!ret && !tracer_live(ti))
		ret = ftrace_pid_append(ti, "set_ftrace_notrace_pid", list);
	if (!ret)
		ret = inst_write(ti, "options/event-fork", follow_new ? "1" : "0");
	if (!ret && inst_has(ti, "options/function-fork"))
		ret = inst_write(ti, "options/function-fork", follow_new ? "1" : "0");
	/* the switches and wakeups that name a thread: event-fork does not
	 * reach those filters */
	if (!ret)
		ret = tsync_instance_filter_self(ti);
out:
	if (f)
		fclose(f);
	if (dir)
		closedir(dir);
	free(list);
	return ret;
}
