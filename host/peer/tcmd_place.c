// SPDX-License-Identifier: GPL-2.0-or-later
/* Choosing the host CPU of trace-cmd's PTP probes; see tcmd_place.h. */
#include <stdlib.h>

#include "host/peer/tcmd_place.h"

#define LOOPS_MAX (2 * TCMD_PLACE_TRIAL)

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The loops of @n arrivals; see tcmd_place.h. At most LOOPS_MAX loops
 * are looked at (the first ones): a trial has TCMD_PLACE_TRIAL. */
void tcmd_place_loops(const int64_t *arrival, uint32_t n, struct tcmd_place_loops *out)
{
	int64_t d[LOOPS_MAX];
	uint32_t k = 0;

	*out = (struct tcmd_place_loops){ 0 };
	for (uint32_t i = 1; i < n && k < LOOPS_MAX; i++)
		d[k++] = arrival[i] - arrival[i - 1];
	if (!k)
		return;
	qsort(d, k, sizeof(d[0]), cmp_i64);
	out->n = k;
	out->min = d[0];
	out->median = k % 2 ? d[k / 2] : d[k / 2 - 1] + (d[k / 2] - d[k / 2 - 1]) / 2;
}

/* The placement to keep; see tcmd_place.h. */
int tcmd_place_pick(const struct tcmd_place_loops *a, const struct tcmd_place_loops *b)
{
	int64_t hi, margin;

	if (!a->n || !b->n)
		return 0;
	hi = a->min > b->min ? a->min : b->min;
	margin = hi / 32;
	if (b->min < a->min - margin)
		return 1;
	if (a->min < b->min - margin)
		return 0;
	return b->median < a->median ? 1 : 0;
}
