/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What both ends of a sync round need from common/stamp/stamp.h: a timestamp
 * source kept for a session (opened again only when the clock or source
 * changes, since a marker instance costs milliseconds to create), and the
 * resolution of a round's stamps straight into its probes (struct
 * tsync_probe_stamps, proto/proto.h).
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
 * For deferred sources (marker), fills stamps @dir_a and @dir_b (enum
 * tsync_probe_dir: the field of that direction, t1..t4; 0: none) of each
 * of the @n probes of @round from the ring buffer of @cpu: the host's t1
 * and t4, the guest's t2 (and t3). Other sources stamp at once: nothing
 * to do. Returns 0, or -ENOENT if some stamps were not found (left 0), or
 * -errno.
 */
int tsync_stamp_resolve_probes(struct tsync_stamper *sp, int cpu, uint32_t round,
			       struct tsync_probe_stamps *p, size_t n, uint8_t dir_a,
			       uint8_t dir_b);

#endif
