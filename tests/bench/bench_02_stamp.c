// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark of the timestamp sources (common/stamp/stamp.c), pinned to CPU 0:
 *   - cost of one take() for clock (mono), tsc, and marker (mono, local),
 *     with the clock source as the baseline;
 *   - cost of resolve() for 339 and 678 markers (one round, one and two
 *     directions), with the kbuffer reader stamp_marker.c uses, against
 *     tracefs_iterate_raw_events() with a one-CPU mask on the same data;
 *   - cost of opening and closing a marker source (instance create/remove);
 *     local is the default clock of a new instance, mono must be set.
 * Prints numbers only; never fails on timing. Exit 77 without tracefs.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "common/stamp/stamp.h"
#include "common/base/timeutil.h"
#include "proto/tsync_record.h"

#define REPS 30
#define TAKES 678

/* qsort comparator for doubles. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Returns the median of @n values (sorts them). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return v[n / 2];
}

/* Takes TAKES stamps of @round; returns ns per take. */
static double take_batch(struct tsync_stamper *s, uint32_t round)
{
	int64_t t0, ts;
	int i;

	t0 = tsync_now_ns();
	for (i = 0; i < TAKES; i++)
		tsync_stamp_take(s, round, (uint32_t)(i / 2 + 1),
				 i % 2 ? TSYNC_DIR_GUEST_SEND : TSYNC_DIR_GUEST_RECV, 0, &ts);
	return (double)(tsync_now_ns() - t0) / TAKES;
}

/* Fills @slots for the first @n stamps of take_batch(). */
static void fill_slots(struct tsync_stamp_slot *slots, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		slots[i].seq = (uint32_t)(i / 2 + 1);
		slots[i].dir = i % 2 ? TSYNC_DIR_GUEST_SEND : TSYNC_DIR_GUEST_RECV;
	}
}

/* Per-record callback of the iterate_raw_events comparison. */
struct iter_ctx {
	int raw_id, id_off, found;
	uint32_t round;
};

static int iter_cb(struct tep_event *ev, struct tep_record *rec, int cpu, void *arg)
{
	struct iter_ctx *c = arg;
	struct tsync_rec_probe p;

	(void)cpu;
	if (ev->id != c->raw_id || rec->size < c->id_off + (int)sizeof(p))
		return 0;
	memcpy(&p, (char *)rec->data + c->id_off, sizeof(p));
	if (p.hdr.id == TSYNC_RAW_ID && p.hdr.magic == TSYNC_REC_MAGIC &&
	    p.round == c->round)
		c->found++;
	return 0;
}

/* Measures take() for one source; prints and returns ns per take. */
static double bench_take(enum tsync_stamp_source kind, const char *clock, double base)
{
	double v[REPS];
	struct tsync_stamper *s;
	struct tsync_stamp_slot slots[TAKES];
	int r, ret;

	ret = tsync_stamp_open(kind, clock, "bench", 0, &s);
	if (ret) {
		printf("take %-7s %-8s unavailable: %s\n", tsync_stamp_source_name(kind),
		       clock, strerror(-ret));
		return 0;
	}
	fill_slots(slots, TAKES);
	for (r = 0; r < REPS; r++) {
		v[r] = take_batch(s, (uint32_t)r + 1);
		tsync_stamp_resolve(s, 0, (uint32_t)r + 1, slots, TAKES);
	}
	tsync_stamp_close(s);
	printf("take %-7s %-8s %8.1f ns/take (median of %d x %d)", tsync_stamp_source_name(kind),
	       clock, median(v, REPS), REPS, TAKES);
	if (base > 0)
		printf("  %.1fx clock", median(v, REPS) / base);
	printf("\n");
	return median(v, REPS);
}

/* Measures resolve() of @n markers with kbuffer and with iterate_raw_events. */
static void bench_resolve(int n, struct tep_handle *tep, int raw_id, int id_off)
{
	double kb[REPS], it[REPS];
	struct tsync_stamp_slot slots[TAKES];
	struct tracefs_instance *inst;
	struct tsync_stamper *s;
	cpu_set_t mask;
	int r, bad = 0;

	if (tsync_stamp_open(TSYNC_STAMP_MARKER, "mono", "bench", 0, &s))
		return;
	inst = tracefs_instance_alloc(NULL, tsync_stamp_instance(s));
	CPU_ZERO(&mask);
	CPU_SET(0, &mask);
	fill_slots(slots, n);
	for (r = 0; r < REPS; r++) {
		struct iter_ctx c = { raw_id, id_off, 0, (uint32_t)(2 * r + 1) };
		int64_t t0, ts;
		int i;

		for (i = 0; i < n; i++)
			tsync_stamp_take(s, 2 * r + 1, slots[i].seq, slots[i].dir, 0, &ts);
		t0 = tsync_now_ns();
		bad += tsync_stamp_resolve(s, 0, 2 * r + 1, slots, (size_t)n) != 0;
		kb[r] = (double)(tsync_now_ns() - t0);

		if (!tep || !inst)
			continue;
		for (i = 0; i < n; i++)
			tsync_stamp_take(s, 2 * r + 1, slots[i].seq, slots[i].dir, 0, &ts);
		t0 = tsync_now_ns();
		tracefs_iterate_raw_events(tep, inst, &mask, sizeof(mask), iter_cb, &c);
		it[r] = (double)(tsync_now_ns() - t0);
		bad += c.found != n;
	}
	printf("resolve %3d markers: kbuffer %8.1f us", n, median(kb, REPS) / 1000);
	if (tep && inst)
		printf(", tracefs_iterate_raw_events %8.1f us (%.1fx kbuffer)",
		       median(it, REPS) / 1000, median(it, REPS) / median(kb, REPS));
	printf("%s\n", bad ? "  (SOME MARKERS MISSING)" : "");
	tracefs_instance_free(inst);
	tsync_stamp_close(s);
}

/* Measures open + close of a marker source. */
static void bench_open_close(const char *clock)
{
	double o[10], c[10];
	int r;

	for (r = 0; r < 10; r++) {
		struct tsync_stamper *s;
		int64_t t0 = tsync_now_ns(), t1;

		if (tsync_stamp_open(TSYNC_STAMP_MARKER, clock, "bench", 0, &s))
			return;
		t1 = tsync_now_ns();
		tsync_stamp_close(s);
		o[r] = (double)(t1 - t0);
		c[r] = (double)(tsync_now_ns() - t1);
	}
	printf("marker open (instance, clock %s, %d KB buffer) %.2f ms, close %.2f ms "
	       "(medians of 10)\n", clock, TSYNC_STAMP_BUFFER_KB, median(o, 10) / 1e6,
	       median(c, 10) / 1e6);
}

int main(void)
{
	static const char *const systems[] = { "ftrace", NULL };
	struct tep_handle *tep;
	struct tep_event *raw;
	int64_t t0, tep_ns;
	cpu_set_t set;
	double base;

	if (access("/sys/kernel/tracing/instances", W_OK)) {
		fprintf(stderr, "no writable tracefs instances\n");
		return 77;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");

	base = bench_take(TSYNC_STAMP_CLOCK, "mono", 0);
	bench_take(TSYNC_STAMP_TSC, "x86-tsc", base);
	bench_take(TSYNC_STAMP_MARKER, "mono", base);
	bench_take(TSYNC_STAMP_MARKER, "local", base);

	t0 = tsync_now_ns();
	tep = tracefs_local_events_system(NULL, systems);
	tep_ns = tsync_now_ns() - t0;
	raw = tep ? tep_find_event_by_name(tep, "ftrace", "raw_data") : NULL;
	printf("tep for iterate_raw_events (ftrace system): %.2f ms once\n", tep_ns / 1e6);
	if (raw) {
		struct tep_format_field *f = tep_find_field(raw, "id");

		bench_resolve(339, tep, raw->id, f ? f->offset : 8);
		bench_resolve(678, tep, raw->id, f ? f->offset : 8);
	} else {
		bench_resolve(339, NULL, 0, 0);
		bench_resolve(678, NULL, 0, 0);
	}
	tep_free(tep);
	bench_open_close("local");
	bench_open_close("mono");
	return 0;
}
