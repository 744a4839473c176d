/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace-cmd's reader of TIME_SHIFT samples, for the unit tests of KVM's
 * exact sync (test_kvm_tsc.c, test_kvm_window.c): libtracecmd's
 * (3.1.6 to 3.4, trace-input.c, timestamp_host_sync() and
 * timestamp_correction_calc()) rewritten from its description in
 * common/sync/kvm_tsc.h: one sample adds its offset; otherwise the pair
 * around ts by its binary search, the offset (interpolated with
 * INTERPOLATE, its rounding and its int64 product, which the test asserts
 * does not overflow), and ts * scaling >> fraction in uint64. Include it
 * after cmocka.h.
 */
#ifndef TSYNC_TEST_TCMD_READER_H
#define TSYNC_TEST_TCMD_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/sync/estimate.h"	/* struct tsync_shift_sample */

#define TCMD_INTERPOLATE 0x1u

/* One TIME_SHIFT sample as trace-cmd's reader holds it. */
struct tsample {
	int64_t time, offset, scaling, fraction;
};

/* trace-cmd's reader for one CPU's samples (sorted, distinct times). */
static inline uint64_t tcmd_read(const struct tsample *s, size_t n, unsigned int flags,
				 uint64_t ts)
{
	size_t lo, hi;
	int64_t corr;
	uint64_t v;

	assert_true(n > 0);
	if (n == 1)
		return ts + (uint64_t)s[0].offset;
	if ((int64_t)ts <= s[0].time) {
		lo = 0;
	} else if ((int64_t)ts >= s[n - 1].time) {
		lo = n - 2;
	} else {
		long min = 0, max = (long)n - 1, mid = (min + max) / 2;

		while (min <= max) {
			if ((int64_t)ts < s[mid].time)
				max = mid - 1;
			else if ((int64_t)ts > s[mid].time)
				min = mid + 1;
			else
				break;
			mid = (min + max) / 2;
		}
		lo = (size_t)mid;
	}
	hi = lo + 1;
	corr = s[lo].offset;
	if (flags & TCMD_INTERPOLATE) {
		int64_t delta = s[hi].time - s[lo].time;
		__int128 p = (__int128)((int64_t)ts - s[lo].time) * (s[hi].offset - s[lo].offset);

		assert_true(p < INT64_MAX - delta && p > INT64_MIN + delta);	/* no overflow */
		corr = s[lo].offset + ((int64_t)p + delta / 2) / delta;
	}
	v = (ts * (uint64_t)s[lo].scaling) >> s[lo].fraction;
	return corr < 0 ? v - (uint64_t)(-corr) : v + (uint64_t)corr;
}

/* tsync's samples as the reader holds them (scaling 1, fraction 0). */
static inline struct tsample *as_read(const struct tsync_shift_sample *s, size_t n)
{
	struct tsample *t = calloc(n, sizeof(*t));

	assert_non_null(t);
	for (size_t i = 0; i < n; i++) {
		t[i] = (struct tsample){ s[i].guest_ts, s[i].offset_ns, 1, 0 };
		if (i)
			assert_true(s[i].guest_ts > s[i - 1].guest_ts);
	}
	return t;
}

#endif
