/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM's TSC arithmetic for the kvm sync method: a vCPU's TSC from the
 * host's, its inverse, trace-cmd's answer, and the TIME_SHIFT samples of a
 * recording whose TSC offset changes. Pure code: no I/O, no clocks, no
 * globals (host/kvm/kvm_debugfs.h reads the numbers; Documentation/
 * design.md, Exact sync on KVM, says why the method is built this way).
 *
 * KVM's map. While a vCPU runs, its TSC reads
 *
 *     guest = ((host * ratio) >> frac) + offset          (mod 2^64)
 *
 * with the product taken in 128 bits (kvm_scale_tsc), where offset is the
 * vCPU's debugfs tsc-offset (printed signed) and ratio and frac are
 * tsc-scaling-ratio and tsc-scaling-ratio-frac-bits. The two scaling files
 * exist only where the CPU can scale the TSC, and then both. A ratio of
 * 1 << frac is KVM's default and means no scaling (2^48 with Intel's 48
 * fraction bits, 2^32 with AMD's 32); struct kvm_tsc then holds ratio 1,
 * frac 0, so that every formula below has one form.
 *
 * trace-cmd's answer (its kvm method, trace-timesync-kvm.c, unchanged from
 * 3.1.6 to 3.4) for each sample: offset = -tsc-offset; scaling = the ratio,
 * or 1 when the files are absent or the ratio equals either default (2^32
 * or 2^48, whatever frac says); frac = the fraction bits when scaling is
 * not 1, else 0; the sample's time is the guest's own marker timestamp.
 * kvm_tsc_tcmd() computes exactly that, for the trace-cmd dialect.
 *
 * trace-cmd's reader (libtracecmd's trace-input.c: timestamp_host_sync()
 * and timestamp_correction_calc()) corrects a guest timestamp ts of CPU c
 * from that CPU's TIME_SHIFT samples, sorted by time with equal times
 * dropped, in the guest's clock units:
 *
 *   one sample    host = ts + offset       (scaling and fraction unused)
 *   two or more   lo, hi = the samples around ts: lo the last one at or
 *                 before ts and hi the next; before the first sample the
 *                 first two, from the last sample on the last two; then
 *                   corr = lo.offset, or with the INTERPOLATE flag
 *                   corr = lo.offset + ((ts - lo.time) * (hi.offset -
 *                          lo.offset) + (hi.time - lo.time) / 2)
 *                          / (hi.time - lo.time)             (int64)
 *                   host = ((ts * lo.scaling) >> lo.fraction) + corr
 *                          (ts * scaling in uint64, wrapping)
 *
 * and TSC2NSEC's mult and shift then turn host cycles into nanoseconds.
 * So trace-cmd's answer is exact without scaling (scaling 1, offset
 * -tsc-offset: host = guest - offset), and wrong with it twice over: the
 * reader maps guest to host and needs the inverse of KVM's map (1/ratio,
 * and the offset divided by the ratio too), and ts * ratio overflows 64
 * bits for any TSC past 2^16 cycles with 48 fraction bits (2^32 with 32).
 *
 * tsync's exact form (kvm_tsc_sample(), kvm_tsc_cut()) therefore writes
 * scaling 1 and fraction 0 (what common/tracedat writes) with the
 * INTERPOLATE flag, and puts the scaling into the offsets: each sample's
 * offset is host - guest of the exact inverse at that guest time. Host as
 * a function of guest is affine, so the reader's linear interpolation
 * between two such samples is the map itself, up to rounding: within 2
 * cycles (the samples are rounded to the nearest cycle, and the reader
 * truncates a negative correction toward zero, so a vCPU faster than its
 * host reads up to a cycle late); samples of a scaled vCPU lie at most
 * kvm_tsc_max_span() apart
 * so that the reader's int64 product cannot overflow. Without scaling the
 * offset is constant, -tsc-offset, exactly trace-cmd's.
 *
 * Offset changes (the guest writes its TSC, the VM is migrated, suspended
 * and resumed): the host's kvm:kvm_write_tsc_offset tracepoint gives the
 * vCPU, the previous and the next offset, stamped with the host's TSC
 * when the host traces with x86-tsc. A vCPU runs no guest code between the
 * write and its next entry, so every guest event before the write's host
 * time T has guest time <= old(T) and every event after it >= new(T).
 * kvm_tsc_cut() cuts a vCPU's recording there: the old segment's samples
 * end at old(T), the new one's start at new(T), and the reader corrects
 * each side with its own offset. Forward (new(T) > old(T)) no event falls
 * between, so the timeline is exact across the change. Backward, the
 * guest times [new(T), old(T)] are reached from both sides and the
 * reader, which knows only the guest time, cannot tell them apart: the
 * old side's events there are corrected as new ones (off by the jump);
 * kvm_tsc_cut() counts those cycles.
 *
 * Units: guest and host times are TSC cycles of the guest and the host
 * (the x86-tsc trace clock); struct tsync_shift_sample's fields are named
 * for nanoseconds but hold the recorded clock's units, cycles here.
 */
#ifndef TSYNC_KVM_TSC_H
#define TSYNC_KVM_TSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sync/estimate.h"	/* struct tsync_shift_sample */

/* KVM's default ratios (no scaling), as trace-cmd compares them. */
#define KVM_TSC_RATIO_AMD_DEFAULT   (1ULL << 32)
#define KVM_TSC_RATIO_INTEL_DEFAULT (1ULL << 48)
/* The most fraction bits accepted (KVM uses 48 or 32). */
#define KVM_TSC_FRAC_MAX 62

/* The only trace clock whose timestamps KVM's offsets describe. */
#define KVM_TSC_CLOCK "x86-tsc"

/* One vCPU's TSC: guest = ((host * ratio) >> frac) + offset. */
struct kvm_tsc {
	int64_t offset;		/* tsc-offset */
	uint64_t ratio;		/* 1 when not scaled */
	uint32_t frac;		/* 0 when not scaled */
};

/* trace-cmd's answer for one sample (see above). */
struct kvm_tsc_tcmd {
	int64_t offset;		/* -tsc-offset */
	int64_t scaling;	/* the ratio, or 1 */
	int64_t frac;		/* the fraction bits, or 0 */
};

/* One kvm:kvm_write_tsc_offset event of a vCPU. */
struct kvm_tsc_change {
	uint64_t host_ts;	/* host TSC when the offset was written */
	int64_t prev;		/* previous_tsc_offset */
	int64_t next;		/* next_tsc_offset */
};

/* What kvm_tsc_cut() saw. */
struct kvm_tsc_cut_info {
	uint32_t changes;	/* changes that moved the offset (each a cut) */
	uint32_t same;		/* changes to the offset already in force */
	uint32_t mismatched;	/* changes whose prev was not the offset in force
				   (a change was missed, or the start was wrong) */
	uint64_t ambiguous;	/* guest cycles backward changes overtook: at
				   most this many cycles of guest time before
				   them are corrected as after them (see above) */
};

/* Returns true if @clock (a trace clock name) is KVM_TSC_CLOCK. */
bool kvm_tsc_clock_ok(const char *clock);

/*
 * Fills @k from a vCPU's debugfs values: @offset (tsc-offset), and when
 * @scaling (both scaling files present) @ratio and @frac. A ratio of
 * 1 << frac means no scaling. Returns 0, or -EINVAL (ratio 0, frac above
 * KVM_TSC_FRAC_MAX); @k is left untouched on error.
 */
int kvm_tsc_init(struct kvm_tsc *k, int64_t offset, bool scaling, uint64_t ratio,
		 uint64_t frac);

/* Returns true if @k scales the TSC (ratio other than 1). */
bool kvm_tsc_scaled(const struct kvm_tsc *k);

/* The vCPU's TSC at host TSC @host: KVM's map, wrapping as the TSC does. */
uint64_t kvm_tsc_guest(const struct kvm_tsc *k, uint64_t host);

/*
 * The host TSC at which the vCPU's TSC reads @guest (the exact inverse,
 * rounded to the nearest cycle) into *@host. Returns 0, or -ERANGE if
 * it does not fit int64.
 */
int kvm_tsc_host(const struct kvm_tsc *k, int64_t guest, int64_t *host);

/*
 * trace-cmd's answer for a vCPU's debugfs values (as kvm_tsc_init()
 * takes them, ratio and frac ignored unless @scaling), into *@out.
 * Returns 0, or -ERANGE for an offset of INT64_MIN (no negation).
 */
int kvm_tsc_tcmd(int64_t offset, bool scaling, uint64_t ratio, uint64_t frac,
		 struct kvm_tsc_tcmd *out);

/*
 * The TIME_SHIFT sample of @k at host TSC @host in tsync's exact form:
 * guest_ts = the vCPU's TSC then, offset = host - guest (scaling 1,
 * fraction 0). This is the kvm method's per-CPU sample; its error bound
 * is 0 cycles unscaled and 2 scaled (through the reader, see above).
 * Returns 0, or -ERANGE (a value beyond int64).
 */
int kvm_tsc_sample(const struct kvm_tsc *k, uint64_t host, struct tsync_shift_sample *s);

/*
 * The longest guest-time span between two samples of @k for which the
 * reader's interpolation product stays far from int64 overflow
 * (INT64_MAX when not scaled).
 */
int64_t kvm_tsc_max_span(const struct kvm_tsc *k);

/*
 * The longest wait (ns) between two readings of @k that keeps its samples
 * within kvm_tsc_max_span() of guest time: half the span in host time (the
 * other half is room for the reading's own delay and a late wake-up),
 * converted as the host's TSC2NSEC does, ns = (cycles * @mult) >> @shift;
 * @mult 0 (conversion unknown): as for an 8 GHz TSC, faster than any.
 * INT64_MAX when not scaled; at least 1.
 */
int64_t kvm_tsc_max_interval_ns(const struct kvm_tsc *k, uint32_t mult, uint32_t shift);

/*
 * The TIME_SHIFT samples of one vCPU recorded from host TSC @host_from to
 * @host_to (inclusive), whose TSC was @k at @host_from and then changed
 * as the @nch events @ch say (in host-time order; events at or before
 * @host_from are taken to be in @k already, events after @host_to are not
 * used). Each stretch between changes gets samples at its first and last
 * guest time (and every kvm_tsc_max_span() between, when scaled); the
 * last stretch gets two at least, so that the reader's rule for
 * timestamps past the last sample uses it. Guest times strictly increase.
 * A change keeps @k's ratio: the tracepoint carries no ratio (a new ratio
 * is a new cut with a new @k).
 *
 * Returns 0 with *@out (malloc'd, the caller frees it) and *@n, and fills
 * *@info if not NULL; or -EINVAL (host_to < host_from, changes out of
 * order), -ERANGE (a guest time beyond int64), -ENOMEM.
 */
int kvm_tsc_cut(const struct kvm_tsc *k, uint64_t host_from, uint64_t host_to,
		const struct kvm_tsc_change *ch, size_t nch,
		struct tsync_shift_sample **out, size_t *n, struct kvm_tsc_cut_info *info);

#endif
