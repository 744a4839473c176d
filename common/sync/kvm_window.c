// SPDX-License-Identifier: GPL-2.0-or-later
/* A vCPU's cuts between two readings, at its events' moments (kvm_window.h). */
#include <errno.h>
#include <string.h>

#include "common/sync/kvm_window.h"

void kvm_window_add(struct kvm_window *w, const struct kvm_tsc_change *e)
{
	size_t i;

	if (w->nev == KVM_WINDOW_MAX_EVENTS) {
		w->overflow = true;
		return;
	}
	for (i = w->nev; i > 0 && w->ev[i - 1].host_ts > e->host_ts; i--)
		w->ev[i] = w->ev[i - 1];
	w->ev[i] = *e;
	w->nev++;
}

static bool same_rel(const struct kvm_tsc *a, const struct kvm_tsc *b)
{
	return a->offset == b->offset && a->ratio == b->ratio && a->frac == b->frac;
}

/* Applies events @ev[0..@n) to @base: the relation after them into *@end;
 * returns how many changed the offset. */
static uint32_t chain(const struct kvm_tsc *base, const struct kvm_tsc_change *ev, size_t n,
		      struct kvm_tsc *end)
{
	uint32_t changes = 0;

	*end = *base;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].next == end->offset)
			continue;
		end->offset = ev[i].next;
		changes++;
	}
	return changes;
}

/* The old relation @old's last sample before guest time @g_new at host
 * @host: old(host), or @g_new - 1 when that is not before it (counting
 * the cycles both sides reach into *@amb). */
static int old_end(const struct kvm_tsc *old, uint64_t host, int64_t g_new,
		   struct tsync_shift_sample *s, uint64_t *amb)
{
	int64_t h;
	int ret = kvm_tsc_sample(old, host, s);

	if (ret || s->guest_ts < g_new)
		return ret;
	if (g_new == INT64_MIN)
		return -ERANGE;
	*amb += (uint64_t)s->guest_ts - (uint64_t)g_new + 1;
	s->guest_ts = g_new - 1;
	ret = kvm_tsc_host(old, s->guest_ts, &h);
	if (!ret && __builtin_sub_overflow(h, s->guest_ts, &s->offset_ns))
		ret = -ERANGE;
	return ret;
}

/* The cuts of events @ev[0..@n) from @base into @cut (*@ncut added). */
static int cut_events(const struct kvm_tsc *base, const struct kvm_tsc_change *ev, size_t n,
		      struct tsync_shift_sample *cut, size_t *ncut, uint64_t *amb)
{
	struct kvm_tsc cur = *base;

	for (size_t i = 0; i < n; i++) {
		struct kvm_tsc nw = cur;
		struct tsync_shift_sample *s = &cut[*ncut];
		int ret;

		if (ev[i].next == cur.offset)
			continue;
		nw.offset = ev[i].next;
		ret = kvm_tsc_sample(&nw, ev[i].host_ts, &s[1]);
		if (!ret)
			ret = old_end(&cur, ev[i].host_ts, s[1].guest_ts, &s[0], amb);
		if (ret)
			return ret;
		*ncut += 2;
		cur = nw;
	}
	return 0;
}

/* Drops the first @n events of @w. */
static void drop(struct kvm_window *w, size_t n)
{
	memmove(w->ev, w->ev + n, (w->nev - n) * sizeof(w->ev[0]));
	w->nev -= n;
	w->nheld = w->nheld > n ? w->nheld - n : 0;
}

/* The window of @t (a copy of the state) up to the reading @now. */
static int judge(struct kvm_window *t, const struct kvm_tsc *now, uint64_t host_now,
		 int64_t guest_now, struct tsync_shift_sample *cut, size_t *ncut)
{
	struct kvm_tsc end;
	uint32_t n;
	size_t m = 0;
	int ret;

	while (m < t->nev && t->ev[m].host_ts <= host_now)
		m++;
	if (t->holding) {
		n = chain(&t->base, t->ev, m, &end);
		if (!t->overflow && same_rel(&end, now))
			goto agree;
		/* given up: the held events were not shown, the cut stays */
		t->counts.unconfirmed += chain(&t->base, t->ev, t->nheld, &end);
		t->counts.at_reading += t->provisional;
		m -= t->nheld;
		drop(t, t->nheld);
		t->holding = t->provisional = t->overflow = false;
		t->base = t->last;
	}
	n = chain(&t->base, t->ev, m, &end);
	if (!t->overflow && same_rel(&end, now))
		goto agree;
	/* disagreement: the events wait a window, a change is cut provisionally */
	t->holding = true;
	t->nheld = m;
	if (!same_rel(now, &t->last)) {
		ret = old_end(&t->last, host_now, guest_now, &cut[0], &t->counts.ambiguous);
		if (ret)
			return ret;
		*ncut = 1;
		t->provisional = true;
	}
	return 0;
agree:
	ret = cut_events(&t->base, t->ev, m, cut, ncut, &t->counts.ambiguous);
	if (ret)
		return ret;
	t->counts.at_event += n;
	drop(t, m);
	t->nheld = 0;
	t->holding = t->provisional = t->overflow = false;
	t->base = *now;
	return 0;
}

int kvm_window_reading(struct kvm_window *w, const struct kvm_tsc *now, uint64_t host_now,
		       int64_t guest_now, struct tsync_shift_sample *cut, size_t *ncut)
{
	struct kvm_window t = *w;
	size_t m = 0;
	int ret;

	*ncut = 0;
	if (!t.started) {
		while (m < t.nev && t.ev[m].host_ts <= host_now)
			m++;
		drop(&t, m);
		t.started = true;
		t.overflow = false;
		t.base = *now;
	} else {
		ret = judge(&t, now, host_now, guest_now, cut, ncut);
		if (ret) {
			*ncut = 0;
			return ret;
		}
	}
	t.last = *now;
	t.host_last = host_now;
	*w = t;
	return 0;
}

void kvm_window_counts(const struct kvm_window *w, struct kvm_window_counts *c)
{
	struct kvm_tsc end;

	*c = w->counts;
	if (!w->holding)
		return;
	c->unconfirmed += chain(&w->base, w->ev, w->nheld, &end);
	c->at_reading += w->provisional;
}
