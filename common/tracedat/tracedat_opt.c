// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pure parts of the trace.dat writer: a growable byte buffer, the metadata
 * payloads (the same bytes in versions 6 and 7) and the option records
 * trace-cmd writes, in its order (trace-cmd.dat.v7(5) gives each layout).
 */
#include "common/tracedat/tracedat_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"

void tdbuf_put(struct tdbuf *b, const void *p, size_t n)
{
	if (b->err || !n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *np;

		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->err = -ENOMEM;
				return;
			}
			cap *= 2;
		}
		np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* Integers in host byte order: the file's endian byte says which. */
void tdbuf_u16(struct tdbuf *b, uint16_t v) { tdbuf_put(b, &v, 2); }
void tdbuf_u32(struct tdbuf *b, uint32_t v) { tdbuf_put(b, &v, 4); }
void tdbuf_u64(struct tdbuf *b, uint64_t v) { tdbuf_put(b, &v, 8); }

/* Appends a string with its NUL. */
void tdbuf_str(struct tdbuf *b, const char *s)
{
	tdbuf_put(b, s, strlen(s) + 1);
}

void tdbuf_free(struct tdbuf *b)
{
	free(b->p);
	*b = (struct tdbuf){ 0 };
}

/* Appends u64 length + text for each of @n formats. */
static void put_formats(struct tdbuf *b, const struct tracedat_text *f, int n)
{
	for (int i = 0; i < n; i++) {
		tdbuf_u64(b, f[i].len);
		tdbuf_put(b, f[i].data, f[i].len);
	}
}

void td_part_header_info(struct tdbuf *b, const struct tracedat_meta *m)
{
	tdbuf_put(b, "header_page", 12);
	tdbuf_u64(b, m->header_page.len);
	tdbuf_put(b, m->header_page.data, m->header_page.len);
	tdbuf_put(b, "header_event", 13);
	tdbuf_u64(b, m->header_event.len);
	tdbuf_put(b, m->header_event.data, m->header_event.len);
}

void td_part_ftrace(struct tdbuf *b, const struct tracedat_meta *m)
{
	tdbuf_u32(b, (uint32_t)m->nftrace);
	put_formats(b, m->ftrace_formats, m->nftrace);
}

void td_part_events(struct tdbuf *b, const struct tracedat_meta *m)
{
	tdbuf_u32(b, (uint32_t)m->nsystems);
	for (int i = 0; i < m->nsystems; i++) {
		tdbuf_str(b, m->systems[i].name);
		tdbuf_u32(b, (uint32_t)m->systems[i].nformats);
		put_formats(b, m->systems[i].formats, m->systems[i].nformats);
	}
}

void td_part_kallsyms(struct tdbuf *b, const struct tracedat_meta *m)
{
	tdbuf_u32(b, (uint32_t)m->kallsyms.len);
	tdbuf_put(b, m->kallsyms.data, m->kallsyms.len);
}

void td_part_printk(struct tdbuf *b, const struct tracedat_meta *m)
{
	tdbuf_u32(b, (uint32_t)m->printk_formats.len);
	tdbuf_put(b, m->printk_formats.data, m->printk_formats.len);
}

void td_part_cmdlines(struct tdbuf *b, const struct tracedat_meta *m)
{
	tdbuf_u64(b, m->cmdlines.len);
	tdbuf_put(b, m->cmdlines.data, m->cmdlines.len);
}

/* Appends one option header {u16 id, u32 size}. */
static void opt_hdr(struct tdbuf *b, uint16_t id, uint64_t size)
{
	tdbuf_u16(b, id);
	tdbuf_u32(b, (uint32_t)size);
}

/* Appends a string option (text plus NUL). */
static void opt_str(struct tdbuf *b, uint16_t id, const char *s)
{
	opt_hdr(b, id, strlen(s) + 1);
	tdbuf_str(b, s);
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

/* Appends the TIME_SHIFT option (each CPU with its own count). */
static void opt_time_shift(struct tdbuf *b, const struct tracedat_time_shift *ts, int donor)
{
	uint64_t size = 16;
	uint32_t i, j;

	for (i = 0; i < ts->ncpu; i++)
		size += 4 + 32ull * ts_cpu(ts, i, donor)->count;
	opt_hdr(b, TD_OPT_TIME_SHIFT, size);
	tdbuf_u64(b, ts->peer_traceid);
	tdbuf_u32(b, ts->flags);
	tdbuf_u32(b, ts->ncpu);
	for (i = 0; i < ts->ncpu; i++) {
		const struct tracedat_ts_cpu *c = ts_cpu(ts, i, donor);

		tdbuf_u32(b, c->count);
		for (j = 0; j < c->count; j++)
			tdbuf_u64(b, (uint64_t)c->samples[j].ts);
		for (j = 0; j < c->count; j++)
			tdbuf_u64(b, (uint64_t)c->samples[j].offset);
		for (j = 0; j < c->count; j++)
			tdbuf_u64(b, c->samples[j].scaling ? c->samples[j].scaling : 1);
	}
	for (i = 0; i < ts->ncpu; i++) {
		const struct tracedat_ts_cpu *c = ts_cpu(ts, i, donor);

		for (j = 0; j < c->count; j++)
			tdbuf_u64(b, c->samples[j].frac);	/* fraction bits */
	}
}

/* Appends one GUEST option. */
static void opt_guest(struct tdbuf *b, const struct tracedat_guest *g)
{
	opt_hdr(b, TD_OPT_GUEST, strlen(g->name) + 1 + 8 + 4 + 8ull * g->nvcpu);
	tdbuf_str(b, g->name);
	tdbuf_u64(b, g->traceid);
	tdbuf_u32(b, g->nvcpu);
	for (uint32_t i = 0; i < g->nvcpu; i++) {
		tdbuf_u32(b, i);
		tdbuf_u32(b, (uint32_t)(g->pids ? g->pids[i] : -1));
	}
}

/* Returns the TIME_SHIFT to write (NULL: none) and its donor CPU. */
static const struct tracedat_time_shift *time_shift(const struct tracedat_opts *o, int *donor)
{
	const struct tracedat_time_shift *ts = o->time_shift;

	*donor = ts ? ts_first_nonempty(ts) : -1;
	if (ts && *donor < 0) {
		log_warn("tracedat: no time-sync sample for any CPU; "
			 "TIME_SHIFT left out, timestamps stay uncorrected");
		return NULL;
	}
	for (uint32_t i = 0; ts && i < ts->ncpu; i++)
		if (!ts->cpus[i].count)
			log_warn("tracedat: no time-sync sample for CPU %u; "
				 "using CPU %d's samples", i, *donor);
	return ts;
}

void td_encode_options(struct tdbuf *b, const struct tracedat_meta *m,
		       const struct tracedat_opts *o)
{
	int donor;
	const struct tracedat_time_shift *ts = time_shift(o, &donor);

	/* first, as trace-cmd record writes it */
	if (o->ts_offset)
		opt_str(b, TD_OPT_OFFSET, o->ts_offset);
	if (m->trace_clock)
		opt_str(b, TD_OPT_TRACECLOCK, m->trace_clock);
	if (m->uname)
		opt_str(b, TD_OPT_UNAME, m->uname);
	if (o->version)
		opt_str(b, TD_OPT_VERSION, o->version);
	if (o->has_traceid) {
		opt_hdr(b, TD_OPT_TRACEID, 8);
		tdbuf_u64(b, o->traceid);
	}
	for (int i = 0; i < o->ncpustat; i++)
		if (o->cpustat[i])
			opt_str(b, TD_OPT_CPUSTAT, o->cpustat[i]);
	for (int i = 0; i < o->nguests; i++)
		opt_guest(b, &o->guests[i]);
	if (ts)
		opt_time_shift(b, ts, donor);
	if (o->tsc2nsec) {
		opt_hdr(b, TD_OPT_TSC2NSEC, 16);
		tdbuf_u32(b, o->tsc2nsec->mult);
		tdbuf_u32(b, o->tsc2nsec->shift);
		tdbuf_u64(b, o->tsc2nsec->offset);
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

int td_check_opts(const struct tracedat_opts *o)
{
	if (o->nguests < 0 || (o->nguests && !o->guests))
		return -EINVAL;
	for (int i = 0; i < o->nguests; i++) {
		if (!o->guests[i].name || o->guests[i].nvcpu > TRACEDAT_MAX_CPUS)
			return -EINVAL;
	}
	if (o->ncpustat < 0 || (o->ncpustat && !o->cpustat))
		return -EINVAL;
	if (o->format.version != 0 && o->format.version != 6 && o->format.version != 7)
		return -EINVAL;
	if (o->format.compress != TRACEDAT_COMPRESS_NONE && o->format.version != 7)
		return -EINVAL;	/* version 6 has no compression */
	if (o->format.compress != TRACEDAT_COMPRESS_NONE && o->format.compress != TRACEDAT_COMPRESS_ZSTD &&
	    o->format.compress != TRACEDAT_COMPRESS_ZLIB)
		return -EINVAL;
	if (o->time_shift)
		return check_time_shift(o->time_shift);
	return 0;
}
