// SPDX-License-Identifier: GPL-2.0-or-later
/* The doctor's host facts, gathered from this machine; see doctor.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <tracefs.h>

#include "common/base/cpu.h"
#include "common/tracefs/instance.h"
#include "host/cmd/doctor.h"

#define DEBUGFS_DIR "/sys/kernel/debug"

/* 0 if tracefs at @dir lets this process create instances, else -errno
 * (-ENODEV: not there). */
static int tracefs_writable(const char *dir)
{
	char path[4096];

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (!faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS))
		return 0;
	return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
}

/* 0 if debugfs is mounted at /sys/kernel/debug, else -errno. */
static int debugfs_mounted(void)
{
	struct statfs st;

	if (statfs(DEBUGFS_DIR, &st))
		return -errno;
	return st.f_type == DEBUGFS_MAGIC ? 0 : -ENODEV;
}

/* 0 if this thread may run at SCHED_FIFO (tried, then undone), else -errno. */
static int rtprio_allowed(void)
{
	struct tsync_cpu_sched old;
	int ret = tsync_cpu_rt_enter(TSYNC_ROUND_RT_PRIO, &old);

	if (!ret)
		tsync_cpu_rt_leave(&old);
	return ret;
}

/* Gathers the host facts; see doctor.h. */
void doctor_host_facts(struct doctor_host_facts *f, const char *clock, const char *out_dir,
		       char (*clocks)[TSYNC_TRACE_CLOCK_NAME_MAX])
{
	struct statvfs vfs;
	struct rlimit rl;

	f->uid = (unsigned int)geteuid();
	f->clock = clock;
	f->tracefs_dir = tracefs_tracing_dir();
	f->tracefs = tracefs_writable(f->tracefs_dir);
	f->clocks = (const char (*)[TSYNC_TRACE_CLOCK_NAME_MAX])clocks;
	f->nclocks = f->tracefs_dir ? tsync_instance_clocks(clocks, TSYNC_MAX_CLOCKS, NULL) :
		     -ENODEV;
	f->debugfs = debugfs_mounted();
	f->kvm_dir = !f->debugfs && !access(DEBUGFS_DIR "/kvm", F_OK);
	f->vhost_vsock = !access("/sys/module/vhost_vsock", F_OK);
	f->vhost_dev = !access("/dev/vhost-vsock", F_OK);
	f->out_dir = out_dir;
	f->disk = statvfs(out_dir, &vfs) ? -errno : 0;
	f->free_bytes = f->disk ? 0 : (uint64_t)vfs.f_bavail * vfs.f_frsize;
	f->rtprio = rtprio_allowed();
	f->rlimit_rtprio = getrlimit(RLIMIT_RTPRIO, &rl) ? 0 :
			   rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
}
