/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals of the trace.dat writer shared by its files: tracedat.c (API,
 * validation, version 6 layout, atomic files), tracedat_v7.c (version 7
 * sections), tracedat_opt.c (option payloads, byte buffers),
 * tracedat_out.c (the output stream and CPU data copies) and
 * tracedat_zip.c (compression). Not for use outside common/tracedat*.c.
 */
#ifndef TSYNC_TRACEDAT_PRIV_H
#define TSYNC_TRACEDAT_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tracedat/tracedat.h"

/* trace-cmd's option and section ids (trace-cmd.dat.v7(5)). */
enum {
	TD_OPT_DONE = 0,
	TD_OPT_CPUSTAT = 2,
	TD_OPT_BUFFER = 3,
	TD_OPT_TRACECLOCK = 4,
	TD_OPT_UNAME = 5,
	TD_OPT_OFFSET = 7,
	TD_OPT_CPUCOUNT = 8,
	TD_OPT_VERSION = 9,
	TD_OPT_TRACEID = 11,
	TD_OPT_TIME_SHIFT = 12,
	TD_OPT_GUEST = 13,
	TD_OPT_TSC2NSEC = 14,
	TD_SEC_STRINGS = 15,
	TD_SEC_HEADER_INFO = 16,
	TD_SEC_FTRACE_EVENTS = 17,
	TD_SEC_EVENT_FORMATS = 18,
	TD_SEC_KALLSYMS = 19,
	TD_SEC_PRINTK = 20,
	TD_SEC_CMDLINES = 21,
};

#define TRACEDAT_MAX_CPUS	8192
/* Pages per compressed chunk of trace data, as trace-cmd writes them. */
#define TD_PAGES_IN_CHUNK	10

/* A growable byte buffer; the first error is sticky (err, -ENOMEM). */
struct tdbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

void tdbuf_put(struct tdbuf *b, const void *p, size_t n);
void tdbuf_u16(struct tdbuf *b, uint16_t v);
void tdbuf_u32(struct tdbuf *b, uint32_t v);
void tdbuf_u64(struct tdbuf *b, uint64_t v);
void tdbuf_str(struct tdbuf *b, const char *s);
void tdbuf_free(struct tdbuf *b);

/* The metadata payloads, identical in versions 6 and 7 (the v7 sections
 * 16-21 hold exactly these bytes). */
void td_part_header_info(struct tdbuf *b, const struct tracedat_meta *m);
void td_part_ftrace(struct tdbuf *b, const struct tracedat_meta *m);
void td_part_events(struct tdbuf *b, const struct tracedat_meta *m);
void td_part_kallsyms(struct tdbuf *b, const struct tracedat_meta *m);
void td_part_printk(struct tdbuf *b, const struct tracedat_meta *m);
void td_part_cmdlines(struct tdbuf *b, const struct tracedat_meta *m);

/*
 * Appends the options of @o and @m as {u16 id, u32 size, data} records in
 * trace-cmd's order, without DONE: TRACECLOCK, UNAME, VERSION, TRACEID,
 * CPUSTAT..., GUEST..., TIME_SHIFT, TSC2NSEC. @clock is the selected
 * clock name (for the log only). Logs the TIME_SHIFT fill-ins.
 */
void td_encode_options(struct tdbuf *b, const struct tracedat_meta *m,
		       const struct tracedat_opts *o);
/* Validates @o (sizes fit, pointers set). Returns 0 or -EINVAL. */
int td_check_opts(const struct tracedat_opts *o);

/* The output stream: a file written from offset 0, with staged writes. */
struct wctx;
struct tdzip;

int w_new(int fd, struct wctx **out);
/* Flushes and frees; returns the first error or 0. */
int w_finish(struct wctx *w);
uint64_t w_off(const struct wctx *w);
int w_err(const struct wctx *w);
void w_bytes(struct wctx *w, const void *p, size_t len);
void w_zero(struct wctx *w, uint64_t len);
void w_u8(struct wctx *w, uint8_t v);
void w_u16(struct wctx *w, uint16_t v);
void w_u32(struct wctx *w, uint32_t v);
void w_u64(struct wctx *w, uint64_t v);
/* Overwrites 8 bytes already emitted at @off (flushes first). */
void w_patch_u64(struct wctx *w, uint64_t off, uint64_t v);
/* Emits one CPU's pages padded with zeros to a page multiple. */
int w_cpu_raw(struct wctx *w, const struct tracedat_cpu_data *c, uint32_t page);
/* Emits one CPU's pages as compressed chunks (u32 count, then per chunk
 * u32 compressed size, u32 size, data); *size gets the bytes emitted. */
int w_cpu_zip(struct wctx *w, struct tdzip *z, const struct tracedat_cpu_data *c,
	      uint32_t page, uint64_t *size);

/* Returns @v rounded up to a multiple of @a (a power of two). */
static inline uint64_t td_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Compression (libzstd, zlib). */

int tdzip_new(enum tracedat_compress kind, struct tdzip **out);
void tdzip_free(struct tdzip *z);
const char *tdzip_version(enum tracedat_compress c);
size_t tdzip_bound(const struct tdzip *z, size_t len);
/* Compresses into @out (@cap >= tdzip_bound()). Returns the size or -errno. */
ssize_t tdzip_compress(struct tdzip *z, const void *in, size_t len, void *out, size_t cap);
/* The algorithm of @z (NULL: none). */
enum tracedat_compress tdzip_kind(const struct tdzip *z);
/* Appends {u32 compressed size, u32 size, compressed @in} to @out. */
int tdzip_block(struct tdzip *z, const struct tdbuf *in, struct tdbuf *out);

/* Writes the whole version 7 file to @w; with @cpus NULL only its
 * metadata (tracedat_write_meta()). */
int td_write_v7(struct wctx *w, const struct tracedat_meta *m,
		const struct tracedat_opts *o, const struct tracedat_cpu_data *cpus,
		int ncpus);

#endif
