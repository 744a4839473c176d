// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace.dat writer tests: real ring-buffer pages (markers written into a
 * private tracefs instance, read back from trace_pipe_raw) and real format
 * texts go through tracedat_write*(); libtracecmd and Debian's trace-cmd
 * read the files back. Time-shift corrections are compared to trace-cmd's
 * interpolation formula to the nanosecond.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include <kbuffer.h>
#include <trace-cmd.h>
#include <tracefs.h>

#include "common/tracedat/tracedat.h"
#include "tests/unit/tmp_fixture.h"

#define TRACING "/sys/kernel/tracing"
#define NMARK 50
#define PAGE 4096

struct rec {
	int cpu;
	uint64_t ts;
	char text[64];
};

struct fx {
	struct tracefs_instance *inst;
	char tmpdir[64];
	int ncpus;			/* CPUs captured (1 or 2) */
	char *pages[2];
	size_t pages_len[2];
	uint64_t raw_ts[2][NMARK];	/* kbuffer timestamps per CPU */
	char *hp, *he, *ftrace_txt[4], *clock;
	size_t hp_len, he_len, ftrace_len[4];
	struct tracedat_text ftrace[4];
	struct tracedat_meta meta;
	struct tracedat_cpu_data cpus[2];
};

/* Reads a whole file into a malloc'd NUL-terminated buffer. */
static char *slurp(const char *path, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n < 2) {
			char *nb;

			cap *= 2;
			nb = realloc(buf, cap);
			assert_non_null(nb);
			buf = nb;
		}
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Pins the calling thread to @cpu. Returns 0 or -1. */
static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Writes NMARK markers "tdat-cC N" from @cpu, reads the CPU's pages. */
static int capture_cpu(struct fx *f, int cpu)
{
	char path[128], msg[64];
	char *dir = tracefs_instance_get_dir(f->inst);
	size_t cap = 64 * PAGE;
	int fd, i;

	if (pin(cpu))
		return -1;
	snprintf(path, sizeof(path), "%s/trace_marker", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		goto fail;
	for (i = 0; i < NMARK; i++) {
		int n = snprintf(msg, sizeof(msg), "tdat-c%d %d", cpu, i);

		if (write(fd, msg, (size_t)n) != n) {
			close(fd);
			goto fail;
		}
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", dir,
		 cpu);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		goto fail;
	f->pages[cpu] = calloc(1, cap);
	for (;;) {
		ssize_t r = read(fd, f->pages[cpu] + f->pages_len[cpu], PAGE);

		if (r <= 0)
			break;
		f->pages_len[cpu] += PAGE;	/* whole sub-buffers */
		if (f->pages_len[cpu] + PAGE > cap)
			break;
	}
	close(fd);
	tracefs_put_tracing_file(dir);
	return f->pages_len[cpu] ? 0 : -1;
fail:
	tracefs_put_tracing_file(dir);
	return -1;
}

/* Collects the kbuffer timestamps of the captured pages of @cpu. */
static int kbuf_timestamps(struct fx *f, int cpu)
{
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	unsigned long long ts;
	int n = 0;

	for (size_t off = 0; off < f->pages_len[cpu]; off += PAGE) {
		void *ev;

		kbuffer_load_subbuffer(kb, f->pages[cpu] + off);
		for (ev = kbuffer_read_event(kb, &ts); ev;
		     ev = kbuffer_next_event(kb, &ts)) {
			if (n < NMARK)
				f->raw_ts[cpu][n] = ts;
			n++;
		}
	}
	kbuffer_free(kb);
	return n;
}


/* Makes "local" the selected clock of the kernel's trace_clock list @c:
 * the events are made up, so the file's clock is only a label, and
 * trace-cmd report prints raw counts for a clock such as x86-tsc, which
 * a test before may have left selected. */
static void select_local(char *c)
{
	char *w = c;

	for (char *r = c; *r; r++)
		if (*r != '[' && *r != ']')
			*w++ = *r;
	*w = '\0';
	if (!strncmp(c, "local", 5)) {
		memmove(c + 7, c + 5, strlen(c + 5) + 1);
		memcpy(c, "[local]", 7);
	}
}
/* Group setup: instance, pages of CPU 0 (and 1), format texts. */
static int setup(void **state)
{
	static const char *const ftrace_ev[4] = { "print", "raw_data",
						  "bprint", "bputs" };
	struct fx *f = calloc(1, sizeof(*f));
	char name[64], path[256];
	cpu_set_t orig;
	int ret = 0;

	if (!f)
		return -1;
	snprintf(name, sizeof(name), "tsync-test-tdat-%d", getpid());
	f->inst = tracefs_instance_create(name);
	if (!f->inst) {
		fprintf(stderr, "cannot create tracefs instance\n");
		free(f);
		return -1;
	}
	sched_getaffinity(0, sizeof(orig), &orig);
	f->ncpus = CPU_ISSET(1, &orig) ? 2 : 1;
	for (int c = 0; c < f->ncpus && !ret; c++) {
		ret = capture_cpu(f, c) || kbuf_timestamps(f, c) != NMARK;
		if (ret)
			fprintf(stderr, "capture on cpu %d failed\n", c);
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	/* the instance goes whatever happened: group teardown does not run
	 * when setup fails */
	tracefs_instance_destroy(f->inst);
	tracefs_instance_free(f->inst);
	f->inst = NULL;
	if (ret)
		return -1;

	f->hp = slurp(TRACING "/events/header_page", &f->hp_len);
	f->he = slurp(TRACING "/events/header_event", &f->he_len);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), TRACING "/events/ftrace/%s/format",
			 ftrace_ev[i]);
		f->ftrace_txt[i] = slurp(path, &f->ftrace_len[i]);
		if (!f->ftrace_txt[i])
			return -1;
		f->ftrace[i].data = f->ftrace_txt[i];
		f->ftrace[i].len = f->ftrace_len[i];
	}
	f->clock = slurp(TRACING "/trace_clock", NULL);
	if (!f->hp || !f->he || !f->clock)
		return -1;
	select_local(f->clock);
	f->meta.header_page.data = f->hp;
	f->meta.header_page.len = f->hp_len;
	f->meta.header_event.data = f->he;
	f->meta.header_event.len = f->he_len;
	f->meta.nftrace = 4;
	f->meta.ftrace_formats = f->ftrace;
	f->meta.cmdlines.data = "1 init\n";
	f->meta.cmdlines.len = 7;
	f->meta.page_size = PAGE;
	f->meta.uname = "Linux tdat-test 6.0.0 x86_64";
	f->meta.trace_clock = f->clock;
	for (int c = 0; c < f->ncpus; c++) {
		f->cpus[c].fd = -1;
		f->cpus[c].buf = f->pages[c];
		f->cpus[c].size = f->pages_len[c];
	}
	snprintf(f->tmpdir, sizeof(f->tmpdir), "/tmp/tsync-tdat-XXXXXX");
	if (!mkdtemp(f->tmpdir))
		return -1;
	*state = f;
	return 0;
}

/* Group teardown: removes the temp dir and frees everything. */
static int teardown(void **state)
{
	struct fx *f = *state;
	if (!f)
		return 0;
	fixture_instance_drop(f->inst);
	fixture_rmtree(f->tmpdir);
	for (int i = 0; i < 2; i++)
		free(f->pages[i]);
	for (int i = 0; i < 4; i++)
		free(f->ftrace_txt[i]);
	free(f->hp);
	free(f->he);
	free(f->clock);
	free(f);
	return 0;
}

struct readback {
	int n;
	struct rec recs[4 * NMARK];
};

/* libtracecmd callback: records cpu, ts and the marker text. */
static int collect(struct tracecmd_input *h, struct tep_record *r, int cpu,
		   void *data)
{
	struct readback *rb = data;
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct tep_event *ev = tep_find_event_by_record(tep, r);
	struct rec *o;
	int len;
	char *buf;

	if (rb->n >= (int)(sizeof(rb->recs) / sizeof(rb->recs[0])))
		return -1;
	o = &rb->recs[rb->n++];
	o->cpu = cpu;
	o->ts = r->ts;
	o->text[0] = '\0';
	if (ev && !strcmp(ev->name, "print")) {
		struct tep_format_field *fl = tep_find_field(ev, "buf");

		/* buf[] is a size-0 array: it runs to the end of the record */
		if (!fl || fl->offset > r->size)
			return -1;
		buf = (char *)r->data + fl->offset;
		len = r->size - fl->offset;
		while (len > 0 && (buf[len - 1] == '\n' || !buf[len - 1]))
			len--;
		snprintf(o->text, sizeof(o->text), "%.*s", len, buf);
	}
	return 0;
}

/* Opens @path with libtracecmd and reads every event into @rb. */
static struct tracecmd_input *read_back(const char *path, struct readback *rb)
{
	struct tracecmd_input *h = tracecmd_open(path, 0);

	assert_non_null(h);
	memset(rb, 0, sizeof(*rb));
	assert_int_equal(tracecmd_iterate_events(h, NULL, 0, collect, rb), 0);
	return h;
}

/* Checks the events of @rb: markers in order with @expect(ts) times. */
static void check_events(struct fx *f, const struct readback *rb,
			 uint64_t (*expect)(const void *, int, uint64_t),
			 const void *ctx)
{
	int seen[2] = { 0, 0 };
	char want[64];

	assert_int_equal(rb->n, f->ncpus * NMARK);
	for (int i = 0; i < rb->n; i++) {
		const struct rec *r = &rb->recs[i];
		int k;

		assert_true(r->cpu >= 0 && r->cpu < f->ncpus);
		k = seen[r->cpu]++;
		snprintf(want, sizeof(want), "tdat-c%d %d", r->cpu, k);
		assert_string_equal(r->text, want);
		assert_int_equal(r->ts, expect ? expect(ctx, r->cpu,
				 f->raw_ts[r->cpu][k]) : f->raw_ts[r->cpu][k]);
	}
}

/* Runs a shell command, returns its exit status and output (malloc'd). */
static int run(char **out, const char *fmt, ...)
{
	char cmd[1024], outp[300];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(outp, sizeof(outp), "/tmp/tsync-tdat-out-%d", getpid());
	strncat(cmd, " >", sizeof(cmd) - strlen(cmd) - 1);
	strncat(cmd, outp, sizeof(cmd) - strlen(cmd) - 1);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	st = system(cmd);
	*out = slurp(outp, NULL);
	unlink(outp);
	assert_non_null(*out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Plain host-like file: events, timestamps, options, trace-cmd tools. */
static void test_roundtrip(void **state)
{
	struct fx *f = *state;
	struct tracedat_opts o = { .has_traceid = 1,
				   .traceid = 0x1122334455667788ull,
				   .version = "tsync-test" };
	const char *stat0 = "CPU: 0\nentries: 50\noverrun: 0\n";
	struct readback *rb = calloc(1, sizeof(*rb));
	struct tracecmd_input *h;
	char path[128], *out;

	o.ncpustat = 1;
	o.cpustat = &stat0;
	snprintf(path, sizeof(path), "%s/plain.dat", f->tmpdir);
	assert_int_equal(tracedat_write_file(path, &f->meta, &o, f->cpus,
					     f->ncpus), 0);
	h = read_back(path, rb);
	assert_int_equal(tracecmd_get_traceid(h), 0x1122334455667788ull);
	tracecmd_close(h);
	check_events(f, rb, NULL, NULL);

	assert_int_equal(run(&out, "trace-cmd report -i %s", path), 0);
	assert_non_null(strstr(out, "tdat-c0 0"));
	assert_non_null(strstr(out, "tdat-c0 49"));
	if (f->ncpus > 1)
		assert_non_null(strstr(out, "tdat-c1 49"));
	assert_null(strstr(out, "UNKNOWN"));
	free(out);
	assert_int_equal(run(&out, "trace-cmd dump --options -i %s", path), 0);
	assert_non_null(strstr(out, "TRACEID"));
	assert_non_null(strstr(out, "0x1122334455667788"));
	assert_non_null(strstr(out, "Linux tdat-test 6.0.0 x86_64"));
	assert_non_null(strstr(out, "tsync-test"));
	assert_non_null(strstr(out, "entries: 50"));
	free(out);
	free(rb);
}

/* expect() for an OFFSET option: every timestamp plus *@ctx. */
static uint64_t expect_offset(const void *ctx, int cpu, uint64_t ts)
{
	(void)cpu;
	return ts + (uint64_t)*(const int64_t *)ctx;
}

/*
 * --ts-offset: an OFFSET option holding the text as given, which
 * libtracecmd adds to every timestamp (decimal, negative hex alike), in
 * both file versions; trace-cmd dump shows it.
 */
static void test_ts_offset(void **state)
{
	static const struct { const char *text; int64_t value; } offs[] = {
		{ "1000000000", 1000000000 }, { "-0x10", -16 },
	};
	struct fx *f = *state;
	struct readback *rb = calloc(1, sizeof(*rb));
	char path[128], *out, want[64];

	assert_non_null(rb);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (int v = 6; v <= 7; v++) {
			struct tracedat_opts o = { .ts_offset = offs[i].text,
						   .format = { v, v == 7 ?
							       TRACEDAT_COMPRESS_ZSTD :
							       TRACEDAT_COMPRESS_NONE } };

			snprintf(path, sizeof(path), "%s/offset%zu-v%d.dat", f->tmpdir, i, v);
			assert_int_equal(tracedat_write_file(path, &f->meta, &o, f->cpus,
							     f->ncpus), 0);
			tracecmd_close(read_back(path, rb));
			check_events(f, rb, expect_offset, &offs[i].value);
			assert_int_equal(run(&out, "trace-cmd dump --options -i %s", path), 0);
			snprintf(want, sizeof(want), "[Option OFFSET, %zu bytes]\n%s\n",
				 strlen(offs[i].text) + 1, offs[i].text);
			assert_non_null(strstr(out, want));
			free(out);
		}
	}
	free(rb);
}

/* Writes with @cpus to a memfd and returns the bytes (malloc'd). */
static char *write_mem(struct fx *f, const struct tracedat_cpu_data *cpus,
		       size_t *len)
{
	int fd = memfd_create("tdat", 0);
	char *buf;
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(tracedat_write(fd, &f->meta, NULL, cpus, f->ncpus), 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/*
 * Data from file descriptors (at an offset, a memfd and a regular file)
 * gives the very same bytes as data from memory; every CPU block starts
 * on a page boundary.
 */
static void test_fd_sources(void **state)
{
	struct fx *f = *state;
	struct tracedat_cpu_data fdc[2];
	char path[128], *a, *b, junk[1000];
	size_t alen, blen;
	int fds[2];

	for (int c = 0; c < f->ncpus; c++) {
		if (c == 0) {
			fds[c] = memfd_create("pages", 0);
		} else {
			snprintf(path, sizeof(path), "%s/cpu%d.raw", f->tmpdir, c);
			fds[c] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		}
		assert_true(fds[c] >= 0);
		/* 1000 bytes of junk before the pages: offset is honoured */
		memset(junk, 0xa5, sizeof(junk));
		assert_int_equal(pwrite(fds[c], junk, sizeof(junk), 0), 1000);
		assert_int_equal(pwrite(fds[c], f->pages[c], f->pages_len[c],
					1000), (ssize_t)f->pages_len[c]);
		fdc[c] = (struct tracedat_cpu_data){ .fd = fds[c], .offset = 1000,
						     .size = f->pages_len[c] };
	}
	a = write_mem(f, f->cpus, &alen);
	b = write_mem(f, fdc, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	assert_int_equal(alen % PAGE, 0);
	assert_memory_equal(a + alen - f->pages_len[f->ncpus - 1],
			    f->pages[f->ncpus - 1], f->pages_len[f->ncpus - 1]);
	free(a);
	free(b);

	/* A source shorter than announced is an error, not a short file. */
	fdc[0].size += PAGE;
	a = NULL;
	{
		int fd = memfd_create("tdat", 0);

		assert_int_equal(tracedat_write(fd, &f->meta, NULL, fdc,
						f->ncpus), -EIO);
		close(fd);
	}
	for (int c = 0; c < f->ncpus; c++)
		close(fds[c]);
}

/* A partial last page (not a page multiple) is padded and still read. */
static void test_partial_page(void **state)
{
	struct fx *f = *state;
	struct tracedat_cpu_data c[2];
	struct readback *rb = calloc(1, sizeof(*rb));
	char path[128];
	uint64_t commit;
	size_t last;

	memcpy(c, f->cpus, sizeof(c));
	last = f->pages_len[0] - PAGE;
	memcpy(&commit, f->pages[0] + last + 8, 8);
	commit &= 0xfffff;	/* low bits: bytes used */
	assert_true(commit > 0 && commit <= PAGE - 16);
	c[0].size = last + 16 + commit;
	snprintf(path, sizeof(path), "%s/partial.dat", f->tmpdir);
	assert_int_equal(tracedat_write_file(path, &f->meta, NULL, c,
					     f->ncpus), 0);
	tracecmd_close(read_back(path, rb));
	check_events(f, rb, NULL, NULL);
	free(rb);
}

/* Returns the number of entries of @dir whose name starts with @prefix. */
static int count_names(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* A staged file leaves the earlier one alone until it is committed: over
 * it, beside it with a suffix, or not at all (discarded). */
static void test_staged(void **state)
{
	struct fx *f = *state;
	struct tracedat_staged st, st2, none = { 0 };
	struct readback *rb = calloc(1, sizeof(*rb));
	char path[128], part[160];
	struct stat sb;
	FILE *old;

	snprintf(path, sizeof(path), "%s/staged.dat", f->tmpdir);
	snprintf(part, sizeof(part), "%s.partial", path);
	old = fopen(path, "w");
	assert_non_null(old);
	fputs("earlier", old);
	fclose(old);
	assert_int_equal(tracedat_stage_file(path, &f->meta, NULL, f->cpus, f->ncpus, &st), 0);
	assert_non_null(st.tmp);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 7);		/* still the earlier one */
	assert_int_equal(count_names(f->tmpdir, "staged.dat.tmp-"), 1);
	/* beside it: the earlier file stays */
	assert_int_equal(tracedat_commit_file(&st, ".partial"), 0);
	assert_null(st.tmp);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 7);
	tracecmd_close(read_back(part, rb));
	check_events(f, rb, NULL, NULL);
	/* discarded: nothing left */
	assert_int_equal(tracedat_stage_file(path, &f->meta, NULL, f->cpus, f->ncpus, &st2), 0);
	tracedat_discard_file(&st2);
	assert_int_equal(count_names(f->tmpdir, "staged.dat.tmp-"), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 7);
	/* over it */
	assert_int_equal(tracedat_stage_file(path, &f->meta, NULL, f->cpus, f->ncpus, &st), 0);
	assert_int_equal(tracedat_commit_file(&st, NULL), 0);
	tracecmd_close(read_back(path, rb));
	check_events(f, rb, NULL, NULL);
	assert_int_equal(count_names(f->tmpdir, "staged.dat.tmp-"), 0);
	/* an empty one: nothing to do */
	assert_int_equal(tracedat_commit_file(&none, NULL), 0);
	tracedat_discard_file(&none);
	/* a directory that is not there: nothing staged */
	snprintf(path, sizeof(path), "%s/no/such.dat", f->tmpdir);
	assert_int_equal(tracedat_stage_file(path, &f->meta, NULL, f->cpus, f->ncpus, &st),
			 -ENOENT);
	assert_null(st.tmp);
	unlink(part);
	free(rb);
}

struct ts_case {
	uint32_t flags;
	struct tracedat_ts_cpu cpu[2];	/* samples sorted by time */
};

/* trace-cmd's timestamp_correction_calc() (scaling 0 is written as 1). */
static uint64_t corr_calc(uint64_t ts, uint32_t flags,
			  const struct tracedat_ts_sample *min,
			  const struct tracedat_ts_sample *max)
{
	long long tscor;

	if (flags & TRACEDAT_TSYNC_INTERPOLATE) {
		long long delta = max->ts - min->ts;
		long long off = ((long long)ts - min->ts) *
				(max->offset - min->offset);

		tscor = min->offset + (off + delta / 2) / delta;
	} else {
		tscor = min->offset;
	}
	ts = (ts * (min->scaling ? min->scaling : 1)) >> min->frac;
	if (tscor < 0)
		return ts - (uint64_t)llabs(tscor);
	return ts + (uint64_t)tscor;
}

/* trace-cmd's timestamp_host_sync(): sample choice, then the formula. */
static uint64_t expect_shift(const void *ctx, int cpu, uint64_t ts)
{
	const struct ts_case *tc = ctx;
	const struct tracedat_ts_cpu *c = &tc->cpu[cpu];
	const struct tracedat_ts_sample *s = c->samples;
	int n = (int)c->count, lo, hi, mid;

	if (n == 1)
		return ts + (uint64_t)s[0].offset;
	if (n == 2 || ts <= (uint64_t)s[0].ts)
		return corr_calc(ts, tc->flags, &s[0], &s[1]);
	if (ts >= (uint64_t)s[n - 1].ts)
		return corr_calc(ts, tc->flags, &s[n - 2], &s[n - 1]);
	lo = 0;
	hi = n - 1;
	mid = (lo + hi) / 2;
	while (lo <= hi) {
		if (ts < (uint64_t)s[mid].ts)
			hi = mid - 1;
		else if (ts > (uint64_t)s[mid].ts)
			lo = mid + 1;
		else
			break;
		mid = (lo + hi) / 2;
	}
	return corr_calc(ts, tc->flags, &s[mid], &s[mid + 1]);
}

static void check_guest_file(struct fx *f, struct ts_case *tc, const char *name,
			     const struct tracedat_opts *o);

/* Writes a guest file with @tc, reads it back and checks every event. */
static void check_guest(struct fx *f, struct ts_case *tc, const char *name,
			const struct tracedat_ts_cpu *written)
{
	struct tracedat_time_shift ts = { .peer_traceid = 0xabcdefull,
					  .flags = tc->flags,
					  .ncpu = (uint32_t)f->ncpus,
					  .cpus = written };
	struct tracedat_opts o = { .has_traceid = 1, .traceid = 0x6e657374ull,
				   .time_shift = &ts };

	/* version 6, then 7 with zstd: TIME_SHIFT is applied from both */
	check_guest_file(f, tc, name, &o);
	o.format = (struct tracedat_format){ 7, TRACEDAT_COMPRESS_ZSTD };
	check_guest_file(f, tc, name, &o);
}

/* check_guest() for one file format. */
static void check_guest_file(struct fx *f, struct ts_case *tc, const char *name,
			     const struct tracedat_opts *o)
{
	struct readback *rb = calloc(1, sizeof(*rb));
	char path[160], *out, want[64];
	uint64_t first;
	const char *p;

	snprintf(path, sizeof(path), "%s/v%d-%s", f->tmpdir, o->format.version, name);
	assert_int_equal(tracedat_write_file(path, &f->meta, o, f->cpus,
					     f->ncpus), 0);
	tracecmd_close(read_back(path, rb));
	check_events(f, rb, expect_shift, tc);
	free(rb);

	/* trace-cmd report prints the corrected time of the first marker */
	assert_int_equal(run(&out, "trace-cmd report -i %s", path), 0);
	first = expect_shift(tc, 0, f->raw_ts[0][0]);
	first = (first + 500) / 1000;	/* report rounds to the microsecond */
	snprintf(want, sizeof(want), "%" PRIu64 ".%06" PRIu64 ":",
		 (uint64_t)(first / 1000000u), (uint64_t)(first % 1000000u));
	p = strstr(out, "tdat-c0 0\n");
	assert_non_null(p);
	while (p > out && p[-1] != '\n')
		p--;
	assert_non_null(strstr(p, want));
	free(out);
	assert_int_equal(run(&out, "trace-cmd dump --options -i %s", path), 0);
	assert_non_null(strstr(out, "[Option TimeShift"));
	assert_non_null(strstr(out, "0xABCDEF [peer's trace id]"));
	free(out);
}

/* +1 s at t and +3 s at t+2 s, interpolated; 3 samples on CPU 1. */
static void test_time_shift_interpolate(void **state)
{
	struct fx *f = *state;
	int64_t t = (int64_t)f->raw_ts[0][0] - 123456789;
	struct tracedat_ts_sample s0[2] = { { t, 1000000000, 1, 0 },
					    { t + 2000000000, 3000000000, 1, 0 } };
	struct tracedat_ts_sample s1[3] = { { 0, 0, 1, 0 } };
	struct ts_case tc = { .flags = TRACEDAT_TSYNC_INTERPOLATE };

	if (f->ncpus > 1) {
		int64_t a = (int64_t)f->raw_ts[1][0];
		int64_t b = (int64_t)f->raw_ts[1][NMARK - 1];

		/* a bracket inside the events and a negative slope */
		s1[0] = (struct tracedat_ts_sample){ a - 500000000, -700000000, 1, 0 };
		s1[1] = (struct tracedat_ts_sample){ (a + b) / 2 + 1,
						     -700012345, 1, 0 };
		s1[2] = (struct tracedat_ts_sample){ b + 300000000,
						     -699000001, 1, 0 };
	}
	tc.cpu[0] = (struct tracedat_ts_cpu){ 2, s0 };
	tc.cpu[1] = (struct tracedat_ts_cpu){ 3, s1 };
	check_guest(f, &tc, "guest-interp.dat", tc.cpu);

	/* the brief's example, spelled out: at t + 1 s the shift is +2 s */
	assert_int_equal(corr_calc((uint64_t)t + 1000000000,
				   TRACEDAT_TSYNC_INTERPOLATE, &s0[0], &s0[1]),
			 (uint64_t)t + 3000000000ull);
}

/* Without INTERPOLATE the lower sample's offset is added as is. */
static void test_time_shift_step(void **state)
{
	struct fx *f = *state;
	int64_t t = (int64_t)f->raw_ts[0][NMARK / 2];
	struct tracedat_ts_sample s0[3] = { { t - 1000, 5000, 1, 0 }, { t, 7000, 1, 0 },
					    { t + 1000000, 9000, 1, 0 } };
	struct tracedat_ts_sample s1[1] = { { 42, -33, 1, 0 } };
	struct ts_case tc = { .flags = 0 };

	s0[1].ts = t + 1;	/* no event exactly at a sample time */
	tc.cpu[0] = (struct tracedat_ts_cpu){ 3, s0 };
	tc.cpu[1] = (struct tracedat_ts_cpu){ 1, s1 };
	check_guest(f, &tc, "guest-step.dat", tc.cpu);
}

/* A sample's scaling and fraction bits are written as given: here the
 * guest clock runs at 2/3 of the host's (host = guest * 3 >> 1 + offset),
 * as a method that reads a TSC scaling ratio would give them. */
static void test_time_shift_scaling(void **state)
{
	struct fx *f = *state;
	int64_t t = (int64_t)f->raw_ts[0][0] - 1000;
	struct tracedat_ts_sample s[2] = { { t, -5000, 3, 1 },
					   { t + 4000000000, -7000, 3, 1 } };
	struct ts_case tc = { .flags = TRACEDAT_TSYNC_INTERPOLATE };

	tc.cpu[0] = (struct tracedat_ts_cpu){ 2, s };
	tc.cpu[1] = (struct tracedat_ts_cpu){ 2, s };
	check_guest(f, &tc, "guest-scaled.dat", tc.cpu);
	/* the formula itself, spelled out */
	assert_int_equal(corr_calc(1000, 0, &s[0], &s[1]), 1500 - 5000);
}

/* A CPU without samples gets CPU 0's; no samples at all: no option. */
static void test_time_shift_empty(void **state)
{
	struct fx *f = *state;
	int64_t t = (int64_t)f->raw_ts[0][0];
	struct tracedat_ts_sample s0[2] = { { t - 10, 100, 1, 0 },
					    { t + 4000000000, 900, 1, 0 } };
	struct ts_case tc = { .flags = TRACEDAT_TSYNC_INTERPOLATE };
	struct tracedat_ts_cpu written[2] = { { 2, s0 }, { 0, NULL } };
	struct tracedat_time_shift ts = { .ncpu = (uint32_t)f->ncpus,
					  .cpus = written + 1 };
	struct tracedat_opts o = { .time_shift = &ts };
	struct readback *rb = calloc(1, sizeof(*rb));
	char path[128], *out;

	tc.cpu[0] = written[0];
	tc.cpu[1] = written[0];
	if (f->ncpus > 1)
		check_guest(f, &tc, "guest-fill.dat", written);

	/* CPU 1's empty entry, alone: no sample anywhere */
	ts.ncpu = 1;
	snprintf(path, sizeof(path), "%s/guest-none.dat", f->tmpdir);
	assert_int_equal(tracedat_write_file(path, &f->meta, &o, f->cpus,
					     f->ncpus), 0);
	tracecmd_close(read_back(path, rb));
	check_events(f, rb, NULL, NULL);
	assert_int_equal(run(&out, "trace-cmd dump --options -i %s", path), 0);
	assert_null(strstr(out, "TimeShift"));
	free(out);
	free(rb);
}

/* Host file with GUEST options; merged report with a guest file. */
static void test_host_guests(void **state)
{
	struct fx *f = *state;
	const int32_t pids[2] = { 1234, 5678 };
	struct tracedat_guest g[2] = {
		{ .name = "g1", .traceid = 0x1001, .nvcpu = 2, .pids = NULL },
		{ .name = "second", .traceid = 0x2002, .nvcpu = 2, .pids = pids },
	};
	struct tracedat_opts ho = { .has_traceid = 1, .traceid = 0x4855,
				    .nguests = 2, .guests = g };
	int64_t t = (int64_t)f->raw_ts[0][0];
	struct tracedat_ts_sample s[2] = { { t - 5, 250000, 1, 0 },
					   { t + 1000000000, 250000, 1, 0 } };
	struct tracedat_ts_cpu tcpu[2] = { { 2, s }, { 2, s } };
	struct tracedat_time_shift ts = { .peer_traceid = 0x4855,
					  .flags = TRACEDAT_TSYNC_INTERPOLATE,
					  .ncpu = (uint32_t)f->ncpus, .cpus = tcpu };
	struct tracedat_opts go = { .has_traceid = 1, .traceid = 0x1001,
				    .time_shift = &ts };
	char hpath[128], gpath[128], *out, *line, *save;
	struct tracecmd_input *h;
	const char *name;
	const int *cpu_pid;
	int vcpus, lines = 0;
	double prev = 0;

	snprintf(hpath, sizeof(hpath), "%s/trace.dat", f->tmpdir);
	snprintf(gpath, sizeof(gpath), "%s/trace-g1.dat", f->tmpdir);
	assert_int_equal(tracedat_write_file(hpath, &f->meta, &ho, f->cpus,
					     f->ncpus), 0);
	assert_int_equal(tracedat_write_file(gpath, &f->meta, &go, f->cpus,
					     f->ncpus), 0);
	h = tracecmd_open(hpath, 0);
	assert_non_null(h);
	assert_int_equal(tracecmd_get_traceid(h), 0x4855);
	assert_int_equal(tracecmd_get_guest_cpumap(h, 0x1001, &name, &vcpus,
						   &cpu_pid), 0);
	assert_string_equal(name, "g1");
	assert_int_equal(vcpus, 2);
	assert_int_equal(cpu_pid[0], -1);
	assert_int_equal(cpu_pid[1], -1);
	assert_int_equal(tracecmd_get_guest_cpumap(h, 0x2002, &name, &vcpus,
						   &cpu_pid), 0);
	assert_string_equal(name, "second");
	assert_int_equal(cpu_pid[0], 1234);
	assert_int_equal(cpu_pid[1], 5678);
	assert_int_not_equal(tracecmd_get_guest_cpumap(h, 0x3003, &name,
						       &vcpus, &cpu_pid), 0);
	tracecmd_close(h);

	assert_int_equal(run(&out, "trace-cmd dump --options -i %s", hpath), 0);
	assert_non_null(strstr(out, "GUEST"));
	assert_non_null(strstr(out, "second"));
	free(out);

	/* merged: host then guest (+250 us) lines, in time order */
	assert_int_equal(run(&out, "trace-cmd report -i %s -i %s", hpath,
			     gpath), 0);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *m = strstr(line, "tdat-c");
		char *c = strstr(line, "]");
		double v;

		if (!m || !c || sscanf(c + 1, " %lf:", &v) != 1)
			continue;
		assert_true(v >= prev);
		prev = v;
		lines++;
	}
	assert_int_equal(lines, 4 * NMARK / (f->ncpus == 1 ? 2 : 1));
	free(out);
}

struct format_case {
	int version;
	enum tracedat_compress compress;
	const char *summary;	/* what `trace-cmd dump --summary` says */
};

static const struct format_case formats[] = {
	{ 6, TRACEDAT_COMPRESS_NONE, "\t\t6\t[Version]" },
	{ 7, TRACEDAT_COMPRESS_NONE, "\t\tnone\t[Compression algorithm]" },
	{ 7, TRACEDAT_COMPRESS_ZSTD, "\t\tzstd\t[Compression algorithm]" },
	{ 7, TRACEDAT_COMPRESS_ZLIB, "\t\tzlib\t[Compression algorithm]" },
};

/* Writes @fc's file from fd sources with a partial last page on CPU 0
 * (and, with @empty1, nothing on CPU 1); checks it with libtracecmd and
 * trace-cmd. Returns the file size. */
static off_t check_format(struct fx *f, const struct format_case *fc, bool empty1,
			  bool readable)
{
	const int32_t pids[2] = { 4321, 8765 };
	struct tracedat_guest g = { .name = "vm1", .traceid = 0x77, .nvcpu = 2, .pids = pids };
	/* identity conversion: the events read back unchanged */
	const struct tracedat_tsc2nsec tsc = { .mult = 1024, .shift = 10, .offset = 0 };
	const char *cstat[2] = { "CPU: 0\nentries: 50\n", "CPU: 1\nentries: 51\n" };
	struct tracedat_opts o = { .has_traceid = 1, .traceid = 0x5151, .version = "tsync-fmt",
				   .nguests = 1, .guests = &g, .ncpustat = f->ncpus,
				   .cpustat = cstat, .tsc2nsec = &tsc,
				   .format = { fc->version, fc->compress } };
	struct tracedat_cpu_data c[2];
	struct readback *rb = calloc(1, sizeof(*rb));
	char path[160], *out;
	struct stat st;
	int fd = memfd_create("pages", 0);
	size_t last = f->pages_len[0] - PAGE;
	uint64_t commit;

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, f->pages[0], f->pages_len[0], 0), (ssize_t)f->pages_len[0]);
	memcpy(c, f->cpus, sizeof(c));
	memcpy(&commit, f->pages[0] + last + 8, 8);
	c[0] = (struct tracedat_cpu_data){ .fd = fd, .size = last + 16 + (commit & 0xfffff) };
	if (empty1 && f->ncpus > 1)
		c[1].size = 0;
	snprintf(path, sizeof(path), "%s/fmt-%d-%s%s.dat", f->tmpdir, fc->version,
		 tracedat_compress_name(fc->compress), empty1 ? "-empty1" : "");
	assert_int_equal(tracedat_write_file(path, &f->meta, &o, c, f->ncpus), 0);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	if (!readable) {	/* this trace-cmd has no zlib: check_zlib_equals_zstd() */
		free(rb);
		return st.st_size;
	}
	tracecmd_close(read_back(path, rb));
	if (empty1 && f->ncpus > 1) {
		assert_int_equal(rb->n, NMARK);
		for (int i = 0; i < rb->n; i++)
			assert_int_equal(rb->recs[i].cpu, 0);
	} else {
		check_events(f, rb, NULL, NULL);
	}
	free(rb);

	assert_int_equal(run(&out, "trace-cmd dump --summary -i %s", path), 0);
	assert_non_null(strstr(out, fc->summary));
	free(out);
	assert_int_equal(run(&out, "trace-cmd dump --options -i %s", path), 0);
	assert_non_null(strstr(out, "0x5151"));
	assert_non_null(strstr(out, "entries: 50"));
	assert_non_null(strstr(out, "tsync-fmt"));
	assert_non_null(strstr(out, "Option GUEST"));
	assert_non_null(strstr(out, "[Option TSC2NSEC, 16 bytes]"));
	assert_non_null(strstr(out, "1024 10 0"));
	if (fc->version == 7) {
		assert_non_null(strstr(out, "[Option CPUCOUNT, 4 bytes]"));
		assert_non_null(strstr(out, "[Option BUFFER,"));
	}
	free(out);
	assert_int_equal(run(&out, "trace-cmd report -i %s", path), 0);
	assert_non_null(strstr(out, "tdat-c0 49"));
	assert_null(strstr(out, "UNKNOWN"));
	free(out);
	return st.st_size;
}

/* realloc() that fails the test instead of returning NULL. */
static char *grow(char *p, size_t n)
{
	char *np = realloc(p, n);

	if (!np)
		free(p);
	assert_non_null(np);
	return np;
}

/* Returns @n rounded up to whole pages. */
static size_t td_pad(size_t n)
{
	return (n + PAGE - 1) / PAGE * PAGE;
}

/* Uncompresses @n bytes at @p with @c into a malloc'd buffer of @usize. */
static char *unzip(enum tracedat_compress c, const char *p, uint32_t n, uint32_t usize)
{
	char *out = malloc(usize ? usize : 1);

	assert_non_null(out);
	if (c == TRACEDAT_COMPRESS_ZSTD) {
		assert_int_equal(ZSTD_decompress(out, usize, p, n), usize);
	} else {
		uLongf len = usize;

		assert_int_equal(uncompress((Bytef *)out, &len, (const Bytef *)p, n), Z_OK);
		assert_int_equal(len, usize);
	}
	return out;
}

/*
 * Walks the sections of a compressed version 7 file, as trace-cmd's
 * reader does, and appends to @cat the uncompressed payload of sections
 * 16-21 and, for the flyrecord section, the CPU data of @ncpu CPUs found
 * through the BUFFER option (chunks uncompressed). Returns @cat's length.
 */
static size_t v7_payloads(const char *path, enum tracedat_compress c, int ncpu, char **cat)
{
	size_t len, hdr, clen = 0;
	char *f = slurp(path, &len), *out = NULL;
	uint64_t fly = 0, cpu_off[2] = { 0 }, cpu_size[2] = { 0 };

	assert_non_null(f);
	hdr = 10 + 2 + 1 + 1 + 4;
	hdr += strlen(f + hdr) + 1;
	hdr += strlen(f + hdr) + 1;
	for (size_t at = hdr + 8; at + 16 <= len;) {
		uint16_t id, flags;
		uint64_t size;

		memcpy(&id, f + at, 2);
		memcpy(&flags, f + at + 2, 2);
		memcpy(&size, f + at + 8, 8);
		assert_true(at + 16 + size <= len);
		if (id >= 16 && id <= 21) {
			uint32_t n, usize;

			assert_int_equal(flags, 1);
			memcpy(&n, f + at + 16, 4);
			memcpy(&usize, f + at + 20, 4);
			char *u = unzip(c, f + at + 24, n, usize);

			out = grow(out, clen + usize + 1);
			memcpy(out + clen, u, usize);
			clen += usize;
			free(u);
		} else if (id == 3) {
			fly = at;
		} else if (id == 0) {
			/* options: find BUFFER {u64, "", clock, page, n, n x {cpu, off, size}} */
			for (size_t o = at + 16; o < at + 16 + size;) {
				uint16_t oid;
				uint32_t osz, nc;
				const char *b = f + o + 6;

				memcpy(&oid, f + o, 2);
				memcpy(&osz, f + o + 2, 4);
				if (oid == 3) {
					b += 8;
					b += strlen(b) + 1;
					b += strlen(b) + 1;
					memcpy(&nc, b + 4, 4);
					b += 8;
					for (uint32_t k = 0; k < nc && k < 2; k++, b += 20) {
						uint32_t cpu;

						memcpy(&cpu, b, 4);
						memcpy(&cpu_off[cpu], b + 4, 8);
						memcpy(&cpu_size[cpu], b + 12, 8);
					}
				}
				o += 6 + osz;
				if (oid == 0)
					break;
			}
		}
		at += 16 + size;
	}
	assert_true(fly > 0);
	for (int k = 0; k < ncpu; k++) {
		uint32_t chunks, n, usize;
		size_t o = cpu_off[k];

		assert_true(o > fly && cpu_size[k] > 0);
		memcpy(&chunks, f + o, 4);
		o += 4;
		for (uint32_t i = 0; i < chunks; i++) {
			memcpy(&n, f + o, 4);
			memcpy(&usize, f + o + 4, 4);
			assert_int_equal(usize % PAGE, 0);
			char *u = unzip(c, f + o + 8, n, usize);

			out = grow(out, clen + usize + 1);
			memcpy(out + clen, u, usize);
			clen += usize;
			free(u);
			o += 8 + n;
		}
		assert_int_equal(o - cpu_off[k], cpu_size[k]);
	}
	free(f);
	*cat = out;
	return clen;
}

/*
 * zstd and zlib files hold the same metadata and CPU data once
 * uncompressed (Debian's trace-cmd is built without zlib, so the zlib
 * file is checked by uncompressing it here), and the CPU data is the pages
 * as recorded.
 */
static void check_zlib_equals_zstd(struct fx *f)
{
	char a[160], b[160], *za, *zb;
	size_t la, lb;

	snprintf(a, sizeof(a), "%s/fmt-7-zstd.dat", f->tmpdir);
	snprintf(b, sizeof(b), "%s/fmt-7-zlib.dat", f->tmpdir);
	la = v7_payloads(a, TRACEDAT_COMPRESS_ZSTD, f->ncpus, &za);
	lb = v7_payloads(b, TRACEDAT_COMPRESS_ZLIB, f->ncpus, &zb);
	assert_int_equal(la, lb);
	assert_memory_equal(za, zb, la);
	/* the last CPU's pages end the concatenation, padded to a page */
	assert_memory_equal(za + la - td_pad(f->pages_len[f->ncpus - 1]),
			    f->pages[f->ncpus - 1], f->pages_len[f->ncpus - 1]);
	free(za);
	free(zb);
}

/*
 * Every format trace-cmd writes (6; 7 uncompressed, zstd, zlib) reads back
 * event for event, from fd sources and with a partial last page, also
 * with a CPU that recorded nothing; compressed files are smaller.
 */
static void test_formats(void **state)
{
	struct fx *f = *state;
	off_t size[4];

	for (int i = 0; i < 4; i++) {
		bool readable = formats[i].compress != TRACEDAT_COMPRESS_ZLIB ||
				system("trace-cmd list -c 2>/dev/null | grep -q zlib") == 0;

		size[i] = check_format(f, &formats[i], false, readable);
		check_format(f, &formats[i], true, readable);
	}
	check_zlib_equals_zstd(f);
	assert_true(size[2] < size[1]);
	assert_true(size[3] < size[1]);
}

/* trace-cmd record's --file-version and --compression, as 3.1.6 reads them. */
static void test_format_args(void **state)
{
	struct tracedat_format f;

	(void)state;
	assert_int_equal(tracedat_format_from_args(0, NULL, &f), 0);
	assert_true(f.version == 7 && f.compress == TRACEDAT_COMPRESS_ZSTD);
	assert_int_equal(tracedat_format_from_args(6, NULL, &f), 0);
	assert_true(f.version == 6 && f.compress == TRACEDAT_COMPRESS_NONE);
	assert_int_equal(tracedat_format_from_args(7, "none", &f), 0);
	assert_true(f.version == 7 && f.compress == TRACEDAT_COMPRESS_NONE);
	assert_int_equal(tracedat_format_from_args(6, "zstd", &f), 0);
	assert_true(f.version == 7 && f.compress == TRACEDAT_COMPRESS_ZSTD);
	assert_int_equal(tracedat_format_from_args(0, "any", &f), 0);
	assert_true(f.version == 7 && f.compress == TRACEDAT_COMPRESS_ZSTD);
	assert_int_equal(tracedat_format_from_args(0, "zlib", &f), 0);
	assert_true(f.version == 7 && f.compress == TRACEDAT_COMPRESS_ZLIB);
	assert_int_equal(tracedat_format_from_args(0, "lz4", &f), -EINVAL);
	assert_int_equal(tracedat_format_from_args(5, NULL, &f), -EINVAL);
}

/* Full disk: a clear error and no file that looks complete. */
static void test_enospc(void **state)
{
	struct fx *f = *state;
	char *big = calloc(1, 64 * PAGE);
	struct tracedat_cpu_data c[2];
	int fd, st;
	pid_t pid;

	/* /dev/full: the error path of tracedat_write() */
	fd = open("/dev/full", O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(tracedat_write(fd, &f->meta, NULL, f->cpus, f->ncpus),
			 -ENOSPC);
	close(fd);

	/* a 64 KiB tmpfs in a private mount namespace: tracedat_write_file */
	memcpy(c, f->cpus, sizeof(c));
	memcpy(big, f->pages[0], f->pages_len[0]);
	c[0].buf = big;
	c[0].size = 64 * PAGE;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char dir[] = "/tmp/tsync-tdat-mnt-XXXXXX", path[128];
		int ret, n = 0;
		DIR *d;
		struct dirent *de;

		if (!mkdtemp(dir))
			_exit(10);
		if (unshare(CLONE_NEWNS) ||
		    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=64k")) {
			rmdir(dir);
			_exit(77);
		}
		snprintf(path, sizeof(path), "%s/trace.dat", dir);
		ret = tracedat_write_file(path, &f->meta, NULL, c, f->ncpus);
		d = opendir(dir);
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				n++;
		if (d)
			closedir(d);
		umount(dir);
		rmdir(dir);
		_exit(ret == -ENOSPC && n == 0 ? 0 : 11);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		fprintf(stderr, "note: no private mount namespace, tmpfs part skipped\n");
	else
		assert_int_equal(WEXITSTATUS(st), 0);
	free(big);
}

/* Bad input is refused with -EINVAL before anything is written. */
/*
 * The metadata that trace-cmd's agent sends, version 7 with zstd:
 * sections 16-21 compressed, one options section whose DONE points
 * nowhere (the host links what it appends there), then the strings
 * (compressed too, as trace-cmd writes them), and nothing else: no flyrecord, no BUFFER option. (The real test is
 * Debian's trace-cmd appending to it: tests/e2e/tcmd_agent.sh.)
 */
static void test_meta_v7(void **state)
{
	struct fx *f = *state;
	struct tracedat_opts o = { .has_traceid = 1, .traceid = 42,
				   .format = { 7, TRACEDAT_COMPRESS_ZSTD } };
	int fd = memfd_create("tdat-meta", 0), nsec = 0, seen_opts = 0;
	uint16_t ids[16];
	struct stat st;
	size_t at;
	char *b;

	assert_true(fd >= 0);
	assert_int_equal(tracedat_write_meta(fd, &f->meta, &o, f->ncpus), 0);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size);
	assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	assert_memory_equal(b + 3, "tracing7", 9);
	at = 10 + 2 + 1 + 1 + 4;
	assert_string_equal(b + at, "zstd");
	at += strlen(b + at) + 1;
	at += strlen(b + at) + 1 + 8;
	while (at + 16 <= (size_t)st.st_size && nsec < 16) {
		uint16_t id, flags;
		uint64_t size;

		memcpy(&id, b + at, 2);
		memcpy(&flags, b + at + 2, 2);
		memcpy(&size, b + at + 8, 8);
		ids[nsec++] = id;
		assert_int_equal(flags, id >= 15 && id <= 21 ? 1 : 0);	/* compressed */
		if (id == 0) {	/* options: the last one is DONE with next 0 */
			uint64_t next;
			uint16_t last;

			memcpy(&last, b + at + 16 + size - 14, 2);
			memcpy(&next, b + at + 16 + size - 8, 8);
			assert_int_equal(last, 0);
			assert_int_equal(next, 0);
			seen_opts++;
		}
		at += 16 + size;
	}
	assert_int_equal(at, (size_t)st.st_size);	/* no gap, nothing after */
	assert_int_equal(nsec, 8);
	for (int i = 0; i < 6; i++)
		assert_int_equal(ids[i], 16 + i);
	assert_int_equal(ids[6], 0);
	assert_int_equal(ids[7], 15);
	assert_int_equal(seen_opts, 1);
	free(b);
}

/* Writes @f->meta as a v7 file compressed with @c to @name; returns its
 * bytes (*@len). */
static char *write_v7(struct fx *f, enum tracedat_compress c, const char *name, size_t *len)
{
	struct tracedat_opts o = { .has_traceid = 1, .traceid = 7, .format = { 7, c } };
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", f->tmpdir, name);
	assert_int_equal(tracedat_write_file(path, &f->meta, &o, f->cpus, f->ncpus), 0);
	return slurp(path, len);
}

/* Fills @t (@n bytes) with kallsyms-like lines whose names start with @tag. */
static void fake_kallsyms(char *t, size_t n, char tag)
{
	size_t at = 0;

	for (unsigned i = 0; at < n; i++) {
		char line[64];
		int k = snprintf(line, sizeof(line), "ffffffff81%06x T %c_sym_%u\n", i, tag, i);

		memcpy(t + at, line, at + (size_t)k <= n ? (size_t)k : n - at);
		at += (size_t)k;
	}
}

/* With @z the file of compression @c (named @name) is the one written
 * without it: @z is not used. */
static void check_zpart_ignored(struct fx *f, const struct tracedat_zpart *z,
				enum tracedat_compress c, const char *name)
{
	char pre[64], *want, *got;
	size_t lw, lg;

	f->meta.kallsyms_z = NULL;
	want = write_v7(f, c, name, &lw);
	f->meta.kallsyms_z = z;
	snprintf(pre, sizeof(pre), "%s-pre", name);
	got = write_v7(f, c, pre, &lg);
	assert_int_equal(lg, lw);
	assert_memory_equal(got, want, lw);
	free(got);
	free(want);
}

/* A kallsyms section compressed ahead of the write: the file is byte for
 * byte the one compressed at the write; it is used only for the same
 * text and algorithm. */
static void test_precompressed_kallsyms(void **state)
{
	struct fx *f = *state;
	const size_t n = 300000;
	char *t = malloc(n), *want_a, *want_b, *got;
	size_t la, lb, lg;
	struct tracedat_zpart z;

	assert_non_null(t);
	fake_kallsyms(t, n, 'a');
	f->meta.kallsyms = (struct tracedat_text){ t, n };
	want_a = write_v7(f, TRACEDAT_COMPRESS_ZSTD, "ks-a", &la);
	assert_int_equal(tracedat_precompress_kallsyms(&f->meta, TRACEDAT_COMPRESS_ZSTD, &z), 0);
	assert_true(z.len < n / 2);
	f->meta.kallsyms_z = &z;
	got = write_v7(f, TRACEDAT_COMPRESS_ZSTD, "ks-a-pre", &lg);
	assert_int_equal(lg, la);
	assert_memory_equal(got, want_a, la);
	free(got);

	/* the same bytes at the same address are trusted: the text changed
	 * in place behind it, and the file still holds the text it was made
	 * of - so it was used, not compressed again */
	fake_kallsyms(t, n, 'b');
	f->meta.kallsyms_z = NULL;
	want_b = write_v7(f, TRACEDAT_COMPRESS_ZSTD, "ks-b", &lb);
	assert_int_not_equal(lb == la && !memcmp(want_a, want_b, la), 1);
	f->meta.kallsyms_z = &z;
	got = write_v7(f, TRACEDAT_COMPRESS_ZSTD, "ks-b-pre", &lg);
	assert_int_equal(lg, la);
	assert_memory_equal(got, want_a, la);
	free(got);

	/* another length, or another algorithm: compressed at the write */
	free(want_b);
	f->meta.kallsyms.len = n - 1;
	check_zpart_ignored(f, &z, TRACEDAT_COMPRESS_ZSTD, "ks-c");
	f->meta.kallsyms.len = n;
	check_zpart_ignored(f, &z, TRACEDAT_COMPRESS_ZLIB, "ks-z");

	f->meta.kallsyms_z = NULL;
	tracedat_zpart_free(&z);
	assert_int_equal(tracedat_precompress_kallsyms(&f->meta, TRACEDAT_COMPRESS_NONE, &z),
			 -EINVAL);
	assert_null(z.data);
	f->meta.kallsyms = (struct tracedat_text){ NULL, 0 };
	free(want_a);
	free(t);
}

static void test_invalid(void **state)
{
	struct fx *f = *state;
	struct tracedat_meta m = f->meta;
	struct tracedat_time_shift ts = { .ncpu = 0 };
	struct tracedat_opts o = { .time_shift = &ts };
	int fd = memfd_create("tdat", 0);

	assert_true(fd >= 0);
	m.header_page.len = 0;
	assert_int_equal(tracedat_write(fd, &m, NULL, f->cpus, 1), -EINVAL);
	m = f->meta;
	m.page_size = 3000;
	assert_int_equal(tracedat_write(fd, &m, NULL, f->cpus, 1), -EINVAL);
	m = f->meta;
	m.trace_clock = "local global";	/* no selected clock */
	assert_int_equal(tracedat_write(fd, &m, NULL, f->cpus, 1), -EINVAL);
	assert_int_equal(tracedat_write(fd, &f->meta, NULL, f->cpus, 0), -EINVAL);
	assert_int_equal(tracedat_write(fd, &f->meta, &o, f->cpus, 1), -EINVAL);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);	/* nothing written */
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(tracedat_write(fd, &f->meta, NULL, f->cpus, 1), -EINVAL);
	close(fd);
	assert_int_equal(tracedat_write_file("/nonexistent-dir/x.dat", &f->meta,
					     NULL, f->cpus, 1), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_staged),
		cmocka_unit_test(test_ts_offset),
		cmocka_unit_test(test_fd_sources),
		cmocka_unit_test(test_partial_page),
		cmocka_unit_test(test_time_shift_interpolate),
		cmocka_unit_test(test_time_shift_step),
		cmocka_unit_test(test_time_shift_scaling),
		cmocka_unit_test(test_time_shift_empty),
		cmocka_unit_test(test_host_guests),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_format_args),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test(test_meta_v7),
		cmocka_unit_test(test_precompressed_kallsyms),
		cmocka_unit_test(test_invalid),
	};

	if (access(TRACING "/instances", W_OK)) {
		fprintf(stderr, "tracefs instances not writable\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
