/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local QEMU guests, found the way trace-cmd finds them: every process
 * whose command line is QEMU's is read for its -name (the "guest=" key, or
 * the first field) and the guest-cid= of its vhost-vsock device; its
 * threads named "CPU N/KVM" (or "CPU N/TCG" under TCG) are vCPU N. QEMU
 * names those threads only with "-name ...,debug-threads=on", as libvirt
 * starts it; without it the vCPU threads are unknown (0).
 *
 * The proc root is a parameter so that a test can point the scanner at a
 * fixture tree laid out as /proc (PID/cmdline, PID/task/TID/comm).
 */
#ifndef TSYNC_HOST_QEMU_H
#define TSYNC_HOST_QEMU_H

#include <sys/types.h>

/* vCPUs recorded per guest (QEMU's x86 limit is 288 with x2APIC; more
 * than tsync records: the rest are counted in nvcpu but not listed). */
#define HOST_QEMU_MAX_VCPUS 512

struct host_qemu_guest {
	char name[64];		/* -name's guest= (or first field); "" if none */
	unsigned int cid;	/* vhost-vsock guest-cid=, 0 if none */
	pid_t pid;		/* the QEMU process */
	int nvcpu;		/* 1 + the highest vCPU number with a thread */
	pid_t vcpu_tid[HOST_QEMU_MAX_VCPUS]; /* [vCPU]: its host thread, 0 unknown */
};

/*
 * Finds the QEMU guest named @name (NULL: any name) with CID @cid (0: any
 * CID) under @proc_root (NULL: "/proc"); at least one of the two must be
 * given. Fills *@out. Returns 0, -ENOENT (no such guest), -EEXIST (two
 * guests match: name them by CID), -EINVAL or -errno (the proc root
 * cannot be read).
 */
int host_qemu_find(const char *proc_root, const char *name, unsigned int cid,
		   struct host_qemu_guest *out);

/*
 * Parses one QEMU command line (@len bytes of NUL-separated words, as in
 * /proc/PID/cmdline) into @out's name and cid (pid and vCPUs untouched).
 * Returns 0, or -ENOENT if it is not QEMU's.
 */
int host_qemu_parse_cmdline(const char *buf, size_t len, struct host_qemu_guest *out);

#endif
