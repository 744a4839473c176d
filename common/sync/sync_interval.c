// SPDX-License-Identifier: GPL-2.0-or-later
/* The adaptive sync interval of one guest CPU; see sync_interval.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/sync/sync_interval.h"

struct tsync_interval {
	struct tsync_interval_cfg cfg;
	struct tsync_shift_sample win[TSYNC_IV_WINDOW];	/* oldest first */
	int64_t bound[TSYNC_IV_WINDOW];	/* each sample's error bound (>= 0) */
	uint32_t n;			/* samples in win */
	int64_t now_ns;			/* current interval */
	struct tsync_interval_stats st;
};

/* Fills @cfg with the defaults; see sync_interval.h. */
void tsync_interval_cfg_default(struct tsync_interval_cfg *cfg)
{
	cfg->base_ns = 1000000000;
	cfg->max_ns = 16000000000;
	cfg->fit_samples = 3;
}

/* Starts a CPU's interval; see sync_interval.h. */
int tsync_interval_new(const struct tsync_interval_cfg *cfg, struct tsync_interval **out)
{
	struct tsync_interval *iv;

	if (!cfg || !out || cfg->base_ns < 1 || cfg->max_ns < cfg->base_ns ||
	    cfg->fit_samples < 2 || cfg->fit_samples > TSYNC_IV_WINDOW)
		return -EINVAL;
	iv = calloc(1, sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	iv->cfg = *cfg;
	iv->now_ns = cfg->base_ns;
	iv->st.longest_ns = cfg->base_ns;
	*out = iv;
	return 0;
}

/* Appends @s with its error bound @bound_ns to the window, dropping the
 * oldest when it is full. */
static void push(struct tsync_interval *iv, const struct tsync_shift_sample *s,
		 int64_t bound_ns)
{
	if (iv->n == TSYNC_IV_WINDOW) {
		memmove(iv->win, iv->win + 1, (TSYNC_IV_WINDOW - 1) * sizeof(iv->win[0]));
		memmove(iv->bound, iv->bound + 1, (TSYNC_IV_WINDOW - 1) * sizeof(iv->bound[0]));
		iv->n--;
	}
	iv->bound[iv->n] = bound_ns > 0 ? bound_ns : 0;
	iv->win[iv->n++] = *s;
}

/*
 * Predicts the offset at guest time @ts from the window, the least-squares
 * line's value there, and how far off the prediction can be because of
 * the window's own errors: the fit's value at ts is sum w_i y_i with w_i = 1/n + (ts - mean)(x_i - mean)/Sxx,
 * so offsets each within b_i of the truth move it by at most
 * sum |w_i| b_i (*@pred_bound). Returns 0, or -EINVAL (no fit: equal guest
 * times).
 */
static int predict(const struct tsync_interval *iv, int64_t ts, double *pred,
		   double *pred_bound)
{
	double mean = 0, sxx = 0, y = 0, b = 0, x;
	uint32_t i;

	if (iv->n < 2)
		return -EINVAL;
	/* times relative to the first sample: exact in a double */
	for (i = 0; i < iv->n; i++)
		mean += (double)(iv->win[i].guest_ts - iv->win[0].guest_ts);
	mean /= iv->n;
	for (i = 0; i < iv->n; i++) {
		double dx = (double)(iv->win[i].guest_ts - iv->win[0].guest_ts) - mean;

		sxx += dx * dx;
	}
	if (sxx <= 0)
		return -EINVAL;
	x = (double)(ts - iv->win[0].guest_ts) - mean;
	for (i = 0; i < iv->n; i++) {
		double dx = (double)(iv->win[i].guest_ts - iv->win[0].guest_ts) - mean;
		double w = 1.0 / iv->n + x * dx / sxx;

		/* relative to the first offset too (the weights sum to 1), so
		 * that a large offset keeps its nanoseconds */
		y += w * (double)(iv->win[i].offset_ns - iv->win[0].offset_ns);
		b += fabs(w) * (double)iv->bound[i];
	}
	*pred = (double)iv->win[0].offset_ns + y;
	*pred_bound = b;
	return 0;
}

/* Adds a round's sample; see sync_interval.h. */
int64_t tsync_interval_add(struct tsync_interval *iv, const struct tsync_shift_sample *s,
			   int64_t bound_ns, enum tsync_interval_why *why)
{
	enum tsync_interval_why w = TSYNC_IV_LEARN;
	double pred, pred_bound, miss;

	iv->st.rounds++;
	if (iv->n >= iv->cfg.fit_samples && !predict(iv, s->guest_ts, &pred, &pred_bound)) {
		miss = fabs((double)s->offset_ns - pred);
		if (miss <= (double)(bound_ns > 0 ? bound_ns : 0) + pred_bound) {
			w = iv->now_ns < iv->cfg.max_ns ? TSYNC_IV_GROW : TSYNC_IV_HOLD;
		} else {
			w = TSYNC_IV_TIGHTEN;
			if (miss > (double)iv->st.worst_miss_ns)
				iv->st.worst_miss_ns = miss > 9e18 ? INT64_MAX : (int64_t)miss;
			/* the drift changed: the older samples describe the past */
			iv->n = 0;
		}
	}
	push(iv, s, bound_ns);
	if (w == TSYNC_IV_GROW) {
		iv->now_ns = iv->now_ns > iv->cfg.max_ns / 2 ? iv->cfg.max_ns : iv->now_ns * 2;
		iv->st.grown++;
		if (iv->now_ns > iv->st.longest_ns)
			iv->st.longest_ns = iv->now_ns;
	} else if (w == TSYNC_IV_TIGHTEN) {
		iv->now_ns = iv->cfg.base_ns;
		iv->st.tightened++;
	}
	if (why)
		*why = w;
	return iv->now_ns;
}

/* Accessors; see sync_interval.h. */
int64_t tsync_interval_now(const struct tsync_interval *iv)
{
	return iv->now_ns;
}

void tsync_interval_stats(const struct tsync_interval *iv, struct tsync_interval_stats *st)
{
	*st = iv->st;
}

/* Frees @iv; see sync_interval.h. */
void tsync_interval_free(struct tsync_interval *iv)
{
	free(iv);
}

/* Returns the name of @why. */
/* The wait until the next sync; see sync_interval.h. */
int tsync_interval_wait_ms(int fixed_ms, int64_t adaptive_ns, int64_t cap_ns)
{
	int64_t cap_ms = cap_ns / 1000000 < 1 ? 1 : cap_ns / 1000000;
	int64_t ms;

	if (fixed_ms < 0)
		ms = INT64_MAX;
	else if (fixed_ms)
		ms = fixed_ms;
	else
		ms = adaptive_ns == INT64_MAX ? 1000 : adaptive_ns / 1000000;
	if (ms > cap_ms)
		ms = cap_ms;
	if (ms < 1)
		ms = 1;
	if (ms > INT32_MAX)
		return -1;	/* no cap, no interval: poll() waits for the stop */
	return (int)ms;
}

const char *tsync_interval_why_name(enum tsync_interval_why why)
{
	switch (why) {
	case TSYNC_IV_LEARN: return "learn";
	case TSYNC_IV_GROW: return "grow";
	case TSYNC_IV_HOLD: return "hold";
	case TSYNC_IV_TIGHTEN: return "tighten";
	}
	return "?";
}
