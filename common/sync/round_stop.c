// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The adaptive stopping rule of a sync round; see round_stop.h.
 *
 * Only the `near` smallest round trips are kept, sorted: the rule asks
 * only whether the near-th smallest lies within tol of the smallest, so a
 * value larger than `near` others is never needed again, whatever tol
 * becomes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/sync/round_stop.h"

struct tsync_stopper {
	struct tsync_stop_cfg cfg;
	uint32_t max;			/* max_probes */
	uint32_t n;			/* probes added */
	uint32_t moved_at;		/* n when the floor last dropped by > tol */
	uint32_t nbest;			/* valid entries of best[] */
	int64_t best[TSYNC_STOP_MAX_NEAR];	/* smallest round trips, ascending */
	enum tsync_stop_reason stop;
};

/* Fills @cfg with the default rule; see round_stop.h. With the probe loops
 * at a real-time priority 16 probes near the floor are as good as 339
 * probes, quiet or loaded (bench_06_adaptive); 32 of each cost the guest
 * twice the probes for nothing. */
void tsync_stop_cfg_default(struct tsync_stop_cfg *cfg)
{
	cfg->min_probes = 16;
	cfg->near = 16;
	cfg->quiet = 16;
	cfg->tol_permille = 30;
	cfg->tol_min_ns = 200;
	cfg->widen_after = 32;
}

/* Starts a round; see round_stop.h. */
int tsync_stopper_new(const struct tsync_stop_cfg *cfg, uint32_t max_probes, bool fixed,
		      struct tsync_stopper **out)
{
	struct tsync_stop_cfg def;
	struct tsync_stopper *s;

	if (!cfg) {
		tsync_stop_cfg_default(&def);
		cfg = &def;
	}
	if (!out || !max_probes || !cfg->near || cfg->near > TSYNC_STOP_MAX_NEAR ||
	    cfg->tol_permille > 1000 || cfg->tol_min_ns < 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->max = max_probes;
	if (fixed || s->cfg.min_probes > max_probes)
		s->cfg.min_probes = max_probes;
	*out = s;
	return 0;
}

/* Returns how far from the floor @floor a round trip still counts as near
 * after @n probes. */
static int64_t tolerance(const struct tsync_stop_cfg *cfg, int64_t floor, uint32_t n)
{
	int64_t rel = floor / 1000 * (int64_t)cfg->tol_permille +
		      floor % 1000 * (int64_t)cfg->tol_permille / 1000;
	int64_t tol = rel > cfg->tol_min_ns ? rel : cfg->tol_min_ns;

	/* n / widen_after at most TSYNC_EST_MAX_PROBES-ish: no overflow for a
	 * tol below 2^47 ns; a larger one saturates */
	if (cfg->widen_after && n > cfg->widen_after) {
		if (tol > INT64_MAX / (int64_t)n)
			return INT64_MAX;
		tol = tol * (int64_t)n / (int64_t)cfg->widen_after;
	}
	return tol;
}

/* Inserts @rtt into the sorted best[] if it is among the smallest. */
static void keep_best(struct tsync_stopper *s, int64_t rtt)
{
	uint32_t i;

	if (s->nbest == s->cfg.near) {
		if (rtt >= s->best[s->nbest - 1])
			return;
		s->nbest--;
	}
	for (i = s->nbest; i > 0 && s->best[i - 1] > rtt; i--)
		s->best[i] = s->best[i - 1];
	s->best[i] = rtt;
	s->nbest++;
}

/* Returns whether the smallest round trips have converged. */
static int converged(const struct tsync_stopper *s)
{
	int64_t floor;

	if (s->nbest < s->cfg.near)
		return 0;
	floor = s->best[0];
	if (s->best[s->nbest - 1] - floor > tolerance(&s->cfg, floor, s->n))
		return 0;
	return s->n - s->moved_at >= s->cfg.quiet;
}

/* Adds one probe's round trip; see round_stop.h. */
enum tsync_stop_reason tsync_stopper_add(struct tsync_stopper *s, int64_t rtt_ns)
{
	if (s->stop)
		return s->stop;
	s->n++;
	if (rtt_ns > 0) {
		if (!s->nbest || rtt_ns < s->best[0] - tolerance(&s->cfg, s->best[0], s->n))
			s->moved_at = s->n;
		keep_best(s, rtt_ns);
	}
	if (s->n >= s->max)
		s->stop = TSYNC_STOP_MAX;
	else if (s->n >= s->cfg.min_probes && converged(s))
		s->stop = TSYNC_STOP_CONVERGED;
	return s->stop;
}

/* Accessors; see round_stop.h. */
uint32_t tsync_stopper_count(const struct tsync_stopper *s)
{
	return s->n;
}

enum tsync_stop_reason tsync_stopper_reason(const struct tsync_stopper *s)
{
	return s->stop;
}

int64_t tsync_stopper_floor(const struct tsync_stopper *s)
{
	return s->nbest ? s->best[0] : 0;
}

/* Frees @s; see round_stop.h. */
void tsync_stopper_free(struct tsync_stopper *s)
{
	free(s);
}

/* Returns the name of @r. */
const char *tsync_stop_reason_name(enum tsync_stop_reason r)
{
	switch (r) {
	case TSYNC_STOP_NO: return "running";
	case TSYNC_STOP_CONVERGED: return "converged";
	case TSYNC_STOP_MAX: return "max";
	}
	return "?";
}
