// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * common/sync/kvm_window: one vCPU's cuts between readings, placed at the
 * kvm:kvm_write_tsc_offset events that debugfs confirms, against values
 * worked out by hand, and the whole list a CPU gets (the caller's rule:
 * each cut drops the samples at or after it, then the reading's sample)
 * read back through trace-cmd's reader (tests/unit/tcmd_reader.h): every
 * host time must come back from the guest time KVM's map gave it.
 *
 * Covered: no change; a forward and a backward change confirmed at once;
 * an event debugfs never shows (this machine's kvm_pvm: held a window,
 * then unconfirmed, no cut); a reading that changed before its event came
 * (a provisional cut at the reading, replaced by the event's); an event
 * drained before debugfs showed it (held, then cut in the past); an
 * event after the reading's host time (waits); events before the first
 * reading (dropped); two changes and a same-offset write in one window;
 * too many events (cut at the reading); a scaled vCPU; -ERANGE leaving
 * the state as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "common/sync/kvm_window.h"
#include "tests/unit/tcmd_reader.h"

/* A CPU's list of samples, as host/guest keeps it. */
struct list {
	struct tsync_shift_sample s[256];
	size_t n;
};

/* Appends @s by the caller's rule for cuts: drop what lies at or after it. */
static void put_cut(struct list *l, const struct tsync_shift_sample *s)
{
	while (l->n && l->s[l->n - 1].guest_ts >= s->guest_ts)
		l->n--;
	assert_true(l->n < 256);
	l->s[l->n++] = *s;
}

/* A reading of @k at host @h: its cuts and its sample into @l; returns
 * the number of cuts. */
static size_t reading(struct kvm_window *w, struct list *l, const struct kvm_tsc *k, uint64_t h)
{
	struct tsync_shift_sample cut[KVM_WINDOW_MAX_CUTS], s;
	size_t n;

	assert_int_equal(kvm_tsc_sample(k, h, &s), 0);
	assert_int_equal(kvm_window_reading(w, k, h, s.guest_ts, cut, &n), 0);
	for (size_t i = 0; i < n; i++)
		put_cut(l, &cut[i]);
	assert_true(!l->n || l->s[l->n - 1].guest_ts < s.guest_ts);
	l->s[l->n++] = s;
	return n;
}

static void add(struct kvm_window *w, uint64_t t, int64_t prev, int64_t next)
{
	struct kvm_tsc_change e = { t, prev, next };

	kvm_window_add(w, &e);
}

static struct kvm_tsc off(int64_t o)
{
	struct kvm_tsc k;

	assert_int_equal(kvm_tsc_init(&k, o, false, 0, 0), 0);
	return k;
}

/* The reader gives back every host time in [@h0, @h1] whose guest time
 * @g_of gives, within @slack cycles. */
static void read_back(const struct list *l, uint64_t h0, uint64_t h1, int64_t (*g_of)(uint64_t),
		      uint64_t slack)
{
	struct tsample *rs = as_read(l->s, l->n);

	for (uint64_t h = h0; h <= h1; h++) {
		uint64_t got = tcmd_read(rs, l->n, TCMD_INTERPOLATE, (uint64_t)g_of(h));
		uint64_t d = got > h ? got - h : h - got;

		if (d > slack)
			fail_msg("host %llu: read back %llu", (unsigned long long)h,
				 (unsigned long long)got);
	}
	free(rs);
}

static void counts_are(const struct kvm_window *w, uint32_t ev, uint32_t rd, uint32_t un)
{
	struct kvm_window_counts c;

	kvm_window_counts(w, &c);
	assert_int_equal(c.at_event, ev);
	assert_int_equal(c.at_reading, rd);
	assert_int_equal(c.unconfirmed, un);
}

static void test_no_change(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc k = off(-500);
	struct list l = { .n = 0 };

	(void)state;
	assert_int_equal(reading(&w, &l, &k, 1000), 0);
	add(&w, 1500, -500, -500);	/* the same offset written again */
	assert_int_equal(reading(&w, &l, &k, 2000), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.s[1].guest_ts, 1500);
	assert_int_equal(l.s[1].offset_ns, 500);
	counts_are(&w, 0, 0, 0);
}

/* guest = host - 500, then host + 2000 from host 3000 */
static int64_t g_fwd(uint64_t h)
{
	return h < 3000 ? (int64_t)h - 500 : (int64_t)h + 2000;
}

static void test_forward(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(-500), b = off(2000);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	add(&w, 3000, -500, 2000);
	assert_int_equal(reading(&w, &l, &b, 5000), 2);
	/* by hand: old(3000) = 2500 with offset 500, new(3000) = 5000 with -2000 */
	assert_int_equal(l.n, 4);
	assert_int_equal(l.s[1].guest_ts, 2500);
	assert_int_equal(l.s[1].offset_ns, 500);
	assert_int_equal(l.s[2].guest_ts, 5000);
	assert_int_equal(l.s[2].offset_ns, -2000);
	assert_int_equal(l.s[1].guest_ts + l.s[1].offset_ns, 3000);	/* host time T */
	assert_int_equal(l.s[2].guest_ts + l.s[2].offset_ns, 3000);
	assert_int_equal(l.s[3].guest_ts, 7000);
	read_back(&l, 1000, 5000, g_fwd, 0);
	counts_are(&w, 1, 0, 0);
}

/* guest = host, then host - 1000 from host 3000 */
static void test_backward(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(0), b = off(-1000);
	struct list l = { .n = 0 };
	struct kvm_window_counts c;

	(void)state;
	reading(&w, &l, &a, 1000);
	reading(&w, &l, &a, 2500);
	add(&w, 3000, 0, -1000);
	assert_int_equal(reading(&w, &l, &b, 5000), 2);
	assert_int_equal(l.n, 4);	/* 1000, 1999, 2000, 4000 */
	assert_int_equal(l.s[1].guest_ts, 1999);	/* 2500 overtaken, old ends before new */
	assert_int_equal(l.s[1].offset_ns, 0);
	assert_int_equal(l.s[2].guest_ts, 2000);
	assert_int_equal(l.s[2].offset_ns, 1000);
	kvm_window_counts(&w, &c);
	assert_int_equal(c.at_event, 1);
	assert_int_equal(c.ambiguous, 1001);	/* guest 2000..3000 */
}

/* kvm_pvm: the event says next = -T, debugfs and the guest stay at 0 */
static void test_unconfirmed(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(0);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	add(&w, 3000, 0, -3000);
	assert_int_equal(reading(&w, &l, &a, 5000), 0);
	counts_are(&w, 0, 0, 1);	/* held, counted as given up if it ends here */
	assert_int_equal(reading(&w, &l, &a, 9000), 0);
	counts_are(&w, 0, 0, 1);
	assert_int_equal(l.n, 3);
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.s[i].offset_ns, 0);
	/* after it, an event debugfs shows is cut again */
	add(&w, 10000, 0, 500);
	{
		struct kvm_tsc b = off(500);

		assert_int_equal(reading(&w, &l, &b, 11000), 2);
	}
	counts_are(&w, 1, 0, 1);
}

/* the reading saw the change before its event came: cut at the reading,
 * then at the event */
static void test_event_late(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(-500), b = off(2000);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	assert_int_equal(reading(&w, &l, &b, 5000), 1);
	/* provisional: old(5000) = 4500 */
	assert_int_equal(l.s[1].guest_ts, 4500);
	assert_int_equal(l.s[1].offset_ns, 500);
	counts_are(&w, 0, 1, 0);
	add(&w, 3000, -500, 2000);
	assert_int_equal(reading(&w, &l, &b, 9000), 2);
	counts_are(&w, 1, 0, 0);
	assert_int_equal(l.n, 4);	/* 500, 2500, 5000, 11000 */
	assert_int_equal(l.s[1].guest_ts, 2500);
	assert_int_equal(l.s[2].guest_ts, 5000);
	read_back(&l, 1000, 9000, g_fwd, 0);
}

/* never explained: the provisional cut stays */
static void test_reading_only(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(-500), b = off(2000);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	reading(&w, &l, &b, 5000);
	reading(&w, &l, &b, 9000);
	counts_are(&w, 0, 1, 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.s[1].guest_ts, 4500);
	assert_int_equal(l.s[2].guest_ts, 7000);
}

/* drained before debugfs showed it: held, then cut in the past */
static void test_event_early(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(-500), b = off(2000);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	add(&w, 3000, -500, 2000);
	assert_int_equal(reading(&w, &l, &a, 4000), 0);
	assert_int_equal(reading(&w, &l, &b, 5000), 2);
	counts_are(&w, 1, 0, 0);
	assert_int_equal(l.n, 4);	/* 3500 (old at 4000) overtaken */
	read_back(&l, 1000, 5000, g_fwd, 0);
}

/* an event after the reading's host time waits for the next */
static void test_event_after(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(-500), b = off(2000);
	struct list l = { .n = 0 };

	(void)state;
	add(&w, 500, 0, -500);		/* before the first reading: dropped */
	reading(&w, &l, &a, 1000);
	add(&w, 3000, -500, 2000);
	assert_int_equal(reading(&w, &l, &a, 2000), 0);
	counts_are(&w, 0, 0, 0);
	assert_int_equal(reading(&w, &l, &b, 5000), 2);
	read_back(&l, 1000, 5000, g_fwd, 0);
	counts_are(&w, 1, 0, 0);
}

/* -500 until 2000, 1500 until 2000 (same host time), then 4000 from
 * 3000; a write of 4000 again at 3500 changes nothing */
static int64_t g_two(uint64_t h)
{
	return h < 2000 ? (int64_t)h - 500 : h < 3000 ? (int64_t)h + 1500 : (int64_t)h + 4000;
}

static void test_two_changes(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(-500), c = off(4000);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	add(&w, 3500, 4000, 4000);
	add(&w, 3000, 1500, 4000);
	add(&w, 2000, -500, 1500);
	assert_int_equal(reading(&w, &l, &c, 5000), 4);
	counts_are(&w, 2, 0, 0);
	read_back(&l, 1000, 5000, g_two, 0);
}

static void test_overflow(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a = off(0), b = off(KVM_WINDOW_MAX_EVENTS + 1);
	struct list l = { .n = 0 };

	(void)state;
	reading(&w, &l, &a, 1000);
	for (int i = 0; i <= KVM_WINDOW_MAX_EVENTS; i++)
		add(&w, 2000 + (uint64_t)i, i, i + 1);
	/* the last event was dropped: the chain cannot reach debugfs's */
	assert_int_equal(reading(&w, &l, &b, 5000), 1);
	reading(&w, &l, &b, 6000);
	counts_are(&w, 0, 1, KVM_WINDOW_MAX_EVENTS);
}

/* ratio 1.5, offset 1000, then 500000 from host 3000: within the
 * reader's 2 cycles of rounding */
static int64_t g_scaled(uint64_t h)
{
	return (int64_t)(h * 3 / 2) + (h < 3000 ? 1000 : 500000);
}

static void test_scaled(void **state)
{
	struct kvm_window w = { 0 };
	struct kvm_tsc a, b;
	struct list l = { .n = 0 };

	(void)state;
	assert_int_equal(kvm_tsc_init(&a, 1000, true, 3ULL << 47, 48), 0);
	b = a;
	b.offset = 500000;
	reading(&w, &l, &a, 1000);
	add(&w, 3000, 1000, 500000);
	assert_int_equal(reading(&w, &l, &b, 5000), 2);
	read_back(&l, 1000, 5000, g_scaled, 2);
	counts_are(&w, 1, 0, 0);
}

static void test_erange(void **state)
{
	struct kvm_window w, before;
	struct kvm_tsc a = off(0), b = off(INT64_MAX);
	struct tsync_shift_sample cut[KVM_WINDOW_MAX_CUTS];
	struct list l = { .n = 0 };
	size_t n = 9;

	(void)state;
	memset(&w, 0, sizeof(w));
	reading(&w, &l, &a, 1000);
	add(&w, 3000, 0, INT64_MAX);
	before = w;
	assert_int_equal(kvm_window_reading(&w, &b, 5000, 100, cut, &n), -ERANGE);
	assert_int_equal(n, 0);
	/* field by field: struct copies leave padding undefined */
	assert_int_equal(w.nev, before.nev);
	assert_int_equal(w.nheld, before.nheld);
	assert_int_equal(w.holding, before.holding);
	assert_int_equal(w.provisional, before.provisional);
	assert_int_equal(w.last.offset, before.last.offset);
	assert_int_equal(w.host_last, before.host_last);
	assert_int_equal(w.base.offset, before.base.offset);
	assert_int_equal(w.counts.at_event, before.counts.at_event);
	assert_int_equal(w.ev[0].next, INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_change),
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_backward),
		cmocka_unit_test(test_unconfirmed),
		cmocka_unit_test(test_event_late),
		cmocka_unit_test(test_reading_only),
		cmocka_unit_test(test_event_early),
		cmocka_unit_test(test_event_after),
		cmocka_unit_test(test_two_changes),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_scaled),
		cmocka_unit_test(test_erange),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
