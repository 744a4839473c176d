// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/tracefs/instance.c and stale.c against the real
 * tracefs at /sys/kernel/tracing (skipped, exit 77, where instances cannot
 * be made).
 * Every instance a test makes carries its pid; the group teardown removes
 * what a failed test left.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <tracefs.h>

#include "common/tracefs/instance.h"
#include "common/tracefs/stale.h"
#include "common/tracefs/instance_opts.h"
#include "common/tracemeta/tracemeta.h"

#define TRACING "/sys/kernel/tracing"
#define INSTANCES TRACING "/instances"

/* Returns true if instance @name exists. */
static bool instance_exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), INSTANCES "/%s", name);
	return stat(path, &st) == 0;
}

/* Reads file @file of instance @name into @buf (first line). */
static void read_inst(const char *name, const char *file, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), INSTANCES "/%s/%s", name, file);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Builds this test's prefix "tsync-ti<pid><what>". */
static void prefix_of(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "tsync-ti%d%s", (int)getpid(), what);
}

/* Create names the instance after prefix and pid, off; destroy removes it. */
static void test_create_destroy(void **state)
{
	struct tsync_instance *a, *b;
	char prefix[64], want[128], name[128], val[512];

	(void)state;
	prefix_of(prefix, sizeof(prefix), "c");
	assert_int_equal(tsync_instance_create(prefix, &a), 0);
	assert_int_equal(tsync_instance_create(prefix, &b), 0);
	snprintf(want, sizeof(want), "%s-%d-0", prefix, (int)getpid());
	assert_string_equal(tsync_instance_name(a), want);
	snprintf(want, sizeof(want), "%s-%d-1", prefix, (int)getpid());
	assert_string_equal(tsync_instance_name(b), want);
	assert_non_null(tsync_instance_tracefs(a));
	read_inst(tsync_instance_name(a), "tracing_on", val, sizeof(val));
	assert_string_equal(val, "0");
	snprintf(name, sizeof(name), "%s", tsync_instance_name(a));
	assert_true(instance_exists(name));
	assert_int_equal(tsync_instance_destroy(a), 0);
	assert_false(instance_exists(name));
	snprintf(name, sizeof(name), "%s", tsync_instance_name(b));
	assert_int_equal(tsync_instance_destroy(b), 0);
	assert_false(instance_exists(name));
	assert_int_equal(tsync_instance_destroy(NULL), 0);

	assert_int_equal(tsync_instance_create("nope", &a), -EINVAL);
	assert_int_equal(tsync_instance_create("tsync-a/b", &a), -EINVAL);
	assert_int_equal(tsync_instance_create("tsync-../x", &a), -EINVAL);
	assert_int_equal(tsync_instance_create(NULL, &a), -EINVAL);
	assert_int_equal(tsync_instance_create(
		"tsync-this-prefix-is-longer-than-forty-characters", &a), -EINVAL);
}

/* Clock, buffer size, buffer_percent, events, start/stop and the marker
 * reach tracefs; bad values are refused. */
static void test_configure(void **state)
{
	struct tracemeta_event_spec spec = { .spec = "sched:sched_switch", .filter = NULL };
	struct tracemeta_events *ev = NULL;
	struct tsync_instance *ti;
	char prefix[64], name[128], val[512], err[256];
	int fd;

	(void)state;
	prefix_of(prefix, sizeof(prefix), "cfg");
	assert_int_equal(tsync_instance_create(prefix, &ti), 0);
	snprintf(name, sizeof(name), "%s", tsync_instance_name(ti));

	assert_int_equal(tsync_instance_set_clock(ti, "mono"), 0);
	read_inst(name, "trace_clock", val, sizeof(val));
	assert_non_null(strstr(val, "[mono]"));
	assert_int_equal(tsync_instance_set_clock(ti, "mono"), 0);	/* already */
	assert_int_equal(tsync_instance_set_clock(ti, "no_such_clock"), -EINVAL);
	assert_int_equal(tsync_instance_set_clock(ti, ""), -EINVAL);
	read_inst(name, "trace_clock", val, sizeof(val));
	assert_non_null(strstr(val, "[mono]"));

	assert_int_equal(tsync_instance_set_buffer_kb(ti, 256), 0);
	read_inst(name, "buffer_size_kb", val, sizeof(val));
	/* the kernel rounds up to whole sub-buffers */
	assert_in_range(atoi(val), 256, 256 + 64);
	assert_int_equal(tsync_instance_set_buffer_percent(ti, 10), 0);
	read_inst(name, "buffer_percent", val, sizeof(val));
	assert_string_equal(val, "10");
	assert_int_equal(tsync_instance_set_buffer_percent(ti, 101), -EINVAL);
	assert_int_equal(tsync_instance_set_buffer_percent(ti, -1), -EINVAL);

	assert_int_equal(tracemeta_resolve_events(&spec, 1, &ev, err, sizeof(err)), 0);
	assert_int_equal(tracemeta_enable_events(tsync_instance_tracefs(ti), ev, err,
						 sizeof(err)), 0);
	tracemeta_events_free(ev);
	read_inst(name, "events/sched/sched_switch/enable", val, sizeof(val));
	assert_string_equal(val, "1");

	fd = tsync_instance_marker_fd(ti);
	assert_true(fd >= 0);
	assert_int_equal(tsync_instance_marker_fd(ti), fd);	/* one fd, kept */
	assert_int_equal(tsync_instance_start(ti), 0);
	read_inst(name, "tracing_on", val, sizeof(val));
	assert_string_equal(val, "1");
	assert_int_equal(write(fd, "abcdefgh", 8), 8);
	assert_int_equal(tsync_instance_stop(ti), 0);
	read_inst(name, "tracing_on", val, sizeof(val));
	assert_string_equal(val, "0");
	assert_int_equal(tsync_instance_destroy(ti), 0);	/* marker closed */
	assert_false(instance_exists(name));
}

/* Returns true if an instance named "<@prefix>-..." exists. */
static bool prefix_left(const char *prefix)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "ls -d " INSTANCES "/%s-* >/dev/null 2>&1", prefix);
	return system(cmd) == 0;
}

/* What the recipe had written when its events were enabled. */
struct seen {
	int calls;
	char clock[64], percent[16], event_fork[16];
};
static struct seen seen;

/* A recipe's enable_events: notes the instance's state, then enables. */
static int note_and_enable(struct tracefs_instance *inst, const struct tracemeta_events *ev,
			   char *err, size_t errlen)
{
	char *clock = tracefs_get_clock(inst);
	char *pct = tracefs_instance_file_read(inst, "buffer_percent", NULL);
	char *fork = tracefs_instance_file_read(inst, "options/event-fork", NULL);

	seen.calls++;
	snprintf(seen.clock, sizeof(seen.clock), "%s", clock ? clock : "?");
	snprintf(seen.percent, sizeof(seen.percent), "%.*s", pct ? (int)strcspn(pct, "\n") : 1,
		 pct ? pct : "?");
	snprintf(seen.event_fork, sizeof(seen.event_fork), "%.*s",
		 fork ? (int)strcspn(fork, "\n") : 1, fork ? fork : "?");
	free(clock);
	free(pct);
	free(fork);
	return tracemeta_enable_events(inst, ev, err, errlen);
}

/*
 * The recipe: clock, buffer size, buffer_percent 10 and the threads of
 * this process left out (event-fork) are written before the events are
 * enabled, -F's process is in set_event_pid, tracing is off; a step that
 * fails says which and why and leaves nothing in tracefs.
 */
static void test_recipe(void **state)
{
	struct tracemeta_event_spec spec = { .spec = "sched:sched_switch" };
	struct tracemeta_event_spec bad = { .spec = "sched:sched_switch",
					    .filter = "no_such_field == 1" };
	struct tracemeta_events *ev = NULL, *bad_ev = NULL;
	struct tsync_instance_recipe rp = {
		.clock = "mono", .buffer_kb = 256, .only_pid = (int)getppid(),
		.hide_self = true, .follow_new = true, .self = "the test",
		.enable_events = note_and_enable,
	};
	enum tsync_recipe_step step;
	struct tsync_instance *ti = NULL;
	char prefix[64], name[128], val[512], err[256] = "", *pids;
	struct tsync_instance_opts o = { .max_graph_depth = -1 };

	(void)state;
	prefix_of(prefix, sizeof(prefix), "rcp");
	rp.prefix = prefix;
	rp.opt = &o;
	assert_int_equal(tracemeta_resolve_events(&spec, 1, &ev, err, sizeof(err)), 0);
	assert_int_equal(tracemeta_resolve_events(&bad, 1, &bad_ev, err, sizeof(err)), 0);
	rp.events = ev;
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(tsync_instance_from_recipe(&rp, &ti, &step, err, sizeof(err)), 0);
	snprintf(name, sizeof(name), "%s", tsync_instance_name(ti));
	assert_int_equal(seen.calls, 1);
	assert_string_equal(seen.clock, "mono");
	assert_string_equal(seen.percent, "10");
	assert_string_equal(seen.event_fork, "1");
	read_inst(name, "buffer_size_kb", val, sizeof(val));
	assert_in_range(atoi(val), 256, 256 + 64);
	read_inst(name, "events/sched/sched_switch/enable", val, sizeof(val));
	assert_string_equal(val, "1");
	read_inst(name, "set_event_pid", val, sizeof(val));
	assert_int_equal(atoi(val), (int)getppid());
	read_inst(name, "tracing_on", val, sizeof(val));
	assert_string_equal(val, "0");
	assert_int_equal(tsync_instance_destroy(ti), 0);

	/* no events, no clock, no size: the instance's own */
	rp.events = NULL;
	rp.clock = NULL;
	rp.buffer_kb = 0;
	rp.only_pid = 0;
	rp.hide_self = false;
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(tsync_instance_from_recipe(&rp, &ti, &step, err, sizeof(err)), 0);
	assert_int_equal(seen.calls, 0);
	pids = tracefs_instance_file_read(tsync_instance_tracefs(ti), "set_event_pid", NULL);
	assert_true(!pids || !*pids);	/* empty */
	free(pids);
	assert_int_equal(tsync_instance_destroy(ti), 0);

	/* failures: the step, the reason, nothing left */
	rp.clock = "no_such_clock";
	ti = NULL;
	assert_int_equal(tsync_instance_from_recipe(&rp, &ti, &step, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(step, TSYNC_RECIPE_CLOCK);
	assert_string_equal(err, "trace clock 'no_such_clock': not a clock of this kernel");
	assert_null(ti);
	assert_false(prefix_left(prefix));
	rp.clock = "mono";
	rp.events = bad_ev;
	assert_true(tsync_instance_from_recipe(&rp, &ti, &step, err, sizeof(err)) < 0);
	assert_int_equal(step, TSYNC_RECIPE_EVENTS);
	assert_memory_equal(err, "filter ", 7);
	assert_false(prefix_left(prefix));
	rp.prefix = "nope";
	assert_int_equal(tsync_instance_from_recipe(&rp, &ti, &step, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(step, TSYNC_RECIPE_CREATE);
	rp.prefix = prefix;
	rp.enable_events = NULL;	/* events without a way to enable them */
	assert_int_equal(tsync_instance_from_recipe(&rp, &ti, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_false(prefix_left(prefix));
	tracemeta_events_free(ev);
	tracemeta_events_free(bad_ev);
}

/* The clock list is the kernel's, with the selected one marked. */
static void test_clocks(void **state)
{
	char names[32][TSYNC_TRACE_CLOCK_NAME_MAX];
	bool local = false, mono = false;
	int n, sel = -2;

	(void)state;
	n = tsync_instance_clocks(names, 32, &sel);
	assert_true(n > 2);
	assert_true(sel >= 0 && sel < n);
	for (int i = 0; i < n; i++) {
		local |= !strcmp(names[i], "local");
		mono |= !strcmp(names[i], "mono");
	}
	assert_true(local && mono);
}

/* Opens instance @name's directory (@old: its tracing_on, as tsync did
 * before) and flocks it, as a live owner in another PID namespace would;
 * returns the fd. */
static int hold_lock(const char *name, bool old)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), INSTANCES "/%s%s", name, old ? "/tracing_on" : "");
	fd = open(path, (old ? O_RDWR : O_RDONLY | O_DIRECTORY) | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

/* Instances of dead owners are removed; live ones stay. */
static void test_cleanup_stale(void **state)
{
	char name[256] = "", live[256], fake[512], prefix[64];
	struct tsync_instance *mine;
	int fds[2], status, lock;
	ssize_t n;
	pid_t pid;

	(void)state;
	/* a prefix of our own, so concurrent runs of this test never meet */
	prefix_of(prefix, sizeof(prefix), "stale");
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tsync_instance *ti;

		close(fds[0]);
		if (tsync_instance_create(prefix, &ti) || tsync_instance_start(ti))
			_exit(1);
		n = write(fds[1], tsync_instance_name(ti), strlen(tsync_instance_name(ti)));
		_exit(n > 0 ? 0 : 1);	/* dies without destroying: a stale instance */
	}
	close(fds[1]);
	n = read(fds[0], name, sizeof(name) - 1);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(n > 0);
	name[n] = '\0';
	assert_true(instance_exists(name));

	/* a live owner: ourselves, and one holding the lock of an instance
	 * named after pid 1 */
	assert_int_equal(tsync_instance_create(prefix, &mine), 0);
	snprintf(live, sizeof(live), "%s", tsync_instance_name(mine));
	snprintf(fake, sizeof(fake), INSTANCES "/%s-1-0", prefix);
	assert_int_equal(mkdir(fake, 0750), 0);
	lock = hold_lock(strrchr(fake, '/') + 1, false);

	assert_int_equal(tsync_instance_cleanup_stale("nope-"), -EINVAL);
	assert_int_equal(tsync_instance_cleanup_stale(prefix), 1);
	assert_false(instance_exists(name));
	assert_true(instance_exists(live));
	assert_true(instance_exists(strrchr(fake, '/') + 1));
	assert_int_equal(tsync_instance_cleanup_stale(prefix), 0);

	close(lock);
	assert_int_equal(rmdir(fake), 0);
	assert_int_equal(tsync_instance_destroy(mine), 0);
	assert_false(instance_exists(live));
}

/*
 * The pid in a name proves nothing across PID namespaces: an instance
 * named after a pid that does not exist here, whose owner (in another
 * namespace) holds its lock, keeps recording through a cleanup, and so it
 * does when an earlier tsync holds its tracing_on; once the lock is free
 * (the owner died), the next cleanup removes it.
 */
static void test_cleanup_lock_held(void **state)
{
	char prefix[64], name[128], path[512], val[16];
	int *lock = *state, fd;
	pid_t dead;

	prefix_of(prefix, sizeof(prefix), "ns");
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(name, sizeof(name), "%s-%d-0", prefix, (int)dead);
	snprintf(path, sizeof(path), INSTANCES "/%s", name);
	assert_int_equal(mkdir(path, 0750), 0);
	snprintf(path, sizeof(path), INSTANCES "/%s/events/sched/sched_switch/enable", name);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1", 1), 1);
	close(fd);
	for (int old = 0; old < 2; old++) {
		*lock = hold_lock(name, old);
		assert_int_equal(tsync_instance_cleanup_stale(prefix), 0);
		assert_true(instance_exists(name));
		read_inst(name, "tracing_on", val, sizeof(val));
		assert_string_equal(val, "1");
		read_inst(name, "events/sched/sched_switch/enable", val, sizeof(val));
		assert_string_equal(val, "1");
		close(*lock);
		*lock = -1;
	}
	assert_int_equal(tsync_instance_cleanup_stale(prefix), 1);
	assert_false(instance_exists(name));
}

/* Setup: a lock fd slot for the test, -1 while none is held. */
static int lock_slot_new(void **state)
{
	int *fd = malloc(sizeof(*fd));

	if (!fd)
		return -1;
	*fd = -1;
	*state = fd;
	return 0;
}

/* Teardown: releases a lock a failed test still holds, so that the group
 * teardown can remove its instance. */
static int lock_slot_free(void **state)
{
	int *fd = *state;

	if (*fd >= 0)
		close(*fd);
	free(fd);
	return 0;
}

/* Reads top-instance file @file into @buf (first line; "" when empty). */
static void read_top(const char *file, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), TRACING "/%s", file);
	f = fopen(path, "r");
	assert_non_null(f);
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The top-instance settings test_top() checks are given back. */
static const char *const top_files[] = {
	"tracing_on", "trace_clock", "buffer_size_kb", "buffer_percent",
	"tracing_cpumask", "current_tracer", "set_event_notrace_pid",
	"options/event-fork", "options/print-parent", "saved_cmdlines_size",
};
#define NTOP (sizeof(top_files) / sizeof(top_files[0]))

/* Applies a trace option (print-parent flipped from @parent) and a
 * cmdlines size (16 more than @size: a change, the kernel rounds up) to
 * @ti and checks the kernel took them. */
static void change_kept(struct tsync_instance *ti, const char *parent, const char *size)
{
	char flip[32], err[256], val[64], *opts[] = { flip };
	struct tsync_instance_opts o = { .max_graph_depth = -1,
					 .options = { .v = opts, .n = 1 },
					 .cmdlines_size = atoi(size) + 16 };

	snprintf(flip, sizeof(flip), "%s", strcmp(parent, "1") ? "print-parent" :
		 "noprint-parent");
	if (tsync_instance_apply_opts(ti, &o, err, sizeof(err)))
		fail_msg("%s", err);
	read_top("saved_cmdlines_size", val, sizeof(val));
	assert_true(atoi(val) >= o.cmdlines_size);	/* the kernel rounds up to its pages */
	if (tsync_instance_is_top(ti)) {
		read_top("options/print-parent", val, sizeof(val));
		assert_string_equal(val, strcmp(parent, "1") ? "1" : "0");
	}
}

/* Borrowing the top instance: one tsync at a time, a clean start (tracing
 * off, no event enabled), every setting tsync changed given back by
 * destroy (a top instance in use: test_topstate.c). */
static void test_top(void **state)
{
	struct tsync_instance *ti, *again;
	char before[NTOP][512], val[512], why[128];

	(void)state;
	for (size_t i = 0; i < NTOP; i++)
		read_top(top_files[i], before[i], sizeof(before[i]));

	/* taken even if another test left it in use: this test is about
	 * what comes back */
	assert_int_equal(tsync_instance_create_top(true, &ti, NULL, 0), 0);
	assert_true(tsync_instance_is_top(ti));
	assert_null(tsync_instance_tracefs(ti));
	assert_int_equal(tsync_instance_create_top(true, &again, why, sizeof(why)), -EBUSY);
	assert_string_equal(why, "another tsync recording has it");
	read_top("tracing_on", val, sizeof(val));
	assert_string_equal(val, "0");

	/* what a recording changes */
	assert_int_equal(tsync_instance_set_clock(ti, strstr(before[1], "[global]") ?
						  "local" : "global"), 0);
	assert_int_equal(tsync_instance_set_buffer_kb(ti, (uint32_t)atoi(before[2]) + 8), 0);
	assert_int_equal(tsync_instance_set_buffer_percent(ti, 7), 0);
	assert_int_equal(tsync_instance_hide_self(ti, true), 0);
	read_top("set_event_notrace_pid", val, sizeof(val));
	assert_string_not_equal(val, "");
	change_kept(ti, before[8], before[9]);	/* -O, --cmdlines-size */
	assert_int_equal(tsync_instance_start(ti), 0);

	assert_int_equal(tsync_instance_destroy(ti), 0);
	for (size_t i = 0; i < NTOP; i++) {
		read_top(top_files[i], val, sizeof(val));
		if (strstr(before[i], "(expanded: ")) {
			/* a top buffer unused since boot: it cannot go back to
			 * unused; its size is the expanded one, in the kernel's
			 * 4080-byte pages (1408 reads back as 1410) */
			int want = atoi(strstr(before[i], "(expanded: ") + 11);

			assert_in_range(atoi(val), want, want + 4);
			continue;
		}
		assert_string_equal(val, before[i]);
	}
	assert_int_equal(tsync_instance_create_top(true, &again, NULL, 0), 0);	/* lock back */
	assert_int_equal(tsync_instance_destroy(again), 0);
}

/* What is written back of a file read as text: an unused top buffer
 * reads "7 (expanded: 1408)" and must get 1408 back, not 7 KiB. */
static void test_file_value(void **state)
{
	static const struct { const char *file, *txt, *want; } rows[] = {
		{ "buffer_size_kb", "7 (expanded: 1408)\n", "1408" },
		{ "buffer_size_kb", "1410\n", "1410" },
		{ "trace_clock", "local [global] counter\n", "global" },
		{ "options/print-parent", "1\n", "1" },
		{ "saved_cmdlines_size", "6552\n", "6552" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", rows[i].txt);
		assert_string_equal(tsync_instance_file_value(rows[i].file, buf), rows[i].want);
	}
	snprintf(buf, sizeof(buf), "local global\n");	/* no clock selected */
	assert_null(tsync_instance_file_value("trace_clock", buf));
}

/* --cmdlines-size changes the kernel's saved_cmdlines_size: a private
 * instance gives it back too, as trace-cmd does. */
static void test_cmdlines_kept(void **state)
{
	struct tsync_instance *ti;
	char prefix[64], before[64], parent[64], val[64];

	(void)state;
	read_top("saved_cmdlines_size", before, sizeof(before));
	read_top("options/print-parent", parent, sizeof(parent));
	prefix_of(prefix, sizeof(prefix), "k");
	assert_int_equal(tsync_instance_create(prefix, &ti), 0);
	change_kept(ti, parent, before);
	assert_int_equal(tsync_instance_destroy(ti), 0);
	read_top("saved_cmdlines_size", val, sizeof(val));
	assert_string_equal(val, before);
}

/* A top buffer left at 7 KiB (6.1 after any instance was used) records,
 * without -b, with a new instance's size, and is 7 KiB again after. */
static void check_top_small_buffer(const char *prefix, const struct tsync_instance_opts *o)
{
	ssize_t was = tracefs_instance_get_buffer_size(NULL, 0), def;
	struct tsync_instance *ti;
	char err[256], val[64];

	assert_true(was > 0);
	assert_int_equal(tracefs_instance_set_buffer_size(NULL, 7, -1), 0);
	assert_int_equal(tsync_instance_create(prefix, &ti), 0);
	def = tracefs_instance_get_buffer_size(tsync_instance_tracefs(ti), 0);
	assert_int_equal(tsync_instance_destroy(ti), 0);
	assert_int_equal(tsync_instance_create_rec(prefix, o, true, "test", &ti, err, sizeof(err)), 0);
	assert_int_equal(tracefs_instance_get_buffer_size(NULL, 0), def);
	assert_int_equal(tsync_instance_destroy(ti), 0);
	read_top("buffer_size_kb", val, sizeof(val));
	assert_string_equal(val, "7");		/* as it found it */
	assert_int_equal(tracefs_instance_set_buffer_size(NULL, (size_t)was, -1), 0);
}

/* A recording asks for the top instance only for what instances lack:
 * a tracer only the top one lists (here "blk", where the kernel has it). */
static void test_create_rec(void **state)
{
	struct tsync_instance *ti, *held;
	struct tsync_instance_opts o = { .max_graph_depth = -1 };
	char prefix[64], err[256] = "", *top, *inst;

	(void)state;
	prefix_of(prefix, sizeof(prefix), "r");
	assert_int_equal(tsync_instance_create_rec(prefix, &o, true, "test", &ti, err, sizeof(err)), 0);
	assert_false(tsync_instance_is_top(ti));
	inst = tracefs_instance_file_read(tsync_instance_tracefs(ti), "available_tracers",
					  NULL);
	assert_int_equal(tsync_instance_destroy(ti), 0);
	top = tracefs_instance_file_read(NULL, "available_tracers", NULL);
	assert_non_null(top);
	assert_non_null(inst);
	if (strstr(top, "blk") && !strstr(inst, "blk")) {
		o.tracer = "blk";
		assert_int_equal(tsync_instance_create_rec(prefix, &o, true, "test", &ti, err, sizeof(err)),
				 0);
		assert_true(tsync_instance_is_top(ti));
		/* a second recording that needs it is told who has it */
		assert_int_equal(tsync_instance_create_rec(prefix, &o, true, "test", &held, err, sizeof(err)),
				 -EBUSY);
		assert_non_null(strstr(err, "top tracefs instance, where this kernel has blk, "
				       "is in use by another tsync recording"));
		assert_int_equal(tsync_instance_destroy(ti), 0);
		check_top_small_buffer(prefix, &o);
	} else {
		fprintf(stderr, "no tracer in the top instance only: fallback unchecked\n");
	}
	free(top);
	free(inst);
}

/* Group teardown: removes instances a failed test left (ours by pid). */
static int remove_leftovers(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "for d in " INSTANCES "/tsync-ti%d*; do [ -d \"$d\" ] && "
		 "echo 0 > \"$d/events/enable\" && rmdir \"$d\" && "
		 "echo \"left behind: $d\"; done; true", (int)getpid());
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy),
		cmocka_unit_test(test_configure),
		cmocka_unit_test(test_recipe),
		cmocka_unit_test(test_clocks),
		cmocka_unit_test(test_cleanup_stale),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_create_rec),
		cmocka_unit_test(test_cmdlines_kept),
		cmocka_unit_test(test_file_value),
		cmocka_unit_test_setup_teardown(test_cleanup_lock_held, lock_slot_new,
						lock_slot_free),
	};
	struct stat st;

	if (stat(INSTANCES, &st) || access(INSTANCES, W_OK)) {
		fprintf(stderr, "no writable tracefs instances at " INSTANCES "\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, remove_leftovers);
}
