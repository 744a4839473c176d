/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One vCPU's TIME_SHIFT cuts between two readings of its debugfs files,
 * placed where the host's kvm:kvm_write_tsc_offset events say the offset
 * changed. Pure code: no I/O, no clocks, no globals (host/sync/kvm.c
 * feeds it the readings and the events; common/sync/kvm_tsc.h has the
 * map, the sign convention and why a cut is exact).
 *
 * The two sources. debugfs says what the vCPU runs with (guest = KVM's
 * map of host with its tsc-offset and ratio); the tracepoint says when a
 * write happened (its timestamp, in the x86-tsc clock, is the host TSC T
 * of the write) and its previous and next offset. Neither alone is
 * enough: a reading knows only that the offset changed since the last
 * one, and an event's offset may not be the one the vCPU runs with (on a
 * kernel whose KVM ignores the write, as this project's test machine's
 * kvm_pvm does). So an event is used only when debugfs confirms it: the
 * events of a window, applied in host-time order from the relation in
 * force (a change is an event whose next differs from the offset then),
 * must end at the relation the reading shows. Then each change at T from
 * old to new is cut there: the old stretch's last sample at old(T), the
 * new one's first at new(T) (both with host time T: guest_ts + offset =
 * T); after a backward change (new(T) <= old(T)) the old stretch ends at
 * new(T) - 1 instead, and the cycles both sides reach count as ambiguous.
 *
 * Grace. The two sources are not read at one instant: an event drained
 * with a reading may not be in that reading yet (written between the read
 * and the drain), and a reading may show a write whose event comes with
 * the next drain. So what does not agree waits one window: events debugfs
 * does not show are held to the next reading, and a reading that changed
 * with no event to place it gets a cut at the reading (the old relation's
 * last sample at old(reading), or the new guest time - 1 when backward),
 * provisional: if the next window's events explain it, their cuts replace
 * it. What still disagrees then is given up: held events count as
 * unconfirmed (not used), a provisional cut stays a cut at the reading.
 *
 * The caller's rule for the cuts (host/guest's list of a CPU's samples):
 * in order, each drops the CPU's samples at or after its guest time and
 * is appended; then the reading's own sample is appended. Cuts placed in
 * the past (held events, a late event) so replace what they overtake.
 * Events after the reading's host time wait for the next window, so a
 * cut never lies after the reading's sample.
 */
#ifndef TSYNC_KVM_WINDOW_H
#define TSYNC_KVM_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sync/kvm_tsc.h"

/* A vCPU's events kept between two readings (held and new); more are
 * dropped and the window's events then cannot be confirmed. */
#define KVM_WINDOW_MAX_EVENTS 16
/* The most cuts one reading gives (two per change). */
#define KVM_WINDOW_MAX_CUTS (2 * KVM_WINDOW_MAX_EVENTS)

/* What a vCPU's windows saw, for the summary. */
struct kvm_window_counts {
	uint32_t at_event;	/* changes cut at their event's host time */
	uint32_t at_reading;	/* changes no event placed: cut at the reading */
	uint32_t unconfirmed;	/* changing events debugfs never showed: not used */
	uint64_t ambiguous;	/* guest cycles reached from both sides of a
				   backward change */
};

/* One vCPU's state; zero it before its first reading. */
struct kvm_window {
	bool started;
	struct kvm_tsc base;	/* the relation the held events start from */
	struct kvm_tsc last;	/* the last reading */
	uint64_t host_last;
	struct kvm_tsc_change ev[KVM_WINDOW_MAX_EVENTS];	/* in host-time order */
	size_t nev;
	size_t nheld;		/* ev[0..nheld) were held from the last window */
	bool overflow;		/* events were dropped since the last agreement */
	bool holding;		/* the last window disagreed */
	bool provisional;	/* ... and cut at its reading */
	struct kvm_window_counts counts;
};

/* Queues event @e of the vCPU (any order; kept in host-time order). */
void kvm_window_add(struct kvm_window *w, const struct kvm_tsc_change *e);

/*
 * A reading: the vCPU runs with @now, read at host TSC @host_now, its
 * sample at guest time @guest_now (KVM's map of @host_now, or the
 * agent's stamp in trace-cmd's exchange). Writes the cuts to place
 * before that sample into @cut (room for KVM_WINDOW_MAX_CUTS) and their
 * number into *@ncut, by the rules above. The first reading gives none
 * and drops the events before it. Returns 0, or -ERANGE (a guest time
 * beyond int64: the reading is not taken, the state is unchanged).
 */
int kvm_window_reading(struct kvm_window *w, const struct kvm_tsc *now, uint64_t host_now,
		       int64_t guest_now, struct tsync_shift_sample *cut, size_t *ncut);

/* The counts so far, what is still held counted as given up. */
void kvm_window_counts(const struct kvm_window *w, struct kvm_window_counts *c);

#endif
