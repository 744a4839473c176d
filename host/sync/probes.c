// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The probe method (host/sync/sync_priv.h): a sample is a probe round
 * through the guest's peer (host/peer/peer.h), in whichever protocol its
 * agent speaks: tsync's estimates on the host, trace-cmd's PTP lets the
 * agent estimate. Every peer exchanges probes, so it is always usable; it
 * ranks after any method that reads the offset without a network between.
 * The offset it gives is host minus guest: scaling 1, fraction 0. Its
 * error bound is the estimator's (common/sync/estimate.h), or unknown
 * when the agent estimated.
 */
#include <string.h>

#include "host/sync/sync_priv.h"

/* After any method that reads the offset with no network between
 * (trace-cmd ranks its KVM method 0 and its PTP 6000). */
#define PROBES_RANK 10

/* Every peer runs probe rounds. */
static int probes_usable(const struct sync_target *t, const struct round_opts *o, char *why,
			 size_t whylen)
{
	(void)t;
	(void)o;
	(void)why;
	(void)whylen;
	return 0;
}

/* The state is the peer itself. */
static int probes_open(const struct sync_target *t, const struct round_opts *o, void **state,
		       char *err, size_t errlen)
{
	(void)o;
	(void)err;
	(void)errlen;
	*state = t->peer;
	return 0;
}

/* Turns a round into a sample; see sync_priv.h. */
void sync_probes_result(const struct round_result *r, struct sync_result *res)
{
	res->round = r->round_id;
	res->cpu = r->cpu;
	res->host_cpu = r->host_cpu;
	res->status = r->status;
	memcpy(res->error, r->error, sizeof(res->error) < sizeof(r->error) ?
	       sizeof(res->error) : sizeof(r->error));
	res->error[sizeof(res->error) - 1] = '\0';
	res->round_ns = r->round_ns;
	if (r->status)
		return;
	res->guest_ts = r->est.guest_ts;
	res->offset_ns = r->est.offset_ns;
	res->scaling = 1;
	res->frac = 0;
	res->error_ns = r->est.error_ns >= 0 ? r->est.error_ns : SYNC_UNKNOWN;
	res->probes = (struct sync_probes){
		.delay_ns = r->est.delay_ns >= 0 ? r->est.delay_ns : SYNC_UNKNOWN,
		.used = r->est.used, .valid = r->est.valid, .sent = r->est.sent,
		.stop = r->stop,
	};
}

/* One probe round; see sync_priv.h. */
static int probes_sample(void *state, uint32_t cpu, const struct round_opts *o,
			 struct sync_result *res)
{
	struct round_result r;
	int ret = peer_round(state, cpu, o, &r);

	sync_probes_result(&r, res);
	return ret;
}

/* The stamps, who estimates and how many probes (a dialect may fix the
 * last two). */
static void probes_info(const void *state, const struct round_opts *o, struct sync_info *info)
{
	const struct peer *p = state;

	info->stamp = tsync_stamp_source_name(o->source);
	info->estimator = peer_estimator(p) ? peer_estimator(p) :
			  tsync_estimator_name(o->estimator);
	info->probes = peer_fixed_probes(p) ? peer_fixed_probes(p) : o->nprobes;
	info->adaptive = !peer_fixed_probes(p) && !o->fixed_count;
}

/* Nothing of its own to free. */
static void probes_close(void *state)
{
	(void)state;
}

const struct sync_method_ops sync_probes_ops = {
	.name = "probes",
	.rank = PROBES_RANK,
	.usable = probes_usable,
	.open = probes_open,
	.sample = probes_sample,
	.info = probes_info,
	.close = probes_close,
};
