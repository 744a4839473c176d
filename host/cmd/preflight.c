// SPDX-License-Identifier: GPL-2.0-or-later
/* Checks before connecting; see preflight.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <tracefs.h>

#include "common/base/errbuf.h"
#include "common/tracefs/instance.h"
#include "common/stamp/stamp.h"
#include "host/cmd/preflight.h"
#include "host/peer/peer.h"

/* Writes the @n names of @names to @buf as "a, b, c". */
static void join_names(const char (*names)[TSYNC_TRACE_CLOCK_NAME_MAX], int n, char *buf,
		       size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", names[i]);
}

/* A --stamp that cannot stamp the clock; -EINVAL with the reason. */
static int stamp_mismatch(const struct preflight_facts *f, char *err, size_t errlen)
{
	char only[128];

	tsync_stamp_clocks_text(f->source, only, sizeof(only));
	tsync_set_err(err, errlen, "--stamp %s cannot stamp trace clock '%s' (only %s): leave "
		      "--stamp out, or use --stamp %s", tsync_stamp_source_name(f->source),
		      f->clock, only, tsync_stamp_source_name(tsync_stamp_default(NULL)));
	return -EINVAL;
}

/* tracefs is needed but not usable (f->tracefs < 0); says why and what to do. */
static int no_tracefs(const struct preflight_facts *f, char *err, size_t errlen)
{
	const char *dir = f->tracefs_dir ? f->tracefs_dir : "/sys/kernel/tracing";
	int e = f->tracefs;
	char user[128];

	if (e != -EACCES && e != -EPERM) {
		tsync_set_err(err, errlen, "tracefs is not mounted at %s (%s): mount it "
			      "(mount -t tracefs nodev %s), as root", dir, strerror(-e), dir);
		return -ENODEV;
	}
	if (f->uid == 0)
		tsync_set_err(err, errlen, "tracefs at %s: %s, even as root: is the kernel "
			      "locked down, or tracefs mounted read-only?", dir, strerror(-e));
	else if (f->record)
		tsync_set_err(err, errlen, "not root (uid %u): recording needs tracefs, and %s "
			      "is not accessible: run it as root (sudo tsync-host record ...)",
			      f->uid, dir);
	else {
		tsync_stamp_user_clocks_text("or", user, sizeof(user));
		tsync_set_err(err, errlen, "not root (uid %u): trace clock '%s' is stamped "
			      "through tracefs, and %s is not accessible: run it as root "
			      "(sudo tsync-host %s ...), or sync a clock read without tracefs "
			      "(-C %s)", f->uid, f->clock, dir, f->cmd, user);
	}
	return -EACCES;
}

/* Decides whether the command can run; see preflight.h. */
int preflight_decide(const struct preflight_facts *f, char *err, size_t errlen)
{
	bool needs_tracefs = f->record || tsync_stamp_needs_tracefs(f->source);
	char list[TSYNC_MAX_CLOCKS * (TSYNC_TRACE_CLOCK_NAME_MAX + 2)];

	if (f->stamp_forced && tsync_stamp_check(f->source, f->clock))
		return stamp_mismatch(f, err, errlen);
	if (needs_tracefs && f->tracefs)
		return no_tracefs(f, err, errlen);
	/* without tracefs (sync, clock or tsc stamps) the clock is one of the
	 * names those sources know: the guest's list is checked later */
	if (f->nclocks < 0)
		return 0;
	for (int i = 0; i < f->nclocks; i++)
		if (!strcmp(f->clocks[i], f->clock))
			return 0;
	join_names(f->clocks, f->nclocks < TSYNC_MAX_CLOCKS ? f->nclocks : TSYNC_MAX_CLOCKS,
		   list, sizeof(list));
	tsync_set_err(err, errlen, "unknown trace clock '%s': choose one this host offers with -C: %s",
		      f->clock, list);
	return -EINVAL;
}

/* Returns 0 if tracefs at @dir lets this process create instances, else
 * -errno (-ENODEV when tracefs is not mounted there). */
static int tracefs_usable(const char *dir)
{
	char path[4096];

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR)
		return -ENODEV;
	return -errno;
}

/* Gathers the facts and decides; see preflight.h. */
int host_preflight(const char *cmd, bool record, const char *clock, unsigned int source,
		   bool stamp_forced, char *err, size_t errlen)
{
	char clocks[TSYNC_MAX_CLOCKS][TSYNC_TRACE_CLOCK_NAME_MAX];
	struct preflight_facts f = {
		.cmd = cmd, .record = record, .clock = clock, .source = source,
		.stamp_forced = stamp_forced, .uid = (unsigned int)geteuid(),
		.clocks = (const char (*)[TSYNC_TRACE_CLOCK_NAME_MAX])clocks,
	};

	f.tracefs_dir = tracefs_tracing_dir();
	f.tracefs = tracefs_usable(f.tracefs_dir);
	f.nclocks = f.tracefs_dir ? tsync_instance_clocks(clocks, TSYNC_MAX_CLOCKS, NULL) :
		    -ENODEV;
	return preflight_decide(&f, err, errlen);
}

/* Checks the guest's clocks; see preflight.h. */
int preflight_guest_clock(const char (*clocks)[TSYNC_CLOCK_NAME_MAX], uint32_t nclocks,
			  const char *clock, char *err, size_t errlen)
{
	char list[TSYNC_MAX_CLOCKS * (TSYNC_CLOCK_NAME_MAX + 2)];
	uint32_t n = nclocks < TSYNC_MAX_CLOCKS ? nclocks : TSYNC_MAX_CLOCKS;

	_Static_assert(TSYNC_TRACE_CLOCK_NAME_MAX == TSYNC_CLOCK_NAME_MAX,
		       "a guest's clock names are trace clock names");
	/* a guest that lists none said nothing to check against: its
	 * rounds will tell */
	if (!n)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (!strncmp(clocks[i], clock, TSYNC_CLOCK_NAME_MAX))
			return 0;
	join_names(clocks, (int)n, list, sizeof(list));
	tsync_set_err(err, errlen, "the guest has no trace clock '%s': choose one both offer "
		      "with -C; the guest offers %s", clock, list);
	return -EINVAL;
}

/* Checks the clocks the guest sent; see preflight.h. */
int host_preflight_guest(struct peer *p, const char *clock, char *err, size_t errlen)
{
	const char (*names)[TSYNC_CLOCK_NAME_MAX];
	uint32_t n = peer_clocks(p, &names);
	char why[400], list[TSYNC_MAX_CLOCKS * (TSYNC_CLOCK_NAME_MAX + 2)];
	int ret;

	ret = preflight_guest_clock(names, n, clock, err, errlen);
	/* an agent without tracefs offers only the clocks it reads itself:
	 * that is the cause to name, with the agent's own reason and fix */
	if (ret && peer_can_record(p, clock, why, sizeof(why))) {
		join_names(names, (int)(n < TSYNC_MAX_CLOCKS ? n : TSYNC_MAX_CLOCKS), list,
			   sizeof(list));
		tsync_set_err(err, errlen, "the guest has no trace clock '%s' because its agent "
			      "cannot use tracefs (%s); without tracefs the guest offers %s: "
			      "fix the agent's tracefs, or choose one of those with -C",
			      clock, why, list);
	}
	return ret;
}
