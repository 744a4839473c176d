// SPDX-License-Identifier: GPL-2.0-or-later
/* Offset estimation for a sync round and drift over rounds; see estimate.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/sync/estimate.h"

/* One matched, sane probe. */
struct probe {
	int64_t lo;	/* t1 - t2: theta is at least this */
	int64_t hi;	/* t4 - t3: theta is at most this */
	int64_t delay;	/* hi - lo >= 0 */
	int64_t offset;	/* lo + delay / 2 */
	int64_t gmid;	/* guest time of the probe: (t2 + t3) / 2 */
};

typedef __int128 i128;

/* Returns @v clamped into int64. */
static int64_t sat64(i128 v)
{
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < INT64_MIN)
		return INT64_MIN;
	return (int64_t)v;
}

/* Returns floor((a + b) / 2) without overflow. */
static int64_t mid64(int64_t a, int64_t b)
{
	i128 s = (i128)a + b;

	return (int64_t)(s >= 0 ? s / 2 : -((-s + 1) / 2));
}

/* Returns |a - b|, saturated. */
static int64_t dist(int64_t a, int64_t b)
{
	i128 d = (i128)a - b;

	return sat64(d < 0 ? -d : d);
}

/* Returns |a - b| rounded up to half: ceil(|a - b| / 2), saturated. */
static int64_t half_dist(int64_t a, int64_t b)
{
	i128 d = (i128)a - b;

	if (d < 0)
		d = -d;
	return sat64((d + 1) / 2);
}

/* Parses an estimator name; see estimate.h. */
int tsync_estimator_parse(const char *name, enum tsync_estimator *est)
{
	if (!est)
		return -EINVAL;
	if (!name || !*name || !strcmp(name, "robust"))
		*est = TSYNC_EST_ROBUST;
	else if (!strcmp(name, "fastest"))
		*est = TSYNC_EST_FASTEST;
	else if (!strcmp(name, "histogram"))
		*est = TSYNC_EST_HISTOGRAM;
	else
		return -EINVAL;
	return 0;
}

/* Returns the name of an estimator; see estimate.h. */
const char *tsync_estimator_name(enum tsync_estimator est)
{
	switch (est) {
	case TSYNC_EST_ROBUST:
		return "robust";
	case TSYNC_EST_FASTEST:
		return "fastest";
	case TSYNC_EST_HISTOGRAM:
		return "histogram";
	}
	return "?";
}

/* qsort comparator: probes by seq. */
static int cmp_seq(const void *a, const void *b)
{
	uint32_t x = ((const struct tsync_probe_stamps *)a)->seq;
	uint32_t y = ((const struct tsync_probe_stamps *)b)->seq;

	return (x > y) - (x < y);
}

/* qsort comparator: int64 ascending. */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Builds a probe from the host's t1, t4 in @h and the guest's t2, t3 in
 * @g. Returns true if they are sane (non-zero, ordered on each side,
 * delay >= 0, no overflow).
 */
static bool make_probe(const struct tsync_probe_stamps *h,
		       const struct tsync_probe_stamps *g, struct probe *p)
{
	int64_t rtt, hold;

	if (!h->t1 || !h->t4 || !g->t2 || !g->t3)
		return false;
	if (h->t4 < h->t1 || g->t3 < g->t2)
		return false;
	if (__builtin_sub_overflow(h->t4, h->t1, &rtt) ||
	    __builtin_sub_overflow(g->t3, g->t2, &hold) ||
	    __builtin_sub_overflow(h->t1, g->t2, &p->lo) ||
	    __builtin_sub_overflow(h->t4, g->t3, &p->hi) ||
	    __builtin_sub_overflow(p->hi, p->lo, &p->delay))
		return false;
	if (p->delay < 0 || hold > rtt)
		return false;
	p->offset = p->lo + p->delay / 2;
	p->gmid = g->t2 + hold / 2;
	return true;
}

/*
 * Matches host and guest probes by seq into @out (room for min(nh, ng)).
 * Returns the number of valid probes, or -ENOMEM.
 */
static int match_probes(const struct tsync_probe_stamps *host, size_t nh,
			const struct tsync_probe_stamps *guest, size_t ng,
			struct probe *out)
{
	struct tsync_probe_stamps *h = NULL, *g = NULL;
	size_t i = 0, j = 0, ri, rj;
	int n = 0;

	h = malloc(nh * sizeof(*h) + 1);
	g = malloc(ng * sizeof(*g) + 1);
	if (!h || !g) {
		n = -ENOMEM;
		goto out;
	}
	if (nh)
		memcpy(h, host, nh * sizeof(*h));
	if (ng)
		memcpy(g, guest, ng * sizeof(*g));
	qsort(h, nh, sizeof(*h), cmp_seq);
	qsort(g, ng, sizeof(*g), cmp_seq);

	while (i < nh && j < ng) {
		if (h[i].seq < g[j].seq) {
			i++;
			continue;
		}
		if (g[j].seq < h[i].seq) {
			j++;
			continue;
		}
		/* Same seq: use it only if it is unique on both sides. */
		for (ri = i + 1; ri < nh && h[ri].seq == h[i].seq; ri++)
			;
		for (rj = j + 1; rj < ng && g[rj].seq == g[j].seq; rj++)
			;
		if (ri == i + 1 && rj == j + 1 && make_probe(&h[i], &g[j], &out[n]))
			n++;
		i = ri;
		j = rj;
	}
out:
	free(h);
	free(g);
	return n;
}

/* fastest: the probe with the smallest delay (first one on ties). */
static void est_fastest(const struct probe *p, size_t n, struct tsync_estimate *e)
{
	size_t best = 0, i;

	for (i = 1; i < n; i++)
		if (p[i].delay < p[best].delay)
			best = i;
	e->offset_ns = p[best].offset;
	e->error_ns = half_dist(p[best].hi, p[best].lo);
	e->guest_ts = p[best].gmid;
	e->span_ns = 0;
	e->used = 1;
}

/*
 * histogram: n bins over [min offset, max offset]; the estimate is the
 * median offset of the fullest bin (the lowest one on ties). Returns 0 or
 * -ENOMEM.
 */
static int est_histogram(const struct probe *p, size_t n, struct tsync_estimate *e)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX, gmin = INT64_MAX, gmax = INT64_MIN;
	int64_t omin = p[0].offset;
	int64_t omax = omin;
	uint32_t *hist = NULL;
	int64_t *vals = NULL;
	size_t i, k = 0, best = 0;
	i128 width, gsum = 0;
	int ret = -ENOMEM;

	hist = calloc(n, sizeof(*hist));
	vals = malloc(n * sizeof(*vals));
	if (!hist || !vals)
		goto out;
	for (i = 1; i < n; i++) {
		if (p[i].offset < omin)
			omin = p[i].offset;
		if (p[i].offset > omax)
			omax = p[i].offset;
	}
	width = ((i128)omax - omin) / (i128)n + 1;
	for (i = 0; i < n; i++) {
		size_t b = (size_t)(((i128)p[i].offset - omin) / width);

		/* b < n by construction (width > (omax - omin) / n); the
		 * comparison with best is a tie-break, not a bounds check. */
		// cppcheck-suppress arrayIndexThenCheck
		if (++hist[b] > hist[best] || (hist[b] == hist[best] && b < best))
			best = b;
	}
	for (i = 0; i < n; i++) {
		if ((size_t)(((i128)p[i].offset - omin) / width) != best)
			continue;
		vals[k++] = p[i].offset;
		if (p[i].lo > lo)
			lo = p[i].lo;
		if (p[i].hi < hi)
			hi = p[i].hi;
		if (p[i].gmid < gmin)
			gmin = p[i].gmid;
		if (p[i].gmid > gmax)
			gmax = p[i].gmid;
		gsum += p[i].gmid;
	}
	qsort(vals, k, sizeof(*vals), cmp_i64);
	e->offset_ns = k % 2 ? vals[k / 2] : mid64(vals[k / 2 - 1], vals[k / 2]);
	e->error_ns = dist(lo, e->offset_ns) > dist(hi, e->offset_ns) ?
		      dist(lo, e->offset_ns) : dist(hi, e->offset_ns);
	e->guest_ts = (int64_t)(gsum / (i128)k);
	e->span_ns = sat64((i128)gmax - gmin);
	e->used = (uint32_t)k;
	ret = 0;
out:
	free(hist);
	free(vals);
	return ret;
}

/* An interval end point for the robust sweep. */
struct edge {
	int64_t v;	/* lo or hi of probe idx */
	uint32_t idx;
	int start;	/* 1: lo (interval opens), 0: hi (closes) */
};

/* qsort comparator: by value, opening edges first (intervals are closed). */
static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return y->start - x->start;
}

/* Outlier screening of the interval ends (see screen_tail()). */
#define SCREEN_REF	8	/* spacings that set the local scale */
#define SCREEN_FACTOR	12	/* a gap this many times the scale is suspect */
#define SCREEN_MAX_DIV	20	/* at most n/20 ends dropped per tail */

/*
 * Flags in @drop the probes whose bound sits alone beyond the tail of the
 * others. @v holds the n bounds sorted so that the most constraining comes
 * first (lo descending with @sign 1, or hi ascending with @sign -1). The
 * honest extremes of a
 * tail are dense (spacings of the order delay-noise / n); a stamp that broke
 * causality by microseconds leaves a gap far larger than the spacings right
 * below it. Every gap among the first n/20 bounds is compared with the mean
 * of the next SCREEN_REF spacings; all bounds above the deepest suspect gap
 * are flagged.
 */
static void screen_tail(const struct edge *v, size_t n, int sign, bool *drop)
{
	size_t tmax = n / SCREEN_MAX_DIV, cut = 0, i;

	if (n < 2 * SCREEN_REF + tmax + 2)
		return;
	for (i = 0; i < tmax; i++) {
		i128 gap = sign * ((i128)v[i].v - v[i + 1].v);
		i128 ref = sign * ((i128)v[i + 1].v - v[i + 1 + SCREEN_REF].v) / SCREEN_REF;

		if (gap > SCREEN_FACTOR * (ref > 1 ? ref : 1))
			cut = i + 1;
	}
	for (i = 0; i < cut; i++)
		drop[v[i].idx] = true;
}

/* qsort comparator: edges by value, descending. */
static int cmp_edge_desc(const void *a, const void *b)
{
	return cmp_edge(b, a);
}

/*
 * robust: screened Marzullo intersection. First each tail of bounds is
 * screened for stamps that broke causality (screen_tail()); then a sweep
 * over the intervals [lo, hi] of the remaining probes finds the region
 * covered by the most of them: with honest stamps that is [max lo, min hi]
 * (every interval holds the truth). The estimate is the middle of the region
 * (ties between regions: the one nearest the median probe offset), at the
 * guest time midway between the two probes bounding it. Returns 0 or
 * -ENOMEM.
 */
static int est_robust(const struct probe *p, size_t n, struct tsync_estimate *e)
{
	struct edge *ev = NULL;
	int64_t *offs = NULL, med, best_dist = INT64_MAX;
	size_t i, m = 0, cnt = 0, best = 0, a = 0, b = 0;
	bool *drop = NULL;
	int ret = -ENOMEM;

	ev = malloc(2 * n * sizeof(*ev));
	offs = malloc(n * sizeof(*offs));
	drop = calloc(n, sizeof(*drop));
	if (!ev || !offs || !drop)
		goto out;

	/* screen the lower bounds (largest first) and the upper bounds
	 * (smallest first) */
	for (i = 0; i < n; i++)
		ev[i] = (struct edge){ p[i].lo, (uint32_t)i, 1 };
	qsort(ev, n, sizeof(*ev), cmp_edge_desc);
	screen_tail(ev, n, 1, drop);
	for (i = 0; i < n; i++)
		ev[i] = (struct edge){ p[i].hi, (uint32_t)i, 1 };
	qsort(ev, n, sizeof(*ev), cmp_edge);
	screen_tail(ev, n, -1, drop);

	for (i = 0; i < n; i++) {
		if (drop[i])
			continue;
		ev[2 * m] = (struct edge){ p[i].lo, (uint32_t)i, 1 };
		ev[2 * m + 1] = (struct edge){ p[i].hi, (uint32_t)i, 0 };
		offs[m++] = p[i].offset;
	}
	qsort(ev, 2 * m, sizeof(*ev), cmp_edge);
	qsort(offs, m, sizeof(*offs), cmp_i64);
	med = offs[m / 2];

	for (i = 0; i < 2 * m; i++) {
		int64_t d;

		if (!ev[i].start) {
			cnt--;
			continue;
		}
		cnt++;
		if (cnt < best)
			continue;
		/* region [ev[i].v, ev[i+1].v] is covered cnt times; an
		 * opening edge always has its closing edge later */
		d = dist(mid64(ev[i].v, ev[i + 1].v), med);
		if (cnt > best || d < best_dist) {
			best = cnt;
			best_dist = d;
			a = i;
			b = i + 1;
		}
	}
	e->offset_ns = mid64(ev[a].v, ev[b].v);
	e->error_ns = half_dist(ev[a].v, ev[b].v);
	e->guest_ts = mid64(p[ev[a].idx].gmid, p[ev[b].idx].gmid);
	e->span_ns = dist(p[ev[a].idx].gmid, p[ev[b].idx].gmid);
	e->used = (uint32_t)best;
	ret = 0;
out:
	free(ev);
	free(offs);
	free(drop);
	return ret;
}

/* Estimates the offset of one round; see estimate.h. */
int tsync_estimate_round(const struct tsync_probe_stamps *host, size_t nh,
			 const struct tsync_probe_stamps *guest, size_t ng,
			 enum tsync_estimator est, struct tsync_estimate *out)
{
	struct tsync_estimate e = { 0 };
	struct probe *p = NULL;
	size_t i;
	int n, ret;

	if (!out || (nh && !host) || (ng && !guest) ||
	    nh > TSYNC_EST_MAX_PROBES || ng > TSYNC_EST_MAX_PROBES ||
	    !strcmp(tsync_estimator_name(est), "?"))
		return -EINVAL;
	if (!nh || !ng)
		return -ENODATA;

	p = malloc((nh < ng ? nh : ng) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	n = match_probes(host, nh, guest, ng, p);
	if (n < 0) {
		ret = n;
		goto out;
	}
	if (n == 0) {
		ret = -ENODATA;
		goto out;
	}
	e.valid = (uint32_t)n;
	e.sent = (uint32_t)nh;
	e.delay_ns = p[0].delay;
	for (i = 1; i < (size_t)n; i++)
		if (p[i].delay < e.delay_ns)
			e.delay_ns = p[i].delay;

	ret = 0;
	switch (est) {
	case TSYNC_EST_FASTEST:
		est_fastest(p, (size_t)n, &e);
		break;
	case TSYNC_EST_HISTOGRAM:
		ret = est_histogram(p, (size_t)n, &e);
		break;
	case TSYNC_EST_ROBUST:
		ret = est_robust(p, (size_t)n, &e);
		break;
	}
	if (!ret)
		*out = e;
out:
	free(p);
	return ret;
}

/* Makes the TIME_SHIFT sample of an estimate; see estimate.h. */
int tsync_estimate_shift_sample(const struct tsync_estimate *e,
				struct tsync_shift_sample *s)
{
	if (!e || !s || !e->used)
		return -EINVAL;
	s->guest_ts = e->guest_ts;
	s->offset_ns = e->offset_ns;
	return 0;
}

/* Least-squares drift over rounds; see estimate.h. */
int tsync_drift_fit(const struct tsync_shift_sample *s, size_t n, double *ppm,
		    int64_t *mean_ts, int64_t *offset_at_mean)
{
	i128 sx = 0, sy = 0;
	long double sxx = 0, sxy = 0;
	int64_t mx, my;
	size_t i;

	if (!s || !ppm || n < 2)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		sx += s[i].guest_ts;
		sy += s[i].offset_ns;
	}
	mx = (int64_t)(sx / (i128)n);
	my = (int64_t)(sy / (i128)n);
	for (i = 0; i < n; i++) {
		long double dx = (long double)((i128)s[i].guest_ts - mx);
		long double dy = (long double)((i128)s[i].offset_ns - my);

		sxx += dx * dx;
		sxy += dx * dy;
	}
	if (sxx <= 0)
		return -EINVAL;
	*ppm = (double)(sxy / sxx * 1e6L);
	if (mean_ts)
		*mean_ts = mx;
	if (offset_at_mean)
		*offset_at_mean = my;
	return 0;
}
