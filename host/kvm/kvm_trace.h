/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM's offset writes of one VM as they happen: a private tracefs
 * instance ("tsync-kvm-PID-N", common/tracefs/instance.h's naming rule,
 * its owner lock and every program's stale cleanup) on the x86-tsc clock
 * with kvm:kvm_write_tsc_offset enabled (vcpu_id, previous_tsc_offset,
 * next_tsc_offset), for the kvm sync method to cut a change at the host
 * TSC it took effect (common/sync/kvm_window.h).
 *
 * Which writes are the VM's: the event names no VM, only the writing
 * task (common_pid, a thread id). KVM writes a vCPU's offset from the
 * thread that issues the vCPU's ioctl (its creation, KVM_SET_MSRS,
 * KVM_SET_DEVICE_ATTR's KVM_VCPU_TSC_OFFSET, the KVM_RUN in which the
 * guest writes IA32_TSC, the vcpu_load after a host suspend), and all of
 * those are the VM process's threads. So the instance's set_event_pid
 * holds every thread of the process at open (/proc/PID/task: the vCPU
 * threads and the one that creates vCPUs, which QEMU's are not always)
 * and event-fork adds the threads it starts later (a hotplugged vCPU's);
 * a pid list, not an event filter, because QEMU has hundreds of threads
 * and a filter string of them would outgrow the kernel's limit.
 */
#ifndef TSYNC_HOST_KVM_TRACE_H
#define TSYNC_HOST_KVM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One kvm:kvm_write_tsc_offset event. */
struct kvm_trace_event {
	uint64_t host_ts;	/* its timestamp: the host TSC of the write */
	uint32_t vcpu;		/* vcpu_id: N of debugfs's vcpuN */
	int64_t prev;		/* previous_tsc_offset */
	int64_t next;		/* next_tsc_offset */
	int pid;		/* the writing thread */
};

struct kvm_trace;

/*
 * Opens the instance for the VM process @pid, tracing on. Returns 0 and
 * *@out, or -errno with one line in @why: -ENODEV (no tracefs), -ENOENT
 * (no such event or no x86-tsc clock in this kernel), -ESRCH (no such
 * process), or what the kernel refused.
 */
int kvm_trace_open(pid_t pid, struct kvm_trace **out, char *why, size_t whylen);

/* The instance's name. */
const char *kvm_trace_instance(const struct kvm_trace *t);

/*
 * Reads the events recorded since the last call (a consuming,
 * non-blocking read of every CPU's buffer), calling @cb for each in
 * timestamp order. Returns 0 or -errno.
 */
int kvm_trace_drain(struct kvm_trace *t,
		    void (*cb)(const struct kvm_trace_event *e, void *ctx), void *ctx);

/* Removes the instance (NULL is fine). */
void kvm_trace_close(struct kvm_trace *t);

#endif
