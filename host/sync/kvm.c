// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kvm method (host/sync/sync_priv.h): a sample of guest CPU N is vCPU
 * N's TSC offset and scaling as KVM holds them, read from debugfs
 * (host/kvm/kvm_debugfs.h) and turned at the host TSC of the moment into
 * a TIME_SHIFT sample in tsync's exact form (common/sync/kvm_tsc.h:
 * guest_ts the vCPU's TSC then, offset host - guest, scaling 1, fraction
 * 0). No probes cross a network: its rank, 0, is trace-cmd's for its own
 * kvm method, ahead of the probes. Every sample reads the files again,
 * and the host's kvm:kvm_write_tsc_offset events of the VM's threads
 * (host/kvm/kvm_trace.h, drained at each sample) place an offset KVM
 * rewrote during a recording at the host TSC of the write
 * (common/sync/kvm_window.h: the cuts, when the reading confirms the
 * event; else at the reading). Without tracefs or the event, one line
 * says so and changes are cut at the reading. The changes are counted
 * (sync_method_changes()) for the summary.
 * A scaled vCPU's samples are exact only within kvm_tsc_max_span() of
 * each other: the method's max_interval_ns (kvm_tsc_max_interval_ns(),
 * in the host's TSC2NSEC terms) caps a recording's sync interval.
 *
 * Usable when the trace clock is x86-tsc, the guest's QEMU process is
 * known (sync_target.vm_pid: host/guest/agent_arg.c finds it), its
 * debugfs directory has one vCPU per guest CPU and every vCPU reads, and
 * the guest speaks tsync's protocol, or trace-cmd's and its agent took
 * the kvm time sync offered (then each sample is trace-cmd's exchange:
 * the agent stamps a marker on the vCPU and sends the stamp, the host
 * reads debugfs and answers with trace-cmd's offset, scaling and
 * fraction, and the sample is the exact relation at that stamp). Otherwise one line
 * says which of these is missing; with neither a VM nor clock x86-tsc it
 * says nothing (-ENODEV: not a KVM guest, the common case elsewhere).
 *
 * A sample fails alone (status -EBUSY, the method goes on) while the vCPU
 * runs a nested guest, whose offset debugfs then shows; when the VM's
 * files are gone (-ENOENT) the guest goes on with the probes (sync.c).
 *
 * Error bound: 0 cycles unscaled, 2 scaled (the reader's rounding,
 * kvm_tsc.h), provided KVM runs the vCPU with the offset it shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "common/base/timeutil.h"
#include "common/base/log.h"
#include "common/sync/kvm_tsc.h"
#include "common/sync/kvm_window.h"
#include "common/tracemeta/tsc2nsec.h"
#include "host/kvm/kvm_debugfs.h"
#include "host/kvm/kvm_trace.h"
#include "host/sync/sync_priv.h"

/* trace-cmd's rank for its kvm method: before any probe method. */
#define KVM_RANK 0

_Static_assert(KVM_WINDOW_MAX_CUTS <= SYNC_CUT_MAX, "a window's cuts fit a sync result");

struct kvm_state {
	struct kvm_debugfs *d;
	uint32_t *rounds;	/* [guest CPU]: samples taken */
	struct kvm_window *win;	/* [guest CPU]: its readings and events */
	int ncpu;
	struct kvm_trace *tr;	/* the VM's offset writes; NULL: not traced */
	struct tracedat_tsc2nsec tsc2nsec;	/* mult 0: not known */
	struct peer *peer;	/* the agent's exchange (trace-cmd's kvm); NULL: none */
};

/*
 * trace-cmd's kvm exchange around a reading: the agent's stamp first
 * (peer_kvm_request() into *@gts), then, after @k was read (@ret 0),
 * trace-cmd's answer from it (kvm_tsc_tcmd()); the agent waits for one
 * either way (an unreadable vCPU answers offset 0). A stamp of 0 (the
 * agent found no marker) is a failed sample, as trace-cmd drops it.
 */
static int kvm_answer(struct peer *p, const struct kvm_tsc *k, int ret, int64_t gts,
		      char *err, size_t errlen)
{
	struct kvm_tsc_tcmd a = { .scaling = 1 };
	struct peer_kvm_answer pa;
	char e[128];
	int r = ret;

	if (!r)
		r = kvm_tsc_tcmd(k->offset, kvm_tsc_scaled(k), k->ratio, k->frac, &a);
	pa = (struct peer_kvm_answer){ .guest_ts = gts, .offset = a.offset,
				       .scaling = a.scaling, .frac = a.frac };
	if (peer_kvm_answer(p, &pa, e, sizeof(e))) {
		snprintf(err, errlen, "%s", e);
		return -EPIPE;
	}
	if (!r && gts <= 0) {
		snprintf(err, errlen, "the agent found no marker of its own");
		r = -ENODATA;
	}
	return r;
}

/* The guest CPUs a target has: its agent's count (trace-cmd's rule: as
 * many vCPUs as guest CPUs), or any when not known. */
static int target_ncpu(const struct sync_target *t)
{
	return t->nvcpu > 0 ? t->nvcpu : 0;
}

static int kvm_usable(const struct sync_target *t, const struct round_opts *o, char *why,
		      size_t whylen)
{
#if defined(__x86_64__) || defined(__i386__)
	const char *proto;
	int ret;

	if (t->vm_pid <= 0 && !kvm_tsc_clock_ok(o->clock))
		return -ENODEV;	/* no KVM guest in sight: nothing to say */
	if (!kvm_tsc_clock_ok(o->clock)) {
		snprintf(why, whylen, "clock %s is not " KVM_TSC_CLOCK
			 ": KVM's offsets are in TSC cycles", o->clock ? o->clock : "(none)");
		return -ENOTSUP;
	}
	if (t->vm_pid <= 0) {
		snprintf(why, whylen, "no PID: the guest's QEMU process is not known "
			 "(-A NAME, NAME@CID, CID, or --vm after a TCP -A)");
		return -EINVAL;
	}
	proto = t->peer ? peer_name(t->peer) : t->protocol;
	/* trace-cmd's agent takes kvm when offered (peer_opts.kvm): known
	 * once connected */
	if (t->peer && peer_kvm_exchange(t->peer))
		proto = NULL;
	if (proto && strcmp(proto, "tsync") && (t->peer || strcmp(proto, "tcmd"))) {
		snprintf(why, whylen, "protocol %s: %s", proto, t->peer ?
			 "the agent did not take kvm time sync" :
			 "its agent takes no kvm method");
		return -ENOTSUP;
	}
	ret = kvm_debugfs_usable(NULL, t->vm_pid, target_ncpu(t), o->clock, why, whylen);
	/* the host's own reason first: the hello offered kvm only without one */
	if (!ret && t->peer && peer_takes_method(t->peer, "kvm", why, whylen))
		ret = -ENOTSUP;
	return ret;
#else
	(void)t;
	(void)o;
	snprintf(why, whylen, "not an x86 host");
	return -ENOTSUP;
#endif
}

/* Opens the tracing of the VM's offset writes; without it, one line says
 * why (changes are then cut at the reading after them). */
static void open_trace(struct kvm_state *s, const struct sync_target *t)
{
	char why[256] = "";

	if (kvm_trace_open(t->vm_pid, &s->tr, why, sizeof(why))) {
		s->tr = NULL;
		log_warn("guest %s: kvm: offset changes cut at the sync after them, not when "
			 "they happen: %s", t->name, why);
		return;
	}
	log_debug("guest %s: kvm: %s traces kvm:kvm_write_tsc_offset of PID %d's threads",
		  t->name, kvm_trace_instance(s->tr), (int)t->vm_pid);
}

static void kvm_close(void *state)
{
	struct kvm_state *s = state;

	if (!s)
		return;
	kvm_trace_close(s->tr);
	kvm_debugfs_close(s->d);
	free(s->rounds);
	free(s->win);
	free(s);
}

static int kvm_open(const struct sync_target *t, const struct round_opts *o, void **state,
		    char *err, size_t errlen)
{
	struct kvm_state *s = calloc(1, sizeof(*s));
	int ret;

	(void)o;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (t->peer && peer_kvm_exchange(t->peer))
		s->peer = t->peer;
	ret = kvm_debugfs_open(NULL, t->vm_pid, target_ncpu(t), &s->d, err, errlen);
	if (ret)
		goto fail;
	s->ncpu = kvm_debugfs_ncpu(s->d);
	if (tsync_tsc2nsec_read(&s->tsc2nsec))
		s->tsc2nsec.mult = 0;	/* the cap then assumes the fastest TSC */
	s->rounds = calloc((size_t)s->ncpu, sizeof(*s->rounds));
	s->win = calloc((size_t)s->ncpu, sizeof(*s->win));
	if (!s->rounds || !s->win) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	/* before the first reading: no write between it and the tracing */
	open_trace(s, t);
	*state = s;
	return 0;
fail:
	kvm_close(s);
	return ret;
}

/* One offset write: to its vCPU's window (a vCPU the guest does not have
 * is not the method's). */
static void on_write(const struct kvm_trace_event *e, void *ctx)
{
	struct kvm_state *s = ctx;
	int cpu = kvm_debugfs_cpu_of(s->d, (int)e->vcpu);
	struct kvm_tsc_change c = { e->host_ts, e->prev, e->next };

	log_debug("kvm: vcpu %u offset %lld -> %lld at host TSC %llu (thread %d)", e->vcpu,
		  (long long)e->prev, (long long)e->next, (unsigned long long)e->host_ts,
		  e->pid);
	if (cpu >= 0)
		kvm_window_add(&s->win[cpu], &c);
}

/*
 * The cuts of vCPU @cpu's reading @k, whose sample @ss is at host TSC
 * @host (the agent's stamp's, in trace-cmd's exchange), into @res: the
 * writes traced since are drained first.
 */
static int kvm_cuts(struct kvm_state *s, uint32_t cpu, const struct kvm_tsc *k,
		    uint64_t host, const struct tsync_shift_sample *ss, struct sync_result *res)
{
	struct tsync_shift_sample cut[KVM_WINDOW_MAX_CUTS];
	size_t n = 0;
	int ret;

	if (s->tr && (ret = kvm_trace_drain(s->tr, on_write, s)))
		log_debug("kvm: %s: %s", kvm_trace_instance(s->tr), strerror(-ret));
	ret = kvm_window_reading(&s->win[cpu], k, host, ss->guest_ts, cut, &n);
	for (size_t i = 0; !ret && i < n; i++)
		res->cut[i] = (struct sync_cut){ cut[i].guest_ts, cut[i].offset_ns };
	res->ncut = ret ? 0 : (uint32_t)n;
	return ret;
}

/* The sample of @k at the agent's stamp @gts: host - guest of the exact
 * inverse there (-tsc-offset unscaled, trace-cmd's offset). */
static int kvm_at_guest(const struct kvm_tsc *k, int64_t gts, struct tsync_shift_sample *ss)
{
	int64_t h;
	int ret = kvm_tsc_host(k, gts, &h);

	if (ret)
		return ret;
	ss->guest_ts = gts;
	ss->offset_ns = h - gts;
	return 0;
}

/* One reading of vCPU @cpu at the host TSC of the moment (trace-cmd's
 * dialect: at the agent's stamp, inside its exchange). */
static int kvm_sample(void *state, uint32_t cpu, const struct round_opts *o,
		      struct sync_result *res)
{
#if defined(__x86_64__) || defined(__i386__)
	struct kvm_state *s = state;
	int64_t t0 = tsync_now_ns();
	struct tsync_shift_sample ss;
	struct kvm_tsc k = { .ratio = 1 };
	int64_t gts = 0;
	int ret;

	(void)o;
	if ((int)cpu >= s->ncpu) {
		res->status = -EINVAL;
		snprintf(res->error, sizeof(res->error), "no vCPU %u", cpu);
		return 0;
	}
	res->round = s->rounds[cpu];
	if (s->peer) {
		ret = peer_kvm_request(s->peer, cpu, &gts, res->error, sizeof(res->error));
		if (ret)
			return res->status = ret;	/* the connection is gone */
	}
	ret = kvm_debugfs_tsc(s->d, (int)cpu, &k, res->error, sizeof(res->error));
	if (s->peer) {
		ret = kvm_answer(s->peer, &k, ret, gts, res->error, sizeof(res->error));
		if (ret == -EPIPE)
			return res->status = ret;
	}
	if (!ret) {
		uint64_t host = __rdtsc();
		int64_t h = 0;

		ret = s->peer ? kvm_at_guest(&k, gts, &ss) : kvm_tsc_sample(&k, host, &ss);
		/* the agent's stamp is the sample's moment: writes after it wait */
		if (!ret && s->peer && !kvm_tsc_host(&k, gts, &h))
			host = h > 0 ? (uint64_t)h : 0;
		if (!ret)
			ret = kvm_cuts(s, cpu, &k, host, &ss, res);
		if (!ret)
			s->rounds[cpu]++;
	}
	res->round_ns = tsync_now_ns() - t0;
	if (ret) {
		if (ret == -ERANGE)
			snprintf(res->error, sizeof(res->error), "vCPU %u: a TSC beyond int64",
				 cpu);
		res->status = ret;
		/* the VM's files are gone: no sample will come again */
		return ret == -ENOENT ? ret : 0;
	}
	res->guest_ts = ss.guest_ts;
	res->offset_ns = ss.offset_ns;
	res->scaling = 1;
	res->frac = 0;
	res->error_ns = kvm_tsc_scaled(&k) ? 2 : 0;
	return 0;
#else
	(void)state;
	(void)cpu;
	(void)o;
	res->status = -ENOTSUP;
	snprintf(res->error, sizeof(res->error), "not an x86 host");
	return -ENOTSUP;
#endif
}

/* The offset or scaling changes seen, over the vCPUs. */
static void kvm_changes(const void *state, struct sync_changes *c)
{
	const struct kvm_state *s = state;

	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		struct kvm_window_counts w;

		kvm_window_counts(&s->win[cpu], &w);
		c->at_event += w.at_event;
		c->at_reading += w.at_reading;
		c->unconfirmed += w.unconfirmed;
	}
}

/* The shortest cap of the CPUs read so far (kvm_tsc_max_interval_ns()):
 * a scaled vCPU's samples must lie within its span. */
static int64_t kvm_max_interval(const void *state)
{
	const struct kvm_state *s = state;
	int64_t cap = INT64_MAX;

	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		int64_t c;

		if (!s->rounds[cpu])
			continue;
		c = kvm_tsc_max_interval_ns(&s->win[cpu].last, s->tsc2nsec.mult,
					    s->tsc2nsec.shift);
		if (c < cap)
			cap = c;
	}
	return cap;
}

/* No stamps, no estimator, no probes. */
static void kvm_info(const void *state, const struct round_opts *o, struct sync_info *info)
{
	(void)state;
	(void)o;
	info->stamp = "tsc";	/* the host TSC each reading is taken at */
	info->estimator = NULL;
}

const struct sync_method_ops sync_kvm_ops = {
	.name = "kvm",
	.rank = KVM_RANK,
	.clock = KVM_TSC_CLOCK,
	.usable = kvm_usable,
	.open = kvm_open,
	.sample = kvm_sample,
	.info = kvm_info,
	.changes = kvm_changes,
	.max_interval_ns = kvm_max_interval,
	.close = kvm_close,
};
