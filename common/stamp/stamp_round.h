/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What both ends of a sync round need from common/stamp/stamp.h: a timestamp
 * source kept for a session (opened again only when the clock or source
 * changes, since a marker instance costs milliseconds to create), and the
 * resolution of a round's two stamps per probe.
 */
#ifndef TSYNC_STAMP_ROUND_H
#define TSYNC_STAMP_ROUND_H

#include <stddef.h>
#include <stdint.h>

#include "common/stamp/stamp.h"

struct tsync_stamp_cache {
	struct tsync_stamper *stamper;
	enum tsync_stamp_source source;
	unsigned int flags;
	char clock[32];
};

/*
 * Makes @c hold a source of @source (enum tsync_stamp_source, a wire
 * value checked by tsync_stamp_open()) for @clock with TSYNC_STAMP_*
 * @flags, reopening it with instance tag @tag if it holds another. Returns
 * 0 or -errno.
 */
int tsync_stamp_cache_get(struct tsync_stamp_cache *c, unsigned int source,
			  const char *clock, unsigned int flags, const char *tag);
/* Closes the cached source (removing its instance). */
void tsync_stamp_cache_close(struct tsync_stamp_cache *c);

/*
 * For marker sources, fills the two stamps of each of the @n probes of
 * @round from the ring buffer of @cpu. The probes are any array of structs
 * (@stride bytes apart) holding a uint32_t sequence number at @seq_off and
 * int64_t stamps at @a_off (taken in direction @dir_a) and @b_off (@dir_b):
 * the protocol's struct tsync_stamp (t2, t3) and the estimator's struct
 * tsync_host_probe (t1, t4). Use TSYNC_STAMP_RESOLVE_PAIRS(). Other sources
 * stamp at once: nothing to do. Returns 0 or -errno.
 */
int tsync_stamp_resolve_pairs(struct tsync_stamper *sp, int cpu, uint32_t round,
			      void *probes, size_t n, size_t stride, size_t seq_off,
			      size_t a_off, size_t b_off, uint8_t dir_a, uint8_t dir_b);

#define TSYNC_STAMP_RESOLVE_PAIRS(sp, cpu, round, arr, n, fa, da, fb, db)	\
	tsync_stamp_resolve_pairs(sp, cpu, round, arr, n, sizeof(*(arr)),	\
				  offsetof(__typeof__(*(arr)), seq),		\
				  offsetof(__typeof__(*(arr)), fa),		\
				  offsetof(__typeof__(*(arr)), fb), da, db)

#endif
