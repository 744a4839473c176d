// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracemeta tests on the real tracefs: metadata collected from a private
 * instance with sched events and markers recorded, written with the
 * trace.dat writer and read back by libtracecmd and trace-cmd; per-CPU
 * stats; event spec resolution and enabling with filters.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <trace-cmd.h>
#include <tracefs.h>

#include "common/tracemeta/tracemeta.h"
#include "common/tracedat/tracedat.h"
#include "common/tracefs/ringbuf.h"
#include "tests/unit/tmp_fixture.h"

#define MAXCPU 64

struct tfx {
	struct tracefs_instance *inst;
	char dir[64];
};

/* Per-test setup: a fresh private instance and a temp dir. */
static int setup(void **state)
{
	static int seq;
	struct tfx *f = calloc(1, sizeof(*f));
	char name[64];

	if (!f)
		return -1;
	snprintf(name, sizeof(name), "tsync-test-tmeta-%d-%d", getpid(), seq++);
	f->inst = tracefs_instance_create(name);
	snprintf(f->dir, sizeof(f->dir), "/tmp/tsync-tmeta-XXXXXX");
	if (!f->inst || !mkdtemp(f->dir)) {
		fprintf(stderr, "setup failed\n");
		fixture_instance_drop(f->inst);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* Per-test teardown: the instance and temp dir always go. */
static int teardown(void **state)
{
	struct tfx *f = *state;
	if (!f)
		return 0;
	fixture_instance_drop(f->inst);
	fixture_rmtree(f->dir);
	free(f);
	return 0;
}

/* Reads @rel of the instance into a malloc'd string. */
static char *iread(struct tfx *f, const char *rel)
{
	int size = 0;
	char *s = tracefs_instance_file_read(f->inst, rel, &size);

	return s ? s : strdup("");
}

/* Writes @n markers "tmeta N" into the instance from the current CPU. */
static void markers(struct tfx *f, int n)
{
	char *path = tracefs_instance_get_file(f->inst, "trace_marker");
	int fd = open(path, O_WRONLY);
	char msg[32];

	tracefs_put_tracing_file(path);
	assert_true(fd >= 0);
	for (int i = 0; i < n; i++) {
		int len = snprintf(msg, sizeof(msg), "tmeta %d", i);

		assert_int_equal(write(fd, msg, (size_t)len), len);
	}
	close(fd);
}

/* Drains per_cpu/cpu@cpu/trace_pipe_raw into memfd @*fd. Returns bytes. */
static uint64_t drain_cpu(struct tfx *f, int cpu, int *fd, uint32_t page)
{
	char rel[64], *path, *buf = malloc(page);
	uint64_t total = 0;
	int in;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	path = tracefs_instance_get_file(f->inst, rel);
	in = open(path, O_RDONLY | O_NONBLOCK);
	tracefs_put_tracing_file(path);
	*fd = memfd_create("cpu", 0);
	assert_true(in >= 0 && *fd >= 0 && buf);
	for (;;) {
		ssize_t r = read(in, buf, page);

		if (r <= 0)
			break;
		memset(buf + r, 0, page - (size_t)r);
		assert_int_equal(write(*fd, buf, page), (ssize_t)page);
		total += page;
	}
	close(in);
	free(buf);
	return total;
}

/* Counts the instance's CPUs (per_cpu/cpuN directories). */
static int count_cpus(struct tfx *f)
{
	char rel[64];
	int n = 0;

	for (;; n++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", n);
		if (n >= MAXCPU || !tracefs_file_exists(f->inst, rel))
			return n;
	}
}

struct counts {
	int total, unknown, sched_switch, wakeups, markers;
};

/* libtracecmd callback: counts events by kind. */
static int count_cb(struct tracecmd_input *h, struct tep_record *r, int cpu,
		    void *data)
{
	struct counts *c = data;
	struct tep_event *ev = tep_find_event_by_record(tracecmd_get_tep(h), r);

	(void)cpu;
	c->total++;
	if (!ev)
		c->unknown++;
	else if (!strcmp(ev->name, "sched_switch"))
		c->sched_switch++;
	else if (!strncmp(ev->name, "sched_wak", 9))
		c->wakeups++;
	else if (!strcmp(ev->name, "print"))
		c->markers++;
	return 0;
}

/* Runs a shell command; returns its exit status and output (malloc'd). */
static int run(char **out, const char *fmt, ...)
{
	char cmd[1024], outp[128];
	va_list ap;
	int st, fd;
	struct stat sb;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(outp, sizeof(outp), "/tmp/tsync-tmeta-out-%d", getpid());
	strncat(cmd, " >", sizeof(cmd) - strlen(cmd) - 1);
	strncat(cmd, outp, sizeof(cmd) - strlen(cmd) - 1);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	st = system(cmd);
	fd = open(outp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	*out = calloc(1, (size_t)sb.st_size + 1);
	assert_int_equal(read(fd, *out, (size_t)sb.st_size), sb.st_size);
	close(fd);
	unlink(outp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Records sched events and markers in a private instance, collects its
 * metadata, writes a trace.dat with the real pages and reads it back.
 */
static void test_collect_roundtrip(void **state)
{
	struct tfx *f = *state;
	const struct tracemeta_event_spec specs[] = {
		{ .spec = "sched:sched_switch", .filter = NULL }, { .spec = "sched:sched_wak*", .filter = NULL },
	};
	struct tracemeta_opts mo = { .kallsyms = true };
	struct tracemeta_events *ev = NULL;
	struct tracedat_cpu_data cpus[MAXCPU];
	char *cpustat[MAXCPU] = { NULL };
	struct tracedat_opts o = { .has_traceid = 1, .traceid = 77 };
	struct tracemeta *tm = NULL;
	const struct tracedat_meta *m;
	struct counts c = { 0 };
	char err[256], path[128], *setev, *out;
	struct tracecmd_input *h;
	struct utsname u;
	char want_uname[400];
	int ncpu = count_cpus(f), nset = 0;
	bool kallsyms_visible;

	assert_true(ncpu > 0);
	assert_int_equal(tracemeta_resolve_events(specs, 2, &ev, err,
						  sizeof(err)), 0);
	assert_true(tracemeta_events_count(ev) >= 3);	/* switch + wakeups */
	assert_int_equal(tracemeta_enable_events(f->inst, ev, err, sizeof(err)), 0);
	tracemeta_events_free(ev);

	/* The workload to record, not a wait: each sleep switches this
	 * task out and back in (sched_switch and sched_wakeup events). */
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 500000 };

		nanosleep(&ts, NULL);
	}
	markers(f, 40);
	assert_int_equal(tracefs_instance_file_write(f->inst, "tracing_on", "0"), 1);

	assert_int_equal(tracemeta_collect(f->inst, &mo, &tm), 0);
	m = tracemeta_meta(tm);
	/* exactly the enabled events, all in system "sched" */
	setev = iread(f, "set_event");
	for (char *p = setev; (p = strstr(p, "sched:")); p++)
		nset++;
	free(setev);
	assert_int_equal(m->nsystems, 1);
	assert_string_equal(m->systems[0].name, "sched");
	assert_int_equal(m->systems[0].nformats, nset);
	assert_true(m->nftrace >= 4);
	assert_true(m->kallsyms.len > 100000);
	kallsyms_visible = m->kallsyms.data[0] != '0' ||
			   strncmp(m->kallsyms.data, "0000000000000000", 16);
	assert_true(m->cmdlines.len > 0);
	assert_non_null(strstr(m->trace_clock, "[local]"));
	assert_int_equal(uname(&u), 0);
	snprintf(want_uname, sizeof(want_uname), "%s %s %s %s", u.sysname,
		 u.nodename, u.release, u.machine);
	assert_string_equal(m->uname, want_uname);
	if (tracefs_file_exists(f->inst, "buffer_subbuf_size_kb")) {
		long long kb = 0;

		assert_int_equal(tracefs_instance_file_read_number(f->inst,
					"buffer_subbuf_size_kb", &kb), 0);
		assert_int_equal(m->page_size, kb * 1024);
	}

	for (int i = 0; i < ncpu; i++) {
		struct tracemeta_stats st;

		assert_int_equal(tracemeta_read_stats(f->inst, i, &st,
						      &cpustat[i]), 0);
		cpus[i] = (struct tracedat_cpu_data){ .offset = 0 };
		cpus[i].size = drain_cpu(f, i, &cpus[i].fd, m->page_size);
	}
	o.ncpustat = ncpu;
	o.cpustat = (const char *const *)cpustat;
	snprintf(path, sizeof(path), "%s/trace.dat", f->dir);
	assert_int_equal(tracedat_write_file(path, m, &o, cpus, ncpu), 0);

	h = tracecmd_open(path, 0);
	assert_non_null(h);
	assert_int_equal(tracecmd_iterate_events(h, NULL, 0, count_cb, &c), 0);
	tracecmd_close(h);
	assert_int_equal(c.unknown, 0);
	assert_int_equal(c.markers, 40);
	assert_true(c.sched_switch > 0);
	assert_int_equal(c.total, c.markers + c.sched_switch + c.wakeups);

	assert_int_equal(run(&out, "trace-cmd report -i %s", path), 0);
	assert_null(strstr(out, "UNKNOWN"));
	assert_non_null(strstr(out, "sched_switch:"));
	assert_non_null(strstr(out, "tmeta 39"));
	/* kallsyms resolves the marker's ip (when addresses are visible) */
	if (kallsyms_visible)
		assert_non_null(strstr(out, "tracing_mark_write"));
	free(out);
	assert_int_equal(run(&out, "trace-cmd dump --options -i %s", path), 0);
	assert_non_null(strstr(out, "CPU: 0\nentries:"));
	assert_non_null(strstr(out, want_uname));
	free(out);

	for (int i = 0; i < ncpu; i++) {
		close(cpus[i].fd);
		free(cpustat[i]);
	}
	tracemeta_free(tm);

	/* without kallsyms: nothing of it is read */
	mo.kallsyms = false;
	assert_int_equal(tracemeta_collect(f->inst, &mo, &tm), 0);
	assert_int_equal(tracemeta_meta(tm)->kallsyms.len, 0);
	tracemeta_free(tm);
}

/* Stats of a real CPU buffer after exactly 10 markers from CPU 0. */
static void test_stats_real(void **state)
{
	struct tfx *f = *state;
	struct tracemeta_stats st;
	cpu_set_t orig, one;
	char *text = NULL;

	sched_getaffinity(0, sizeof(orig), &orig);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	markers(f, 10);
	sched_setaffinity(0, sizeof(orig), &orig);

	assert_int_equal(tracemeta_read_stats(f->inst, 0, &st, &text), 0);
	assert_int_equal(st.entries, 10);
	assert_int_equal(st.overrun, 0);
	assert_int_equal(st.commit_overrun, 0);
	assert_int_equal(st.dropped_events, 0);
	assert_int_equal(st.read_events, 0);
	assert_true(st.bytes > 10 * 8);
	assert_true(st.now_ts >= st.oldest_event_ts);
	assert_true(st.now_ts > 0);
	assert_int_equal(st.have, 0xff);
	assert_non_null(text);
	assert_int_equal(strncmp(text, "CPU: 0\nentries: 10\n", 19), 0);
	free(text);
	assert_int_equal(tracemeta_read_stats(f->inst, 100000, &st, NULL),
			 -ENOENT);
}

/* Stats texts: values, units, unknown lines, malformed input. */
static void test_stats_parse(void **state)
{
	static const char full[] =
		"entries: 48\noverrun: 7\ncommit overrun: 1\nbytes: 3264\n"
		"oldest event ts:   288.447236\nnow ts:   288.750471\n"
		"dropped events: 2\nread events: 10\nsomething new: 5";
	struct tracemeta_stats st;
	const char *s;

	(void)state;
	assert_int_equal(tracemeta_parse_stats(full, strlen(full), &st), 0);
	assert_int_equal(st.entries, 48);
	assert_int_equal(st.overrun, 7);
	assert_int_equal(st.commit_overrun, 1);
	assert_int_equal(st.bytes, 3264);
	assert_int_equal(st.oldest_event_ts, 288447236000ull);
	assert_int_equal(st.now_ts, 288750471000ull);
	assert_int_equal(st.dropped_events, 2);
	assert_int_equal(st.read_events, 10);
	assert_int_equal(st.have, 0xff);

	s = "entries: 1\noverrun: 0\nnow ts: 123456789\n";	/* counter clock */
	assert_int_equal(tracemeta_parse_stats(s, strlen(s), &st), 0);
	assert_int_equal(st.now_ts, 123456789);
	assert_int_equal(st.have, TRACEMETA_ST_ENTRIES | TRACEMETA_ST_OVERRUN |
			 TRACEMETA_ST_NOW_TS);
	/* a prefix of the text must not be read past its length */
	assert_int_equal(tracemeta_parse_stats(full, 12, &st), -EINVAL);
	s = "overrun: 0\n";
	assert_int_equal(tracemeta_parse_stats(s, strlen(s), &st), -EINVAL);
	s = "entries: 12x\noverrun: 0\n";
	assert_int_equal(tracemeta_parse_stats(s, strlen(s), &st), -EINVAL);
	s = "entries: 99999999999999999999999\noverrun: 0\n";
	assert_int_equal(tracemeta_parse_stats(s, strlen(s), &st), -EINVAL);
	s = "entries: 1\noverrun: 0\nnow ts: 1.5\n";
	assert_int_equal(tracemeta_parse_stats(s, strlen(s), &st), -EINVAL);
	s = "entries:\noverrun: 0\n";
	assert_int_equal(tracemeta_parse_stats(s, strlen(s), &st), -EINVAL);
}

/* Resolves one spec; returns the result and the count or error text. */
static int resolve1(const char *spec, const char *filter, int *count,
		    char *err, size_t errlen)
{
	struct tracemeta_event_spec sp = { .spec = spec, .filter = filter };
	struct tracemeta_events *ev = NULL;
	int ret;

	err[0] = '\0';
	ret = tracemeta_resolve_events(&sp, 1, &ev, err, errlen);
	*count = tracemeta_events_count(ev);
	tracemeta_events_free(ev);
	return ret;
}

/* Unknown events are rejected with their name; valid forms resolve. */
static void test_resolve(void **state)
{
	const struct tracemeta_event_spec two[] = {
		{ .spec = "sched:sched_switch", .filter = NULL }, { .spec = "bogus_sys:x", .filter = NULL },
	};
	struct tracemeta_events *ev = NULL;
	char err[256];
	int n;

	(void)state;
	assert_int_equal(resolve1("sched:no_such_event", NULL, &n, err,
				  sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "'sched:no_such_event'"));
	assert_int_equal(resolve1("nosuchsys:ev", NULL, &n, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nosuchsys"));
	assert_int_equal(resolve1("no_such_thing", NULL, &n, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "'no_such_thing'"));
	assert_int_equal(resolve1("sched:zz*", NULL, &n, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "sched:zz*"));
	assert_int_equal(resolve1("all", "pid == 1", &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(resolve1(":x", NULL, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(resolve1("../sched", NULL, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(resolve1("sched/", NULL, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(resolve1("sched/sched_switch/x", NULL, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(resolve1("sched:sched_switch/x", NULL, &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(resolve1("zz*:sched_switch", NULL, &n, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "'zz*:sched_switch'"));
	assert_int_equal(tracemeta_resolve_events(two, 2, &ev, err, sizeof(err)),
			 -ENOENT);
	assert_null(ev);
	assert_non_null(strstr(err, "bogus_sys:x"));

	assert_int_equal(resolve1("sched", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("all", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("sched_switch", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("ftrace:print", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("sched:sched_switch", "prev_pid != 0", &n, err,
				  sizeof(err)), 0);
	assert_int_equal(n, 1);
	/* trace-cmd's other forms: SYS/EV, "SYS:" for all of SYS, a glob
	 * system, a glob without ':' matching systems and event names */
	assert_int_equal(resolve1("sched/sched_switch", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("sched:", NULL, &n, err, sizeof(err)), 0);
	assert_true(n > 1);
	assert_int_equal(resolve1("sch*:sched_switch", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("*:sched_switch", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(resolve1("sche?", NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);		/* the sched system, whole */
}

/* Enabling with filters; a rejected filter names its event. */
static void test_enable(void **state)
{
	struct tfx *f = *state;
	const struct tracemeta_event_spec good[] = {
		{ .spec = "sched:sched_switch", .filter = "prev_pid != 0" },
		{ .spec = "irq", .filter = NULL }, { .spec = "ftrace:print", .filter = NULL },
	};
	const struct tracemeta_event_spec bad[] = {
		{ .spec = "sched:sched_wakeup", .filter = "no_such_field == 1" },
	};
	struct tracemeta_events *ev = NULL;
	char err[512], *s;

	assert_int_equal(tracemeta_resolve_events(good, 3, &ev, err,
						  sizeof(err)), 0);
	assert_int_equal(tracemeta_enable_events(f->inst, ev, err, sizeof(err)), 0);
	tracemeta_events_free(ev);
	s = iread(f, "events/sched/sched_switch/enable");
	assert_int_equal(s[0], '1');
	free(s);
	s = iread(f, "events/sched/sched_switch/filter");
	assert_non_null(strstr(s, "prev_pid != 0"));
	free(s);
	s = iread(f, "set_event");
	assert_non_null(strstr(s, "sched:sched_switch"));
	assert_non_null(strstr(s, "irq:"));
	assert_null(strstr(s, "sched:sched_wakeup\n"));
	free(s);

	assert_int_equal(tracemeta_resolve_events(bad, 1, &ev, err,
						  sizeof(err)), 0);
	assert_int_equal(tracemeta_enable_events(f->inst, ev, err, sizeof(err)),
			 -EINVAL);
	tracemeta_events_free(ev);
	assert_non_null(strstr(err, "sched:sched_wakeup"));
	assert_non_null(strstr(err, "no_such_field"));
	s = iread(f, "events/sched/sched_wakeup/enable");
	assert_int_equal(s[0], '0');	/* not enabled after a bad filter */
	free(s);

	assert_int_equal(tracemeta_disable_events(f->inst), 0);
	s = iread(f, "set_event");
	assert_string_equal(s, "");
	free(s);
}

struct parts {
	struct tracemeta *dst;
	int chunks, more, err;
};

/* tracemeta_part_cb: feeds each chunk into another tracemeta. */
static int feed(void *ctx, unsigned int kind, const char *system,
		const void *data, size_t len, bool more)
{
	struct parts *p = ctx;

	p->chunks++;
	p->more += more;
	if (len > 1000 || !len)
		return -99;	/* chunking broken */
	return tracemeta_add_part(p->dst, kind, system, data, len, more);
}

/* Asserts two texts are equal. */
static void text_eq(const struct tracedat_text *a, const struct tracedat_text *b)
{
	assert_int_equal(a->len, b->len);
	if (a->len)
		assert_memory_equal(a->data, b->data, a->len);
}

/* Writes @m (no CPU data) to a memfd; returns its bytes and length. */
static char *write_meta(const struct tracedat_meta *m, size_t *len)
{
	struct tracedat_cpu_data cpu = { .fd = -1 };
	int fd = memfd_create("meta", 0);
	struct stat sb;
	char *buf;

	assert_true(fd >= 0);
	assert_int_equal(tracedat_write(fd, m, NULL, &cpu, 1), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size);
	assert_int_equal(pread(fd, buf, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

/*
 * Collected metadata sent as parts in 1000-byte chunks and rebuilt on
 * the other side is the same metadata, down to the file's bytes.
 */
static void test_parts_roundtrip(void **state)
{
	struct tfx *f = *state;
	const struct tracemeta_event_spec specs[] = { { .spec = "sched", .filter = NULL } };
	struct tracemeta_opts mo = { .kallsyms = true, .cpustat = true };
	struct tracemeta_events *ev = NULL;
	struct tracemeta *src = NULL;
	struct parts p = { 0 };
	const char *const *sa, *const *sb;
	int na, nb;
	const struct tracedat_meta *a, *b;
	char err[256], *fa, *fb;
	size_t la, lb;

	assert_int_equal(tracemeta_resolve_events(specs, 1, &ev, err,
						  sizeof(err)), 0);
	assert_int_equal(tracemeta_enable_events(f->inst, ev, err, sizeof(err)), 0);
	tracemeta_events_free(ev);
	assert_int_equal(tracemeta_collect(f->inst, &mo, &src), 0);
	p.dst = tracemeta_new();
	assert_non_null(p.dst);
	assert_int_equal(tracemeta_foreach_part(src, 1000, feed, &p), 0);
	assert_true(p.more > 1000);	/* kallsyms alone is thousands */
	assert_int_equal(tracemeta_finish(p.dst, 0), 0);

	a = tracemeta_meta(src);
	b = tracemeta_meta(p.dst);
	assert_int_equal(a->page_size, b->page_size);
	text_eq(&a->header_page, &b->header_page);
	text_eq(&a->header_event, &b->header_event);
	text_eq(&a->kallsyms, &b->kallsyms);
	text_eq(&a->printk_formats, &b->printk_formats);
	text_eq(&a->cmdlines, &b->cmdlines);
	assert_string_equal(a->uname, b->uname);
	assert_string_equal(a->trace_clock, b->trace_clock);
	assert_int_equal(a->nftrace, b->nftrace);
	for (int i = 0; i < a->nftrace; i++)
		text_eq(&a->ftrace_formats[i], &b->ftrace_formats[i]);
	assert_int_equal(a->nsystems, 1);
	assert_int_equal(b->nsystems, 1);
	assert_string_equal(a->systems[0].name, b->systems[0].name);
	assert_int_equal(a->systems[0].nformats, b->systems[0].nformats);
	assert_true(a->systems[0].nformats > 10);
	for (int i = 0; i < a->systems[0].nformats; i++)
		text_eq(&a->systems[0].formats[i], &b->systems[0].formats[i]);
	/* every CPU's stats (trace-cmd's CPUSTAT text) made it across */
	na = tracemeta_cpustat(src, &sa);
	nb = tracemeta_cpustat(p.dst, &sb);
	assert_true(na >= 1);
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++) {
		char want[32];

		snprintf(want, sizeof(want), "CPU: %d\nentries: ", i);
		assert_string_equal(sa[i], sb[i]);
		assert_memory_equal(sa[i], want, strlen(want));
	}
	fa = write_meta(a, &la);
	fb = write_meta(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(fa, fb, la);
	free(fa);
	free(fb);
	/* a callback error stops the walk and is returned */
	tracemeta_free(p.dst);
	p.dst = tracemeta_new();
	assert_int_equal(tracemeta_foreach_part(src, 1001, feed, &p), -99);
	tracemeta_free(p.dst);
	tracemeta_free(src);
}

/* Adds a whole single-chunk part. */
static int add(struct tracemeta *tm, unsigned int kind, const char *sys,
	       const char *text, bool more)
{
	return tracemeta_add_part(tm, kind, sys, text, strlen(text), more);
}

/* A minimal finished tracemeta from parts with kallsyms text @ks. */
static struct tracemeta *meta_with_kallsyms(const char *ks)
{
	static const char hp[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	struct tracemeta *tm = tracemeta_new();

	assert_non_null(tm);
	assert_int_equal(add(tm, TRACEMETA_HEADER_PAGE, "", hp, false), 0);
	assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	assert_int_equal(add(tm, TRACEMETA_KALLSYMS, "", ks, false), 0);
	assert_int_equal(tracemeta_finish(tm, 0), 0);
	return tm;
}

/* A peer's final metadata takes the compressed kallsyms of the first
 * when its text is the same, byte for byte, and only then. */
static void test_take_precompressed(void **state)
{
	const char *ks = "ffffffff81000000 T _text\nffffffff81000010 T _stext\n";
	struct tracemeta *first, *final, *other;
	const struct tracedat_meta *m;

	(void)state;
	first = meta_with_kallsyms(ks);
	final = meta_with_kallsyms(ks);
	other = meta_with_kallsyms("ffffffff81000000 T _text\nffffffff81000010 T _etext\n");
	assert_false(tracemeta_take_precompressed(final, first));	/* none yet */
	assert_int_equal(tracemeta_precompress(first, TRACEDAT_COMPRESS_ZSTD), 0);
	assert_non_null(tracemeta_meta(first)->kallsyms_z);
	assert_false(tracemeta_take_precompressed(other, first));	/* same length, other bytes */
	assert_null(tracemeta_meta(other)->kallsyms_z);
	assert_true(tracemeta_take_precompressed(final, first));
	m = tracemeta_meta(final);
	assert_non_null(m->kallsyms_z);
	assert_ptr_equal(m->kallsyms_z->raw, m->kallsyms.data);	/* the writer uses it */
	assert_int_equal(m->kallsyms_z->raw_len, strlen(ks));
	assert_null(tracemeta_meta(first)->kallsyms_z);		/* moved, not shared */
	assert_false(tracemeta_take_precompressed(final, first));
	/* none: dropped */
	assert_int_equal(tracemeta_precompress(final, TRACEDAT_COMPRESS_NONE), 0);
	assert_null(tracemeta_meta(final)->kallsyms_z);
	tracemeta_free(first);
	tracemeta_free(final);
	tracemeta_free(other);
}

/* What a peer sends is checked: duplicates, interleaving, names, limits. */
static void test_parts_errors(void **state)
{
	static const char hp[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	struct tracemeta *tm;
	char big[16];

	(void)state;
	/* a minimal valid set; page size from header_page */
	tm = tracemeta_new();
	assert_int_equal(add(tm, TRACEMETA_HEADER_PAGE, "", hp, false), 0);
	assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "sched", "a", true), 0);
	assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "sched", "b", false), 0);
	assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "irq", "c", false), 0);
	assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "sched", "d", false), 0);
	assert_int_equal(add(tm, 200, "", "newer kind", false), 0);
	assert_int_equal(add(tm, TRACEMETA_TRACE_CLOCK, "", "[mono] local", false), 0);
	assert_int_equal(tracemeta_finish(tm, 0), 0);
	assert_int_equal(tracemeta_meta(tm)->page_size, 4096);
	assert_int_equal(tracemeta_meta(tm)->nsystems, 2);
	for (int i = 0; i < 2; i++) {
		const struct tracedat_system *s = &tracemeta_meta(tm)->systems[i];

		if (!strcmp(s->name, "sched")) {
			assert_int_equal(s->nformats, 2);
			assert_string_equal(s->formats[0].data, "ab");
			assert_string_equal(s->formats[1].data, "d");
		} else {
			assert_string_equal(s->name, "irq");
			assert_int_equal(s->nformats, 1);
		}
	}
	assert_int_equal(add(tm, TRACEMETA_PRINTK, "", "late", false), -EINVAL);
	tracemeta_free(tm);

#define BAD(expect, ...) do {						\
		tm = tracemeta_new();					\
		assert_int_equal(add(tm, TRACEMETA_HEADER_PAGE, "", hp, false), 0); \
		__VA_ARGS__;						\
		tracemeta_free(tm);					\
	} while (0)
	/* a part sent twice */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_PAGE, "", hp, false),
				-EPROTO));
	/* chunks of two parts interleaved */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_PRINTK, "", "a", true), 0);
	    assert_int_equal(add(tm, TRACEMETA_CMDLINES, "", "b", false), -EPROTO));
	/* a continuation naming another system */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "sched", "a", true), 0);
	    assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "irq", "b", false),
			     -EPROTO));
	/* bad system names */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "../x", "a", false),
				-EPROTO);
	    assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "", "a", false), -EPROTO));
	BAD(0, assert_int_equal(add(tm, TRACEMETA_EVENT_FORMAT, "ftrace", "a",
				    false), -EPROTO));
	BAD(0, assert_int_equal(tracemeta_add_part(tm, TRACEMETA_EVENT_FORMAT,
						   NULL, "a", 1, false), -EPROTO));
	/* kind 0, data missing */
	BAD(0, assert_int_equal(add(tm, 0, "", "a", false), -EINVAL));
	BAD(0, assert_int_equal(tracemeta_add_part(tm, TRACEMETA_PRINTK, "",
						   NULL, 5, false), -EINVAL));
	/* over the size limit: refused before anything is read or allocated */
	BAD(0, assert_int_equal(tracemeta_add_part(tm, TRACEMETA_KALLSYMS, "",
						   big, TRACEMETA_MAX_TEXT + 1ul,
						   false), -E2BIG));
	/* incomplete or bad at finish */
	BAD(0, assert_int_equal(tracemeta_finish(tm, 4096), -EPROTO));	/* no header_event */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", true), 0);
	    assert_int_equal(tracemeta_finish(tm, 4096), -EPROTO));	/* open part */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	    assert_int_equal(add(tm, TRACEMETA_TRACE_CLOCK, "", "local", false), 0);
	    assert_int_equal(tracemeta_finish(tm, 4096), -EPROTO));	/* no [clock] */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	    assert_int_equal(tracemeta_add_part(tm, TRACEMETA_UNAME, "", "a\0b", 3,
						false), 0);
	    assert_int_equal(tracemeta_finish(tm, 4096), -EPROTO));	/* NUL inside */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	    assert_int_equal(tracemeta_add_part(tm, TRACEMETA_FTRACE_FORMAT, "",
						"", 0, false), 0);
	    assert_int_equal(tracemeta_finish(tm, 4096), -EPROTO));	/* empty format */
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	    assert_int_equal(tracemeta_finish(tm, 3000), -EINVAL));
	BAD(0, assert_int_equal(add(tm, TRACEMETA_HEADER_EVENT, "", "x", false), 0);
	    assert_int_equal(tracemeta_finish(tm, 8192), 0);
	    assert_int_equal(tracemeta_meta(tm)->page_size, 8192));
#undef BAD
}

/* Forks a child named @name that switches out 20 times (sched_switch,
 * when enabled, makes the saved cmdlines hold it); its "PID NAME" line
 * into @line. */
static void switching_child(const char *name, char *line, size_t len)
{
	pid_t pid = fork();
	int st = 0;

	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_NAME, name);
		for (int i = 0; i < 20; i++) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	snprintf(line, len, "%d %s\n", (int)pid, name);
}

/* @n markers written from CPU 0. */
static void markers_cpu0(struct tfx *f, int n)
{
	cpu_set_t orig, one;

	sched_getaffinity(0, sizeof(orig), &orig);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	markers(f, n);
	sched_setaffinity(0, sizeof(orig), &orig);
}

/*
 * tracemeta_refresh() reads again what a recording changes and nothing
 * else: CPU 0's stats say 5 entries when collected after 5 markers, still
 * 5 after a refresh without cpustat, 12 after 7 more markers and one with
 * it; a task that ran after the collect is in the refreshed cmdlines
 * only; headers and formats are the texts collected (the same memory);
 * the refreshed metadata's parts rebuild into the same stats and
 * cmdlines; an unfinished tracemeta is refused.
 */
static void test_refresh(void **state)
{
	struct tfx *f = *state;
	const struct tracemeta_event_spec specs[] = { { .spec = "sched:sched_switch" } };
	struct tracemeta_opts mo = { .cpustat = true }, nostat = { .cpustat = false };
	struct tracemeta_events *ev = NULL;
	struct tracemeta *tm = NULL, *empty;
	struct parts p = { 0 };
	const struct tracedat_meta *m, *b;
	const char *hp, *ftrace0, *const *sa, *const *sb;
	char err[256], child[64], *old;
	int n, nb;

	markers_cpu0(f, 5);
	assert_int_equal(tracemeta_collect(f->inst, &mo, &tm), 0);
	m = tracemeta_meta(tm);
	hp = m->header_page.data;
	ftrace0 = m->ftrace_formats[0].data;
	n = tracemeta_cpustat(tm, &sa);
	assert_true(n >= 1);
	assert_int_equal(strncmp(sa[0], "CPU: 0\nentries: 5\n", 18), 0);

	markers_cpu0(f, 7);
	assert_int_equal(tracemeta_refresh(tm, f->inst, &nostat), 0);
	assert_int_equal(tracemeta_cpustat(tm, &sa), n);
	assert_int_equal(strncmp(sa[0], "CPU: 0\nentries: 5\n", 18), 0);
	assert_int_equal(tracemeta_refresh(tm, f->inst, &mo), 0);
	assert_int_equal(tracemeta_cpustat(tm, &sa), n);
	assert_int_equal(strncmp(sa[0], "CPU: 0\nentries: 12\n", 19), 0);
	assert_ptr_equal(m->header_page.data, hp);
	assert_ptr_equal(m->ftrace_formats[0].data, ftrace0);

	/* a task that ran after the collect: in the cmdlines refreshed */
	assert_int_equal(tracemeta_resolve_events(specs, 1, &ev, err, sizeof(err)), 0);
	assert_int_equal(tracemeta_enable_events(f->inst, ev, err, sizeof(err)), 0);
	tracemeta_events_free(ev);
	old = strdup(m->cmdlines.data ? m->cmdlines.data : "");
	assert_non_null(old);
	switching_child("tmrefresh", child, sizeof(child));
	assert_int_equal(tracemeta_refresh(tm, f->inst, &mo), 0);
	assert_null(strstr(old, child));
	assert_non_null(strstr(m->cmdlines.data, child));
	assert_int_equal(m->cmdlines.len, strlen(m->cmdlines.data));
	assert_true(m->printk_formats.len == 0 ||
		    m->printk_formats.len == strlen(m->printk_formats.data));
	free(old);

	/* what is sent of it rebuilds into the same */
	p.dst = tracemeta_new();
	assert_non_null(p.dst);
	assert_int_equal(tracemeta_foreach_part(tm, 1000, feed, &p), 0);
	assert_int_equal(tracemeta_finish(p.dst, 0), 0);
	b = tracemeta_meta(p.dst);
	text_eq(&m->cmdlines, &b->cmdlines);
	text_eq(&m->printk_formats, &b->printk_formats);
	assert_int_equal(tracemeta_cpustat(tm, &sa), n);	/* the texts were replaced */
	nb = tracemeta_cpustat(p.dst, &sb);
	assert_int_equal(nb, n);
	for (int i = 0; i < n; i++)
		assert_string_equal(sa[i], sb[i]);
	tracemeta_free(p.dst);
	tracemeta_free(tm);

	empty = tracemeta_new();
	assert_non_null(empty);
	assert_int_equal(tracemeta_refresh(empty, f->inst, &mo), -EINVAL);
	assert_int_equal(tracemeta_refresh(NULL, f->inst, &mo), -EINVAL);
	tracemeta_free(empty);
}

/*
 * An instance whose sub-buffers were made 8 KiB: the collected page size
 * is the instance's, the one the ring buffer module gives, and agrees
 * with the header_page collected with it.
 */
static void test_collect_subbuf(void **state)
{
	struct tfx *f = *state;
	struct tracemeta *tm = NULL;
	const struct tracedat_meta *m;

	if (!tracefs_file_exists(f->inst, "buffer_subbuf_size_kb") || getpagesize() >= 8192) {
		printf("no buffer_subbuf_size_kb: the page size is fixed here\n");
		return;
	}
	/* a kernel may refuse it (6.18.44-fc here: EPERM): probed, not assumed */
	errno = 0;
	if (tracefs_instance_file_write(f->inst, "buffer_subbuf_size_kb", "8") <= 0) {
		printf("buffer_subbuf_size_kb refused (%s): the page size is fixed here\n",
		       strerror(errno));
		return;
	}
	assert_int_equal(tracemeta_collect(f->inst, NULL, &tm), 0);
	m = tracemeta_meta(tm);
	assert_int_equal(m->page_size, 8192);
	assert_int_equal(tsync_ringbuf_page_size(f->inst), 8192);
	assert_int_equal(tsync_ringbuf_page_size_of(m->header_page.data, m->header_page.len),
			 8192);
	tracemeta_free(tm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_collect_roundtrip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_collect_subbuf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_real, setup, teardown),
		cmocka_unit_test(test_stats_parse),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test_setup_teardown(test_enable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parts_roundtrip, setup,
						teardown),
		cmocka_unit_test(test_parts_errors),
		cmocka_unit_test(test_take_precompressed),
	};

	if (access("/sys/kernel/tracing/instances", W_OK)) {
		fprintf(stderr, "tracefs instances not writable\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
