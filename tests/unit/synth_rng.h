/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The seeded random numbers that the unit tests simulating sync rounds
 * (test_estimate.c, test_round_stop.c) draw their synthetic probes from:
 * splitmix64, small and good enough for simulation. The same seed gives the
 * same sequence everywhere, so a test's measured table stays repeatable.
 */
#ifndef TSYNC_TEST_SYNTH_RNG_H
#define TSYNC_TEST_SYNTH_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

struct rng {
	uint64_t s;
};

/* Returns the next 64 random bits. */
static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Returns a uniform double in (0, 1). */
static inline double rng_unit(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* Returns an exponential variate of mean @mean. */
static inline double rng_exp(struct rng *r, double mean)
{
	return -log(rng_unit(r)) * mean;
}

/* Returns a standard normal variate (Box-Muller). */
static inline double rng_gauss(struct rng *r)
{
	return sqrt(-2 * log(rng_unit(r))) * cos(2 * M_PI * rng_unit(r));
}

/* Returns a uniform integer in [0, n). */
static inline size_t rng_below(struct rng *r, size_t n)
{
	return (size_t)(rng_next(r) % n);
}

#endif
