// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace.dat writer: the public API, input validation, the version 6
 * layout and atomic files; version 7 is tracedat_v7.c.
 *
 * Why tsync writes trace.dat itself: no library offers a writer.
 * libtracecmd's output functions (tracecmd_output_create() and the rest)
 * are exported but declared only in trace-cmd's private headers, which
 * Debian does not ship: not an API to build on. The layout is documented
 * (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)) and every file written here
 * is read back by libtracecmd and trace-cmd in the tests.
 *
 * Version 6 layout (trace-cmd.dat.v6(5)):
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
 */
#include "common/tracedat/tracedat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/base/trace_clock.h"
#include "common/tracedat/tracedat_priv.h"

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

/*
 * Encodes the version 6 metadata into @b: headers and, when there is an
 * option or @force, the options block ended by DONE.
 */
static void v6_meta(struct tdbuf *b, const struct tracedat_meta *m,
		    const struct tracedat_opts *o, int ncpus, bool force)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c',
				      'i', 'n', 'g', '6', '\0' };
	size_t at;

	tdbuf_put(b, magic, sizeof(magic));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	tdbuf_put(b, "\1", 1);
#else
	tdbuf_put(b, "\0", 1);
#endif
	/* Userspace long size; the reader replaces it by header_page's
	 * commit field size anyway. */
	tdbuf_put(b, "\10", 1);
	tdbuf_u32(b, m->page_size);
	td_part_header_info(b, m);
	td_part_ftrace(b, m);
	td_part_events(b, m);
	td_part_kallsyms(b, m);
	td_part_printk(b, m);
	td_part_cmdlines(b, m);
	tdbuf_u32(b, (uint32_t)ncpus);
	at = b->len;
	tdbuf_put(b, "options  ", 10);
	td_encode_options(b, m, o);
	if (b->len == at + 10 && !force)
		b->len = at;	/* no option: no options block */
	else
		tdbuf_u16(b, TD_OPT_DONE);
}

/* Emits the version 6 file: headers, options, flyrecord table, data. */
static int write_v6(struct wctx *w, const struct tracedat_meta *m,
		    const struct tracedat_opts *o, const struct tracedat_cpu_data *cpus,
		    int ncpus, const char *clock)
{
	struct tdbuf b = { 0 };
	uint64_t data_off;
	int i;

	v6_meta(&b, m, o, ncpus, false);
	if (b.err)
		return b.err;
	w_bytes(w, b.p, b.len);
	tdbuf_free(&b);
	w_bytes(w, "flyrecord", 10);
	data_off = w_off(w) + 16ull * (uint64_t)ncpus;
	if (m->trace_clock)
		data_off += 8 + strlen(clock) + 2;
	data_off = td_align(data_off, m->page_size);
	for (i = 0; i < ncpus; i++) {
		uint64_t sz = td_align(cpus[i].size, m->page_size);

		w_u64(w, data_off);
		w_u64(w, sz);
		data_off += sz;
	}
	if (m->trace_clock) {
		w_u64(w, strlen(clock) + 2);
		w_bytes(w, "[", 1);
		w_bytes(w, clock, strlen(clock));
		w_bytes(w, "]", 1);
	}
	w_zero(w, td_align(w_off(w), m->page_size) - w_off(w));
	for (i = 0; i < ncpus && !w_err(w); i++)
		w_cpu_raw(w, &cpus[i], m->page_size);
	if (!w_err(w) && w_off(w) != data_off)
		return -EIO;	/* internal accounting error */
	return w_err(w);
}

/* The checks both writers share: the output, the metadata, the options. */
static int check_args(int out_fd, const struct tracedat_meta *meta,
		      const struct tracedat_opts *opts, int ncpus)
{
	int ret;

	if (out_fd < 0 || !meta || ncpus < 1 || ncpus > TRACEDAT_MAX_CPUS)
		return -EINVAL;
	ret = check_meta(meta);
	return ret ? ret : td_check_opts(opts);
}

int tracedat_write(int out_fd, const struct tracedat_meta *meta,
		   const struct tracedat_opts *opts,
		   const struct tracedat_cpu_data *cpus, int ncpus)
{
	static const struct tracedat_opts no_opts;
	struct wctx *w;
	char clock[64];
	off_t pos;
	int ret, i;

	if (!opts)
		opts = &no_opts;
	ret = check_args(out_fd, meta, opts, ncpus);
	if (ret)
		return ret;
	if (!cpus)
		return -EINVAL;
	for (i = 0; i < ncpus; i++)
		if (cpus[i].size && cpus[i].fd < 0 && !cpus[i].buf)
			return -EINVAL;
	if (meta->trace_clock &&
	    tsync_trace_clock_selected(meta->trace_clock, clock, sizeof(clock)))
		return -EINVAL;
	pos = lseek(out_fd, 0, SEEK_CUR);
	if (pos > 0)
		return -EINVAL;	/* offsets in the file are absolute */

	ret = w_new(out_fd, &w);
	if (ret)
		return ret;
	if (opts->format.version == 7)
		ret = td_write_v7(w, meta, opts, cpus, ncpus);
	else
		ret = write_v6(w, meta, opts, cpus, ncpus, clock);
	i = w_finish(w);
	return ret ? ret : i;
}

int tracedat_write_meta(int out_fd, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts, int ncpus)
{
	static const struct tracedat_opts no_opts;
	struct tdbuf b = { 0 };
	struct wctx *w;
	int ret, fin;

	if (!opts)
		opts = &no_opts;
	ret = check_args(out_fd, meta, opts, ncpus);
	if (ret)
		return ret;
	if (lseek(out_fd, 0, SEEK_CUR) > 0)
		return -EINVAL;	/* the host reads it as a file from 0 */
	ret = w_new(out_fd, &w);
	if (ret)
		return ret;
	if (opts->format.version == 7) {
		ret = td_write_v7(w, meta, opts, NULL, ncpus);
	} else {
		v6_meta(&b, meta, opts, ncpus, true);
		ret = b.err;
		if (!ret)
			w_bytes(w, b.p, b.len);
		tdbuf_free(&b);
	}
	fin = w_finish(w);
	return ret ? ret : fin;
}

int tracedat_stage_file(const char *path, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts,
			const struct tracedat_cpu_data *cpus, int ncpus,
			struct tracedat_staged *st)
{
	char *tmp = NULL;
	int fd, ret;

	*st = (struct tracedat_staged){ 0 };
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
	if (!ret) {
		st->path = strdup(path);
		if (!st->path)
			ret = -ENOMEM;
	}
	if (ret) {
		log_err("tracedat: writing %s failed: %s", path, strerror(-ret));
		unlink(tmp);
		free(tmp);
		return ret;
	}
	st->tmp = tmp;
	return 0;
}

/* Frees @st's names. */
static void staged_free(struct tracedat_staged *st)
{
	free(st->path);
	free(st->tmp);
	*st = (struct tracedat_staged){ 0 };
}

int tracedat_commit_file(struct tracedat_staged *st, const char *suffix)
{
	char *to = NULL;
	int ret = 0;

	if (!st->tmp)
		return 0;
	if (asprintf(&to, "%s%s", st->path, suffix ? suffix : "") < 0) {
		ret = -ENOMEM;
	} else if (rename(st->tmp, to)) {
		ret = -errno;
		log_err("tracedat: cannot rename %s to %s: %s", st->tmp, to, strerror(-ret));
	}
	if (ret)
		unlink(st->tmp);
	free(to);
	staged_free(st);
	return ret;
}

void tracedat_discard_file(struct tracedat_staged *st)
{
	if (st->tmp)
		unlink(st->tmp);
	staged_free(st);
}

int tracedat_write_file(const char *path, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts,
			const struct tracedat_cpu_data *cpus, int ncpus)
{
	struct tracedat_staged st;
	int ret = tracedat_stage_file(path, meta, opts, cpus, ncpus, &st);

	return ret ? ret : tracedat_commit_file(&st, NULL);
}
