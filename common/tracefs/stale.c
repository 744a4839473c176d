// SPDX-License-Identifier: GPL-2.0-or-later
/* The removal of tsync instances whose owners died; see stale.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "common/base/log.h"
#include "common/tracefs/global.h"
#include "common/tracefs/instance.h"
#include "common/tracefs/instance_priv.h"
#include "common/tracefs/stale.h"

/*
 * Returns the pid in instance name @name ("...-<pid>-<n>" or "...-<pid>"),
 * or -1.
 */
static long name_pid(const char *name)
{
	const char *p = name + strlen(name), *num[2] = { NULL, NULL };
	int found = 0;

	/* the last two dash-separated words, if numeric */
	while (found < 2 && p > name) {
		const char *end = p;

		while (p > name && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p == end || p == name || p[-1] != '-')
			break;
		num[found++] = p;
		p--;		/* the dash */
	}
	if (!found)
		return -1;
	p = num[found - 1];
	return strtol(p, NULL, 10);
}

/* Returns true if process @pid may be alive in our PID namespace. */
static bool pid_alive_here(long pid)
{
	if (pid <= 0 || pid > INT_MAX)
		return false;
	return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

struct stale_ctx {
	const char *prefix;
	int removed;
};

/*
 * Removes instance @name if its owner is known dead; walk callback. Dead
 * means: its owner lock is free, the only proof that holds across PID
 * namespaces (an owner, or the remover it left, holds it until the
 * instance is gone), so is an earlier tsync's lock on tracing_on, and -
 * because a tsync without owner locks (an older version) or a human leaves
 * instances with a free lock too - no process with the pid in the name
 * exists in our own PID namespace.
 */
static int stale_one(const char *name, void *arg)
{
	struct stale_ctx *c = arg;
	struct tracefs_instance *inst;
	int fd, ret;

	if (strncmp(name, c->prefix, strlen(c->prefix)) ||
	    pid_alive_here(name_pid(name)))
		return 0;
	inst = tracefs_instance_alloc(NULL, name);
	if (!inst)
		return 0;
	fd = tsync_instance_lock_take_any(inst);
	if (fd < 0) {
		if (fd == -EWOULDBLOCK)
			log_debug("instance %s: its owner lives (lock held)", name);
		tracefs_instance_free(inst);
		return 0;
	}
	tsync_instance_switch_off(inst);	/* the owner is dead: nobody records here */
	ret = tsync_instance_rmdir(inst);
	close(fd);
	tracefs_instance_free(inst);
	if (ret) {
		log_warn("cannot remove stale tracefs instance %s: %s", name,
			 strerror(-ret));
		return 0;
	}
	log_info("removed stale tracefs instance %s", name);
	c->removed++;
	return 0;
}

/* Removes instances of dead owners; see stale.h. */
int tsync_instance_cleanup_stale(const char *prefix)
{
	struct stale_ctx c = { .prefix = prefix };

	if (!prefix || strncmp(prefix, TSYNC_INSTANCE_NAME_PREFIX,
			       strlen(TSYNC_INSTANCE_NAME_PREFIX)))
		return -EINVAL;
	if (!tracefs_tracing_dir())
		return -ENODEV;
	if (tracefs_instances_walk(stale_one, &c) < 0)
		return errno ? -errno : -EIO;
	return c.removed;
}

/* The one cleanup of every program; see stale.h. */
int tsync_instance_cleanup_all_stale(void)
{
	/* and the machine-wide settings a killed one changed */
	int ret = tsync_global_cleanup();

	if (ret < 0)
		log_debug("machine-wide tracefs settings: %s", strerror(-ret));
	return tsync_instance_cleanup_stale(TSYNC_INSTANCE_NAME_PREFIX);
}
