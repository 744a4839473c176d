// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * common/sync/kvm_tsc: KVM's TSC arithmetic against values worked out by
 * hand and against trace-cmd's formulas.
 *
 * Every exactness claim is checked through trace-cmd's reader
 * (tests/unit/tcmd_reader.h): a guest event's timestamp is made by KVM's
 * map from the host time it happened at, with the offset in force then,
 * and the reader must give that host time back.
 *
 * Covered: the clock check; the default-ratio rule (kvm_tsc_init's and
 * trace-cmd's, which differ only for ratios no CPU uses); the offset's
 * sign in trace-cmd's answer and in tsync's sample; KVM's map and its
 * inverse with fraction bits, by hand and round trip; that trace-cmd's
 * scaled answer is wrong through its own reader and tsync's exact form is
 * right; the span limit; and changes cut into samples: forward (exact on
 * both sides), backward (the ambiguous window, by hand), several at one
 * host time, a change to the same offset, a mismatched prev, changes
 * outside the recording, bad order; random runs with scaling and many
 * changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "common/sync/kvm_tsc.h"
#include "tests/unit/synth_rng.h"
#include "tests/unit/tcmd_reader.h"


static void test_clock(void **state)
{
	(void)state;
	assert_true(kvm_tsc_clock_ok("x86-tsc"));
	assert_false(kvm_tsc_clock_ok("local"));
	assert_false(kvm_tsc_clock_ok("x86-tsc2"));
	assert_false(kvm_tsc_clock_ok(NULL));
}

static void test_default_ratio(void **state)
{
	struct kvm_tsc k;
	struct kvm_tsc_tcmd t;

	(void)state;
	/* no scaling files: ratio 1 */
	assert_int_equal(kvm_tsc_init(&k, -7, false, 12345, 9), 0);
	assert_int_equal(k.offset, -7);
	assert_int_equal(k.ratio, 1);
	assert_int_equal(k.frac, 0);
	assert_false(kvm_tsc_scaled(&k));
	/* Intel's and AMD's defaults mean 1, to both rules */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 1ULL << 48, 48), 0);
	assert_int_equal(k.ratio, 1);
	assert_int_equal(k.frac, 0);
	assert_int_equal(kvm_tsc_tcmd(0, true, 1ULL << 48, 48, &t), 0);
	assert_int_equal(t.scaling, 1);
	assert_int_equal(t.frac, 0);
	assert_int_equal(kvm_tsc_init(&k, 0, true, 1ULL << 32, 32), 0);
	assert_false(kvm_tsc_scaled(&k));
	assert_int_equal(kvm_tsc_tcmd(0, true, 1ULL << 32, 32, &t), 0);
	assert_int_equal(t.scaling, 1);
	assert_int_equal(t.frac, 0);
	/* 1.5 with 48 bits is scaled to both */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 3ULL << 47, 48), 0);
	assert_true(kvm_tsc_scaled(&k));
	assert_int_equal(k.ratio, 3ULL << 47);
	assert_int_equal(k.frac, 48);
	assert_int_equal(kvm_tsc_tcmd(0, true, 3ULL << 47, 48, &t), 0);
	assert_int_equal(t.scaling, (int64_t)(3ULL << 47));
	assert_int_equal(t.frac, 48);
	/* trace-cmd compares with both defaults whatever frac says: 2^32 with
	 * 48 bits is 2^-16 to KVM, 1 to trace-cmd (no CPU has this pair) */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 1ULL << 32, 48), 0);
	assert_true(kvm_tsc_scaled(&k));
	assert_int_equal(kvm_tsc_tcmd(0, true, 1ULL << 32, 48, &t), 0);
	assert_int_equal(t.scaling, 1);
	/* refused */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 0, 48), -EINVAL);
	assert_int_equal(kvm_tsc_init(&k, 0, true, 1, 63), -EINVAL);
}

static void test_offset_sign(void **state)
{
	struct tsync_shift_sample s;
	struct kvm_tsc_tcmd t;
	struct kvm_tsc k;
	struct tsample ts;

	(void)state;
	/* a guest started at host TSC 10^12 reads 0 then: offset -10^12 */
	assert_int_equal(kvm_tsc_init(&k, -1000000000000LL, false, 0, 0), 0);
	assert_int_equal(kvm_tsc_guest(&k, 1000000000000ULL), 0);
	assert_int_equal(kvm_tsc_guest(&k, 1000000012345ULL), 12345);
	/* trace-cmd answers -tsc-offset = host - guest */
	assert_int_equal(kvm_tsc_tcmd(k.offset, false, 0, 0, &t), 0);
	assert_int_equal(t.offset, 1000000000000LL);
	assert_int_equal(t.scaling, 1);
	assert_int_equal(t.frac, 0);
	/* tsync's sample at host 1000000012345: guest 12345, same offset */
	assert_int_equal(kvm_tsc_sample(&k, 1000000012345ULL, &s), 0);
	assert_int_equal(s.guest_ts, 12345);
	assert_int_equal(s.offset_ns, 1000000000000LL);
	/* the reader gives the host time back, with one sample or two */
	ts = (struct tsample){ s.guest_ts, t.offset, t.scaling, t.frac };
	assert_int_equal(tcmd_read(&ts, 1, 0, 12345), 1000000012345ULL);
	assert_int_equal(tcmd_read(&ts, 1, 0, 99), 1000000000099ULL);
	/* a positive offset (guest ahead) the other way */
	assert_int_equal(kvm_tsc_init(&k, 5000, false, 0, 0), 0);
	assert_int_equal(kvm_tsc_sample(&k, 100, &s), 0);
	assert_int_equal(s.guest_ts, 5100);
	assert_int_equal(s.offset_ns, -5000);
	assert_int_equal(kvm_tsc_tcmd(INT64_MIN, false, 0, 0, &t), -ERANGE);
}

static void test_scaled_map(void **state)
{
	struct kvm_tsc k;
	int64_t h;

	(void)state;
	/* ratio 1.5 in 48 fraction bits, offset 100: guest = 1.5 host + 100 */
	assert_int_equal(kvm_tsc_init(&k, 100, true, 3ULL << 47, 48), 0);
	assert_int_equal(kvm_tsc_guest(&k, 1000), 1600);
	assert_int_equal(kvm_tsc_guest(&k, 1001), 1601);	/* 1501.5 floored */
	assert_int_equal(kvm_tsc_host(&k, 1600, &h), 0);
	assert_int_equal(h, 1000);
	assert_int_equal(kvm_tsc_host(&k, 1601, &h), 0);	/* 1000.67 */
	assert_int_equal(h, 1001);
	assert_int_equal(kvm_tsc_host(&k, 100, &h), 0);
	assert_int_equal(h, 0);
	assert_int_equal(kvm_tsc_host(&k, 97, &h), 0);	/* -2 */
	assert_int_equal(h, -2);
	/* 0.75 with AMD's 32 bits, offset -4000: guest = 0.75 host - 4000 */
	assert_int_equal(kvm_tsc_init(&k, -4000, true, 3ULL << 30, 32), 0);
	assert_int_equal(kvm_tsc_guest(&k, 8000), 2000);
	assert_int_equal(kvm_tsc_guest(&k, 8001), 2000);	/* 6000.75 floored */
	assert_int_equal(kvm_tsc_host(&k, 2000, &h), 0);
	assert_int_equal(h, 8000);
	/* a TSC far past 2^64 / ratio: the product is taken in 128 bits */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 3ULL << 47, 48), 0);
	assert_int_equal(kvm_tsc_guest(&k, 1ULL << 50), 3ULL << 49);
	assert_int_equal(kvm_tsc_host(&k, (int64_t)(3ULL << 49), &h), 0);
	assert_int_equal(h, 1LL << 50);
	/* an inverse beyond int64 */
	assert_int_equal(kvm_tsc_init(&k, INT64_MIN + 1, true, 1, 40), 0);
	assert_int_equal(kvm_tsc_host(&k, INT64_MAX, &h), -ERANGE);
}

/* Round trips of the scaled map for random ratios around 1. */
static void test_scaled_round_trip(void **state)
{
	struct rng r = { 0x6b766d31 };

	(void)state;
	for (int i = 0; i < 20000; i++) {
		uint32_t frac = (i & 1) ? 48 : 32;
		/* 0.5 .. 2 */
		uint64_t ratio = (uint64_t)(ldexp(0.5 + 1.5 * rng_unit(&r), (int)frac));
		int64_t off = (int64_t)(rng_next(&r) >> 20) - (1LL << 43);
		uint64_t host = rng_next(&r) >> 14;
		struct kvm_tsc k;
		uint64_t g;
		int64_t h;

		assert_int_equal(kvm_tsc_init(&k, off, true, ratio, frac), 0);
		g = kvm_tsc_guest(&k, host);
		if (g > INT64_MAX)
			continue;
		assert_int_equal(kvm_tsc_host(&k, (int64_t)g, &h), 0);
		/* floor in the map, nearest in the inverse: within 1/ratio + 1/2 */
		assert_true(llabs(h - (int64_t)host) <= 2);
		assert_true(llabs((int64_t)kvm_tsc_guest(&k, (uint64_t)h) - (int64_t)g) <= 2);
	}
}

/* trace-cmd's scaled answer through its own reader is not the host time;
 * tsync's exact form is. */
static void test_tcmd_scaled_is_wrong(void **state)
{
	struct tsync_shift_sample *s;
	struct kvm_tsc_tcmd t;
	struct tsample ts[2], *rs;
	struct kvm_tsc k;
	size_t n;

	(void)state;
	/* guest = 1.5 host + 100 */
	assert_int_equal(kvm_tsc_init(&k, 100, true, 3ULL << 47, 48), 0);
	assert_int_equal(kvm_tsc_tcmd(100, true, 3ULL << 47, 48, &t), 0);
	assert_int_equal(t.offset, -100);
	ts[0] = (struct tsample){ 1600, t.offset, t.scaling, t.frac };
	ts[1] = (struct tsample){ 3100, t.offset, t.scaling, t.frac };
	/* host 1000 has guest 1600: one sample ignores scaling (1500), two
	 * apply the forward ratio (2300) */
	assert_int_equal(tcmd_read(ts, 1, 0, 1600), 1500);
	assert_int_equal(tcmd_read(ts, 2, 0, 1600), 2300);
	/* and ts * 1.5 * 2^48 wraps from 2^16 cycles on: 2^20 -> 0 - 100 */
	assert_int_equal(tcmd_read(ts, 2, 0, 1ULL << 20), (uint64_t)-100);
	/* tsync's exact form over the same stretch: host 1000 .. 2000 */
	assert_int_equal(kvm_tsc_cut(&k, 1000, 2000, NULL, 0, &s, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].guest_ts, 1600);
	assert_int_equal(s[0].offset_ns, -600);
	assert_int_equal(s[1].guest_ts, 3100);
	assert_int_equal(s[1].offset_ns, -1100);
	rs = as_read(s, n);
	assert_int_equal(tcmd_read(rs, n, TCMD_INTERPOLATE, 1600), 1000);
	/* 1500 within the reader's rounding, which truncates the negative
	 * correction toward zero: -600 + (-375000 + 750) / 1500 = -849 */
	assert_int_equal(tcmd_read(rs, n, TCMD_INTERPOLATE, 2350), 1501);
	/* and at the last sample too, since the pair used is (1600, 3100):
	 * -600 + (-750000 + 750) / 1500 = -1099 */
	assert_int_equal(tcmd_read(rs, n, TCMD_INTERPOLATE, 3100), 2001);
	free(rs);
	free(s);
}

static void test_max_span(void **state)
{
	struct kvm_tsc k;
	int64_t s;
	double d;

	(void)state;
	assert_int_equal(kvm_tsc_init(&k, 0, false, 0, 0), 0);
	assert_true(kvm_tsc_max_span(&k) == INT64_MAX);
	/* 1.2 (a 3.6 GHz guest on a 3 GHz host): offsets move by 1/6 a cycle */
	assert_int_equal(kvm_tsc_init(&k, 0, true, (uint64_t)(1.2 * 0x1p48), 48), 0);
	s = kvm_tsc_max_span(&k);
	d = 1.0 / 1.2 - 1.0;
	assert_true((double)s * (double)s * -d <= 0x1p60 * 1.000001);
	assert_true((double)s * (double)s * -d >= 0x1p59);
	/* about a second at 3 GHz, not hours: a scaled recording needs samples */
	assert_true(s > 1000000000LL && s < 10000000000LL);
	/* the least step away from 1 still gives a usable span */
	assert_int_equal(kvm_tsc_init(&k, 0, true, (1ULL << 48) + 1, 48), 0);
	assert_true(kvm_tsc_max_span(&k) >= 1LL << 53);
}

/* The interval cap: half the span in host time, in TSC2NSEC's ns. */
static void test_max_interval(void **state)
{
	struct kvm_tsc k;

	(void)state;
	assert_int_equal(kvm_tsc_init(&k, 0, false, 0, 0), 0);
	assert_true(kvm_tsc_max_interval_ns(&k, 1, 0) == INT64_MAX);
	/* 1.5: d = 1/3, span floor(sqrt(2^60 * 3)) = 1859775393 guest cycles
	 * = 1239850262 host cycles; half of it */
	assert_int_equal(kvm_tsc_init(&k, -5, true, 3ULL << 47, 48), 0);
	assert_int_equal(kvm_tsc_max_span(&k), 1859775393LL);
	assert_int_equal(kvm_tsc_max_interval_ns(&k, 1, 0), 619925131LL);	/* 1 GHz */
	assert_int_equal(kvm_tsc_max_interval_ns(&k, 1u << 31, 32), 309962565LL);	/* 2 GHz */
	assert_int_equal(kvm_tsc_max_interval_ns(&k, 0, 0), 77490641LL);	/* unknown: 8 GHz */
	/* the same ratio with AMD's 32 fraction bits: the same answer */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 3ULL << 31, 32), 0);
	assert_int_equal(kvm_tsc_max_interval_ns(&k, 1, 0), 619925131LL);
	/* a slower guest (0.5): d = 1, span 2^30 guest = 2^31 host cycles */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 1ULL << 47, 48), 0);
	assert_int_equal(kvm_tsc_max_span(&k), 1LL << 30);
	assert_int_equal(kvm_tsc_max_interval_ns(&k, 1, 0), 1LL << 30);
	/* far from 1: tiny spans stay at least 1 ns */
	assert_int_equal(kvm_tsc_init(&k, 0, true, 1, 48), 0);
	assert_true(kvm_tsc_max_interval_ns(&k, 1, 0) >= 1);
}

static void test_cut_no_change(void **state)
{
	struct tsync_shift_sample *s;
	struct kvm_tsc_cut_info ci;
	struct kvm_tsc k;
	struct tsample *rs;
	size_t n;

	(void)state;
	assert_int_equal(kvm_tsc_init(&k, -500, false, 0, 0), 0);
	assert_int_equal(kvm_tsc_cut(&k, 1000, 5000, NULL, 0, &s, &n, &ci), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].guest_ts, 500);
	assert_int_equal(s[0].offset_ns, 500);
	assert_int_equal(s[1].guest_ts, 4500);
	assert_int_equal(s[1].offset_ns, 500);
	assert_int_equal(ci.changes, 0);
	rs = as_read(s, n);
	for (uint64_t h = 900; h <= 5100; h += 7) {
		assert_int_equal(tcmd_read(rs, n, TCMD_INTERPOLATE, h - 500), h);
		assert_int_equal(tcmd_read(rs, n, 0, h - 500), h);
	}
	free(rs);
	free(s);
	/* no host time at all: still two samples */
	assert_int_equal(kvm_tsc_cut(&k, 1000, 1000, NULL, 0, &s, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].guest_ts, 500);
	assert_int_equal(s[1].guest_ts, 501);
	free(s);
	assert_int_equal(kvm_tsc_cut(&k, 1000, 999, NULL, 0, &s, &n, NULL), -EINVAL);
}

/* guest = host - 500 until host 3000, then host + 2000 */
static void test_cut_forward(void **state)
{
	struct kvm_tsc_change ch[] = { { 3000, -500, 2000 } };
	struct tsync_shift_sample *s;
	struct kvm_tsc_cut_info ci;
	struct kvm_tsc k;
	struct tsample *rs;
	size_t n;

	(void)state;
	assert_int_equal(kvm_tsc_init(&k, -500, false, 0, 0), 0);
	assert_int_equal(kvm_tsc_cut(&k, 1000, 5000, ch, 1, &s, &n, &ci), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[0].guest_ts, 500);
	assert_int_equal(s[0].offset_ns, 500);
	assert_int_equal(s[1].guest_ts, 2500);
	assert_int_equal(s[1].offset_ns, 500);
	assert_int_equal(s[2].guest_ts, 5000);
	assert_int_equal(s[2].offset_ns, -2000);
	assert_int_equal(s[3].guest_ts, 7000);
	assert_int_equal(s[3].offset_ns, -2000);
	assert_int_equal(ci.changes, 1);
	assert_int_equal(ci.mismatched, 0);
	assert_int_equal(ci.ambiguous, 0);
	rs = as_read(s, n);
	for (unsigned int f = 0; f <= TCMD_INTERPOLATE; f++) {
		for (uint64_t h = 1000; h <= 5000; h++) {
			uint64_t g = h < 3000 ? h - 500 : h + 2000;

			assert_int_equal(tcmd_read(rs, n, f, g), h);
		}
	}
	free(rs);
	free(s);
}

/* guest = host until host 3000, then host - 1000: guest times 2000..3000
 * are reached twice */
static void test_cut_backward(void **state)
{
	struct kvm_tsc_change ch[] = { { 3000, 0, -1000 } };
	struct tsync_shift_sample *s;
	struct kvm_tsc_cut_info ci;
	struct kvm_tsc k;
	struct tsample *rs;
	size_t n;

	(void)state;
	assert_int_equal(kvm_tsc_init(&k, 0, false, 0, 0), 0);
	assert_int_equal(kvm_tsc_cut(&k, 1000, 5000, ch, 1, &s, &n, &ci), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[0].guest_ts, 1000);
	assert_int_equal(s[0].offset_ns, 0);
	assert_int_equal(s[1].guest_ts, 1999);	/* the old stretch ends before the new */
	assert_int_equal(s[1].offset_ns, 0);
	assert_int_equal(s[2].guest_ts, 2000);
	assert_int_equal(s[2].offset_ns, 1000);
	assert_int_equal(s[3].guest_ts, 4000);
	assert_int_equal(s[3].offset_ns, 1000);
	assert_int_equal(ci.changes, 1);
	assert_int_equal(ci.ambiguous, 1001);	/* guest 2000..3000 */
	rs = as_read(s, n);
	for (uint64_t h = 1000; h <= 5000; h++) {
		uint64_t g = h < 3000 ? h : h - 1000;
		/* the old side's last 1000 cycles come out as new ones */
		uint64_t want = h >= 2000 && h < 3000 ? h + 1000 : h;

		assert_int_equal(tcmd_read(rs, n, TCMD_INTERPOLATE, g), want);
		assert_int_equal(tcmd_read(rs, n, 0, g), want);
	}
	free(rs);
	free(s);
}

/* A backward change past a whole stretch, changes at one host time, the
 * same offset again, a wrong prev, changes outside the recording. */
static void test_cut_edges(void **state)
{
	struct kvm_tsc_change ch[] = {
		{ 500, 7, 7777 },	/* before the recording: in k already */
		{ 2000, 0, 3000 },	/* guest 2000 -> 5000 */
		{ 2100, 3000, -2000 },	/* guest 5100 -> 100: past the first stretch */
		{ 3000, -2000, -2000 },	/* same offset */
		{ 4000, 99, 500 },	/* prev mismatched */
		{ 4000, 500, 1000 },	/* two at one host time */
		{ 9000, 1000, 0 },	/* after the recording */
	};
	struct kvm_tsc_change bad[] = { { 3000, 0, 1 }, { 2000, 1, 2 } };
	struct tsync_shift_sample *s;
	struct kvm_tsc_cut_info ci;
	struct kvm_tsc k;
	struct tsample *rs;
	size_t n;

	(void)state;
	assert_int_equal(kvm_tsc_init(&k, 0, false, 0, 0), 0);
	assert_int_equal(kvm_tsc_cut(&k, 1000, 6000, ch, 7, &s, &n, &ci), 0);
	assert_int_equal(ci.changes, 4);
	assert_int_equal(ci.same, 1);
	assert_int_equal(ci.mismatched, 1);
	/* stretch 1: guest 1000..2000 (offset 0), stretch 2: 5000..5100;
	 * stretch 3 starts at guest 100 and overtakes both: up to 5100 */
	assert_int_equal(ci.ambiguous, 5100 - 100 + 1);
	/* left: stretch 3 (offset -2000: guest 100..2000), then 4000's pair
	 * (500 runs no host time), offset 1000 from host 4000: 5000..7000 */
	assert_int_equal(n, 4);
	assert_int_equal(s[0].guest_ts, 100);
	assert_int_equal(s[0].offset_ns, 2000);
	assert_int_equal(s[1].guest_ts, 2000);
	assert_int_equal(s[1].offset_ns, 2000);
	assert_int_equal(s[2].guest_ts, 5000);
	assert_int_equal(s[2].offset_ns, -1000);
	assert_int_equal(s[3].guest_ts, 7000);
	assert_int_equal(s[3].offset_ns, -1000);
	rs = as_read(s, n);
	for (uint64_t h = 2100; h <= 6000; h++) {
		uint64_t g = h < 4000 ? h - 2000 : h + 1000;

		assert_int_equal(tcmd_read(rs, n, TCMD_INTERPOLATE, g), h);
	}
	free(rs);
	free(s);
	assert_int_equal(kvm_tsc_cut(&k, 1000, 6000, bad, 2, &s, &n, NULL), -EINVAL);
	/* a change at host_to: the last stretch still has two samples */
	assert_int_equal(kvm_tsc_cut(&k, 1000, 3000, bad, 1, &s, &n, NULL), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[2].guest_ts, 3001);
	assert_int_equal(s[3].guest_ts, 3002);
	free(s);
}

/*
 * Random recordings: a random ratio (or none), forward and backward
 * changes at random host times; every host time's guest event, read back
 * through trace-cmd's reader, gives its host time: exactly unscaled, within
 * 2 cycles scaled, except the counted ambiguous windows of backward
 * changes.
 */
static void test_cut_random(void **state)
{
	struct rng r = { 0x6b766d32 };

	(void)state;
	for (int run = 0; run < 300; run++) {
		bool scaled = run % 3 != 0;
		uint32_t frac = run & 1 ? 48 : 32;
		uint64_t ratio = scaled ? (uint64_t)ldexp(0.8 + 0.4 * rng_unit(&r), (int)frac) : 0;
		uint64_t from = (rng_next(&r) >> 24) + (1ULL << 36), span = 40000000000ULL;
		size_t nch = rng_next(&r) % 8, n, bad = 0;
		struct kvm_tsc_change ch[8];
		int64_t offs[9];
		struct tsync_shift_sample *s;
		struct kvm_tsc_cut_info ci;
		struct kvm_tsc k, cur;
		struct tsample *rs;
		uint64_t t = from;

		offs[0] = -(int64_t)(from / 2);
		for (size_t i = 0; i < nch; i++) {
			t += 1 + rng_next(&r) % (span / 8);
			ch[i].host_ts = t;
			ch[i].prev = offs[i];
			/* forward mostly, backward sometimes */
			offs[i + 1] = offs[i] + (rng_next(&r) % 5 ? 1 : -1) *
					(int64_t)(1 + rng_next(&r) % 1000000000ULL);
			ch[i].next = offs[i + 1];
		}
		assert_int_equal(kvm_tsc_init(&k, offs[0], scaled, ratio, frac), 0);
		assert_int_equal(kvm_tsc_cut(&k, from, from + span, ch, nch, &s, &n, &ci), 0);
		assert_int_equal(ci.changes, nch);
		for (size_t i = 1; i < n && kvm_tsc_scaled(&k); i++)
			assert_true(s[i].guest_ts - s[i - 1].guest_ts <= kvm_tsc_max_span(&k));
		rs = as_read(s, n);
		cur = k;
		for (int e = 0; e < 2000; e++) {
			uint64_t h = from + rng_next(&r) % (span + 1), back;
			size_t seg = 0;
			int64_t err;

			while (seg < nch && ch[seg].host_ts <= h)
				seg++;
			cur.offset = offs[seg];
			back = tcmd_read(rs, n, TCMD_INTERPOLATE, kvm_tsc_guest(&cur, h));
			err = (int64_t)(back - h);
			if (llabs(err) > (scaled ? 2 : 0))
				bad++;
		}
		/* only the windows a backward change made ambiguous may miss,
		 * and only as often as they are wide */
		if (!ci.ambiguous)
			assert_int_equal(bad, 0);
		else
			assert_true((double)bad <= 2000.0 * ((double)ci.ambiguous / (double)span) * 1.5 + 10);
		free(rs);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_default_ratio),
		cmocka_unit_test(test_offset_sign),
		cmocka_unit_test(test_scaled_map),
		cmocka_unit_test(test_scaled_round_trip),
		cmocka_unit_test(test_tcmd_scaled_is_wrong),
		cmocka_unit_test(test_max_span),
		cmocka_unit_test(test_max_interval),
		cmocka_unit_test(test_cut_no_change),
		cmocka_unit_test(test_cut_forward),
		cmocka_unit_test(test_cut_backward),
		cmocka_unit_test(test_cut_edges),
		cmocka_unit_test(test_cut_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
