/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM's per-vCPU TSC files in debugfs, for the kvm sync method
 * (Documentation/design.md, Exact sync on KVM): found for a QEMU process
 * by its PID, read the way trace-cmd's kvm method reads them, and checked
 * by its rules, with one line saying why the method cannot be used when
 * it cannot.
 *
 * Layout (arch/x86/kvm/debugfs.c): KVM names a VM's directory
 * DEBUGFS/kvm/PID-FD after the task that created it and the VM's fd;
 * in it, vcpuN/ for every vCPU N holds tsc-offset ("%lld"), guest_mode
 * (1 while the vCPU runs a nested guest), pid (the thread that last ran
 * it) and, only where the CPU can scale the TSC, tsc-scaling-ratio and
 * tsc-scaling-ratio-frac-bits ("%llu"). The files are root's (debugfs is
 * mode 0700), and KVM writes a new offset without touching the directory.
 *
 * trace-cmd's rules, kept: debugfs is mounted at /sys/kernel/debug when
 * it is not mounted (libtracefs's tracefs_debug_dir(), what trace-cmd
 * calls); the scaling files are both present or both absent; there are
 * as many vcpu directories as the guest has CPUs, and guest CPU i is the
 * i-th of them by number. Added: a PID with two VMs that have vCPUs is
 * refused (trace-cmd takes the first one readdir gives); a vCPU whose
 * guest_mode reads 1 is refused, since its tsc-offset is then its nested
 * guest's (L2's, the L1 offset combined with L1's offset for L2), not the
 * traced guest's.
 *
 * The debugfs directory is a parameter (NULL: the system's), so that the
 * unit tests read a fake tree laid out as debugfs.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): host/kvm/
 *   kvm_debugfs.c, kvm_debugfs.h  KVM's per-vCPU TSC files: find, read, check
 *   kvm_trace.c, kvm_trace.h      a VM's kvm:kvm_write_tsc_offset events, from a private instance
 */
#ifndef TSYNC_HOST_KVM_DEBUGFS_H
#define TSYNC_HOST_KVM_DEBUGFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/sync/kvm_tsc.h"

/* One vCPU's files as read. */
struct kvm_debugfs_vcpu {
	int vcpu;		/* N of vcpuN */
	int64_t offset;		/* tsc-offset */
	bool scaling;		/* both scaling files present */
	uint64_t ratio;		/* tsc-scaling-ratio, 0 when absent */
	uint64_t frac;		/* tsc-scaling-ratio-frac-bits, 0 when absent */
	int guest_mode;		/* 1 runs a nested guest, 0 not, -1 no such file */
	pid_t tid;		/* pid: the thread that ran it last, 0 if unknown */
};

/* A VM's directory, opened. */
struct kvm_debugfs;

/*
 * Finds the system's debugfs, mounting it at /sys/kernel/debug if it is
 * not mounted, and copies its path into @dir (@len bytes). Returns 0, or
 * -EPERM (not root) or -ENODEV (no debugfs) with the reason in @why.
 */
int kvm_debugfs_mount(char *dir, size_t len, char *why, size_t whylen);

/*
 * Opens the KVM VM of process @pid under @debugfs (NULL: the system's,
 * see kvm_debugfs_mount()) and checks it: one VM with vCPUs, @nvcpu of
 * them (0: any number), each with a tsc-offset and both or neither
 * scaling file. Returns 0 and *@out, or -errno with one line in @why:
 * -EINVAL (no PID), -EPERM/-EACCES (not root), -ENODEV (no debugfs),
 * -ENOENT (no KVM, no VM of that PID, no vCPU, a file missing), -EEXIST
 * (two VMs), -ECHILD (vCPU count not @nvcpu), -EPROTO (one scaling file
 * without the other), -ENOMEM.
 */
int kvm_debugfs_open(const char *debugfs, pid_t pid, int nvcpu, struct kvm_debugfs **out,
		     char *why, size_t whylen);

/* The number of vCPUs, and the VM's directory (DEBUGFS/kvm/PID-FD). */
int kvm_debugfs_ncpu(const struct kvm_debugfs *d);
const char *kvm_debugfs_path(const struct kvm_debugfs *d);
/* The guest CPU of vcpu number @vcpu (vcpuN's N, the tracepoint's
 * vcpu_id), or -1 when the VM has no such vCPU. */
int kvm_debugfs_cpu_of(const struct kvm_debugfs *d, int vcpu);

/*
 * Reads the files of guest CPU @cpu (the @cpu-th vCPU by number) into
 * *@v. Returns 0, or -ENOENT (the VM is gone, a file vanished), -EPROTO
 * (a value that does not parse, one scaling file without the other),
 * -EINVAL (no such CPU) or -errno, with one line in @why.
 */
int kvm_debugfs_read(const struct kvm_debugfs *d, int cpu, struct kvm_debugfs_vcpu *v,
		     char *why, size_t whylen);

/*
 * The TSC of guest CPU @cpu (kvm_debugfs_read(), then kvm_tsc_init())
 * into *@k. guest_mode is read before and after the other files, and a 1
 * in either refuses the reading with -EBUSY (the offset is L2's).
 * Returns 0 or a -errno of kvm_debugfs_read(), -EBUSY, or -EINVAL (a
 * ratio KVM would not give), with one line in @why.
 */
int kvm_debugfs_tsc(const struct kvm_debugfs *d, int cpu, struct kvm_tsc *k,
		    char *why, size_t whylen);

void kvm_debugfs_close(struct kvm_debugfs *d);

/*
 * Whether the kvm method can serve a guest recorded in trace clock
 * @clock whose QEMU is @pid with @nvcpu CPUs: the clock is x86-tsc
 * (-ENOTSUP otherwise), and kvm_debugfs_open() and kvm_debugfs_tsc() of
 * every CPU succeed. Returns 0, or -errno with the one-line reason why
 * not in @why.
 */
int kvm_debugfs_usable(const char *debugfs, pid_t pid, int nvcpu, const char *clock,
		       char *why, size_t whylen);

#endif
