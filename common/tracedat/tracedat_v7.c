// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace.dat version 7 layout, in the order trace-cmd 3.x writes it
 * (trace-cmd.dat.v7(5); Documentation/design.md, "The trace.dat choices"):
 *
 *   "\x17\x08\x44" "tracing" "7\0", u8 endian, u8 long size, u32 page size,
 *   compression "name\0version\0" ("none\0\0"), u64 offset of options #1
 *   sections 16-21: header info, ftrace formats, event formats, kallsyms,
 *     printk formats, cmdlines (the version 6 payloads, each compressed)
 *   options #1: 16-20 (section offsets), TRACECLOCK, UNAME, VERSION,
 *     TRACEID, CPUSTAT..., GUEST..., TIME_SHIFT, TSC2NSEC, 21, CPUCOUNT,
 *     DONE (u64 offset of options #2)
 *   section 3 "buffer flyrecord ": padding, then each CPU's data at a page
 *     aligned offset (raw pages, or compressed chunks of 10 pages)
 *   options #2: BUFFER (where each CPU's data is), DONE 0
 *   section 15: the strings (section descriptions)
 *
 * The metadata part that trace-cmd's agent sends its host stops after
 * options #1 (DONE 0) and is followed by the strings: the host appends its
 * options, the flyrecord and its own strings behind them.
 *
 * A section is {u16 id, u16 flags (1: compressed), u32 description string
 * id, u64 size of what follows}; a compressed section's payload is
 * {u32 compressed size, u32 size, data}. The reader walks the section
 * headers one after another, so nothing lies between two sections. The
 * metadata is compressed in memory before it is written (kallsyms is a few
 * MiB); only the flyrecord size, the chunk counts and options #1's next
 * pointer are patched in place.
 */
#include "common/tracedat/tracedat_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/trace_clock.h"

#define SEC_FL_COMPRESS 1

/* The section description strings, as trace-cmd names them. */
static const char *const descs[] = {
	"headers", "ftrace events", "events format", "kallsyms", "printk",
	"command lines", "options", "buffer flyrecord ", "options", "strings",
};
enum { D_HEADERS, D_FTRACE, D_EVENTS, D_KALLSYMS, D_PRINTK, D_CMDLINES,
       D_OPTIONS1, D_FLYRECORD, D_OPTIONS2, D_STRINGS, D_N };

struct v7 {
	struct wctx *w;
	struct tdzip *z;		/* NULL: uncompressed */
	uint32_t desc_id[D_N];
	uint64_t sec_off[6];		/* sections 16..21 */
	uint64_t opts1_next;		/* where options #1's DONE offset is */
	uint64_t fly_off;		/* flyrecord section header */
	uint64_t *cpu_off, *cpu_size;
	char clock[64];
};

/* Emits a section header; returns the offset of its size field. */
static uint64_t sec_hdr(struct v7 *v, uint16_t id, int desc, int compress, uint64_t size)
{
	uint64_t at;

	w_u16(v->w, id);
	w_u16(v->w, compress && v->z ? SEC_FL_COMPRESS : 0);
	w_u32(v->w, v->desc_id[desc]);
	at = w_off(v->w);
	w_u64(v->w, size);
	return at;
}

/* Emits a whole section with @payload, compressed when the file is. */
static int sec_emit(struct v7 *v, uint16_t id, int desc, const struct tdbuf *payload)
{
	struct tdbuf z = { 0 };
	const struct tdbuf *out = payload;
	int ret;

	if (payload->err)
		return payload->err;
	if (v->z) {
		ret = tdzip_block(v->z, payload, &z);
		if (ret) {
			tdbuf_free(&z);
			return ret;
		}
		out = &z;
	}
	sec_hdr(v, id, desc, 1, out->len);
	w_bytes(v->w, out->p, out->len);
	tdbuf_free(&z);
	return w_err(v->w);
}

/* Emits sections 16-21 and remembers where each starts. */
static int meta_sections(struct v7 *v, const struct tracedat_meta *m)
{
	static void (*const part[6])(struct tdbuf *, const struct tracedat_meta *) = {
		td_part_header_info, td_part_ftrace, td_part_events,
		td_part_kallsyms, td_part_printk, td_part_cmdlines,
	};

	const struct tracedat_zpart *kz = m->kallsyms_z;
	int ret = 0;

	for (int i = 0; i < 6 && !ret; i++) {
		struct tdbuf b = { 0 };

		v->sec_off[i] = w_off(v->w);
		if (D_HEADERS + i == D_KALLSYMS && v->z && kz && kz->data &&
		    kz->kind == tdzip_kind(v->z) && kz->raw == m->kallsyms.data &&
		    kz->raw_len == m->kallsyms.len) {
			/* compressed while the recording ran */
			sec_hdr(v, TD_SEC_KALLSYMS, D_KALLSYMS, 1, kz->len);
			w_bytes(v->w, kz->data, kz->len);
			ret = w_err(v->w);
			continue;
		}
		part[i](&b, m);
		ret = sec_emit(v, (uint16_t)(TD_SEC_HEADER_INFO + i), D_HEADERS + i, &b);
		tdbuf_free(&b);
	}
	return ret;
}

/* Appends an option holding the u64 offset of section @id. */
static void opt_sec(struct tdbuf *b, struct v7 *v, int id)
{
	tdbuf_u16(b, (uint16_t)id);
	tdbuf_u32(b, 8);
	tdbuf_u64(b, v->sec_off[id - TD_SEC_HEADER_INFO]);
}

/* Emits options #1 (its DONE's next offset patched later). */
static int options1(struct v7 *v, const struct tracedat_meta *m,
		    const struct tracedat_opts *o, int ncpus)
{
	struct tdbuf b = { 0 };
	uint64_t start;

	for (int id = TD_SEC_HEADER_INFO; id <= TD_SEC_PRINTK; id++)
		opt_sec(&b, v, id);
	td_encode_options(&b, m, o);
	opt_sec(&b, v, TD_SEC_CMDLINES);
	tdbuf_u16(&b, TD_OPT_CPUCOUNT);
	tdbuf_u32(&b, 4);
	tdbuf_u32(&b, (uint32_t)ncpus);
	tdbuf_u16(&b, TD_OPT_DONE);
	tdbuf_u32(&b, 8);
	if (b.err)
		return b.err;
	sec_hdr(v, TD_OPT_DONE, D_OPTIONS1, 0, b.len + 8);
	start = w_off(v->w);
	w_bytes(v->w, b.p, b.len);
	v->opts1_next = start + b.len;
	w_u64(v->w, 0);
	tdbuf_free(&b);
	return w_err(v->w);
}

/* Emits the flyrecord section: every CPU's data at a page boundary. */
static int flyrecord(struct v7 *v, const struct tracedat_cpu_data *cpus, int ncpus,
		     uint32_t page)
{
	uint64_t size_at;
	int ret = 0;

	v->fly_off = w_off(v->w);
	size_at = sec_hdr(v, TD_OPT_BUFFER, D_FLYRECORD, 1, 0);
	for (int i = 0; i < ncpus && !ret; i++) {
		if (!cpus[i].size)
			continue;	/* trace-cmd lists only CPUs with data */
		w_zero(v->w, td_align(w_off(v->w), page) - w_off(v->w));
		v->cpu_off[i] = w_off(v->w);
		if (v->z) {
			ret = w_cpu_zip(v->w, v->z, &cpus[i], page, &v->cpu_size[i]);
		} else {
			ret = w_cpu_raw(v->w, &cpus[i], page);
			v->cpu_size[i] = td_align(cpus[i].size, page);
		}
	}
	if (!ret)
		w_patch_u64(v->w, size_at, w_off(v->w) - size_at - 8);
	return ret ? ret : w_err(v->w);
}

/* Emits options #2 with the BUFFER option of the top instance. */
static int options2(struct v7 *v, const struct tracedat_cpu_data *cpus, int ncpus,
		    uint32_t page)
{
	struct tdbuf b = { 0 };
	uint32_t n = 0;

	for (int i = 0; i < ncpus; i++)
		n += cpus[i].size ? 1 : 0;
	tdbuf_u16(&b, TD_OPT_BUFFER);
	tdbuf_u32(&b, (uint32_t)(8 + 1 + strlen(v->clock) + 1 + 8 + 20ull * n));
	tdbuf_u64(&b, v->fly_off);
	tdbuf_str(&b, "");		/* the top instance */
	tdbuf_str(&b, v->clock);
	tdbuf_u32(&b, page);
	tdbuf_u32(&b, n);
	for (int i = 0; i < ncpus; i++) {
		if (!cpus[i].size)
			continue;
		tdbuf_u32(&b, (uint32_t)i);
		tdbuf_u64(&b, v->cpu_off[i]);
		tdbuf_u64(&b, v->cpu_size[i]);
	}
	tdbuf_u16(&b, TD_OPT_DONE);
	tdbuf_u32(&b, 8);
	tdbuf_u64(&b, 0);
	if (b.err)
		return b.err;
	w_patch_u64(v->w, v->opts1_next, w_off(v->w));
	sec_hdr(v, TD_OPT_DONE, D_OPTIONS2, 0, b.len);
	w_bytes(v->w, b.p, b.len);
	tdbuf_free(&b);
	return w_err(v->w);
}

/* Emits the file header (its first options offset known in advance). */
static void file_header(struct v7 *v, const struct tracedat_meta *m,
			enum tracedat_compress c)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c',
				      'i', 'n', 'g', '7', '\0' };
	const char *name = tracedat_compress_name(c), *ver = tdzip_version(c);

	w_bytes(v->w, magic, sizeof(magic));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w_u8(v->w, 1);
#else
	w_u8(v->w, 0);
#endif
	w_u8(v->w, 8);	/* userspace long size, as version 6 */
	w_u32(v->w, m->page_size);
	w_bytes(v->w, name, strlen(name) + 1);
	w_bytes(v->w, ver, strlen(ver) + 1);
}

/* Builds the strings table and each description's id in it. */
static void strings(struct v7 *v, struct tdbuf *b)
{
	for (int i = 0; i < D_N; i++) {
		v->desc_id[i] = (uint32_t)b->len;
		tdbuf_str(b, descs[i]);
	}
}

int td_write_v7(struct wctx *w, const struct tracedat_meta *m,
		const struct tracedat_opts *o, const struct tracedat_cpu_data *cpus,
		int ncpus)
{
	struct v7 v = { .w = w };
	struct tdbuf str = { 0 };
	uint64_t opts1_at;
	int ret = 0;

	v.cpu_off = calloc((size_t)ncpus, sizeof(uint64_t));
	v.cpu_size = calloc((size_t)ncpus, sizeof(uint64_t));
	if (!v.cpu_off || !v.cpu_size)
		ret = -ENOMEM;
	if (!ret && o->format.compress != TRACEDAT_COMPRESS_NONE)
		ret = tdzip_new(o->format.compress, &v.z);
	snprintf(v.clock, sizeof(v.clock), "local");
	if (m->trace_clock)
		tsync_trace_clock_selected(m->trace_clock, v.clock, sizeof(v.clock));
	if (o->tsc2nsec)
		snprintf(v.clock, sizeof(v.clock), "tsc2nsec");	/* as trace-cmd names it */
	strings(&v, &str);
	if (!ret) {
		file_header(&v, m, o->format.compress);
		opts1_at = w_off(w);
		w_u64(w, 0);	/* patched once options #1's place is known */
		ret = meta_sections(&v, m);
	}
	if (!ret) {
		w_patch_u64(w, opts1_at, w_off(w));
		ret = options1(&v, m, o, ncpus);
	}
	/* metadata only (cpus NULL): the strings follow options #1, whose
	 * DONE stays 0 for the host to point at what it appends */
	if (!ret && cpus)
		ret = flyrecord(&v, cpus, ncpus, m->page_size);
	if (!ret && cpus)
		ret = options2(&v, cpus, ncpus, m->page_size);
	if (!ret)
		ret = sec_emit(&v, TD_SEC_STRINGS, D_STRINGS, &str);
	tdbuf_free(&str);
	tdzip_free(v.z);
	free(v.cpu_off);
	free(v.cpu_size);
	return ret ? ret : w_err(w);
}
