// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of common/sync/tcmd_ptp_calc.c with synthetic stamps: the fastest
 * probe's offset; host stamps left over from an earlier sample (trace-cmd's
 * host does not clear its PROBES buffer) skipped; a sample without usable
 * probes repeats an earlier offset instead of going out as 0 (which the
 * host drops, garbling its TIME_SHIFT); a measured 0 goes out as 1 ns.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/sync/tcmd_ptp_calc.h"

/* One synthetic sample: guest stamps and the host's PROBES message. */
struct synth {
	struct tsync_probe_stamps guest[TCMD_PTP_LOOP];	/* t3 sent, t2 echoed */
	struct tcmd_ptp_sample host[TCMD_PTP_SAMPLES];
	uint8_t buf[TCMD_MSG_MAX];
	struct tcmd_msg m;
};

/*
 * Probe n (1-based) leaves the guest at @t0 + 1000 n and comes back after
 * a round trip of 100 + n ns (so probe 1 is the fastest); the host stamps
 * it at the midpoint + @offset. Host slots with @host_ok false stay empty.
 */
static void synth_fill(struct synth *s, int64_t t0, int64_t offset, int host_ok)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t n = 1; n <= TCMD_PTP_LOOP; n++) {
		int64_t send = t0 + 1000 * (int64_t)n, rtt = 100 + n;

		s->guest[n - 1] = (struct tsync_probe_stamps){ .seq = n, .t3 = send,
							      .t2 = send + rtt };
		if (host_ok)
			s->host[n - 1] = (struct tcmd_ptp_sample){ send + rtt / 2 + offset, n };
	}
}

/* Encodes and decodes the host's PROBES (the wire path the agent uses). */
static const struct tcmd_time_sync *synth_probes(struct synth *s)
{
	struct tcmd_err e;
	ssize_t n = tcmd_enc_ptp_probes(s->buf, sizeof(s->buf), 7, TCMD_PTP_LOOP,
					s->host);

	assert_true(n > 0);
	assert_int_equal(tcmd_decode(s->buf, (size_t)n, &s->m, &e), 0);
	return &s->m.ts;
}

static void test_fastest(void **state)
{
	struct tcmd_ptp_est *e = tcmd_ptp_est_new(2);
	struct tcmd_ptp_result r;
	struct synth *s = calloc(1, sizeof(*s));

	(void)state;
	synth_fill(s, 1000000, 5000, 1);
	assert_int_equal(tcmd_ptp_est_sample(e, 0, s->guest, synth_probes(s), &r), 0);
	assert_int_equal(r.offset, 5000);
	assert_int_equal(r.ts, 1000000 + 1000 + 101 / 2);
	assert_int_equal(r.used, TCMD_PTP_LOOP);
	assert_int_equal(r.stale, 0);
	assert_false(r.repeated);
	assert_int_equal(tcmd_ptp_est_sample(e, 2, s->guest, synth_probes(s), &r), -EINVAL);
	tcmd_ptp_est_free(e);
	free(s);
}

/* The host's buffer still holds the first sample's stamps: the second
 * sample must not take them (they would give an offset 1 s off). */
static void test_stale_skipped(void **state)
{
	struct tcmd_ptp_est *e = tcmd_ptp_est_new(2);
	struct tcmd_ptp_result r;
	struct synth *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	(void)state;
	synth_fill(a, 1000000, 5000, 1);
	assert_int_equal(tcmd_ptp_est_sample(e, 0, a->guest, synth_probes(a), &r), 0);
	/* a second later, on CPU 1: guest stamps new, host stamps the old ones */
	synth_fill(b, 1001000000, 5000, 1);
	memcpy(b->host, a->host, sizeof(b->host));
	/* except the probes from 200 on, which the host did find */
	for (uint32_t n = 200; n <= TCMD_PTP_LOOP; n++)
		b->host[n - 1].ts = b->guest[n - 1].t3 + (100 + n) / 2 + 7000;
	assert_int_equal(tcmd_ptp_est_sample(e, 1, b->guest, synth_probes(b), &r), 0);
	assert_int_equal(r.stale, 199);
	assert_int_equal(r.used, TCMD_PTP_LOOP - 199);
	assert_int_equal(r.offset, 7000);
	assert_false(r.repeated);
	tcmd_ptp_est_free(e);
	free(a);
	free(b);
}

/* No usable probe: the CPU's last offset, else any CPU's, else nothing. */
static void test_nothing_usable(void **state)
{
	struct tcmd_ptp_est *e = tcmd_ptp_est_new(2);
	struct tcmd_ptp_result r;
	struct synth *s = calloc(1, sizeof(*s));

	(void)state;
	synth_fill(s, 1000000, 0, 0);
	assert_int_equal(tcmd_ptp_est_sample(e, 0, s->guest, synth_probes(s), &r),
			 -ENODATA);
	synth_fill(s, 2000000, 3000, 1);
	assert_int_equal(tcmd_ptp_est_sample(e, 0, s->guest, synth_probes(s), &r), 0);
	assert_int_equal(r.offset, 3000);
	synth_fill(s, 3000000, 0, 0);
	assert_int_equal(tcmd_ptp_est_sample(e, 1, s->guest, synth_probes(s), &r), 0);
	assert_true(r.repeated);
	assert_int_equal(r.offset, 3000);		/* CPU 0's */
	assert_int_equal(r.ts, 3000000 + 1000 + 101 / 2);
	synth_fill(s, 4000000, -8000, 1);
	assert_int_equal(tcmd_ptp_est_sample(e, 1, s->guest, synth_probes(s), &r), 0);
	synth_fill(s, 5000000, 0, 0);
	assert_int_equal(tcmd_ptp_est_sample(e, 1, s->guest, synth_probes(s), &r), 0);
	assert_true(r.repeated);
	assert_int_equal(r.offset, -8000);		/* its own */
	/* no guest stamp at all: no time to put an offset at */
	memset(s->guest, 0, sizeof(s->guest));
	assert_int_equal(tcmd_ptp_est_sample(e, 1, s->guest, synth_probes(s), &r),
			 -ENODATA);
	tcmd_ptp_est_free(e);
	free(s);
}

static void test_zero_offset(void **state)
{
	struct tcmd_ptp_est *e = tcmd_ptp_est_new(1);
	struct tcmd_ptp_result r;
	struct synth *s = calloc(1, sizeof(*s));

	(void)state;
	synth_fill(s, 1000000, 0, 1);
	assert_int_equal(tcmd_ptp_est_sample(e, 0, s->guest, synth_probes(s), &r), 0);
	assert_int_equal(r.offset, 1);
	tcmd_ptp_est_free(e);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fastest),
		cmocka_unit_test(test_stale_skipped),
		cmocka_unit_test(test_nothing_usable),
		cmocka_unit_test(test_zero_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
