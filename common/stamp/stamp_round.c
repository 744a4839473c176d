// SPDX-License-Identifier: GPL-2.0-or-later
/* Timestamp sources as both ends of a sync round use them; see the header. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/stamp/stamp_round.h"
#include "proto/tsync_record.h"

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

/* Returns the field of @p that direction @dir (checked) stamps. */
static int64_t *field_of(struct tsync_probe_stamps *p, uint8_t dir)
{
	switch (dir) {
	case TSYNC_DIR_HOST_SEND: return &p->t1;
	case TSYNC_DIR_GUEST_RECV: return &p->t2;
	case TSYNC_DIR_GUEST_SEND: return &p->t3;
	default: return &p->t4;
	}
}

/* Resolves the deferred stamps of a round's probes; see the header. */
int tsync_stamp_resolve_probes(struct tsync_stamper *sp, int cpu, uint32_t round,
			       struct tsync_probe_stamps *p, size_t n, uint8_t dir_a,
			       uint8_t dir_b)
{
	struct tsync_stamp_slot *slots;
	uint8_t dirs[2];
	size_t nd = 0;
	int ret;

	if (dir_a)
		dirs[nd++] = dir_a;
	if (dir_b)
		dirs[nd++] = dir_b;
	for (size_t d = 0; d < nd; d++)
		if (dirs[d] < TSYNC_DIR_HOST_SEND || dirs[d] > TSYNC_DIR_HOST_RECV)
			return -EINVAL;
	if (!tsync_stamp_deferred(sp) || !n || !nd)
		return 0;
	slots = calloc(n * nd, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t d = 0; d < nd; d++)
			slots[i * nd + d] = (struct tsync_stamp_slot){ p[i].seq, dirs[d], 0 };
	ret = tsync_stamp_resolve(sp, cpu, round, slots, n * nd);
	for (size_t i = 0; i < n; i++)
		for (size_t d = 0; d < nd; d++)
			*field_of(&p[i], dirs[d]) = slots[i * nd + d].ts;
	free(slots);
	return ret;
}
