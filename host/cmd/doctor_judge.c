// SPDX-License-Identifier: GPL-2.0-or-later
/* The doctor's host checks, judged from facts (pure); see doctor.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "host/cmd/doctor.h"

/* Adds a finding; see doctor.h. */
void doctor_add(struct doctor_report *r, const char *check, enum doctor_status st,
		const char *fix, const char *fmt, ...)
{
	struct doctor_finding *f = &r->f[r->n < DOCTOR_MAX_FINDINGS ? r->n :
					 DOCTOR_MAX_FINDINGS - 1];
	va_list ap;

	if (r->n < DOCTOR_MAX_FINDINGS)
		r->n++;
	f->check = check;
	f->status = st;
	snprintf(f->fix, sizeof(f->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
}

const char *doctor_status_name(enum doctor_status st)
{
	return st == DOCTOR_OK ? "ok" : st == DOCTOR_WARN ? "warn" : "fail";
}

static void judge_root(const struct doctor_host_facts *f, struct doctor_report *r)
{
	if (!f->uid)
		doctor_add(r, "root", DOCTOR_OK, NULL, "running as root");
	else
		doctor_add(r, "root", DOCTOR_FAIL, "run it as root (sudo tsync-host ...)",
			   "not root (uid %u): recording needs root for tracefs", f->uid);
}

static void judge_tracefs(const struct doctor_host_facts *f, struct doctor_report *r)
{
	const char *dir = f->tracefs_dir ? f->tracefs_dir : "/sys/kernel/tracing";

	if (!f->tracefs)
		doctor_add(r, "tracefs", DOCTOR_OK, NULL, "tracefs at %s, instances writable",
			   dir);
	else if (f->tracefs == -ENODEV)
		doctor_add(r, "tracefs", DOCTOR_FAIL,
			   "mount it, as root: mount -t tracefs nodev /sys/kernel/tracing",
			   "tracefs is not mounted at %s", dir);
	else
		doctor_add(r, "tracefs", DOCTOR_FAIL, f->uid ? "run it as root" :
			   "is tracefs mounted read-only, or the kernel locked down?",
			   "tracefs at %s: instances not writable (%s)", dir, strerror(-f->tracefs));
}

static void judge_clock(const struct doctor_host_facts *f, struct doctor_report *r)
{
	char list[TSYNC_MAX_CLOCKS * (TSYNC_TRACE_CLOCK_NAME_MAX + 2)] = "";
	size_t off = 0;
	bool found = false;

	if (f->nclocks < 0) {
		doctor_add(r, "clock", DOCTOR_FAIL, "fix tracefs first (above)",
			   "cannot read this host's trace clocks (%s)", strerror(-f->nclocks));
		return;
	}
	for (int i = 0; i < f->nclocks && i < TSYNC_MAX_CLOCKS && off < sizeof(list); i++) {
		found = found || !strcmp(f->clocks[i], f->clock);
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
					f->clocks[i]);
	}
	if (found)
		doctor_add(r, "clock", DOCTOR_OK, NULL, "trace clock '%s'; the host offers %s",
			   f->clock, list);
	else
		doctor_add(r, "clock", DOCTOR_FAIL, "choose one the host offers with -C",
			   "this host has no trace clock '%s'; it offers %s", f->clock, list);
}

static void judge_kvm(const struct doctor_host_facts *f, struct doctor_report *r)
{
	if (f->debugfs)
		doctor_add(r, "kvm", DOCTOR_WARN,
			   "mount it, as root: mount -t debugfs none /sys/kernel/debug",
			   "debugfs is not mounted at /sys/kernel/debug (%s): no kvm sync method, "
			   "guests sync by probes", strerror(-f->debugfs));
	else if (!f->kvm_dir)
		doctor_add(r, "kvm", DOCTOR_WARN,
			   "load KVM (modprobe kvm_intel or kvm_amd) and run the guests under it",
			   "no kvm/ in /sys/kernel/debug: no KVM here, guests sync by probes");
	else
		doctor_add(r, "kvm", DOCTOR_OK, NULL, "/sys/kernel/debug/kvm present: the kvm "
			   "method can read a local QEMU guest's TSC offsets (with -C x86-tsc)");
}

static void judge_vsock(const struct doctor_host_facts *f, struct doctor_report *r)
{
	if (f->vhost_vsock && f->vhost_dev)
		doctor_add(r, "vsock", DOCTOR_OK, NULL,
			   "vhost_vsock loaded, /dev/vhost-vsock present");
	else
		doctor_add(r, "vsock", DOCTOR_WARN,
			   "modprobe vhost_vsock (as root), and give the guest a vsock device",
			   "%s, %s: vsock guests cannot be reached from here (TCP and hvsock can)",
			   f->vhost_vsock ? "vhost_vsock loaded" : "vhost_vsock not loaded",
			   f->vhost_dev ? "/dev/vhost-vsock present" : "no /dev/vhost-vsock");
}

static void judge_disk(const struct doctor_host_facts *f, struct doctor_report *r)
{
	unsigned long long mib = (unsigned long long)(f->free_bytes >> 20);

	if (f->disk)
		doctor_add(r, "disk", DOCTOR_FAIL, "record into a directory that exists (-o)",
			   "cannot see the free space of %s (%s)", f->out_dir, strerror(-f->disk));
	else if (f->free_bytes < DOCTOR_DISK_FAIL_BYTES)
		doctor_add(r, "disk", DOCTOR_FAIL, "free space there, or record elsewhere (-o)",
			   "%llu MiB free in %s", mib, f->out_dir);
	else if (f->free_bytes < DOCTOR_DISK_WARN_BYTES)
		doctor_add(r, "disk", DOCTOR_WARN, "free space there, or record elsewhere (-o)",
			   "only %llu MiB free in %s: a busy recording fills it in minutes", mib,
			   f->out_dir);
	else
		doctor_add(r, "disk", DOCTOR_OK, NULL, "%llu MiB free in %s", mib, f->out_dir);
}

static void judge_rtprio(const struct doctor_host_facts *f, struct doctor_report *r)
{
	if (!f->rtprio)
		doctor_add(r, "rtprio", DOCTOR_OK, NULL,
			   "real-time priority allowed: sync probes run at SCHED_FIFO");
	else
		doctor_add(r, "rtprio", DOCTOR_WARN,
			   "run it as root, or allow it (ulimit -r 1; rtprio in limits.conf)",
			   "real-time priority not allowed (%s, RLIMIT_RTPRIO %ld): sync probes run "
			   "at normal priority and offsets are noisier", strerror(-f->rtprio),
			   f->rlimit_rtprio);
}

/* Judges the host; see doctor.h. */
void doctor_judge_host(const struct doctor_host_facts *f, struct doctor_report *r)
{
	judge_root(f, r);
	judge_tracefs(f, r);
	judge_clock(f, r);
	judge_kvm(f, r);
	judge_vsock(f, r);
	judge_disk(f, r);
	judge_rtprio(f, r);
}
