// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * host/kvm/kvm_debugfs: a fake tree laid out as debugfs (kvm/PID-FD/
 * vcpuN/ with tsc-offset, the scaling files, guest_mode, pid) in a
 * temporary directory. Found by PID (not by a PID that is its prefix);
 * vCPUs in number order (vcpu10 after vcpu2); values read and turned into
 * KVM's map (the default ratio is no scaling); and every reason the
 * method is refused, with its one line: no PID, no KVM, no VM of that
 * PID, a VM without vCPUs, two VMs, vCPU count, no tsc-offset, one
 * scaling file without the other, a nested guest, a value that does not
 * parse, the VM gone, a clock other than x86-tsc; and the system's
 * debugfs (mounted, or not root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "host/kvm/kvm_debugfs.h"
#include "tests/unit/tmp_fixture.h"

static char root[64];

/* Writes @text to root/@rel (directories made). */
static void put(const char *rel, const char *text)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	fclose(f);
}

/* A vCPU directory with a tsc-offset of @off, guest_mode 0, pid @tid. */
static void put_vcpu(const char *vm, int n, const char *off, int tid)
{
	char rel[128], v[32];

	snprintf(rel, sizeof(rel), "kvm/%s/vcpu%d/tsc-offset", vm, n);
	put(rel, off);
	snprintf(rel, sizeof(rel), "kvm/%s/vcpu%d/guest_mode", vm, n);
	put(rel, "0\n");
	snprintf(rel, sizeof(rel), "kvm/%s/vcpu%d/pid", vm, n);
	snprintf(v, sizeof(v), "%d\n", tid);
	put(rel, v);
}

/* Both scaling files of a vCPU. */
static void put_scaling(const char *vm, int n, const char *ratio, const char *frac)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "kvm/%s/vcpu%d/tsc-scaling-ratio", vm, n);
	put(rel, ratio);
	snprintf(rel, sizeof(rel), "kvm/%s/vcpu%d/tsc-scaling-ratio-frac-bits", vm, n);
	put(rel, frac);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_kvm_debugfs.XXXXXX");
	assert_non_null(mkdtemp(root));
	/* PID 100: three vCPUs, numbered 0, 2, 10; Intel's default ratio on
	 * vcpu0, a real ratio (1.5) on vcpu2, no scaling files on vcpu10 */
	put_vcpu("100-7", 0, "-123456789\n", 101);
	put_scaling("100-7", 0, "281474976710656\n", "48\n");
	put_vcpu("100-7", 2, "-123456789\n", 102);
	put_scaling("100-7", 2, "422212465065984\n", "48\n");
	put_vcpu("100-7", 10, "5\n", 103);
	put("kvm/100-7/guest_mode", "0\n");	/* the VM's own stats file */
	/* PID 1000 shares the prefix "100"; PID 10 too */
	put_vcpu("1000-3", 0, "0\n", 1001);
	put_vcpu("10-5", 0, "0\n", 11);
	/* PID 200: an empty VM (no vCPU yet) beside the real one */
	put("kvm/200-4/guest_mode", "0\n");
	put_vcpu("200-9", 0, "42\n", 0);
	/* PID 300: only an empty VM */
	put("kvm/300-4/guest_mode", "0\n");
	/* PID 400: two VMs with vCPUs */
	put_vcpu("400-4", 0, "0\n", 0);
	put_vcpu("400-5", 0, "0\n", 0);
	/* PID 500: a ratio without its fraction bits */
	put_vcpu("500-4", 0, "0\n", 0);
	put("kvm/500-4/vcpu0/tsc-scaling-ratio", "281474976710656\n");
	/* PID 600: a vcpu directory without tsc-offset */
	put("kvm/600-4/vcpu0/guest_mode", "0\n");
	/* PID 700: vCPU 1 runs a nested guest */
	put_vcpu("700-4", 0, "0\n", 0);
	put_vcpu("700-4", 1, "-999\n", 0);
	put("kvm/700-4/vcpu1/guest_mode", "1\n");
	/* PID 800: garbage in tsc-offset; PID 900: an old kernel (no
	 * guest_mode, no pid) */
	put_vcpu("800-4", 0, "12x\n", 0);
	put("kvm/900-4/vcpu0/tsc-offset", "-1\n");
	/* not VMs */
	put("kvm/100-x/vcpu0/tsc-offset", "0\n");
	put("kvm/vcpu0", "0\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fixture_rmtree(root);
}

static void test_find_and_read(void **state)
{
	struct kvm_debugfs_vcpu v;
	struct kvm_debugfs *d;
	char why[256], want[128];
	struct kvm_tsc k;

	(void)state;
	assert_int_equal(kvm_debugfs_open(root, 100, 3, &d, why, sizeof(why)), 0);
	assert_int_equal(kvm_debugfs_ncpu(d), 3);
	snprintf(want, sizeof(want), "%s/kvm/100-7", root);
	assert_string_equal(kvm_debugfs_path(d), want);

	assert_int_equal(kvm_debugfs_read(d, 0, &v, why, sizeof(why)), 0);
	assert_int_equal(v.vcpu, 0);
	assert_int_equal(v.offset, -123456789);
	assert_true(v.scaling);
	assert_int_equal(v.ratio, 1ULL << 48);
	assert_int_equal(v.frac, 48);
	assert_int_equal(v.guest_mode, 0);
	assert_int_equal(v.tid, 101);
	assert_int_equal(kvm_debugfs_tsc(d, 0, &k, why, sizeof(why)), 0);
	assert_int_equal(k.offset, -123456789);
	assert_false(kvm_tsc_scaled(&k));	/* the default ratio */

	assert_int_equal(kvm_debugfs_read(d, 1, &v, why, sizeof(why)), 0);
	assert_int_equal(v.vcpu, 2);
	assert_int_equal(v.tid, 102);
	assert_int_equal(kvm_debugfs_tsc(d, 1, &k, why, sizeof(why)), 0);
	assert_true(kvm_tsc_scaled(&k));
	assert_int_equal(k.ratio, 3ULL << 47);
	assert_int_equal(k.frac, 48);

	assert_int_equal(kvm_debugfs_read(d, 2, &v, why, sizeof(why)), 0);
	assert_int_equal(v.vcpu, 10);		/* after vcpu2, not after vcpu0 */
	assert_int_equal(v.offset, 5);
	assert_false(v.scaling);
	assert_int_equal(v.ratio, 0);
	assert_int_equal(kvm_debugfs_tsc(d, 2, &k, why, sizeof(why)), 0);
	assert_false(kvm_tsc_scaled(&k));

	assert_int_equal(kvm_debugfs_read(d, 3, &v, why, sizeof(why)), -EINVAL);
	kvm_debugfs_close(d);

	/* any count with 0; the exact PID, not one it prefixes */
	assert_int_equal(kvm_debugfs_open(root, 100, 0, &d, why, sizeof(why)), 0);
	assert_int_equal(kvm_debugfs_ncpu(d), 3);
	kvm_debugfs_close(d);
	assert_int_equal(kvm_debugfs_open(root, 10, 1, &d, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "%s/kvm/10-5", root);
	assert_string_equal(kvm_debugfs_path(d), want);
	kvm_debugfs_close(d);
	/* an empty VM beside the real one is passed over */
	assert_int_equal(kvm_debugfs_open(root, 200, 1, &d, why, sizeof(why)), 0);
	assert_int_equal(kvm_debugfs_tsc(d, 0, &k, why, sizeof(why)), 0);
	assert_int_equal(k.offset, 42);
	kvm_debugfs_close(d);
	/* an old kernel's vCPU: no guest_mode, no pid */
	assert_int_equal(kvm_debugfs_open(root, 900, 1, &d, why, sizeof(why)), 0);
	assert_int_equal(kvm_debugfs_read(d, 0, &v, why, sizeof(why)), 0);
	assert_int_equal(v.guest_mode, -1);
	assert_int_equal(v.tid, 0);
	assert_int_equal(kvm_debugfs_tsc(d, 0, &k, why, sizeof(why)), 0);
	assert_int_equal(k.offset, -1);
	kvm_debugfs_close(d);
}

/* Expects kvm_debugfs_usable() to refuse with @err and a line holding @part. */
static void refused(const char *debugfs, pid_t pid, int nvcpu, const char *clock, int err,
		    const char *part)
{
	char why[512] = "";

	assert_int_equal(kvm_debugfs_usable(debugfs, pid, nvcpu, clock, why, sizeof(why)), err);
	if (!strstr(why, part))
		fail_msg("reason '%s' lacks '%s'", why, part);
	assert_null(strchr(why, '\n'));
}

static void test_refusals(void **state)
{
	char why[256], nokvm[128];

	(void)state;
	assert_int_equal(kvm_debugfs_usable(root, 100, 3, "x86-tsc", why, sizeof(why)), 0);
	refused(root, 100, 3, "local", -ENOTSUP, "clock local is not x86-tsc");
	refused(root, 100, 3, NULL, -ENOTSUP, "is not x86-tsc");
	refused(root, 0, 3, "x86-tsc", -EINVAL, "no PID");
	snprintf(nokvm, sizeof(nokvm), "%s/kvm/100-7", root);	/* has no kvm/ */
	refused(nokvm, 100, 3, "x86-tsc", -ENOENT, "no KVM in debugfs");
	refused(root, 4242, 1, "x86-tsc", -ENOENT, "no KVM VM of PID 4242");
	refused(root, 300, 1, "x86-tsc", -ENOENT, "has no vCPU");
	refused(root, 400, 1, "x86-tsc", -EEXIST, "two KVM VMs");
	refused(root, 100, 2, "x86-tsc", -ECHILD, "has 3 vCPUs, the guest 2 CPUs");
	refused(root, 100, 4, "x86-tsc", -ECHILD, "has 3 vCPUs, the guest 4 CPUs");
	refused(root, 500, 1, "x86-tsc", -EPROTO,
		"has tsc-scaling-ratio but not tsc-scaling-ratio-frac-bits");
	refused(root, 600, 1, "x86-tsc", -ENOENT, "has no tsc-offset");
	refused(root, 700, 2, "x86-tsc", -EBUSY, "vcpu1 runs a nested guest");
	refused(root, 800, 1, "x86-tsc", -EPROTO, "not a number: '12x'");
}

/* A file that vanishes between open and read, as when the VM ends. */
static void test_vm_gone(void **state)
{
	struct kvm_debugfs_vcpu v;
	struct kvm_debugfs *d;
	char why[256], path[256];

	(void)state;
	put_vcpu("1234-4", 0, "0\n", 0);
	put_scaling("1234-4", 0, "281474976710656\n", "48\n");
	assert_int_equal(kvm_debugfs_open(root, 1234, 1, &d, why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/kvm/1234-4/vcpu0/tsc-scaling-ratio-frac-bits", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(kvm_debugfs_read(d, 0, &v, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "has tsc-scaling-ratio but not"));
	snprintf(path, sizeof(path), "%s/kvm/1234-4/vcpu0/tsc-offset", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(kvm_debugfs_read(d, 0, &v, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "tsc-offset: No such file"));
	kvm_debugfs_close(d);
}

/* The system's debugfs: found (mounted if need be) as root, else refused. */
static void test_system_debugfs(void **state)
{
	char dir[256], why[256];
	struct stat st;
	int ret;

	(void)state;
	ret = kvm_debugfs_mount(dir, sizeof(dir), why, sizeof(why));
	if (geteuid() != 0) {
		assert_int_equal(ret, -EPERM);
		assert_non_null(strstr(why, "not root"));
		refused(NULL, 1, 1, "x86-tsc", -EPERM, "not root");
		return;
	}
	if (ret == -ENODEV) {
		skip();
		return;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* PID 1 is no VM (or, were it one, passes) */
	ret = kvm_debugfs_usable(NULL, 1, 0, "x86-tsc", why, sizeof(why));
	assert_true(ret == 0 || ret == -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_and_read),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_vm_gone),
		cmocka_unit_test(test_system_debugfs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
