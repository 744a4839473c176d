// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The offset of one trace-cmd PTP sample: see tcmd_ptp_calc.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/sync/tcmd_ptp_calc.h"

struct tcmd_ptp_est {
	int ncpus;
	bool have_host;		/* host_last is set */
	int64_t host_last;	/* latest host stamp of an earlier sample */
	bool have_any;
	int64_t any_offset;	/* the last measured offset, any CPU */
	struct {
		bool have;
		int64_t offset;
	} cpu[];		/* the last measured offset per CPU */
};

/* Allocates the state; see tcmd_ptp_calc.h. */
struct tcmd_ptp_est *tcmd_ptp_est_new(int ncpus)
{
	struct tcmd_ptp_est *e;

	if (ncpus < 1)
		return NULL;
	e = calloc(1, sizeof(*e) + (size_t)ncpus * sizeof(e->cpu[0]));
	if (e)
		e->ncpus = ncpus;
	return e;
}

/* Frees @e (NULL is fine). */
void tcmd_ptp_est_free(struct tcmd_ptp_est *e)
{
	free(e);
}

/* Remembers a measured @offset of @cpu and the latest host stamp @host_max. */
static void remember(struct tcmd_ptp_est *e, uint32_t cpu, int64_t offset,
		     int64_t host_max)
{
	if (!e->have_host || host_max > e->host_last)
		e->host_last = host_max;
	e->have_host = true;
	e->cpu[cpu].have = true;
	e->cpu[cpu].offset = offset;
	e->have_any = true;
	e->any_offset = offset;
}

/* Computes one sample; see tcmd_ptp_calc.h. */
int tcmd_ptp_est_sample(struct tcmd_ptp_est *e, uint32_t cpu,
			const struct tsync_probe_stamps *guest,
			const struct tcmd_time_sync *probes, struct tcmd_ptp_result *r)
{
	int64_t best = INT64_MAX, gbest = INT64_MAX, gmid = 0, host_max = 0;

	if (cpu >= (uint32_t)e->ncpus)
		return -EINVAL;
	*r = (struct tcmd_ptp_result){ 0 };
	for (uint32_t n = 1; n <= TCMD_PTP_LOOP; n++) {
		const struct tsync_probe_stamps *g = &guest[n - 1];
		struct tcmd_ptp_sample h;
		int64_t rtt, mid;

		if (!g->t3 || !g->t2 || g->t2 < g->t3)
			continue;
		rtt = g->t2 - g->t3;
		mid = g->t3 + rtt / 2;
		if (rtt < gbest) {
			gbest = rtt;
			gmid = mid;
		}
		tcmd_ptp_sample_get(probes, n - 1, &h);
		if (h.id != n || h.ts <= 0)
			continue;
		if (e->have_host && h.ts <= e->host_last) {
			r->stale++;
			continue;
		}
		r->used++;
		if (h.ts > host_max)
			host_max = h.ts;
		if (rtt < best) {
			best = rtt;
			r->ts = mid;
			r->offset = h.ts - mid;
		}
	}
	if (r->used) {
		/* the host drops a 0 offset; 1 ns is far below the error */
		if (!r->offset)
			r->offset = 1;
		remember(e, cpu, r->offset, host_max);
		return 0;
	}
	if (gbest == INT64_MAX || (!e->cpu[cpu].have && !e->have_any))
		return -ENODATA;
	r->ts = gmid;
	r->offset = e->cpu[cpu].have ? e->cpu[cpu].offset : e->any_offset;
	r->repeated = true;
	return 0;
}
