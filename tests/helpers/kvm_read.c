// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kvm_read [--debugfs DIR] [--clock CLOCK] (--guest NAME | PID [NCPU])
 *
 * Reads a KVM guest's per-vCPU TSC files through host/kvm/kvm_debugfs.h,
 * as the kvm sync method will, for the e2e tests (tests/e2e/kvm_*.sh).
 * The guest is named by its QEMU's PID and CPU count (NCPU 0 or left
 * out: any), or by its QEMU -name, found from /proc as tsync-host finds
 * it (host/guest/qemu.h: the PID, and the CPU count from its "CPU N/KVM"
 * threads). DIR is the debugfs directory (default: the system's, mounted
 * if need be), CLOCK the trace clock (default x86-tsc). The option is
 * --guest, not --name: this program's name holds "kvm", so with a -name
 * (or --name) it would look like QEMU to that scan and find itself.
 *
 * Prints, when the method can be used:
 *
 *   qemu PID NCPU                    (with --guest)
 *   thread CPU TID                   (with --guest: its "CPU N/KVM" threads)
 *   path DIR/kvm/PID-FD
 *   cpu CPU vcpu N offset OFFSET scaling yes|no ratio R frac F
 *       scaled 0|1 guest_mode M tid TID   (one line per guest CPU)
 *
 * where ratio and frac are the files' values (0 when absent) and scaled
 * says whether KVM's map scales (the default ratio is no scaling).
 * Otherwise prints "kvm_read: REASON" (the method's one line) on stderr
 * and exits 1; 2 is bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sync/kvm_tsc.h"
#include "host/guest/qemu.h"
#include "host/kvm/kvm_debugfs.h"

static void usage(void)
{
	fprintf(stderr, "usage: kvm_read [--debugfs DIR] [--clock CLOCK] (--guest NAME | PID [NCPU])\n");
}

/* Parses a non-negative int, or returns -1. */
static int parse_int(const char *s)
{
	char *e;
	long v = strtol(s, &e, 10);

	return *s && !*e && v >= 0 && v < 1 << 30 ? (int)v : -1;
}

int main(int argc, char **argv)
{
	const char *debugfs = NULL, *clock = KVM_TSC_CLOCK, *name = NULL;
	static struct host_qemu_guest g;
	struct kvm_debugfs *d;
	int pid = -1, ncpu = 0, i, ret;
	char why[512];

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
		if (i + 1 >= argc) {
			usage();
			return 2;
		}
		if (!strcmp(argv[i], "--debugfs"))
			debugfs = argv[i + 1];
		else if (!strcmp(argv[i], "--clock"))
			clock = argv[i + 1];
		else if (!strcmp(argv[i], "--guest"))
			name = argv[i + 1];
		else {
			usage();
			return 2;
		}
	}
	if (name) {
		if (i != argc) {
			usage();
			return 2;
		}
		ret = host_qemu_find(NULL, name, 0, &g);
		if (ret) {
			fprintf(stderr, "kvm_read: no QEMU named %s: %s\n", name, strerror(-ret));
			return 1;
		}
		pid = (int)g.pid;
		ncpu = g.nvcpu;
		printf("qemu %d %d\n", pid, ncpu);
		for (i = 0; i < ncpu && i < HOST_QEMU_MAX_VCPUS; i++)
			printf("thread %d %d\n", i, (int)g.vcpu_tid[i]);
	} else {
		if (i >= argc || argc - i > 2) {
			usage();
			return 2;
		}
		pid = parse_int(argv[i]);
		ncpu = i + 1 < argc ? parse_int(argv[i + 1]) : 0;
		if (pid < 0 || ncpu < 0) {
			usage();
			return 2;
		}
	}
	ret = kvm_debugfs_usable(debugfs, pid, ncpu, clock, why, sizeof(why));
	if (!ret)
		ret = kvm_debugfs_open(debugfs, pid, ncpu, &d, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "kvm_read: %s\n", why);
		return 1;
	}
	printf("path %s\n", kvm_debugfs_path(d));
	for (i = 0; i < kvm_debugfs_ncpu(d) && !ret; i++) {
		struct kvm_debugfs_vcpu v;
		struct kvm_tsc k;

		ret = kvm_debugfs_read(d, i, &v, why, sizeof(why));
		if (!ret)
			ret = kvm_debugfs_tsc(d, i, &k, why, sizeof(why));
		if (ret)
			break;
		printf("cpu %d vcpu %d offset %lld scaling %s ratio %llu frac %llu scaled %d"
		       " guest_mode %d tid %d\n", i, v.vcpu, (long long)v.offset,
		       v.scaling ? "yes" : "no", (unsigned long long)v.ratio,
		       (unsigned long long)v.frac, kvm_tsc_scaled(&k), v.guest_mode, (int)v.tid);
	}
	kvm_debugfs_close(d);
	if (ret) {
		fprintf(stderr, "kvm_read: %s\n", why);
		return 1;
	}
	return 0;
}
