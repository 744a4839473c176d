// SPDX-License-Identifier: GPL-2.0-or-later
/* KVM's TSC arithmetic: maps, trace-cmd's answer, samples, cuts (kvm_tsc.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/sync/kvm_tsc.h"

bool kvm_tsc_clock_ok(const char *clock)
{
	return clock && !strcmp(clock, KVM_TSC_CLOCK);
}

int kvm_tsc_init(struct kvm_tsc *k, int64_t offset, bool scaling, uint64_t ratio,
		 uint64_t frac)
{
	if (scaling && (!ratio || frac > KVM_TSC_FRAC_MAX))
		return -EINVAL;
	k->offset = offset;
	if (!scaling || ratio == 1ULL << frac) {
		k->ratio = 1;
		k->frac = 0;
	} else {
		k->ratio = ratio;
		k->frac = (uint32_t)frac;
	}
	return 0;
}

bool kvm_tsc_scaled(const struct kvm_tsc *k)
{
	return k->ratio != 1ULL << k->frac;
}

uint64_t kvm_tsc_guest(const struct kvm_tsc *k, uint64_t host)
{
	unsigned __int128 p = (unsigned __int128)host * k->ratio;

	return (uint64_t)(p >> k->frac) + (uint64_t)k->offset;
}

int kvm_tsc_host(const struct kvm_tsc *k, int64_t guest, int64_t *host)
{
	__int128 num = ((__int128)guest - k->offset) * ((__int128)1 << k->frac);
	__int128 r = k->ratio, h;

	/* nearest: |num| < 2^64 * 2^62, so adding r / 2 cannot overflow */
	h = (num >= 0 ? num + r / 2 : num - r / 2) / r;
	if (h > INT64_MAX || h < INT64_MIN)
		return -ERANGE;
	*host = (int64_t)h;
	return 0;
}

int kvm_tsc_tcmd(int64_t offset, bool scaling, uint64_t ratio, uint64_t frac,
		 struct kvm_tsc_tcmd *out)
{
	int64_t s = 1;

	if (offset == INT64_MIN)
		return -ERANGE;
	if (scaling && ratio != KVM_TSC_RATIO_AMD_DEFAULT &&
	    ratio != KVM_TSC_RATIO_INTEL_DEFAULT)
		s = (int64_t)ratio;
	out->offset = -offset;
	out->scaling = s;
	out->frac = s != 1 ? (int64_t)frac : 0;
	return 0;
}

/* The exact-form offset (host - guest) of @k at guest time @g. */
static int offset_at(const struct kvm_tsc *k, int64_t g, int64_t *off)
{
	int64_t h;
	int ret;

	if (!kvm_tsc_scaled(k)) {
		if (k->offset == INT64_MIN)
			return -ERANGE;
		*off = -k->offset;
		return 0;
	}
	ret = kvm_tsc_host(k, g, &h);
	if (ret)
		return ret;
	if (__builtin_sub_overflow(h, g, off))
		return -ERANGE;
	return 0;
}

/* KVM's map at @host as an int64 guest time, or -ERANGE. */
static int guest_at(const struct kvm_tsc *k, uint64_t host, int64_t *g)
{
	uint64_t v = kvm_tsc_guest(k, host);

	if (v > INT64_MAX)
		return -ERANGE;
	*g = (int64_t)v;
	return 0;
}

int kvm_tsc_sample(const struct kvm_tsc *k, uint64_t host, struct tsync_shift_sample *s)
{
	int64_t g, off;
	int ret;

	ret = guest_at(k, host, &g);
	if (!ret)
		ret = offset_at(k, g, &off);
	if (ret)
		return ret;
	s->guest_ts = g;
	s->offset_ns = off;
	return 0;
}

int64_t kvm_tsc_max_span(const struct kvm_tsc *k)
{
	double d, s;

	if (!kvm_tsc_scaled(k))
		return INT64_MAX;
	/* the offset moves by d per guest cycle; a span s moves it by s * d,
	 * and the reader multiplies the two: keep s * s * d at 2^60 */
	d = fabs(ldexp(1.0, (int)k->frac) / (double)k->ratio - 1.0);
	if (d <= 0x1p-120)
		return (int64_t)1 << 60;
	s = sqrt(0x1p60 / d);
	if (s >= 0x1p60)
		return (int64_t)1 << 60;
	return s < 1 ? 1 : (int64_t)s;
}

/* The longest wait between readings of a scaled vCPU; see kvm_tsc.h. */
int64_t kvm_tsc_max_interval_ns(const struct kvm_tsc *k, uint32_t mult, uint32_t shift)
{
	double host_cycles, ns;

	if (!kvm_tsc_scaled(k))
		return INT64_MAX;
	/* guest = host * ratio >> frac: a guest span is span / ratio << frac
	 * host cycles */
	host_cycles = ldexp((double)kvm_tsc_max_span(k), (int)k->frac) / (double)k->ratio;
	ns = mult ? ldexp(host_cycles * mult, -(int)shift) : host_cycles / 8.0;
	ns /= 2;
	if (ns >= 0x1p62)
		return (int64_t)1 << 62;
	return ns < 1 ? 1 : (int64_t)ns;
}

/*
 * The samples being cut: the samples, and for each the index of the
 * stretch (its struct kvm_tsc in seg[]) it belongs to.
 */
struct cut {
	struct tsync_shift_sample *s;
	uint32_t *seg_of;
	size_t n, cap;
	struct kvm_tsc *seg;
	size_t nseg;
};

/* Appends the sample of stretch @si at guest time @g. */
static int push(struct cut *c, size_t si, int64_t g)
{
	int64_t off;
	int ret;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct tsync_shift_sample *s = realloc(c->s, cap * sizeof(*s));
		uint32_t *seg_of;

		if (!s)
			return -ENOMEM;
		c->s = s;
		seg_of = realloc(c->seg_of, cap * sizeof(*seg_of));
		if (!seg_of)
			return -ENOMEM;
		c->seg_of = seg_of;
		c->cap = cap;
	}
	ret = offset_at(&c->seg[si], g, &off);
	if (ret)
		return ret;
	c->s[c->n] = (struct tsync_shift_sample){ g, off };
	c->seg_of[c->n] = (uint32_t)si;
	c->n++;
	return 0;
}

/*
 * Adds stretch @si, which the vCPU runs from guest time @g0 to @g1: first
 * drops the samples a backward change has overtaken (guest time >= @g0),
 * ending the stretch they left at @g0 - 1, and counts the overlap into
 * *@amb; then samples at @g0, every max span, and @g1.
 */
static int add_stretch(struct cut *c, size_t si, int64_t g0, int64_t g1, uint64_t *amb)
{
	int64_t step = kvm_tsc_max_span(&c->seg[si]), g;
	int ret;

	if (c->n && c->s[c->n - 1].guest_ts >= g0) {
		*amb += (uint64_t)(c->s[c->n - 1].guest_ts - g0) + 1;
		while (c->n && c->s[c->n - 1].guest_ts >= g0)
			c->n--;
		if (c->n && c->s[c->n - 1].guest_ts < g0 - 1) {
			ret = push(c, c->seg_of[c->n - 1], g0 - 1);
			if (ret)
				return ret;
		}
	}
	for (g = g0;; g += step) {
		ret = push(c, si, g);
		if (ret)
			return ret;
		if (g1 - g <= step)
			break;
	}
	return g1 > g0 ? push(c, si, g1) : 0;
}

int kvm_tsc_cut(const struct kvm_tsc *k, uint64_t host_from, uint64_t host_to,
		const struct kvm_tsc_change *ch, size_t nch,
		struct tsync_shift_sample **out, size_t *n, struct kvm_tsc_cut_info *info)
{
	struct kvm_tsc_cut_info ci = { 0 };
	struct cut c = { 0 };
	uint64_t h0 = host_from;
	int64_t g0, g1;
	size_t i;
	int ret;

	if (host_to < host_from)
		return -EINVAL;
	for (i = 1; i < nch; i++)
		if (ch[i].host_ts < ch[i - 1].host_ts)
			return -EINVAL;
	c.seg = malloc((nch + 1) * sizeof(*c.seg));
	if (!c.seg)
		return -ENOMEM;
	c.seg[c.nseg++] = *k;
	for (i = 0; i < nch; i++) {
		const struct kvm_tsc *cur = &c.seg[c.nseg - 1];
		uint64_t t = ch[i].host_ts;

		if (t <= host_from || t > host_to)
			continue;
		if (ch[i].prev != cur->offset)
			ci.mismatched++;
		if (ch[i].next == cur->offset) {
			ci.same++;
			continue;
		}
		ci.changes++;
		if (t > h0) {	/* a stretch of no host time has no samples */
			ret = guest_at(cur, h0, &g0);
			if (!ret)
				ret = guest_at(cur, t, &g1);
			if (!ret)
				ret = add_stretch(&c, c.nseg - 1, g0, g1, &ci.ambiguous);
			if (ret)
				goto fail;
		}
		c.seg[c.nseg] = *cur;
		c.seg[c.nseg++].offset = ch[i].next;
		h0 = t;
	}
	ret = guest_at(&c.seg[c.nseg - 1], h0, &g0);
	if (!ret)
		ret = guest_at(&c.seg[c.nseg - 1], host_to, &g1);
	if (!ret && g1 <= g0) {
		if (g0 == INT64_MAX)
			ret = -ERANGE;
		g1 = g0 + 1;	/* two samples, so the reader's last pair is this stretch */
	}
	if (!ret)
		ret = add_stretch(&c, c.nseg - 1, g0, g1, &ci.ambiguous);
	if (ret)
		goto fail;
	free(c.seg);
	free(c.seg_of);
	*out = c.s;
	*n = c.n;
	if (info)
		*info = ci;
	return 0;
fail:
	free(c.seg);
	free(c.seg_of);
	free(c.s);
	return ret;
}
