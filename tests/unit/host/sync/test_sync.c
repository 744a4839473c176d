// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/sync: the choice of a sync method by rank among the
 * usable ones (with made-up methods, one of them reading an offset and a
 * scaling with no probes, as KVM's would), and the probe method's turning
 * of a round into a sample, for both dialects' rounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/cli/recopt.h"
#include "host/sync/sync.h"
#include "host/sync/sync_priv.h"

/* A method usable only with clock x86-tsc, reading per CPU an offset, a
 * scaling and an exact bound, as KVM's TSC offset would. */
static int direct_usable(const struct sync_target *t, const struct round_opts *o, char *why,
			 size_t whylen)
{
	(void)t;
	if (strcmp(o->clock, "x86-tsc")) {
		snprintf(why, whylen, "clock %s is not the TSC", o->clock);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int direct_open(const struct sync_target *t, const struct round_opts *o, void **state,
		       char *err, size_t errlen)
{
	(void)t;
	(void)o;
	(void)err;
	(void)errlen;
	*state = NULL;
	return 0;
}

static int direct_sample(void *state, uint32_t cpu, const struct round_opts *o,
			 struct sync_result *res)
{
	(void)state;
	(void)o;
	res->guest_ts = 1000 + cpu;
	res->offset_ns = -123456789;
	res->scaling = 3;
	res->frac = 1;
	res->error_ns = 0;
	return 0;
}

static void direct_close(void *state)
{
	(void)state;
}

static const struct sync_method_ops direct = {
	.name = "direct", .rank = 0, .usable = direct_usable, .open = direct_open,
	.sample = direct_sample, .close = direct_close,
};

/* Never usable, and says nothing why. */
static int never_usable(const struct sync_target *t, const struct round_opts *o, char *why,
			size_t whylen)
{
	(void)t;
	(void)o;
	(void)why;
	(void)whylen;
	return -ENODEV;
}

static const struct sync_method_ops never = {
	.name = "never", .rank = 5, .usable = never_usable, .open = direct_open,
	.sample = direct_sample, .close = direct_close,
};

/* The best-ranked usable method wins, whatever the order listed. */
static void test_pick(void **state)
{
	const struct sync_method_ops *list[] = { &sync_probes_ops, &never, &direct };
	const struct sync_method_ops *got = NULL;
	struct sync_target t = { .name = "vm1" };
	struct round_opts o = { .clock = "x86-tsc" };
	char err[300];

	(void)state;
	assert_int_equal(sync_pick(list, 3, &t, &o, &got, err, sizeof(err)), 0);
	assert_ptr_equal(got, &direct);
	/* the direct one is not usable with another clock: probes, the rest */
	o.clock = "local";
	assert_int_equal(sync_pick(list, 3, &t, &o, &got, err, sizeof(err)), 0);
	assert_ptr_equal(got, &sync_probes_ops);
	assert_string_equal(sync_probes_ops.name, "probes");
	/* none usable: each one's reason */
	assert_int_equal(sync_pick(list + 1, 2, &t, &o, &got, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "no sync method for vm1: never: not usable; direct: clock local "
			    "is not the TSC");
}

/* --tsync-method: only the named method is weighed; the others are
 * passed over quietly, and named when it is not usable either. */
static void test_pick_method(void **state)
{
	const struct sync_method_ops *list[] = { &sync_probes_ops, &never, &direct };
	const struct sync_method_ops *got = NULL;
	struct sync_target t = { .name = "vm1" };
	struct round_opts o = { .clock = "x86-tsc", .method = "probes" };
	char err[300];

	(void)state;
	assert_int_equal(sync_pick(list, 3, &t, &o, &got, err, sizeof(err)), 0);
	assert_ptr_equal(got, &sync_probes_ops);
	assert_string_equal(err, "");
	o.method = "auto";
	assert_int_equal(sync_pick(list, 3, &t, &o, &got, err, sizeof(err)), 0);
	assert_ptr_equal(got, &direct);
	o.method = "direct";
	o.clock = "local";
	assert_int_equal(sync_pick(list, 3, &t, &o, &got, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "no sync method for vm1: probes: not asked for (--tsync-method "
			    "direct); never: not asked for (--tsync-method direct); direct: clock "
			    "local is not the TSC");
	/* the external method ranks between a direct one and the probes, and
	 * keeps quiet before a connection */
	assert_true(direct.rank < sync_external_ops.rank);
	assert_true(sync_external_ops.rank < sync_probes_ops.rank);
	assert_int_equal(sync_external_ops.usable(&t, &o, err, sizeof(err)), -ENODEV);
}

/* The probes rank after a method that reads the offset directly. */
static void test_rank(void **state)
{
	(void)state;
	assert_true(direct.rank < sync_probes_ops.rank);
}

/* A sample of a direct method holds its scaling and fraction. */
static void test_direct_sample(void **state)
{
	struct sync_result r = { 0 };

	(void)state;
	assert_int_equal(direct.sample(NULL, 2, NULL, &r), 0);
	assert_int_equal(r.guest_ts, 1002);
	assert_int_equal(r.scaling, 3);
	assert_int_equal(r.frac, 1);
	assert_int_equal(r.probes.sent, 0);
}

/* tsync's round: its estimate, scaling 1 and fraction 0, its probes. */
static void test_probes_tsync(void **state)
{
	struct round_result rr = {
		.round_id = 7, .cpu = 1, .host_cpu = 1, .round_ns = 2500000,
		.est = { .offset_ns = -42, .error_ns = 800, .delay_ns = 1700,
			 .guest_ts = 123456789, .used = 300, .valid = 338, .sent = 339 },
		.stop = TSYNC_STOP_CONVERGED,
	};
	struct sync_result r;

	(void)state;
	memset(&r, 0xff, sizeof(r));
	sync_probes_result(&rr, &r);
	assert_int_equal(r.round, 7);
	assert_int_equal(r.cpu, 1);
	assert_int_equal(r.host_cpu, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.guest_ts, 123456789);
	assert_int_equal(r.offset_ns, -42);
	assert_int_equal(r.scaling, 1);
	assert_int_equal(r.frac, 0);
	assert_int_equal(r.error_ns, 800);
	assert_int_equal(r.round_ns, 2500000);
	assert_int_equal(r.probes.delay_ns, 1700);
	assert_int_equal(r.probes.used, 300);
	assert_int_equal(r.probes.valid, 338);
	assert_int_equal(r.probes.sent, 339);
	assert_int_equal(r.probes.stop, TSYNC_STOP_CONVERGED);
}

/* trace-cmd's round: the agent's offset, no bound, no delay. */
static void test_probes_tcmd(void **state)
{
	struct round_result rr = {
		.round_id = 1, .cpu = 0, .host_cpu = 1,
		.est = { .offset_ns = 1917, .error_ns = ROUND_UNKNOWN, .delay_ns = ROUND_UNKNOWN,
			 .guest_ts = 99, .sent = 339 },
		.stop = TSYNC_STOP_MAX,
	};
	struct sync_result r = { 0 };

	(void)state;
	sync_probes_result(&rr, &r);
	assert_int_equal(r.offset_ns, 1917);
	assert_int_equal(r.scaling, 1);
	assert_int_equal(r.error_ns, SYNC_UNKNOWN);
	assert_int_equal(r.probes.delay_ns, SYNC_UNKNOWN);
	assert_int_equal(r.probes.used, 0);
	assert_int_equal(r.probes.sent, 339);
	assert_int_equal(r.host_cpu, 1);
}

/* A failed round: its status and reason, nothing else. */
static void test_probes_failed(void **state)
{
	struct round_result rr = { .round_id = 3, .cpu = 2, .status = -ERANGE };
	struct sync_result r = { 0 };

	(void)state;
	snprintf(rr.error, sizeof(rr.error), "the trace-cmd agent found no usable probe");
	sync_probes_result(&rr, &r);
	assert_int_equal(r.status, -ERANGE);
	assert_string_equal(r.error, "the trace-cmd agent found no usable probe");
	assert_int_equal(r.round, 3);
	assert_int_equal(r.scaling, 0);
}

/* Never usable, and with nothing to say (-ENODEV). */
static int quiet_usable(const struct sync_target *t, const struct round_opts *o, char *why,
			size_t whylen)
{
	(void)t;
	(void)o;
	snprintf(why, whylen, "not here");
	return -ENODEV;
}

static const struct sync_method_ops quiet = {
	.name = "quiet", .rank = 1, .usable = quiet_usable, .open = direct_open,
	.sample = direct_sample, .close = direct_close,
};

/* What a chosen method says of the better ones passed over: their
 * reasons, not the worse ones' nor the quiet ones'. */
static void test_pick_fallback(void **state)
{
	const struct sync_method_ops *list[] = { &sync_probes_ops, &never, &direct, &quiet };
	const struct sync_method_ops *got = NULL;
	struct sync_target t = { .name = "vm1" };
	struct round_opts o = { .clock = "x86-tsc" };
	char err[300];

	(void)state;
	/* the best one runs: nothing passed over */
	assert_int_equal(sync_pick(list, 4, &t, &o, &got, err, sizeof(err)), 0);
	assert_ptr_equal(got, &direct);
	assert_string_equal(err, "");
	/* probes run: the direct one said; never and quiet (-ENODEV) not */
	o.clock = "local";
	assert_int_equal(sync_pick(list, 4, &t, &o, &got, err, sizeof(err)), 0);
	assert_ptr_equal(got, &sync_probes_ops);
	assert_string_equal(err, "direct: clock local is not the TSC");
	/* none usable: the quiet one is said too */
	assert_int_equal(sync_pick(list + 3, 1, &t, &o, &got, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "no sync method for vm1: quiet: not here");
}

/* The kvm method: rank 0 as trace-cmd's, before the probes; its reasons
 * in one line; silent for a guest with no VM on a clock not the TSC. */
static void test_kvm_usable(void **state)
{
	struct sync_target t = { .name = "vm1" };
	struct round_opts o = { .clock = "x86-tsc" };
	char why[256] = "";

	(void)state;
	assert_string_equal(sync_kvm_ops.name, "kvm");
	assert_int_equal(sync_kvm_ops.rank, 0);
	assert_true(sync_kvm_ops.rank < sync_probes_ops.rank);
	assert_int_equal(sync_kvm_ops.usable(&t, &o, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "no PID: the guest's QEMU process is not known (-A NAME, "
			    "NAME@CID, CID, or --vm after a TCP -A)");
	t.vm_pid = 1234;
	o.clock = "local";
	assert_int_equal(sync_kvm_ops.usable(&t, &o, why, sizeof(why)), -ENOTSUP);
	assert_string_equal(why, "clock local is not x86-tsc: KVM's offsets are in TSC cycles");
	/* a trace-cmd agent, before connecting: its protocol passes (kvm is
	 * offered to it), the VM's files decide; another protocol does not */
	o.clock = "x86-tsc";
	t.protocol = "tcmd";
	why[0] = '\0';
	assert_int_not_equal(sync_kvm_ops.usable(&t, &o, why, sizeof(why)), 0);
	assert_null(strstr(why, "protocol"));
	t.protocol = "other";
	assert_int_equal(sync_kvm_ops.usable(&t, &o, why, sizeof(why)), -ENOTSUP);
	assert_string_equal(why, "protocol other: its agent takes no kvm method");
	t.protocol = NULL;
	o.clock = "local";
	t.vm_pid = 0;
	why[0] = '\0';
	assert_int_equal(sync_kvm_ops.usable(&t, &o, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "");
}

/* The clock a method of its own clock wants: kvm's x86-tsc, only when
 * kvm can serve the guest (here: no VM known, so none, and why). */
static void test_method_clock(void **state)
{
	struct sync_target t = { .name = "vm1" };
	char why[256];

	(void)state;
	assert_string_equal(sync_kvm_ops.clock, "x86-tsc");
	assert_null(sync_probes_ops.clock);
	assert_null(sync_method_clock(&t, why, sizeof(why)));
	assert_string_equal(why, "no PID: the guest's QEMU process is not known (-A NAME, "
			    "NAME@CID, CID, or --vm after a TCP -A)");
}

/* --tsync-method's choices (common/cli) are "auto" and exactly the
 * methods of the table. */
static void test_method_choices(void **state)
{
	const struct sync_method_ops *const table[] = { &sync_kvm_ops, &sync_probes_ops,
							 &sync_external_ops };
	size_t n = 0;

	(void)state;
	assert_string_equal(tsync_method_choices[0], "auto");
	for (const char *const *c = tsync_method_choices + 1; *c; c++, n++)
		assert_true(sync_method_named(*c));
	assert_int_equal(n, sizeof(table) / sizeof(table[0]));
	for (size_t i = 0; i < n; i++) {
		bool found = false;

		for (const char *const *c = tsync_method_choices + 1; *c; c++)
			found |= !strcmp(*c, table[i]->name);
		assert_true(found);
	}
	assert_false(sync_method_named("auto"));
	assert_false(sync_method_named("ptp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_pick_fallback),
		cmocka_unit_test(test_kvm_usable),
		cmocka_unit_test(test_method_clock),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_direct_sample),
		cmocka_unit_test(test_pick_method),
		cmocka_unit_test(test_probes_tsync),
		cmocka_unit_test(test_probes_tcmd),
		cmocka_unit_test(test_probes_failed),
		cmocka_unit_test(test_method_choices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
