// SPDX-License-Identifier: GPL-2.0-or-later
/* Timestamp sources as both ends of a sync round use them; see the header. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/stamp/stamp_round.h"

/* Returns the cached source, reopening it if needed; see the header. */
int tsync_stamp_cache_get(struct tsync_stamp_cache *c, unsigned int source,
			  const char *clock, unsigned int flags, const char *tag)
{
	int ret;

	if (c->stamper && c->source == source && c->flags == flags &&
	    !strcmp(c->clock, clock))
		return 0;
	tsync_stamp_cache_close(c);
	ret = tsync_stamp_open(source, clock, tag, flags, &c->stamper);
	if (ret)
		return ret;
	c->source = tsync_stamp_source_of(c->stamper);
	c->flags = flags;
	snprintf(c->clock, sizeof(c->clock), "%s", clock);
	return 0;
}

/* Closes the cached source. */
void tsync_stamp_cache_close(struct tsync_stamp_cache *c)
{
	tsync_stamp_close(c->stamper);
	c->stamper = NULL;
}

/* Resolves marker stamps of a round; see the header. Fields are accessed
 * with memcpy through the offsets, which is valid for any struct type. */
int tsync_stamp_resolve_pairs(struct tsync_stamper *sp, int cpu, uint32_t round,
			      void *probes, size_t n, size_t stride, size_t seq_off,
			      size_t a_off, size_t b_off, uint8_t dir_a, uint8_t dir_b)
{
	char *base = probes;
	struct tsync_stamp_slot *slots;
	int ret;

	if (!tsync_stamp_deferred(sp) || !n)
		return 0;
	slots = calloc(2 * n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t seq;

		memcpy(&seq, base + i * stride + seq_off, sizeof(seq));
		slots[2 * i] = (struct tsync_stamp_slot){ seq, dir_a, 0 };
		slots[2 * i + 1] = (struct tsync_stamp_slot){ seq, dir_b, 0 };
	}
	ret = tsync_stamp_resolve(sp, cpu, round, slots, 2 * n);
	for (size_t i = 0; i < n; i++) {
		memcpy(base + i * stride + a_off, &slots[2 * i].ts, sizeof(int64_t));
		memcpy(base + i * stride + b_off, &slots[2 * i + 1].ts, sizeof(int64_t));
	}
	free(slots);
	return ret;
}
