// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace.dat version 6 writer (see tracedat.h for why version 6).
 *
 * Layout written (trace-cmd.dat.v6(5)):
 *   "\x17\x08\x44" "tracing" "6\0", u8 endian, u8 long size, u32 page size
 *   "header_page\0" u64 len text, "header_event\0" u64 len text
 *   u32 n, n x (u64 len, ftrace format)
 *   u32 nsys, nsys x (name\0, u32 n, n x (u64 len, format))
 *   u32 len kallsyms, u32 len printk_formats, u64 len saved_cmdlines
 *   u32 cpus
 *   ["options  \0" {u16 id, u32 size, data}... u16 0]
 *   "flyrecord\0", cpus x (u64 offset, u64 size)
 *   [u64 len "[clock]"  -- only read when a TRACECLOCK option exists]
 *   zero padding to the page size, then each CPU's pages, page aligned.
 * The header is streamed through a small staging buffer; big pieces
 * (kallsyms, CPU data) go straight to the fd.
 */
#include "common/tracedat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/trace_clock.h"

enum {
	OPT_DONE = 0,
	OPT_CPUSTAT = 2,
	OPT_TRACECLOCK = 4,
	OPT_UNAME = 5,
	OPT_VERSION = 9,
	OPT_TRACEID = 11,
	OPT_TIME_SHIFT = 12,
	OPT_GUEST = 13,
};

#define TRACEDAT_MAX_CPUS	8192
#define STAGE_SIZE		(64 * 1024)
#define COPY_CHUNK		(256 * 1024)

struct wctx {
	int fd;
	uint64_t off;		/* bytes emitted so far (file offset) */
	size_t used;		/* bytes staged in buf */
	int err;		/* first error, sticky */
	char buf[STAGE_SIZE];
};

/* Writes all of @len bytes to @fd. Returns 0 or -errno. */
static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the staged bytes out. Returns 0 or -errno (also kept sticky). */
static int w_flush(struct wctx *w)
{
	int ret;

	if (w->err)
		return w->err;
	ret = write_all(w->fd, w->buf, w->used);
	w->used = 0;
	if (ret)
		w->err = ret;
	return ret;
}

/* Emits @len bytes; errors are sticky and reported by w_flush(). */
static void w_bytes(struct wctx *w, const void *p, size_t len)
{
	if (w->err || !len)
		return;
	w->off += len;
	if (len > STAGE_SIZE - w->used) {
		if (w_flush(w))
			return;
		if (len >= STAGE_SIZE / 2) {
			int ret = write_all(w->fd, p, len);

			if (ret)
				w->err = ret;
			return;
		}
	}
	memcpy(w->buf + w->used, p, len);
	w->used += len;
}

/* Emits @len zero bytes. */
static void w_zero(struct wctx *w, uint64_t len)
{
	static const char zeros[4096];

	while (len) {
		size_t n = len > sizeof(zeros) ? sizeof(zeros) : (size_t)len;

		w_bytes(w, zeros, n);
		len -= n;
	}
}

/* Emits integers in host byte order. */
static void w_u8(struct wctx *w, uint8_t v) { w_bytes(w, &v, 1); }
static void w_u16(struct wctx *w, uint16_t v) { w_bytes(w, &v, 2); }
static void w_u32(struct wctx *w, uint32_t v) { w_bytes(w, &v, 4); }
static void w_u64(struct wctx *w, uint64_t v) { w_bytes(w, &v, 8); }

/* Emits a NUL-terminated string including its NUL. */
static void w_str(struct wctx *w, const char *s)
{
	w_bytes(w, s, strlen(s) + 1);
}

/* Emits one option header {u16 id, u32 size}. */
static void w_opt_hdr(struct wctx *w, uint16_t id, uint64_t size)
{
	w_u16(w, id);
	w_u32(w, (uint32_t)size);
}

/* Emits a string option (text plus NUL). */
static void w_opt_str(struct wctx *w, uint16_t id, const char *s)
{
	w_opt_hdr(w, id, strlen(s) + 1);
	w_str(w, s);
}

/* Returns the CPU whose samples stand in for an empty CPU, or -1. */
static int ts_first_nonempty(const struct tracedat_time_shift *ts)
{
	for (uint32_t i = 0; i < ts->ncpu; i++)
		if (ts->cpus[i].count)
			return (int)i;
	return -1;
}

/* Returns the samples written for CPU @i (never empty when donor >= 0). */
static const struct tracedat_ts_cpu *ts_cpu(const struct tracedat_time_shift *ts,
					    uint32_t i, int donor)
{
	if (ts->cpus[i].count)
		return &ts->cpus[i];
	return &ts->cpus[donor];
}

/* Emits the TIME_SHIFT option (each CPU with its own count). */
static void w_time_shift(struct wctx *w, const struct tracedat_time_shift *ts,
			 int donor)
{
	uint64_t size = 16;
	uint32_t i, j;

	for (i = 0; i < ts->ncpu; i++)
		size += 4 + 32ull * ts_cpu(ts, i, donor)->count;
	w_opt_hdr(w, OPT_TIME_SHIFT, size);
	w_u64(w, ts->peer_traceid);
	w_u32(w, ts->flags);
	w_u32(w, ts->ncpu);
	for (i = 0; i < ts->ncpu; i++) {
		const struct tracedat_ts_cpu *c = ts_cpu(ts, i, donor);

		w_u32(w, c->count);
		for (j = 0; j < c->count; j++)
			w_u64(w, (uint64_t)c->samples[j].ts);
		for (j = 0; j < c->count; j++)
			w_u64(w, (uint64_t)c->samples[j].offset);
		for (j = 0; j < c->count; j++)
			w_u64(w, 1);	/* scaling */
	}
	for (i = 0; i < ts->ncpu; i++) {
		const struct tracedat_ts_cpu *c = ts_cpu(ts, i, donor);

		for (j = 0; j < c->count; j++)
			w_u64(w, 0);	/* fraction bits */
	}
}

/* Emits one GUEST option. */
static void w_guest(struct wctx *w, const struct tracedat_guest *g)
{
	w_opt_hdr(w, OPT_GUEST, strlen(g->name) + 1 + 8 + 4 + 8ull * g->nvcpu);
	w_str(w, g->name);
	w_u64(w, g->traceid);
	w_u32(w, g->nvcpu);
	for (uint32_t i = 0; i < g->nvcpu; i++) {
		w_u32(w, i);
		w_u32(w, (uint32_t)(g->pids ? g->pids[i] : -1));
	}
}

/* Validates the TIME_SHIFT input (the option size must fit a u32 with
 * empty CPUs filled in). Returns 0 or -EINVAL. */
static int check_time_shift(const struct tracedat_time_shift *ts)
{
	uint64_t total = 16, fill = 0;
	int donor;

	if (ts->ncpu == 0 || ts->ncpu > TRACEDAT_MAX_CPUS || !ts->cpus)
		return -EINVAL;
	for (uint32_t i = 0; i < ts->ncpu; i++)
		if (ts->cpus[i].count && !ts->cpus[i].samples)
			return -EINVAL;
	donor = ts_first_nonempty(ts);
	if (donor >= 0)
		fill = ts->cpus[donor].count;
	for (uint32_t i = 0; i < ts->ncpu; i++) {
		uint64_t n = ts->cpus[i].count ? ts->cpus[i].count : fill;

		total += 4 + 32 * n;
	}
	return total > UINT32_MAX ? -EINVAL : 0;
}

/* Validates the options. Returns 0 or -EINVAL. */
static int check_opts(const struct tracedat_opts *o)
{
	if (o->nguests < 0 || (o->nguests && !o->guests))
		return -EINVAL;
	for (int i = 0; i < o->nguests; i++) {
		if (!o->guests[i].name || o->guests[i].nvcpu > TRACEDAT_MAX_CPUS)
			return -EINVAL;
	}
	if (o->ncpustat < 0 || (o->ncpustat && !o->cpustat))
		return -EINVAL;
	if (o->time_shift)
		return check_time_shift(o->time_shift);
	return 0;
}

/* Validates the metadata. Returns 0 or -EINVAL. */
static int check_meta(const struct tracedat_meta *m)
{
	if (!m->header_page.len || !m->header_page.data ||
	    !m->header_event.len || !m->header_event.data)
		return -EINVAL;
	if (m->page_size < 1024 || (m->page_size & (m->page_size - 1)))
		return -EINVAL;
	if (m->nftrace < 0 || (m->nftrace && !m->ftrace_formats) ||
	    m->nsystems < 0 || (m->nsystems && !m->systems))
		return -EINVAL;
	for (int i = 0; i < m->nsystems; i++) {
		const struct tracedat_system *s = &m->systems[i];

		if (!s->name || s->nformats < 0 || (s->nformats && !s->formats))
			return -EINVAL;
	}
	if (m->kallsyms.len > UINT32_MAX || m->printk_formats.len > UINT32_MAX)
		return -EINVAL;
	return 0;
}

/* Emits u64 length + text for each of @n formats. */
static void w_formats(struct wctx *w, const struct tracedat_text *f, int n)
{
	for (int i = 0; i < n; i++) {
		w_u64(w, f[i].len);
		w_bytes(w, f[i].data, f[i].len);
	}
}

/* Emits the metadata headers (items 1-9 of the layout). */
static void w_headers(struct wctx *w, const struct tracedat_meta *m,
		      uint32_t ncpus)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c',
				      'i', 'n', 'g', '6', '\0' };

	w_bytes(w, magic, sizeof(magic));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w_u8(w, 1);
#else
	w_u8(w, 0);
#endif
	/* Userspace long size; the reader replaces it by header_page's
	 * commit field size anyway. */
	w_u8(w, 8);
	w_u32(w, m->page_size);
	w_bytes(w, "header_page", 12);
	w_u64(w, m->header_page.len);
	w_bytes(w, m->header_page.data, m->header_page.len);
	w_bytes(w, "header_event", 13);
	w_u64(w, m->header_event.len);
	w_bytes(w, m->header_event.data, m->header_event.len);
	w_u32(w, (uint32_t)m->nftrace);
	w_formats(w, m->ftrace_formats, m->nftrace);
	w_u32(w, (uint32_t)m->nsystems);
	for (int i = 0; i < m->nsystems; i++) {
		w_str(w, m->systems[i].name);
		w_u32(w, (uint32_t)m->systems[i].nformats);
		w_formats(w, m->systems[i].formats, m->systems[i].nformats);
	}
	w_u32(w, (uint32_t)m->kallsyms.len);
	w_bytes(w, m->kallsyms.data, m->kallsyms.len);
	w_u32(w, (uint32_t)m->printk_formats.len);
	w_bytes(w, m->printk_formats.data, m->printk_formats.len);
	w_u64(w, m->cmdlines.len);
	w_bytes(w, m->cmdlines.data, m->cmdlines.len);
	w_u32(w, ncpus);
}

/* Emits the options block, if there is any option. */
static void w_options(struct wctx *w, const struct tracedat_meta *m,
		      const struct tracedat_opts *o)
{
	const struct tracedat_time_shift *ts = o->time_shift;
	int donor = ts ? ts_first_nonempty(ts) : -1;
	int any;

	if (ts && donor < 0) {
		log_warn("tracedat: no time-sync sample for any CPU; "
			 "TIME_SHIFT left out, timestamps stay uncorrected");
		ts = NULL;
	} else if (ts) {
		for (uint32_t i = 0; i < ts->ncpu; i++)
			if (!ts->cpus[i].count)
				log_warn("tracedat: no time-sync sample for CPU %u; "
					 "using CPU %d's samples", i, donor);
	}
	any = m->trace_clock || m->uname || o->has_traceid || o->nguests ||
	      ts || o->ncpustat || o->version;
	if (!any)
		return;
	w_bytes(w, "options  ", 10);
	if (m->trace_clock)
		w_opt_str(w, OPT_TRACECLOCK, m->trace_clock);
	if (m->uname)
		w_opt_str(w, OPT_UNAME, m->uname);
	if (o->version)
		w_opt_str(w, OPT_VERSION, o->version);
	if (o->has_traceid) {
		w_opt_hdr(w, OPT_TRACEID, 8);
		w_u64(w, o->traceid);
	}
	for (int i = 0; i < o->nguests; i++)
		w_guest(w, &o->guests[i]);
	if (ts)
		w_time_shift(w, ts, donor);
	for (int i = 0; i < o->ncpustat; i++)
		if (o->cpustat[i])
			w_opt_str(w, OPT_CPUSTAT, o->cpustat[i]);
	w_u16(w, OPT_DONE);
}

/* Returns @v rounded up to a multiple of @a (a power of two). */
static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Copies @len bytes from @in at @off to the writer's fd with read/write. */
static int copy_rw(struct wctx *w, int in, off_t off, uint64_t len)
{
	char *buf = malloc(COPY_CHUNK);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (len) {
		size_t want = len > COPY_CHUNK ? COPY_CHUNK : (size_t)len;
		ssize_t n = pread(in, buf, want, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = -EIO;	/* source shorter than announced */
			break;
		}
		ret = write_all(w->fd, buf, (size_t)n);
		if (ret)
			break;
		off += n;
		len -= (uint64_t)n;
	}
	free(buf);
	return ret;
}

/*
 * Copies @len bytes from @in at @off, with copy_file_range when the file
 * systems allow it, else read/write. Returns 0 or -errno.
 */
static int copy_fd(struct wctx *w, int in, off_t off, uint64_t len)
{
	while (len) {
		size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t n = copy_file_range(in, &off, w->fd, NULL, want, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EXDEV || errno == EINVAL ||
			      errno == ENOSYS || errno == EOPNOTSUPP ||
			      errno == EBADF || errno == ESPIPE))
			return copy_rw(w, in, off, len);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* source shorter than announced */
		len -= (uint64_t)n;
	}
	return 0;
}

/* Emits the pages of one CPU plus zero padding to @padded bytes. */
static int w_cpu(struct wctx *w, const struct tracedat_cpu_data *c,
		 uint64_t padded)
{
	int ret;

	if (!c->size)
		return 0;
	if (c->fd < 0) {
		w_bytes(w, c->buf, c->size);
	} else {
		ret = w_flush(w);
		if (ret)
			return ret;
		ret = copy_fd(w, c->fd, c->offset, c->size);
		if (ret) {
			w->err = ret;
			return ret;
		}
		w->off += c->size;
	}
	w_zero(w, padded - c->size);
	return w->err;
}

int tracedat_write(int out_fd, const struct tracedat_meta *meta,
		   const struct tracedat_opts *opts,
		   const struct tracedat_cpu_data *cpus, int ncpus)
{
	static const struct tracedat_opts no_opts;
	struct wctx *w;
	char clock[64];
	uint64_t data_off;
	off_t pos;
	int ret, i;

	if (!opts)
		opts = &no_opts;
	if (out_fd < 0 || !meta || ncpus < 1 || ncpus > TRACEDAT_MAX_CPUS ||
	    !cpus)
		return -EINVAL;
	ret = check_meta(meta);
	if (!ret)
		ret = check_opts(opts);
	if (ret)
		return ret;
	for (i = 0; i < ncpus; i++)
		if (cpus[i].size && cpus[i].fd < 0 && !cpus[i].buf)
			return -EINVAL;
	if (meta->trace_clock &&
	    tsync_trace_clock_selected(meta->trace_clock, clock, sizeof(clock)))
		return -EINVAL;
	pos = lseek(out_fd, 0, SEEK_CUR);
	if (pos > 0)
		return -EINVAL;	/* offsets in the file are absolute */

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = out_fd;
	w_headers(w, meta, (uint32_t)ncpus);
	w_options(w, meta, opts);
	w_bytes(w, "flyrecord", 10);
	data_off = w->off + 16ull * (uint64_t)ncpus;
	if (meta->trace_clock)
		data_off += 8 + strlen(clock) + 2;
	data_off = align_up(data_off, meta->page_size);
	for (i = 0; i < ncpus; i++) {
		uint64_t sz = align_up(cpus[i].size, meta->page_size);

		w_u64(w, data_off);
		w_u64(w, sz);
		data_off += sz;
	}
	if (meta->trace_clock) {
		w_u64(w, strlen(clock) + 2);
		w_bytes(w, "[", 1);
		w_bytes(w, clock, strlen(clock));
		w_bytes(w, "]", 1);
	}
	w_zero(w, align_up(w->off, meta->page_size) - w->off);
	for (i = 0; i < ncpus && !w->err; i++)
		w_cpu(w, &cpus[i], align_up(cpus[i].size, meta->page_size));
	ret = w_flush(w);
	if (!ret && w->off != data_off)
		ret = -EIO;	/* internal accounting error */
	free(w);
	return ret;
}

int tracedat_write_file(const char *path, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts,
			const struct tracedat_cpu_data *cpus, int ncpus)
{
	char *tmp = NULL;
	int fd, ret;

	if (!path || !*path)
		return -EINVAL;
	if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		log_err("tracedat: cannot create a file beside %s: %s", path,
			strerror(-ret));
		free(tmp);
		return ret;
	}
	ret = tracedat_write(fd, meta, opts, cpus, ncpus);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		log_err("tracedat: writing %s failed: %s", path, strerror(-ret));
		unlink(tmp);
	}
	free(tmp);
	return ret;
}
