// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of host/cmd/doctor_judge.c: synthetic host facts, exact findings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "host/cmd/doctor.h"

static const char host_clocks[][TSYNC_TRACE_CLOCK_NAME_MAX] = { "local", "global", "mono" };

/* A healthy host: root, tracefs, clock local, kvm, vsock, 10 GiB, rtprio. */
static struct doctor_host_facts healthy(void)
{
	return (struct doctor_host_facts){
		.uid = 0, .tracefs_dir = "/sys/kernel/tracing", .clock = "local",
		.nclocks = 3, .clocks = host_clocks, .kvm_dir = true, .vhost_vsock = true,
		.vhost_dev = true, .out_dir = "/var/tmp", .free_bytes = 10ull << 30,
		.rlimit_rtprio = 0,
	};
}

/* The finding of @check in @r (fails the test when there is none). */
static const struct doctor_finding *find(const struct doctor_report *r, const char *check)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].check, check))
			return &r->f[i];
	fail_msg("no finding %s", check);
	return NULL;
}

static void test_healthy(void **state)
{
	struct doctor_host_facts f = healthy();
	struct doctor_report r = { .n = 0 };
	static const char *const order[] = { "root", "tracefs", "clock", "kvm", "vsock",
					     "disk", "rtprio" };

	(void)state;
	doctor_judge_host(&f, &r);
	assert_int_equal(r.n, 7);
	for (int i = 0; i < r.n; i++) {
		assert_string_equal(r.f[i].check, order[i]);
		assert_int_equal(r.f[i].status, DOCTOR_OK);
		assert_string_equal(r.f[i].fix, "");
	}
	assert_string_equal(find(&r, "clock")->detail,
			    "trace clock 'local'; the host offers local, global, mono");
	assert_string_equal(find(&r, "disk")->detail, "10240 MiB free in /var/tmp");
}

static void test_no_tracefs_not_root(void **state)
{
	struct doctor_host_facts f = healthy();
	struct doctor_report r = { .n = 0 };

	(void)state;
	f.uid = 1000;
	f.tracefs = -EACCES;
	doctor_judge_host(&f, &r);
	assert_int_equal(find(&r, "root")->status, DOCTOR_FAIL);
	assert_string_equal(find(&r, "root")->detail,
			    "not root (uid 1000): recording needs root for tracefs");
	assert_string_equal(find(&r, "tracefs")->detail,
			    "tracefs at /sys/kernel/tracing: instances not writable (Permission denied)");
	assert_string_equal(find(&r, "tracefs")->fix, "run it as root");
	f.uid = 0;
	f.tracefs = -ENODEV;
	f.tracefs_dir = NULL;
	f.nclocks = -ENODEV;
	r.n = 0;
	doctor_judge_host(&f, &r);
	assert_int_equal(find(&r, "root")->status, DOCTOR_OK);
	assert_string_equal(find(&r, "tracefs")->detail,
			    "tracefs is not mounted at /sys/kernel/tracing");
	assert_string_equal(find(&r, "tracefs")->fix,
			    "mount it, as root: mount -t tracefs nodev /sys/kernel/tracing");
	assert_int_equal(find(&r, "clock")->status, DOCTOR_FAIL);
}

static void test_clock_missing(void **state)
{
	struct doctor_host_facts f = healthy();
	struct doctor_report r = { .n = 0 };

	(void)state;
	f.clock = "x86-tsc";
	doctor_judge_host(&f, &r);
	assert_int_equal(find(&r, "clock")->status, DOCTOR_FAIL);
	assert_string_equal(find(&r, "clock")->detail,
			    "this host has no trace clock 'x86-tsc'; it offers local, global, mono");
}

static void test_warnings(void **state)
{
	struct doctor_host_facts f = healthy();
	struct doctor_report r = { .n = 0 };

	(void)state;
	f.kvm_dir = false;
	f.vhost_vsock = false;
	f.rtprio = -EPERM;
	f.free_bytes = 512ull << 20;
	doctor_judge_host(&f, &r);
	assert_int_equal(find(&r, "kvm")->status, DOCTOR_WARN);
	assert_int_equal(find(&r, "vsock")->status, DOCTOR_WARN);
	assert_string_equal(find(&r, "vsock")->detail, "vhost_vsock not loaded, /dev/vhost-vsock "
			    "present: vsock guests cannot be reached from here (TCP and hvsock can)");
	assert_int_equal(find(&r, "disk")->status, DOCTOR_WARN);
	assert_int_equal(find(&r, "rtprio")->status, DOCTOR_WARN);
	assert_string_equal(find(&r, "rtprio")->detail, "real-time priority not allowed "
			    "(Operation not permitted, RLIMIT_RTPRIO 0): sync probes run at normal "
			    "priority and offsets are noisier");
	/* the disk's two limits */
	f.free_bytes = DOCTOR_DISK_FAIL_BYTES - 1;
	r.n = 0;
	doctor_judge_host(&f, &r);
	assert_int_equal(find(&r, "disk")->status, DOCTOR_FAIL);
	f.free_bytes = DOCTOR_DISK_WARN_BYTES;
	r.n = 0;
	doctor_judge_host(&f, &r);
	assert_int_equal(find(&r, "disk")->status, DOCTOR_OK);
	f.debugfs = -ENOENT;
	r.n = 0;
	doctor_judge_host(&f, &r);
	assert_string_equal(find(&r, "kvm")->fix,
			    "mount it, as root: mount -t debugfs none /sys/kernel/debug");
}

/* A full report keeps its last slot for the newest finding. */
static void test_full_report(void **state)
{
	struct doctor_report r = { .n = 0 };

	(void)state;
	for (int i = 0; i < DOCTOR_MAX_FINDINGS + 3; i++)
		doctor_add(&r, "x", DOCTOR_OK, NULL, "%d", i);
	assert_int_equal(r.n, DOCTOR_MAX_FINDINGS);
	assert_string_equal(r.f[DOCTOR_MAX_FINDINGS - 1].detail, "14");
	assert_string_equal(doctor_status_name(DOCTOR_FAIL), "fail");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_no_tracefs_not_root),
		cmocka_unit_test(test_clock_missing),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_full_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
