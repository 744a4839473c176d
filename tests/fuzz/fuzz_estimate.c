// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for common/sync/estimate.c: the guest stamps come from the
 * peer, so any bytes must give 0 with a sane estimate or -ENODATA, never
 * a crash, overflow or out-of-bounds access.
 *
 * Input: byte 0 bits 0-1 pick the estimator (3 = all three), bit 2 the
 * encoding; byte 1 how many probes go to the host side (the rest are the
 * guest's).
 *   raw   (bit 2 clear): 20-byte probes {u32 seq, i64 a, i64 b}, as is
 *         (host: t1, t4; guest: t2, t3) - extreme values, overflow.
 *   delta (bit 2 set): 9-byte probes {u8 seq, u16 d1, i16 d2, u16 d3,
 *         u16 d4} building plausible rounds around a running host time:
 *         t1 = T += d1, t2 = t1 + d2 + 1000, t3 = t2 + d3, t4 = t1 + d4.
 *         Each probe yields both sides, split by byte 1.
 * A second pass feeds the (guest_ts, offset) of the estimates to the
 * drift fit.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/sync/estimate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks one estimate's invariants; aborts on a violation. */
static void check(int ret, const struct tsync_estimate *e, size_t nh, size_t ng)
{
	size_t lim = nh < ng ? nh : ng;

	if (ret == -ENODATA)
		return;
	if (ret != 0)
		abort();
	if (e->used < 1 || e->used > e->valid || e->valid > lim || e->sent != nh)
		abort();
	if (e->error_ns < 0 || e->delay_ns < 0 || e->span_ns < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsync_probe_stamps *h;
	struct tsync_probe_stamps *g;
	struct tsync_shift_sample samples[3];
	size_t n, i, nh = 0, ng = 0, ns = 0;
	int64_t T = 1000000000;
	int mode, delta;

	if (size < 2)
		return 0;
	mode = data[0] & 3;
	delta = data[0] & 4;
	n = (size - 2) / (delta ? 9 : 20);
	h = calloc(n + 1, sizeof(*h));
	g = calloc(n + 1, sizeof(*g));
	if (!h || !g)
		abort();
	for (i = 0; i < n; i++) {
		const uint8_t *p = data + 2 + i * (delta ? 9 : 20);

		if (delta) {
			uint16_t d1, d3, d4;
			int16_t d2;
			int64_t t1, t2, t3, t4;

			memcpy(&d1, p + 1, 2);
			memcpy(&d2, p + 3, 2);
			memcpy(&d3, p + 5, 2);
			memcpy(&d4, p + 7, 2);
			t1 = T += d1;
			t2 = t1 + d2 + 1000;
			t3 = t2 + d3;
			t4 = t1 + d4;
			h[nh++] = (struct tsync_probe_stamps){ .seq = p[0], .t1 = t1, .t4 = t4 };
			g[ng++] = (struct tsync_probe_stamps){ .seq = p[0], .t2 = t2, .t3 = t3 };
		} else if (i < data[1]) {
			memcpy(&h[nh].seq, p, 4);
			memcpy(&h[nh].t1, p + 4, 8);
			memcpy(&h[nh].t4, p + 12, 8);
			nh++;
		} else {
			memcpy(&g[ng].seq, p, 4);
			memcpy(&g[ng].t2, p + 4, 8);
			memcpy(&g[ng].t3, p + 12, 8);
			ng++;
		}
	}
	if (delta && data[1] < nh)
		nh = data[1];	/* drop the host side's tail: lost probes */

	for (i = 0; i < 3; i++) {
		struct tsync_estimate e;
		int ret;

		if (mode != 3 && (int)i != mode)
			continue;
		ret = tsync_estimate_round(h, nh, g, ng, (enum tsync_estimator)i, &e);
		check(ret, &e, nh, ng);
		if (!ret && tsync_estimate_shift_sample(&e, &samples[ns]) == 0)
			ns++;
	}
	if (ns) {
		double ppm;
		int64_t mts, moff;

		tsync_drift_fit(samples, ns, &ppm, &mts, &moff);
	}
	free(h);
	free(g);
	return 0;
}
