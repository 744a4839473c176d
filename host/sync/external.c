// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The external method (host/sync/sync_priv.h): machines whose time
 * daemons (ptp4l, chrony: common/clock/clock.h) keep CLOCK_REALTIME in
 * step. For a clock those daemons discipline, tai, or mono and boot
 * through their relation to CLOCK_REALTIME as each machine reads it
 * (CLOCK_STATE), the offset is the difference of the two relations (0
 * for tai on machines with the same TAI offset), with the bound the
 * daemons report, the host's plus the guest's, and half of each
 * relation's reading. It still runs a probe round as a check, and warns,
 * once per machine, when the probes' estimate and the daemons' disagree
 * beyond both bounds: a daemon that claims more than it holds, or
 * machines not on one timeline.
 *
 * It is usable only when both daemons say they are synchronized (with
 * no daemon on a side at all it keeps quiet, as kvm does off KVM): finding
 * that out asks the agent (one CLOCK_REQ), the one exception to the
 * rule that usable() does no I/O with the guest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "common/clock/clock.h"
#include "host/sync/sync_priv.h"

/* Between kvm (no network at all) and probes. */
#define EXTERNAL_RANK 5

struct external {
	struct peer *peer;
	const char *name;
	struct tsync_clock_state host, guest;	/* the last readings */
	uint32_t disagreements;
	char detail[512];
};

/* The host's daemon, as @o names it (the defaults of tsync-agent's). */
static void host_cfg(const struct round_opts *o, struct agent_clock_cfg *c)
{
	if (o->host_clock) {
		*c = *o->host_clock;
		return;
	}
	agent_clock_cfg_init(c, NULL, NULL, NULL, 0);
}

/* Returns true for a trace clock the daemons discipline (with its
 * relation to CLOCK_REALTIME read on each side). */
static bool disciplined(const char *clock)
{
	return !strcmp(clock, "tai") || !strcmp(clock, "mono") || !strcmp(clock, "boot");
}

/* Returns true if this kernel has trace clock @clock (tai needs 5.10). */
static bool host_has_clock(const char *clock)
{
	char buf[512];
	FILE *f = fopen("/sys/kernel/tracing/trace_clock", "r");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		for (char *w = strtok(buf, " \n[]"); w; w = strtok(NULL, " \n[]"))
			found |= !strcmp(w, clock);
	fclose(f);
	return found;
}

/* Reads both sides into @x; 0, or -EAGAIN with why in @why when a
 * daemon is not synchronized, -ENODEV (why said too) when a side has no
 * daemon to read at all, or -errno. */
static int read_both(struct external *x, const struct round_opts *o, char *why, size_t whylen)
{
	struct agent_clock_cfg hc;
	int ret;

	ret = peer_clock_state(x->peer, o->clock, &x->guest, why, whylen);
	if (ret == -EOPNOTSUPP)
		return -ENODEV;		/* an agent that cannot tell: nothing to say */
	if (ret)
		return ret;
	host_cfg(o, &hc);
	agent_clock_state(&hc, o->clock, &x->host);
	if (x->guest.source == TSYNC_CLOCK_SRC_NONE || x->host.source == TSYNC_CLOCK_SRC_NONE) {
		snprintf(why, whylen, "no time daemon on the %s: %s",
			 x->guest.source ? "host" : "guest",
			 x->guest.source ? x->host.detail : x->guest.detail);
		return -ENODEV;
	}
	if (!x->guest.synced || !x->guest.read_ns) {
		snprintf(why, whylen, "guest: %s not synchronized: %s",
			 tsync_clock_source_name(x->guest.source), x->guest.detail);
		return -EAGAIN;
	}
	if (!x->host.synced || !x->host.read_ns) {
		snprintf(why, whylen, "host: %s not synchronized: %s",
			 tsync_clock_source_name(x->host.source), x->host.detail);
		return -EAGAIN;
	}
	return 0;
}

static int external_usable(const struct sync_target *t, const struct round_opts *o, char *why,
			   size_t whylen)
{
	struct external x = { .peer = t->peer };

	if (!t->peer)
		return -ENODEV;		/* not connected: nothing to ask yet */
	if (!disciplined(o->clock)) {
		/* the common case (-C local): said only when asked for, as
		 * kvm says nothing off KVM */
		snprintf(why, whylen, "clock %s is not one the time daemons discipline "
			 "(tai; mono or boot)", o->clock);
		return -ENODEV;
	}
	if (!host_has_clock(o->clock)) {
		snprintf(why, whylen, "this kernel has no trace clock %s", o->clock);
		return -ENOENT;
	}
	return read_both(&x, o, why, whylen);
}

static int external_open(const struct sync_target *t, const struct round_opts *o, void **state,
			 char *err, size_t errlen)
{
	struct external *x = calloc(1, sizeof(*x));

	(void)o;
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->peer = t->peer;
	x->name = t->name;
	*state = x;
	return 0;
}

/* The clock's offset from CLOCK_REALTIME in @s's reading. */
static int64_t relation(const struct tsync_clock_state *s)
{
	return s->realtime_ns - s->clock_ns;
}

/* Saturating sum of bounds (a daemon's may be all ones). */
static int64_t bound_sum(uint64_t a, uint64_t b)
{
	uint64_t s = a + b;

	return s < a || s > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)s;
}

/* Warns once when the probes' @r and the daemons' @res disagree beyond
 * both bounds. */
static void check(struct external *x, const struct round_result *r, const struct sync_result *res)
{
	int64_t d = r->est.offset_ns - res->offset_ns;

	if (r->status || r->est.error_ns < 0)
		return;
	if (llabs(d) <= bound_sum((uint64_t)r->est.error_ns, (uint64_t)res->error_ns))
		return;
	if (!x->disagreements++)
		log_warn("%s: the probes put the offset at %lld +- %lld ns, the time daemons at "
			 "%lld +- %lld ns (guest: %s %s, host: %s %s): they disagree by %lld ns, "
			 "beyond both bounds", x->name, (long long)r->est.offset_ns,
			 (long long)r->est.error_ns, (long long)res->offset_ns,
			 (long long)res->error_ns, tsync_clock_source_name(x->guest.source),
			 x->guest.detail, tsync_clock_source_name(x->host.source),
			 x->host.detail, (long long)d);
}

static int external_sample(void *state, uint32_t cpu, const struct round_opts *o,
			   struct sync_result *res)
{
	struct external *x = state;
	struct round_result r;
	int ret;

	ret = read_both(x, o, res->error, sizeof(res->error));
	if (x->host.source != TSYNC_CLOCK_SRC_NONE) {
		res->has_host_clock = true;
		res->host_clock = x->host;
	}
	if (ret == -EAGAIN || ret == -EOPNOTSUPP || ret == -ENODEV) {
		res->status = ret;
		return 0;
	}
	if (ret) {
		res->status = ret;
		return ret;
	}
	/* host = guest + (guest's realtime - clock) - (host's) */
	res->guest_ts = x->guest.clock_ns;
	res->offset_ns = relation(&x->guest) - relation(&x->host);
	res->scaling = 1;
	res->frac = 0;
	res->error_ns = bound_sum(bound_sum(x->host.bound_ns, x->guest.bound_ns),
				  (x->host.read_ns + x->guest.read_ns + 1) / 2);
	ret = peer_round(x->peer, cpu, o, &r);
	res->round = r.round_id;
	res->host_cpu = r.host_cpu;
	res->round_ns = r.round_ns;
	if (ret)
		return ret;
	res->probes = (struct sync_probes){ .delay_ns = r.est.delay_ns >= 0 ? r.est.delay_ns :
							SYNC_UNKNOWN,
					    .used = r.est.used, .valid = r.est.valid,
					    .sent = r.est.sent, .stop = r.stop };
	check(x, &r, res);
	return 0;
}

static void external_info(const void *state, const struct round_opts *o, struct sync_info *info)
{
	(void)state;
	info->stamp = tsync_stamp_source_name(o->source);
	info->estimator = "the time daemons (probes as a check)";
	info->probes = o->nprobes;
	info->adaptive = !o->fixed_count;
}

static const char *external_detail(void *state)
{
	struct external *x = state;
	const struct tsync_clock_state *s[2] = { &x->guest, &x->host };
	size_t len = 0;

	x->detail[0] = '\0';
	for (int i = 0; i < 2; i++)
		len += (size_t)snprintf(x->detail + len, sizeof(x->detail) - len,
					"%s%s: %s %s, offset %lld ns, bound %lld ns, stratum %u, "
					"master %s (%s)", i ? "; " : "", i ? "host" : "guest",
					tsync_clock_source_name(s[i]->source),
					s[i]->synced ? "synchronized" : "not synchronized",
					(long long)s[i]->offset_ns,
					s[i]->bound_ns == TSYNC_CLOCK_BOUND_UNKNOWN ? -1LL :
					(long long)s[i]->bound_ns, s[i]->stratum,
					s[i]->master[0] ? s[i]->master : "-", s[i]->detail);
	if (x->disagreements)
		snprintf(x->detail + len, sizeof(x->detail) - len,
			 "; the probes disagreed %u time(s)", x->disagreements);
	return x->detail;
}

static void external_close(void *state)
{
	free(state);
}

const struct sync_method_ops sync_external_ops = {
	.name = "external",
	.rank = EXTERNAL_RANK,
	.usable = external_usable,
	.open = external_open,
	.sample = external_sample,
	.info = external_info,
	.detail = external_detail,
	.close = external_close,
};
