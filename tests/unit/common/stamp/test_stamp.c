// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/stamp/ (the table and its sources) against the
 * real tracefs at /sys/kernel/tracing (skipped, exit 77, where instances
 * cannot be made).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/stamp/stamp.h"
#include "common/stamp/stamp_round.h"
#include "common/base/timeutil.h"
#include "proto/tsync_record.h"

#define NPROBES 339
#define INSTANCES "/sys/kernel/tracing/instances"

/* Returns true if instance @name exists. */
static bool instance_exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), INSTANCES "/%s", name);
	return stat(path, &st) == 0;
}

/* Pins the calling thread to @cpu. Returns 0 or -errno. */
static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return sched_getcpu() == cpu ? 0 : -EAGAIN;
}

/* Unpins the calling thread (all CPUs allowed). */
static void unpin(void)
{
	cpu_set_t set;
	long i, n = sysconf(_SC_NPROCESSORS_CONF);

	CPU_ZERO(&set);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Sources are chosen from the clock and checked when given. */
static void test_choose(void **state)
{
	enum tsync_stamp_source k;

	(void)state;
	assert_int_equal(tsync_stamp_default("mono"), TSYNC_STAMP_CLOCK);
	assert_int_equal(tsync_stamp_default("mono_raw"), TSYNC_STAMP_CLOCK);
	assert_int_equal(tsync_stamp_default("boot"), TSYNC_STAMP_CLOCK);
	assert_int_equal(tsync_stamp_default("tai"), TSYNC_STAMP_CLOCK);
	assert_int_equal(tsync_stamp_default("local"), TSYNC_STAMP_MARKER);
	assert_int_equal(tsync_stamp_default("global"), TSYNC_STAMP_MARKER);
	assert_int_equal(tsync_stamp_default("counter"), TSYNC_STAMP_MARKER);
	assert_int_equal(tsync_stamp_default("perf"), TSYNC_STAMP_MARKER);
#if defined(__x86_64__) || defined(__i386__)
	assert_int_equal(tsync_stamp_default("x86-tsc"), TSYNC_STAMP_TSC);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_TSC, "x86-tsc"), 0);
#else
	assert_int_equal(tsync_stamp_default("x86-tsc"), TSYNC_STAMP_MARKER);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_TSC, "x86-tsc"), -EINVAL);
#endif
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_MARKER, "mono"), 0);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_CLOCK, "mono"), 0);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_CLOCK, "local"), -EINVAL);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_TSC, "mono"), -EINVAL);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_MARKER, ""), -EINVAL);
	assert_int_equal(tsync_stamp_check(TSYNC_STAMP_MARKER, NULL), -EINVAL);
	assert_int_equal(tsync_stamp_check(0, "mono"), -EINVAL);
	assert_int_equal(tsync_stamp_check(4, "mono"), -EINVAL);

	assert_int_equal(tsync_stamp_source_parse("marker", &k), 0);
	assert_int_equal(k, TSYNC_STAMP_MARKER);
	assert_int_equal(tsync_stamp_source_parse("tsc", &k), 0);
	assert_int_equal(k, TSYNC_STAMP_TSC);
	assert_int_equal(tsync_stamp_source_parse("clock", &k), 0);
	assert_int_equal(k, TSYNC_STAMP_CLOCK);
	assert_int_equal(tsync_stamp_source_parse(NULL, &k), -EINVAL);
	assert_int_equal(tsync_stamp_source_parse("auto", &k), -EINVAL);
	assert_int_equal(tsync_stamp_source_parse("ptp", &k), -EINVAL);
	assert_string_equal(tsync_stamp_source_name(TSYNC_STAMP_MARKER), "marker");
}

/* What the table says about the sources, and the texts made from it. */
static void test_table(void **state)
{
	char buf[256], names[8][TSYNC_TRACE_CLOCK_NAME_MAX];
	bool x86 = false;
	int n;

	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	x86 = true;
#endif
	assert_int_equal(tsync_stamp_caps(), x86 ? TSYNC_CAP_STAMP_TSC : 0);
	assert_true(tsync_stamp_needs_tracefs(TSYNC_STAMP_MARKER));
	assert_false(tsync_stamp_needs_tracefs(TSYNC_STAMP_CLOCK));
	assert_false(tsync_stamp_needs_tracefs(TSYNC_STAMP_TSC));
	assert_true(tsync_stamp_needs_tracefs(0));

	/* a source the peer did not announce */
	assert_int_equal(tsync_stamp_peer_check(TSYNC_STAMP_TSC, 0, buf, sizeof(buf)),
			 -EOPNOTSUPP);
	assert_string_equal(buf, "the agent cannot stamp with the TSC (it does not "
			    "announce the capability): use --stamp marker");
	assert_int_equal(tsync_stamp_peer_check(TSYNC_STAMP_TSC, TSYNC_CAP_STAMP_TSC, buf,
						sizeof(buf)), 0);
	assert_int_equal(tsync_stamp_peer_check(TSYNC_STAMP_MARKER, 0, buf, sizeof(buf)), 0);
	assert_int_equal(tsync_stamp_peer_check(TSYNC_STAMP_CLOCK, 0, buf, sizeof(buf)), 0);

	tsync_stamp_clocks_text(TSYNC_STAMP_CLOCK, buf, sizeof(buf));
	assert_string_equal(buf, "mono, mono_raw, boot and tai");
	tsync_stamp_clocks_text(TSYNC_STAMP_TSC, buf, sizeof(buf));
	assert_string_equal(buf, "x86-tsc, on x86");
	tsync_stamp_clocks_text(TSYNC_STAMP_MARKER, buf, sizeof(buf));
	assert_string_equal(buf, "every trace clock");

	n = tsync_stamp_user_clocks(names, 8);
	assert_int_equal(n, x86 ? 5 : 4);
	assert_string_equal(names[0], "mono");
	assert_string_equal(names[3], "tai");
	if (x86)
		assert_string_equal(names[4], "x86-tsc");
	assert_int_equal(tsync_stamp_user_clocks(names, 2), 2);
	tsync_stamp_user_clocks_text("or", buf, sizeof(buf));
	assert_string_equal(buf, x86 ? "mono, mono_raw, boot, tai or x86-tsc" :
			    "mono, mono_raw, boot or tai");
	tsync_stamp_user_clocks_text(NULL, buf, sizeof(buf));
	assert_string_equal(buf, x86 ? "mono, mono_raw, boot, tai, x86-tsc" :
			    "mono, mono_raw, boot, tai");
	/* cut short, still a string */
	tsync_stamp_user_clocks_text("or", buf, 7);
	assert_string_equal(buf, "mono, ");
	tsync_stamp_user_sources_text(buf, sizeof(buf));
	assert_string_equal(buf, x86 ? "clock or tsc" : "clock");
}

/* The clock source reads the matching POSIX clock, at once. */
static void test_clock_source(void **state)
{
	static const struct { const char *name; clockid_t clk; } c[] = {
		{ "mono", CLOCK_MONOTONIC }, { "mono_raw", CLOCK_MONOTONIC_RAW },
		{ "boot", CLOCK_BOOTTIME }, { "tai", CLOCK_TAI },
	};
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		struct tsync_stamper *s;
		struct tsync_stamp_slot slot = { 1, TSYNC_DIR_GUEST_RECV, 42 };
		int64_t before, after, ts = 0;

		assert_int_equal(tsync_stamp_open(tsync_stamp_default(c[i].name), c[i].name, "t", 0, &s), 0);
		assert_int_equal(tsync_stamp_source_of(s), TSYNC_STAMP_CLOCK);
		assert_false(tsync_stamp_deferred(s));
		assert_null(tsync_stamp_instance(s));
		before = tsync_clock_ns(c[i].clk);
		assert_int_equal(tsync_stamp_take(s, 1, 1, TSYNC_DIR_GUEST_RECV, 0, &ts), 0);
		after = tsync_clock_ns(c[i].clk);
		assert_true(ts >= before && ts <= after);
		/* nothing to resolve: slots untouched */
		assert_int_equal(tsync_stamp_resolve(s, 0, 1, &slot, 1), 0);
		assert_int_equal(slot.ts, 42);
		tsync_stamp_close(s);
	}
	/* a clock source for a clock user space cannot read */
	{
		struct tsync_stamper *s = NULL;

		assert_int_equal(tsync_stamp_open(TSYNC_STAMP_CLOCK, "local", "t", 0, &s), -EINVAL);
		assert_null(s);
	}
}

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* In a time namespace: 0 if the clock source stamps mono in the trace
 * clock's terms by default (shift removed) and as the namespace shows it
 * with TSYNC_STAMP_NS_CLOCK; 1 or 2 otherwise. */
static int timens_child(int64_t shift)
{
	struct tsync_stamper *s;
	int64_t before, after, ts;

	for (unsigned int flags = 0; flags <= TSYNC_STAMP_NS_CLOCK; flags++) {
		int64_t off = flags ? 0 : shift;

		if (tsync_stamp_open(TSYNC_STAMP_CLOCK, "mono", "t", flags, &s))
			return 1;
		before = tsync_clock_ns(CLOCK_MONOTONIC);
		tsync_stamp_take(s, 1, 1, TSYNC_DIR_GUEST_RECV, 0, &ts);
		after = tsync_clock_ns(CLOCK_MONOTONIC);
		tsync_stamp_close(s);
		if (ts < before - off || ts > after - off)
			return 2;
	}
	return 0;
}

/* A time namespace's shift does not reach the clock source's stamps
 * unless asked for: trace events are stamped without it. */
static void test_clock_source_timens(void **state)
{
	const int64_t shift = 12345678901LL;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char line[64];
		int fd;
		pid_t in;

		if (unshare(CLONE_NEWTIME))
			_exit(77);
		fd = open("/proc/self/timens_offsets", O_WRONLY);
		snprintf(line, sizeof(line), "monotonic %lld %lld",
			 (long long)(shift / NSEC_PER_SEC), (long long)(shift % NSEC_PER_SEC));
		if (fd < 0 || write(fd, line, strlen(line)) < 0)
			_exit(77);
		close(fd);
		in = fork();	/* the offsets apply to children */
		if (in == 0)
			_exit(timens_child(shift));
		if (in < 0 || waitpid(in, &status, 0) != in || !WIFEXITED(status))
			_exit(3);
		_exit(WEXITSTATUS(status));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The tsc source counts up and is filled at once. */
static void test_tsc_source(void **state)
{
#if defined(__x86_64__) || defined(__i386__)
	struct tsync_stamper *s;
	int64_t a = 0, b = 0;
	struct timespec nap = { 0, 1000000 };

	(void)state;
	assert_int_equal(tsync_stamp_open(tsync_stamp_default("x86-tsc"), "x86-tsc", "t", 0, &s), 0);
	assert_int_equal(tsync_stamp_source_of(s), TSYNC_STAMP_TSC);
	assert_false(tsync_stamp_deferred(s));
	assert_null(tsync_stamp_instance(s));
	assert_int_equal(tsync_stamp_take(s, 1, 1, TSYNC_DIR_HOST_SEND, 0, &a), 0);
	/* at least 1 ms between the stamps (a longer sleep on a loaded
	 * machine only adds cycles; EINTR goes on with the rest) */
	while (nanosleep(&nap, &nap) && errno == EINTR)
		;
	assert_int_equal(tsync_stamp_take(s, 1, 1, TSYNC_DIR_HOST_RECV, 0, &b), 0);
	assert_true(a > 0);
	/* 1 ms at >= 100 MHz is at least 100000 cycles */
	assert_true(b - a > 100000);
	tsync_stamp_close(s);
#else
	(void)state;
	skip();
#endif
}

/*
 * Marker source on @cpu with clock mono: 339 probes x 2 directions, each
 * bracketed by clock_gettime(CLOCK_MONOTONIC); all resolve, in order, and
 * inside their brackets.
 */
static void marker_round_on(int cpu)
{
	static struct tsync_stamp_slot slots[2 * NPROBES];
	static int64_t before[2 * NPROBES], after[2 * NPROBES];
	struct tsync_stamper *s;
	int64_t worst_early = 0, worst_late = 0, sum_early = 0, sum_late = 0;
	int i, ret;

	ret = pin(cpu);
	if (ret) {
		printf("cannot pin to cpu %d (%s): skipped\n", cpu, strerror(-ret));
		return;
	}
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "mono", "test", 0, &s), 0);
	assert_int_equal(tsync_stamp_source_of(s), TSYNC_STAMP_MARKER);
	assert_true(tsync_stamp_deferred(s));

	/* leftovers of another round on this CPU are skipped */
	for (i = 1; i <= 10; i++) {
		int64_t ts = 1;

		assert_int_equal(tsync_stamp_take(s, 6, (uint32_t)i, TSYNC_DIR_GUEST_RECV,
						  (uint32_t)cpu, &ts), 0);
		assert_int_equal(ts, 0);	/* pending */
	}
	for (i = 0; i < 2 * NPROBES; i++) {
		int64_t ts;

		slots[i].seq = (uint32_t)(i / 2 + 1);
		slots[i].dir = i % 2 ? TSYNC_DIR_GUEST_SEND : TSYNC_DIR_GUEST_RECV;
		before[i] = tsync_clock_ns(CLOCK_MONOTONIC);
		assert_int_equal(tsync_stamp_take(s, 7, slots[i].seq, slots[i].dir,
						  (uint32_t)cpu, &ts), 0);
		after[i] = tsync_clock_ns(CLOCK_MONOTONIC);
	}
	assert_int_equal(sched_getcpu(), cpu);
	assert_int_equal(tsync_stamp_resolve(s, cpu, 7, slots, 2 * NPROBES), 0);
	for (i = 0; i < 2 * NPROBES; i++) {
		int64_t early = before[i] - slots[i].ts, late = slots[i].ts - after[i];

		assert_true(slots[i].ts > 0);
		if (i)
			assert_true(slots[i].ts >= slots[i - 1].ts);
		if (early > worst_early)
			worst_early = early;
		if (late > worst_late)
			worst_late = late;
		sum_early += slots[i].ts - before[i];
		sum_late += after[i] - slots[i].ts;
		/* mono trace clock and CLOCK_MONOTONIC: same timekeeper, so
		 * a stamp lies inside its bracket up to how the two are read
		 * (not a timing bound: preemption only widens the bracket) */
		assert_true(early <= 2000);
		assert_true(late <= 2000);
	}
	printf("cpu %d: %d markers resolved; outside bracket by at most %lld ns early, "
	       "%lld ns late; mean ts-before %lld ns, after-ts %lld ns\n",
	       cpu, 2 * NPROBES, (long long)worst_early, (long long)worst_late,
	       (long long)(sum_early / (2 * NPROBES)),
	       (long long)(sum_late / (2 * NPROBES)));

	/* everything was consumed: round 6 is gone, round 7 too */
	assert_int_equal(tsync_stamp_resolve(s, cpu, 7, slots, 2), -ENOENT);
	assert_int_equal(slots[0].ts, 0);
	/* a marker taken on this CPU is not found on the other one */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		int other = cpu ? 0 : 1;
		int64_t ts;

		slots[0].seq = 1;
		slots[0].dir = TSYNC_DIR_HOST_SEND;
		assert_int_equal(tsync_stamp_take(s, 8, 1, TSYNC_DIR_HOST_SEND, 0, &ts), 0);
		assert_int_equal(tsync_stamp_resolve(s, other, 8, slots, 1), -ENOENT);
		assert_int_equal(tsync_stamp_resolve(s, cpu, 8, slots, 1), 0);
		assert_true(slots[0].ts > slots[2 * NPROBES - 1].ts);
	}
	tsync_stamp_close(s);
	unpin();
}

/* Marker source, pinned to CPU 0. */
/* A round's deferred stamps land in the probes' fields of their directions. */
static void test_resolve_probes(void **state)
{
	struct tsync_probe_stamps p[6];
	struct tsync_stamper *s;
	int64_t ts;

	(void)state;
	if (pin(0)) {
		skip();
		return;
	}
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "mono", "probes", 0, &s), 0);
	for (uint32_t i = 0; i < 5; i++) {
		p[i] = (struct tsync_probe_stamps){ .seq = i, .t2 = 7, .t3 = 8 };
		assert_int_equal(tsync_stamp_take(s, 3, i, TSYNC_DIR_HOST_SEND, 0, &p[i].t1), 0);
		assert_int_equal(tsync_stamp_take(s, 3, i, TSYNC_DIR_HOST_RECV, 0, &p[i].t4), 0);
	}
	p[5] = (struct tsync_probe_stamps){ .seq = 99, .t1 = 5, .t4 = 5 };	/* never taken */
	assert_int_equal(tsync_stamp_resolve_probes(s, 0, 3, p, 6, TSYNC_DIR_HOST_SEND, 9),
			 -EINVAL);
	assert_int_equal(tsync_stamp_resolve_probes(s, 0, 3, p, 6, TSYNC_DIR_HOST_SEND,
						    TSYNC_DIR_HOST_RECV), -ENOENT);
	for (int i = 0; i < 5; i++) {
		assert_true(p[i].t1 > 0 && p[i].t4 >= p[i].t1);
		if (i)
			assert_true(p[i].t1 >= p[i - 1].t4);
		/* the other directions are left alone */
		assert_int_equal(p[i].t2, 7);
		assert_int_equal(p[i].t3, 8);
	}
	assert_int_equal(p[5].t1, 0);
	assert_int_equal(p[5].t4, 0);
	/* one direction only */
	assert_int_equal(tsync_stamp_take(s, 4, 1, TSYNC_DIR_GUEST_RECV, 0, &ts), 0);
	p[0] = (struct tsync_probe_stamps){ .seq = 1 };
	assert_int_equal(tsync_stamp_resolve_probes(s, 0, 4, p, 1, TSYNC_DIR_GUEST_RECV, 0), 0);
	assert_true(p[0].t2 > 0);
	assert_int_equal(p[0].t3, 0);
	tsync_stamp_close(s);

	/* a source that stamps at once has nothing to resolve */
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_CLOCK, "mono", "probes", 0, &s), 0);
	p[0] = (struct tsync_probe_stamps){ .seq = 1, .t1 = 11, .t4 = 12 };
	assert_int_equal(tsync_stamp_resolve_probes(s, 0, 4, p, 1, TSYNC_DIR_HOST_SEND,
						    TSYNC_DIR_HOST_RECV), 0);
	assert_int_equal(p[0].t1, 11);
	assert_int_equal(p[0].t4, 12);
	tsync_stamp_close(s);
	unpin();
}

static void test_marker_cpu0(void **state)
{
	(void)state;
	marker_round_on(0);
}

/* Marker source, pinned to CPU 1 (if there is one). */
static void test_marker_cpu1(void **state)
{
	(void)state;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	marker_round_on(1);
}

/* Other trace clocks work with markers; a bad clock leaves no instance. */
static void test_marker_clocks(void **state)
{
	static const char *const clocks[] = { "local", "global", "boot", "x86-tsc" };
	struct tsync_stamp_slot slots[4];
	struct tsync_stamper *s;
	size_t c;
	int i, cpu;

	(void)state;
	assert_int_equal(pin(0), 0);
	cpu = 0;
	for (c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		int ret = tsync_stamp_open(TSYNC_STAMP_MARKER, clocks[c], "test", 0, &s);

		if (ret == -EINVAL && !strcmp(clocks[c], "x86-tsc"))
			continue;	/* not an x86 kernel */
		assert_int_equal(ret, 0);
		for (i = 0; i < 4; i++) {
			int64_t ts;

			slots[i].seq = (uint32_t)i + 100;
			slots[i].dir = TSYNC_DIR_HOST_RECV;
			assert_int_equal(tsync_stamp_take(s, 1, slots[i].seq, slots[i].dir,
							  0, &ts), 0);
		}
		assert_int_equal(tsync_stamp_resolve(s, cpu, 1, slots, 4), 0);
		for (i = 1; i < 4; i++)
			assert_true(slots[i].ts >= slots[i - 1].ts && slots[0].ts > 0);
		tsync_stamp_close(s);
	}
	unpin();

	s = NULL;
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "no_such_clock", "badclk", 0, &s),
			 -EINVAL);
	assert_null(s);
	/* bad tags */
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", "a-b", 0, &s), -EINVAL);
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", "", 0, &s), -EINVAL);
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", NULL, 0, &s), -EINVAL);
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", "../x", 0, &s), -EINVAL);
}

/* Every open gets its own instance; close removes it. */
static void test_instances_unique_and_removed(void **state)
{
	struct tsync_stamper *a, *b;
	char na[256], nb[256], want[64];

	(void)state;
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", "uniq", 0, &a), 0);
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", "uniq", 0, &b), 0);
	snprintf(na, sizeof(na), "%s", tsync_stamp_instance(a));
	snprintf(nb, sizeof(nb), "%s", tsync_stamp_instance(b));
	snprintf(want, sizeof(want), "tsync-uniq-%d-", (int)getpid());
	assert_true(!strncmp(na, want, strlen(want)));
	assert_true(!strncmp(nb, want, strlen(want)));
	assert_string_not_equal(na, nb);
	assert_true(instance_exists(na));
	assert_true(instance_exists(nb));
	tsync_stamp_close(a);
	assert_false(instance_exists(na));
	assert_true(instance_exists(nb));
	tsync_stamp_close(b);
	assert_false(instance_exists(nb));
	tsync_stamp_close(NULL);
}

/* buffer_size_kb of instance @name (per CPU), or -1. */
static long instance_kb(const char *name)
{
	char path[512], buf[64];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), INSTANCES "/%s/buffer_size_kb", name);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		kb = atol(buf);
	if (f)
		fclose(f);
	return kb;
}

/*
 * A marker instance keeps the size a new instance has when that holds a
 * round (TSYNC_STAMP_BUFFER_KB) and is not over TSYNC_STAMP_BUFFER_MAX_KB
 * (no resize: it cost 8-20 ms a session); else it is TSYNC_STAMP_BUFFER_KB.
 * The known answer is a plain new instance's size.
 */
static void test_marker_buffer_size(void **state)
{
	char plain[128], name[256];
	struct tsync_stamper *a;
	long def, kb;

	(void)state;
	snprintf(plain, sizeof(plain), INSTANCES "/tsync-sizeq-%d-0", (int)getpid());
	assert_int_equal(mkdir(plain, 0750), 0);
	def = instance_kb(strrchr(plain, '/') + 1);
	assert_int_equal(rmdir(plain), 0);
	assert_true(def > 0);
	assert_int_equal(tsync_stamp_open(TSYNC_STAMP_MARKER, "local", "sizeq", 0, &a), 0);
	snprintf(name, sizeof(name), "%s", tsync_stamp_instance(a));
	kb = instance_kb(name);
	if (def >= TSYNC_STAMP_BUFFER_KB && def <= TSYNC_STAMP_BUFFER_MAX_KB)
		assert_int_equal(kb, def);
	else
		assert_int_equal(kb, TSYNC_STAMP_BUFFER_KB);
	tsync_stamp_close(a);
	assert_false(instance_exists(name));
}

/* Group teardown: removes instances a failed test left (ours by pid). */
static int remove_leftovers(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "for d in " INSTANCES "/tsync-*-%d-*; "
		 "do [ -d \"$d\" ] && "
		 "rmdir \"$d\" && echo \"left behind: $d\"; done; true",
		 (int)getpid());
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_marker_buffer_size),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_clock_source),
		cmocka_unit_test(test_clock_source_timens),
		cmocka_unit_test(test_tsc_source),
		cmocka_unit_test(test_resolve_probes),
		cmocka_unit_test(test_marker_cpu0),
		cmocka_unit_test(test_marker_cpu1),
		cmocka_unit_test(test_marker_clocks),
		cmocka_unit_test(test_instances_unique_and_removed),
	};
	struct stat st;

	if (stat(INSTANCES, &st) || access(INSTANCES, W_OK)) {
		fprintf(stderr, "no writable tracefs instances at " INSTANCES "\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, remove_leftovers);
}
