// SPDX-License-Identifier: GPL-2.0-or-later
/* Whether the agent can use tracefs; see tracefs_check.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include <tracefs.h>

#include "agent/conn/tracefs_check.h"
#include "common/stamp/stamp.h"
#include "common/base/trace_clock.h"
#include "proto/proto.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

/* Sets @t to unusable with @code, fix @fix and the reason from @fmt. */
static void __attribute__((format(printf, 4, 5)))
refuse(struct agent_tracefs *t, uint32_t code, const char *fix, const char *fmt, ...)
{
	va_list ap;

	t->usable = false;
	t->code = code;
	snprintf(t->fix, sizeof(t->fix), "%s", fix);
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/* Judges the facts; see tracefs_check.h. */
void agent_tracefs_judge(const struct agent_tracefs_facts *f, struct agent_tracefs *t)
{
	const char *mount_fix = "mount -t tracefs nodev " AGENT_TRACEFS_DIR;
	int err = f->read_err ? f->read_err : f->write_err;

	*t = (struct agent_tracefs){ .usable = true };
	if (!f->dir) {
		if (f->find_err)
			refuse(t, TSYNC_ERR_UNSUPPORTED, mount_fix,
			       "tracefs is not mounted at %s and mounting it failed (%s)",
			       AGENT_TRACEFS_DIR, strerror(f->find_err));
		else
			refuse(t, TSYNC_ERR_UNSUPPORTED, mount_fix,
			       "tracefs is not mounted at %s", AGENT_TRACEFS_DIR);
		return;
	}
	if (!f->is_tracefs) {
		refuse(t, TSYNC_ERR_UNSUPPORTED, mount_fix,
		       "tracefs is not mounted at %s (another file system is)", f->dir);
		return;
	}
	if (!err)
		return;
	if ((err == EACCES || err == EPERM) && f->euid != 0) {
		refuse(t, TSYNC_ERR_PERMISSION, "run tsync-agent as root",
		       "tracefs at %s is not accessible to uid %u, only to root (%s)", f->dir,
		       (unsigned int)f->euid, strerror(err));
		return;
	}
	if (err == EACCES || err == EPERM) {
		refuse(t, TSYNC_ERR_PERMISSION,
		       "check the kernel's lockdown mode (/sys/kernel/security/lockdown) and "
		       "the security module's policy",
		       "tracefs at %s refuses access although the agent runs as root (%s)",
		       f->dir, strerror(err));
		return;
	}
	refuse(t, TSYNC_ERR_UNSUPPORTED, "check that the kernel has tracing (CONFIG_FTRACE)",
	       "tracefs at %s cannot be used: %s (%s)", f->dir,
	       f->read_err ? "reading trace_clock" : "writing to instances/", strerror(err));
}

/* Checks tracefs as this process sees it; see tracefs_check.h. */
void agent_tracefs_check(struct agent_tracefs *t)
{
	struct agent_tracefs_facts f = { .euid = geteuid() };
	struct statfs sf;
	char *txt, path[512];

	errno = 0;
	/* libtracefs mounts tracefs when none is (and may) */
	f.dir = tracefs_tracing_dir();
	if (!f.dir) {
		f.find_err = errno;
		goto judge;
	}
	f.is_tracefs = statfs(f.dir, &sf) == 0 && (unsigned long)sf.f_type == TRACEFS_MAGIC;
	if (!f.is_tracefs)
		goto judge;
	errno = 0;
	txt = tracefs_instance_file_read(NULL, "trace_clock", NULL);
	if (!txt)
		f.read_err = errno ? errno : ENOENT;
	free(txt);
	snprintf(path, sizeof(path), "%s/instances", f.dir);
	if (!f.read_err && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS))
		f.write_err = errno;
judge:
	agent_tracefs_judge(&f, t);
	/* the clocks that need no tracefs: "mono, mono_raw, ..." */
	tsync_stamp_user_clocks_text(NULL, t->clocks, sizeof(t->clocks));
}
