/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.dat writer: trace-cmd's file format, version 6 (linear,
 * uncompressed) or version 7 (sections, compressed with zstd or zlib, or
 * not), as trace-cmd 3.x writes them; its default is version 7 with zstd.
 * Files written here pass `trace-cmd report` and `trace-cmd dump`
 * (tests/unit/common/tracedat/test_tracedat.c reads every variant back with libtracecmd).
 * No library writes trace.dat: libtracecmd's writer is not public API
 * (Documentation/design.md, "The trace.dat choices").
 *
 * Pure code over buffers and file descriptors: no tracefs access, no
 * sockets. The caller collects the metadata into the writer's own types
 * (tracedat_meta.h; common/tracemeta/ fills them in from a tracefs
 * instance or from a peer's parts) and the raw ring-buffer pages (as read
 * from per_cpu/cpuN/trace_pipe_raw) and hands them over.
 *
 * All numbers are written in host byte order and the file's endian byte
 * says which one it is, exactly as trace-cmd does (its option payloads are
 * host order too).
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): common/tracedat/
 *   tracedat.c, tracedat.h, tracedat_priv.h  the writer's API, validation, version 6 layout
 *   tracedat_meta.h                          the metadata written (headers, formats, texts)
 *   tracedat_opt.c                           byte buffers, metadata sections, options
 *   tracedat_out.c                           the output stream (staged writes, atomic rename)
 *   tracedat_v7.c                            version 7 layout (sections, compressed chunks)
 *   tracedat_zip.c                           zstd and zlib compression, trace-cmd's settings
 */
#ifndef TSYNC_TRACEDAT_H
#define TSYNC_TRACEDAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* struct tracedat_meta: the metadata to write, filled in by the caller */
#include "common/tracedat/tracedat_meta.h"

/* TIME_SHIFT flag: interpolate linearly between samples. */
#define TRACEDAT_TSYNC_INTERPOLATE 0x1u

/*
 * One time-sync sample: from guest time @ts on, host = ((guest * @scaling)
 * >> @frac) + @offset, as trace-cmd corrects (offset = host - guest when
 * scaling is 1 and frac 0, as a probe round measures). @scaling 0 is
 * written as 1.
 */
struct tracedat_ts_sample {
	int64_t ts;
	int64_t offset;
	uint64_t scaling;
	uint32_t frac;
};

/* The samples of one guest CPU. */
struct tracedat_ts_cpu {
	uint32_t count;
	const struct tracedat_ts_sample *samples;
};

/*
 * TIME_SHIFT option (guest files). A CPU with count 0 would make trace-cmd
 * 3.1.6 index an empty array, so the writer never writes one: such a CPU
 * gets the samples of the lowest-numbered CPU that has samples (all vCPUs
 * share the guest clock on the hosts this targets) and a warning is
 * logged; if no CPU has any sample the option is left out entirely (the
 * guest file is then uncorrected) and a warning is logged.
 */
struct tracedat_time_shift {
	uint64_t peer_traceid;	/* the host file's TRACEID */
	uint32_t flags;		/* TRACEDAT_TSYNC_INTERPOLATE or 0 */
	uint32_t ncpu;
	const struct tracedat_ts_cpu *cpus;
};

/*
 * GUEST option (host files), one per guest: its name, trace id and vCPU
 * count; vCPU i maps to host thread pids[i], or -1 for every vCPU when
 * @pids is NULL (the pid is unknown over a network).
 */
struct tracedat_guest {
	const char *name;
	uint64_t traceid;
	uint32_t nvcpu;
	const int32_t *pids;
};

/* Compression of a version 7 file (the algorithms trace-cmd knows). */
enum tracedat_compress {
	TRACEDAT_COMPRESS_NONE = 0,
	TRACEDAT_COMPRESS_ZSTD,
	TRACEDAT_COMPRESS_ZLIB,
};

/* Parses trace-cmd's --compression names: none, any (= zstd, trace-cmd's
 * choice), zstd, zlib. Returns 0 or -EINVAL. */
int tracedat_compress_parse(const char *name, enum tracedat_compress *out);
/* Returns "none", "zstd" or "zlib". */
const char *tracedat_compress_name(enum tracedat_compress c);

/*
 * A version 7 metadata section's payload compressed ahead of the write
 * ({u32 compressed size, u32 size, data}, as the file holds it), so that a
 * recorder compresses the few MiB of kallsyms (tens of ms of zstd) while
 * its command runs rather than after it. tracedat_meta.kallsyms_z points
 * to it; the writer uses it when the file has the same compression and
 * the meta the same kallsyms text (same bytes at the same address).
 */
struct tracedat_zpart {
	enum tracedat_compress kind;
	const char *raw;		/* the text it was made of */
	size_t raw_len;
	uint8_t *data;
	size_t len;
};

/* Compresses @m's kallsyms section payload with @kind into @out (free with
 * tracedat_zpart_free()). Returns 0 or -errno (-EINVAL: @kind is none). */
int tracedat_precompress_kallsyms(const struct tracedat_meta *m, enum tracedat_compress kind,
				  struct tracedat_zpart *out);
void tracedat_zpart_free(struct tracedat_zpart *z);

/*
 * File layout: version 6 (also when 0) or 7. Version 7 also gets the
 * options trace-cmd writes there: CPUCOUNT and BUFFER (where each CPU's
 * data is; CPUs without data are left out of it, as trace-cmd does).
 */
struct tracedat_format {
	int version;
	enum tracedat_compress compress;	/* version 7 only */
};

/*
 * The format trace-cmd record writes for --file-version @file_version
 * (0: not given) and --compression @compression (NULL: not given):
 * version 7 with zstd by default; 6 uncompressed with --file-version 6;
 * any --compression means version 7 (as trace-cmd 3.1.6 does, even after
 * --file-version 6). Returns 0 or -EINVAL (unknown name or version).
 */
int tracedat_format_from_args(int file_version, const char *compression,
			      struct tracedat_format *out);
/* The compression of a file of format @f (none for version 6). */
enum tracedat_compress tracedat_format_zip(const struct tracedat_format *f);

/*
 * TSC2NSEC option: how trace-cmd converts x86-tsc timestamps to
 * nanoseconds, ns = (tsc * mult) >> shift (the perf_event mmap page's
 * time_mult and time_shift); @offset is stored, unused by readers.
 */
struct tracedat_tsc2nsec {
	uint32_t mult;
	uint32_t shift;
	uint64_t offset;
};

/* Options of one file; every field is optional (0/NULL = not written). */
struct tracedat_opts {
	int has_traceid;
	uint64_t traceid;			/* TRACEID */
	int nguests;
	const struct tracedat_guest *guests;	/* GUEST, host file */
	const struct tracedat_time_shift *time_shift; /* TIME_SHIFT, guest */
	/*
	 * CPUSTAT: one text per CPU as trace-cmd writes it ("CPU: N\n" then
	 * the per_cpu/cpuN/stats content); NULL entries are skipped.
	 */
	int ncpustat;
	const char *const *cpustat;
	const char *version;			/* VERSION, e.g. "tsync 0.1" */
	const struct tracedat_tsc2nsec *tsc2nsec; /* TSC2NSEC */
	/* OFFSET: the text of an integer (strtoll base 0) that readers add
	 * to every timestamp, in the clock's raw units (--ts-offset) */
	const char *ts_offset;
	struct tracedat_format format;		/* {0}: version 6 */
};

/*
 * The raw pages of one CPU: @size bytes either from @fd starting at
 * @offset (pread semantics, the file position is not used; fd may be a
 * regular file, copied with copy_file_range when possible) or, when fd < 0,
 * from @buf. A size that is not a multiple of the page size is padded
 * with zeros (an all-zero page tail is an empty sub-buffer). Size 0 = the
 * CPU recorded nothing.
 */
struct tracedat_cpu_data {
	int fd;
	off_t offset;
	uint64_t size;
	const void *buf;
};

/*
 * Writes a complete trace.dat to @out_fd from its current position, which
 * must be 0 (offsets in the file are absolute). @ncpus is the file's CPU
 * count. Returns 0 or -errno (-EINVAL for bad input, -ENOSPC/-EIO from the
 * file system, ...). On error the fd holds a partial file: use
 * tracedat_write_file() to never leave one behind.
 */
int tracedat_write(int out_fd, const struct tracedat_meta *meta,
		   const struct tracedat_opts *opts,
		   const struct tracedat_cpu_data *cpus, int ncpus);

/*
 * Writes only the metadata of a trace.dat to @out_fd from position 0: the
 * headers and the options block (always there, ended by its DONE, whose
 * next offset is 0 in version 7), no flyrecord; version 7 also gets its
 * strings section, as trace-cmd's agent writes it. That is what
 * trace-cmd's agent sends its host (version 7 with zstd unless told
 * otherwise), which then appends options (TIME_SHIFT) and the CPU data
 * itself. Returns 0 or -errno.
 */
int tracedat_write_meta(int out_fd, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts, int ncpus);

/*
 * Writes @path atomically: the file is written under a temporary name in
 * the same directory ("PATH.tmp-XXXXXX"), fsync'd, and renamed over @path
 * only when everything succeeded; on error the temporary file is removed
 * and @path is untouched. Mode 0644. Returns 0 or -errno.
 */
int tracedat_write_file(const char *path, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts,
			const struct tracedat_cpu_data *cpus, int ncpus);

/*
 * The same in two steps, for a set of files that replaces the earlier set
 * whole or not at all: tracedat_stage_file() writes and fsyncs the
 * temporary file and keeps its name in @st (on error it is removed, @st
 * left empty); then each staged file is either renamed to its path with
 * @suffix appended (NULL: the path itself) by tracedat_commit_file(), or
 * removed by tracedat_discard_file(). Both free @st, and do nothing for
 * an empty one.
 */
struct tracedat_staged {
	char *path;		/* the final name */
	char *tmp;		/* the temporary file, or NULL: none staged */
};

int tracedat_stage_file(const char *path, const struct tracedat_meta *meta,
			const struct tracedat_opts *opts,
			const struct tracedat_cpu_data *cpus, int ncpus,
			struct tracedat_staged *st);
int tracedat_commit_file(struct tracedat_staged *st, const char *suffix);
void tracedat_discard_file(struct tracedat_staged *st);

#endif
